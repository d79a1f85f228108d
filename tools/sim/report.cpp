#include "report.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <numbers>
#include <string_view>

namespace sightline::sim {

namespace {

// Seed 000's published figures for each row ("" where the seed gives none).
struct ReferenceFigures {
  std::string_view messages;
  std::string_view updates;
  std::string_view spawns_despawns;
  std::string_view tests;
  std::string_view updates_change;
  std::string_view spawns_despawns_change;
};

constexpr std::array<ReferenceFigures, 6> kReference = {{
    {"285,600", "285,600", "0", "", "", ""},
    {"", "~24,300", "1,387", "", "", ""},
    {"", "", "", "", "+9%", "-23%"},
    {"", "~29,900", "712", "~4,600", "+23%", "-49%"},
    {"", "", "", "", "+47%", "-65%"},
    {"", "", "", "", "-39%", ""},
}};

std::string change(double value, double baseline) {
  if (baseline == 0.0) return "";
  return fmt::format("{:+.1f}%", (value / baseline - 1.0) * 100.0);
}

std::string or_dash(std::string_view s) { return s.empty() ? std::string("-") : std::string(s); }

}  // namespace

std::string grouped(double value) {
  const bool negative = value < 0.0;
  const auto whole = static_cast<unsigned long long>(std::llround(std::fabs(value)));
  std::string digits = fmt::format("{}", whole);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return negative ? "-" + out : out;
}

std::vector<ReportRowSpec> reference_rows(float enter_radius, std::uint32_t clients) {
  auto row = [&](std::string name, float leave_factor, bool tiers, bool no_interest) {
    ReportRowSpec spec;
    spec.name = std::move(name);
    spec.config.enter_radius = enter_radius;
    spec.config.leave_radius = leave_factor * enter_radius;
    spec.config.tiers = tiers;
    spec.config.no_interest = no_interest;
    spec.config.clients = clients;
    return spec;
  };
  return {row("send everything", 1.0f, false, true),      row("one radius (L = R)", 1.0f, false, false),
          row("hysteresis L = 1.1R", 1.1f, false, false), row("hysteresis L = 1.25R", 1.25f, false, false),
          row("hysteresis L = 1.5R", 1.5f, false, false), row("one radius + tiers", 1.0f, true, false)};
}

std::string format_report(const ReportScenario& scenario, const std::vector<ReportRow>& rows) {
  const double seconds = rows.empty() ? 0.0 : static_cast<double>(rows[0].totals.ticks) / scenario.hz;
  auto rate = [&](std::uint64_t total) { return static_cast<double>(total) / seconds; };
  auto per_tick = [](const Totals& t) {
    return static_cast<double>(t.distance_tests) / static_cast<double>(t.ticks);
  };

  std::string out = fmt::format(
      "Sightline reference run: {} entities (all clients), world {:g} x {:g}, R = {:g}, {:g} Hz, {:g} s "
      "({} ticks), jittering walk seed {}\n\n",
      scenario.entities, scenario.width, scenario.height, scenario.enter_radius, scenario.hz,
      scenario.seconds, rows.empty() ? 0 : rows[0].totals.ticks, scenario.seed);

  constexpr std::string_view kRow =
      "{:<21} {:>10} {:>10} {:>10} {:>10} {:>9} {:>9} | {:>10} {:>9} {:>9} {:>10} {:>9} {:>9}\n";
  out += fmt::format("{:<21} {:-^64} | {:-^62}\n", "", " this run ", " reference, seed 000 ");
  out += fmt::format(kRow, "", "messages/s", "updates/s", "sp+desp/s", "tests/tick", "upd vs 1R", "s+d vs 1R",
                     "messages/s", "updates/s", "sp+desp/s", "tests/tick", "upd vs 1R", "s+d vs 1R");
  const Totals* baseline = rows.size() > 1 ? &rows[1].totals : nullptr;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Totals& t = rows[i].totals;
    const bool is_baseline = i == 1;
    const bool no_interest = rows[i].spec.config.no_interest;
    std::string updates_change;
    std::string spawns_change;
    if (baseline != nullptr && !is_baseline && !no_interest) {
      updates_change = change(static_cast<double>(t.updates), static_cast<double>(baseline->updates));
      spawns_change = change(static_cast<double>(t.spawns + t.despawns),
                             static_cast<double>(baseline->spawns + baseline->despawns));
    }
    const ReferenceFigures& ref = i < kReference.size() ? kReference[i] : kReference[0];
    out += fmt::format(kRow, rows[i].spec.name, grouped(rate(t.messages)), grouped(rate(t.updates)),
                       grouped(rate(t.spawns + t.despawns)), grouped(per_tick(t)), or_dash(updates_change),
                       or_dash(spawns_change), or_dash(ref.messages), or_dash(ref.updates),
                       or_dash(ref.spawns_despawns), or_dash(ref.tests), or_dash(ref.updates_change),
                       or_dash(ref.spawns_despawns_change));
  }

  if (rows.size() >= 6) {
    const Totals& all = rows[0].totals;
    const Totals& one = rows[1].totals;
    const Totals& hyst = rows[3].totals;
    const Totals& tiered = rows[5].totals;
    const double area = static_cast<double>(scenario.width) * static_cast<double>(scenario.height);
    const double r = scenario.enter_radius;
    out += "\n";
    out += fmt::format(
        "spawns+despawns in {:g} s: one radius {} (reference 83,198), L = 1.25R {} (reference 42,716)\n",
        seconds, grouped(static_cast<double>(one.spawns + one.despawns)),
        grouped(static_cast<double>(hyst.spawns + hyst.despawns)));
    out +=
        fmt::format("one-radius updates / send everything: {:.1f}% (reference 8.5%; pi R^2 / A = {:.1f}%)\n",
                    100.0 * static_cast<double>(one.updates) / static_cast<double>(all.updates),
                    100.0 * std::numbers::pi * r * r / area);
    out += fmt::format("tiers keep {:.0f}% of one-radius updates (reference 61%)\n",
                       100.0 * static_cast<double>(tiered.updates) / static_cast<double>(one.updates));
    out += fmt::format(
        "L = 1.25R: {} distance tests per tick; {} entities found in the scanned cells per tick, "
        "members and viewers included (reference ~4,600)\n",
        grouped(static_cast<double>(hyst.distance_tests) / static_cast<double>(hyst.ticks)),
        grouped(static_cast<double>(hyst.cell_candidates) / static_cast<double>(hyst.ticks)));
    out += fmt::format("brute force would test clients x entities = {} pairs per tick (reference 14,400)\n",
                       grouped(static_cast<double>(all.clients * all.entities)));
  }
  return out;
}

}  // namespace sightline::sim
