#include "trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <istream>
#include <iterator>
#include <limits>
#include <ostream>
#include <sstream>
#include <utility>

#include "sightline/world_def.h"

namespace sightline::sim {

namespace {

constexpr std::size_t kFields = 4;
constexpr std::array<std::string_view, kFields> kHeader = {"tick", "id", "x", "y"};
constexpr std::uint64_t kMaxEntities = std::numeric_limits<std::uint32_t>::max();

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Text quoted for a message, cut short so a huge field cannot flood the terminal.
std::string quoted(std::string_view s) {
  constexpr std::size_t kMax = 40;
  std::string out = "'";
  for (const char c : s.substr(0, kMax)) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  if (s.size() > kMax) out += "...";
  out += "'";
  return out;
}

// Splits on commas; returns the number of fields found (fills at most kFields).
std::size_t split(std::string_view line, std::array<std::string_view, kFields>& fields) {
  std::size_t count = 0;
  while (true) {
    const std::size_t comma = line.find(',');
    const std::string_view field = line.substr(0, comma);
    if (count < kFields) fields[count] = trim(field);
    ++count;
    if (comma == std::string_view::npos) return count;
    line.remove_prefix(comma + 1);
  }
}

// Empty string when ok, else what is wrong.
std::string parse_index(std::string_view field, std::string_view name, std::uint64_t& out) {
  if (field.empty()) return fmt::format("{} is empty", name);
  if (field.front() == '-') return fmt::format("{} {} is negative", name, quoted(field));
  const char* end = field.data() + field.size();
  const auto [ptr, ec] = std::from_chars(field.data(), end, out);
  if (ec == std::errc::result_out_of_range) return fmt::format("{} {} is too large", name, quoted(field));
  if (ec != std::errc{} || ptr != end) {
    return fmt::format("{} {} is not a non-negative integer", name, quoted(field));
  }
  return {};
}

std::string parse_coordinate(std::string_view field, std::string_view name, float& out) {
  if (field.empty()) return fmt::format("{} is empty", name);
  const char* end = field.data() + field.size();
  const auto [ptr, ec] = std::from_chars(field.data(), end, out, std::chars_format::general);
  if (ec == std::errc::result_out_of_range) {
    return fmt::format("{} {} is outside the float range", name, quoted(field));
  }
  if (ec != std::errc{} || ptr != end) return fmt::format("{} {} is not a number", name, quoted(field));
  if (!std::isfinite(out)) return fmt::format("{} {} is not finite", name, quoted(field));
  if (std::fabs(out) > kMaxCoordinate) {
    return fmt::format("{} {} is beyond +-{:g}, the largest coordinate a world accepts", name, quoted(field),
                       kMaxCoordinate);
  }
  return {};
}

class Parser {
 public:
  TraceParse run(std::string_view text) {
    std::size_t line_number = 0;
    bool header_seen = false;
    while (!text.empty() || !header_seen) {
      const std::size_t newline = text.find('\n');
      const std::string_view raw = text.substr(0, newline);
      text = newline == std::string_view::npos ? std::string_view{} : text.substr(newline + 1);
      ++line_number;
      const bool last = text.empty();
      if (!header_seen) {
        if (trim(raw).empty() && last) {
          return fail(line_number, "empty file: expected the header tick,id,x,y");
        }
        if (!header_ok(raw)) {
          return fail(line_number, fmt::format("bad header {}: expected tick,id,x,y", quoted(trim(raw))));
        }
        header_seen = true;
        continue;
      }
      if (trim(raw).empty()) {
        // A trailing newline ends the file with one empty segment; any other blank line is an error.
        if (last && newline == std::string_view::npos) break;
        return fail(line_number, "empty line: expected tick,id,x,y");
      }
      if (!row(line_number, raw)) return std::move(result_);
      last_line_ = line_number;
    }
    if (rows_ == 0) return fail(line_number + 1, "no rows after the header");
    if (!end_tick(last_line_, "end of file")) return std::move(result_);
    Trace trace;
    trace.entities = entities_;
    trace.ticks = tick_ + 1;
    trace.xs = std::move(xs_);
    trace.zs = std::move(zs_);
    result_.trace = std::move(trace);
    return std::move(result_);
  }

 private:
  static bool header_ok(std::string_view raw) {
    std::array<std::string_view, kFields> fields;
    if (split(raw, fields) != kFields) return false;
    return std::equal(fields.begin(), fields.end(), kHeader.begin());
  }

  void set_error(std::size_t line, std::string message) {
    result_.trace.reset();
    result_.error = TraceError{line, std::move(message)};
  }

  TraceParse fail(std::size_t line, std::string message) {
    set_error(line, std::move(message));
    return std::move(result_);
  }

  bool error(std::size_t line, std::string message) {
    set_error(line, std::move(message));
    return false;
  }

