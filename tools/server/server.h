// sightline-server's network layers around one Game: one TCP port with HTTP for the page's files
// and WebSocket for the demo's frames (docs/demo_protocol.md), the WebSockets on I/O threads of
// their own; or one UDP port speaking ENet with the same frames, on one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "game.h"
#include "sightline/status.h"

namespace sightline::demo {

/// What the network layer runs with; the defaults are the documented limits.
struct ServerDef {
  /// "websocket" (TCP, the page's) or "enet" (UDP, Delivery::unreliable; no page).
  std::string transport = "websocket";
  std::string host = "127.0.0.1";  ///< An IP address or a name that resolves to one.
  std::uint16_t port = 8080;       ///< 0: any free port (the URL printed at start names it).
  /// Live connections; more: "server full". [1, 100000]; [1, kMaxEnetConnections] over ENet.
  std::uint32_t max_connections = 2000;
  /// Threads the WebSockets' reads and writes run on, each connection on one of them, beside the
  /// thread that runs the Game, the HTTP requests and the timers. [1, 64]; WebSocket only.
  std::uint32_t io_threads = 1;
  /// TCP connections that are not (yet) WebSockets: HTTP requests, and upgrades until their
  /// request is read (each within 10 s). At the limit the oldest is closed to make room. WebSocket
  /// only. [1, 100000]
  std::uint32_t max_http_connections = 1024;
  /// Frames a connection may send a second, every kind counted (data, continuation, ping, pong,
  /// close): a token bucket, also its capacity. [1, 10000]
  std::uint32_t max_frames_per_second = 60;
  std::uint32_t idle_seconds = 120;  ///< No data nor pong for this long closes. [1, 86400]
  std::string web_root;              ///< Directory of the page's files (WebSocket only).
  double seconds = 0.0;              ///< Stop after this long; 0: at SIGINT/SIGTERM. [0, 1e7]
  /// When the stats' rss_kb_after_warmup is read, seconds from the start; 0: a tenth of `seconds`,
  /// at least 5 s. [0, 1e7]
  double warmup_seconds = 0.0;
  std::string stats_json;  ///< Written at exit when not empty.
  /// Answer GET /debug/... (Game::debug) on the HTTP port; refused (404) otherwise.
  bool debug_http = false;
  /// ENet only (WebSocket serves HTTP on its own port): also answer /metrics and /debug/... over
  /// HTTP on this TCP port, 0 for any free one; none by default.
  std::optional<std::uint16_t> http_port;
};

/// ENet numbers a host's peers in 12 bits (4095), and the server keeps 64 of them for the
/// connections it is closing as "server full".
inline constexpr std::uint32_t kMaxEnetConnections = 4095 - 64;

/// Checks every field; the message names the command-line option and its value.
[[nodiscard]] Status validate(const ServerDef& def);

/// When the stats' rss_kb_after_warmup is read, from the start (ServerDef::warmup_seconds).
[[nodiscard]] std::chrono::steady_clock::duration warmup_after(const ServerDef& def);

/// Listens, prints "sightline-server: http://HOST:PORT/ (Ctrl-C to stop)" on stdout, then ticks
/// `game` at its tick rate and serves until def.seconds pass or SIGINT/SIGTERM arrives: then
/// every WebSocket is closed with 1001 (going away) and the stats file written. Returns ok after
/// such a stop; an error when it cannot listen, a tick fails or the stats cannot be written.
/// `game`, the HTTP requests and the timers run on the calling thread; the WebSockets on
/// def.io_threads more.
[[nodiscard]] Status run_server(const ServerDef& def, Game& game);

/// run_server over ENet (def.transport "enet"; `game` made with Delivery::unreliable): prints
/// "sightline-server: enet://HOST:PORT (Ctrl-C to stop)" (then, with def.http_port,
/// "sightline-server: http://HOST:PORT/ (metrics and debug console)"), then the same ticks and stop. One
/// ENet channel: welcome, reset, why_answer and close frames reliable, tick and debug frames
/// unreliable, which ENet delivers in order behind the reliable ones and drops when late; the
/// client's frames arrive either way. The limits of docs/demo_protocol.md hold, each closing the
/// connection with a `close` frame that says why, plus a bound on the bytes queued for a client
/// (ENet holds reliable frames until acknowledged): "too slow".
[[nodiscard]] Status run_enet_server(const ServerDef& def, Game& game);

}  // namespace sightline::demo
