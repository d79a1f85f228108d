// The World: entities with positions, clients that view from an entity, and one tick that turns
// positions into per-client spawn, update and despawn records.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "sightline/client_image.h"
#include "sightline/events.h"
#include "sightline/export.h"
#include "sightline/handles.h"
#include "sightline/interest_keys.h"
#include "sightline/occlusion.h"
#include "sightline/relevance.h"
#include "sightline/space_def.h"
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
  /// The factor on the client's radii at which this entity enters and leaves, in
  /// [kMinRadiusScale, kMaxRadiusScale]: 2 for something heard twice as far (a gunshot's source,
  /// an "audible" class), 0.5 for clutter. See World::set_radius_scale.
  float radius_scale = 1.0f;
  /// The space it is created in; null means the world's default space.
  SpaceId space{};
  /// A presenter: held by every client of its space whose key admits it, at any distance. An
  /// entity with no position (a match record, a ledger) is a presenter whose position nobody reads.
  bool presenter = false;
  /// An id of the game's own for the entity, unique among the World's live entities: what the
  /// game, or a cluster of processes that each hold a copy, calls it. 0 (the default) is none.
  /// Required when WorldDef::order_key is OrderKey::external, where it replaces the slot in
  /// every choice that ranks entities (world.h's rule l and the schedule). Read back with
  /// external_id, looked up with find_external.
  std::uint64_t external_id = 0;
  /// Whether the entity begins here: its spawns at the first tick say `created`
  /// (SpawnRecord::created). false for an entity that already existed elsewhere (a copy of
  /// another process's entity, one handed back after withdraw_entity), so that its clients play
  /// no appearance.
  bool created = true;
};

/// A 2D position on the ground plane.
struct Position {
  float x = 0.0f;
  float z = 0.0f;
};

class WorldImpl;

/// One transition of a client's set as its history keeps it (World::set_history_capacity).
struct HistoryEntry {
  std::uint64_t tick = 0;  ///< The tick of the record.
  EntityId entity;
  bool spawned = false;  ///< True: it entered the set (a spawn record); false: it left (a despawn).
  SpawnReason spawn_reason = SpawnReason::near;        ///< The spawn record's, when spawned.
  DespawnReason despawn_reason = DespawnReason::left;  ///< The despawn record's, when not.
  /// World units from the client's nearest origin in its space (its viewer, or an origin of
  /// World::add_origin) to the entity, at that tick; infinity when none is in the entity's space.
  float distance = 0.0f;
  /// World::why right after that tick: the rule that decided and whether it held. Not known
  /// (rule_known false, rule out_of_range) for an entity destroyed or withdrawn at that tick.
  bool rule_known = false;
  Rule rule = Rule::out_of_range;
};

/// Most transitions a client's history keeps.
inline constexpr std::uint32_t kMaxHistoryEntries = 1u << 16;

/// Wall time of each phase of the last tick (the numbered phases below), nanoseconds on the
/// steady clock: for a server's metrics and debug console. Timings are the one output of a tick
/// that differs between two runs of the same inputs.
struct TickTimings {
  std::uint64_t spaces_ns = 0;     ///< 1. spaces (and settling attachment trees)
  std::uint64_t index_ns = 0;      ///< 2. index
  std::uint64_t relevance_ns = 0;  ///< 3. relevance and 4. schedule: the client passes
  std::uint64_t events_ns = 0;     ///< 5. events
  std::uint64_t release_ns = 0;    ///< 6. release
};

