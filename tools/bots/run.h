// sightline-bots' run: N bots on WebSocket or ENet connections to one demo server, and what each
// saw.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bot.h"

namespace sightline::bots {

struct RunDef {
  /// "websocket" (the server's default) or "enet" (UDP: unreliable delivery, the bots ack).
  std::string transport = "websocket";
  /// Where the server listens. The bots connect there and nowhere else; the delay figure
  /// compares the server's clock with this machine's, so it means something on loopback only.
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::uint32_t bots = 1;     ///< Connections, in [1, 10000]; [1, 4095] over ENet.
  double seconds = 10.0;      ///< Length of the run from the first connection, seconds.
  double ramp_seconds = 1.0;  ///< Connections start evenly over this, in [0, seconds / 2].
  double move_hz = 10.0;      ///< Move frames per second per bot, in (0, 30].
  double speed = 1.5;         ///< The viewers' walking speed, world units per second.
  std::uint64_t seed = 1;     ///< Bot i walks with seed + i.
  /// Seconds for TCP connect and the WebSocket handshake each; over ENet, from a bot's start to
  /// its welcome, across its fresh attempts (it waits past the run's end for a late welcome).
  double connect_timeout = 10.0;
  double idle_timeout = 5.0;  ///< Seconds without a server frame before a bot gives up.
  /// Seconds after the run's end for the closing handshakes; then everything stops (hung).
  double grace_seconds = 10.0;
  /// Each bot asks for the debug view (the server must run with --debug-view) and compares its
  /// mirror with the server's set at every tick where the mirror is complete (Bot).
  bool check_sets = false;
  /// With each move, each bot also asks for another enter radius (Bot::take_radius): every bot
  /// its own, flipping between two values. WebSocket only.
  bool radius_churn = false;
  /// Threads the bots run on, each with its own share of them (bot i on thread i % threads), in
  /// [1, 64]; over ENet each thread serves a UDP socket of its own.
  std::uint32_t threads = 1;
  /// What a pass asks beside no anomaly and every connection finished: every bot received tick
  /// frames at no less than this share of the server's tick rate, in [0, 1] (0: not asked)...
  double min_tick_share = 0.95;
  /// ...and the tick frames' delivery delay p99 (receive time - server time) is under this, ms.
  double max_delay_ms = 250.0;
};

/// Checks every field; the message names the first bad one and its value.
[[nodiscard]] Status validate(const RunDef& def);

enum class Outcome : std::uint8_t {
  finished,  ///< Ran to the end and closed normally.
  failed,    ///< Never connected: TCP, the handshake, or a refusal (HTTP 503).
  closed,    ///< The connection ended before the run did, or its close failed.
  hung,      ///< Still open when the grace time ran out.
};
[[nodiscard]] const char* outcome_name(Outcome outcome) noexcept;

struct BotRun {
  Outcome outcome = Outcome::hung;
  std::string error;               ///< Why it failed or closed; empty otherwise.
  double connected_seconds = 0.0;  ///< From the handshake to the end of its connection.
  BotTotals totals;
  std::vector<std::string> notes;  ///< Its first problems (Bot::notes).
  std::uint32_t tick_rate = 0;     ///< The server's, from its welcome; 0 if none came.
};

struct RunResult {
  std::vector<BotRun> bots;
  DelayHistogram delays;  ///< Every tick frame of every bot: receive time - server time, ms.
  double wall_seconds = 0.0;
  /// CPU time (user + system) of this process over the run: near wall_seconds means the bots'
  /// one thread was saturated, and their delays measure themselves rather than the server.
  double cpu_seconds = 0.0;
};

/// Runs the bots over WebSocket on def.threads threads until the run's end (plus the closing handshakes,
/// bounded by grace_seconds). `def` must pass validate().
[[nodiscard]] RunResult run_bots(const RunDef& def);
/// The same over ENet: on each thread one client host with a peer per bot of its share. Each bot
/// acks every tick frame and sends its moves unreliably, its options reliably; it leaves with
/// kClientGoodbye.
[[nodiscard]] RunResult run_enet_bots(const RunDef& def);

/// Milliseconds since the Unix epoch (the clock the server stamps tick frames with).
[[nodiscard]] double epoch_ms();
/// CPU time (user + system) of this process so far, seconds.
[[nodiscard]] double process_cpu_seconds();

}  // namespace sightline::bots
