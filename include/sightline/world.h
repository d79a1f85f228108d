// The World: entities with positions, clients that view from an entity, and one tick that turns
// positions into per-client spawn, update and despawn records.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "sightline/handles.h"
#include "sightline/interest_keys.h"
#include "sightline/status.h"
#include "sightline/stream.h"
#include "sightline/world_def.h"

namespace sightline {

/// What an entity starts with.
struct EntityDef {
  float x = 0.0f;  ///< World units; finite, |x| <= kMaxCoordinate.
  float z = 0.0f;  ///< World units; finite, |z| <= kMaxCoordinate.
  /// Held by every client whatever the distance (an objective, a scoreboard), never put through
  /// the radius test. Changeable later with set_always_relevant.
  bool always_relevant = false;
  /// Radius of a sphere around the entity that holds its shape, world units, in
  /// [0, kMaxRadius]. See World::set_bound_radius.
  float bound_radius = 0.0f;
};

/// A 2D position on the ground plane.
struct Position {
  float x = 0.0f;
  float z = 0.0f;
};

class WorldImpl;

/// An interest-management world.
///
/// Inputs (entity positions, flags, clients and their viewers) are recorded between ticks and
/// take effect at the next tick(). tick() runs fixed phases in this order (docs/architecture.md):
///   1. index:      bin every live entity into a uniform grid by counting sort;
///   2. leave:      per client and member, in this order: destroyed (despawn `destroyed`); the
///                  client's viewer (`left`); always relevant, owned by the client or one of its
///                  extra origins (kept, no test); its key no longer
///                  admits the client (`key_removed`); admitted by a bypass_distance subscription
///                  (kept, no test); farther than the leave radius from the viewer (`left`);
///   3. enter:      per client, add always-relevant entities (spawn `always`), then the ones it
///                  owns (`owner`), then its extra origins (`origin`), then entities
///                  admitted by a bypass_distance subscription (`key`), then scan the cells
///                  overlapping the enter circle of each origin and add entities whose key admits
///                  the client and that stand within the enter radius of it (`near`). A key admits a client when it is
///                  Global or the client subscribes to it;
///   4. schedule:   per client, emit an update for each member due this tick: its period is the
///                  slower of its distance tier's and its key's send rate (the fastest matching
///                  subscription; Global, always-relevant, owned and origin entities have none), and it is due
///                  when period == 1 or (tick + entity_index) % period == 0;
///   5. release:    slots of entities destroyed before this tick become reusable.
/// A client's own viewer is never in its set.
///
/// Memory: after warm-up (stable entity, client and set counts) a tick performs no heap
/// allocation. Thread safety: none; use one World from one thread at a time.
/// Determinism: the same sequence of calls gives the same records, on any platform.
class World {
 public:
  /// Validates `def` (see validate()) and builds an empty world.
  [[nodiscard]] static Result<World> create(const WorldDef& def);

  /// A moved-from World may only be destroyed or assigned to.
  World(World&&) noexcept;
  World& operator=(World&&) noexcept;
  World(const World&) = delete;
  World& operator=(const World&) = delete;
  ~World();

  // --- Entities -------------------------------------------------------------------------

  /// Creates an entity. It is binned and may be spawned to clients at the next tick.
  /// Refused (non_finite_position) for a NaN, infinite or out-of-range position.
  [[nodiscard]] Result<EntityId> create_entity(const EntityDef& def);

  /// Destroys an entity. At the next tick every client holding it gets a despawn with reason
  /// `destroyed`; its slot is reused only after that tick, with a new generation.
  /// Refused (entity_is_viewer) while the entity is some client's viewer.
  [[nodiscard]] Status destroy_entity(EntityId entity);

  /// Moves an entity; takes effect at the next tick. The position is refused, naming the entity,
  /// when NaN, infinite or beyond kMaxCoordinate. A refused call changes nothing.
  [[nodiscard]] Status set_position(EntityId entity, float x, float z);

  /// Moves many entities at once: entities[i] to (xs[i], zs[i]). The three spans must have the
  /// same length. Every handle and position is checked before any is written, so a refused call
  /// (naming the first bad entity and its value) changes nothing. An entity listed twice takes
  /// its last position.
  [[nodiscard]] Status set_positions(std::span<const EntityId> entities, std::span<const float> xs,
                                     std::span<const float> zs);

  /// Sets the radius of the entity's bounding sphere, world units, in [0, kMaxRadius]. Distances
  /// to the entity are then measured to the surface: max(0, |p - o| - radius), so a 256 m terrain
  /// stays held by a client standing at its edge. In float, the tests read
  /// d2 <= (R + radius)^2 to enter, d2 > (L + radius)^2 to leave, and
  /// d2 <= (fraction * R + radius)^2 for a tier. Bounded entities are kept in a list every client
  /// scans rather than in the grid, so they cost O(clients) each per tick: meant for a few large
  /// things (terrain, buildings, vehicles), not for every entity.
  [[nodiscard]] Status set_bound_radius(EntityId entity, float radius);
  [[nodiscard]] Result<float> bound_radius(EntityId entity) const;

  /// Marks an entity always relevant (held by every client) or back to radius-tested.
  [[nodiscard]] Status set_always_relevant(EntityId entity, bool always_relevant);

  [[nodiscard]] Result<Position> position(EntityId entity) const;
  /// True while the handle names a live entity.
  [[nodiscard]] bool is_valid(EntityId entity) const noexcept;
  [[nodiscard]] std::uint32_t entity_count() const noexcept;

  // --- Clients --------------------------------------------------------------------------

