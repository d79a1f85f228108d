#include "link.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <string>
#include <utility>

namespace sightline::relay {
namespace {

// The value in its shortest exact form, as the user would have typed it.
template <class T>
Status refuse(const char* option, T value, const char* rule) {
  return Status(ErrorCode::invalid_def, fmt::format("{} is {}: {}", option, value, rule));
}

// Written as "inside" tests so that NaN is refused too.
bool in_closed(double value, double low, double high) { return value >= low && value <= high; }

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Earliest due first; among equals, the one submitted (or released) first.
bool later(const auto& a, const auto& b) {
  return a.due_seconds != b.due_seconds ? a.due_seconds > b.due_seconds : a.order > b.order;
}

}  // namespace

Status validate(const LinkDef& def) {
  if (!(def.drop >= 0 && def.drop < 1)) return refuse("--drop", def.drop, "must be in [0, 1)");
  if (!in_closed(def.duplicate, 0, 1)) return refuse("--duplicate", def.duplicate, "must be in [0, 1]");
  if (!(def.reorder >= 0 && def.reorder < 1)) return refuse("--reorder", def.reorder, "must be in [0, 1)");
  if (!in_closed(def.delay_ms, 0, 10000)) return refuse("--delay-ms", def.delay_ms, "must be in [0, 10000]");
  if (!in_closed(def.jitter_ms, 0, 10000))
    return refuse("--jitter-ms", def.jitter_ms, "must be in [0, 10000]");
  if (!in_closed(def.heal_after_seconds, 0, 1e6))
    return refuse("--heal-after", def.heal_after_seconds, "must be in [0, 1000000] (0: never)");
  if (def.max_queued < 1 || def.max_queued > (std::size_t{1} << 20))
    return refuse("--max-queued", def.max_queued, "must be in [1, 1048576]");
  if (def.max_queued_bytes < 65535 || def.max_queued_bytes > (std::size_t{1} << 30))
    return refuse("--max-queued-bytes", def.max_queued_bytes, "must be in [65535, 1073741824]");
  return {};
}

Result<Link> Link::create(const LinkDef& def, std::uint64_t direction, double start_seconds) {
  if (Status status = validate(def); !status) return status;
  return Link(def, direction, start_seconds);
}

Link::Link(const LinkDef& def, std::uint64_t direction, double start_seconds)
    : def_(def),
      heal_at_seconds_(def.heal_after_seconds > 0 ? start_seconds + def.heal_after_seconds : -1),
      generator_(splitmix64(def.seed ^ splitmix64(direction))) {}

// 53 random bits, uniform in [0, 1): the same on every platform, unlike the standard distributions.
double Link::draw_unit() { return static_cast<double>(generator_() >> 11) * 0x1.0p-53; }

bool Link::admit(std::size_t bytes) {
  if (queued() < def_.max_queued && queued_bytes_ + bytes <= def_.max_queued_bytes) return true;
  ++counters_.overflow;
  return false;
}

void Link::enqueue(Copy copy) {
  queue_.push_back(std::move(copy));
  std::push_heap(queue_.begin(), queue_.end(), [](const Copy& a, const Copy& b) { return later(a, b); });
}

// Held copies land after `after_seconds`, in the order they were held, behind everything
// already scheduled for that instant.
void Link::release_held(double after_seconds) {
  for (Copy& copy : held_) {
    copy.due_seconds =
        std::min(std::max(copy.due_seconds, after_seconds), copy.due_seconds + kMaxHoldSeconds);
    copy.order = next_order_++;
    enqueue(std::move(copy));
  }
  held_.clear();
}

Decision Link::submit(double now_seconds, std::uint32_t peer, std::span<const std::uint8_t> bytes) {
  ++counters_.received;
  // Every datagram draws the same five numbers, so one decision never shifts the next ones and a
  // healed link keeps the delays it would have had.
  const double drop_draw = draw_unit();
  const double duplicate_draw = draw_unit();
  const double reorder_draw = draw_unit();
  const double jitter_draw = draw_unit();
  const double duplicate_jitter_draw = draw_unit();
  const bool impaired = heal_at_seconds_ < 0 || now_seconds < heal_at_seconds_;

  Decision decision;
  decision.delay_seconds = (def_.delay_ms + jitter_draw * def_.jitter_ms) / 1000;
  decision.duplicate_delay_seconds = (def_.delay_ms + duplicate_jitter_draw * def_.jitter_ms) / 1000;
  if (impaired && drop_draw < def_.drop) {
    decision.dropped = true;
    ++counters_.dropped;
    return decision;
  }
  const std::vector<std::uint8_t> payload(bytes.begin(), bytes.end());
  if (admit(bytes.size())) {
    queued_bytes_ += bytes.size();
    Copy copy{now_seconds + decision.delay_seconds, next_order_++, peer, payload};
    if (impaired && reorder_draw < def_.reorder) {
      decision.reordered = true;
      ++counters_.reordered;
      held_.push_back(std::move(copy));
    } else {
      const double due_seconds = copy.due_seconds;
      enqueue(std::move(copy));
      release_held(due_seconds);
    }
  } else {
    ++decision.overflowed_copies;
  }
  if (impaired && duplicate_draw < def_.duplicate) {
    decision.duplicated = true;
    ++counters_.duplicated;
    if (admit(bytes.size())) {
      queued_bytes_ += bytes.size();
      enqueue(Copy{now_seconds + decision.duplicate_delay_seconds, next_order_++, peer, payload});
    } else {
      ++decision.overflowed_copies;
    }
  }
  return decision;
}

void Link::pop_due(double now_seconds, std::vector<DueDatagram>& out) {
  // A held copy that no later datagram came to release goes out at its longest hold.
  for (std::size_t i = 0; i < held_.size();) {
    if (held_[i].due_seconds + kMaxHoldSeconds <= now_seconds) {
      Copy copy = std::move(held_[i]);
      held_.erase(held_.begin() + static_cast<std::ptrdiff_t>(i));
      copy.due_seconds += kMaxHoldSeconds;
      copy.order = next_order_++;
      enqueue(std::move(copy));
    } else {
      ++i;
    }
  }
  const auto heap_order = [](const Copy& a, const Copy& b) { return later(a, b); };
  while (!queue_.empty() && queue_.front().due_seconds <= now_seconds) {
    std::pop_heap(queue_.begin(), queue_.end(), heap_order);
    Copy& copy = queue_.back();
    assert(queued_bytes_ >= copy.bytes.size());
    queued_bytes_ -= copy.bytes.size();
    ++counters_.delivered;
    out.push_back(DueDatagram{copy.peer, std::move(copy.bytes)});
    queue_.pop_back();
  }
}

double Link::next_due_seconds() const {
  double next = queue_.empty() ? -1 : queue_.front().due_seconds;
  for (const Copy& copy : held_) {
    const double release = copy.due_seconds + kMaxHoldSeconds;
    if (next < 0 || release < next) next = release;
  }
  return next;
}

}  // namespace sightline::relay
