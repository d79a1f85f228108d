// A reporter that passes every run on to the usual console (or JSON) reporter and keeps the
// results, so the summary table is built from this run's measurements.
#pragma once

#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

namespace sightline::bench {

class CollectingReporter : public benchmark::BenchmarkReporter {
 public:
  explicit CollectingReporter(std::unique_ptr<benchmark::BenchmarkReporter> display);

  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;

  /// The result of the benchmark registered as `name`: the median over repetitions when there
  /// were several, otherwise its single run. Null when it did not run (filtered out).
  [[nodiscard]] const Run* find(const std::string& name) const;
  /// Number of benchmarks that ended with an error (SkipWithError).
  [[nodiscard]] int errors() const noexcept { return errors_; }

 private:
  std::unique_ptr<benchmark::BenchmarkReporter> display_;
  std::map<std::string, Run> results_;
  int errors_ = 0;
};

/// A result's wall-clock time per iteration, in nanoseconds.
[[nodiscard]] double real_ns(const benchmark::BenchmarkReporter::Run& run);
/// A user counter of a result, or 0 when it has none of that name.
[[nodiscard]] double counter(const benchmark::BenchmarkReporter::Run& run, const std::string& name);

/// One number of a printed table, under its CSV and JSON key; empty when its benchmark did not
/// run (filtered out) or failed.
struct Number {
  const char* key;
  std::optional<double> value;
};

/// One line of a printed table: its scenario, its numbers (the same keys on every row), and the
/// error that replaced them, if any.
struct TableRow {
  std::string scenario;
  std::vector<Number> numbers;
  std::string error;
};

/// A header line (scenario, the keys, error), then one line per row; an empty value is an empty
/// field.
void write_csv(std::ostream& out, std::span<const TableRow> rows);
/// One JSON object: "context", the machine as Google Benchmark reports it (CPUInfo, SystemInfo)
/// with the date, and "rows", one object per row whose empty values are null.
void write_json(std::ostream& out, std::span<const TableRow> rows);

}  // namespace sightline::bench