/// An interest-management world.
///
/// Inputs (positions, flags, spaces, attachments, clients and their origins) are recorded
/// between ticks and take effect at the next tick(). tick() runs fixed phases in this order
/// (docs/architecture.md):
///   1. spaces:   count each space's clients (live clients whose viewer is in it), switch its
///                broadcast mode (SpaceDef::broadcast_threshold) and settle whether it culls at
///                this tick and at which radii (a culling drill forces culling on);
///   2. index:    bin every live, unattached, unbounded entity into a uniform grid by counting sort
///                (with a crowd cap, densely filled cells again into finer ones);
///   3. relevance, per client in ascending slot order, for every entity of the world, by the rule
///                below; the client's set becomes what the rule holds, and the differences
///                become its spawns and despawns;
///   4. schedule: per client, an update for each member due this tick;
///   5. events:   every event emitted since the last tick goes to the clients of its space with an
///                origin within its class's radius, its subject checked against the sets just
///                made (emit_event); the rule reads the positions, viewers and origins of this tick;
///   6. release:  slots of entities destroyed before this tick become reusable; teleport and
///                origin-change marks are cleared.
///
/// The rule. Entities attached to one another form a tree, and a tree is held or not as a whole:
/// its root's key, space, position, bound and radius scale decide. For client c in space S (its
/// viewer's), with origins O (the viewer and those extra origins that are in S) and nearest2(e)
/// the smallest float dx*dx + dz*dz from e to an origin, an entity e with root r is decided by
/// the first match (R and L below are c's radii and s is r's radius scale, see "Radii"):
///   a. e is c's viewer: not held (the client predicts its own viewer);
///   b. r is not in S: not held;
///   c. an entity of the tree is always relevant: held (spawn reason `always`);
///   d. c owns an entity of the tree: held (`owner`);
///   e. an entity of the tree is an origin of c: held (`origin`);
///   f. r's key does not admit c: not held;
///   g. r is a presenter: held (`presenter`);
///   h. a bypass_distance subscription of c admits r's key: held (`key`);
///   i. S does not cull at this tick: held (`unculled`);
///   j. r was in c's set after the last tick: held while nearest2(r) <= (s * L + b)^2, with b
///      the root's bound radius, and r is in sight;
///   k. otherwise held when nearest2(r) <= (s * R + b)^2 and r is visible (`near`, or `teleport`
///      when an entity of the tree was teleported since the last tick).
///   l. crowd cap (WorldDef::crowd_cap > 0): of the roots held by j or k, only the crowd_cap
///      smallest by (nearest2(r) / reach^2, r's order) are held, reach being s * L + b for a root
///      that was in c's set after the last tick and s * R + b otherwise (float, as written); the
///      others are not held (`left` for a member).
/// Radii. c's radii are its space's (R_S, L_S: SpaceState's) unless c set a view radius v
/// (set_view_radius): then R = min(max(v, S.min_view_radius), S.max_view_radius, or R_S when
/// that is 0). With (E, F) the pair whose proportion L keeps, (v, c's leave radius) when c gave
/// one and (R_S, L_S) otherwise, L = F when R == E, else min(R * (F / E), kMaxRadius). Both are
/// settled at each tick, so a change takes effect at the next tick: members between the old and
/// the new radii stay or leave by the new rule then.
/// Sight applies in a culling space with walls (set_walls) or when a visibility filter is set;
/// elsewhere every entity is visible. r is visible at a tick when some origin of c sees r's
/// bounding disc past the walls of the space (the centre, and with b > 0 the two points b from it
/// across the line of sight: OccluderGrid's samples) at r's position p or at p + v * T (v r's
/// velocity, T c's look-ahead), and the filter, if set, returns true for (c, r). A member is in
/// sight while it is visible or was visible at most SpaceDef::visibility_hold_ticks ticks ago; a
/// tick at which the member was held by another rule, or sight did not apply to c, counts as a
/// tick it was visible (so the last tick before sight starts to apply does).
/// An entity that is not its tree's root spawns with reason `attached`. A member that is no
/// longer held despawns with reason `destroyed` (it was destroyed), `space_changed` (rule b),
/// `key_removed` (f), `culling_switched` (out of range at the tick its space turned culling on)
/// `hidden` (in range but out of sight, j or k) or `left` (the viewer, or out of range). A spawn
/// also says whether its entity was created since the previous tick (SpawnRecord::created).
///
/// The schedule: a member's period is the slower of its root's distance tier (tiers apply in
/// culling spaces: the first with nearest2(r) <= (fraction * (s * R) + b)^2, the last beyond all; 1
/// elsewhere) and its root's key rate (the fastest matching subscription; none for Global keys
/// and for trees held by rules c to e). It is due when period == 1, or (tick + r's order) %
/// period == 0 (in 64-bit unsigned arithmetic), or an entity of r's tree was teleported since the
/// last tick, or c's origins changed since the last tick (set_viewer, add_origin, remove_origin,
/// destroying an extra origin, teleporting the viewer or an extra origin): every member is then
/// due.
///
/// An entity's order is its slot (EntityId::index), or its EntityDef::external_id when
/// WorldDef::order_key is OrderKey::external. With external ids, which slot an entity landed in
/// decides nothing: two Worlds given the same entities in any creation order (another process
/// holding copies, say) hold the same sets and give the same records, up to the handles. The
/// records' order within a tick stays by slot.
///
/// Memory: after warm-up (stable entity, client and set counts, a steady event rate) neither a
/// tick nor emit_event performs heap allocation. Thread safety: use one World from one thread at
/// a time; with WorldDef::threads > 1, tick() spreads phases 3 and 4 over its own worker threads
/// (and phase 2's passes over the entities, in a world of 32,768 entity slots or more), and the
/// records are the same for any thread count.
/// Determinism: the same sequence of calls gives the same records, on any platform.
class SIGHTLINE_API World {
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
  /// Refused (non_finite_position) for a NaN, infinite or out-of-range position; refused
  /// (invalid_argument, naming the id) when def.external_id is held by a live entity, or is 0
  /// while WorldDef::order_key is OrderKey::external.
  [[nodiscard]] Result<EntityId> create_entity(const EntityDef& def);

