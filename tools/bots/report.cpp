#include "report.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace sightline::bots {
namespace {

void add(BotTotals& sum, const BotTotals& t) {
  sum.frames += t.frames;
  sum.bytes += t.bytes;
  sum.ticks += t.ticks;
  sum.packets += t.packets;
  sum.resets += t.resets;
  sum.moves += t.moves;
  sum.spawns += t.spawns;
  sum.updates += t.updates;
  sum.despawns += t.despawns;
  sum.checked += t.checked;
  sum.acks += t.acks;
  sum.radius_changes += t.radius_changes;
  sum.set_checks += t.set_checks;
  for (std::size_t k = 0; k < kProblemKinds; ++k) sum.problems[k] += t.problems[k];
}

template <class Rate>
Spread spread(const RunResult& result, Rate rate) {
  Spread s;
  std::size_t n = 0;
  for (const BotRun& run : result.bots) {
    if (run.outcome == Outcome::failed || run.connected_seconds <= 0.0) continue;
    const double v = rate(run.totals) / run.connected_seconds;
    s.min = n == 0 ? v : std::min(s.min, v);
    s.max = n == 0 ? v : std::max(s.max, v);
    s.mean += v;
    ++n;
  }
  if (n > 0) s.mean /= static_cast<double>(n);
  return s;
}

nlohmann::json to_json(const Spread& s) { return {{"mean", s.mean}, {"min", s.min}, {"max", s.max}}; }

}  // namespace

Summary summarize(const RunResult& result, const RunDef& def) {
  Summary s;
  s.bots = static_cast<std::uint32_t>(result.bots.size());
  s.wall_seconds = result.wall_seconds;
  s.cpu_seconds = result.cpu_seconds;
  for (std::size_t i = 0; i < result.bots.size(); ++i) {
    const BotRun& run = result.bots[i];
    ++s.outcomes[static_cast<std::size_t>(run.outcome)];
    add(s.totals, run.totals);
    if (run.outcome != Outcome::finished && s.failures.size() < Summary::kMaxLines) {
      s.failures.push_back(fmt::format("bot {}: {}: {}", i, outcome_name(run.outcome), run.error));
    }
    for (const std::string& note : run.notes) {
      if (s.notes.size() < Summary::kMaxLines) s.notes.push_back(fmt::format("bot {}: {}", i, note));
    }
    s.tick_rate = std::max(s.tick_rate, run.tick_rate);
  }
  for (const std::uint64_t n : s.totals.problems) s.problems += n;
  s.bytes_per_second = spread(result, [](const BotTotals& t) { return static_cast<double>(t.bytes); });
  s.frames_per_second = spread(result, [](const BotTotals& t) { return static_cast<double>(t.frames); });
  s.packets_per_second = spread(result, [](const BotTotals& t) { return static_cast<double>(t.packets); });
  s.delay_samples = result.delays.count();
  s.delay_p50_ms = result.delays.quantile(0.50);
  s.delay_p99_ms = result.delays.quantile(0.99);
  s.delay_max_ms = result.delays.max();
  s.delay_min_ms = result.delays.min();
  s.ticks_per_second = spread(result, [](const BotTotals& t) { return static_cast<double>(t.ticks); });

  const std::uint32_t finished = s.outcomes[static_cast<std::size_t>(Outcome::finished)];
  if (finished == 0 && !s.failures.empty()) {
    s.verdict.push_back(fmt::format("no bot ran to the end; the first: {}", s.failures.front()));
  } else if (finished != s.bots) {
    s.verdict.push_back(fmt::format("{} of {} bots did not run to the end", s.bots - finished, s.bots));
  }
  if (s.problems > 0) s.verdict.push_back(fmt::format("{} anomalies", s.problems));
  const double wanted = def.min_tick_share * s.tick_rate;
  if (finished > 0 && def.min_tick_share > 0.0 && s.ticks_per_second.min < wanted) {
    s.verdict.push_back(
        fmt::format("the slowest bot received {:.2f} tick frames/s, under {:.0f}% of the {} Hz tick rate",
                    s.ticks_per_second.min, 100.0 * def.min_tick_share, s.tick_rate));
  }
  if (s.delay_samples > 0 && s.delay_p99_ms >= def.max_delay_ms) {
    s.verdict.push_back(
        fmt::format("delivery delay p99 {:.1f} ms, not under {:.0f} ms", s.delay_p99_ms, def.max_delay_ms));
  }
  return s;
}

