#include "server_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <nlohmann/json.hpp>

namespace sightline::demo {
namespace {

constexpr double kSmallestMs = 0.001;
constexpr double kGrowth = 1.01;

double upper_edge(std::size_t bucket) {
  return kSmallestMs * std::pow(kGrowth, static_cast<double>(bucket + 1));
}

}  // namespace

std::string StatusLine::next(ServerStats& stats, std::size_t connections, Clock::time_point now) {
  const double seconds = std::max(1e-9, std::chrono::duration<double>(now - last_).count());
  const double bytes_per_second = static_cast<double>(stats.bytes_out - last_bytes_) / seconds;
  const double frames_in_per_second = static_cast<double>(stats.frames_in - last_frames_in_) / seconds;
  last_ = now;
  last_bytes_ = stats.bytes_out;
  last_frames_in_ = stats.frames_in;
  char line[320];
  int used = std::snprintf(
      line, sizeof line,
      "%zu connections, %llu ticks (%llu skipped), tick p99 %.3f ms, %.1f kB/s out, %.1f frames/s in",
      connections, static_cast<unsigned long long>(stats.ticks),
      static_cast<unsigned long long>(stats.ticks_skipped), stats.tick_ms.percentile(0.99),
      bytes_per_second / 1000.0, frames_in_per_second);
  const auto room = [&] { return used > 0 && static_cast<std::size_t>(used) < sizeof line; };
  const auto at = [&] { return line + used; };
  const auto left = [&] { return sizeof line - static_cast<std::size_t>(used); };
  stats.heap_kb_now = heap_in_use_kb();
  if (const std::optional<std::int64_t> rss = resident_kb(); rss && room()) {
    used += std::snprintf(at(), left(), ", RSS %.1f MiB", static_cast<double>(*rss) / 1024.0);
  }
  if (stats.heap_kb_now && room()) {
    std::snprintf(at(), left(), ", heap %.1f MiB", static_cast<double>(*stats.heap_kb_now) / 1024.0);
  }
  return line;
}

void TickTimes::add(double ms) noexcept {
  std::size_t bucket = 0;
  if (ms > kSmallestMs) {
    const double index = std::floor(std::log(ms / kSmallestMs) / std::log(kGrowth));
    bucket = static_cast<std::size_t>(std::min(index, static_cast<double>(kBuckets - 1)));
  }
  ++buckets_[bucket];
  ++count_;
  max_ = std::max(max_, ms);
}

double TickTimes::percentile(double q) const noexcept {
  if (count_ == 0) return 0.0;
  const auto rank =
      static_cast<std::uint64_t>(std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(count_)));
  std::uint64_t seen = 0;
  for (std::size_t bucket = 0; bucket < kBuckets; ++bucket) {
    seen += buckets_[bucket];
    if (seen >= std::max<std::uint64_t>(rank, 1)) return std::min(upper_edge(bucket), max_);
  }
  return max_;
}

std::optional<std::int64_t> resident_kb() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      std::int64_t kb = 0;
      if (status >> kb) return kb;
      return std::nullopt;
    }
    status.ignore(1 << 12, '\n');
  }
  return std::nullopt;
}

std::optional<std::int64_t> heap_in_use_kb() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 info = mallinfo2();
  return static_cast<std::int64_t>((info.uordblks + info.hblkhd) / 1024);
#else
  return std::nullopt;
#endif
}

Status write_stats_json(const std::string& path, const ServerStats& stats) {
  nlohmann::ordered_json out;
  out["ticks"] = stats.ticks;
  out["ticks_skipped"] = stats.ticks_skipped;
  out["tick_ms_p50"] = stats.tick_ms.percentile(0.50);
  out["tick_ms_p99"] = stats.tick_ms.percentile(0.99);
  out["tick_ms_max"] = stats.tick_ms.max();
  out["world_ms_p50"] = stats.world_ms.percentile(0.50);
  out["world_ms_p99"] = stats.world_ms.percentile(0.99);
  out["send_ms_p50"] = stats.send_ms.percentile(0.50);
  out["send_ms_p99"] = stats.send_ms.percentile(0.99);
  out["io_threads"] = stats.io_threads;
  out["io_cpu_seconds"] = stats.io_cpu_seconds;
  out["connections_peak"] = stats.connections_peak;
  out["upgrades_full"] = stats.upgrades_full;
  out["upgrades_refused"] = stats.upgrades_refused;
  out["http_evicted"] = stats.http_evicted;
  out["http_requests"] = stats.http_requests;
  out["frames_in"] = stats.frames_in;
  out["frames_out"] = stats.frames_out;
  out["bytes_out"] = stats.bytes_out;
  out["rss_kb_start"] = stats.rss_kb_start ? nlohmann::ordered_json(*stats.rss_kb_start) : nullptr;
  out["rss_kb_after_warmup"] =
      stats.rss_kb_after_warmup ? nlohmann::ordered_json(*stats.rss_kb_after_warmup) : nullptr;
  out["rss_kb_end"] = stats.rss_kb_end ? nlohmann::ordered_json(*stats.rss_kb_end) : nullptr;
  out["heap_kb_start"] = stats.heap_kb_start ? nlohmann::ordered_json(*stats.heap_kb_start) : nullptr;
  out["heap_kb_after_warmup"] =
      stats.heap_kb_after_warmup ? nlohmann::ordered_json(*stats.heap_kb_after_warmup) : nullptr;
  out["heap_kb_end"] = stats.heap_kb_end ? nlohmann::ordered_json(*stats.heap_kb_end) : nullptr;
  out["closes"] = stats.closes;
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << out.dump(2) << '\n';
  file.close();
  if (!file) return {ErrorCode::invalid_argument, "stats_json is \"" + path + "\": cannot be written"};
  return {};
}

}  // namespace sightline::demo
