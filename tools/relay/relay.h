// The relay's sockets: clients on one loopback UDP port, each relayed to the target through its
// own upstream socket, both directions impaired by a Link.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "link.h"
#include "sightline/status.h"

namespace sightline::relay {

/// Where the relay listens and forwards, how it impairs, and its limits.
struct RelayDef {
  /// Address of both the listening socket and the target, IPv4 loopback only (127.x.x.x): the
  /// relay degrades test traffic on this machine and never forwards anywhere else.
  std::string host = "127.0.0.1";
  /// Port the clients send to; 0: any free port (printed at start).
  std::uint16_t listen_port = 0;
  /// The server's port, in [1, 65535]; required.
  std::uint16_t target_port = 0;
  /// Impairment of both directions (each with its own generator derived from link.seed).
  LinkDef link;
  /// Run time in seconds, in [0, 1e6]; 0: until SIGINT or SIGTERM.
  double seconds = 0;
  /// Distinct client addresses relayed, in [1, 4096]; each holds one upstream socket. Datagrams
  /// from further addresses are dropped and counted.
  std::size_t max_peers = 1024;
};

/// ok, or invalid_def with a message naming the command-line option and its value.
[[nodiscard]] Status validate(const RelayDef& def);

/// A running relay. Owns every socket it opens and closes them all when destroyed.
/// Single-threaded; allocates per datagram (a copy of each queued payload).
class Relay {
 public:
  /// Opens and binds the listening socket. Refuses an invalid def (invalid_def); any other
  /// error means a socket could not be opened, and the message says which and why.
  [[nodiscard]] static Result<std::unique_ptr<Relay>> open(const RelayDef& def);

  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;
  ~Relay();

  /// The bound listening port (the one chosen when def.listen_port was 0).
  [[nodiscard]] std::uint16_t listen_port() const noexcept;

  /// Relays until def.seconds have passed or SIGINT or SIGTERM arrives. Installs handlers for
  /// both signals that only ask the relay to stop, and leaves them installed.
  void run();

  /// The counters of each direction and the peers, as JSON text.
  [[nodiscard]] std::string stats_json() const;

 private:
  struct State;
  explicit Relay(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace sightline::relay
