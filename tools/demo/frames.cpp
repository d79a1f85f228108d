// Each frame is one serialize function over frame_stream.h's streams: the write_* functions
// write with it, the read_* functions read with it, and the sizes in frames.h and the offsets
// that refusals name are measured from it at compile time.
#include "frames.h"

#include <algorithm>
#include <cassert>

#include "frame_stream.h"

namespace sightline::demo {
namespace {

std::string hex(std::uint8_t value) {
  constexpr char kDigits[] = "0123456789abcdef";
  return std::string("0x") + kDigits[value >> 4] + kDigits[value & 15];
}

/// The type byte every frame starts with.
template <class S>
constexpr bool serialize_type(S& s, std::uint8_t expected) {
  std::uint8_t type = expected;
  if (!s.value(type, "type")) return false;
  if constexpr (S::reading) {
    if (type != expected) {
      return s.refuse_last("type", "is " + std::to_string(type) + ", expected " + std::to_string(expected));
    }
  }
  return true;
}

/// W: Welcome, or const Welcome to write.
template <class S, class W>
constexpr bool serialize_welcome(S& s, W& w) {
  if (!serialize_type(s, kWelcomeFrame) || !s.sized(kWelcomeBytes) || !s.value(w.version, "frame version")) {
    return false;
  }
  if constexpr (S::reading) {
    if (w.version != kFrameVersion) {
      return s.refuse_last("frame version",
                           "is " + std::to_string(w.version) + ", expected " + std::to_string(kFrameVersion));
    }
  }
  return s.value(w.connection, "connection id") && s.positive(w.width, "world width") &&
         s.positive(w.height, "world height") && s.positive(w.enter_radius, "enter radius") &&
         s.finite(w.leave_radius, "leave radius") && s.positive(w.cell_size, "cell size") &&
         s.value(w.tick_rate, "tick rate") && s.value(w.server_flags, "server flags") &&
         s.finite(w.max_radius, "largest radius") && s.value(w.entity_count, "entity count");
}

/// A tick frame up to its packet count; T: TickFrame or const TickFrame.
template <class S, class T>
constexpr bool serialize_tick_header(S& s, T& t, std::uint16_t& packet_count) {
  if (!serialize_type(s, kTickFrame) || !s.at_least(kTickHeaderBytes)) return false;
  if (!s.value(t.tick, "tick") || !s.finite(t.viewer_x, "viewer x") || !s.finite(t.viewer_z, "viewer z") ||
      !s.finite(t.enter_radius, "enter radius") || !s.finite(t.leave_radius, "leave radius") ||
      !s.value(t.options, "options")) {
    return false;
  }
  if constexpr (S::reading) {
    if ((t.options & ~kOptionBits) != 0)
      return s.refuse_last("options", "are " + hex(t.options) + ": unknown bits set");
  }
  if (!s.finite(t.server_time_ms, "server time") || !s.value(packet_count, "packet count")) return false;
  if (!s.finite(t.grid_origin_x, "grid origin x") || !s.finite(t.grid_origin_z, "grid origin z") ||
      !s.positive(t.cell_size, "cell size") || !s.value(t.scanned, "scanned")) {
    return false;
  }
  if constexpr (S::reading) {
    if (t.scanned > 1)
      return s.refuse_last("scanned", "is " + std::to_string(t.scanned) + ": must be 0 or 1");
  }
  if (!s.value(t.scan_x0, "scan x0") || !s.value(t.scan_x1, "scan x1") || !s.value(t.scan_z0, "scan z0") ||
      !s.value(t.scan_z1, "scan z1")) {
    return false;
  }
  if constexpr (S::reading) {
    if (t.scanned == 1 && (t.scan_x0 > t.scan_x1 || t.scan_z0 > t.scan_z1)) {
      return s.refuse_last("scan z1", "the cells [" + std::to_string(t.scan_x0) + ", " +
                                          std::to_string(t.scan_x1) + "] x [" + std::to_string(t.scan_z0) +
                                          ", " + std::to_string(t.scan_z1) + "] are empty");
    }
    if (t.scanned == 0 && (t.scan_x0 | t.scan_x1 | t.scan_z0 | t.scan_z1) != 0) {
      return s.refuse_last("scan z1", "cells are given while scanned is 0");
    }
  }
  return true;
}

/// One packet of a tick frame: its u16 length, then its bytes.
template <class S>
constexpr bool serialize_tick_packet(S& s, std::span<const std::uint8_t>& packet, std::uint16_t& length) {
  return s.value(length, "packet length") && s.bytes(packet, length, "packet");
}

template <class S>
constexpr bool serialize_reset(S& s, std::uint32_t& tick) {
  return serialize_type(s, kResetFrame) && s.sized(kResetBytes) && s.value(tick, "tick");
}

/// A debug frame up to its entry count.
template <class S>
constexpr bool serialize_debug_header(S& s, std::uint32_t& tick, std::uint32_t& members,
                                      std::uint32_t& count) {
  return serialize_type(s, kDebugFrame) && s.at_least(kDebugHeaderBytes) && s.value(tick, "tick") &&
         s.value(members, "members") && s.value(count, "count");
}

/// E: DebugEntry or const DebugEntry.
template <class S, class E>
constexpr bool serialize_debug_entry(S& s, E& e) {
  return s.value(e.index, "entity index") && s.finite(e.x, "x") && s.finite(e.z, "z");
}

/// A why_answer frame; A: WhyAnswer or const WhyAnswer. Ranges and the fields together are
/// checked after (check_why_answer).
template <class S, class A>
constexpr bool serialize_why_answer(S& s, A& a) {
  return serialize_type(s, kWhyAnswerFrame) && s.sized(kWhyAnswerBytes) && s.value(a.tick, "tick") &&
         s.value(a.entity.index, "entity index") && s.value(a.entity.generation, "entity generation") &&
         s.value(a.outcome, "answer") && s.value(a.held, "held") && s.value(a.rule, "rule") &&
         s.value(a.root.index, "root index") && s.value(a.root.generation, "root generation");
}

/// A why frame after its type byte (read_why checks the type and size first); E: EntityId or
/// const EntityId.
template <class S, class E>
constexpr bool serialize_why_question(S& s, E& e) {
  return s.value(e.index, "entity index") && s.value(e.generation, "entity generation");
}

/// A client frame of a known type (read_client_frame checks the type and size first, and the
/// values after); F: ClientFrame or const ClientFrame.
template <class S, class F>
constexpr bool serialize_client_frame(S& s, F& f) {
  if (!s.value(f.type, "type")) return false;
  switch (f.type) {
    case kMoveFrame: return s.value(f.x, "x") && s.value(f.z, "z");
    case kOptionsFrame: return s.value(f.options, "options");
    case kRadiusFrame: return s.value(f.enter_radius, "enter radius");
    default: return false;
  }
}

// Sizes and offsets, measured from the serialize functions above.

constexpr std::size_t welcome_offset(std::string_view field) {
  FrameMeasurer measure(field);
  Welcome welcome;
  serialize_welcome(measure, welcome);
  return measure.field_offset();
}
constexpr std::size_t tick_header_bytes() {
  FrameMeasurer measure;
  TickFrame tick;
  std::uint16_t count = 0;
  serialize_tick_header(measure, tick, count);
  return measure.pos();
}
constexpr std::size_t reset_bytes() {
  FrameMeasurer measure;
  std::uint32_t tick = 0;
  serialize_reset(measure, tick);
  return measure.pos();
}
constexpr std::size_t debug_header_offset(std::string_view field) {
  FrameMeasurer measure(field);
  std::uint32_t tick = 0;
  std::uint32_t members = 0;
  std::uint32_t count = 0;
  serialize_debug_header(measure, tick, members, count);
  return measure.field_offset();
}
constexpr std::size_t debug_entry_bytes() {
  FrameMeasurer measure;
  DebugEntry entry;
  serialize_debug_entry(measure, entry);
  return measure.pos();
}
constexpr std::size_t client_frame_bytes(std::uint8_t type) {
  FrameMeasurer measure;
  ClientFrame frame;
  frame.type = type;
  serialize_client_frame(measure, frame);
  return measure.pos();
}

constexpr std::size_t why_answer_offset(std::string_view field) {
  FrameMeasurer measure(field);
  WhyAnswer answer;
  serialize_why_answer(measure, answer);
  return measure.field_offset();
}
constexpr std::size_t why_bytes() {
  FrameMeasurer measure;
  const std::uint8_t type = kWhyFrame;
  EntityId entity;
  measure.value(type, "type");
  serialize_why_question(measure, entity);
  return measure.pos();
}

static_assert(welcome_offset({}) == kWelcomeBytes);
static_assert(tick_header_bytes() == kTickHeaderBytes);
static_assert(reset_bytes() == kResetBytes);
static_assert(debug_header_offset({}) == kDebugHeaderBytes);
static_assert(debug_entry_bytes() == kDebugEntryBytes);
static_assert(client_frame_bytes(kMoveFrame) == kMoveBytes);
static_assert(client_frame_bytes(kOptionsFrame) == kOptionsBytes);
static_assert(client_frame_bytes(kRadiusFrame) == kRadiusBytes);
static_assert(why_answer_offset({}) == kWhyAnswerBytes);
static_assert(why_bytes() == kWhyBytes);

constexpr std::size_t kLeaveRadiusOffset = welcome_offset("leave radius");
constexpr std::size_t kTickRateOffset = welcome_offset("tick rate");
constexpr std::size_t kServerFlagsOffset = welcome_offset("server flags");
constexpr std::size_t kLargestRadiusOffset = welcome_offset("largest radius");
constexpr std::size_t kDebugCountOffset = debug_header_offset("count");
constexpr std::size_t kWhyGenerationOffset = why_answer_offset("entity generation");
constexpr std::size_t kWhyOutcomeOffset = why_answer_offset("answer");
constexpr std::size_t kWhyHeldOffset = why_answer_offset("held");
constexpr std::size_t kWhyRuleOffset = why_answer_offset("rule");
constexpr std::size_t kWhyRootOffset = why_answer_offset("root index");
constexpr std::size_t kWhyRootGenerationOffset = why_answer_offset("root generation");
constexpr auto kLastRule = static_cast<std::uint8_t>(Rule::crowded);

/// What a welcome's fields must satisfy together, checked once all are read.
bool check_welcome(FrameReader& in, const Welcome& w) {
  if (w.leave_radius < w.enter_radius) {
    return in.refuse_at(
        kLeaveRadiusOffset, "leave radius",
        "is " + number_text(w.leave_radius) + ": below the enter radius " + number_text(w.enter_radius));
  }
  if (w.tick_rate == 0) return in.refuse_at(kTickRateOffset, "tick rate", "is 0");
  if ((w.server_flags & ~kServerFlagBits) != 0) {
    return in.refuse_at(kServerFlagsOffset, "server flags",
                        "are " + hex(w.server_flags) + ": unknown bits set");
  }
  if (w.max_radius < w.enter_radius) {
    return in.refuse_at(
        kLargestRadiusOffset, "largest radius",
        "is " + number_text(w.max_radius) + ": below the enter radius " + number_text(w.enter_radius));
  }
  return true;
}

/// What a why_answer's fields must satisfy, alone and together, checked once all are read.
bool check_why_answer(FrameReader& in, const WhyAnswer& a) {
  const auto outcome = static_cast<std::uint8_t>(a.outcome);
  const auto rule = static_cast<std::uint8_t>(a.rule);
  if (outcome > 1) {
    return in.refuse_at(kWhyOutcomeOffset, "answer",
                        "is " + std::to_string(outcome) + ": must be 0 (answered) or 1 (stale)");
  }
  if (a.held > 1)
    return in.refuse_at(kWhyHeldOffset, "held", "is " + std::to_string(a.held) + ": must be 0 or 1");
  if (rule > kLastRule) {
    return in.refuse_at(
        kWhyRuleOffset, "rule",
        "is " + std::to_string(rule) + ": above the last rule, crowded (" + std::to_string(kLastRule) + ")");
  }
  if (a.outcome == WhyOutcome::stale) {
    if (a.held != 0 || rule != 0)
      return in.refuse_at(kWhyHeldOffset, "held", "and rule must be 0 in a stale answer");
    if (a.root.index != 0 || a.root.generation != 0)
      return in.refuse_at(kWhyRootOffset, "root index", "and generation must be 0 in a stale answer");
    return true;
  }
  if (a.entity.generation == 0)
    return in.refuse_at(kWhyGenerationOffset, "entity generation", "is 0 in an answer: it names no entity");
  if (a.root.generation == 0)
    return in.refuse_at(kWhyRootGenerationOffset, "root generation", "is 0 in an answer: it names no entity");
  return true;
}

Status refuse(std::string message) { return {ErrorCode::invalid_argument, std::move(message)}; }

const char* client_frame_name(std::uint8_t type) {
  switch (type) {
    case kMoveFrame: return "move";
    case kOptionsFrame: return "options";
    default: return "radius";
  }
}

std::vector<std::uint8_t> encode_client_frame(const ClientFrame& frame) {
  std::vector<std::uint8_t> out;
  out.reserve(client_frame_bytes(frame.type));
  FrameWriter writer(out);
  serialize_client_frame(writer, frame);
  return out;
}

}  // namespace

bool operator==(const TickFrame& a, const TickFrame& b) noexcept {
  return a.tick == b.tick && a.viewer_x == b.viewer_x && a.viewer_z == b.viewer_z &&
         a.enter_radius == b.enter_radius && a.leave_radius == b.leave_radius && a.options == b.options &&
         a.server_time_ms == b.server_time_ms && a.grid_origin_x == b.grid_origin_x &&
         a.grid_origin_z == b.grid_origin_z && a.cell_size == b.cell_size && a.scanned == b.scanned &&
         a.scan_x0 == b.scan_x0 && a.scan_x1 == b.scan_x1 && a.scan_z0 == b.scan_z0 &&
         a.scan_z1 == b.scan_z1 &&
         std::ranges::equal(a.packets, b.packets, [](auto x, auto y) { return std::ranges::equal(x, y); });
}

void write_welcome(std::vector<std::uint8_t>& out, const Welcome& welcome) {
  FrameWriter writer(out);
  serialize_welcome(writer, welcome);
}

Status write_tick_header(std::vector<std::uint8_t>& out, const TickFrame& tick, std::size_t packets) {
  if (packets > 0xffff) {
    return {ErrorCode::invalid_argument,
            "tick frame: packet count is " + std::to_string(packets) + ": must be <= 65535"};
  }
  auto count = static_cast<std::uint16_t>(packets);
  FrameWriter writer(out);
  serialize_tick_header(writer, tick, count);
  return {};
}

Status append_tick_packet(std::vector<std::uint8_t>& out, std::span<const std::uint8_t> packet) {
  if (packet.size() > 0xffff) {
    return {ErrorCode::invalid_argument,
            "tick frame: packet length is " + std::to_string(packet.size()) + " bytes: must be <= 65535"};
  }
  auto length = static_cast<std::uint16_t>(packet.size());
  FrameWriter writer(out);
  serialize_tick_packet(writer, packet, length);
  return {};
}

void write_reset(std::vector<std::uint8_t>& out, std::uint32_t tick) {
  FrameWriter writer(out);
  serialize_reset(writer, tick);
}

void write_debug_header(std::vector<std::uint8_t>& out, std::uint32_t tick, std::uint32_t members,
                        std::uint32_t count) {
  FrameWriter writer(out);
  serialize_debug_header(writer, tick, members, count);
}

void append_debug_entry(std::vector<std::uint8_t>& out, const DebugEntry& entry) {
  FrameWriter writer(out);
  serialize_debug_entry(writer, entry);
}

void write_why_answer(std::vector<std::uint8_t>& out, const WhyAnswer& answer) {
  FrameWriter writer(out);
  serialize_why_answer(writer, answer);
}

void write_close(std::vector<std::uint8_t>& out, std::string_view reason) {
  reason = reason.substr(0, kMaxCloseReasonBytes);
  out.push_back(kCloseFrame);
  out.insert(out.end(), reason.begin(), reason.end());
}

void begin_bundle(std::vector<std::uint8_t>& out) {
  out.clear();
  out.push_back(kBundleFrame);
}

void append_to_bundle(std::vector<std::uint8_t>& out, std::span<const std::uint8_t> frame) {
  assert(!frame.empty() && frame[0] != kBundleFrame);
  append_bundle_length(out, frame.size());
  out.insert(out.end(), frame.begin(), frame.end());
}

void append_bundle_length(std::vector<std::uint8_t>& out, std::size_t size) {
  assert(size >= 1 && size <= 0xffffffffu);
  FrameWriter writer(out);
  writer.value(static_cast<std::uint32_t>(size), "length");
}

std::uint8_t frame_type(std::span<const std::uint8_t> frame) noexcept { return frame.empty() ? 0 : frame[0]; }

Result<Welcome> read_welcome(std::span<const std::uint8_t> frame) {
  FrameReader in(frame, "welcome");
  Welcome w;
  if (!serialize_welcome(in, w) || !check_welcome(in, w)) return in.status();
  return w;
}

Result<TickFrame> read_tick(std::span<const std::uint8_t> frame) {
  FrameReader in(frame, "tick");
  TickFrame t;
  std::uint16_t count = 0;
  if (!serialize_tick_header(in, t, count)) return in.status();
  t.packets.reserve(count);
  for (std::uint16_t i = 0; i < count; ++i) {
    std::uint16_t length = 0;
    std::span<const std::uint8_t> packet;
    if (!serialize_tick_packet(in, packet, length)) return in.status();
    t.packets.push_back(packet);
  }
  if (in.remaining() != 0) {
    in.refuse_frame("has " + std::to_string(in.remaining()) + " bytes after its last packet, from byte " +
                    std::to_string(in.pos()));
    return in.status();
  }
  return t;
}

Result<std::uint32_t> read_reset(std::span<const std::uint8_t> frame) {
  FrameReader in(frame, "reset");
  std::uint32_t tick = 0;
  if (!serialize_reset(in, tick)) return in.status();
  return tick;
}

Result<std::vector<DebugEntry>> read_debug(std::span<const std::uint8_t> frame, std::uint32_t* tick,
                                           std::uint32_t* members) {
  FrameReader in(frame, "debug");
  std::uint32_t at_tick = 0;
  std::uint32_t member_count = 0;
  std::uint32_t count = 0;
  if (!serialize_debug_header(in, at_tick, member_count, count)) return in.status();
  if (std::uint64_t{count} * kDebugEntryBytes != in.remaining()) {
    in.refuse_at(kDebugCountOffset, "count",
                 "is " + std::to_string(count) + ": needs " +
                     std::to_string(std::uint64_t{count} * kDebugEntryBytes) + " bytes, " +
                     std::to_string(in.remaining()) + " follow");
    return in.status();
  }
  std::vector<DebugEntry> entries(count);
  for (DebugEntry& e : entries) {
    if (!serialize_debug_entry(in, e)) return in.status();
  }
  if (tick != nullptr) *tick = at_tick;
  if (members != nullptr) *members = member_count;
  return entries;
}

Result<WhyAnswer> read_why_answer(std::span<const std::uint8_t> frame) {
  FrameReader in(frame, "why_answer");
  WhyAnswer a;
  if (!serialize_why_answer(in, a) || !check_why_answer(in, a)) return in.status();
  return a;
}

Result<std::string> read_close(std::span<const std::uint8_t> frame) {
  FrameReader in(frame, "close");
  if (!serialize_type(in, kCloseFrame)) return in.status();
  if (in.remaining() > kMaxCloseReasonBytes) {
    in.refuse_frame("reason is " + std::to_string(in.remaining()) + " bytes, above " +
                    std::to_string(kMaxCloseReasonBytes));
    return in.status();
  }
  return std::string(frame.begin() + 1, frame.end());
}

Status read_bundle(std::span<const std::uint8_t> bundle, std::vector<std::span<const std::uint8_t>>& frames) {
  frames.clear();
  FrameReader in(bundle, "bundle");
  const auto refused = [&] {
    frames.clear();
    return in.status();
  };
  if (!serialize_type(in, kBundleFrame)) return refused();
  if (in.remaining() == 0) {
    in.refuse_frame("holds no frame");
    return refused();
  }
  while (in.remaining() != 0) {
    std::uint32_t length = 0;
    std::span<const std::uint8_t> frame;
    if (!in.value(length, "length")) return refused();
    if (length == 0) {
      in.refuse_last("length", "is 0: a frame has a type byte");
      return refused();
    }
    if (length > in.remaining()) {
      in.refuse_last(
          "length", "is " + std::to_string(length) + ": " + std::to_string(in.remaining()) + " bytes follow");
      return refused();
    }
    if (!in.bytes(frame, length, "frame")) return refused();
    if (frame[0] == kBundleFrame) {
      in.refuse_at(in.pos() - length, "frame", "is a bundle: bundles do not nest");
      return refused();
    }
    frames.push_back(frame);
  }
  return {};
}

Result<ClientFrame> read_client_frame(std::span<const std::uint8_t> frame, const ClientLimits& limits) {
  if (frame.empty()) return refuse("empty frame: no type byte");
  ClientFrame f;
  f.type = frame[0];
  std::size_t size = 0;
  switch (f.type) {
    case kMoveFrame: size = kMoveBytes; break;
    case kOptionsFrame: size = kOptionsBytes; break;
    case kRadiusFrame: size = kRadiusBytes; break;
    case kWhyFrame: return refuse("frame type 4 is why, a question and not an input: read_why reads it");
    case kAckFrame: return refuse("frame type 5 is ack, for the library and not an input: read_ack reads it");
    default:
      return refuse("frame type " + std::to_string(f.type) +
                    " is unknown (move 1, options 2, radius 3, why 4, ack 5)");
  }
  const char* name = client_frame_name(f.type);
  if (frame.size() != size) {
    return refuse(std::string(name) + " frame is " + std::to_string(frame.size()) + " bytes, expected " +
                  std::to_string(size));
  }
  FrameReader in(frame, name);
  serialize_client_frame(in, f);  // cannot fail: the type and size are checked
  switch (f.type) {
    case kMoveFrame: {
      const auto inside = [](float v, float top) { return v >= 0.0f && v <= top; };  // false for NaN
      if (!std::isfinite(f.x) || !inside(f.x, limits.width)) {
        return refuse("move frame: x is " + number_text(f.x) + ": outside the world [0, " +
                      number_text(limits.width) + "]");
      }
      if (!std::isfinite(f.z) || !inside(f.z, limits.height)) {
        return refuse("move frame: z is " + number_text(f.z) + ": outside the world [0, " +
                      number_text(limits.height) + "]");
      }
      break;
    }
    case kOptionsFrame:
      if ((f.options & ~kOptionBits) != 0) {
        return refuse("options frame: flags are " + hex(f.options) +
                      ": unknown bits set (only bits 0..2 exist)");
      }
      if ((f.options & kOptionDebug) != 0 && !limits.debug_view_allowed) {
        return refuse("options frame: flags " + hex(f.options) +
                      " ask for debug view (bit 2): the server runs without --debug-view");
      }
      break;
    default:
      if (!(f.enter_radius >= limits.min_radius && f.enter_radius <= limits.max_radius)) {
        return refuse("radius frame: enter radius is " + number_text(f.enter_radius) + ": must be in [" +
                      number_text(limits.min_radius) + ", " + number_text(limits.max_radius) + "]");
      }
      break;
  }
  return f;
}

Result<EntityId> read_why(std::span<const std::uint8_t> frame, const ClientLimits& limits) {
  if (frame.empty()) return refuse("empty frame: no type byte");
  if (frame[0] != kWhyFrame) {
    return refuse("frame type " + std::to_string(frame[0]) + " is not why (" + std::to_string(kWhyFrame) +
                  ")");
  }
  if (frame.size() != kWhyBytes) {
    return refuse("why frame is " + std::to_string(frame.size()) + " bytes, expected " +
                  std::to_string(kWhyBytes));
  }
  if (!limits.debug_view_allowed) {
    return refuse("why frame: asks the debug view, and the server runs without --debug-view");
  }
  FrameReader in(frame.subspan(1), "why");
  EntityId entity;
  serialize_why_question(in, entity);  // cannot fail: the size is checked
  return entity;
}

std::vector<std::uint8_t> encode_move(float x, float z) {
  return encode_client_frame({.type = kMoveFrame, .x = x, .z = z, .options = 0, .enter_radius = 0.0f});
}

std::vector<std::uint8_t> encode_options(std::uint8_t flags) {
  return encode_client_frame({.type = kOptionsFrame, .options = flags, .enter_radius = 0.0f});
}

std::vector<std::uint8_t> encode_radius(float enter_radius) {
  return encode_client_frame({.type = kRadiusFrame, .enter_radius = enter_radius});
}

std::vector<std::uint8_t> encode_why(EntityId entity) {
  std::vector<std::uint8_t> out;
  out.reserve(kWhyBytes);
  FrameWriter writer(out);
  writer.value(kWhyFrame, "type");
  serialize_why_question(writer, entity);
  return out;
}

std::vector<std::uint8_t> encode_ack(std::uint32_t stream, const AckPacket& ack) {
  std::vector<std::uint8_t> out;
  out.reserve(kAckFrameBytes);
  FrameWriter writer(out);
  writer.value(kAckFrame, "type");
  writer.value(stream, "stream");
  out.resize(kAckFrameBytes);
  encode_ack(ack, std::span<std::uint8_t, kAckBytes>(out.data() + 5, kAckBytes));
  return out;
}

Result<AckFrame> read_ack(std::span<const std::uint8_t> frame) {
  if (frame.empty()) return refuse("empty frame: no type byte");
  if (frame[0] != kAckFrame) {
    return refuse("frame type " + std::to_string(frame[0]) + " is not ack (" + std::to_string(kAckFrame) +
                  ")");
  }
  if (frame.size() != kAckFrameBytes) {
    return refuse("ack frame is " + std::to_string(frame.size()) + " bytes, expected " +
                  std::to_string(kAckFrameBytes));
  }
  AckFrame ack;
  FrameReader in(frame.subspan(1, 4), "ack");
  (void)in.value(ack.stream, "stream");  // cannot fail: the size is checked
  ack.packet = frame.subspan(5);
  return ack;
}

}  // namespace sightline::demo
