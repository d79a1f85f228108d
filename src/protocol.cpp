// The wire format, written once: each part of a packet is one serialize function over the
// streams of wire_stream.h, which PacketWriter writes with, the *_record_bytes functions measure
// with, and decode_packet and decode_ack read with.
#include "sightline/protocol.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "bit_cast.h"
#include "format_value.h"
#include "wire_stream.h"

namespace sightline {
namespace {

/// A spawn's reason byte: the SpawnReason in bits 0..6, `created` in bit 7.
constexpr std::uint8_t kSpawnCreated = 0x80;
/// An event's flags.
constexpr std::uint8_t kEventReliable = 1;
constexpr std::uint8_t kEventSubject = 2;
/// A delta update's flags.
constexpr std::uint8_t kUpdateKeep = 1;
constexpr std::uint8_t kUpdateDelta = 2;
constexpr std::uint8_t kLastSpawnReason = static_cast<std::uint8_t>(SpawnReason::unculled);
constexpr std::uint8_t kLastDespawnReason = static_cast<std::uint8_t>(DespawnReason::hidden);
/// The shortest record: a message with a one-byte reliable id and an empty payload (type, id,
/// length). An update takes 4 at least, a spawn or despawn 5.
constexpr std::size_t kMinRecordBytes = 3;

/// The version and kind every packet starts with.
template <class S>
constexpr bool serialize_prefix(S& s, PacketKind expected, const char* kind_name) {
  std::uint8_t version = kProtocolVersion;
  auto kind = static_cast<std::uint8_t>(expected);
  if (!s.u8(version, "version")) return false;
  if constexpr (S::reading) {
    if (version != kProtocolVersion) {
      return s.refuse_at(kVersionOffset, "version",
                         "is " + std::to_string(version) + ", expected " + std::to_string(kProtocolVersion));
    }
  }
  if (!s.u8(kind, "kind")) return false;
  if constexpr (S::reading) {
    if (kind != static_cast<std::uint8_t>(expected)) {
      return s.refuse_at(kKindOffset, "kind",
                         "is " + std::to_string(kind) + ", expected " +
                             std::to_string(static_cast<int>(expected)) + " (" + kind_name + ")");
    }
  }
  return true;
}

/// The client's interest status: its culling flag is a bit of `flags` (serialize_state_header),
/// then the pending count and the radius's IEEE-754 bits.
template <class S>
constexpr bool serialize_interest(S& s, InterestStatus& interest) {
  auto radius_bits = bit_cast<std::uint32_t>(interest.radius);
  if (!s.u32(interest.pending, "pending") || !s.u32(radius_bits, "radius")) return false;
  if constexpr (S::reading) {
    interest.radius = bit_cast<float>(radius_bits);
    if (interest.culling && !(std::isfinite(interest.radius) && interest.radius > 0.0f)) {
      return s.refuse_at(kRadiusOffset, "radius",
                         "is " + format_value(interest.radius) + ": culling needs a finite radius > 0");
    }
    if (!interest.culling && radius_bits != 0) {
      return s.refuse_at(kRadiusOffset, "radius",
                         "is " + format_value(interest.radius) + " (bits " + std::to_string(radius_bits) +
                             "): without culling it must be 0");
    }
  }
  return true;
}

/// A state packet's header; `record_count` is written as given (PacketWriter::finish patches it).
template <class S>
constexpr bool serialize_state_header(S& s, PacketHeader& h, std::uint32_t& record_count) {
  std::uint8_t flags = static_cast<std::uint8_t>((h.delivery == Delivery::unreliable ? kFlagUnreliable : 0) |
                                                 (h.interest.culling ? kFlagCulling : 0));
  if (!serialize_prefix(s, PacketKind::state, "state") || !s.u8(flags, "flags")) return false;
  if constexpr (S::reading) {
    if ((flags & ~(kFlagUnreliable | kFlagCulling)) != 0) {
      return s.refuse_at(kFlagsOffset, "flags", "are " + std::to_string(flags) + ": unknown bits set");
    }
    h.delivery = (flags & kFlagUnreliable) != 0 ? Delivery::unreliable : Delivery::reliable;
    h.interest.culling = (flags & kFlagCulling) != 0;
  }
  return s.u32(h.sequence, "sequence") && s.u32(h.tick, "tick") && s.u32(h.reliable_next, "reliable_next") &&
         serialize_interest(s, h.interest) && s.u16(record_count, "record count");
}

template <class S>
constexpr bool serialize_reason(S& s, std::uint8_t& reason, std::uint8_t last, const char* what) {
  if (!s.u8(reason, what)) return false;
  if constexpr (S::reading) {
    if (reason > last) {
      return s.refuse_at(s.pos() - 1, what,
                         "is " + std::to_string(reason) + ", above " + std::to_string(last));
    }
  }
  return true;
}

template <class S>
constexpr bool serialize_state_age(S& s, std::uint32_t& state_age, std::uint32_t packet_tick) {
  std::size_t at = 0;  // where the field starts, for a refusal
  if constexpr (S::reading) at = s.pos();
  if (!s.varint(state_age, "state age")) return false;
  if constexpr (S::reading) {
    if (state_age > packet_tick) {
      return s.refuse_at(
          at, "state age",
          "is " + std::to_string(state_age) + ", beyond the packet's tick " + std::to_string(packet_tick));
    }
  }
  return true;
}

/// A payload: its length, then its bytes. A measurer needs only the length.
template <class S>
constexpr bool serialize_payload(S& s, std::span<const std::uint8_t>& payload, std::uint32_t& length) {
  return s.varint(length, "payload length") && s.bytes(payload, length, "payload");
}

/// A spawn's reason and whether the entity was created, in one byte.
template <class S>
constexpr bool serialize_spawn_reason(S& s, WireRecord& r) {
  auto byte = static_cast<std::uint8_t>(r.reason | (r.created ? kSpawnCreated : 0));
  if (!s.u8(byte, "spawn reason")) return false;
  if constexpr (S::reading) {
    r.created = (byte & kSpawnCreated) != 0;
    r.reason = static_cast<std::uint8_t>(byte & ~kSpawnCreated);
    if (r.reason > kLastSpawnReason) {
      return s.refuse_at(s.pos() - 1, "spawn reason",
                         "is " + std::to_string(r.reason) + ", above " + std::to_string(kLastSpawnReason));
    }
  }
  return true;
}

template <class S>
constexpr bool serialize_spawn(S& s, WireRecord& r, std::uint32_t& payload_length,
                               std::uint32_t packet_tick) {
  return s.varint(r.reliable_id, "reliable id") && s.id(r.entity) && serialize_spawn_reason(s, r) &&
         serialize_state_age(s, r.state_age, packet_tick) && serialize_payload(s, r.payload, payload_length);
}

/// A refresh: a spawn's fields but its reason.
template <class S>
constexpr bool serialize_refresh(S& s, WireRecord& r, std::uint32_t& payload_length,
                                 std::uint32_t packet_tick) {
  return s.varint(r.reliable_id, "reliable id") && s.id(r.entity) &&
         serialize_state_age(s, r.state_age, packet_tick) && serialize_payload(s, r.payload, payload_length);
}

/// One coordinate of an event: an IEEE-754 single, finite and within kMaxCoordinate.
template <class S>
constexpr bool serialize_coordinate(S& s, float& v, const char* what) {
  std::size_t at = 0;
  if constexpr (S::reading) at = s.pos();
  auto bits = bit_cast<std::uint32_t>(v);
  if (!s.u32(bits, what)) return false;
  if constexpr (S::reading) {
    v = bit_cast<float>(bits);
    if (!(std::isfinite(v) && std::fabs(v) <= kMaxCoordinate)) {
      return s.refuse_at(at, what, "is " + format_value(v) + ": must be finite, within 1e15");
    }
  }
  return true;
}

/// An event: flags (bit 0 reliable, bit 1 a subject follows), the reliable id and age when
/// reliable, the class, the position, the subject when there is one, the payload.
template <class S>
constexpr bool serialize_event(S& s, WireRecord& r, std::uint32_t& payload_length,
                               std::uint32_t packet_tick) {
  auto flags =
      static_cast<std::uint8_t>((r.reliable ? kEventReliable : 0) | (r.entity.is_null() ? 0 : kEventSubject));
  if (!s.u8(flags, "event flags")) return false;
  if constexpr (S::reading) {
    if ((flags & ~(kEventReliable | kEventSubject)) != 0) {
      return s.refuse_at(s.pos() - 1, "event flags", "are " + std::to_string(flags) + ": unknown bits set");
    }
    r.reliable = (flags & kEventReliable) != 0;
  }
  if (r.reliable &&
      !(s.varint(r.reliable_id, "reliable id") && serialize_state_age(s, r.state_age, packet_tick))) {
    return false;
  }
  if (!s.varint(r.event_class, "event class") || !serialize_coordinate(s, r.x, "event x") ||
      !serialize_coordinate(s, r.z, "event z")) {
    return false;
  }
  if ((flags & kEventSubject) != 0 && !s.id(r.entity)) return false;
  return serialize_payload(s, r.payload, payload_length);
}

template <class S>
constexpr bool serialize_message(S& s, WireRecord& r, std::uint32_t& payload_length) {
  return s.varint(r.reliable_id, "reliable id") && serialize_payload(s, r.payload, payload_length);
}

template <class S>
constexpr bool serialize_update(S& s, WireRecord& r, std::uint32_t& payload_length) {
  return s.id(r.entity) && serialize_payload(s, r.payload, payload_length);
}

/// Why delta runs of a `size`-byte state do not decode, or null when they do: each run is a
/// varint count of kept bytes, a varint count (>= 1) of changed bytes, then those bytes, and the
/// runs end within the state.
const char* delta_runs_error(std::span<const std::uint8_t> runs, std::uint32_t size) noexcept;

/// A delta update: flags (bit 0 keep, bit 1 delta), the entity, then either the state as a
/// payload, or the base age, the state's length and the delta runs as a payload.
template <class S>
constexpr bool serialize_delta_update(S& s, WireRecord& r, std::uint32_t& payload_length,
                                      std::uint32_t packet_tick) {
  auto flags = static_cast<std::uint8_t>((r.keep ? kUpdateKeep : 0) | (r.base_age != 0 ? kUpdateDelta : 0));
  if (!s.u8(flags, "update flags")) return false;
  if constexpr (S::reading) {
    if ((flags & ~(kUpdateKeep | kUpdateDelta)) != 0) {
      return s.refuse_at(s.pos() - 1, "update flags", "are " + std::to_string(flags) + ": unknown bits set");
    }
    r.keep = (flags & kUpdateKeep) != 0;
  }
  if (!s.id(r.entity)) return false;
  if ((flags & kUpdateDelta) == 0) {
    if (!serialize_payload(s, r.payload, payload_length)) return false;
    if constexpr (S::reading) r.state_size = payload_length;
    return true;
  }
  std::size_t at = 0;
  if constexpr (S::reading) at = s.pos();
  if (!s.varint(r.base_age, "base age")) return false;
  if constexpr (S::reading) {
    if (r.base_age == 0 || r.base_age > packet_tick) {
      return s.refuse_at(at, "base age",
                         "is " + std::to_string(r.base_age) + ": must be in [1, the packet's tick " +
                             std::to_string(packet_tick) + "]");
    }
  }
  if constexpr (S::reading) at = s.pos();
  if (!s.varint(r.state_size, "state length")) return false;
  if constexpr (S::reading) {
    if (r.state_size > kMaxDeltaStateBytes) {
      return s.refuse_at(at, "state length",
                         "is " + std::to_string(r.state_size) + ": must be at most " +
                             std::to_string(kMaxDeltaStateBytes) + " (a packet's largest state)");
    }
  }
  if (!s.varint(payload_length, "delta length")) return false;
  if constexpr (S::reading) at = s.pos();
  if (!s.bytes(r.payload, payload_length, "delta")) return false;
  if constexpr (S::reading) {
    if (const char* why = delta_runs_error(r.payload, r.state_size); why != nullptr) {
      return s.refuse_at(at, "delta", why);
    }
  }
  return true;
}

template <class S>
constexpr bool serialize_despawn(S& s, WireRecord& r) {
  return s.varint(r.reliable_id, "reliable id") && s.id(r.entity) &&
         serialize_reason(s, r.reason, kLastDespawnReason, "despawn reason");
}

/// One record: its type byte, then its fields. `payload_length` is r.payload's length (spawns and
/// updates; a measurer takes it without the bytes); a reader checks a spawn's state age against
/// `packet_tick`.
template <class S>
constexpr bool serialize_record(S& s, WireRecord& r, std::uint32_t& payload_length,
                                std::uint32_t packet_tick) {
  auto type = static_cast<std::uint8_t>(r.type);
  if (!s.u8(type, "record type")) return false;
  r.type = static_cast<RecordType>(type);  // a reader refuses an unknown type below
  switch (r.type) {
    case RecordType::spawn: return serialize_spawn(s, r, payload_length, packet_tick);
    case RecordType::update: return serialize_update(s, r, payload_length);
    case RecordType::despawn: return serialize_despawn(s, r);
    case RecordType::event: return serialize_event(s, r, payload_length, packet_tick);
    case RecordType::message: return serialize_message(s, r, payload_length);
    case RecordType::delta_update: return serialize_delta_update(s, r, payload_length, packet_tick);
    case RecordType::refresh: return serialize_refresh(s, r, payload_length, packet_tick);
  }
  if constexpr (S::reading) {
    return s.refuse_at(s.pos() - 1, "record type", "is " + std::to_string(type) + ", not 1 to 7");
  }
  return false;
}

template <class S>
constexpr bool serialize_ack(S& s, AckPacket& ack) {
  return serialize_prefix(s, PacketKind::ack, "ack") && s.u32(ack.latest_sequence, "latest sequence") &&
         s.u32(ack.reliable_applied, "reliable applied") && s.u32(ack.received, "received");
}

// The header sizes and offsets protocol.h names, checked against the serializers at compile time.

constexpr std::size_t state_header_offset(std::string_view field) {
  WireFieldFinder find(field);
  PacketHeader header;
  std::uint32_t record_count = 0;
  serialize_state_header(find, header, record_count);
  return find.offset();
}
constexpr std::size_t ack_offset(std::string_view field) {
  WireFieldFinder find(field);
  AckPacket ack;
  serialize_ack(find, ack);
  return find.offset();
}
static_assert(state_header_offset("version") == kVersionOffset && ack_offset("version") == kVersionOffset);
static_assert(state_header_offset("kind") == kKindOffset && ack_offset("kind") == kKindOffset);
static_assert(state_header_offset("flags") == kFlagsOffset);
static_assert(state_header_offset("sequence") == kSequenceOffset);
static_assert(state_header_offset("tick") == kTickOffset);
static_assert(state_header_offset("reliable_next") == kReliableNextOffset);
static_assert(state_header_offset("pending") == kPendingOffset);
static_assert(state_header_offset("radius") == kRadiusOffset);
static_assert(state_header_offset("record count") == kRecordCountOffset);
static_assert(state_header_offset({}) == kStateHeaderBytes);
static_assert(ack_offset("latest sequence") == kAckLatestSequenceOffset);
static_assert(ack_offset("reliable applied") == kAckReliableAppliedOffset);
static_assert(ack_offset("received") == kAckReceivedOffset);
static_assert(ack_offset({}) == kAckBytes);

// update_record_bytes (protocol.h) spells out serialize_update's layout for the packet filler,
// which asks it for every update of a send: checked against the serializer at the varints' edges.
constexpr std::size_t measured_update_bytes(EntityId entity, std::uint32_t payload) {
  WireFieldFinder measure({});
  WireRecord record{.type = RecordType::update, .entity = entity, .payload = {}};
  serialize_record(measure, record, payload, 0);
  return measure.offset();
}
static_assert(measured_update_bytes({1, 1}, 0) == update_record_bytes({1, 1}, 0));
static_assert(measured_update_bytes({127, 128}, 127) == update_record_bytes({127, 128}, 127));
static_assert(measured_update_bytes({16384, 0xffffffffu}, 300) ==
              update_record_bytes({16384, 0xffffffffu}, 300));

std::size_t measure_record(WireRecord record, std::size_t payload) noexcept {
  auto length = static_cast<std::uint32_t>(payload);
  WireMeasurer measure;
  serialize_record(measure, record, length, 0);
  return measure.pos();
}

/// A varint of `runs` from `at`, as WireReader reads one; false where it does not decode.
bool read_run_varint(std::span<const std::uint8_t> runs, std::size_t& at, std::uint32_t& v) noexcept {
  std::uint64_t value = 0;
  for (int i = 0; i < 5; ++i) {
    if (at >= runs.size()) return false;
    const std::uint8_t b = runs[at++];
    value |= std::uint64_t{b & 0x7fu} << (7 * i);
    if ((b & 0x80u) == 0) {
      if ((i > 0 && b == 0) || value > 0xffffffffu) return false;
      v = static_cast<std::uint32_t>(value);
      return true;
    }
  }
  return false;
}

const char* delta_runs_error(std::span<const std::uint8_t> runs, std::uint32_t size) noexcept {
  std::size_t at = 0;
  std::uint64_t end = 0;  // of the state covered so far
  while (at < runs.size()) {
    std::uint32_t kept = 0;
    std::uint32_t changed = 0;
    if (!read_run_varint(runs, at, kept) || !read_run_varint(runs, at, changed)) {
      return "has a run count that is not a varint (overlong, above 32 bits, or cut off)";
    }
    if (changed == 0) return "has a run of 0 changed bytes";
    end += std::uint64_t{kept} + changed;
    if (end > size) return "has runs past the state's length";
    if (runs.size() - at < changed) return "has a run whose changed bytes run past its end";
    at += changed;
  }
  return nullptr;
}

void put_run_varint(std::uint8_t* out, std::size_t& at, std::uint32_t v) noexcept {
  while (v >= 0x80u) {
    out[at++] = static_cast<std::uint8_t>(v | 0x80u);
    v >>= 7;
  }
  out[at++] = static_cast<std::uint8_t>(v);
}

}  // namespace

std::size_t write_delta_runs(std::span<const std::uint8_t> base, std::span<const std::uint8_t> state,
                             std::span<std::uint8_t> out) noexcept {
  const auto differs = [&](std::size_t i) { return i >= base.size() || state[i] != base[i]; };
  const auto same_word = [&](std::size_t i) {  // 8 bytes from i, all inside both
    std::uint64_t x = 0;
    std::uint64_t y = 0;
    std::memcpy(&x, state.data() + i, 8);
    std::memcpy(&y, base.data() + i, 8);
    return x == y;
  };
  // Bytes after the last change are the base's (the runs' tail): find where they start, a word
  // at a time, and scan only up to there.
  std::size_t n = state.size();
  if (n <= base.size()) {
    while (n >= 8 && same_word(n - 8)) n -= 8;
    while (n > 0 && !differs(n - 1)) --n;
  }
  std::size_t at = 0;
  std::size_t p = 0;  // the state written so far
  for (;;) {
    std::size_t first = p;
    while (first + 8 <= n && first + 8 <= base.size() && same_word(first)) first += 8;
    while (first < n && !differs(first)) ++first;
    if (first == n) break;
    // The changed run goes on over gaps of up to 2 kept bytes: a new run would cost as much.
    std::size_t end = first;
    while (end < n) {
      if (differs(end)) {
        ++end;
        continue;
      }
      std::size_t gap = end;
      while (gap < n && gap - end < 3 && !differs(gap)) ++gap;
      if (gap < n && gap - end <= 2 && differs(gap)) {
        end = gap;
        continue;
      }
      break;
    }
    put_run_varint(out.data(), at, static_cast<std::uint32_t>(first - p));
    put_run_varint(out.data(), at, static_cast<std::uint32_t>(end - first));
    std::memcpy(out.data() + at, state.data() + first, end - first);
    at += end - first;
    p = end;
  }
  return at;
}

bool apply_delta_runs(std::span<const std::uint8_t> base, std::span<const std::uint8_t> runs,
                      std::span<std::uint8_t> out) noexcept {
  std::size_t at = 0;
  std::size_t p = 0;
  const auto keep = [&](std::size_t count) {
    if (count == 0) return true;
    if (count > out.size() - p || p + count > base.size()) return false;
    std::memcpy(out.data() + p, base.data() + p, count);
    p += count;
    return true;
  };
  while (at < runs.size()) {
    std::uint32_t kept = 0;
    std::uint32_t changed = 0;
    if (!read_run_varint(runs, at, kept) || !read_run_varint(runs, at, changed) || changed == 0) return false;
    if (!keep(kept) || changed > out.size() - p || changed > runs.size() - at) return false;
    std::memcpy(out.data() + p, runs.data() + at, changed);
    p += changed;
    at += changed;
  }
  return keep(out.size() - p);
}

bool operator==(const WireRecord& a, const WireRecord& b) noexcept {
  return a.type == b.type && a.entity == b.entity && a.reliable_id == b.reliable_id && a.reason == b.reason &&
         a.created == b.created && a.state_age == b.state_age && a.reliable == b.reliable &&
         a.event_class == b.event_class && bit_cast<std::uint32_t>(a.x) == bit_cast<std::uint32_t>(b.x) &&
         bit_cast<std::uint32_t>(a.z) == bit_cast<std::uint32_t>(b.z) && a.keep == b.keep &&
         a.base_age == b.base_age && (a.base_age == 0 || a.state_size == b.state_size) &&
         std::equal(a.payload.begin(), a.payload.end(), b.payload.begin(), b.payload.end());
}

std::size_t spawn_record_bytes(std::uint32_t reliable_id, EntityId entity, std::size_t payload,
                               std::uint32_t state_age) noexcept {
  return measure_record({.type = RecordType::spawn,
                         .entity = entity,
                         .reliable_id = reliable_id,
                         .state_age = state_age,
                         .payload = {}},
                        payload);
}

std::size_t refresh_record_bytes(std::uint32_t reliable_id, EntityId entity, std::size_t payload,
                                 std::uint32_t state_age) noexcept {
  // A spawn's fields but its reason byte, which always takes one.
  return spawn_record_bytes(reliable_id, entity, payload, state_age) - 1;
}

std::size_t delta_update_record_bytes(EntityId entity, std::uint32_t base_age, std::uint32_t state_size,
                                      std::size_t payload) noexcept {
  return measure_record({.type = RecordType::delta_update,
                         .entity = entity,
                         .payload = {},
                         .base_age = base_age,
                         .state_size = state_size},
                        payload);
}

std::size_t despawn_record_bytes(std::uint32_t reliable_id, EntityId entity) noexcept {
  return measure_record(
      {.type = RecordType::despawn, .entity = entity, .reliable_id = reliable_id, .payload = {}}, 0);
}

std::size_t event_record_bytes(bool reliable, std::uint32_t reliable_id, std::uint32_t age,
                               std::uint32_t event_class, EntityId subject, std::size_t payload) noexcept {
  return measure_record({.type = RecordType::event,
                         .entity = subject,
                         .reliable_id = reliable_id,
                         .state_age = age,
                         .reliable = reliable,
                         .event_class = event_class,
                         .payload = {}},
                        payload);
}

std::size_t message_record_bytes(std::uint32_t reliable_id, std::size_t payload) noexcept {
  return measure_record(
      {.type = RecordType::message, .entity = {}, .reliable_id = reliable_id, .payload = {}}, payload);
}

PacketWriter::PacketWriter(std::span<std::uint8_t> buffer, const PacketHeader& header) noexcept
    : buffer_(buffer) {
  const InterestStatus& interest = header.interest;
  const bool radius_ok = interest.culling ? std::isfinite(interest.radius) && interest.radius > 0.0f
                                          : bit_cast<std::uint32_t>(interest.radius) == 0;
  if (buffer.size() < kStateHeaderBytes || !radius_ok) {
    buffer_ = {};
    return;
  }
  PacketHeader fields = header;
  std::uint32_t record_count = 0;
  WireWriter out(buffer_);
  serialize_state_header(out, fields, record_count);
  tick_ = header.tick;
  size_ = out.pos();
}

bool PacketWriter::add_record(WireRecord& record) noexcept {
  auto length = static_cast<std::uint32_t>(record.payload.size());
  WireMeasurer measure;
  serialize_record(measure, record, length, tick_);
  if (measure.pos() > room()) return false;
  WireWriter out(buffer_.subspan(size_));
  serialize_record(out, record, length, tick_);
  size_ += out.pos();
  ++records_;
  return true;
}

bool PacketWriter::add_spawn(std::uint32_t reliable_id, EntityId entity, SpawnReason reason, bool created,
                             std::span<const std::uint8_t> payload, std::uint32_t state_age) noexcept {
  if (entity.is_null() || records_ == kMaxRecordsPerPacket || payload.size() > 0xffffffffu ||
      state_age > tick_ || static_cast<std::uint8_t>(reason) > kLastSpawnReason) {
    return false;
  }
  WireRecord record{.type = RecordType::spawn,
                    .entity = entity,
                    .reliable_id = reliable_id,
                    .reason = static_cast<std::uint8_t>(reason),
                    .created = created,
                    .state_age = state_age,
                    .payload = payload};
  return add_record(record);
}

bool PacketWriter::add_refresh(std::uint32_t reliable_id, EntityId entity,
                               std::span<const std::uint8_t> payload, std::uint32_t state_age) noexcept {
  if (entity.is_null() || records_ == kMaxRecordsPerPacket || payload.size() > 0xffffffffu ||
      state_age > tick_) {
    return false;
  }
  WireRecord record{.type = RecordType::refresh,
                    .entity = entity,
                    .reliable_id = reliable_id,
                    .state_age = state_age,
                    .payload = payload};
  return add_record(record);
}

bool PacketWriter::add_update(EntityId entity, std::span<const std::uint8_t> payload) noexcept {
  if (entity.is_null() || records_ == kMaxRecordsPerPacket || payload.size() > 0xffffffffu) return false;
  // A send writes a million of these: where the largest framing fits, the exact size is not
  // needed; near the end of the packet it is found by arithmetic rather than a measuring pass.
  constexpr std::size_t kLargestFraming = 1 + 5 + 5 + 5;  // type, index, generation, length
  static_assert(update_record_bytes({0xFFFFFFFFu, 0xFFFFFFFFu}, 0xFFFFFFFFu) - 0xFFFFFFFFu ==
                kLargestFraming);
  if (room() < kLargestFraming + payload.size() && update_record_bytes(entity, payload.size()) > room()) {
    return false;
  }
  WireRecord record{.type = RecordType::update, .entity = entity, .payload = payload};
  auto length = static_cast<std::uint32_t>(payload.size());
  WireWriter out(buffer_.subspan(size_));
  serialize_record(out, record, length, tick_);
  size_ += out.pos();
  ++records_;
  return true;
}

std::size_t encode_update_record(std::span<std::uint8_t> out, EntityId entity,
                                 std::span<const std::uint8_t> payload) noexcept {
  if (entity.is_null() || payload.size() > 0xffffffffu) return 0;
  const std::size_t size = update_record_bytes(entity, payload.size());
  if (size > out.size()) return 0;
  WireRecord record{.type = RecordType::update, .entity = entity, .payload = payload};
  auto length = static_cast<std::uint32_t>(payload.size());
  WireWriter writer(out);
  serialize_record(writer, record, length, 0);
  return writer.pos();
}

std::size_t encode_delta_update_record(std::span<std::uint8_t> out, EntityId entity, bool keep,
                                       std::uint32_t base_age, std::uint32_t state_size,
                                       std::span<const std::uint8_t> payload) noexcept {
  if (entity.is_null() || payload.size() > 0xffffffffu) return 0;
  const std::size_t size = delta_update_record_bytes(entity, base_age, state_size, payload.size());
  if (size > out.size()) return 0;
  WireRecord record{.type = RecordType::delta_update,
                    .entity = entity,
                    .payload = payload,
                    .keep = keep,
                    .base_age = base_age,
                    .state_size = state_size};
  auto length = static_cast<std::uint32_t>(payload.size());
  WireWriter writer(out);
  serialize_record(writer, record, length, 0);
  return writer.pos();
}

bool PacketWriter::add_delta_update(EntityId entity, bool keep, std::uint32_t base_age,
                                    std::uint32_t state_size,
                                    std::span<const std::uint8_t> payload) noexcept {
  if (entity.is_null() || records_ == kMaxRecordsPerPacket || payload.size() > 0xffffffffu ||
      base_age > tick_ ||
      (base_age != 0 &&
       (state_size > kMaxDeltaStateBytes || delta_runs_error(payload, state_size) != nullptr))) {
    return false;
  }
  WireRecord record{.type = RecordType::delta_update,
                    .entity = entity,
                    .payload = payload,
                    .keep = keep,
                    .base_age = base_age,
                    .state_size = state_size};
  return add_record(record);
}

bool PacketWriter::add_despawn(std::uint32_t reliable_id, EntityId entity, DespawnReason reason) noexcept {
  if (entity.is_null() || records_ == kMaxRecordsPerPacket ||
      static_cast<std::uint8_t>(reason) > kLastDespawnReason) {
    return false;
  }
  WireRecord record{.type = RecordType::despawn,
                    .entity = entity,
                    .reliable_id = reliable_id,
                    .reason = static_cast<std::uint8_t>(reason),
                    .payload = {}};
  return add_record(record);
}

bool PacketWriter::add_event(bool reliable, std::uint32_t reliable_id, std::uint32_t age,
                             std::uint32_t event_class, float x, float z, EntityId subject,
                             std::span<const std::uint8_t> payload) noexcept {
  if (records_ == kMaxRecordsPerPacket || payload.size() > 0xffffffffu || !std::isfinite(x) ||
      !std::isfinite(z) || std::fabs(x) > kMaxCoordinate || std::fabs(z) > kMaxCoordinate ||
      (reliable && age > tick_)) {
    return false;
  }
  WireRecord record{.type = RecordType::event,
                    .entity = subject,
                    .reliable_id = reliable ? reliable_id : 0,
                    .state_age = reliable ? age : 0,
                    .reliable = reliable,
                    .event_class = event_class,
                    .x = x,
                    .z = z,
                    .payload = payload};
  return add_record(record);
}

bool PacketWriter::add_message(std::uint32_t reliable_id, std::span<const std::uint8_t> payload) noexcept {
  if (records_ == kMaxRecordsPerPacket || payload.size() > 0xffffffffu) return false;
  WireRecord record{
      .type = RecordType::message, .entity = {}, .reliable_id = reliable_id, .payload = payload};
  return add_record(record);
}

bool PacketWriter::add(const WireRecord& r) noexcept {
  switch (r.type) {
    case RecordType::spawn:
      return add_spawn(r.reliable_id, r.entity, static_cast<SpawnReason>(r.reason), r.created, r.payload,
                       r.state_age);
    case RecordType::update: return add_update(r.entity, r.payload);
    case RecordType::despawn:
      return add_despawn(r.reliable_id, r.entity, static_cast<DespawnReason>(r.reason));
    case RecordType::event:
      return add_event(r.reliable, r.reliable_id, r.state_age, r.event_class, r.x, r.z, r.entity, r.payload);
    case RecordType::message: return add_message(r.reliable_id, r.payload);
    case RecordType::delta_update:
      return add_delta_update(r.entity, r.keep, r.base_age, r.state_size, r.payload);
    case RecordType::refresh: return add_refresh(r.reliable_id, r.entity, r.payload, r.state_age);
  }
  return false;
}

std::span<const std::uint8_t> PacketWriter::finish() noexcept {
  if (size_ == 0) return {};
  WireWriter(buffer_.subspan(kRecordCountOffset)).u16(records_, "record count");
  return buffer_.first(size_);
}

Status decode_packet(std::span<const std::uint8_t> bytes, DecodedPacket& out) {
  out.records.clear();
  WireReader in(bytes);
  std::uint32_t count = 0;
  if (!serialize_state_header(in, out.header, count)) return in.status();
  // A count the bytes cannot hold is refused before any memory is reserved for it.
  if (count > in.remaining() / kMinRecordBytes) {
    in.refuse_with("record count " + std::to_string(count) + " at byte " +
                   std::to_string(kRecordCountOffset) + " exceeds what " + std::to_string(bytes.size()) +
                   " bytes can hold");
    return in.status();
  }
  out.records.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    WireRecord record;
    std::uint32_t payload_length = 0;
    if (!serialize_record(in, record, payload_length, out.header.tick)) return in.status();
    out.records.push_back(record);
  }
  if (in.remaining() != 0) {
    in.refuse("packet", "has " + std::to_string(in.remaining()) + " bytes after its last record");
    return in.status();
  }
  return {};
}

void encode_ack(const AckPacket& ack, std::span<std::uint8_t, kAckBytes> out) noexcept {
  AckPacket fields = ack;
  WireWriter writer(out);
  serialize_ack(writer, fields);
}

Result<AckPacket> decode_ack(std::span<const std::uint8_t> bytes) {
  if (bytes.size() != kAckBytes) {
    return Status{ErrorCode::malformed_packet, "ack packet is " + std::to_string(bytes.size()) +
                                                   " bytes, expected " + std::to_string(kAckBytes)};
  }
  AckPacket ack;
  WireReader in(bytes);
  if (!serialize_ack(in, ack)) return in.status();
  return ack;
}

}  // namespace sightline
