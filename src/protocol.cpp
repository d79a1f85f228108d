// The wire format, written once: each part of a packet is one serialize function over the
// streams of wire_stream.h, which PacketWriter writes with, the *_record_bytes functions measure
// with, and decode_packet and decode_ack read with.
#include "sightline/protocol.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

#include "format_value.h"
#include "wire_stream.h"

namespace sightline {
namespace {

/// A spawn's reason byte: the SpawnReason in bits 0..6, `created` in bit 7.
constexpr std::uint8_t kSpawnCreated = 0x80;
/// An event's flags.
constexpr std::uint8_t kEventReliable = 1;
constexpr std::uint8_t kEventSubject = 2;
constexpr std::uint8_t kLastSpawnReason = static_cast<std::uint8_t>(SpawnReason::unculled);
constexpr std::uint8_t kLastDespawnReason = static_cast<std::uint8_t>(DespawnReason::hidden);
/// The shortest record: an update of one-byte index and generation with an empty payload (type,
/// index, generation, length). A spawn or despawn takes 5 at least.
constexpr std::size_t kMinRecordBytes = 4;

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
  auto radius_bits = std::bit_cast<std::uint32_t>(interest.radius);
  if (!s.u32(interest.pending, "pending") || !s.u32(radius_bits, "radius")) return false;
  if constexpr (S::reading) {
    interest.radius = std::bit_cast<float>(radius_bits);
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

/// One coordinate of an event: an IEEE-754 single, finite and within kMaxCoordinate.
template <class S>
constexpr bool serialize_coordinate(S& s, float& v, const char* what) {
  std::size_t at = 0;
  if constexpr (S::reading) at = s.pos();
  auto bits = std::bit_cast<std::uint32_t>(v);
  if (!s.u32(bits, what)) return false;
  if constexpr (S::reading) {
    v = std::bit_cast<float>(bits);
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
  }
  if constexpr (S::reading) {
    return s.refuse_at(s.pos() - 1, "record type", "is " + std::to_string(type) + ", not 1 to 5");
  }
  return false;
}

template <class S>
constexpr bool serialize_ack(S& s, AckPacket& ack) {
  return serialize_prefix(s, PacketKind::ack, "ack") && s.u32(ack.latest_sequence, "latest sequence") &&
         s.u32(ack.reliable_applied, "reliable applied");
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

}  // namespace

bool operator==(const WireRecord& a, const WireRecord& b) noexcept {
  return a.type == b.type && a.entity == b.entity && a.reliable_id == b.reliable_id && a.reason == b.reason &&
         a.created == b.created && a.state_age == b.state_age && a.reliable == b.reliable &&
         a.event_class == b.event_class &&
         std::bit_cast<std::uint32_t>(a.x) == std::bit_cast<std::uint32_t>(b.x) &&
         std::bit_cast<std::uint32_t>(a.z) == std::bit_cast<std::uint32_t>(b.z) &&
         std::ranges::equal(a.payload, b.payload);
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
                                          : std::bit_cast<std::uint32_t>(interest.radius) == 0;
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