  /// The entity's EntityDef::external_id (0 for none). Also for an entity destroyed or withdrawn,
  /// until its slot is reused (at the earliest after the tick that despawned it), so that the
  /// records of that tick can be named.
  [[nodiscard]] Result<std::uint64_t> external_id(EntityId entity) const;
  /// The live entity whose external id is `external_id`; null when none is (and for 0).
  [[nodiscard]] EntityId find_external(std::uint64_t external_id) const;

  /// Destroys an entity. At the next tick every client holding it gets a despawn with reason
  /// `destroyed`; its slot is reused only after that tick, with a new generation.
  /// Refused (entity_is_viewer) while the entity is some client's viewer.
  [[nodiscard]] Status destroy_entity(EntityId entity);

  /// Removes an entity that goes on existing elsewhere (handed to another process or server, or
  /// parked): as destroy_entity in every way (refusals, attachments detached, the slot reused
  /// after the next tick), except that its holders' despawns say `left`, not `destroyed`, so a
  /// client plays no death. Brought back with create_entity it is a new entity here (another
  /// handle); EntityDef::created false keeps its spawns from saying `created`. Its external id
  /// is free again at once.
  [[nodiscard]] Status withdraw_entity(EntityId entity);

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

  /// Sets the factor on every client's radii at which the entity enters and leaves (per-class
  /// culling, Unreal's NetCullDistance: a game keeps its table of classes, "audible" 2, "clutter"
  /// 0.5, and sets each entity's), in [kMinRadiusScale, kMaxRadiusScale]; invalid_argument naming
  /// the entity and the value otherwise. It scales the client's radii before the bound is added:
  /// enter within s * R + b, leave beyond s * L + b, tiers at fraction * (s * R) + b. While the
  /// entity is attached its root's scale decides. An entity with a scale above 1 is kept, like a
  /// bounded one, in a list every client scans (O(clients) each per tick: a few loud or tall
  /// things, not every entity); one below 1 stays in the grid.
  [[nodiscard]] Status set_radius_scale(EntityId entity, float scale);
  [[nodiscard]] Result<float> radius_scale(EntityId entity) const;

  /// Marks an entity always relevant (held by every client of its space, whatever its key and
  /// distance: a boss whose fight starts) or back to the usual rules, from the next tick. On an
  /// attached entity it makes its whole tree always relevant.
  [[nodiscard]] Status set_always_relevant(EntityId entity, bool always_relevant);
  [[nodiscard]] Result<bool> always_relevant(EntityId entity) const;

  /// Makes a root entity a presenter (see EntityDef::presenter) or not. Refused
  /// (invalid_argument) on an attached entity: presenting belongs to the root.
  [[nodiscard]] Status set_presenter(EntityId entity, bool presenter);
  [[nodiscard]] Result<bool> presenter(EntityId entity) const;

