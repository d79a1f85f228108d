// sightline-sim: with no arguments, the reference report; with flags, one configuration.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bandwidth.h"
#include "jitter_walk.h"
#include "replay_report.h"
#include "report.h"
#include "rule_costs.h"
#include "run.h"
#include "sightline/sightline.h"
#include "trace.h"

namespace {

using sightline::sim::Totals;

// Where --record writes: a recording sink over a C file, which notes a failed write.
struct RecordingFile {
  std::FILE* file = nullptr;
  bool failed = false;
  static void write(void* context, std::span<const std::uint8_t> bytes) {
    auto* self = static_cast<RecordingFile*>(context);
    if (std::fwrite(bytes.data(), 1, bytes.size(), self->file) != bytes.size()) self->failed = true;
  }
  // Closes the file; false if any write failed.
  bool close() {
    const bool closed = std::fclose(file) == 0;
    file = nullptr;
    return closed && !failed;
  }
  RecordingFile() = default;
  RecordingFile(const RecordingFile&) = delete;
  RecordingFile& operator=(const RecordingFile&) = delete;
  ~RecordingFile() {
    if (file != nullptr) std::fclose(file);
  }
};

// A one-line bar on stderr with the time left, redrawn with '\r'; silent unless stderr is a
// terminal. finish() clears it, so that a report printed next starts on a clean line.
class ProgressBar {
 public:
  explicit ProgressBar(std::uint64_t total)
      : total_(total), enabled_(isatty(fileno(stderr)) != 0), start_(std::chrono::steady_clock::now()) {}
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  ~ProgressBar() { finish(); }

  void advance() {
    ++done_;
    if (!enabled_ || total_ == 0) return;
    const auto percent = static_cast<int>(done_ * 100 / total_);
    if (percent == last_percent_) return;
    last_percent_ = percent;
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start_;
    const double left = elapsed.count() * static_cast<double>(total_ - done_) / static_cast<double>(done_);
    constexpr int kBarWidth = 40;
    const int filled = percent * kBarWidth / 100;
    std::fprintf(stderr, "\r[%s%s] %3d%%  ETA %-8s",
                 std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(kBarWidth - filled), ' ').c_str(), percent,
                 time_left(left).c_str());
    std::fflush(stderr);
    drawn_ = true;
  }

  // Clears the bar (once it has been drawn); advance() after it draws it again.
  void finish() {
    if (!drawn_) return;
    std::fprintf(stderr, "\r%*s\r", kLineWidth, "");
    std::fflush(stderr);
    drawn_ = false;
    last_percent_ = -1;
  }

 private:
  // "[" + 40 + "] " + "100%" + "  ETA " + 8: the widest line advance() draws.
  static constexpr int kLineWidth = 62;

  static std::string time_left(double seconds) {
    const auto whole = static_cast<long long>(std::ceil(seconds));
    if (whole < 60) return fmt::format("{} s", whole);
    return fmt::format("{}:{:02} min", whole / 60, whole % 60);
  }

  std::uint64_t total_;
  std::uint64_t done_ = 0;
  int last_percent_ = -1;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
};

int fail(const std::string& message, int code = 2) {
  fmt::print(stderr, "sightline-sim: {}\n", message);
  return code;
}

// The first of `options` given on the command line, or null: the one a refusal names.
const CLI::Option* first_given(std::initializer_list<const CLI::Option*> options) {
  for (const CLI::Option* opt : options) {
    if (opt->count() != 0) return opt;
  }
  return nullptr;
}

