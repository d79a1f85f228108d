#include "sightline/protocol.h"

#include <string>

namespace sightline {
namespace {

constexpr std::uint8_t kFlagUnreliable = 1;
constexpr std::uint8_t kLastSpawnReason = static_cast<std::uint8_t>(SpawnReason::unculled);
constexpr std::uint8_t kLastDespawnReason = static_cast<std::uint8_t>(DespawnReason::hidden);

std::size_t id_bytes(EntityId e) noexcept { return varint_bytes(e.index) + varint_bytes(e.generation); }

void put_u32(std::uint8_t* p, std::uint32_t v) noexcept {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

std::uint32_t get_u32(const std::uint8_t* p) noexcept {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
         std::uint32_t{p[3]} << 24;
}

/// A bounds-checked cursor over untrusted bytes; the first failure is kept with its offset.
class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}

  bool u8(std::uint8_t& v, const char* what) {
    if (pos_ >= bytes_.size()) return fail(what, "ends before it");
    v = bytes_[pos_++];
    return true;
  }
  bool u16(std::uint32_t& v, const char* what) {
    if (bytes_.size() - pos_ < 2) return fail(what, "ends before it");
    v = std::uint32_t{bytes_[pos_]} | std::uint32_t{bytes_[pos_ + 1]} << 8;
    pos_ += 2;
    return true;
  }
  bool u32(std::uint32_t& v, const char* what) {
    if (bytes_.size() - pos_ < 4) return fail(what, "ends before it");
    v = get_u32(bytes_.data() + pos_);
    pos_ += 4;
    return true;
  }
  bool varint(std::uint32_t& v, const char* what) {
    std::uint64_t value = 0;
    for (int i = 0; i < 5; ++i) {
      if (pos_ >= bytes_.size()) return fail(what, "ends inside a varint");
      const std::uint8_t b = bytes_[pos_++];
      value |= std::uint64_t{b & 0x7fu} << (7 * i);
      if ((b & 0x80u) == 0) {
        if (i > 0 && b == 0) return fail(what, "is an overlong varint");
        if (value > 0xffffffffu) return fail(what, "is a varint above 32 bits");
        v = static_cast<std::uint32_t>(value);
        return true;
      }
    }
    return fail(what, "is a varint longer than 5 bytes");
  }
  bool id(EntityId& e) {
    if (!varint(e.index, "entity index") || !varint(e.generation, "entity generation")) return false;
    if (e.generation == 0) return fail("entity generation", "is 0 (the null handle)");
    return true;
  }
  bool bytes(std::span<const std::uint8_t>& out, std::uint32_t count, const char* what) {
    if (bytes_.size() - pos_ < count) {
      return fail(what, ("of " + std::to_string(count) + " bytes runs past the end").c_str());
    }
    out = bytes_.subspan(pos_, count);
    pos_ += count;
    return true;
  }
  [[nodiscard]] bool done() const { return pos_ == bytes_.size(); }
  [[nodiscard]] std::size_t pos() const { return pos_; }
  bool fail(const char* what, const char* why) {
    if (error_.empty()) error_ = std::string(what) + " at byte " + std::to_string(pos_) + " " + why;
    return false;
  }
  [[nodiscard]] Status status() const { return {ErrorCode::malformed_packet, error_}; }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t pos_ = 0;
  std::string error_;
};

}  // namespace

std::size_t spawn_record_bytes(std::uint32_t reliable_id, EntityId entity, std::size_t payload,
                               std::uint32_t state_age) noexcept {
  return 1 + varint_bytes(reliable_id) + id_bytes(entity) + 1 + varint_bytes(state_age) +
         varint_bytes(static_cast<std::uint32_t>(payload)) + payload;
}

std::size_t update_record_bytes(EntityId entity, std::size_t payload) noexcept {
  return 1 + id_bytes(entity) + varint_bytes(static_cast<std::uint32_t>(payload)) + payload;
}

std::size_t despawn_record_bytes(std::uint32_t reliable_id, EntityId entity) noexcept {
  return 1 + varint_bytes(reliable_id) + id_bytes(entity) + 1;
}