  /// Creates a client that views from `viewer`. Its set starts empty; the next tick spawns what
  /// it should hold.
  [[nodiscard]] Result<ClientId> create_client(EntityId viewer);
  /// Destroys a client. No more records are produced for it; its set is discarded.
  [[nodiscard]] Status destroy_client(ClientId client);
  /// Changes the entity a client views from; takes effect at the next tick.
  [[nodiscard]] Status set_viewer(ClientId client, EntityId viewer);
  [[nodiscard]] Result<EntityId> viewer(ClientId client) const;
  [[nodiscard]] bool is_valid(ClientId client) const noexcept;
  [[nodiscard]] std::uint32_t client_count() const noexcept;

  // --- Origins --------------------------------------------------------------------------

  /// Adds an origin besides the viewer: a view target, or another entity the client controls.
  /// An entity is near the client when it is near any origin (the leave and enter tests and the
  /// distance tiers use the nearest), and the client holds each extra origin at any distance
  /// (spawn reason `origin`). The viewer itself is never sent. At most kMaxOrigins extra origins
  /// (invalid_argument beyond); adding one twice, or the viewer, is refused. Destroying the
  /// entity removes it from every client's origins.
  [[nodiscard]] Status add_origin(ClientId client, EntityId origin);
  /// Removes an extra origin; from the next tick it is held by the usual rules only.
  [[nodiscard]] Status remove_origin(ClientId client, EntityId origin);
  /// The extra origins, sorted by entity index. Allocates; not for the hot path.
  [[nodiscard]] Result<std::vector<EntityId>> origins(ClientId client) const;

  // --- Owners ---------------------------------------------------------------------------

  /// Makes `client` the owner of `entity`: the client holds it at any distance and whatever its
  /// key (spawn reason `owner`), unless it is the client's viewer. An entity has at most one
  /// owner; setting another replaces it. Destroying the client or the entity ends ownership.
  [[nodiscard]] Status set_owner(EntityId entity, ClientId client);
  /// Ends the entity's ownership; from the next tick it is held by the usual rules only.
  [[nodiscard]] Status clear_owner(EntityId entity);
  /// The owner, or a null ClientId when the entity has none.
  [[nodiscard]] Result<ClientId> owner(EntityId entity) const;

  // --- Interest keys (see interest_keys.h) ---------------------------------------------

  /// Gives the entity an Area key: only clients subscribed to `key` through set_area_keys may
  /// hold it. Refused (invalid_argument) when key > kMaxInterestKey.
  [[nodiscard]] Status set_area_interest_key(EntityId entity, std::uint64_t key);
  /// Gives the entity a User key: only clients subscribed through add_user_key may hold it.
  /// Refused (invalid_argument) for key 0 (it would encode as Global) and key > kMaxInterestKey.
  [[nodiscard]] Status set_user_interest_key(EntityId entity, std::uint64_t key);
  /// Back to Global, the default: every client may hold it.
  [[nodiscard]] Status set_global_interest_key(EntityId entity);
  [[nodiscard]] Result<InterestKey> interest_key(EntityId entity) const;

  /// Replaces the client's Area subscriptions as a set (User keys are untouched). A key listed
  /// twice keeps its fastest rate and is bypass if either entry is. Setting the set it already
  /// has changes nothing: subscription_revision() stays. Every key is checked first; a refused
  /// call changes nothing.
  [[nodiscard]] Status set_area_keys(ClientId client, std::span<const KeySubscription> keys);
  /// Adds or replaces one User subscription. It survives set_area_keys and clear_area_keys.
  [[nodiscard]] Status add_user_key(ClientId client, KeySubscription subscription);
  /// Removes one User subscription; removing one the client does not have is not an error.
  [[nodiscard]] Status remove_user_key(ClientId client, std::uint64_t key);
  [[nodiscard]] Status clear_area_keys(ClientId client);
  [[nodiscard]] Status clear_user_keys(ClientId client);
  /// Both kinds.
  [[nodiscard]] Status clear_interest_keys(ClientId client);
  /// The client's subscriptions, decoded, sorted by key value. Allocates; not for the hot path.
  [[nodiscard]] Result<std::vector<KeySubscription>> area_keys(ClientId client) const;
  [[nodiscard]] Result<std::vector<KeySubscription>> user_keys(ClientId client) const;
  /// Rises by one on every call that actually changed the client's subscriptions.
  [[nodiscard]] Result<std::uint64_t> subscription_revision(ClientId client) const;

  // --- Radii ----------------------------------------------------------------------------

  /// Changes R and L for the following ticks, with the same rules as WorldDef (refused with
  /// invalid_argument, the message naming the radius and its value). Members between
  /// the old and new radii stay or leave by the new rule at the next tick.
  [[nodiscard]] Status set_radii(float enter_radius, float leave_radius);
  [[nodiscard]] float enter_radius() const noexcept;
  [[nodiscard]] float leave_radius() const noexcept;

  // --- The tick and its output ----------------------------------------------------------

  /// Runs one tick (phases above) and returns its totals. The first tick is tick 0.
  TickStats tick();
  /// Number of ticks run so far.
  [[nodiscard]] std::uint64_t tick_count() const noexcept;

  /// The records of the last tick for `client` (empty before the first tick, and for a client
  /// created since). Valid until the next tick().
  [[nodiscard]] Result<ClientStream> stream(ClientId client) const;

  /// The client's interest set after the last tick, sorted by entity index. Valid until the
  /// next tick().
  [[nodiscard]] Result<std::span<const EntityId>> interest_set(ClientId client) const;

  /// Every live client, in ascending slot order (the order tick() processes them).
  /// Valid until the next call that creates or destroys a client.
  [[nodiscard]] std::span<const ClientId> clients() const noexcept;

 private:
  explicit World(std::unique_ptr<WorldImpl> impl) noexcept;
  std::unique_ptr<WorldImpl> impl_;
};

}  // namespace sightline
