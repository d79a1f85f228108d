// The relevance scenario: the default walk with one rule added per row, and what each costs.
#pragma once

#include <string>
#include <vector>

#include "report.h"
#include "run.h"

namespace sightline::sim {

/// The rows, cumulative, in order: radius only (L = 1.25 R); + team markers (2 teams, 4
/// markers each, held by teammates at any distance); + a boss turning always relevant half way;
/// + carried items (every 4th client's viewer carries one); + owned drones parked far away;
/// + walls that block sight.
[[nodiscard]] std::vector<ReportRowSpec> rule_cost_rows(float enter_radius, std::uint32_t clients,
                                                        std::uint64_t ticks);

/// The table: per row, messages/s, updates/s, spawns+despawns/s and what the row's rule added.
[[nodiscard]] std::string format_rule_costs(const ReportScenario& scenario,
                                            const std::vector<ReportRow>& rows);

}  // namespace sightline::sim
