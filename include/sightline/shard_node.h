// One shard of a world served by several processes: it drives its World from the game's inputs
// for the entities it owns and from the frames of the other shards (shard_frame.h), so that its
// clients hold what one process serving the whole world would give them. Transport-agnostic: the
// caller carries the bytes of outgoing() to the other shards and hands what arrives to receive().
//
// A tick, on every shard alike (lockstep):
//   1. the game's inputs for the tick, on entities this shard owns (set_position, teleport, ...);
//   2. begin_tick(): authority moves (an owned root beyond the hysteresis of this shard's cells
//      goes to the cell's owner, with the clients viewing from it), and one frame for every other
//      shard: a copy (EntityImage) of every owned entity within the band of its cells, the
//      withdrawal of copies it no longer needs, handovers;
//   3. the frames of tick t from every other shard, through receive(), in any order, duplicates
//      dropped;
//   4. once ready(), tick(): the frames applied in two passes, each in shard order then record
//      order (first the owners' images, handovers and withdrawals; then the members carried with
//      client handovers where no copy came from an owner, the adopted clients and the events),
//      then World::tick().
// What the World sees of a copy is an entity whose external id, position and flags continue, so
// no client sees a despawn and spawn from a handover. Entities need external ids and the World
// OrderKey::external; every shard's World starts at the same tick (WorldDef::first_tick).
//
// Copies carry position, velocity, bound, radius scale, always-relevant and presenter flags,
// interest key and owning client; events near a border reach the clients across it. Extra
// origins, attachments and spaces other than the default one are not carried yet. A lost frame is asked for
// again (missing(), resend()); the barrier waits for it.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "sightline/export.h"
#include "sightline/region_map.h"
#include "sightline/shard_frame.h"
#include "sightline/status.h"
#include "sightline/world.h"

namespace sightline {

/// What a ShardNode is.
struct ShardNodeDef {
  ShardId self = 0;  ///< This shard's id in the region map.
  /// The tick the node runs first: the World's WorldDef::first_tick, the same on every shard.
  std::uint64_t first_tick = 0;
};

/// Frames for one other shard from the last begin_tick(). Valid until the next begin_tick().
struct OutFrame {
  ShardId to = 0;
  std::span<const std::uint8_t> bytes;
};

/// Counts since the node was created.
struct ShardNodeStats {
  std::uint64_t images_sent = 0;         ///< EntityImage records written.
  std::uint64_t ghost_outs_sent = 0;     ///< Copies withdrawn at other shards.
  std::uint64_t entity_handovers = 0;    ///< Entities this shard handed to others.
  std::uint64_t client_handovers = 0;    ///< Clients this shard handed to others.
  std::uint64_t frames_received = 0;     ///< Frames accepted by receive().
  std::uint64_t duplicates_dropped = 0;  ///< Frames received twice.
  std::uint64_t resends = 0;             ///< Frames this shard sent again (resend()).
  /// Members of an adopted client that were not here (left out of its set): 0 while the band is
  /// wide enough (RegionMapDef::band).
  std::uint64_t members_missing = 0;
  /// Copies withdrawn that a client here held at the last tick (it despawns them `left` at this
  /// tick, as one process does when the band is wide enough).
  std::uint64_t withdrawn_while_held = 0;
  /// Members carried with a client handover that a client here still held after the tick (kept
  /// with no owner sending updates): 0 while the band is wide enough.
  std::uint64_t carried_held = 0;
  /// Records of received frames the World refused (a copy it could not create, a client image it
  /// could not adopt): 0 between shards that agree.
  std::uint64_t records_refused = 0;
  std::uint64_t events_sent = 0;      ///< RemoteEvent records written.
  std::uint64_t events_received = 0;  ///< Remote events emitted into this shard's World.
  std::uint64_t owned = 0;            ///< Entities this shard owns now.
  std::uint64_t copies = 0;           ///< Copies of other shards' entities it holds now.
};

/// How many ticks of its frames a shard keeps for resend().
inline constexpr std::uint64_t kResendTicks = 64;

class SIGHTLINE_API ShardNode {
 public:
  /// Refused (invalid_argument) when `world` does not order by external id, its next tick is not
  /// def.first_tick, or the map does not name `def.self`. The World must outlive the node and be changed only
  /// through it.
  [[nodiscard]] static Result<ShardNode> create(const ShardNodeDef& def, World& world, RegionMap map);