std::string format_table(const Summary& s) {
  std::string out;
  const auto row = [&out](const std::string& name, const std::string& value) {
    out += fmt::format("  {:<36} {:>28}\n", name, value);
  };
  const auto rate = [](const Spread& r, const char* unit) {
    return fmt::format("{:.1f} {} ({:.1f}..{:.1f})", r.mean, unit, r.min, r.max);
  };
  out += fmt::format("sightline-bots: {} bots, {:.1f} s\n", s.bots, s.wall_seconds);
  for (const std::string& line : s.verdict) out += "  FAIL: " + line + "\n";
  row("bots' CPU, % of one core",
      fmt::format("{:.0f}%", s.wall_seconds > 0.0 ? 100.0 * s.cpu_seconds / s.wall_seconds : 0.0));
  row("connections finished", std::to_string(s.outcomes[static_cast<std::size_t>(Outcome::finished)]));
  row("connections failed", std::to_string(s.outcomes[static_cast<std::size_t>(Outcome::failed)]));
  row("connections closed early", std::to_string(s.outcomes[static_cast<std::size_t>(Outcome::closed)]));
  row("connections hung", std::to_string(s.outcomes[static_cast<std::size_t>(Outcome::hung)]));
  row("bytes/s per client (mean, min..max)", rate(s.bytes_per_second, "B/s"));
  row("frames/s per client", rate(s.frames_per_second, "/s"));
  row("packets/s per client", rate(s.packets_per_second, "/s"));
  row("tick frames/s per client", rate(s.ticks_per_second, "/s"));
  row("server tick rate", fmt::format("{} Hz", s.tick_rate));
  row("tick frames, all clients", std::to_string(s.totals.ticks));
  row("spawns / updates / despawns",
      fmt::format("{} / {} / {}", s.totals.spawns, s.totals.updates, s.totals.despawns));
  row("resets", std::to_string(s.totals.resets));
  row("moves sent", std::to_string(s.totals.moves));
  row("held entities checked against L", std::to_string(s.totals.checked));
  row("acks sent", std::to_string(s.totals.acks));
  row("radius changes sent", std::to_string(s.totals.radius_changes));
  row("sets compared with the server's", std::to_string(s.totals.set_checks));
  row("delivery delay p50 / p99 / max",
      fmt::format("{:.2f} / {:.2f} / {:.2f} ms", s.delay_p50_ms, s.delay_p99_ms, s.delay_max_ms));
  row("delay samples (min)", fmt::format("{} ({:.2f} ms)", s.delay_samples, s.delay_min_ms));
  for (std::size_t k = 0; k < kProblemKinds; ++k) {
    row(fmt::format("anomalies: {}", problem_name(static_cast<Problem>(k))),
        std::to_string(s.totals.problems[k]));
  }
  row("anomalies, all kinds", std::to_string(s.problems));
  for (const std::string& line : s.failures) out += "  connection: " + line + "\n";
  for (const std::string& line : s.notes) out += "  anomaly: " + line + "\n";
  out += s.passed() ? "PASS\n" : "FAIL\n";
  return out;
}

std::string format_json(const Summary& s, const RunDef& def) {
  nlohmann::json anomalies = nlohmann::json::object();
  for (std::size_t k = 0; k < kProblemKinds; ++k) {
    anomalies[problem_name(static_cast<Problem>(k))] = s.totals.problems[k];
  }
  const auto outcome = [&s](Outcome o) { return s.outcomes[static_cast<std::size_t>(o)]; };
  const nlohmann::json j = {
      {"transport", def.transport},
      {"host", def.host},
      {"port", def.port},
      {"bots", s.bots},
      {"seconds", def.seconds},
      {"ramp_seconds", def.ramp_seconds},
      {"move_hz", def.move_hz},
      {"wall_seconds", s.wall_seconds},
      {"cpu_seconds", s.cpu_seconds},
      {"connections",
       {{"finished", outcome(Outcome::finished)},
        {"failed", outcome(Outcome::failed)},
        {"closed", outcome(Outcome::closed)},
        {"hung", outcome(Outcome::hung)}}},
      {"bytes_per_second_per_client", to_json(s.bytes_per_second)},
      {"frames_per_second_per_client", to_json(s.frames_per_second)},
      {"packets_per_second_per_client", to_json(s.packets_per_second)},
      {"ticks_per_second_per_client", to_json(s.ticks_per_second)},
      {"tick_rate", s.tick_rate},
      {"min_tick_share", def.min_tick_share},
      {"max_delay_ms", def.max_delay_ms},
      {"verdict", s.verdict},
      {"totals",
       {{"frames", s.totals.frames},
        {"bytes", s.totals.bytes},
        {"ticks", s.totals.ticks},
        {"packets", s.totals.packets},
        {"resets", s.totals.resets},
        {"moves", s.totals.moves},
        {"spawns", s.totals.spawns},
        {"updates", s.totals.updates},
        {"despawns", s.totals.despawns},
        {"checked", s.totals.checked},
        {"acks", s.totals.acks},
        {"radius_changes", s.totals.radius_changes},
        {"set_checks", s.totals.set_checks}}},
      {"delay_ms",
       {{"samples", s.delay_samples},
        {"p50", s.delay_p50_ms},
        {"p99", s.delay_p99_ms},
        {"max", s.delay_max_ms},
        {"min", s.delay_min_ms}}},
      {"anomalies", anomalies},
      {"anomaly_count", s.problems},
      {"failures", s.failures},
      {"notes", s.notes},
      {"passed", s.passed()},
  };
  return j.dump(2) + "\n";
}

}  // namespace sightline::bots
