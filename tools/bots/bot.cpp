#include "bot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "sightline/serialize.h"

namespace sightline::bots {
namespace {

std::string describe(EntityId e) { return fmt::format("entity {}:{}", e.index, e.generation); }

}  // namespace

const char* problem_name(Problem problem) noexcept {
  switch (problem) {
    case Problem::malformed_frame: return "malformed_frame";
    case Problem::malformed_packet: return "malformed_packet";
    case Problem::out_of_radius: return "out_of_radius";
    case Problem::out_of_order: return "out_of_order";
    case Problem::set_mismatch: return "set_mismatch";
    case Problem::not_converged: return "not_converged";
    default: return anomaly_kind_name(static_cast<AnomalyKind>(problem));
  }
}

void DelayHistogram::add(double ms) noexcept {
  if (count_ == 0 || ms > max_) max_ = ms;
  if (count_ == 0 || ms < min_) min_ = ms;
  ++count_;
  std::size_t bucket = 0;
  if (ms >= 100.0) {
    bucket = kFine + std::min(static_cast<std::size_t>(ms - 100.0), kCoarse);
  } else if (ms > 0.0) {
    bucket = static_cast<std::size_t>(ms * 100.0);
  }
  ++buckets_[bucket];
}

void DelayHistogram::merge(const DelayHistogram& other) noexcept {
  if (other.count_ == 0) return;
  if (count_ == 0 || other.max_ > max_) max_ = other.max_;
  if (count_ == 0 || other.min_ < min_) min_ = other.min_;
  count_ += other.count_;
  for (std::size_t b = 0; b < buckets_.size(); ++b) buckets_[b] += other.buckets_[b];
}

double DelayHistogram::quantile(double q) const noexcept {
  if (count_ == 0) return 0.0;
  const auto rank =
      static_cast<std::uint64_t>(std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(count_)));
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    seen += buckets_[b];
    if (seen >= std::max<std::uint64_t>(rank, 1)) {
      const double edge =
          b < kFine ? static_cast<double>(b + 1) / 100.0 : 100.0 + static_cast<double>(b - kFine + 1);
      return std::min(edge, max_);
    }
  }
  return max_;
}

Result<PayloadRanges> payload_ranges(float width, float height) {
  Result<QuantizedRange> x = QuantizedRange::make(0.0f, width, demo::kPositionStep);
  if (!x) return x.status();
  Result<QuantizedRange> z = QuantizedRange::make(0.0f, height, demo::kPositionStep);
  if (!z) return z.status();
  return PayloadRanges{*x, *z};
}

bool read_entity_payload(std::span<const std::uint8_t> payload, StatePart part, const PayloadRanges& ranges,
                         float& x, float& z, std::uint32_t& kind) {
  Stream s = Stream::reader(payload);
  kind = 0;
  if (!s.serialize_quantized(x, ranges.x) || !s.serialize_quantized(z, ranges.z)) return false;
  if (part == StatePart::full && !s.serialize_uint(kind, 0, 3)) return false;
  return s.rest_is_zero();
}

Bot::Bot(const WalkDef& walk, bool check_sets) : walk_(walk), rng_(walk.seed), check_sets_(check_sets) {
  heading_ = std::uniform_real_distribution<double>(0.0, 2.0 * std::numbers::pi)(rng_);
}

std::uint64_t Bot::problem_count() const noexcept {
  std::uint64_t n = 0;
  for (const std::uint64_t c : totals_.problems) n += c;
  return n;
}

void Bot::problem(Problem kind, const std::string& note) {
  ++totals_.problems[static_cast<std::size_t>(kind)];
  if (notes_.size() < kMaxNotes) notes_.push_back(fmt::format("{}: {}", problem_name(kind), note));
}

void Bot::restart_mirror() {
  MirrorDef def;
  def.delivery =
      (welcome_->server_flags & demo::kServerUnreliable) != 0 ? Delivery::unreliable : Delivery::reliable;
  def.history = 1;
  def.check = &Bot::check_payload;
  def.check_context = this;
  mirror_.emplace(std::move(ClientMirror::create(def)).value());
  last_tick_.reset();
  ack_due_ = false;
}

void Bot::on_message(std::span<const std::uint8_t> message, double receive_ms, DelayHistogram& delays) {
  if (demo::frame_type(message) != demo::kBundleFrame) {
    on_frame(message, receive_ms, delays);
    return;
  }
  if (const Status s = demo::read_bundle(message, bundled_); !s) {
    problem(Problem::malformed_frame, s.message());
    return;
  }
  for (const std::span<const std::uint8_t> frame : bundled_) on_frame(frame, receive_ms, delays);
}

