#include "summary_reporter.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

namespace {

// Ten significant digits: more than the table prints, so its rounded columns can be recomputed.
std::string number(std::optional<double> value, const char* none) {
  if (!value || !std::isfinite(*value)) return none;
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.10g", *value);
  return buffer;
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (const char c : text) {
    out += c;
    if (c == '"') out += c;
  }
  return out + "\"";
}

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(c));
      out += buffer;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

void write_context(std::ostream& out) {
  const benchmark::CPUInfo& cpu = benchmark::CPUInfo::Get();
  const char* const executable = benchmark::BenchmarkReporter::Context::executable_name;
  out << "  \"context\": {\n"
      << "    \"date\": " << json_string(utc_now()) << ",\n"
      << "    \"host_name\": " << json_string(benchmark::SystemInfo::Get().name) << ",\n"
      << "    \"executable\": " << json_string(executable != nullptr ? executable : "") << ",\n"
      << "    \"num_cpus\": " << cpu.num_cpus << ",\n"
      << "    \"mhz_per_cpu\": " << number(cpu.cycles_per_second / 1e6, "null") << ",\n"
      << "    \"cpu_scaling_enabled\": "
      << (cpu.scaling == benchmark::CPUInfo::UNKNOWN   ? "null"
          : cpu.scaling == benchmark::CPUInfo::ENABLED ? "true"
                                                       : "false")
      << ",\n    \"caches\": [";
  for (std::size_t i = 0; i < cpu.caches.size(); ++i) {
    const benchmark::CPUInfo::CacheInfo& cache = cpu.caches[i];
    out << (i == 0 ? "\n" : ",\n") << "      {\"type\": " << json_string(cache.type)
        << ", \"level\": " << cache.level << ", \"size\": " << cache.size
        << ", \"num_sharing\": " << cache.num_sharing << "}";
  }
  out << "\n    ],\n    \"load_avg\": [";
  for (std::size_t i = 0; i < cpu.load_avg.size(); ++i) {
    out << (i == 0 ? "" : ", ") << number(cpu.load_avg[i], "null");
  }
  out << "]\n  }";
}

}  // namespace

void write_csv(std::ostream& out, std::span<const TableRow> rows) {
  if (rows.empty()) return;
  // Rows of different tables have different keys: the columns are every key, in the order first
  // met, and a row without one leaves its field empty.
  std::vector<std::string> keys;
  for (const TableRow& row : rows) {
    for (const Number& n : row.numbers) {
      if (std::find(keys.begin(), keys.end(), n.key) == keys.end()) keys.push_back(n.key);
    }
  }
  out << "scenario";
  for (const std::string& key : keys) out << ',' << key;
  out << ",error\n";
  for (const TableRow& row : rows) {
    out << csv_field(row.scenario);
    for (const std::string& key : keys) {
      const auto n = std::find_if(row.numbers.begin(), row.numbers.end(),
                                  [&](const Number& number) { return number.key == key; });
      out << ',' << (n == row.numbers.end() ? std::string() : number(n->value, ""));
    }
    out << ',' << csv_field(row.error) << '\n';
  }
}

void write_json(std::ostream& out, std::span<const TableRow> rows) {
  out << "{\n";
  write_context(out);
  out << ",\n  \"rows\": [";
  for (std::size_t r = 0; r < rows.size(); ++r) {
    out << (r == 0 ? "\n" : ",\n") << "    {\"scenario\": " << json_string(rows[r].scenario);
    for (const Number& n : rows[r].numbers)
      out << ", " << json_string(n.key) << ": " << number(n.value, "null");
    out << ", \"error\": " << (rows[r].error.empty() ? "null" : json_string(rows[r].error)) << "}";
  }
  out << "\n  ]\n}\n";
}

}  // namespace sightline::bench
