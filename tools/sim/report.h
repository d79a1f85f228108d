// The reference report: the default scenario under six interest settings, beside seed 000's figures.
#pragma once

#include <string>
#include <vector>

#include "run.h"

namespace sightline::sim {

/// One row of the report: what it runs.
struct ReportRowSpec {
  std::string name;
  RunConfig config;
};

/// One row of the report: what it measured.
struct ReportRow {
  ReportRowSpec spec;
  Totals totals;
};

/// The six rows, in order: send everything, one radius (L = R), L = 1.1R, 1.25R, 1.5R, and one
/// radius with default_distance_tiers(). The one-radius row is the baseline of the changes.
[[nodiscard]] std::vector<ReportRowSpec> reference_rows(float enter_radius, std::uint32_t clients);

/// What the report says about the scenario, for its title.
struct ReportScenario {
  std::uint32_t entities = 0;
  float width = 0.0f;
  float height = 0.0f;
  float enter_radius = 0.0f;
  float hz = 0.0f;
  float seconds = 0.0f;
  unsigned long long seed = 0;
};

/// The aligned table (ours beside the reference) and the notes under it, ending in a newline.
[[nodiscard]] std::string format_report(const ReportScenario& scenario, const std::vector<ReportRow>& rows);

/// 1234567 -> "1,234,567" (rounded to the nearest integer).
[[nodiscard]] std::string grouped(double value);

}  // namespace sightline::sim
