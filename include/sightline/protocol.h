// The wire format (docs/protocol.md describes every byte): state packets from server to client,
// ack packets back. This header encodes and decodes them; the Replicator writes state packets
// and the ClientMirror applies them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "sightline/export.h"
#include "sightline/handles.h"
#include "sightline/limits.h"
#include "sightline/status.h"
#include "sightline/stream.h"

namespace sightline {

/// The first byte of every packet. A decoder refuses any other.
inline constexpr std::uint8_t kProtocolVersion = 2;
/// Bytes of a state packet before its first record.
inline constexpr std::size_t kStateHeaderBytes = 25;
/// Bytes of an ack packet.
inline constexpr std::size_t kAckBytes = 14;
/// The largest state a delta update may rebuild, bytes: the most a packet's payload can hold
/// (kMaxPacketBytes less the header), so a kept state is never larger than a whole one.
inline constexpr std::size_t kMaxDeltaStateBytes = kMaxPacketBytes - kStateHeaderBytes;

/// Byte offsets of the header fields (docs/protocol.md). Every packet starts with its version
/// and kind; a state packet's fields follow, then its records from kStateHeaderBytes; an ack's
/// two fields follow and end it. Multi-byte fields are little-endian.
inline constexpr std::size_t kVersionOffset = 0;
inline constexpr std::size_t kKindOffset = 1;
inline constexpr std::size_t kFlagsOffset = 2;               ///< State: u8.
inline constexpr std::size_t kSequenceOffset = 3;            ///< State: u32.
inline constexpr std::size_t kTickOffset = 7;                ///< State: u32.
inline constexpr std::size_t kReliableNextOffset = 11;       ///< State: u32, PacketHeader::reliable_next.
inline constexpr std::size_t kPendingOffset = 15;            ///< State: u32, InterestStatus::pending.
inline constexpr std::size_t kRadiusOffset = 19;             ///< State: f32 bits, InterestStatus::radius.
inline constexpr std::size_t kRecordCountOffset = 23;        ///< State: u16.
inline constexpr std::size_t kAckLatestSequenceOffset = 2;   ///< Ack: u32.
inline constexpr std::size_t kAckReliableAppliedOffset = 6;  ///< Ack: u32.
inline constexpr std::size_t kAckReceivedOffset = 10;        ///< Ack: u32, AckPacket::received.

/// Bits of a state packet's flags byte (kFlagsOffset); the others are 0.
inline constexpr std::uint8_t kFlagUnreliable = 1;  ///< Delivery::unreliable.
inline constexpr std::uint8_t kFlagCulling = 2;     ///< InterestStatus::culling.

enum class PacketKind : std::uint8_t { state = 1, ack = 2 };
enum class RecordType : std::uint8_t {
  spawn = 1,
  update = 2,
  despawn = 3,
  event = 4,
  message = 5,
  /// An update the client may keep as a baseline, and that may be written as a delta against one
  /// it kept (ReplicatorDef::delta_updates).
  delta_update = 6,
  /// The full state again of an entity the client holds, reliable: sent when an entity its state
  /// refers to (Stream::serialize_entity) reached the client, so that the reference resolves.
  refresh = 7,
};

/// How a client's packets travel.
enum class Delivery : std::uint8_t {
  /// An ordered, reliable channel (WebSocket, TCP): every packet arrives once, in order. Each
  /// spawn and despawn is sent once; a gap in sequence or reliable id is an anomaly.
  reliable = 0,
  /// Datagrams (UDP) that may be lost, duplicated or reordered. Spawns and despawns are resent
  /// until a client's ack covers them and are applied in reliable-id order; updates are sent
  /// once, and one that does not match what the client holds is dropped, never applied.
  unreliable = 1,
};

/// What a client's interest promises it, as of a send: whether its space culls, the radius
/// within which it holds every entity once nothing is pending, and how many entities are still on
/// their way. Every state packet carries it.
struct InterestStatus {
  /// The client's space culls by distance at the packet's tick. false: the client is sent every
  /// entity of its space (culling off, or a broadcasting space), and `radius` is 0.
  bool culling = false;
  /// World units, finite and > 0 while culling (ReplicatorDef::promise_fraction of the client's
  /// enter radius: its space's, or its view radius, World::client_radii), else 0. Once `pending`
  /// is 0 every entity within it of the client's origins (times the entity's radius scale, to
  /// its bounding sphere) is held (docs/bandwidth.md states for which speeds).
  float radius = 0.0f;
  /// Members of the client's set whose spawn had not been written by the end of the send.
  std::uint32_t pending = 0;