std::optional<std::pair<float, float>> parse_world(const std::string& text) {
  const std::size_t x = text.find_first_of("xX");
  if (x == std::string::npos) return std::nullopt;
  try {
    std::size_t used_w = 0;
    std::size_t used_h = 0;
    const std::string w_text = text.substr(0, x);
    const std::string h_text = text.substr(x + 1);
    const float w = std::stof(w_text, &used_w);
    const float h = std::stof(h_text, &used_h);
    if (used_w != w_text.size() || used_h != h_text.size()) return std::nullopt;
    if (!std::isfinite(w) || !std::isfinite(h) || w <= 0.0f || h <= 0.0f) return std::nullopt;
    return std::pair{w, h};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Positions from the seeded walk: tick 0 is the starting layout, each later tick one step on.
sightline::sim::PositionSource walk_source(const sightline::scenarios::JitterWalkDef& def) {
  auto walk = std::make_shared<sightline::scenarios::JitterWalk>(def);
  return [walk](std::uint64_t tick, std::span<float> xs, std::span<float> zs) {
    if (tick != 0) walk->step();
    std::copy(walk->xs().begin(), walk->xs().end(), xs.begin());
    std::copy(walk->zs().begin(), walk->zs().end(), zs.begin());
  };
}

nlohmann::ordered_json totals_json(const Totals& t, double hz) {
  nlohmann::ordered_json out;
  out["ticks"] = t.ticks;
  out["entities"] = t.entities;
  out["clients"] = t.clients;
  // The counted totals, then the same totals per second (ticks, entities and clients are not rates).
  auto fill = [&t](nlohmann::ordered_json& j, auto convert) {
    j["send_all"] = convert(t.send_all);
    j["updates"] = convert(t.updates);
    j["spawns"] = convert(t.spawns);
    j["despawns"] = convert(t.despawns);
    j["messages"] = convert(t.messages);
    j["distance_tests"] = convert(t.distance_tests);
  };
  fill(out, [](std::uint64_t v) { return v; });
  const double seconds = static_cast<double>(t.ticks) / hz;
  nlohmann::ordered_json rates;
  fill(rates, [seconds](std::uint64_t v) { return static_cast<double>(v) / seconds; });
  out["per_second"] = rates;
  return out;
}

void print_summary(const Totals& t, double hz) {
  const double seconds = static_cast<double>(t.ticks) / hz;
  auto line = [&](const char* name, std::uint64_t total) {
    fmt::print("{:<16} {:>14} {:>14}/s\n", name, sightline::sim::grouped(static_cast<double>(total)),
               sightline::sim::grouped(static_cast<double>(total) / seconds));
  };
  fmt::print("{} ticks ({:g} s at {:g} Hz), {} entities, {} clients\n", t.ticks, seconds, hz, t.entities,
             t.clients);
  line("send everything", t.send_all);
  line("messages", t.messages);
  line("updates", t.updates);
  line("spawns", t.spawns);
  line("despawns", t.despawns);
  fmt::print("{:<16} {:>14} per tick\n", "distance tests",
             sightline::sim::grouped(static_cast<double>(t.distance_tests) / static_cast<double>(t.ticks)));
}

/// The closing speed below which the promise holds: the margin between the enter radius and the
/// promise radius, over a tick (the recompute) plus the one-way latency.
double promise_speed_bound(float enter_radius, float promise_radius, float hz, float latency_ms) {
  return (enter_radius - promise_radius) / (1.0 / hz + latency_ms / 1000.0);
}

nlohmann::ordered_json bandwidth_json(const sightline::sim::BandwidthTotals& t,
                                      const sightline::sim::BandwidthConfig& c, float speed) {
  const double seconds = static_cast<double>(t.ticks) / c.hz;
  const double per_client =
      static_cast<double>(t.bytes) / seconds / static_cast<double>(std::max<std::uint64_t>(1, t.clients));
  nlohmann::ordered_json out;
  out["ticks"] = t.ticks;
  out["entities"] = t.entities;
  out["clients"] = t.clients;
  out["budget_bytes"] = c.budget;
  out["entry_budget_bytes"] = c.entry_budget;
  out["latency_ms"] = c.latency_ms;
  out["loss_percent"] = c.loss_percent;
  out["delivery"] = t.unreliable ? "unreliable" : "reliable";
  out["bytes_per_second_per_client"] = per_client;
  out["kbit_per_second_per_client"] = per_client * 8.0 / 1000.0;
  out["max_client_bytes_per_second"] = static_cast<double>(t.max_client_bytes) / seconds;
  out["packets_per_second"] = static_cast<double>(t.packets) / seconds;
  out["spawns"] = t.spawns;
  out["updates"] = t.updates;
  out["state"] = c.whole_state ? "whole" : "position";
  out["delta_updates"] = t.delta_updates;
  out["despawns"] = t.despawns;
  out["events_emitted"] = t.events_emitted;
  out["events_sent"] = t.events;
  out["events_heard"] = t.events_heard;
  out["event_bytes_per_second_per_client"] = static_cast<double>(t.event_bytes) / seconds /
                                             static_cast<double>(std::max<std::uint64_t>(1, t.clients));
  out["resends"] = t.resends;
  out["updates_skipped"] = t.updates_skipped;
  out["spawns_delayed"] = t.spawns_delayed;
  out["mean_spawn_delay_ticks"] = t.spawns_delayed == 0 ? 0.0
                                                        : static_cast<double>(t.spawn_delay_sends) /
                                                              static_cast<double>(t.spawns_delayed);
  out["longest_wait_ticks"] = t.longest_wait;
  out["max_pending"] = t.max_pending;
  out["promise_radius"] = t.promise_radius;
  out["walk_speed"] = speed;
  out["promise_closing_speed_bound"] =
      promise_speed_bound(c.enter_radius, t.promise_radius, c.hz, c.latency_ms);
  out["promise_violations_at_send"] = t.violations_at_send;
  out["promise_violations_at_client"] = t.violations_at_client;
  out["mirror_anomalies"] = t.anomalies;
  out["stale_updates_dropped"] = t.stale_updates;
  out["datagrams_dropped"] = t.datagrams_dropped;
  return out;
}

void print_bandwidth(const sightline::sim::BandwidthTotals& t, const sightline::sim::BandwidthConfig& c,
                     float speed) {
  using sightline::sim::grouped;
  const double seconds = static_cast<double>(t.ticks) / c.hz;
  const double per_client =
      static_cast<double>(t.bytes) / seconds / static_cast<double>(std::max<std::uint64_t>(1, t.clients));
  fmt::print("{} ticks ({:g} s at {:g} Hz), {} entities, {} clients, R = {:g}, L = {:g}\n", t.ticks, seconds,
             c.hz, t.entities, t.clients, c.enter_radius, c.leave_radius);
  fmt::print(
      "budget {} bytes a send, entry allowance {} bytes a send, {:g} ms latency, {:g}% loss, {} delivery\n",
      c.budget, c.entry_budget, c.latency_ms, c.loss_percent, t.unreliable ? "unreliable" : "reliable");
  if (c.whole_state || c.delta_updates) {
    fmt::print("updates carry the {}; {}\n", c.whole_state ? "whole 40-byte state" : "position",
               c.delta_updates ? "sent as deltas where the client holds a base" : "sent whole");
  }
  fmt::print("{:<28} {:>12} bytes/s  ({:.1f} kbit/s); busiest client {} bytes/s\n", "per client",
             grouped(per_client), per_client * 8.0 / 1000.0,
             grouped(static_cast<double>(t.max_client_bytes) / seconds));
  auto line = [&](const char* name, std::uint64_t total) {
    fmt::print("{:<28} {:>12}/s\n", name, grouped(static_cast<double>(total) / seconds));
  };
  line("packets", t.packets);
  line("updates sent", t.updates);
  if (c.delta_updates) line("  of them deltas", t.delta_updates);
  line("updates left for later", t.updates_skipped);
  line("spawns", t.spawns);
  line("despawns", t.despawns);
  if (c.events_per_second > 0.0f) {
    fmt::print("{:<28} {:>12}/s emitted, {}/s sent, {}/s heard; {} bytes/s per client\n", "events",
               grouped(static_cast<double>(t.events_emitted) / seconds),
               grouped(static_cast<double>(t.events) / seconds),
               grouped(static_cast<double>(t.events_heard) / seconds),
               grouped(static_cast<double>(t.event_bytes) / seconds /
                       static_cast<double>(std::max<std::uint64_t>(1, t.clients))));
  }
  if (t.unreliable) line("resent spawns, despawns and events", t.resends);
  const double mean_delay = t.spawns_delayed == 0 ? 0.0
                                                  : static_cast<double>(t.spawn_delay_sends) /
                                                        static_cast<double>(t.spawns_delayed);
  fmt::print("{:<28} {:>12} (mean {:.2f} ticks late)\n", "spawns delayed by pacing",
             grouped(static_cast<double>(t.spawns_delayed)), mean_delay);
  fmt::print("{:<28} {:>12} ticks ({:g} ms)\n", "longest wait of a member", t.longest_wait,
             static_cast<double>(t.longest_wait) * 1000.0 / c.hz);
  fmt::print("{:<28} {:>12}\n", "largest pending count", t.max_pending);
  const double bound = promise_speed_bound(c.enter_radius, t.promise_radius, c.hz, c.latency_ms);
  fmt::print(
      "promise radius {:.4g} (R / 1.2): holds for closing speeds below {:.3g} u/s at this tick rate and "
      "latency;\n"
      "  walkers at {:g} u/s close at up to {:g} u/s\n",
      t.promise_radius, bound, speed, 2.0 * speed);
  fmt::print("{:<28} {:>12} at send, {} at the client", "promise violations", t.violations_at_send,
             t.violations_at_client);
  if (t.violations_at_client != 0) fmt::print(" (nearest {:.3g} u)", t.worst_violation_distance);
  fmt::print("\n");
  fmt::print("{:<28} {:>12}\n", "mirror anomalies", t.anomalies);
  if (t.unreliable) {
    fmt::print("{:<28} {:>12} datagrams lost, {} stale updates dropped by mirrors\n", "network",
               t.datagrams_dropped, t.stale_updates);
  }
}

int report() {
  const sightline::scenarios::JitterWalkDef walk{};
  const float enter_radius = sightline::default_world_def().enter_radius;
  const float seconds = 60.0f;
  const auto ticks = static_cast<std::uint64_t>(std::llround(seconds * walk.hz));
  const std::vector<sightline::sim::ReportRowSpec> specs =
      sightline::sim::reference_rows(enter_radius, walk.entities);
  std::vector<sightline::sim::ReportRow> rows;
  ProgressBar bar(ticks * specs.size());
  for (const auto& spec : specs) {
    auto totals = sightline::sim::run(spec.config, walk.entities, ticks, walk_source(walk),
                                      [&bar](std::uint64_t) { bar.advance(); });
    if (!totals.ok()) return fail(fmt::format("{}: {}", spec.name, totals.status().message()), 1);
    rows.push_back({spec, totals.value()});
  }
  bar.finish();
  const sightline::sim::ReportScenario scenario{walk.entities, walk.width, walk.height, enter_radius,
                                                walk.hz,       seconds,    walk.seed};
  const std::string text = sightline::sim::format_report(scenario, rows);
  fmt::print("{}", text);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc <= 1) return report();

  const sightline::scenarios::JitterWalkDef defaults{};
  CLI::App app{
      "sightline-sim: interest-management message counts. With no arguments, prints the "
      "reference report; with options, runs one configuration."};
  std::uint32_t entities = defaults.entities;
  std::string world = fmt::format("{:g}x{:g}", defaults.width, defaults.height);
  float radius = sightline::default_world_def().enter_radius;
  float leave = 0.0f;
  float hz = defaults.hz;
  float seconds = 60.0f;
  std::uint64_t seed = defaults.seed;
  bool tiers = false;
  bool no_interest = false;
  std::uint32_t clients = 0;
  bool json = false;
  std::string trace_path;
  std::string write_trace_path;
  float drill = 0.0f;
  std::string scenario;
  std::uint32_t budget = 1200;
  std::uint32_t entry_budget = 32 * 1024;
  float latency_ms = 0.0f;
  float loss_percent = 0.0f;
  float events_per_second = 0.0f;
  bool whole_state = false;
  bool deltas = false;
  float speed = defaults.speed;

  auto* entities_opt =
      app.add_option("--entities", entities, "Number of entities of the simulated walk (>= 1)");
  auto* world_opt = app.add_option("--world", world, "World size WxH in world units, e.g. 12x7.5");
  auto* radius_opt = app.add_option("--radius", radius, "Enter radius R, world units (> 0)");
  auto* leave_opt = app.add_option("--leave", leave, "Leave radius L >= R, world units (default: R)");
  auto* hz_opt =
      app.add_option("--hz", hz, "Ticks per second (> 0); with --trace it only sets the per_second rates");
  auto* seconds_opt = app.add_option("--seconds", seconds, "Simulated seconds (> 0)");
  // CLI11 reads "-1" into an unsigned option as 2^64 - 1; refuse it instead.
  const CLI::Validator non_negative(
      [](std::string& text) {
        return text.find('-') == std::string::npos ? std::string()
                                                   : "'" + text + "' is negative: must be >= 0";
      },
      "");
  auto* seed_opt = app.add_option("--seed", seed, "Seed of the jittering walk")->check(non_negative);
  auto* tiers_opt =
      app.add_flag("--tiers", tiers, "Distance tiers: within R/2 every tick, else every second tick");
  auto* no_interest_opt =
      app.add_flag("--no-interest", no_interest,
                   "Send everything: every client gets every other entity every tick, no spawns or "
                   "despawns, no distance tests");
  auto* clients_opt =
      app.add_option("--clients", clients, "The first K entity ids are clients (default: all)");
  auto* json_opt = app.add_flag("--json", json, "Print one JSON object instead of the summary");
  auto* trace_opt =
      app.add_option("--trace", trace_path,
                     "Read positions from a CSV file instead of simulating. Header tick,id,x,y (y is the "
                     "world's z); one row per entity per tick; ticks consecutive from 0; the rows of a tick "
                     "in any order, each id 0..N-1 exactly once. N comes from the file, so --entities, "
                     "--world, --seconds and --seed are refused with it");
  auto* write_trace_opt =
      app.add_option("--write-trace", write_trace_path,
                     "Write the run's positions to a CSV file in the --trace format (floats round-trip "
                     "exactly, so --trace on it gives the same counts)");
  auto* drill_opt = app.add_option(
      "--drill", drill,
      "A culling drill: the entities live in a space that never asked for culling (everyone holds "
      "everything), and a drill forces culling on at this enter radius (leave radius: --leave, "
      "default the same). Prints what the space sends without and with the drill");
  auto* scenario_opt =
      app.add_option(
             "--scenario", scenario,
             "'relevance': the walk with one rule added per row (team markers, a boss turning always "
             "relevant, carried items, owned drones, walls) and what each costs in messages, as a "
             "table. It takes --entities, --world, --seconds, --seed, --speed, --radius, --clients and "
             "--hz, and refuses the rest")
          ->check(CLI::IsMember({"relevance"}));
  auto* budget_opt =
      app.add_option("--budget", budget,
                     "Bandwidth run: bytes per client per send for updates and despawns, headers "
                     "included (priority accumulators fill it)")
          ->check(non_negative);
  auto* entry_opt =
      app.add_option("--entry-budget", entry_budget,
                     "Bandwidth run: bytes of spawns per client per send (paced entry, nearest first); "
                     "default 32768")
          ->check(non_negative);
  auto* latency_opt = app.add_option("--latency", latency_ms, "Bandwidth run: one-way latency, milliseconds");
  auto* loss_opt =
      app.add_option("--loss", loss_percent,
                     "Bandwidth run: datagrams lost each way, percent; above 0 the replicator uses "
                     "unreliable delivery (spawns and despawns resent until acknowledged)");
  auto* events_opt =
      app.add_option("--events", events_per_second,
                     "Bandwidth run: gunshots a second over the world, each at a random walker, heard at "
                     "twice the enter radius and sent reliably; their bytes are counted");
  auto* whole_state_opt =
      app.add_flag("--whole-state", whole_state,
                   "Bandwidth run: every update carries the walker's whole state (position, kind, health, "
                   "name, gear: about 40 bytes, only the position changing) instead of its position");
  auto* deltas_opt = app.add_flag("--deltas", deltas,
                                  "Bandwidth run: send updates as deltas against a state the client holds "
                                  "(ReplicatorDef::delta_updates)");
  auto* speed_opt = app.add_option("--speed", speed, "Walking speed of the simulated walk, units per second");
  std::string record_path;
  std::string replay_path;
  std::vector<std::string> why_names;
  auto* record_opt =
      app.add_option("--record", record_path,
                     "Write the run's World inputs to a recording file (docs/recording.md), for "
                     "--replay");
  auto* replay_opt =
      app.add_option("--replay", replay_path,
                     "Re-run a recording (WorldDef::recording, or --record) and print a summary; the "
                     "recording gives the world, so every other option but --why is refused");
  auto* why_opt =
      app.add_option("--why", why_names,
                     "With --replay: CLIENT ENTITY (each INDEX or INDEX:GENERATION): print each spawn "
                     "and despawn of that entity for that client, tick by tick (reason, distance, "
                     "rule), and why() after the last tick")
          ->expected(2);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  if (replay_opt->count() != 0) {
    if (const CLI::Option* opt =
            first_given({entities_opt,    world_opt,  radius_opt,      leave_opt,   hz_opt,    seconds_opt,
                         seed_opt,        tiers_opt,  no_interest_opt, clients_opt, json_opt,  trace_opt,
                         write_trace_opt, drill_opt,  scenario_opt,    budget_opt,  entry_opt, latency_opt,
                         loss_opt,        events_opt, whole_state_opt, deltas_opt,  speed_opt, record_opt})) {
      return fail(fmt::format("{} cannot be used with --replay: the recording gives the world and its inputs",
                              opt->get_name()));
    }
    std::optional<sightline::sim::WhyPair> pair;
    if (why_opt->count() != 0) {
      const auto client = sightline::sim::parse_handle_name("--why CLIENT", why_names[0]);
      if (!client) return fail(client.status().message());
      const auto entity = sightline::sim::parse_handle_name("--why ENTITY", why_names[1]);
      if (!entity) return fail(entity.status().message());
      pair = sightline::sim::WhyPair{*client, *entity};
    }
    std::ifstream in(replay_path, std::ios::binary);
    if (!in) return fail(fmt::format("cannot open recording '{}'", replay_path), 1);
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                          std::istreambuf_iterator<char>());
    if (in.bad()) return fail(fmt::format("reading recording '{}' failed", replay_path), 1);
    if (const sightline::Status s = sightline::sim::replay_report(bytes, replay_path, pair, stdout); !s) {
      return fail(s.message(), 1);
    }
    return 0;
  }
  if (why_opt->count() != 0) return fail("--why needs --replay FILE: it asks about a recording");
  if (record_opt->count() != 0) {
    if (const CLI::Option* opt =
            first_given({scenario_opt, no_interest_opt, budget_opt, entry_opt, latency_opt, loss_opt,
                         events_opt, whole_state_opt, deltas_opt})) {
      return fail(
          fmt::format("{} cannot be used with --record: only a plain run (with --trace, --tiers or "
                      "--drill, say) records its World",
                      opt->get_name()));
    }
  }

  if (scenario_opt->count() != 0) {
    if (const CLI::Option* opt = first_given(
            {json_opt, trace_opt, write_trace_opt, no_interest_opt, drill_opt, tiers_opt, leave_opt,
             budget_opt, entry_opt, latency_opt, loss_opt, events_opt, whole_state_opt, deltas_opt})) {
      return fail(
          fmt::format("{} cannot be used with --scenario {}: the scenario runs its own rows and "
                      "prints one table",
                      opt->get_name(), scenario));
    }
  }
  if (drill_opt->count() != 0) {
    if (radius_opt->count() != 0)
      return fail("--radius cannot be used with --drill: the drill gives the radius");
    if (no_interest) return fail("--drill cannot be used with --no-interest");
    if (!std::isfinite(drill) || drill <= 0.0f) return fail(fmt::format("--drill is {}: must be > 0", drill));
    radius = drill;
  }
  if (!std::isfinite(radius) || radius <= 0.0f)
    return fail(fmt::format("--radius is {}: must be > 0", radius));
  if (leave_opt->count() == 0) leave = radius;
  if (!std::isfinite(leave) || leave < radius) {
    return fail(fmt::format("--leave is {}: must be finite and >= --radius ({})", leave, radius));
  }
  if (no_interest) {
    if (const CLI::Option* opt = first_given({radius_opt, leave_opt, tiers_opt})) {
      return fail(
          fmt::format("{} has no effect with --no-interest: no interest management runs", opt->get_name()));
    }
  }
  if (!std::isfinite(hz) || hz <= 0.0f) return fail(fmt::format("--hz is {}: must be > 0", hz));

  std::optional<sightline::sim::Trace> trace;
  sightline::scenarios::JitterWalkDef walk = defaults;
  std::uint64_t ticks = 0;
  if (!trace_path.empty()) {
    if (const CLI::Option* opt = first_given({entities_opt, world_opt, seconds_opt, seed_opt, speed_opt})) {
      return fail(
          fmt::format("{} cannot be used with --trace: the trace gives the entities, positions and "
                      "ticks",
                      opt->get_name()));
    }
    std::ifstream in(trace_path, std::ios::binary);
    if (!in) return fail(fmt::format("cannot open trace '{}'", trace_path), 1);
    sightline::sim::TraceParse parsed = sightline::sim::parse_trace(in);
    if (!parsed.ok()) return fail(fmt::format("{}: {}", trace_path, parsed.error.to_string()), 1);
    trace = std::move(parsed.trace);
    entities = trace->entities;
    ticks = trace->ticks;
  } else {
    if (entities == 0) return fail("--entities is 0: must be >= 1");
    const auto size = parse_world(world);
    if (!size) return fail(fmt::format("--world is '{}': expected WxH with W, H > 0, e.g. 12x7.5", world));
    if (!std::isfinite(seconds) || seconds <= 0.0f) {
      return fail(fmt::format("--seconds is {}: must be > 0", seconds));
    }
    const double tick_count = std::round(static_cast<double>(seconds) * static_cast<double>(hz));
    if (tick_count < 1.0 || tick_count > 1e9) {
      return fail(
          fmt::format("--seconds {} at --hz {} gives {} ticks: must be 1..1e9", seconds, hz, tick_count));
    }
    ticks = static_cast<std::uint64_t>(tick_count);
    walk.entities = entities;
    walk.width = size->first;
    walk.height = size->second;
    walk.hz = hz;
    walk.seed = seed;
    if (!std::isfinite(speed) || speed < 0.0f) return fail(fmt::format("--speed is {}: must be >= 0", speed));
    walk.speed = speed;
  }
  if (clients_opt->count() == 0) clients = entities;
  if (clients > entities) {
    return fail(fmt::format("--clients is {}: must be <= the number of entities ({})", clients, entities));
  }

  sightline::sim::PositionSource source;
  if (trace) {
    source = [&trace](std::uint64_t tick, std::span<float> xs, std::span<float> zs) {
      const auto tx = trace->tick_xs(tick);
      const auto tz = trace->tick_zs(tick);
      std::copy(tx.begin(), tx.end(), xs.begin());
      std::copy(tz.begin(), tz.end(), zs.begin());
    };
  } else {
    source = walk_source(walk);
  }
  std::ofstream out;
  if (!write_trace_path.empty()) {
    out.open(write_trace_path, std::ios::binary | std::ios::trunc);
    if (!out) return fail(fmt::format("cannot write trace '{}'", write_trace_path), 1);
    sightline::sim::write_trace_header(out);
    source = [inner = std::move(source), &out](std::uint64_t tick, std::span<float> xs, std::span<float> zs) {
      inner(tick, xs, zs);
      sightline::sim::write_trace_tick(out, tick, xs, zs);
    };
  }

  if (!scenario.empty()) {
    const auto specs = sightline::sim::rule_cost_rows(radius, clients, ticks);
    std::vector<sightline::sim::ReportRow> rows;
    ProgressBar bar(ticks * specs.size());
    for (const auto& spec : specs) {
      auto totals = sightline::sim::run(spec.config, entities, ticks, walk_source(walk),
                                        [&bar](std::uint64_t) { bar.advance(); });
      if (!totals.ok()) return fail(fmt::format("{}: {}", spec.name, totals.status().message()), 1);
      rows.push_back({spec, totals.value()});
    }
    bar.finish();
    const sightline::sim::ReportScenario about{
        entities, walk.width, walk.height, radius, hz, static_cast<float>(static_cast<double>(ticks) / hz),
        walk.seed};
    fmt::print("{}", sightline::sim::format_rule_costs(about, rows));
    return 0;
  }

  const bool bandwidth = budget_opt->count() + entry_opt->count() + latency_opt->count() + loss_opt->count() +
                             events_opt->count() + whole_state_opt->count() + deltas_opt->count() !=
                         0;
  if (bandwidth) {
    if (no_interest || drill_opt->count() != 0)
      return fail(
          "--budget, --entry-budget, --latency, --loss, --events, --whole-state and --deltas need interest "
          "management: not with --no-interest or --drill");
    if (budget < sightline::kStateHeaderBytes + 16)
      return fail(fmt::format("--budget is {}: must be >= {} (a packet header and a record)", budget,
                              sightline::kStateHeaderBytes + 16));
    if (entry_budget < 1) return fail("--entry-budget is 0: must be >= 1");
    if (!std::isfinite(latency_ms) || latency_ms < 0.0f || latency_ms > 10000.0f) {
      return fail(fmt::format("--latency is {}: must be in [0, 10000] ms", latency_ms));
    }
    if (!std::isfinite(loss_percent) || loss_percent < 0.0f || loss_percent > 100.0f) {
      return fail(fmt::format("--loss is {}: must be in [0, 100] percent", loss_percent));
    }
    if (!std::isfinite(events_per_second) || events_per_second < 0.0f || events_per_second > 100000.0f) {
      return fail(fmt::format("--events is {}: must be in [0, 100000] a second", events_per_second));
    }
    sightline::sim::BandwidthConfig bw;
    bw.enter_radius = radius;
    bw.leave_radius = leave;
    bw.tiers = tiers;
    bw.clients = clients;
    bw.hz = hz;
    bw.budget = budget;
    bw.entry_budget = entry_budget;
    bw.latency_ms = latency_ms;
    bw.loss_percent = loss_percent;
    bw.seed = seed;
    bw.events_per_second = events_per_second;
    bw.whole_state = whole_state;
    bw.delta_updates = deltas;
    ProgressBar bar(ticks);
    auto totals =
        sightline::sim::run_bandwidth(bw, entities, ticks, source, [&bar](std::uint64_t) { bar.advance(); });
    bar.finish();
    if (!totals.ok()) return fail(totals.status().message(), 1);
    if (out.is_open()) out.close();
    if (json) {
      fmt::print("{}\n", bandwidth_json(totals.value(), bw, speed).dump(2));
    } else {
      print_bandwidth(totals.value(), bw, speed);
    }
    return 0;
  }

  sightline::sim::RunConfig config;
  config.enter_radius = radius;
  config.leave_radius = leave;
  config.tiers = tiers;
  config.no_interest = no_interest;
  config.clients = clients;
  std::optional<Totals> unculled;
  if (drill_opt->count() != 0) {
    // The same positions twice: the space as it is set (culling off), then under the drill.
    sightline::sim::RunConfig off = config;
    off.culling_off = true;
    sightline::sim::PositionSource off_source = walk_source(walk);
    if (trace) {
      off_source = [&trace](std::uint64_t tick, std::span<float> xs, std::span<float> zs) {
        std::copy(trace->tick_xs(tick).begin(), trace->tick_xs(tick).end(), xs.begin());
        std::copy(trace->tick_zs(tick).begin(), trace->tick_zs(tick).end(), zs.begin());
      };
    }
    auto off_totals = sightline::sim::run(off, entities, ticks, off_source);
    if (!off_totals.ok()) return fail(off_totals.status().message(), 1);
    unculled = off_totals.value();
    config.drill = true;
  }
  RecordingFile recording;
  if (!record_path.empty()) {
    recording.file = std::fopen(record_path.c_str(), "wb");
    if (recording.file == nullptr) return fail(fmt::format("cannot write recording '{}'", record_path), 1);
    config.recording = {&RecordingFile::write, &recording};
  }
  ProgressBar bar(ticks);
  auto totals =
      sightline::sim::run(config, entities, ticks, source, [&bar](std::uint64_t) { bar.advance(); });
  bar.finish();
  if (!totals.ok()) return fail(totals.status().message(), 1);
  if (recording.file != nullptr && !recording.close()) {
    return fail(fmt::format("writing recording '{}' failed", record_path), 1);
  }
  if (out.is_open()) {
    out.close();
    if (!out) return fail(fmt::format("writing trace '{}' failed", write_trace_path), 1);
  }
  if (unculled) {
    if (json) {
      nlohmann::ordered_json both;
      both["culling_off"] = totals_json(*unculled, hz);
      both["drill"] = totals_json(totals.value(), hz);
      fmt::print("{}\n", both.dump(2));
    } else {
      fmt::print("culling off (the space's setting): {} messages/s\n",
                 sightline::sim::grouped(static_cast<double>(unculled->messages) /
                                         (static_cast<double>(ticks) / hz)));
      fmt::print("culling drill at R = {:g}, L = {:g}:\n", radius, leave);
      print_summary(totals.value(), hz);
    }
  } else if (json) {
    fmt::print("{}\n", totals_json(totals.value(), hz).dump(2));
  } else {
    print_summary(totals.value(), hz);
  }
  return 0;
}