void Bot::on_frame(std::span<const std::uint8_t> frame, double receive_ms, DelayHistogram& delays) {
  ++totals_.frames;
  totals_.bytes += frame.size();
  const std::uint8_t type = demo::frame_type(frame);
  if (type != demo::kWelcomeFrame && !welcome_) {
    problem(Problem::out_of_order, fmt::format("frame type {} before welcome", type));
    return;
  }
  switch (type) {
    case demo::kWelcomeFrame: on_welcome(frame); break;
    case demo::kTickFrame: on_tick(frame, receive_ms, delays); break;
    case demo::kResetFrame: on_reset(frame); break;
    case demo::kDebugFrame: on_debug(frame); break;
    default:
      problem(Problem::malformed_frame,
              fmt::format("frame type {} is unknown ({} bytes)", type, frame.size()));
  }
}

void Bot::on_welcome(std::span<const std::uint8_t> frame) {
  if (welcome_) {
    problem(Problem::out_of_order, "a second welcome");
    return;
  }
  Result<demo::Welcome> w = demo::read_welcome(frame);
  if (!w) {
    problem(Problem::malformed_frame, w.status().message());
    return;
  }
  Result<PayloadRanges> ranges = payload_ranges(w->width, w->height);
  if (!ranges) {
    problem(Problem::malformed_frame, "welcome: " + ranges.status().message());
    return;
  }
  welcome_ = *w;
  ranges_ = *ranges;
  restart_mirror();
}

void Bot::on_reset(std::span<const std::uint8_t> frame) {
  const Result<std::uint32_t> tick = demo::read_reset(frame);
  if (!tick) {
    problem(Problem::malformed_frame, tick.status().message());
    return;
  }
  ++totals_.resets;
  stream_ = *tick;
  restart_mirror();
}

void Bot::on_tick(std::span<const std::uint8_t> frame, double receive_ms, DelayHistogram& delays) {
  const Result<demo::TickFrame> tick = demo::read_tick(frame);
  if (!tick) {
    problem(Problem::malformed_frame, tick.status().message());
    return;
  }
  ++totals_.ticks;
  ++tick_frames_;
  last_tick_ = tick->tick;
  ack_due_ = true;
  delays.add(receive_ms - tick->server_time_ms);
  if (!placed_) {
    x_ = tick->viewer_x;
    z_ = tick->viewer_z;
    placed_ = true;
  }
  frame_states_.clear();
  for (std::size_t i = 0; i < tick->packets.size(); ++i) {
    ++totals_.packets;
    if (const Status s = mirror_->receive(tick->packets[i], this); !s) {
      problem(Problem::malformed_packet, fmt::format("tick {} packet {}: {}", tick->tick, i, s.message()));
      continue;
    }
    for (const Anomaly& a : mirror_->anomalies()) {
      problem(static_cast<Problem>(a.kind),
              fmt::format("tick {} packet sequence {}: {} {}", tick->tick, a.sequence,
                          anomaly_kind_name(a.kind), describe(a.entity)));
    }
  }
  if ((tick->options & demo::kOptionInterest) == 0) return;  // the send-everything baseline: no radius
  // Only states of the frame's own tick, where the viewer stood as the frame says (the server's
  // Worlds tick with it, so its packets' states are of its tick): a spawn sent again may carry
  // the state it first went with, from where the viewer stood then.
  const double limit = static_cast<double>(tick->leave_radius) + kPositionTolerance;
  for (const FrameState& f : frame_states_) {
    if (f.tick != tick->tick) continue;
    ++totals_.checked;
    const double dx = static_cast<double>(f.x) - tick->viewer_x;
    const double dz = static_cast<double>(f.z) - tick->viewer_z;
    if (dx * dx + dz * dz > limit * limit) {
      problem(Problem::out_of_radius,
              fmt::format("tick {}: {} at ({}, {}) is {:.4f} from the viewer ({}, {}), beyond L {}",
                          tick->tick, describe(f.entity), f.x, f.z, std::hypot(dx, dz), tick->viewer_x,
                          tick->viewer_z, tick->leave_radius));
    }
  }
}

void Bot::on_debug(std::span<const std::uint8_t> frame) {
  if (!options_sent_) {
    problem(Problem::out_of_order, "a debug frame, never asked for");
    return;
  }
  std::uint32_t tick = 0;
  std::uint32_t members = 0;
  const Result<std::vector<demo::DebugEntry>> hidden = demo::read_debug(frame, &tick, &members);
  if (!hidden) {
    problem(Problem::malformed_frame, hidden.status().message());
    return;
  }
  // Only right after the tick frame it describes (under unreliable delivery either may be lost),
  // and only when the mirror says it has everything: then it must hold the server's set exactly.
  if (debug_frames_++ == 0) last_set_check_frame_ = tick_frames_;  // judged from the first one
  if (!last_tick_ || *last_tick_ != tick) return;
  ++debug_after_tick_;
  if (mirror_->interest().pending != 0) return;
  ++totals_.set_checks;
  last_set_check_frame_ = tick_frames_;
  const std::vector<EntityId> held = mirror_->held();  // sorted by index
  const auto holds = [&](std::uint32_t index) {
    const auto at = std::lower_bound(held.begin(), held.end(), index,
                                     [](EntityId e, std::uint32_t i) { return e.index < i; });
    return at != held.end() && at->index == index;
  };
  for (const demo::DebugEntry& e : *hidden) {
    if (holds(e.index)) {
      problem(Problem::set_mismatch,
              fmt::format("tick {}: holds entity index {}, outside the server's set", tick, e.index));
      return;
    }
  }
  if (held.size() != members) {
    problem(Problem::set_mismatch,
            fmt::format("tick {}: holds {} entities, the server's set has {}", tick, held.size(), members));
  }
}