  friend constexpr bool operator==(const InterestStatus&, const InterestStatus&) noexcept = default;
};

/// The fixed part of a state packet.
struct PacketHeader {
  Delivery delivery = Delivery::reliable;
  std::uint32_t sequence = 0;  ///< Per client, +1 per packet, from 0.
  std::uint32_t tick = 0;      ///< Low 32 bits of the server tick the packet's states are from.
  /// Reliable ids below this were assigned before the packet was written: a client that has
  /// applied exactly these holds what the server believed it held when it wrote the updates.
  std::uint32_t reliable_next = 0;
  /// The client's interest as of the end of the send the packet belongs to.
  InterestStatus interest;

  friend constexpr bool operator==(const PacketHeader&, const PacketHeader&) noexcept = default;
};

/// One record as decoded. `payload` points into the decoded bytes.
struct WireRecord {
  RecordType type = RecordType::update;
  /// The entity a spawn, update or despawn is of; an event's subject, null when it has none.
  EntityId entity;
  /// Spawns, despawns, reliable events and messages: their place in the reliable order.
  std::uint32_t reliable_id = 0;
  std::uint8_t reason = 0;  ///< SpawnReason or DespawnReason.
  /// Spawns: the entity was created at the tick it joined the client's set (play its appearance);
  /// false when it stood there already and came into view (play nothing).
  bool created = false;
  /// Spawns and refreshes: how many ticks before the packet's tick its state was written (0 but
  /// for one resent with the state it first went with). Reliable events: how many ticks before the
  /// packet's tick the event happened (0 but when resent). <= the packet's tick.
  std::uint32_t state_age = 0;
  /// Events: sent reliably (resent until acknowledged, applied in reliable order) or once.
  bool reliable = false;
  std::uint32_t event_class = 0;  ///< Events: the index of the class's EventClassId.
  float x = 0.0f;                 ///< Events: where it happened, world units.
  float z = 0.0f;
  /// Spawns and refreshes (full state), updates (the update part), events (what the game's event serializer
  /// wrote) and messages (the game's bytes). A delta update: its state, or with base_age > 0 its
  /// delta runs (apply_delta_runs rebuilds the state from them).
  std::span<const std::uint8_t> payload;
  /// Delta updates: the client keeps the state as a baseline, named by the packet's tick.
  bool keep = false;
  /// Delta updates: 0 when the payload is the state; else the payload is written against the
  /// state the client kept from the packet of tick (packet tick - base_age). 1..packet tick.
  std::uint32_t base_age = 0;
  /// Delta updates with base_age > 0: the state's length in bytes.
  std::uint32_t state_size = 0;

  /// Equal fields and equal payload bytes, wherever each payload lies.
  friend bool operator==(const WireRecord& a, const WireRecord& b) noexcept;
};
SIGHTLINE_API bool operator==(const WireRecord& a, const WireRecord& b) noexcept;

/// A decoded state packet. Reuse one: decode_packet keeps the records' capacity.
struct DecodedPacket {
  PacketHeader header;
  std::vector<WireRecord> records;

  friend bool operator==(const DecodedPacket&, const DecodedPacket&) = default;
};

/// What a client sends back under unreliable delivery (and may send under reliable).
struct AckPacket {
  std::uint32_t latest_sequence = 0;   ///< Highest state-packet sequence received.
  std::uint32_t reliable_applied = 0;  ///< Spawns and despawns applied: the next reliable id expected.
  /// Bit i: packet latest_sequence - i arrived and every state in it the server asked the
  /// client to keep was kept (delta updates confirm their baselines by it). 0 says nothing.
  std::uint32_t received = 0;

