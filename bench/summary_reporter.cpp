#include "summary_reporter.h"

#include <utility>

namespace sightline::bench {

CollectingReporter::CollectingReporter(std::unique_ptr<benchmark::BenchmarkReporter> display)
    : display_(std::move(display)) {}

bool CollectingReporter::ReportContext(const Context& context) { return display_->ReportContext(context); }

void CollectingReporter::ReportRuns(const std::vector<Run>& runs) {
  for (const Run& run : runs) {
    const std::string& name = run.run_name.function_name;
    if (run.error_occurred) {
      ++errors_;
      results_[name] = run;
      continue;
    }
    const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
    const bool single = run.run_type == Run::RT_Iteration && run.repetitions <= 1;
    if (median || single) results_[name] = run;
  }
  display_->ReportRuns(runs);
}

void CollectingReporter::Finalize() { display_->Finalize(); }

const CollectingReporter::Run* CollectingReporter::find(const std::string& name) const {
  const auto it = results_.find(name);
  return it == results_.end() ? nullptr : &it->second;
}

double real_ns(const benchmark::BenchmarkReporter::Run& run) {
  return run.GetAdjustedRealTime() * 1e9 / benchmark::GetTimeUnitMultiplier(run.time_unit);
}

double counter(const benchmark::BenchmarkReporter::Run& run, const std::string& name) {
  const auto it = run.counters.find(name);
  return it == run.counters.end() ? 0.0 : it->second.value;
}

}  // namespace sightline::bench