PacketWriter::PacketWriter(std::span<std::uint8_t> buffer, const PacketHeader& header) noexcept
    : buffer_(buffer) {
  if (buffer.size() < kStateHeaderBytes) {
    buffer_ = {};
    return;
  }
  std::uint8_t* p = buffer.data();
  p[0] = kProtocolVersion;
  p[1] = static_cast<std::uint8_t>(PacketKind::state);
  p[2] = header.delivery == Delivery::unreliable ? kFlagUnreliable : 0;
  put_u32(p + 3, header.sequence);
  put_u32(p + 7, header.tick);
  tick_ = header.tick;
  put_u32(p + 11, header.reliable_next);
  p[15] = 0;
  p[16] = 0;
  size_ = kStateHeaderBytes;
}

void PacketWriter::put_varint(std::uint32_t v) noexcept {
  while (v >= 0x80u) {
    put_u8(static_cast<std::uint8_t>(v | 0x80u));
    v >>= 7;
  }
  put_u8(static_cast<std::uint8_t>(v));
}

void PacketWriter::put_id(EntityId e) noexcept {
  put_varint(e.index);
  put_varint(e.generation);
}

bool PacketWriter::add_spawn(std::uint32_t reliable_id, EntityId entity, SpawnReason reason,
                             std::span<const std::uint8_t> payload, std::uint32_t state_age) noexcept {
  if (entity.is_null() || records_ == kMaxRecordsPerPacket || payload.size() > 0xffffffffu ||
      state_age > tick_ || spawn_record_bytes(reliable_id, entity, payload.size(), state_age) > room()) {
    return false;
  }
  put_u8(static_cast<std::uint8_t>(RecordType::spawn));
  put_varint(reliable_id);
  put_id(entity);
  put_u8(static_cast<std::uint8_t>(reason));
  put_varint(state_age);
  put_varint(static_cast<std::uint32_t>(payload.size()));
  for (const std::uint8_t b : payload) put_u8(b);
  ++records_;
  return true;
}

bool PacketWriter::add_update(EntityId entity, std::span<const std::uint8_t> payload) noexcept {
  if (entity.is_null() || records_ == kMaxRecordsPerPacket || payload.size() > 0xffffffffu ||
      update_record_bytes(entity, payload.size()) > room()) {
    return false;
  }
  put_u8(static_cast<std::uint8_t>(RecordType::update));
  put_id(entity);
  put_varint(static_cast<std::uint32_t>(payload.size()));
  for (const std::uint8_t b : payload) put_u8(b);
  ++records_;
  return true;
}

bool PacketWriter::add_despawn(std::uint32_t reliable_id, EntityId entity, DespawnReason reason) noexcept {
  if (entity.is_null() || records_ == kMaxRecordsPerPacket ||
      despawn_record_bytes(reliable_id, entity) > room()) {
    return false;
  }
  put_u8(static_cast<std::uint8_t>(RecordType::despawn));
  put_varint(reliable_id);
  put_id(entity);
  put_u8(static_cast<std::uint8_t>(reason));
  ++records_;
  return true;
}

bool PacketWriter::add(const WireRecord& r) noexcept {
  switch (r.type) {
    case RecordType::spawn:
      return add_spawn(r.reliable_id, r.entity, static_cast<SpawnReason>(r.reason), r.payload, r.state_age);
    case RecordType::update: return add_update(r.entity, r.payload);
    case RecordType::despawn:
      return add_despawn(r.reliable_id, r.entity, static_cast<DespawnReason>(r.reason));
  }
  return false;
}

std::span<const std::uint8_t> PacketWriter::finish() noexcept {
  if (size_ == 0) return {};
  buffer_[15] = static_cast<std::uint8_t>(records_);
  buffer_[16] = static_cast<std::uint8_t>(records_ >> 8);
  return buffer_.first(size_);
}