  friend constexpr bool operator==(const AckPacket&, const AckPacket&) noexcept = default;
};

/// Bytes a LEB128 varint of `value` takes (1..5).
[[nodiscard]] constexpr std::size_t varint_bytes(std::uint32_t value) noexcept {
  std::size_t n = 1;
  while (value >= 0x80u) {
    value >>= 7;
    ++n;
  }
  return n;
}
/// Bytes of a spawn, update and despawn record with these fields.
[[nodiscard]] SIGHTLINE_API std::size_t spawn_record_bytes(std::uint32_t reliable_id, EntityId entity,
                                                           std::size_t payload,
                                                           std::uint32_t state_age = 0) noexcept;
/// Bytes of a refresh record (a spawn's fields but its reason).
[[nodiscard]] SIGHTLINE_API std::size_t refresh_record_bytes(std::uint32_t reliable_id, EntityId entity,
                                                             std::size_t payload,
                                                             std::uint32_t state_age = 0) noexcept;
/// (An update is its type byte, the entity's index and generation, the payload's length and bytes.)
[[nodiscard]] constexpr std::size_t update_record_bytes(EntityId entity, std::size_t payload) noexcept {
  return 1 + varint_bytes(entity.index) + varint_bytes(entity.generation) +
         varint_bytes(static_cast<std::uint32_t>(payload)) + payload;
}
[[nodiscard]] SIGHTLINE_API std::size_t despawn_record_bytes(std::uint32_t reliable_id,
                                                             EntityId entity) noexcept;
/// Bytes of a message record (its type, reliable id, the payload's length and bytes).
[[nodiscard]] SIGHTLINE_API std::size_t message_record_bytes(std::uint32_t reliable_id,
                                                             std::size_t payload) noexcept;
/// Bytes of an event record: `reliable_id` and `age` count only when `reliable`, `subject` only
/// when not null.
[[nodiscard]] SIGHTLINE_API std::size_t event_record_bytes(bool reliable, std::uint32_t reliable_id,
                                                           std::uint32_t age, std::uint32_t event_class,
                                                           EntityId subject, std::size_t payload) noexcept;

/// Bytes of a delta update record: `payload` is the state where base_age is 0, else its delta runs
/// of a `state_size`-byte state.
[[nodiscard]] SIGHTLINE_API std::size_t delta_update_record_bytes(EntityId entity, std::uint32_t base_age,
                                                                  std::uint32_t state_size,
                                                                  std::size_t payload) noexcept;

/// Delta runs: how a delta update writes a state against a baseline of the same entity
/// (docs/protocol.md). Pairs of (bytes equal to the baseline's at the same place, bytes that
/// differ and follow), varints and the differing bytes, up to the last difference; what follows it
/// equals the baseline. A state longer than its baseline differs in every byte past its end.
/// Writes the runs of `state` against `base` into `out` (which holds at least
/// delta_runs_bound(state.size()) bytes) and returns their size.
SIGHTLINE_API std::size_t write_delta_runs(std::span<const std::uint8_t> base,
                                           std::span<const std::uint8_t> state,
                                           std::span<std::uint8_t> out) noexcept;
/// The most bytes write_delta_runs may take for a state of `size` bytes.
[[nodiscard]] constexpr std::size_t delta_runs_bound(std::size_t size) noexcept { return 2 * size + 2; }
/// Rebuilds a state of out.size() bytes from `base` and `runs` into `out`: false (out unspecified)
/// where the runs do not decode, run past out.size(), or keep bytes beyond the end of `base`.
[[nodiscard]] SIGHTLINE_API bool apply_delta_runs(std::span<const std::uint8_t> base,
                                                  std::span<const std::uint8_t> runs,
                                                  std::span<std::uint8_t> out) noexcept;

/// Writes an update record of `entity` with `payload` into `out` and returns its size
/// (update_record_bytes), or 0 with nothing written where `out` is too small, the entity is null or
/// the payload is longer than 2^32 - 1 bytes. A server that sends one entity's update to many
/// clients encodes it once and hands the same bytes to each client's PacketWriter::add_encoded_update.
SIGHTLINE_API std::size_t encode_update_record(std::span<std::uint8_t> out, EntityId entity,
                                               std::span<const std::uint8_t> payload) noexcept;
/// The same for a delta update (delta_update_record_bytes): its size, or 0 with nothing written
/// where `out` is too small, the entity is null or the payload is longer than 2^32 - 1 bytes.
SIGHTLINE_API std::size_t encode_delta_update_record(std::span<std::uint8_t> out, EntityId entity, bool keep,
                                                     std::uint32_t base_age, std::uint32_t state_size,
                                                     std::span<const std::uint8_t> payload) noexcept;

/// Writes one state packet into a caller's buffer. Each add_* refuses (false, nothing written)
/// a record that does not fit, a null entity, a reason outside its enum, or a packet already at
/// kMaxRecordsPerPacket.
class SIGHTLINE_API PacketWriter {
 public:
  /// Starts a packet; `buffer` must hold at least kStateHeaderBytes and header.interest must be
  /// one a decoder accepts (a radius finite and > 0 while culling, +0 otherwise), else every add
  /// fails and finish() is empty. A spawn's state_age may not exceed header.tick.
  PacketWriter(std::span<std::uint8_t> buffer, const PacketHeader& header) noexcept;