std::optional<std::vector<std::uint8_t>> Bot::take_options() {
  if (!check_sets_ || options_sent_ || !welcome_) return std::nullopt;
  options_sent_ = true;
  return demo::encode_options(demo::kDefaultOptions | demo::kOptionDebug);
}

std::optional<std::vector<std::uint8_t>> Bot::take_radius(double share) {
  if (!welcome_) return std::nullopt;
  const double r = welcome_->enter_radius;
  const double low = r / 4.0;
  const double high = std::min(2.0 * r, static_cast<double>(welcome_->max_radius)) - r / 16.0;
  radius_flip_ = !radius_flip_;
  const double radius = low + share * std::max(0.0, high - low) + (radius_flip_ ? r / 16.0 : 0.0);
  ++totals_.radius_changes;
  return demo::encode_radius(static_cast<float>(radius));
}

std::optional<std::vector<std::uint8_t>> Bot::take_ack() {
  if (!ack_due_ || !mirror_ || (welcome_->server_flags & demo::kServerUnreliable) == 0) return std::nullopt;
  ack_due_ = false;
  ++totals_.acks;
  return demo::encode_ack(stream_, mirror_->ack());
}

void Bot::finish() {
  if (!check_sets_ || !welcome_ || debug_frames_ == 0) return;
  const auto window = static_cast<std::uint64_t>(kConvergeSeconds * welcome_->tick_rate);
  if (tick_frames_ - last_set_check_frame_ > window) {
    problem(
        Problem::not_converged,
        fmt::format("no complete mirror in the last {} tick frames: {} set checks, the last at tick frame "
                    "{} of {}; {} debug frames, {} right after their tick frame; pending {} at the end",
                    window, totals_.set_checks, last_set_check_frame_, tick_frames_, debug_frames_,
                    debug_after_tick_, mirror_ ? mirror_->interest().pending : 0));
  }
}

bool Bot::check_payload(EntityId, StatePart part, std::span<const std::uint8_t> payload, void* context) {
  const Bot& bot = *static_cast<const Bot*>(context);
  float x = 0.0f;
  float z = 0.0f;
  std::uint32_t kind = 0;
  return read_entity_payload(payload, part, *bot.ranges_, x, z, kind);
}

void Bot::record(EntityId entity, std::span<const std::uint8_t> payload, StatePart part, std::uint32_t tick) {
  FrameState& f = frame_states_.emplace_back();
  f.entity = entity;
  f.tick = tick;
  std::uint32_t kind = 0;
  // The mirror's check has read this payload already.
  (void)read_entity_payload(payload, part, *ranges_, f.x, f.z, kind);
}

void Bot::on_enter(EntityId entity, SpawnReason, bool, std::span<const std::uint8_t> full_state,
                   std::uint32_t tick) {
  ++totals_.spawns;
  record(entity, full_state, StatePart::full, tick);
}

void Bot::on_update(EntityId entity, std::span<const std::uint8_t> update_state, std::uint32_t tick) {
  ++totals_.updates;
  record(entity, update_state, StatePart::update, tick);
}

void Bot::on_exit(EntityId, ExitKind, DespawnReason) { ++totals_.despawns; }

std::optional<std::vector<std::uint8_t>> Bot::next_move(double seconds) {
  if (!placed_ || !welcome_) return std::nullopt;
  heading_ += std::normal_distribution<double>(0.0, walk_.turn)(rng_);
  const double step = walk_.speed * std::clamp(seconds, 0.0, 1.0);
  const double width = welcome_->width;
  const double height = welcome_->height;
  x_ += step * std::cos(heading_);
  z_ += step * std::sin(heading_);
  // Bounce off the walls: reflect the position and turn the heading back inside.
  if (x_ < 0.0 || x_ >= width) {
    x_ = x_ < 0.0 ? -x_ : 2.0 * width - x_;
    heading_ = std::numbers::pi - heading_;
  }
  if (z_ < 0.0 || z_ >= height) {
    z_ = z_ < 0.0 ? -z_ : 2.0 * height - z_;
    heading_ = -heading_;
  }
  // Strictly inside [0, W) x [0, H), as the page keeps its drags.
  const auto x = std::clamp(static_cast<float>(x_), 0.0f, std::nextafter(welcome_->width, 0.0f));
  const auto z = std::clamp(static_cast<float>(z_), 0.0f, std::nextafter(welcome_->height, 0.0f));
  x_ = x;
  z_ = z;
  ++totals_.moves;
  return demo::encode_move(x, z);
}

}  // namespace sightline::bots