  /// Moves an entity discontinuously (a respawn, a portal). Like set_position, and besides: at
  /// the next tick every client holding its tree gets an update for each of its entities whatever
  /// their tier, a client it newly enters gets spawn reason `teleport`, and when it is an origin
  /// of a client, every member of that client is due.
  [[nodiscard]] Status teleport(EntityId entity, float x, float z);

  // --- Attachments ----------------------------------------------------------------------

  /// Attaches `child` to `parent` (a weapon to a hand, a rider to a horse): from the next tick
  /// the child is held exactly when its tree's root is, spawns after its parent and despawns
  /// before it (stream.h's order). While attached, the child's own position and bound radius do
  /// not decide who holds it (its position still serves when it is a client's viewer or origin);
  /// its key, space and presenter flag belong to the root. Re-attaching moves it.
  /// Refused (invalid_argument), changing nothing, when: child == parent; parent is attached
  /// (directly or not) to child; the tree would be deeper than kMaxAttachmentDepth; the child
  /// has a non-Global key or is a presenter; the two are in different spaces.
  [[nodiscard]] Status attach(EntityId child, EntityId parent);
  /// Makes the entity a root again, at its own position. Detaching a root is not an error.
  /// Destroying a parent detaches its children the same way.
  [[nodiscard]] Status detach(EntityId child);
  /// The parent, or a null EntityId for a root.
  [[nodiscard]] Result<EntityId> parent(EntityId entity) const;
  /// The root of the entity's tree (the entity itself for a root).
  [[nodiscard]] Result<EntityId> root(EntityId entity) const;

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
  /// The client's state after the last tick (client_image.h), every entity in it named by its
  /// external id, for another World to adopt: a client handed to another process. Refused
  /// (invalid_argument, naming it) when the viewer, a member, an extra origin or an owned entity
  /// has no external id. Allocates.
  [[nodiscard]] Result<ClientImage> export_client(ClientId client) const;
  /// A new client from another World's export_client: viewing from the live entity whose
  /// external id is image.viewer, holding image.members as its set after the last tick, with the
  /// image's subscriptions (and revision), extra origins, owned entities (taken from any other
  /// owner, as set_owner does), look-ahead, view radius and marks. Its next tick goes on from
  /// there: members still held produce no spawn, members no longer held despawn. Every external
  /// id must name a live entity here, and the image must hold what the setters accept (no
  /// member or origin twice, the viewer no extra origin (it may be a member, after set_viewer), at most
  /// kMaxOrigins origins, valid subscriptions listing each key once, look-ahead and view
  /// radius); otherwise refused (invalid_argument, naming the field and value) with nothing
  /// changed. Allocates; the spans of interest_set and stream of other clients, and of events,
  /// may move: read them again after it.
  [[nodiscard]] Result<ClientId> adopt_client(const ClientImage& image);
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

  // --- Interest keys and subscriptions (see interest_keys.h) ---------------------------

  /// Gives the entity an Area key: only clients subscribed to `key` through
  /// set_area_subscriptions may hold it. Refused (invalid_argument) when key > kMaxInterestKey.
  /// Every key setter is refused (invalid_argument) on an attached entity: keys belong to the
  /// root, whose key the whole tree follows.
  [[nodiscard]] Status set_area_interest_key(EntityId entity, std::uint64_t key);
  /// Gives the entity a User key: only clients subscribed through add_user_subscription may hold
  /// it. Refused (invalid_argument) for key 0 (it would encode as Global) and key > kMaxInterestKey.
  [[nodiscard]] Status set_user_interest_key(EntityId entity, std::uint64_t key);
  /// Back to Global, the default: every client may hold it.
  [[nodiscard]] Status set_global_interest_key(EntityId entity);
  [[nodiscard]] Result<InterestKey> interest_key(EntityId entity) const;

