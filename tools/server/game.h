// The demo server's world: seed 000's walkers and one viewer per connection, interest computed
// by the library for every connection, and the frames of docs/demo_protocol.md it sends them.
// No networking here: the server's network layer feeds it client frames and carries its frames.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sightline/log.h"
#include "sightline/protocol.h"
#include "sightline/status.h"
#include "sightline/world.h"

namespace sightline::demo {

/// What the server runs. The defaults are seed 000's reference run with hysteresis.
struct GameDef {
  /// "reference": walkers spread over the world (seed 000). "crowd": 80% of them in 4 hotspots
  /// a fifth of the world's height wide, the case where interest sets grow.
  std::string scenario = "reference";
  std::uint32_t entities = 120;  ///< Walkers, in [0, 100000]; viewers come on top.
  float width = 12.0f;           ///< World [0, width] x [0, height], world units, in (0, 100000].
  float height = 7.5f;
  float enter_radius = 1.6f;     ///< R, in (0, min(width, height)].
  float leave_radius = 2.0f;     ///< L, in [R, 4R].
  std::uint16_t tick_rate = 20;  ///< Hz, in [1, 120].
  std::uint64_t seed = 1;        ///< The walk's seed (1: the reference run's).
  /// Whether a connection may ask for the debug view (docs/demo_protocol.md, `debug`).
  bool debug_view = false;
  /// Largest enter radius a connection may ask for; 0 means 4R (capped at the world's diagonal).
  float max_radius = 0.0f;
  /// Shots a second, all walkers together (a seeded walker fires at each): World events heard at
  /// twice the enter radius, sent unreliably, with the walker as subject (null to a client that
  /// does not hold it). In [0, 1000].
  float shots_per_second = 2.0f;
  /// How every connection's stream travels: reliable over WebSocket; unreliable over a UDP
  /// transport, where each client acks (the `ack` frame) and the welcome says so (server flag 2).
  Delivery delivery = Delivery::reliable;
  /// Where the library's Worlds and Replicators report (log.h); none by default.
  LogHook log;
  /// Transitions each connection's flight recorder keeps (World::set_history_capacity), for the
  /// debug console (Game::debug); 0, the default, keeps none. In [0, kMaxHistoryEntries].
  std::uint32_t history_capacity = 0;
  /// Threads the library's tick and send use (WorldDef::threads, the calling thread included),
  /// in [1, 64]: the frames are the same for any count.
  std::uint32_t threads = 1;
};

/// An answer of the debug console: an HTTP status and a JSON body ({"error": "..."} unless 200).
struct DebugAnswer {
  int status = 200;
  std::string json;
};

/// Checks every field; the message names the first bad one and its value.
[[nodiscard]] Status validate(const GameDef& def);

/// Live figures for logs and the load test.
struct GameStats {
  std::uint64_t ticks = 0;
  std::uint32_t connections = 0;
  std::uint32_t groups = 0;       ///< Worlds alive: 2 (culling, and the send-everything baseline).
  std::uint64_t frames_in = 0;    ///< Client frames accepted.
  std::uint64_t why_answers = 0;  ///< `why_answer` frames sent (at most one a tick per connection).
  std::uint64_t shots = 0;        ///< Events emitted (each in both Worlds).
  /// Server messages sent to every connection: at most one a tick, who joined or left since the last.
  std::uint64_t messages = 0;
  std::uint64_t bytes_out = 0;  ///< Frame bytes produced, all connections, all ticks.
  double last_tick_ms = 0.0;    ///< Wall time of the last tick(), frames included.
  std::uint32_t entities = 0;   ///< Walkers and viewers now.
  /// Records of every World's ticks so far (TickStats), all connections.
  std::uint64_t spawns = 0;
  std::uint64_t updates = 0;
  std::uint64_t despawns = 0;
  /// Members still waiting for their spawn after the last tick's sends, all connections.
  std::uint64_t pending = 0;
  /// The last tick's phases (World::last_tick_timings) and Replicator sends, each summed over
  /// the Worlds, nanoseconds.
  TickTimings last_phases;
  std::uint64_t last_send_ns = 0;
};

class GameImpl;

/// One demo world. Connections get ids 1, 2, ... (never reused while the Game lives).
///
/// Connections with interest on share one sightline::World and Replicator, each with its own radii
/// (World::set_view_radius: the radius frame's R, and L at the server's L/R ratio or, with
/// hysteresis off, L = R), so a radius or hysteresis change goes on in the same stream from the
/// next tick. Connections with interest off (the send-everything baseline) share a second World
/// whose space does not cull; both hold every walker and every viewer at the same positions and
/// tick every server tick, so a state packet's tick is the server's tick.
/// Turning interest on or off moves the connection to the other World: its stream restarts,
/// announced by a `reset` frame.
///
/// Thread safety: none; call everything from one thread (the server's main thread). tick() runs
/// the library's work on GameDef::threads threads and returns when it is done.
class Game {
 public:
  [[nodiscard]] static Result<std::unique_ptr<Game>> create(const GameDef& def);
  ~Game();
  Game(const Game&) = delete;
  Game& operator=(const Game&) = delete;

  [[nodiscard]] const GameDef& def() const noexcept;

  /// A new connection: its viewer is placed at a random spot of the world with the default
  /// options (hysteresis and interest on, no debug view). Writes its `welcome` frame to `welcome`.
  [[nodiscard]] Result<std::uint32_t> connect(std::vector<std::uint8_t>& welcome);
  /// Removes the connection and its viewer (others see it despawn at the next tick). Unknown ids
  /// are ignored.
  void disconnect(std::uint32_t connection);

  /// Applies one client frame (move, options, radius) from the next tick, takes a `why`
  /// question, answered after the next tick, or hands an `ack` to the connection's Replicator. A refusal
  /// (invalid_argument, for an unknown connection too) changes nothing; its message is the close reason, at
  /// most 123 bytes, naming the frame, the field and its value. A `why` frame is refused unless the
  /// connection's options have the debug view on. One question waits per connection: a later one replaces it.
  [[nodiscard]] Status receive(std::uint32_t connection, std::span<const std::uint8_t> frame);

  /// Receives each frame of one tick: called in ascending connection order, each connection's
  /// frames in order (`reset` when its stream restarted, `tick`, then `debug` when asked for,
  /// then `why_answer` when a question waits and the debug view is still on; a question waiting
  /// when the stream restarts is dropped, as its handle names an entity of the other World).
  /// `frame` is valid only during the call.
  using FrameSink = void (*)(void* context, std::uint32_t connection, std::span<const std::uint8_t> frame);

  /// Advances one tick: walkers walk, viewers move where their last `move` said, every World
  /// ticks and sends, and every connection's frames go to `sink`. `server_time_ms` (milliseconds
  /// since the Unix epoch) is stamped into each tick frame for the receivers' delay figures.
  [[nodiscard]] Status tick(double server_time_ms, FrameSink sink, void* context);

  [[nodiscard]] GameStats stats() const noexcept;

  /// The debug console (docs/demo_protocol.md, "Debug console"): answers GET `target` (a path
  /// and query) about the last tick: /debug/clients, /debug/client?connection=N,
  /// /debug/why?connection=N&entity=I[:G], /debug/tick. 404 for another path, 400 naming a
  /// missing or malformed parameter. Costs at most O(entities) a call.
  [[nodiscard]] DebugAnswer debug(std::string_view target) const;

 private:
  explicit Game(std::unique_ptr<GameImpl> impl) noexcept;
  std::unique_ptr<GameImpl> impl_;
};

}  // namespace sightline::demo
