// The World's private state: entities and clients as structure of arrays, the grid, scratch.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "bit_cast.h"
#include "crowd_index.h"
#include "distance_scan.h"
#include "entity_cold.h"
#include "grid.h"
#include "index_map.h"
#include "occluder_grid.h"
#include "position_batch.h"
#include "record_buffer.h"
#include "recorder.h"
#include "sightline/space_def.h"
#include "sightline/world.h"
#include "slot_pool.h"
#include "task_runner.h"
#include "tick_outputs.h"

namespace sightline {

/// A client's slice of one of the shared per-tick arrays.
struct Slice {
  std::uint32_t begin = 0;
  std::uint32_t count = 0;
};

/// One subscription, by stored (encoded) key. Area and User encodings never collide, so one
/// sorted list serves both.
struct Subscription {
  std::uint64_t stored_key = 0;
  std::uint32_t send_rate = 1;  // >= 1
  bool bypass_distance = false;
};

/// Per-client state. Its set and records live in the World's shared arrays (one output part per
/// thread): one array per kind for many clients grows far less often than one per client, since the totals
/// are much steadier than any one client's counts (this is what keeps steady ticks allocation-free).
struct ClientSlot {
  std::uint32_t generation = 0;
  bool alive = false;
  std::uint32_t viewer = 0;  // entity index
  std::uint32_t part = 0;    // the WorldImpl::parts its slices are in (the share that passed it)
  Slice members;             // into that part's outputs' members, sorted by index
  Slice spawns;
  Slice updates;                // into its outputs' updates, or into their members when updates_in_set
  bool updates_in_set = false;  // every member was due: the updates are the set itself
  Slice despawns;
  Slice events;                             // into WorldImpl::events.records
  std::vector<Subscription> subscriptions;  // sorted by stored_key, unique
  std::uint32_t bypass_subscriptions = 0;   // how many have bypass_distance
  std::uint64_t subscription_revision = 0;
  std::vector<std::uint32_t> owned;          // entity indices this client owns, sorted
  std::vector<std::uint32_t> extra_origins;  // origins besides the viewer, sorted, at most kMaxOrigins
  bool refresh = false;                      // origins changed since the last tick: every member is due
  bool origins_changed = false;              // refresh was in force at the last tick (read by the Replicator)
  float look_ahead = 0.0f;                   // seconds
  float view_enter = 0.0f;                   // asked for by set_view_radius; 0: the space's radii
  float view_leave = 0.0f;                   // 0: the space's proportion
  float enter = 0.0f;                        // the radii of the last pass (0 where its space did not cull)
  float leave = 0.0f;
  bool sighted = false;  // sight applied at the last tick: `seen` runs beside `members`
  Slice seen;            // into its part's outputs' seen, beside members: last tick each was in sight
};

/// Per-space state. Settled at the start of every tick (phase 1), read by every client pass.
struct SpaceSlot {
  std::uint32_t generation = 0;
  bool alive = false;
  SpaceDef def;
  bool broadcasting = false;  // the threshold's mode; see SpaceDef::broadcast_threshold
  bool drill = false;
  float drill_enter = 0.0f;
  float drill_leave = 0.0f;
  std::vector<std::uint32_t> entities;  // live entities in the space, unordered (see space_pos)
  // Settled by settle_spaces():
  bool culls = false;
  bool culled_last_tick = false;
  bool switched_on = false;          // culls now and did not at the last tick
  bool drilled = false;              // the drill was in force at the last tick
  bool showed_broadcasting = false;  // SpaceState::broadcasting at the last tick
  float enter = 0.0f;                // radii used when culls
  float leave = 0.0f;
  float view_min = 0.0f;  // the range of a client's view radius (SpaceDef::min_view_radius, max_view_radius)
  float view_max = 0.0f;
  std::uint32_t clients = 0;
  OccluderGrid walls;
  // Settled by settle_plain_spaces() on a plain tick: culls, holds every live entity, no walls.
  bool plain = false;
};

/// The radii a space uses when it culls: the drill's, its own, or the world's; and the range of
/// its clients' view radii.
void settle_radii(SpaceSlot& slot, float world_enter, float world_leave);

/// A client's enter and leave radii in its space (World's class comment, "Radii"): the space's,
/// or those its view radii give within the space's range (the leave radius at most kMaxRadius).
struct PassRadii {
  float enter;
  float leave;
};
[[nodiscard]] inline PassRadii pass_radii(const ClientSlot& client, const SpaceSlot& room) noexcept {
  if (client.view_enter == 0.0f) return {room.enter, room.leave};
  const float enter = std::min(std::max(client.view_enter, room.view_min), room.view_max);
  // The proportion of leave to enter: the client's own, or the space's.
  const bool own = client.view_leave != 0.0f;
  const float e = own ? client.view_enter : room.enter;
  const float f = own ? client.view_leave : room.leave;
  if (enter == e) return {enter, f};
  return {enter, std::min(enter * (f / e), kMaxRadius)};
}

/// A subscription's key and rate as the setters accept them (user: a User key); the message names
/// the key.
[[nodiscard]] Status check_subscription(const KeySubscription& subscription, bool user);
/// A subscription as a client stores it: the key encoded, a rate of 0 read as 1.
[[nodiscard]] Subscription stored(const KeySubscription& subscription, bool user);

/// The subscription of `client` to `stored_key`, or null.
[[nodiscard]] const Subscription* find_subscription(const ClientSlot& client,
                                                    std::uint64_t stored_key) noexcept;

/// The crowd cap's order of a root held by distance (WorldDef::crowd_cap): its squared distance
/// over the squared radius that admits it, then its index. A non-negative float's bits order as
/// the float does, so one integer compare ranks two roots.
[[nodiscard]] inline std::uint64_t crowd_rank(float d2, float reach, std::uint32_t e) noexcept {
  return static_cast<std::uint64_t>(bit_cast<std::uint32_t>(d2 / (reach * reach))) << 32 | e;
}
/// Orders crowd ranks: two at the same distance by their entities' external ids when `external`
/// is set (OrderKey::external), else by slot, as the plain integer compare does.
struct CrowdOrder {
  const std::uint64_t* external;
  [[nodiscard]] bool operator()(std::uint64_t a, std::uint64_t b) const noexcept {
    if (external == nullptr || (a >> 32) != (b >> 32)) return a < b;
    return external[static_cast<std::uint32_t>(a)] < external[static_cast<std::uint32_t>(b)];
  }
};

/// The runs of the grid's rows that a scan reads: how many (in PassScratch::runs) and their total
/// length.
struct NearRuns {
  std::uint32_t rows = 0;
  std::uint32_t candidates = 0;
};

/// Reusable per-pass scratch, sized to the entity slots. One per worker when passes run in
/// parallel.
struct PassScratch {
  std::vector<std::uint32_t> stamp;  // per entity slot: == epoch when already handled this pass
  std::uint32_t epoch = 0;
  std::vector<EntityId> kept;           // members that survive the leave phase
  std::vector<std::uint32_t> gaps;      // positions in the old set of the members let go
  std::vector<std::uint64_t> entering;  // (entity index << 8) | SpawnReason: sorts by index
  std::vector<std::uint32_t> forced;    // per entity slot: == epoch when a root forced by owner or origin
  std::vector<std::uint8_t> forced_reason;
  std::vector<EntityId> child_members;      // attached members of the old set, deferred to their root
  std::vector<EntityId> merge;              // room to merge kept roots and kept attached members
  std::vector<std::uint32_t> forced_roots;  // roots this client holds by owner or origin
  // Sight: per entity slot, == epoch when a member is kept out of sight, with its last sighting.
  std::vector<std::uint32_t> unseen;
  std::vector<std::uint64_t> last_seen;
  std::vector<std::uint32_t> hits;     // entities one origin's scan found within the enter radius
  std::vector<ScanRun> runs;           // the grid runs that scan reads, one per row
  Grid::Range near_range{1, 0, 1, 0};  // the cells of those runs (none: x0 > x1)
  NearRuns near;
  bool reuse_runs = false;  // passes run in cell order: near_runs reuses the last runs of the same cells
  // Crowd cap: (rank bits << 32 | root index) of the roots held by distance, and per entity slot
  // == epoch when the cap left the root out.
  std::vector<std::uint64_t> crowd;
  std::vector<std::uint32_t> crowded;
  OccluderScratch occluders;
};

/// What the sight test of one client pass needs.
struct Sight {
  bool needed = false;  // the client's space culls and has walls, or a filter is set
  bool walls = false;
  float look_ahead = 0.0f;
  ClientId client;
  std::size_t origins = 0;
  const float* origin_x = nullptr;
  const float* origin_z = nullptr;
  std::uint32_t hold_ticks = 0;
};

/// Where one run of client passes writes (part `part` of WorldImpl::parts), and the last tick's
/// sets it reads, a client's in the part it was passed into then (ClientSlot::part). The
/// pointers are copied here, on the running thread's stack: read through the World they would
/// share cache lines with the headers other threads grow at every pass, and lines bouncing
/// between cores made two threads slower than one.
struct PassOutputs {
  TickOutputs& to;
  std::uint32_t part = 0;
  std::array<const EntityId*, kMaxThreads> previous_members{};    // each part's
  std::array<const std::uint64_t*, kMaxThreads> previous_seen{};  // each part's
  [[nodiscard]] const EntityId* old_members(const ClientSlot& client) const noexcept {
    return previous_members[client.part] + client.members.begin;
  }
  [[nodiscard]] const std::uint64_t* old_seen(const ClientSlot& client) const noexcept {
    return previous_seen[client.part] + client.seen.begin;
  }
};

/// One worker's share of a threaded tick: a contiguous run of the pass order (a region of the
/// world) and its own scratch; it writes into the output part of the same index. Its thread
/// writes all of it: aligned, so no line holds two shares.
struct alignas(64) WorkerShare {
  std::uint32_t first = 0;  // into pass_order
  std::uint32_t last = 0;
  PassScratch scratch;
  TickStats stats;
};

/// The records of the clients one share passed (all of them where a tick ran on one thread),
/// and the sets and sightings they had at the tick before, which a tick reads while it writes
/// the new ones (each pair swaps at the start of every tick). A client's slices stay in the part
/// it was passed into (ClientSlot::part) until its next pass: nothing is copied between parts.
/// One thread grows a part while others read the rest: each sits on cache lines of its own.
struct alignas(64) OutputPart {
  TickOutputs out;
  RecordBuffer<EntityId> previous_members;
  RecordBuffer<std::uint64_t> previous_seen;
};

struct EventClassSlot {
  std::uint32_t generation = 0;
  EventClassDef def;
};

/// One-off events (src/events.cpp): the queue, the last tick's output, and the scratch of the
/// delivery phase. Every array keeps its high-water mark, so a steady event rate allocates nothing.
struct EventState {
  std::vector<EventClassSlot> classes;
  SlotPool class_pool;
  std::vector<EventDef> pending;     // emitted since the last tick
  std::vector<EventDef> delivered;   // World::events(): the last tick's, in emit order
  std::vector<EventRecord> records;  // every client's ClientSlot::events slice, in slot order
  // Scratch of the delivery phase.
  std::vector<std::uint64_t> order;          // (space slot << 32) | event index, sorted
  std::vector<std::uint32_t> space_events;   // per space slot: events in it this tick
  std::vector<std::uint32_t> space_origins;  // per space slot + 1: prefix of its origins
  std::vector<float> origin_x;               // origins of clients in spaces with events,
  std::vector<float> origin_z;               // grouped by space
  std::vector<std::uint32_t> origin_client;  // client slot of each origin
  std::vector<std::uint8_t> origin_binned;   // all 1: Grid::build's filter
  Grid grid;                                 // over one space's origins at a time
  std::vector<std::uint32_t> client_stamp;   // per client slot: == epoch when it has the event
  std::uint32_t epoch = 0;
  struct Found {
    std::uint32_t client = 0;
    EventRecord record;
  };
  std::vector<Found> found;                   // in (space, event) order
  std::vector<std::uint32_t> client_records;  // per client slot: count, then write cursor
};

class WorldImpl {
 public:
  explicit WorldImpl(const WorldDef& def);