  bool row(std::size_t line, std::string_view raw) {
    std::array<std::string_view, kFields> fields;
    const std::size_t count = split(raw, fields);
    if (count != kFields) {
      return error(line, fmt::format("{} field{} where tick,id,x,y needs 4", count, count == 1 ? "" : "s"));
    }
    std::uint64_t tick = 0;
    std::uint64_t id = 0;
    float x = 0.0f;
    float z = 0.0f;
    std::string what = parse_index(fields[0], "tick", tick);
    if (what.empty()) what = parse_index(fields[1], "id", id);
    if (what.empty()) what = parse_coordinate(fields[2], "x", x);
    if (what.empty()) what = parse_coordinate(fields[3], "y", z);
    if (!what.empty()) return error(line, std::move(what));

    if (rows_ == 0 && tick != 0) {
      return error(line, fmt::format("first tick is {}: ticks must start at 0", tick));
    }
    if (tick != tick_) {
      if (tick != tick_ + 1) {
        return error(line, fmt::format("tick {} follows tick {}: ticks must be consecutive", tick, tick_));
      }
      if (!end_tick(line, fmt::format("tick {} starts", tick))) return false;
      tick_ = tick;
      seen_in_tick_ = 0;
      xs_.resize(xs_.size() + entities_);
      zs_.resize(zs_.size() + entities_);
    }
    ++rows_;
    if (tick_ == 0) {
      if (id >= kMaxEntities) return error(line, fmt::format("id {} is out of range", id));
      first_tick_.push_back({id, line, x, z});
      return true;
    }
    if (id >= entities_) {
      return error(line, fmt::format("id {} is out of range: tick 0 has {} rows, so ids are 0..{}", id,
                                     entities_, entities_ - 1));
    }
    if (tick_seen_[id] == tick_) {
      return error(
          line, fmt::format("id {} appears twice in tick {} (first on line {})", id, tick_, line_seen_[id]));
    }
    tick_seen_[id] = tick_;
    line_seen_[id] = line;
    ++seen_in_tick_;
    const std::size_t at = static_cast<std::size_t>(tick_ * entities_ + id);
    xs_[at] = x;
    zs_[at] = z;
    return true;
  }

  // Checks that the current tick held every id; `line` and `why` say where it ended.
  bool end_tick(std::size_t line, std::string_view why) {
    if (tick_ == 0 && entities_ == 0) return end_first_tick(why);
    if (seen_in_tick_ == entities_) return true;
    std::uint32_t missing = 0;
    while (tick_seen_[missing] == tick_) ++missing;
    return error(line, fmt::format("{}, but tick {} has no row for id {} ({} of {} ids)", why, tick_, missing,
                                   seen_in_tick_, entities_));
  }

  bool end_first_tick(std::string_view why) {
    std::sort(first_tick_.begin(), first_tick_.end(),
              [](const Row& a, const Row& b) { return a.id != b.id ? a.id < b.id : a.line < b.line; });
    for (std::size_t i = 1; i < first_tick_.size(); ++i) {
      if (first_tick_[i].id == first_tick_[i - 1].id) {
        return error(first_tick_[i].line, fmt::format("id {} appears twice in tick 0 (first on line {})",
                                                      first_tick_[i].id, first_tick_[i - 1].line));
      }
    }
    const std::size_t n = first_tick_.size();
    if (first_tick_.back().id != n - 1) {
      std::size_t missing = 0;
      while (first_tick_[missing].id == missing) ++missing;
      const Row& largest = first_tick_.back();
      return error(
          largest.line,
          fmt::format("id {} is out of range: tick 0 has {} rows, so ids are 0..{} ({}; id {} is missing)",
                      largest.id, n, n - 1, why, missing));
    }
    entities_ = static_cast<std::uint32_t>(n);
    xs_.resize(n);
    zs_.resize(n);
    for (const Row& r : first_tick_) {
      xs_[r.id] = r.x;
      zs_[r.id] = r.z;
    }
    first_tick_ = {};
    tick_seen_.assign(n, 0);
    line_seen_.assign(n, 0);
    seen_in_tick_ = entities_;
    return true;
  }

  struct Row {
    std::uint64_t id;
    std::size_t line;
    float x;
    float z;
  };

  TraceParse result_;
  std::vector<Row> first_tick_;
  std::vector<std::uint64_t> tick_seen_;
  std::vector<std::size_t> line_seen_;
  std::vector<float> xs_;
  std::vector<float> zs_;
  std::uint32_t entities_ = 0;
  std::uint32_t seen_in_tick_ = 0;
  std::uint64_t tick_ = 0;
  std::uint64_t rows_ = 0;
  std::size_t last_line_ = 0;
};

}  // namespace

std::string TraceError::to_string() const { return fmt::format("line {}: {}", line, message); }

TraceParse parse_trace(std::string_view text) { return Parser{}.run(text); }

TraceParse parse_trace(std::istream& in) {
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = std::move(buffer).str();
  return parse_trace(std::string_view(text));
}

void write_trace_header(std::ostream& out) { out << "tick,id,x,y\n"; }

void write_trace_tick(std::ostream& out, std::uint64_t tick, std::span<const float> xs,
                      std::span<const float> zs) {
  fmt::memory_buffer buffer;
  for (std::size_t id = 0; id < xs.size(); ++id) {
    fmt::format_to(std::back_inserter(buffer), "{},{},{},{}\n", tick, id, xs[id], zs[id]);
  }
  out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
}

}  // namespace sightline::sim
