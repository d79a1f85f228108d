#include "rule_costs.h"

#include <fmt/format.h>

#include <cmath>

namespace sightline::sim {

std::vector<ReportRowSpec> rule_cost_rows(float enter_radius, std::uint32_t clients, std::uint64_t ticks) {
  RunConfig config;
  config.enter_radius = enter_radius;
  config.leave_radius = 1.25f * enter_radius;
  config.clients = clients;
  std::vector<ReportRowSpec> rows;
  rows.push_back({"radius only, L = 1.25R", config});
  config.teams = 2;
  config.team_markers = 4;
  rows.push_back({"+ team markers (2 x 4)", config});
  config.boss_from_tick = ticks / 2 == 0 ? 1 : ticks / 2;
  rows.push_back({"+ boss always relevant", config});
  config.carried_every = 4;
  rows.push_back({"+ carried items (1 in 4)", config});
  config.drones = true;
  rows.push_back({"+ an owned drone each", config});
  config.walls = true;
  rows.push_back({"+ walls block sight", config});
  return rows;
}

std::string format_rule_costs(const ReportScenario& scenario, const std::vector<ReportRow>& rows) {
  std::string out = fmt::format(
      "What each rule costs: {} entities walking in {:g} x {:g}, R = {:g}, {:g} Hz, {:g} s, seed {}.\n"
      "Rows are cumulative; 'added' is what the row's rule adds to the row above, in messages/s.\n\n",
      scenario.entities, scenario.width, scenario.height, scenario.enter_radius, scenario.hz,
      scenario.seconds, scenario.seed);
  constexpr auto kRow = "{:<26} {:>12} {:>12} {:>16} {:>12}\n";
  out += fmt::format(kRow, "rules", "messages/s", "updates/s", "spawns+desp./s", "added");
  const double seconds = scenario.seconds;
  double previous = 0.0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Totals& t = rows[i].totals;
    const double messages = static_cast<double>(t.messages) / seconds;
    const std::string added = i == 0 ? std::string("-")
                                     : fmt::format("{}{}", messages >= previous ? '+' : '-',
                                                   grouped(std::abs(messages - previous)));
    out += fmt::format(kRow, rows[i].spec.name, grouped(messages),
                       grouped(static_cast<double>(t.updates) / seconds),
                       grouped(static_cast<double>(t.spawns + t.despawns) / seconds), added);
    previous = messages;
  }
  out +=
      "\nTeam markers are held by teammates only, at any distance (a user key with bypass_distance);\n"
      "the boss is held by every client from the middle of the run on; a carried item arrives and\n"
      "leaves with its carrier; a drone is held by its owner wherever it is. Walls (one R long, every\n"
      "2 R) take what stands behind them out of the near rule after a hold of 10 ticks.\n";
  return out;
}

}  // namespace sightline::sim