  /// Replaces the client's Area subscriptions as a set (User subscriptions are untouched). A key
  /// listed twice keeps its fastest rate and is bypass if either entry is. Setting the set it
  /// already has changes nothing: subscription_revision() stays. Every key is checked first; a
  /// refused call changes nothing.
  [[nodiscard]] Status set_area_subscriptions(ClientId client,
                                              std::span<const KeySubscription> subscriptions);
  /// Adds or replaces one User subscription. It survives set_area_subscriptions and
  /// clear_area_subscriptions.
  [[nodiscard]] Status add_user_subscription(ClientId client, KeySubscription subscription);
  /// Removes one User subscription; removing one the client does not have is not an error.
  [[nodiscard]] Status remove_user_subscription(ClientId client, std::uint64_t key);
  [[nodiscard]] Status clear_area_subscriptions(ClientId client);
  [[nodiscard]] Status clear_user_subscriptions(ClientId client);
  /// Both kinds, Area and User.
  [[nodiscard]] Status clear_subscriptions(ClientId client);
  /// The client's subscriptions, decoded, sorted by key value. Allocates; not for the hot path.
  [[nodiscard]] Result<std::vector<KeySubscription>> area_subscriptions(ClientId client) const;
  [[nodiscard]] Result<std::vector<KeySubscription>> user_subscriptions(ClientId client) const;
  /// Rises by one on every call that actually changed the client's subscriptions.
  [[nodiscard]] Result<std::uint64_t> subscription_revision(ClientId client) const;

  // --- Spaces ---------------------------------------------------------------------------

  /// The space entities are created in unless EntityDef::space says otherwise. Its SpaceDef starts
  /// as culling on at the World's radii (WorldDef, set_radii) without broadcast; set_space_def may
  /// change it. It cannot be destroyed.
  [[nodiscard]] SpaceId default_space() const noexcept;
  /// Creates a space (validates `def`; the message names the field and its value).
  [[nodiscard]] Result<SpaceId> create_space(const SpaceDef& def);
  /// Destroys an empty space. Refused (invalid_argument) while entities are in it, and for the
  /// default space.
  [[nodiscard]] Status destroy_space(SpaceId space);
  /// Changes a space's settings from the next tick (validated as create_space does). Its
  /// broadcast mode carries over: a space that was not broadcasting, or had threshold 0, starts
  /// the new setting culling. A drill stays in force.
  [[nodiscard]] Status set_space_def(SpaceId space, const SpaceDef& def);
  [[nodiscard]] Result<SpaceDef> space_def(SpaceId space) const;
  /// What the space did at the last tick (before the first tick: what its SpaceDef gives, no
  /// drill), and its entity count now.
  [[nodiscard]] Result<SpaceState> space_state(SpaceId space) const;
  /// Moves a root entity and everything attached to it into `space`. Clients holding them in
  /// the old space get despawns (`space_changed`); a client whose viewer moves follows it, and
  /// its set is rebuilt in the new space. Refused on an attached entity.
  [[nodiscard]] Status set_space(EntityId entity, SpaceId space);
  [[nodiscard]] Result<SpaceId> space(EntityId entity) const;
  /// The space of the client's viewer.
  [[nodiscard]] Result<SpaceId> client_space(ClientId client) const;
  /// A culling drill: forces culling on in `space` at these radii (validated like
  /// set_radii) from the next tick, whatever its setting and broadcast mode, so a game can see
  /// what a culling space would send. clear_culling_drill restores the setting.
  [[nodiscard]] Status set_culling_drill(SpaceId space, float enter_radius, float leave_radius);
  [[nodiscard]] Status clear_culling_drill(SpaceId space);

  // --- Sight (occlusion.h) --------------------------------------------------------------

  /// Replaces the static walls of `space` (rebuilds its occluder index: allocates, O(walls);
  /// meant for level loads, not for every tick). Every wall is checked first (non_finite_position,
  /// naming the wall's position in the span and its value); a refused call changes nothing. No
  /// walls (the default) means nothing blocks sight.
  [[nodiscard]] Status set_walls(SpaceId space, std::span<const WallSegment> walls);
  /// The space's walls. Valid until the next set_walls of that space.
  [[nodiscard]] Result<std::span<const WallSegment>> walls(SpaceId space) const;
  /// The entity's velocity, world units per second, for look-ahead (finite, |v| <= kMaxCoordinate
  /// per axis; invalid_argument otherwise). 0 by default; the World never moves anything.
  [[nodiscard]] Status set_velocity(EntityId entity, float vx, float vz);
  [[nodiscard]] Result<Velocity> velocity(EntityId entity) const;
  /// How far ahead sight looks for this client, seconds, in [0, kMaxLookAhead]: at least its
  /// latency, so an entity about to come round a corner is sent before it does (no pop-in).
  [[nodiscard]] Status set_look_ahead(ClientId client, float seconds);
  [[nodiscard]] Result<float> look_ahead(ClientId client) const;
  /// Sets the game's visibility test (occlusion.h), or removes it with nullptr.
  void set_visibility_filter(VisibilityFilter filter, void* context) noexcept;

