// The frames shards of one world exchange every tick (the SLF1 format, docs/shard-frames.md):
// copies of entities near a border (ghosts), their withdrawal, handovers of entities and clients,
// events near a border and holder counts, each entity named by its external id. Frames come from
// other processes: the decoder checks every byte before anything is used and names the offset of
// the first one it refuses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sightline/client_image.h"
#include "sightline/export.h"
#include "sightline/interest_keys.h"
#include "sightline/region_map.h"
#include "sightline/status.h"
#include "sightline/stream.h"

namespace sightline {

/// The first byte of every shard frame.
inline constexpr std::uint8_t kShardFrameVersion = 1;
/// Largest shard frame, bytes (a keyframe holds a shard's whole audience for a peer).
inline constexpr std::size_t kMaxShardFrameBytes = std::size_t{1} << 24;
/// Largest payload, game blob or Replicator part in one record, bytes.
inline constexpr std::size_t kMaxShardRecordBytes = 65535;

/// A frame's kind.
enum class ShardFrameKind : std::uint8_t {
  tick = 0,      ///< The records of one tick for one peer.
  keyframe = 1,  ///< Every entity of the sender's audience for the peer, to heal a gap.
};

/// Who sent a frame to whom, for which tick.
struct ShardFrameHeader {
  ShardFrameKind kind = ShardFrameKind::tick;
  ShardId from = 0;
  ShardId to = 0;
  std::uint64_t tick = 0;
  std::uint64_t frame_seq = 0;     ///< Per (from, to) link, rising by one a frame: a gap is a loss.
  std::uint64_t region_epoch = 0;  ///< The RegionMapDef::epoch the sender decided with.
  friend bool operator==(const ShardFrameHeader&, const ShardFrameHeader&) = default;
};

/// An entity's state as its owner holds it after the game's inputs of the tick: what a copy
/// (a ghost) on another shard is made of, and what it is updated from.
struct EntityImage {
  std::uint64_t id = 0;           ///< External id, != 0.
  ShardId owner = 0;              ///< The shard with authority over it.
  std::uint64_t owner_epoch = 0;  ///< Rises by one at each handover of it.
  bool always_relevant = false;
  bool presenter = false;
  bool teleported = false;  ///< Teleported since the last tick.
  bool created = false;     ///< Created since the last tick: a copy's first spawns say `created`.
  /// Carried with a client handover: a member of the client the receiver may not otherwise hold
  /// (the old neighbourhood after a far teleport), used only where the receiver has no copy.
  bool carried = false;
  float x = 0.0f;  ///< Raw float32, so the copy is bit-identical: finite, |x| <= kMaxCoordinate.
  float z = 0.0f;
  float vx = 0.0f;  ///< Velocity, finite, |v| <= kMaxCoordinate per axis.
  float vz = 0.0f;
  float bound_radius = 0.0f;             ///< In [0, kMaxRadius].
  float radius_scale = 1.0f;             ///< In [kMinRadiusScale, kMaxRadiusScale].
  InterestKey key;                       ///< Its interest key (a User key's value != 0).
  std::uint32_t space = 0;               ///< The number the shards give its space.
  std::uint64_t parent = 0;              ///< The external id of what it is attached to; 0 for a root.
  std::uint64_t owner_client = 0;        ///< The client that owns it (a cluster-wide client id); 0 for none.
  std::uint64_t full_revision = 0;       ///< Rises when its full state changes.
  bool has_full = false;                 ///< `full` holds the full state (on ghost-in and when it changed).
  std::span<const std::uint8_t> full;    ///< At most kMaxShardRecordBytes.
  std::span<const std::uint8_t> update;  ///< Its update state of this tick.
  std::span<const std::uint8_t> blob;    ///< The game's own server-side data for a copy; may be empty.
};

/// A copy is no longer needed by the receiver: it leaves (`left`) or was destroyed (`destroyed`).
struct GhostOut {
  std::uint64_t id = 0;
  DespawnReason reason = DespawnReason::left;  ///< left or destroyed.
  friend bool operator==(const GhostOut&, const GhostOut&) = default;
};

/// Authority over an entity's tree passes to the receiver at this frame's tick; its image is an
/// EntityImage record of the same frame.
struct EntityHandover {
  std::uint64_t id = 0;
  ShardId to = 0;
  std::uint64_t epoch = 0;  ///< The entity's owner_epoch after the handover.
  friend bool operator==(const EntityHandover&, const EntityHandover&) = default;
};

/// A client passes to the receiver: its World part, its Replicator part (opaque bytes), and the
/// last input the sender applied for it.
struct ClientHandover {
  std::uint64_t client = 0;  ///< The cluster-wide client id, != 0.
  ShardId to = 0;
  std::uint64_t last_input_seq = 0;
  ClientImage world;
  std::span<const std::uint8_t> replicator;  ///< At most kMaxShardRecordBytes.
};

/// An event emitted near a border, for the receiver to emit into its World before the tick.
struct RemoteEvent {
  std::uint32_t event_class = 0;  ///< The number the shards give the class.
  float x = 0.0f;                 ///< Finite, |x| <= kMaxCoordinate.
  float z = 0.0f;
  std::uint32_t space = 0;
  std::uint64_t subject = 0;  ///< External id; 0 for none.
  std::uint64_t user_data = 0;
  std::uint64_t emit_order = 0;  ///< Its place among the sender's events of the tick.
  friend bool operator==(const RemoteEvent&, const RemoteEvent&) = default;
};

/// How many of the sender's clients hold a copy of the receiver's entity.
struct HolderCount {
  std::uint64_t id = 0;
  std::uint32_t count = 0;
  friend bool operator==(const HolderCount&, const HolderCount&) = default;
};

/// Record kinds, by their type byte.
enum class ShardRecordType : std::uint8_t {
  entity_image = 1,
  ghost_out = 2,
  entity_handover = 3,
  client_handover = 4,
  remote_event = 5,
  holder_count = 6,
};

/// A frame, decoded or to encode. The records of each kind are in their own list; `order` says
/// how they interleave in the frame (kind, then index into that kind's list), since records apply
/// in frame order. A decoded frame's byte spans point into the bytes it was decoded from.
struct ShardFrame {
  struct Entry {
    ShardRecordType type = ShardRecordType::entity_image;
    std::uint32_t index = 0;
    friend bool operator==(const Entry&, const Entry&) = default;
  };
  ShardFrameHeader header;
  std::vector<Entry> order;
  std::vector<EntityImage> images;
  std::vector<GhostOut> ghost_outs;
  std::vector<EntityHandover> entity_handovers;
  std::vector<ClientHandover> client_handovers;
  std::vector<RemoteEvent> events;
  std::vector<HolderCount> holder_counts;