  // --- The game's inputs, on what this shard owns (refused, naming the id, otherwise), between
  // --- tick() and the next begin_tick() -------------------------------------------------------
  /// Creates an entity owned here (def.external_id required).
  [[nodiscard]] Result<EntityId> create_entity(const EntityDef& def);
  [[nodiscard]] Status destroy_entity(std::uint64_t id);
  [[nodiscard]] Status set_position(std::uint64_t id, float x, float z);
  /// A jump: authority follows at once (no hysteresis).
  [[nodiscard]] Status teleport(std::uint64_t id, float x, float z);
  /// Destroys a client here (refused when it is not here).
  [[nodiscard]] Status destroy_client(std::uint64_t client);
  /// A client (cluster-wide id `client`, != 0) viewing from `viewer`, an entity owned here. Its
  /// subscriptions, look-ahead and view radius are set on world() with client(client), on the
  /// shard that holds it; they travel with it.
  [[nodiscard]] Result<ClientId> create_client(std::uint64_t client, std::uint64_t viewer);
  /// As the World's setters. An entity always relevant, a presenter, with an interest key other
  /// than Global or owned by a client is copied to every shard, wherever it is.
  [[nodiscard]] Status set_always_relevant(std::uint64_t id, bool always_relevant);
  [[nodiscard]] Status set_presenter(std::uint64_t id, bool presenter);
  [[nodiscard]] Status set_interest_key(std::uint64_t id, InterestKey key);
  /// The entity's owner: cluster-wide client `client`, on any shard (0: none).
  [[nodiscard]] Status set_owner(std::uint64_t id, std::uint64_t client);
  /// An event class, on every shard alike in the same order: its number is its place in that
  /// order (as World::create_event_class).
  [[nodiscard]] Result<EventClassId> create_event_class(const EventClassDef& def);
  /// Emits an event here (World::emit_event) and, at begin_tick(), to every shard with a cell
  /// within the band plus the class's radius of it, for its clients to receive at the same tick
  /// (the same events as one process gives a client, not in the same order). Its subject
  /// (an entity held here, owned or a copy) goes by external id; a shard that holds no copy of
  /// the subject applies the class's when_absent itself (send_as_is sends null there). Events
  /// in spaces other than the default one are refused (spaces are not carried yet).
  [[nodiscard]] Result<std::uint32_t> emit_event(const EventDef& def);

  // --- The tick ------------------------------------------------------------------------------
  /// Decides authority and writes this tick's frames. Call once a tick, after the game's inputs.
  [[nodiscard]] Status begin_tick();
  [[nodiscard]] std::span<const OutFrame> outgoing() const noexcept { return outgoing_; }
  /// Takes a frame from another shard, for this tick or one of the next kResendTicks - 1.
  /// Refused (malformed_packet, naming the offset) when it does not decode, or
  /// (invalid_argument) when it is a keyframe, was decided with another region map epoch, is not
  /// addressed to this shard, comes from a shard the map does not name, or is for a tick already
  /// run or too far ahead; nothing is kept of a refused frame. A frame received twice is dropped.
  [[nodiscard]] Status receive(std::span<const std::uint8_t> frame);
  /// Whether the frames of this tick from every other shard have arrived (the barrier).
  [[nodiscard]] bool ready() const;
  /// The shards whose frame of this tick has not arrived, ascending: ask each for it again
  /// (resend()) when it is late.
  [[nodiscard]] std::vector<ShardId> missing() const;
  /// The frame this shard wrote for `peer` at `tick`, to send again: kept for the last
  /// kResendTicks ticks; empty when older or never written.
  [[nodiscard]] std::span<const std::uint8_t> resend(ShardId peer, std::uint64_t tick);
  /// Applies the frames (two passes, shard order then record order) and runs World::tick(). Refused
  /// (invalid_argument) before begin_tick() or while not ready().
  [[nodiscard]] Result<TickStats> tick();

