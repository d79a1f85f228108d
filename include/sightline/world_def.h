// Configuration of a World: a plain struct with documented defaults, validated by World::create.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "sightline/export.h"
#include "sightline/limits.h"
#include "sightline/log.h"
#include "sightline/recording.h"
#include "sightline/status.h"
#include "sightline/tasks.h"

namespace sightline {

/// One distance tier: members within `max_distance_fraction * enter_radius` of the viewer (the
/// product and its square computed in float, as the enter test is, so d == fraction * R is inside) are
/// updated every `period` ticks, staggered by their root's order (its slot or external id) so that
/// far updates never bunch on one tick. World's class comment (world.h) states the schedule exactly.
struct DistanceTier {
  /// Upper bound of the tier as a fraction of the enter radius; > 0, may be +infinity.
  float max_distance_fraction = std::numeric_limits<float>::infinity();
  /// Update period in ticks, 1..kMaxPeriod. 1 means every tick.
  std::uint32_t period = 1;
};

/// The documented preset: members within R/2 every tick, the rest every second tick.
[[nodiscard]] SIGHTLINE_API std::vector<DistanceTier> default_distance_tiers();

/// What ranks entities where a rule must choose among equals (World's rule l, the update
/// schedule's stagger): see World, "An entity's order".
enum class OrderKey : std::uint8_t {
  slot,      ///< The entity's slot, EntityId::index.
  external,  ///< EntityDef::external_id, which every entity must then have.
};

/// How a World finds and replicates interest. Obtain with default_world_def() and change fields.
struct WorldDef {
  /// Enter radius R, world units, in [kMinRadius, kMaxRadius]. An entity joins a client's set when its
  /// distance to the viewer is <= R (d == R is inside). Larger R: more members, more updates.
  float enter_radius = 1.6f;

  /// Leave radius L, world units, in [enter_radius, kMaxRadius]. A member leaves when its distance
  /// exceeds L. L > R is hysteresis: movement at the edge no longer costs a spawn and a despawn,
  /// at the price of larger sets (more updates). L == R is a single radius.
  float leave_radius = 1.6f;

  /// Grid cell size, world units. 0 (the default) means enter_radius; otherwise it must be
  /// >= enter_radius (never smaller). A client's query scans the cells overlapping the circle of
  /// radius R: at cell size R that is at most 3 x 3 cells.
  float cell_size = 0.0f;

  /// Upper bound on the number of grid cells, >= 1. The grid covers the bounding box of all live
  /// entities; if that would need more cells, cells grow (never shrink) until it fits. Each cell
  /// costs 4 bytes. An entity far outside the others therefore never costs unbounded memory, but
  /// it does stretch the cells, so queries scan more entities until it comes back.
  std::uint32_t max_grid_cells = 1u << 20;

  /// Distance tiers, sorted by strictly increasing max_distance_fraction. Empty (the default)
  /// means every member is updated every tick. A member beyond the last tier uses the last
  /// tier's period. See default_distance_tiers() for the documented preset.
  std::vector<DistanceTier> tiers;