  void run_tick(TickStats& stats);

  WorldDef def;
  TickTimings timings;  // of the last tick
  Recorder recorder;    // of the calls that change the World, when WorldDef::recording is set

  // The flight recorder (history.cpp), by client slot: a ring of the client's last transitions.
  struct HistoryRing {
    std::uint32_t generation = 0;  // of the client it records; 0: off
    std::vector<HistoryEntry> entries;
    std::uint32_t next = 0;  // where the next entry goes
    std::uint32_t count = 0;
  };
  std::vector<HistoryRing> histories;
  std::uint32_t history_clients = 0;  // rings on
  void record_history(const World& world);
  float enter_radius;
  float leave_radius;
  std::vector<float> tier_limit2;  // squared distance bounds of each tier
  std::vector<std::uint32_t> tier_period;
  std::vector<float> tier_fraction;

  // Entities, indexed by slot: the columns the hot loops stream through, and the rest of each
  // slot in one record (cold).
  std::vector<float> xs;
  std::vector<float> zs;
  std::vector<std::uint32_t> generation;
  std::vector<std::uint8_t> alive;
  // generation while alive, 0 once destroyed: one load (or one gather) checks a handle.
  std::vector<std::uint32_t> live_generation;
  std::vector<EntityCold> cold;
  // EntityDef::external_id per slot (0: none), and the live entities' ids to their slots.
  std::vector<std::uint64_t> external;
  ExternalIdMap by_external;
  std::vector<float> bound;          // bounding-sphere radius per slot; 0 for a point
  std::vector<float> scale;          // radius scale per slot; 1 by default
  std::vector<std::uint8_t> binned;  // alive roots that no client can hold beyond its R: in the grid
  // Sorted indices of live roots with a bound or a radius scale above 1: tested by every client.
  std::vector<std::uint32_t> wide_list;
  std::uint32_t scaled_entities = 0;       // live entities with a radius scale other than 1
  SlotPool entity_slots;                   // a destroyed entity's slot is freed after the next tick
  std::vector<std::uint32_t> destroyed;    // released after the next tick
  std::vector<std::uint32_t> always_list;  // sorted entity indices
  std::uint32_t keyed_entities = 0;        // live entities with a non-Global key
  // (stored key, entity index) of live keyed entities, sorted; rebuilt when keys_dirty, for
  // bypass_distance subscriptions that admit entities at any distance.
  std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed_index;
  bool keys_dirty = false;
  std::uint32_t live_entities = 0;
  // Per entity slot, the traits that make it more than a plain member of the leave and enter tests (a
  // live point with a Global key, no owner, not always relevant, nobody's extra origin): 0 for
  // most entities, so the hot loops need one load to know. Kept by refresh_traits().
  // kReach: a bound or a radius scale, so the client's radii alone do not decide it.
  enum Trait : std::uint8_t { kDead = 1, kAlways = 2, kOwned = 4, kKeyed = 8, kReach = 16, kOrigin = 32 };
  // kTree: a root with something attached, or a presenter.
  enum : std::uint8_t { kChild = 64, kTree = 128 };
  std::vector<std::uint8_t> traits;