  // --- Reading --------------------------------------------------------------------------------
  [[nodiscard]] bool owns(std::uint64_t id) const;
  /// The local client of cluster-wide client `client`, or null when it is not on this shard.
  [[nodiscard]] ClientId client(std::uint64_t client) const;
  [[nodiscard]] const ShardNodeStats& stats() const noexcept { return stats_; }
  [[nodiscard]] World& world() noexcept { return *world_; }
  [[nodiscard]] std::uint64_t next_tick() const noexcept { return tick_; }

 private:
  struct Copy {
    EntityId local;
    bool owned = false;
    ShardId owner = 0;
    std::uint64_t epoch = 0;
    std::vector<ShardId> audience;   // owned: the shards holding a copy from this one
    std::uint64_t owner_client = 0;  // the cluster-wide client that owns the entity; 0 for none
  };
  [[nodiscard]] bool everywhere(const Copy& copy) const;
  void apply_traits(Copy& copy, const EntityImage& image);
  ShardNode(const ShardNodeDef& def, World& world, RegionMap map);
  [[nodiscard]] Copy* owned_copy(std::uint64_t id, const char* call, Status& refused);
  [[nodiscard]] Status between_ticks(const char* call) const;
  [[nodiscard]] EntityImage image_of(std::uint64_t id, const Copy& copy) const;
  void hand_over(std::uint64_t id, Copy& copy, ShardId to, bool& withdraw);
  void apply(const ShardFrame& frame, int pass);
  void apply(const EntityImage& image);
  [[nodiscard]] Copy* create_copy(const EntityImage& image, bool created);
  void apply(const EntityHandover& handover);
  void apply(const GhostOut& out);
  void apply(const ClientHandover& handover);
  void apply(const RemoteEvent& event);
  void withdraw_copy(std::uint64_t id, bool destroyed);
  [[nodiscard]] bool destroyed_now(std::uint64_t id) const;
  [[nodiscard]] ShardFrame& frame_to(ShardId peer);

  ShardNodeDef def_;
  World* world_;
  RegionMap map_;
  std::vector<ShardId> peers_;  // every other shard of the map, ascending
  std::uint64_t tick_ = 0;
  bool begun_ = false;
  std::map<std::uint64_t, Copy> copies_;       // by external id
  std::map<std::uint64_t, ClientId> clients_;  // by cluster-wide client id
  std::vector<std::uint64_t> teleported_;      // owned entities teleported since the last tick
  std::vector<std::uint64_t> created_;         // owned entities created since the last tick
  std::vector<std::uint64_t> carried_;         // copies made from carried images this tick
  std::vector<std::uint64_t> destroyed_now_;   // entities destroyed at this tick, by any shard
  std::vector<EventClassId> classes_;          // by cluster number
  std::vector<RemoteEvent> events_out_;        // emitted here since the last tick
  std::vector<std::uint64_t> destroyed_;       // owned entities destroyed since the last tick
  std::vector<ShardFrame> frames_;             // per peer (peers_ order), this tick's
  std::vector<OutFrame> outgoing_;
  std::vector<std::uint64_t> next_seq_;  // per peer
  struct Inbound {
    std::vector<std::uint8_t> bytes;
    ShardFrame frame;  // decoded, pointing into bytes
  };
  std::map<std::pair<std::uint64_t, ShardId>, Inbound> inbox_;                   // (tick, from)
  std::map<std::pair<std::uint64_t, ShardId>, std::vector<std::uint8_t>> sent_;  // (tick, to)
  std::vector<ShardId> scratch_;
  ShardNodeStats stats_;
};

}  // namespace sightline