  // --- A client's own radius ----------------------------------------------------------

  /// Sets the radii the client asks for (a player's view distance), world units. enter_radius 0
  /// (the default) takes its space's radii; otherwise it must be in [kMinRadius, kMaxRadius],
  /// and leave_radius 0 (keep the space's proportion of leave to enter) or in [enter_radius,
  /// kMaxRadius] (leave_radius == enter_radius: no hysteresis); invalid_argument naming the
  /// client and the value otherwise, changing nothing. The enter radius is held to the range of
  /// whichever space the client is in at each tick (SpaceDef::min_view_radius, max_view_radius;
  /// by default a client may narrow its view, not widen it), and the leave radius keeps its
  /// proportion to it (class comment, "Radii"). Takes effect at the next tick without restarting
  /// anything: members beyond the new leave radius despawn `left`, entities within the new enter
  /// radius spawn `near`.
  [[nodiscard]] Status set_view_radius(ClientId client, float enter_radius, float leave_radius = 0.0f);
  /// The radii last set with set_view_radius (both 0: none).
  [[nodiscard]] Result<ClientRadii> view_radius(ClientId client) const;
  /// The radii the client's distance rules used at the last tick (its space's enter and leave
  /// radius, or those its view radius gave; both 0 where its space did not cull). Before the
  /// client's first tick: both 0.
  [[nodiscard]] Result<ClientRadii> client_radii(ClientId client) const;

  // --- Questions ------------------------------------------------------------------------

  /// Whether the entity is in the client's set after the last tick.
  [[nodiscard]] Result<bool> is_relevant_to(ClientId client, EntityId entity) const;
  /// The rule (class comment) that admits or excludes the entity, evaluated on the inputs as
  /// they are now, with the set of the last tick standing for membership (rule j). Called right
  /// after tick(), held == is_relevant_to() and the rule is the one that tick applied to what it
  /// held (an entity that tick let go is no longer a member, so it is answered by rule k: a
  /// member despawned `hidden`, or left out by the crowd cap, beyond R reads out_of_range, and
  /// one the cap left out while held out of sight reads hidden). With a crowd cap it ranks the
  /// entity against every root the distance rules hold (O(entities)). In a space that needs
  /// sight it runs the sight test (and the filter), and allocates.
  [[nodiscard]] Result<Why> why(ClientId client, EntityId entity) const;
  /// The flight recorder, off for every client by default: keeps the client's last `capacity`
  /// spawns and despawns (HistoryEntry), the oldest dropped first, recorded at the end of each
  /// tick. 0 turns it off and frees its memory; a changed capacity starts it empty, the same one
  /// keeps what it holds. Refused:
  /// capacity above kMaxHistoryEntries (invalid_argument), a client that is not live
  /// (stale_handle). Memory is allocated here only: a tick records without allocating, except
  /// that World::why allocates in a space that needs sight. Cost per tick: one World::why and one
  /// distance per recorded transition (why is O(entities) with a crowd cap).
  Status set_history_capacity(ClientId client, std::uint32_t capacity);
  /// The kept transitions of `entity` (that exact handle) for `client`, oldest first: "why did
  /// this entity vanish?" after the fact. Empty when the recorder is off or kept none. Allocates.
  /// Refused for a client that is not live (stale_handle); the entity need not be live.
  [[nodiscard]] Result<std::vector<HistoryEntry>> history(ClientId client, EntityId entity) const;
  /// Every kept transition of the client, oldest first. Allocates.
  [[nodiscard]] Result<std::vector<HistoryEntry>> history(ClientId client) const;
  /// The grid the last tick built and the cells of it that the client's enter scan reads, for
  /// each of its origins: those the box of its enter radius (World::client_radii) around the
  /// origin's position at that tick overlaps, the same cells its pass read. With a crowd cap the
  /// pass may read fewer (it stops once the cap is full). Call it after a tick, before the next
  /// input changes positions.
  [[nodiscard]] Result<GridScan> grid_scan(ClientId client) const;
  /// How many clients hold the entity after the last tick (a game can slow NPCs nobody sees).
  [[nodiscard]] Result<std::uint32_t> holder_count(EntityId entity) const;