  // Attachments (EntityCold's parent, first_child, next_sibling, depth).
  static constexpr std::uint32_t kNone = kNoEntity;
  std::uint32_t attached_entities = 0;
  std::uint32_t deep_destroyed = 0;           // destroyed since the last tick while attached
  std::vector<std::uint32_t> presenter_list;  // sorted indices of presenters (roots)
  // Teleports since the last tick, and per tick the roots of their trees.
  std::vector<std::uint32_t> teleported_list;
  std::vector<std::uint32_t> created_list;  // entities created since the last tick (created set)
  std::vector<std::uint32_t> tree_teleported_list;
  std::vector<std::uint32_t> last_teleported_roots;  // tree_teleported_list of the last tick
  // Per tick: roots of trees holding an always-relevant entity.
  std::vector<std::uint32_t> always_roots;
  // Sight: the game's filter (velocities are cold; the last sightings are outputs, below).
  VisibilityFilter filter = nullptr;
  void* filter_context = nullptr;

  // Spaces (an entity's space and its place in the space's list are cold).
  std::vector<SpaceSlot> space_slots;
  SlotPool space_pool;

  std::vector<ClientSlot> client_slots;
  SlotPool client_pool;
  std::vector<ClientId> live_clients;  // sorted by index
  // Per tick: live client slots in the order their passes run (order_passes), and its scratch.
  std::vector<std::uint32_t> pass_order;
  bool passes_in_cell_order = false;  // order_passes sorted them (else slot order)
  bool pass_order_current = false;    // no client was made or destroyed since order_passes
  std::vector<std::uint32_t> pass_cell;
  std::vector<std::uint32_t> pass_cursor;