  /// Threads for the per-client passes (phases 3 and 4) and, from 32,768 entity slots, the
  /// grid's passes over the entities (phase 2), the calling thread included, in
  /// 1..kMaxThreads. 1 (the default) starts no thread. With more, clients are split into
  /// contiguous runs of about equal work, each thread writing its own outputs: the records, sets
  /// and answers are identical whatever the count. Passes of fewer
  /// than 2 clients per thread run on the calling thread. The visibility filter (occlusion.h) is
  /// then called from several threads at once and must be safe for that.
  std::uint32_t threads = 1;
  /// A game's own task system (tasks.h), as a job system's two entry points: with both set, the
  /// World starts no thread of its own and runs the work of its ticks, and of the Replicators
  /// over it, as tasks enqueued here, with `threads` as the number of workers it may use
  /// (worker indices 0..threads - 1). Both null (the default): the World's own pool. One set
  /// without the other is refused. Records, sets and packets are the same either way.
  EnqueueTaskFunction* enqueue_task = nullptr;
  /// Waits for a task enqueue_task started (see enqueue_task).
  FinishTaskFunction* finish_task = nullptr;
  /// Passed to enqueue_task and finish_task as their user_context; not used otherwise.
  void* task_user_context = nullptr;
  /// With threads > 1, the client passes (phases 3 and 4) of a tick whose work is below this run
  /// on the calling thread (phase 2's passes go by the entity slots alone, world.h):
  /// the work is the last tick's total set size plus 16 per live client (the measure the split
  /// uses). Handing a tick to the pool costs a few microseconds, which a small world does not win
  /// back: the default keeps a world of a hundred clients holding a few dozen members each on
  /// the calling thread (BENCHMARKS.md has the measurements). 0 uses the pool at every tick.
  /// Changes nothing but speed.
  std::uint32_t thread_min_work = 8192;
  /// Fast paths of the client pass: a client none of whose rules apply beyond distance (no keys,
  /// owners, extra origins, bounds, attachments, tiers, cap, sight, always-relevant entities or
  /// presenters, and no entity destroyed since the last tick) takes a pass that tests distance
  /// alone, vectorised; in the general pass, a member with no such trait takes the distance test
  /// alone. false sends every client and member through every rule. The records are identical
  /// either way (the tests compare them); only the speed changes.
  bool fast_paths = true;
  /// Crowd cap: at most this many entities per client held by distance (rules j and k of
  /// World's rule; a tree counts once, by its root), the rest of a crowd left out; 0 (the
  /// default) means no cap. What a client holds by any other rule (always relevant, owned,
  /// origins, presenters, bypass keys, unculled spaces) neither counts nor is limited. The cap
  /// keeps the members nearest the client's origins, each ranked by its distance as a fraction of
  /// the radius that admits it (L + b for a member, R + b for a newcomer), so a newcomer displaces
  /// a member only when it is nearer by the hysteresis ratio and a crowd's edge does not
  /// flicker. It bounds the sets, and so the updates, the membership diff and everything the
  /// Replicator does per member; once a client holds its cap, its scan looks only as far as a
  /// newcomer could still rank ahead of the cap-th member, and where a crowd stands densely (more
  /// than 256 entities in one cell of `cell_size`, with 16 or more clients in it) it
  /// reads only the part of the crowd within that distance, so a client's work grows with the
  /// cap, not with the crowd around it. What a
  /// client loses: the far part of a dense crowd (it sees the nearest `crowd_cap`, which
  /// return as the crowd thins); a member pushed out despawns with reason `left`.
  /// Changeable later with World::set_crowd_cap.
  std::uint32_t crowd_cap = 0;

  /// What ranks entities (OrderKey): by slot (the default), or by EntityDef::external_id, so that
  /// processes holding copies of the same entities in other slots choose the same way.
  OrderKey order_key = OrderKey::slot;
  /// The number of the first tick (TickStats::tick of the first tick()): 0, or the global tick
  /// at which a process joins others that serve one world, so that the update schedule and the
  /// visibility hold count ticks as theirs do (and an adopted client's, ClientImage).
  std::uint64_t first_tick = 0;

  /// Capacity hints: slots reserved up front so early growth does not allocate. Not limits.
  std::uint32_t entity_capacity = 0;
  std::uint32_t client_capacity = 0;

  /// Where the World reports (log.h): at info, entity or client storage growing beyond the
  /// capacity hints above (the call that grew it allocated). None by default.
  LogHook log;

  /// Where the World records its inputs (recording.h): every call that changed it, in order, and
  /// every tick, for Replay to re-run. The header, with this def, is written by World::create.
  /// Recording allocates once, at create (a 64 KiB buffer), and adds no allocation to a tick or
  /// a call after it. None by default.
  RecordingSink recording;
};

/// The defaults above: R = L = 1.6, cell size R, no tiers.
[[nodiscard]] SIGHTLINE_API WorldDef default_world_def();

/// Checks every field; the first bad one is named with its value. World::create calls this.
[[nodiscard]] SIGHTLINE_API Status validate(const WorldDef& def);

}  // namespace sightline
