// sightline-relay: a seeded lossy UDP relay on loopback, between test clients and a server.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <fstream>
#include <memory>
#include <string>

#include "relay.h"

namespace {

constexpr int kBadOption = 2;
constexpr int kRunFailed = 1;

int run(int argc, char** argv) {
  sightline::relay::RelayDef def;
  sightline::relay::LinkDef& link = def.link;
  std::string stats_json;

  CLI::App app{
      "sightline-relay: relays UDP datagrams between clients and a server on loopback, dropping, "
      "duplicating, reordering and delaying them by a seed"};
  app.add_option("--listen-port", def.listen_port,
                 "Port the clients send to (0: any free port, printed at start)")
      ->capture_default_str();
  app.add_option("--target-port", def.target_port, "The server's port")->required();
  app.add_option("--host", def.host, "Loopback address of both the relay and the server (127.x.x.x)")
      ->capture_default_str();
  app.add_option("--drop", link.drop, "Probability that a datagram is lost, in [0, 1)")
      ->capture_default_str();
  app.add_option("--duplicate", link.duplicate, "Probability that a datagram is sent twice, in [0, 1]")
      ->capture_default_str();
  app.add_option("--reorder", link.reorder,
                 "Probability that a datagram is held until after the next one of its direction, in [0, 1)")
      ->capture_default_str();
  app.add_option("--delay-ms", link.delay_ms, "One-way delay in milliseconds, in [0, 10000]")
      ->capture_default_str();
  app.add_option("--jitter-ms", link.jitter_ms,
                 "Extra delay drawn uniformly in [0, jitter] ms, in [0, 10000]")
      ->capture_default_str();
  app.add_option("--seed", link.seed, "Seed of both directions' decisions")->capture_default_str();
  app.add_option("--heal-after", link.heal_after_seconds,
                 "Seconds after which nothing is dropped, duplicated or reordered (0: never)")
      ->capture_default_str();
  app.add_option("--seconds", def.seconds, "Stop after this many seconds (0: at SIGINT or SIGTERM)")
      ->capture_default_str();
  app.add_option("--max-peers", def.max_peers, "Distinct client addresses relayed, in [1, 4096]")
      ->capture_default_str();
  app.add_option("--max-queued", link.max_queued,
                 "Datagrams queued per direction; more are dropped as overflow")
      ->capture_default_str();
  app.add_option("--max-queued-bytes", link.max_queued_bytes,
                 "Payload bytes queued per direction; more are dropped as overflow")
      ->capture_default_str();
  app.add_option("--stats-json", stats_json, "Write the counters per direction and the peers here at exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kBadOption;
  }

  sightline::Result<std::unique_ptr<sightline::relay::Relay>> relay = sightline::relay::Relay::open(def);
  if (!relay) {
    fmt::print(stderr, "sightline-relay: {}\n", relay.status().message());
    return relay.status().code() == sightline::ErrorCode::invalid_def ? kBadOption : kRunFailed;
  }
  // Opened before the run, so that a path that cannot be written is known before the run is spent.
  std::ofstream stats_file;
  if (!stats_json.empty()) {
    stats_file.open(stats_json);
    if (!stats_file) {
      fmt::print(stderr, "sightline-relay: --stats-json is {}: cannot be written\n", stats_json);
      return kBadOption;
    }
  }
  fmt::print("sightline-relay: udp {}:{} -> {}:{}\n", def.host, (*relay)->listen_port(), def.host,
             def.target_port);
  std::fflush(stdout);
  (*relay)->run();

  if (stats_file.is_open()) {
    stats_file << (*relay)->stats_json();
    if (!stats_file.flush()) {
      fmt::print(stderr, "sightline-relay: cannot write --stats-json {}\n", stats_json);
      return kRunFailed;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sightline-relay: %s\n", e.what());
    return kRunFailed;
  }
}