  // Per member of a set, its update period at the last tick (schedule, class comment), kept
  // only while a Replicator asks for it (record_periods, while period_requests != 0).
  bool record_periods = false;
  std::uint32_t period_requests = 0;  // TickSource::request_periods less release_periods
  // The last tick's outputs (what the readers between ticks see), written anew by every tick:
  // one part per thread (OutputPart).
  std::vector<OutputPart> parts;

  alignas(64) Grid grid;
  CrowdIndex crowd_index;  // the grid's dense cells in sub-cells, while a crowd cap is set
  // The clients' origins at the index phase: where the grid's queries of this tick come from.
  std::vector<float> query_x;
  std::vector<float> query_z;
  DistanceScan scan = best_distance_scan();          // the enter phase's distance test (AVX2 or scalar)
  LeaveTest leave_test = best_leave_test();          // the plain pass's leave test (AVX2 or scalar)
  DistanceCount count_near = best_distance_count();  // the plain pass's enter count (AVX2 or scalar)
  PositionBatchCheck position_check = best_position_batch_check();  // set_positions' (AVX2 or scalar)
  PassScratch scratch;
  bool plain_tick = false;  // plain_world() at this tick's start
  // Whether the plain pass counts what lies within R before it stamps and scans: it pays while
  // most passes find nothing new, judged by the last tick's spawns per pass (plain_pass.cpp).
  bool count_enters = true;
  // Threads (WorldDef::threads): where parallel work runs (the World's pool or the game's task
  // system), and one share per worker; no share with one worker.
  std::unique_ptr<TaskRunner> tasks;
  std::vector<WorkerShare> shares;
  EventState events;
  std::uint64_t ticks = 0;

