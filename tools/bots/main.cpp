// sightline-bots: a load client for sightline-server. N bots connect over WebSocket, follow the
// stream with a ClientMirror, walk their viewers, check everything they receive, and report.
// Meant for loopback (--host 127.0.0.1): the delay figure compares the server's clock with ours.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "report.h"
#include "run.h"

int main(int argc, char** argv) {
  sightline::bots::RunDef def;
  std::string json_path;
  CLI::App app{
      "sightline-bots: load bots for sightline-server over WebSocket or ENet (docs/demo_protocol.md)"};
  app.add_option("--transport", def.transport, "websocket or enet (the server's --transport)")
      ->capture_default_str();
  app.add_option("--host", def.host, "Server address; the bots connect to it and nowhere else (loopback use)")
      ->capture_default_str();
  app.add_option("--port", def.port, "Server port")->required();
  app.add_option("--bots", def.bots, "Connections, 1..10000")->capture_default_str();
  app.add_option("--seconds", def.seconds, "Length of the run from the first connection, seconds")
      ->capture_default_str();
  app.add_option("--ramp-seconds", def.ramp_seconds,
                 "Connections start evenly over this many seconds (<= seconds/2)")
      ->capture_default_str();
  app.add_option("--move-hz", def.move_hz, "Move frames per second per bot, (0, 30]")->capture_default_str();
  app.add_option("--speed", def.speed, "Viewer walking speed, world units per second")->capture_default_str();
  app.add_option("--seed", def.seed, "Bot i walks with seed + i")->capture_default_str();
  app.add_option("--idle-timeout", def.idle_timeout, "Seconds without a server frame before a bot gives up")
      ->capture_default_str();
  app.add_option("--connect-timeout", def.connect_timeout,
                 "Seconds for a connection (over WebSocket, and its handshake; over ENet, to the welcome) "
                 "before a bot gives up")
      ->capture_default_str();
  app.add_flag("--check-sets", def.check_sets,
               "Ask for the debug view (server --debug-view) and compare each mirror with the server's set "
               "whenever it is complete");
  def.threads = std::clamp(std::thread::hardware_concurrency(), 1u, 64u);
  app.add_option("--threads", def.threads,
                 "Threads the bots run on, bot i on thread i % threads (default: the machine's cores)")
      ->capture_default_str();
  app.add_option(
         "--min-tick-share", def.min_tick_share,
         "Pass only if every bot received tick frames at this share of the server's tick rate or more "
         "(0: not asked)")
      ->capture_default_str();
  app.add_option("--max-delay-ms", def.max_delay_ms,
                 "Pass only if the tick frames' delivery delay p99 is under this many milliseconds")
      ->capture_default_str();
  app.add_flag(
      "--radius-churn", def.radius_churn,
      "With each move, ask for another enter radius: each bot its own, flipping between two (WebSocket)");
  app.add_option("--json", json_path, "Also write the figures to this file as JSON");
  CLI11_PARSE(app, argc, argv);

  if (const sightline::Status s = sightline::bots::validate(def); !s) {
    fmt::print(stderr, "sightline-bots: {}\n", s.message());
    return 2;
  }
  const bool enet = def.transport == "enet";
  fmt::print(stderr, "sightline-bots: {} bots to {}://{}:{}{} for {} s (ramp {} s)\n", def.bots,
             enet ? "enet" : "ws", def.host, def.port, enet ? "" : "/ws", def.seconds, def.ramp_seconds);
  const sightline::bots::RunResult result =
      enet ? sightline::bots::run_enet_bots(def) : sightline::bots::run_bots(def);
  const sightline::bots::Summary summary = sightline::bots::summarize(result, def);
  fmt::print("{}", sightline::bots::format_table(summary));
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << sightline::bots::format_json(summary, def);
    if (!out) {
      fmt::print(stderr, "sightline-bots: cannot write --json {}\n", json_path);
      return 2;
    }
  }
  return summary.passed() ? 0 : 1;
}