  // --- Radii ----------------------------------------------------------------------------

  /// Changes the world's R and L (the default space's, and those of spaces whose SpaceDef takes
  /// the world's) for the following ticks, with the same rules as WorldDef (refused with
  /// invalid_argument, the message naming the radius and its value). Members between
  /// the old and new radii stay or leave by the new rule at the next tick.
  [[nodiscard]] Status set_radii(float enter_radius, float leave_radius);
  [[nodiscard]] float enter_radius() const noexcept;
  [[nodiscard]] float leave_radius() const noexcept;
  /// Changes WorldDef::crowd_cap from the next tick (0: no cap). A member beyond the new cap
  /// despawns `left` at that tick.
  void set_crowd_cap(std::uint32_t cap) noexcept;
  [[nodiscard]] std::uint32_t crowd_cap() const noexcept;
  /// WorldDef::order_key, as created.
  [[nodiscard]] OrderKey order_key() const noexcept;

  // --- Events (events.h, docs/events.md) -------------------------------------------------

  /// Creates an event class (validates `def`: invalid_def, the message naming the field and its
  /// value). Classes are never destroyed; a game makes a handful at start-up.
  [[nodiscard]] Result<EventClassId> create_event_class(const EventClassDef& def);
  /// Changes a class (validated as create_event_class does). Events already emitted are delivered
  /// by the new setting at the next tick.
  [[nodiscard]] Status set_event_class(EventClassId event_class, const EventClassDef& def);
  [[nodiscard]] Result<EventClassDef> event_class(EventClassId event_class) const;

  /// Queues a one-off event for the next tick and returns its index in that tick's events().
  /// At the tick (phase 5) client c receives it when c's space is the event's space and one of
  /// c's origins (the viewer, and the extra origins in that space) is within the class's radius
  /// of (x, z) by the float test dx*dx + dz*dz <= radius*radius. When the event names a subject
  /// that c does not hold after the tick (in its set, or its viewer), the class's when_absent
  /// decides: no record, a null subject, or the handle as is. A subject destroyed before the tick
  /// is held by nobody, so the policy applies to every recipient. A client destroyed before the
  /// tick receives nothing; one created before it may receive the event. An event whose space is
  /// destroyed before the tick reaches nobody.
  /// Refused, changing nothing: a null or unknown class (null_handle, stale_handle); a stale space
  /// or subject (stale_handle; a null space is the default space, a null subject is none); a NaN,
  /// infinite or out-of-range position (non_finite_position); more than kMaxEventsPerTick events
  /// since the last tick (invalid_argument).
  [[nodiscard]] Result<std::uint32_t> emit_event(const EventDef& def);
  /// The events delivered at the last tick, in emit order (the indices emit_event returned), each
  /// with its space resolved. Empty before the first tick. Valid until the next tick().
  [[nodiscard]] std::span<const EventDef> events() const noexcept;

  // --- The tick and its output ----------------------------------------------------------

  /// Runs one tick (phases above) and returns its totals. The first tick is tick 0.
  TickStats tick();
  /// The phases' wall times of the last tick (all 0 before the first).
  [[nodiscard]] const TickTimings& last_tick_timings() const noexcept;
  /// The number the next tick will have: WorldDef::first_tick plus the ticks run so far.
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
  friend class TickSource;  // the Replicator's view of the last tick (src/tick_view.h)
  explicit World(std::unique_ptr<WorldImpl> impl) noexcept;
  std::unique_ptr<WorldImpl> impl_;
};

}  // namespace sightline