  [[nodiscard]] Status check(EntityId id) const;
  [[nodiscard]] Status check(ClientId id) const;
  [[nodiscard]] Status check(SpaceId id) const;
  [[nodiscard]] Status check(EventClassId id) const;
  /// Refuses an attached entity: `what` ("an interest key") belongs to the root.
  [[nodiscard]] Status check_root(EntityId id, const char* what) const;
  /// The client's origins in its viewer's space, the viewer first: at most kMaxOrigins + 1.
  [[nodiscard]] std::size_t origins_of(const ClientSlot& client, float* origin_x,
                                       float* origin_z) const noexcept;
  /// The client's updates of the last tick (ClientStream::updates).
  [[nodiscard]] std::span<const EntityId> updates_of(const ClientSlot& client) const noexcept {
    const TickOutputs& out = outputs_of(client);
    const RecordBuffer<EntityId>& from = client.updates_in_set ? out.members : out.updates;
    return from.span().subspan(client.updates.begin, client.updates.count);
  }
  /// The outputs the client's slices are in.
  [[nodiscard]] const TickOutputs& outputs_of(const ClientSlot& client) const noexcept {
    return parts[client.part].out;
  }
  [[nodiscard]] std::span<const EntityId> members_of(const ClientSlot& client) const noexcept {
    return outputs_of(client).members.span().subspan(client.members.begin, client.members.count);
  }
  /// Every live client's set size, summed: the last tick's total.
  [[nodiscard]] std::uint64_t member_total() const noexcept {
    std::uint64_t total = 0;
    for (const OutputPart& part : parts) total += part.out.members.size();
    return total;
  }
  /// Refuses an EntityDef::external_id a live entity holds, or 0 where the order key needs one.
  [[nodiscard]] Status check_external_id(std::uint64_t id) const;
  [[nodiscard]] std::uint32_t root_of(std::uint32_t e) const noexcept {
    while (cold[e].parent != kNone) e = cold[e].parent;
    return e;
  }
  /// An entity's order (World, "An entity's order"): its slot, or its external id.
  [[nodiscard]] std::uint64_t order_of(std::uint32_t e) const noexcept {
    return def.order_key == OrderKey::external ? external[e] : e;
  }
  /// The crowd cap's ranking (crowd_rank) with ties in this World's order.
  [[nodiscard]] CrowdOrder crowd_order() const noexcept {
    return CrowdOrder{def.order_key == OrderKey::external ? external.data() : nullptr};
  }
  /// Whether client `sight.client` sees root r this tick: past the walls of r's space from some
  /// origin, at r's position or its look-ahead position, and by the filter.
  [[nodiscard]] bool sees(const Sight& sight, std::uint32_t r, OccluderScratch& occluders) const;
  /// The sight settings of a client, its origins given.
  [[nodiscard]] Sight sight_of(const ClientSlot& client, std::uint32_t client_slot, std::size_t origins,
                               const float* origin_x, const float* origin_z) const;
  void settle_spaces();                   // 1. spaces
  void deliver_events(TickStats& stats);  // 5. events, after every client pass
  void settle_trees();                    // always roots and teleported roots of this tick
  void add_to_space(std::uint32_t e, std::uint32_t space_slot);
  void remove_from_space(std::uint32_t e);
  void detach(std::uint32_t child);       // makes it a root again; keeps the lists in step
  void refresh_binning(std::uint32_t e);  // binned and wide_list from alive, bound, scale and parent
  void set_depths(std::uint32_t e, std::uint8_t d);  // the subtree of e, e at depth d
  void set_radii(float enter, float leave);
  void reserve_outputs();
  void set_entity_key(std::uint32_t index, std::uint64_t stored_key);
  void rebuild_keyed_index();
  void clear_owner(std::uint32_t entity_index);
  void forget_origin(std::uint32_t entity_index);
  void set_bound(std::uint32_t entity_index, float radius);  // and its place in the grid or the wide list
  void set_scale(std::uint32_t entity_index, float scale);   // likewise
  void refresh_traits(std::uint32_t entity_index);           // after any change to the arrays it reads
  /// Checks every invariant of the state between ticks with SIGHTLINE_ASSERT (world_validate.cpp):
  /// a no-op where assertions are compiled out. run_tick calls it last.
  void validate() const;