  /// Empties every list, keeping their storage.
  void clear() noexcept;
  /// Appends a record at the end of the frame's order.
  void add(const EntityImage& r);
  void add(const GhostOut& r);
  void add(const EntityHandover& r);
  void add(const ClientHandover& r);
  void add(const RemoteEvent& r);
  void add(const HolderCount& r);
};

/// Writes `frame` to `out` (replacing its contents): the header, the records in `order`, and an
/// end record with the record count and an FNV-1a digest of every byte before it. Refused
/// (invalid_argument, naming the record and field) when a record breaks a rule its decoder
/// checks, or the frame would exceed kMaxShardFrameBytes; `out` is then empty.
[[nodiscard]] SIGHTLINE_API Status encode_shard_frame(const ShardFrame& frame,
                                                      std::vector<std::uint8_t>& out);

/// Reads a frame into `frame` (cleared first; its spans then point into `bytes`), checking every
/// field: the version, varints in their one shortest form, the ranges above, known record types
/// and reasons, the record count and digest of the end record, and that nothing follows it.
/// Refused (malformed_packet) with the offset and field of the first fault; `frame` is then
/// empty.
[[nodiscard]] SIGHTLINE_API Status decode_shard_frame(std::span<const std::uint8_t> bytes, ShardFrame& frame);

}  // namespace sightline
