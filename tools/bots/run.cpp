#include "run.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <cmath>

namespace sightline::bots {
namespace {

Status bad(const char* field, double value, const std::string& rule) {
  return {ErrorCode::invalid_argument, fmt::format("{} is {}: {}", field, value, rule)};
}

}  // namespace

Status validate(const RunDef& def) {
  const bool enet = def.transport == "enet";
  if (!enet && def.transport != "websocket") {
    return {ErrorCode::invalid_argument, "transport is \"" + def.transport + "\": must be websocket or enet"};
  }
  if (def.host.empty()) return {ErrorCode::invalid_argument, "host is empty"};
  if (def.port == 0) return bad("port", def.port, "must be in [1, 65535]");
  if (def.bots < 1 || def.bots > 10000) return bad("bots", def.bots, "must be in [1, 10000]");
  if (enet && def.bots > 4095)
    return bad("bots", def.bots, "must be in [1, 4095] over ENet (its peer limit)");
  if (!(def.seconds > 0.0 && def.seconds <= 3600.0))
    return bad("seconds", def.seconds, "must be in (0, 3600]");
  if (!(def.ramp_seconds >= 0.0 && def.ramp_seconds <= def.seconds / 2.0)) {
    return bad("ramp-seconds", def.ramp_seconds,
               fmt::format("must be in [0, seconds / 2 = {}]", def.seconds / 2.0));
  }
  if (!(def.move_hz > 0.0 && def.move_hz <= 30.0)) return bad("move-hz", def.move_hz, "must be in (0, 30]");
  if (!(def.speed >= 0.0 && def.speed <= 1000.0)) return bad("speed", def.speed, "must be in [0, 1000]");
  if (!(def.connect_timeout > 0.0 && def.connect_timeout <= 600.0)) {
    return bad("connect-timeout", def.connect_timeout, "must be in (0, 600]");
  }
  if (!(def.idle_timeout > 0.0 && def.idle_timeout <= 600.0)) {
    return bad("idle-timeout", def.idle_timeout, "must be in (0, 600]");
  }
  if (enet && def.radius_churn) {
    return {ErrorCode::invalid_argument, "radius-churn is on: the ENet bots do not churn (WebSocket only)"};
  }
  if (def.threads < 1 || def.threads > 64) return bad("threads", def.threads, "must be in [1, 64]");
  if (!(def.min_tick_share >= 0.0 && def.min_tick_share <= 1.0))
    return bad("min-tick-share", def.min_tick_share, "must be in [0, 1]");
  if (!(def.max_delay_ms > 0.0 && def.max_delay_ms <= 600000.0))
    return bad("max-delay-ms", def.max_delay_ms, "must be in (0, 600000]");
  if (!(def.grace_seconds > 0.0 && def.grace_seconds <= 600.0)) {
    return bad("grace-seconds", def.grace_seconds, "must be in (0, 600]");
  }
  return {};
}

double epoch_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds_of = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
  };
  return seconds_of(usage.ru_utime) + seconds_of(usage.ru_stime);
}

const char* outcome_name(Outcome outcome) noexcept {
  switch (outcome) {
    case Outcome::finished: return "finished";
    case Outcome::failed: return "failed";
    case Outcome::closed: return "closed";
    case Outcome::hung: return "hung";
  }
  return "unknown";
}

}  // namespace sightline::bots