  /// World::destroy_entity (withdraw false) and withdraw_entity.
  Status remove_entity(World& world, EntityId entity, bool withdraw);

 private:
  void validate_entities() const;
  void validate_clients() const;
  mutable std::vector<std::uint32_t> validate_holders;  // validate's count of each entity's holders
  /// Passes pass_order[first, last), each by the plain pass where it applies, else the general.
  void run_passes(std::uint32_t first, std::uint32_t last, PassScratch& scratch, PassOutputs& out,
                  TickStats& stats);
  /// The general pass (client_pass.cpp): every rule.
  void client_pass(ClientSlot& client, PassScratch& scratch, PassOutputs& out, TickStats& stats);
  /// Whether nothing in the world takes a client off the plain pass this tick (plain_pass.cpp).
  [[nodiscard]] bool plain_world() const noexcept;
  /// In a plain world: SpaceSlot::plain of every space, once a tick.
  void settle_plain_spaces() noexcept;
  /// run_passes on a plain tick: the plain pass of each client where it applies, else the general.
  void plain_passes(std::uint32_t first, std::uint32_t last, PassScratch& scratch, PassOutputs& out,
                    TickStats& stats);
  /// The plain pass of a client where nothing of its own takes it off it (its space is plain, it
  /// owns nothing, it has one origin); false, having done nothing, where something does.
  bool plain_pass(ClientSlot& client, PassScratch& scratch, PassOutputs& out, TickStats& stats);
  void keep_set(ClientSlot& client, const EntityId* old_members, std::uint32_t count, PassOutputs& out,
                TickStats& stats);
  void change_set(ClientSlot& client, const SpaceSlot& room, std::uint32_t gap_count, bool newcomers,
                  std::uint32_t rows, PassScratch& scratch, PassOutputs& out, TickStats& stats);
  void order_passes();                     // pass_order for this tick
  void split_shares();                     // each thread's run of pass_order
  void parallel_passes(TickStats& stats);  // phases 3 and 4 over the workers
  void run_share(std::uint32_t share);     // one worker's clients, into its own output part
  /// Where passes write into part `part`, and every part's last-tick sets.
  [[nodiscard]] PassOutputs pass_outputs(std::uint32_t part) noexcept;
  // The phases of run_tick that live in tick.cpp.
  void index_entities();                     // 2. the grid and the keyed index
  void run_client_passes(TickStats& stats);  // 3 and 4, on one thread or several
  void adopt_sets(const TickStats& stats);   // the new sets current, holder counts
  void release();                            // 6. destroyed slots freed, teleport marks cleared
};

}  // namespace sightline