Status decode_packet(std::span<const std::uint8_t> bytes, DecodedPacket& out) {
  out.records.clear();
  Reader in(bytes);
  std::uint8_t version = 0;
  std::uint8_t kind = 0;
  std::uint8_t flags = 0;
  if (!in.u8(version, "version")) return in.status();
  if (version != kProtocolVersion) {
    return {ErrorCode::malformed_packet, "version at byte 0 is " + std::to_string(version) + ", expected " +
                                             std::to_string(kProtocolVersion)};
  }
  if (!in.u8(kind, "kind")) return in.status();
  if (kind != static_cast<std::uint8_t>(PacketKind::state)) {
    return {ErrorCode::malformed_packet,
            "kind at byte 1 is " + std::to_string(kind) + ", expected 1 (state)"};
  }
  if (!in.u8(flags, "flags")) return in.status();
  if ((flags & ~kFlagUnreliable) != 0) {
    return {ErrorCode::malformed_packet,
            "flags at byte 2 are " + std::to_string(flags) + ": unknown bits set"};
  }
  PacketHeader& h = out.header;
  h.delivery = (flags & kFlagUnreliable) != 0 ? Delivery::unreliable : Delivery::reliable;
  std::uint32_t count = 0;
  if (!in.u32(h.sequence, "sequence") || !in.u32(h.tick, "tick") ||
      !in.u32(h.reliable_next, "reliable_next") || !in.u16(count, "record count")) {
    return in.status();
  }
  // Every record takes at least 3 bytes: a count the bytes cannot hold is refused before any
  // memory is reserved for it.
  if (count > (bytes.size() - in.pos()) / 3) {
    return {ErrorCode::malformed_packet, "record count " + std::to_string(count) +
                                             " at byte 15 exceeds what " + std::to_string(bytes.size()) +
                                             " bytes can hold"};
  }
  out.records.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    WireRecord r;
    std::uint8_t type = 0;
    if (!in.u8(type, "record type")) return in.status();
    std::uint32_t length = 0;
    switch (type) {
      case static_cast<std::uint8_t>(RecordType::spawn):
        r.type = RecordType::spawn;
        if (!in.varint(r.reliable_id, "reliable id") || !in.id(r.entity) ||
            !in.u8(r.reason, "spawn reason")) {
          return in.status();
        }
        if (r.reason > kLastSpawnReason) {
          in.fail("spawn reason", ("is " + std::to_string(r.reason) + ", above 8").c_str());
          return in.status();
        }
        if (!in.varint(r.state_age, "state age")) return in.status();
        if (r.state_age > h.tick) {
          in.fail("state age", ("is " + std::to_string(r.state_age) + ", beyond the packet's tick " +
                                std::to_string(h.tick))
                                   .c_str());
          return in.status();
        }
        if (!in.varint(length, "payload length") || !in.bytes(r.payload, length, "payload"))
          return in.status();
        break;
      case static_cast<std::uint8_t>(RecordType::update):
        r.type = RecordType::update;
        if (!in.id(r.entity) || !in.varint(length, "payload length") ||
            !in.bytes(r.payload, length, "payload")) {
          return in.status();
        }
        break;
      case static_cast<std::uint8_t>(RecordType::despawn):
        r.type = RecordType::despawn;
        if (!in.varint(r.reliable_id, "reliable id") || !in.id(r.entity) ||
            !in.u8(r.reason, "despawn reason")) {
          return in.status();
        }
        if (r.reason > kLastDespawnReason) {
          in.fail("despawn reason", ("is " + std::to_string(r.reason) + ", above 5").c_str());
          return in.status();
        }
        break;
      default:
        in.fail("record type", ("is " + std::to_string(type) + ", not 1, 2 or 3").c_str());
        return in.status();
    }
    out.records.push_back(r);
  }
  if (!in.done()) {
    in.fail("packet",
            ("has " + std::to_string(bytes.size() - in.pos()) + " bytes after its last record").c_str());
    return in.status();
  }
  return {};
}

void encode_ack(const AckPacket& ack, std::span<std::uint8_t, kAckBytes> out) noexcept {
  out[0] = kProtocolVersion;
  out[1] = static_cast<std::uint8_t>(PacketKind::ack);
  put_u32(out.data() + 2, ack.latest_sequence);
  put_u32(out.data() + 6, ack.reliable_applied);
}

Result<AckPacket> decode_ack(std::span<const std::uint8_t> bytes) {
  if (bytes.size() != kAckBytes) {
    return Status{ErrorCode::malformed_packet, "ack packet is " + std::to_string(bytes.size()) +
                                                   " bytes, expected " + std::to_string(kAckBytes)};
  }
  if (bytes[0] != kProtocolVersion) {
    return Status{ErrorCode::malformed_packet, "version at byte 0 is " + std::to_string(bytes[0]) +
                                                   ", expected " + std::to_string(kProtocolVersion)};
  }
  if (bytes[1] != static_cast<std::uint8_t>(PacketKind::ack)) {
    return Status{ErrorCode::malformed_packet,
                  "kind at byte 1 is " + std::to_string(bytes[1]) + ", expected 2 (ack)"};
  }
  return AckPacket{get_u32(bytes.data() + 2), get_u32(bytes.data() + 6)};
}

}  // namespace sightline
