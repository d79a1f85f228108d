// A small HTTP server on a TCP port of its own, for a transport that has no HTTP (ENet): GET or
// HEAD of the server's own pages (server_pages.h: /metrics, /debug/...), 404 for anything else.
// The ENet loop polls it between its waits, so it runs on the server's one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "server_pages.h"
#include "sightline/status.h"

namespace sightline::demo {

class HttpConsole {
 public:
  /// The page for a target, or nullopt: 404.
  using Pages = std::function<std::optional<ServerPage>(std::string_view target)>;

  explicit HttpConsole(Pages pages);
  ~HttpConsole();
  HttpConsole(const HttpConsole&) = delete;
  HttpConsole& operator=(const HttpConsole&) = delete;

  /// Listens on host:port (0: any free port); the error names the address.
  [[nodiscard]] Status listen(const std::string& host, std::uint16_t port);
  /// The port listened on.
  [[nodiscard]] std::uint16_t port() const noexcept;
  /// Runs what is ready (accepts, reads, writes), at most kMaxHandlersPerPoll steps; never waits.
  void poll();

  /// Bounds a client cannot push past: connections served at once (more wait in the listen
  /// backlog), the request's size, the time to send it, and the time for the answer.
  static constexpr int kMaxSessions = 32;
  static constexpr std::uint32_t kMaxRequestBytes = 8 * 1024;
  static constexpr int kRequestReadSeconds = 2;
  static constexpr int kRequestSeconds = 10;
  static constexpr int kMaxHandlersPerPoll = 64;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace sightline::demo
