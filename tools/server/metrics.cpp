#include "metrics.h"

#include <charconv>

namespace sightline::demo {
namespace {

// A sample value as Prometheus reads it: the shortest text that reads back as the same double.
std::string value_text(double v) {
  char text[40];
  const std::to_chars_result r = std::to_chars(text, text + sizeof text, v);
  return std::string(text, r.ptr);
}

void header(std::string& out, const char* name, const char* type, const char* help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void sample(std::string& out, const std::string& name, const std::string& labels, double v) {
  out += name;
  if (!labels.empty()) out += "{" + labels + "}";
  out += ' ';
  out += value_text(v);
  out += '\n';
}

void single(std::string& out, const char* name, const char* type, const char* help, double v) {
  header(out, name, type, help);
  sample(out, name, {}, v);
}

// Label values as the format escapes them: backslash, double quote and newline.
std::string escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    out += c == '\n' ? 'n' : c;
  }
  return out;
}

}  // namespace

void SecondsHistogram::observe(double seconds) noexcept {
  for (std::size_t i = 0; i < kBounds.size(); ++i) {
    if (seconds <= kBounds[i]) {
      ++buckets_[i];
      break;
    }
  }
  ++count_;
  sum_ += seconds;
}

void SecondsHistogram::write(std::string& out, const char* name, const std::string& labels) const {
  const std::string prefix = labels.empty() ? std::string() : labels + ",";
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < kBounds.size(); ++i) {
    cumulative += buckets_[i];
    sample(out, std::string(name) + "_bucket", prefix + "le=\"" + value_text(kBounds[i]) + "\"",
           static_cast<double>(cumulative));
  }
  sample(out, std::string(name) + "_bucket", prefix + "le=\"+Inf\"", static_cast<double>(count_));
  sample(out, std::string(name) + "_sum", labels, sum_);
  sample(out, std::string(name) + "_count", labels, static_cast<double>(count_));
}

void TickMetrics::observe(double tick_seconds, const GameStats& game) noexcept {
  tick_.observe(tick_seconds);
  const TickTimings& p = game.last_phases;
  const std::array<std::uint64_t, kPhases.size()> ns = {p.spaces_ns, p.index_ns,   p.relevance_ns,
                                                        p.events_ns, p.release_ns, game.last_send_ns};
  for (std::size_t i = 0; i < ns.size(); ++i) phases_[i].observe(static_cast<double>(ns[i]) * 1e-9);
}

std::string prometheus_text(const ServerStats& server, const GameStats& game, const TickMetrics& ticks,
                            std::size_t connections) {
  std::string out;
  header(out, "sightline_tick_seconds", "histogram", "Wall time of a server tick, frames included.");
  ticks.ticks().write(out, "sightline_tick_seconds", {});
  header(out, "sightline_tick_phase_seconds", "histogram",
         "Wall time of each phase of a tick, summed over the server's Worlds.");
  for (std::size_t i = 0; i < TickMetrics::kPhases.size(); ++i) {
    ticks.phase(i).write(out, "sightline_tick_phase_seconds",
                         std::string("phase=\"") + TickMetrics::kPhases[i] + "\"");
  }
  single(out, "sightline_ticks_total", "counter", "Ticks run.", static_cast<double>(server.ticks));
  single(out, "sightline_ticks_skipped_total", "counter",
         "Ticks skipped by a server more than a tick behind.", static_cast<double>(server.ticks_skipped));
  single(out, "sightline_connections", "gauge", "Open connections.", static_cast<double>(connections));
  single(out, "sightline_connections_peak", "gauge", "Most connections open at once.",
         static_cast<double>(server.connections_peak));
  single(out, "sightline_entities", "gauge", "Walkers and viewers.", static_cast<double>(game.entities));
  single(out, "sightline_frames_in_total", "counter", "Client frames received.",
         static_cast<double>(server.frames_in));
  single(out, "sightline_frames_out_total", "counter", "Frames sent to clients.",
         static_cast<double>(server.frames_out));
  single(out, "sightline_bytes_out_total", "counter", "Bytes of the frames sent to clients.",
         static_cast<double>(server.bytes_out));
  single(out, "sightline_messages_total", "counter", "Server messages queued for every connection.",
         static_cast<double>(game.messages));
  single(out, "sightline_spawns_total", "counter", "Spawn records of every World's ticks.",
         static_cast<double>(game.spawns));
  single(out, "sightline_updates_total", "counter", "Update records of every World's ticks.",
         static_cast<double>(game.updates));
  single(out, "sightline_despawns_total", "counter", "Despawn records of every World's ticks.",
         static_cast<double>(game.despawns));
  single(out, "sightline_pending", "gauge", "Members waiting for their spawn after the last send.",
         static_cast<double>(game.pending));
  header(out, "sightline_closes_total", "counter", "Connections closed, by reason.");
  for (const auto& [reason, count] : server.closes) {
    sample(out, "sightline_closes_total", "reason=\"" + escaped(reason) + "\"", static_cast<double>(count));
  }
  if (const std::optional<std::int64_t> rss = resident_kb()) {
    single(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
           static_cast<double>(*rss) * 1024.0);
  }
  if (server.heap_kb_now) {
    single(
        out, "process_heap_in_use_bytes", "gauge",
        "Heap handed out by the allocator and not freed, in bytes, as of the last status line (every 5 s).",
        static_cast<double>(*server.heap_kb_now) * 1024.0);
  }
  return out;
}

}  // namespace sightline::demo