  bool add_spawn(std::uint32_t reliable_id, EntityId entity, SpawnReason reason, bool created,
                 std::span<const std::uint8_t> payload, std::uint32_t state_age = 0) noexcept;
  bool add_update(EntityId entity, std::span<const std::uint8_t> payload) noexcept;
  /// A refresh: the entity's full state again, reliable (RecordType::refresh).
  bool add_refresh(std::uint32_t reliable_id, EntityId entity, std::span<const std::uint8_t> payload,
                   std::uint32_t state_age = 0) noexcept;
  /// A delta update: `payload` is the state where base_age is 0, else its delta runs of a
  /// state_size-byte state against the baseline kept from tick (packet tick - base_age). Refuses
  /// base_age beyond the packet's tick, and runs that do not decode.
  bool add_delta_update(EntityId entity, bool keep, std::uint32_t base_age, std::uint32_t state_size,
                        std::span<const std::uint8_t> payload) noexcept;
  bool add_despawn(std::uint32_t reliable_id, EntityId entity, DespawnReason reason) noexcept;
  /// An event (the reliable id and age are written only when `reliable`; `subject` may be null).
  /// Refuses a position that is not finite or beyond kMaxCoordinate, or an age beyond the
  /// packet's tick, besides what every add refuses.
  bool add_event(bool reliable, std::uint32_t reliable_id, std::uint32_t age, std::uint32_t event_class,
                 float x, float z, EntityId subject, std::span<const std::uint8_t> payload) noexcept;
  /// Adds an update record as encode_update_record or encode_delta_update_record wrote it, its
  /// bytes unchanged: the same packet bytes as add_update or add_delta_update with its fields.
  /// Refuses (false, nothing written) bytes that do not start with an update's type, a record
  /// that does not fit, or a full packet.
  bool add_encoded_update(std::span<const std::uint8_t> record) noexcept;
  /// A message: the game's bytes, reliable and in order with the spawns and despawns.
  bool add_message(std::uint32_t reliable_id, std::span<const std::uint8_t> payload) noexcept;
  /// Adds a record as decode_packet gives it (its type picks the call above).
  bool add(const WireRecord& record) noexcept;

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t room() const noexcept { return buffer_.size() - size_; }
  [[nodiscard]] std::uint32_t records() const noexcept { return records_; }
  /// The packet's bytes (the record count patched in). Valid while the buffer is.
  [[nodiscard]] std::span<const std::uint8_t> finish() noexcept;

 private:
  static void copy_record(std::uint8_t* to, const std::uint8_t* from, std::size_t count) noexcept;
  bool add_record(WireRecord& record) noexcept;

  std::span<std::uint8_t> buffer_;
  std::size_t size_ = 0;
  std::uint32_t records_ = 0;
  std::uint32_t tick_ = 0;
};

// A send appends a million of these: inline.
inline bool PacketWriter::add_encoded_update(std::span<const std::uint8_t> record) noexcept {
  if (record.empty() ||
      (record[0] != static_cast<std::uint8_t>(RecordType::update) &&
       record[0] != static_cast<std::uint8_t>(RecordType::delta_update)) ||
      records_ == kMaxRecordsPerPacket || record.size() > room()) {
    return false;
  }
  copy_record(buffer_.data() + size_, record.data(), record.size());
  size_ += record.size();
  ++records_;
  return true;
}

inline void PacketWriter::copy_record(std::uint8_t* to, const std::uint8_t* from,
                                      std::size_t count) noexcept {
  // Most records are a few bytes: two overlapping fixed-size copies beat a call to memcpy.
  if (count > 16) {
    std::memcpy(to, from, count);
  } else if (count >= 8) {
    std::memcpy(to, from, 8);
    std::memcpy(to + count - 8, from + count - 8, 8);
  } else if (count >= 4) {
    std::memcpy(to, from, 4);
    std::memcpy(to + count - 4, from + count - 4, 4);
  } else {
    for (std::size_t i = 0; i < count; ++i) to[i] = from[i];
  }
}

/// Decodes a state packet, checking every byte: version, kind, flags, the interest status (a
/// radius finite and > 0 while culling, 0 otherwise), the record count, each record's type, an
/// event's flags and position (finite, within kMaxCoordinate), varints (at most
/// 5 bytes, no overlong form, no value above 32 bits), a non-zero generation, a known reason, a spawn's or
/// refresh's state age within the packet's tick, payload lengths within the packet, and no bytes after the
/// last record. On failure returns malformed_packet with the offset and the reason, and `out` holds nothing
/// that may be used.
[[nodiscard]] SIGHTLINE_API Status decode_packet(std::span<const std::uint8_t> bytes, DecodedPacket& out);

/// Writes an ack packet: exactly kAckBytes bytes.
SIGHTLINE_API void encode_ack(const AckPacket& ack, std::span<std::uint8_t, kAckBytes> out) noexcept;
/// Decodes an ack packet (malformed_packet on any wrong byte or length).
[[nodiscard]] SIGHTLINE_API Result<AckPacket> decode_ack(std::span<const std::uint8_t> bytes);

}  // namespace sightline
