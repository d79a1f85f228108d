// Seeded random input sequences for a MirroredWorld: awkward positions (negative, far outside,
// on cell edges, at exactly d == R, clustered, coincident), entity and client churn with slot
// reuse, always-relevant toggles, viewer changes and radius changes.
#pragma once

#include <cstdint>
#include <functional>

#include "mirrored_world.h"
#include "sightline/world_def.h"

namespace sightline::testing {

/// How many of `seeds` random runs a test takes in this build: all of them, or a quarter under a
/// sanitizer, where each run costs several times as much (make test runs the release build with
/// every seed, and the sanitizer builds to find memory and undefined-behaviour errors, which a
/// quarter of the seeds still drive through every path; this keeps make test under 20 minutes).
[[nodiscard]] constexpr std::uint64_t seeds_for_build(std::uint64_t seeds) noexcept {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return (seeds + 3) / 4;
#else
  return seeds;
#endif
}

enum class TierMode : std::uint8_t {
  none,
  preset,  ///< default_distance_tiers()
  custom,  ///< three tiers: {0.25, 1}, {0.5, 3}, {1.0, 5}; members beyond R use period 5
};

struct RandomRunDef {
  std::uint64_t seed = 1;
  TierMode tiers = TierMode::none;
  bool hysteresis = true;  ///< L drawn from {1.1, 1.25, 1.5, 2} x R; else L == R.
  std::uint32_t ticks = 40;
  std::uint32_t max_entities = 60;  ///< Initial entity count is drawn in 1..max_entities.
  std::uint32_t max_clients = 25;
  bool churn = true;  ///< Create/destroy entities and clients, set_viewer, set_radii.
  /// Churn's entity destroys are withdraw_entity half the time (an extra draw: off leaves the
  /// other inputs unchanged).
  bool withdraw = false;
  /// WorldDef::order_key external: every entity created with an external id, a new one
  /// (scrambled, some above 2^32 so the stagger's sum wraps) or, 30% of the time, that of an
  /// entity gone (handed back, with EntityDef::created false); plus refused creates with an id a
  /// live entity holds or with none. Off leaves the other inputs unchanged.
  bool external_ids = false;
  bool vary_grid = true;
  /// Always-relevant entities: 8% of those created, and toggles between ticks. Off, none is (the
  /// draws stay the same, so the other inputs do not change).
  bool always_relevant = true;  ///< Sometimes a larger cell_size; max_grid_cells mostly small.
  /// Interest keys: entities get Area, User and Global keys from a small key space (1..5 and
  /// kMaxInterestKey), clients random area sets (duplicates, re-set unchanged), user keys added
  /// and removed (absent ones too), clears, send rates 0..4, bypass flags; plus refused calls
  /// (user key 0, bit 63, rates above 65535, dead handles). Off leaves the other inputs unchanged.
  bool keys = false;
  /// Owners, extra origins and bounds: a few bounded entities (small, a few times R, sometimes
  /// huge or kMaxRadius; bounds changed, reset to 0, set on creation), positions at R + b and
  /// L + b of a bounded entity; a few owned entities per client (set_owner replacing, clear_owner,
  /// the client's own viewer owned), a few extra origins per client (added, removed, a client
  /// filled to kMaxOrigins, set_viewer to an origin, origins and owned entities destroyed); plus
  /// refused calls (bad radii, the viewer or a duplicate as origin, removing a non-origin, dead
  /// and null handles). Off leaves the other inputs unchanged.
  bool relevance = false;
  /// Spaces, attachments, presenters and teleports: a few spaces with random SpaceDefs (culling
  /// on and off, the World's, explicit and factor radii, broadcast thresholds 0..6 with margins
  /// 0..3; the default space's setting changed too), entities and viewers moved between spaces
  /// (several viewers at once, so client counts cross thresholds), spaces emptied and destroyed,
  /// drills set and cleared; attachments (random pairs, chains up to kMaxAttachmentDepth, the
  /// viewer, origins and owned entities as parents or children, re-attaching, detaching,
  /// destroying parents); presenters; teleports (far jumps and jumps next to a viewer, of roots,
  /// attached entities, viewers and extra origins); positions at a space's radii; refused calls of every
  /// kind (bad SpaceDefs and drills, destroy_space of the default or a non-empty space, every
  /// refusal of attach, set_space, set_presenter and key setters on an attached entity, stale
  /// space handles, teleports to bad positions). Off leaves the other inputs unchanged.
  bool structure = false;
  /// Sight: walls in some spaces (a few segments: across the lines of sight from viewers to
  /// entities, on lattice points of spacing R, zero-length posts, walls spanning the world,
  /// random short ones; set, replaced, cleared), velocities (per axis up to a few R per second,
  /// sometimes kMaxCoordinate), look-aheads in [0, kMaxLookAhead], visibility_hold_ticks 0..4 in
  /// SpaceDefs (the default space's too), and sometimes a visibility filter (a pure function of
  /// client and entity index and a value redrawn between ticks; set and removed); plus refused
  /// calls (bad wall coordinates, velocities, look-aheads and holds, dead and null handles). Off
  /// leaves the other inputs unchanged.
  bool sight = false;
  /// WorldDef::fast_paths off: every client takes the general pass and every member every rule
  /// (TickStats::plain_passes stays 0); the records must not change.
  bool general_pass = false;
  /// WorldDef::threads: the same inputs must give the same records whatever the count.
  std::uint32_t threads = 1;
  /// WorldDef's task system hooks (tasks.h); null: the World's own pool.
  EnqueueTaskFunction* enqueue_task = nullptr;
  FinishTaskFunction* finish_task = nullptr;
  void* task_user_context = nullptr;
  /// Crowd cap: WorldDef::crowd_cap drawn from {0, 1, 2, 3, 5, 8}, changed now and then
  /// between ticks (to 0 too). Off leaves the other inputs unchanged.
  bool crowd_cap = false;
  /// Per-client and per-entity radii: view radii (0, or 0.2..3 x R) set and reset on clients,
  /// radius scales (kMinRadiusScale..kMaxRadiusScale, 1 again) on entities, view ranges in the
  /// default space's SpaceDef (and in random SpaceDefs with `structure`), entities moved to the
  /// edge of a scaled reach; plus refused calls (bad scales and view radii, bad view ranges, dead
  /// handles). Off leaves the other inputs unchanged.
  bool radii = false;
  /// With `sight`, the visibility filter is set and removed now and then. Off, it never is (the
  /// draws stay the same): a replay cannot re-create the filter's changing state.
  bool visibility_filter = true;
  /// WorldDef::recording of the run's World.
  RecordingSink recording;
};

/// The context of run_random's visibility filter: it hides (client, entity) when a hash of their
/// slot indices and `salt` is divisible by `modulus`.
struct SightFilterState {
  std::uint64_t salt = 0;
  std::uint32_t modulus = 3;
};
/// run_random's filter; `context` is a SightFilterState.
[[nodiscard]] bool sight_filter(void* context, ClientId client, EntityId entity);

/// The three-tier list of TierMode::custom.
[[nodiscard]] std::vector<DistanceTier> custom_tiers();

/// Builds the world of `def`, applies its seeded inputs and ticks; calls `after_tick` after each
/// tick (the mirror has compared by then). Returns when the ticks are done or the mirror has
/// recorded an error.
void run_random(const RandomRunDef& def,
                const std::function<void(MirroredWorld&, const TickStats&)>& after_tick = {});

}  // namespace sightline::testing
