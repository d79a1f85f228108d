// A brute-force model of the documented interest rule, written from the docs and not from the
// library's code: every client is tested against every entity each tick, O(clients x entities).
// Tests drive it in lockstep with a World and require identical records.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sightline/handles.h"
#include "sightline/interest_keys.h"
#include "sightline/occlusion.h"
#include "sightline/relevance.h"
#include "sightline/space_def.h"
#include "sightline/stream.h"
#include "sightline/world_def.h"

namespace sightline {
class World;
struct EntityDef;
}  // namespace sightline

namespace sightline::testing {

/// The rule, from World's class comment (include/sightline/world.h), per tick; the state starts
/// empty and the first tick is tick 0. Inputs are recorded between ticks.
///
/// Entities. Each has a position, a bound radius b in [0, kMaxRadius], an always-relevant flag,
/// one stored key (Global 0, Area (k<<1)|1, User k<<1), at most one owner client, a space, a
/// presenter flag and a parent (null for a root). Parents form trees of depth <= 15 (a root is
/// depth 0); a tree lies in one space and only its root carries a key or the presenter flag.
/// attach(child, parent) is refused when child == parent, the parent is in the child's subtree,
/// depth(parent) + 1 + height(child's subtree) > kMaxAttachmentDepth, the child has a non-Global
/// key or is a presenter, or the two are in different spaces. Key setters, set_presenter and
/// set_space are refused on an attached entity. detach (a no-op on a root) and destroying the
/// parent make the entity a root at its own position; set_space moves a root's whole tree. An
/// attached entity's own position and bound do not decide who holds it, but an attached viewer
/// or extra origin measures from its own position.
///
/// Spaces. The default space starts as culling on at the World's radii without broadcast; like
/// any space its SpaceDef may change. A space culls when its setting is on and it is not
/// broadcasting, or while a drill is set. Its radii at a tick: the drill's; else radius *
/// enter_factor and radius * leave_factor in float (factor form, radius > 0; the factors are
/// checked only then); else enter_radius and leave_radius when given; else the World's radii at
/// that tick. The broadcast mode starts on when broadcast_threshold > 0 and carries over
/// set_space_def; at each tick, with n the live clients whose viewer is in the space: threshold 0
/// leaves it off; a broadcasting space stops when n > threshold; one that does not broadcast
/// starts when margin <= threshold and n <= threshold - margin. The mode is switched whatever the
/// culling setting; space_state().broadcasting reads it for a space whose setting is on and that
/// has no drill. space_state() reads what the last tick settled (before a space's first tick: as
/// if settled at its creation, with no clients) and the live entity count now. A space turns
/// culling on at a tick when it culls then and its state did not read culling before (so a space
/// created culling does not turn on at its first tick).
///
/// Per client c, with viewer v, S the space of v, O the origins (v and the extra origins in S),
/// nearest2(p) the smallest float dx*dx + dz*dz from p to an origin, and for entity e its root r
/// and tree T, the first match decides (why() names the rule):
///   a. e == v: not held (`viewer`);        b. r not in S: not held (`other_space`);
///   c. some t in T is always relevant: held (`always`, spawn `always`);
///   d. c owns some t in T: held (`owner`);  e. some t in T is in O: held (`origin`);
///   f. r's key does not admit c (Global, or c subscribes to the stored key): not held;
///   g. r is a presenter: held (`presenter`);
///   h. c's subscription to r's key has bypass_distance: held (`key_bypass`, spawn `key`);
///   i. S does not cull at this tick: held (`unculled`);
///   j. r was in c's set after the last tick: held while nearest2(r) <= (L + b_r)^2;
///   k. else held when nearest2(r) <= (R + b_r)^2 (spawn `near`, or `teleport` when an entity of
///      T was teleported since the last tick). Sums and squares are in float; R, L are S's radii
///      at this tick. why() names a held tree `near` when nearest2(r) <= (R + b_r)^2, member or
///      not, `within_leave` for a member beyond that, and `out_of_range` when not held.
/// A non-root spawns with reason `attached`. A member no longer held despawns `destroyed` (it was
/// destroyed), `left` (rule a), `space_changed` (b), `key_removed` (f), `culling_switched` (j or k
/// at the tick S turned culling on) or `left` (j or k otherwise).
/// Schedule: period = max(tier, key rate). The tier is 1 unless S culls and tiers are set: then
/// the first tier with nearest2(r) <= (fraction * R + b_r)^2, the last beyond all. The key rate
/// is 1 for Global keys and trees held by c-e, else the send_rate (0 read as 1) of c's matching
/// subscription. A member is due when period == 1, (tick + r.index) % period == 0, an entity of
/// its tree was teleported since the last tick, or c's origins changed since the last tick: an
/// accepted set_viewer, add_origin or remove_origin on c, the destruction of one of its extra
/// origins, or a teleport of its viewer or of one of its extra origins (in S or not; a client
/// created after the teleport of its viewer counts too).
/// Spawns are sorted by (depth, index), despawns by (depth descending, index), updates and the set
/// by index; a destroyed entity keeps the depth it had when destroyed, so that it still goes
/// before the parent it had.
///
/// Sight. Each space has walls (none when created), each entity a velocity (0 when created, a
/// reused slot too), each client a look-ahead T (0 when created), the World one optional filter
/// (function and context as given to it). Sight applies to c at a tick when S culls then and has
/// walls, or a filter is set. r is visible when some origin o of O sees r's disc (centre p, radius
/// b_r) past S's walls by sees_brute_force (src/occluder_grid.h) at p or at (px + vx*T, pz + vz*T)
/// in float (walls only: with none, every origin sees), and the filter, if set, returns true for
/// (c, r). In rule k a root that is not visible is not held (why: `hidden`); in rule j a member
/// within L that is not visible stays held (why: `near` or `within_leave`) while the tick minus
/// its last visible tick is <= S's visibility_hold_ticks, else it is not held (`hidden`). A
/// member's last visible tick is the tick itself unless it is a root held by j without being
/// visible under sight (then it carries over): ticks held by another rule, or where sight did not
/// apply, count as visible, and entering does. A member excluded with why `hidden` (a child
/// takes its root's answer) despawns `hidden`. why() after the tick reads the new set for
/// membership, as the World does: a member beyond R hidden past its hold is no member then, so
/// why() names it `out_of_range` (its despawn still says `hidden`). Events are not modelled.
///
/// Bookkeeping: set_area_subscriptions replaces the area subscriptions as a set (a key listed
/// twice keeps the smallest rate and bypass if either entry has it); the revision rises by one on
/// every accepted call that changed the client's subscriptions. Destroying an entity removes it from
/// every client's extra origins and ends its ownership; destroying a client ends its ownerships;
/// set_viewer to an extra origin removes it from the extra origins. Destroyed slots are forgotten
/// after the tick; teleport and origin-change marks are cleared by it. withdraw_entity is
/// destroy_entity whose holders' despawns say `left` rather than `destroyed`.
class BruteForceOracle {
 public:
  struct ClientRecords {
    std::vector<SpawnRecord> spawns;
    std::vector<EntityId> updates;
    std::vector<DespawnRecord> despawns;
    std::vector<EntityId> members;  ///< The interest set after the last tick.
  };

  /// `default_space` is the World's default_space(); a null SpaceId anywhere reads as it.
  BruteForceOracle(float enter_radius, float leave_radius, std::vector<DistanceTier> tiers,
                   SpaceId default_space = {});

  // Mirrors of the World's inputs. Each returns an empty string when the call is consistent with
  // the rule (the handle names what the oracle knows), else a description of the inconsistency.
  std::string create_entity(EntityId id, float x, float z, bool always_relevant, float bound_radius = 0.0f,
                            SpaceId space = {}, bool presenter = false, std::uint64_t external_id = 0,
                            bool created = true);
  std::string destroy_entity(EntityId id);
  std::string withdraw_entity(EntityId id);
  std::string set_position(EntityId id, float x, float z);
  std::string set_always_relevant(EntityId id, bool always_relevant);
  std::string create_client(ClientId id, EntityId viewer);
  std::string destroy_client(ClientId id);
  std::string set_viewer(ClientId id, EntityId viewer);
  void set_radii(float enter_radius, float leave_radius);
  /// WorldDef::crowd_cap (0: none).
  void set_crowd_cap(std::uint32_t cap) { crowd_cap_ = cap; }
  /// WorldDef::order_key: what ranks entities in rule l and the schedule's stagger.
  void set_order_key(OrderKey key) { order_key_ = key; }
  [[nodiscard]] OrderKey order_key() const { return order_key_; }
  /// The live entity with EntityDef::external_id `id`, or null (for 0 too).
  [[nodiscard]] EntityId find_external(std::uint64_t id) const;
  /// The EntityDef::external_id of a live entity (0 for none).
  [[nodiscard]] std::uint64_t external_id(EntityId id) const;
  /// (client, root) pairs the crowd cap has left out, over all ticks so far.
  [[nodiscard]] std::uint64_t crowded_total() const noexcept { return crowded_total_; }

  // Bounds, owners and origins. The caller validates arguments (the oracle records accepted
  // inputs only); each returns an empty string, or why the call is inconsistent with the rule.
  std::string set_bound_radius(EntityId id, float radius);
  /// Radius scale s in [kMinRadiusScale, kMaxRadiusScale] (1 when created): a root's enter and
  /// leave radii are s * R and s * L (float) before its bound is added, its tiers' fraction * (s * R).
  std::string set_radius_scale(EntityId id, float scale);
  /// A client's view radii (v, w) (0, 0 when created: its space's radii). At a tick in space S
  /// with radii R_S, L_S: R = R_S and L = L_S when v == 0; else R = min(max(v, S.min_view_radius),
  /// S.max_view_radius, or R_S when that is 0) and, with (E, F) = (v, w) when w != 0 and (R_S, L_S)
  /// otherwise, L = F when R == E, else min(R * (F / E), kMaxRadius).
  std::string set_view_radius(ClientId id, float enter_radius, float leave_radius);
  std::string set_owner(EntityId id, ClientId owner);
  std::string clear_owner(EntityId id);
  std::string add_origin(ClientId id, EntityId origin);
  std::string remove_origin(ClientId id, EntityId origin);
  /// Why add_origin must be refused with invalid_argument (the viewer, a duplicate, full), or
  /// empty when it must be accepted. Both handles must be live.
  [[nodiscard]] std::string add_origin_refusal(ClientId id, EntityId origin) const;
  /// Bound radius of a live entity (0 when unknown).
  [[nodiscard]] float bound_radius(EntityId id) const;
  /// Radius scale of a live entity (1 when unknown); view radius of a live client (0 when unknown).
  [[nodiscard]] float radius_scale(EntityId id) const;
  [[nodiscard]] ClientRadii view_radius(ClientId id) const;
  /// Owner of a live entity (null when none or unknown).
  [[nodiscard]] ClientId owner(EntityId id) const;
  /// Extra origins of a live client, sorted by entity index (empty when unknown).
  [[nodiscard]] std::vector<EntityId> origins(ClientId id) const;
  [[nodiscard]] bool is_origin(ClientId id, EntityId origin) const;

  // Interest keys. The caller validates keys and rates (the oracle records accepted inputs only);
  // each returns an empty string, or why the handle makes the call inconsistent.
  std::string set_entity_key(EntityId id, std::uint64_t stored_key);
  std::string set_area_subscriptions(ClientId id, const std::vector<KeySubscription>& keys);
  std::string add_user_subscription(ClientId id, KeySubscription subscription);
  std::string remove_user_subscription(ClientId id, std::uint64_t key);
  std::string clear_area_subscriptions(ClientId id);
  std::string clear_user_subscriptions(ClientId id);
  std::string clear_subscriptions(ClientId id);
  /// Sets the revision the oracle counts from (the world's value when the client was created).
  void set_revision_base(ClientId id, std::uint64_t revision);
  /// Decoded subscriptions, sorted by key value; expected revision. Client must be known.
  [[nodiscard]] std::vector<KeySubscription> area_subscriptions(ClientId id) const;
  [[nodiscard]] std::vector<KeySubscription> user_subscriptions(ClientId id) const;
  [[nodiscard]] std::uint64_t subscription_revision(ClientId id) const;
  /// Stored key of a live entity (0 when unknown).
  [[nodiscard]] std::uint64_t stored_key(EntityId id) const;
  [[nodiscard]] bool is_live(EntityId id) const { return live(id) != nullptr; }
  [[nodiscard]] bool is_live(ClientId id) const;

  // Spaces. The caller validates definitions and radii (space_def_refusal, drill_refusal); each
  // returns an empty string, or why the call is inconsistent with the rule.
  std::string create_space(SpaceId id, const SpaceDef& def);
  std::string destroy_space(SpaceId id);
  std::string set_space_def(SpaceId id, const SpaceDef& def);
  std::string set_space(EntityId id, SpaceId space);
  std::string set_culling_drill(SpaceId id, float enter_radius, float leave_radius);
  std::string clear_culling_drill(SpaceId id);
  /// Why create_space and set_space_def must refuse `def` ("field: value"), or empty.
  [[nodiscard]] static std::string space_def_refusal(const SpaceDef& def);
  /// Why set_culling_drill must refuse these radii (set_radii's rules), or empty.
  [[nodiscard]] static std::string drill_refusal(float enter_radius, float leave_radius);
  /// Why destroy_space must refuse a live space (the default one, or one with live entities).
  [[nodiscard]] std::string destroy_space_refusal(SpaceId id) const;
  [[nodiscard]] bool is_live(SpaceId id) const;
  [[nodiscard]] SpaceId default_space() const noexcept { return default_space_; }
  /// Live spaces, the default one first, then ascending by index.
  [[nodiscard]] std::vector<SpaceId> spaces() const;
  [[nodiscard]] SpaceDef space_def(SpaceId id) const;
  /// space_state(): the last tick's figures and the live entity count now.
  [[nodiscard]] SpaceState space_state(SpaceId id) const;
  [[nodiscard]] bool has_drill(SpaceId id) const;
  /// The space of a live entity (its root's), or of a live client's viewer.
  [[nodiscard]] SpaceId space(EntityId id) const;
  [[nodiscard]] SpaceId client_space(ClientId id) const;

  // Attachments, presenters, teleports. The caller validates (attach_refusal, is_attached).
  std::string attach(EntityId child, EntityId parent);
  std::string detach(EntityId child);
  std::string set_presenter(EntityId id, bool presenter);
  std::string teleport(EntityId id, float x, float z);
  /// Why attach must be refused with invalid_argument, or empty. Both handles must be live.
  [[nodiscard]] std::string attach_refusal(EntityId child, EntityId parent) const;
  [[nodiscard]] bool is_attached(EntityId id) const { return !parent(id).is_null(); }
  [[nodiscard]] EntityId parent(EntityId id) const;
  [[nodiscard]] EntityId root(EntityId id) const;
  /// Depth in its tree (a root is 0) and height of its subtree (a leaf is 0).
  [[nodiscard]] std::uint32_t depth(EntityId id) const;
  [[nodiscard]] std::uint32_t height(EntityId id) const;
  [[nodiscard]] bool presenter(EntityId id) const;
  [[nodiscard]] bool always_relevant(EntityId id) const;
  /// Teleported since the last tick.
  [[nodiscard]] bool teleported(EntityId id) const;

  // Sight. The caller validates (walls finite within kMaxCoordinate, velocities too, look-ahead
  // in [0, kMaxLookAhead]); each returns an empty string, or why the handle is inconsistent.
  std::string set_walls(SpaceId id, std::vector<WallSegment> walls);
  std::string set_velocity(EntityId id, float vx, float vz);
  std::string set_look_ahead(ClientId id, float seconds);
  /// The filter the World was given (null removes it); the oracle calls it as the World does.
  void set_visibility_filter(VisibilityFilter filter, void* context);
  /// Walls of a live space; velocity of a live entity; look-ahead of a live client.
  [[nodiscard]] std::vector<WallSegment> walls(SpaceId id) const;
  [[nodiscard]] Velocity velocity(EntityId id) const;
  [[nodiscard]] float look_ahead(ClientId id) const;

  /// What the ticks so far reached of sight, for tests that guard the generator.
  struct SightCounts {
    std::uint64_t hidden_despawns = 0;    ///< Despawns with reason `hidden`.
    std::uint64_t hidden_answers = 0;     ///< Decisions (roots and children) of rule `hidden`.
    std::uint64_t held_unseen = 0;        ///< Root members kept by the hold while not visible.
    std::uint64_t look_ahead_spawns = 0;  ///< Roots entering by k, visible only at p + v * T.
    std::uint64_t look_ahead_keeps = 0;   ///< Root members kept by j, visible only at p + v * T.
    std::uint64_t filter_refusals = 0;    ///< Roots seen past the walls that the filter hid.
  };
  [[nodiscard]] const SightCounts& sight_counts() const noexcept { return sight_counts_; }

  /// Runs one tick of the rule; returns its totals (distance_tests is left 0).
  TickStats tick();

  [[nodiscard]] std::uint64_t tick_count() const noexcept { return ticks_; }
  /// Live clients, ascending by index.
  [[nodiscard]] std::vector<ClientId> clients() const;
  /// Live entities, ascending by index.
  [[nodiscard]] std::vector<EntityId> entities() const;
  /// Live entities that are some client's viewer.
  [[nodiscard]] bool is_viewer(EntityId id) const;
  [[nodiscard]] EntityId viewer(ClientId id) const;
  /// Nullptr when the client is unknown.
  [[nodiscard]] const ClientRecords* records(ClientId id) const;
  /// What the last tick decided for a live client and an entity live at that tick (why() called
  /// right after the tick); the root is the entity's root now.
  [[nodiscard]] Why why(ClientId client, EntityId entity) const;
  [[nodiscard]] bool is_relevant_to(ClientId client, EntityId entity) const;
  [[nodiscard]] std::uint32_t holder_count(EntityId entity) const;

  /// Compares the World's clients(), and every client's stream, interest set and radii
  /// (client_radii), with the oracle's. Empty when equal; otherwise the first difference, naming client and
  /// entity.
  [[nodiscard]] std::string compare(const World& world) const;
  /// Compares, right after a tick, is_relevant_to, why and holder_count for every live client
  /// and live entity. Empty when equal; otherwise the first difference.
  [[nodiscard]] std::string compare_questions(const World& world) const;

 private:
  struct Entity {
    EntityId id;
    float x = 0.0f;
    float z = 0.0f;
    bool always = false;
    bool alive = true;       ///< False once destroyed, until the next tick forgets the slot.
    bool withdrawn = false;  ///< Destroyed by withdraw_entity: its despawns say `left`.
    std::uint64_t key = 0;   ///< Stored encoding; 0 is Global.
    float bound = 0.0f;      ///< Bound radius, in [0, kMaxRadius].
    float scale = 1.0f;      ///< Radius scale.
    ClientId owner;          ///< Null when unowned.
    SpaceId space;           ///< Its tree's space (kept equal over a tree).
    bool presenter = false;
    EntityId parent;  ///< Null for a root.
    bool teleported = false;
    bool created = false;        ///< Since the last tick, by a create_entity whose def said created.
    std::uint64_t external = 0;  ///< EntityDef::external_id.
    float vx = 0.0f;             ///< Velocity, world units per second.
    float vz = 0.0f;
    std::uint32_t destroyed_depth = 0;  ///< Its depth when destroyed (despawn order).
  };
  struct Subscription {
    std::uint32_t send_rate = 1;  ///< >= 1 (0 was read as 1).
    bool bypass_distance = false;
    friend bool operator==(const Subscription&, const Subscription&) = default;
  };
  struct Client {
    ClientId id;
    EntityId viewer;
    ClientRecords records;
    std::map<std::uint64_t, Subscription> subscriptions;  ///< By stored key, both kinds.
    std::uint64_t revision = 0;
    std::vector<EntityId> origins;     ///< Extra origins, sorted by index; never the viewer.
    bool origins_changed = false;      ///< set_viewer, add_origin or remove_origin since the last tick.
    std::map<std::uint32_t, Why> why;  ///< The last tick's decision, by entity index.
    float look_ahead = 0.0f;           ///< Seconds.
    float view_enter = 0.0f;           ///< 0: the space's radii.
    float view_leave = 0.0f;           ///< 0: the space's proportion.
    float enter = 0.0f;                ///< Its radii at the last tick; 0 where its space did not cull.
    float leave = 0.0f;
    std::map<std::uint32_t, std::uint64_t> last_visible;  ///< Per member (by index): last visible tick.
  };
  struct Space {
    SpaceId id;
    SpaceDef def;
    bool drill = false;
    float drill_enter = 0.0f;
    float drill_leave = 0.0f;
    std::vector<WallSegment> walls;
    bool broadcasting = false;  ///< The broadcast mode.
    SpaceState state;           ///< As of the last tick (entities unused).
    // Settled in the tick's first phase.
    bool culls = false;
    bool switched_on = false;
    float enter = 0.0f;
    float leave = 0.0f;
  };

  [[nodiscard]] Client* client(ClientId id);
  [[nodiscard]] const Client* client(ClientId id) const;
  /// Replaces the subscriptions of one kind; bumps the revision when anything changed.
  void replace_kind(Client& client, bool user, const std::map<std::uint64_t, Subscription>& replacement);
  [[nodiscard]] std::vector<KeySubscription> decoded(const Client& client, bool user) const;

  [[nodiscard]] const Entity* live(EntityId id) const;
  [[nodiscard]] Entity* live_mut(EntityId id) { return const_cast<Entity*>(live(id)); }
  [[nodiscard]] const Space* live_space(SpaceId id) const;
  [[nodiscard]] Space* live_space_mut(SpaceId id) { return const_cast<Space*>(live_space(id)); }
  [[nodiscard]] SpaceId resolved(SpaceId id) const { return id.is_null() ? default_space_ : id; }
  [[nodiscard]] const Entity& root_of(const Entity& e) const;
  [[nodiscard]] std::uint32_t period_for(float distance2, float bound, float enter_radius) const;
  void settle_spaces();
  /// Phase 1 for one space with `count` clients: its broadcast mode, culling, radii and state.
  void settle(Space& space, std::uint32_t count) const;

  float enter_radius_;
  float leave_radius_;
  std::uint32_t crowd_cap_ = 0;
  OrderKey order_key_ = OrderKey::slot;
  /// An entity's order: its slot, or its external id under OrderKey::external.
  [[nodiscard]] std::uint64_t order_of(const Entity& e) const {
    return order_key_ == OrderKey::external ? e.external : e.id.index;
  }
  std::uint64_t crowded_total_ = 0;
  std::vector<DistanceTier> tiers_;
  SpaceId default_space_;
  std::map<std::uint32_t, Entity> entities_;                // by slot index
  std::map<std::uint32_t, std::uint32_t> last_generation_;  // by slot index, ever seen
  std::map<std::uint32_t, Client> clients_;                 // by slot index
  std::map<std::uint32_t, Space> spaces_;                   // by slot index
  std::map<std::uint32_t, std::uint32_t> last_space_generation_;
  std::uint64_t ticks_ = 0;
  VisibilityFilter filter_ = nullptr;
  void* filter_context_ = nullptr;
  SightCounts sight_counts_;
};

/// "entity 3:1", "client 0:2", "space 1:1": the library's own spelling, for messages.
[[nodiscard]] std::string to_string(EntityId id);
[[nodiscard]] std::string to_string(ClientId id);
[[nodiscard]] std::string to_string(SpaceId id);
[[nodiscard]] std::string to_string(Rule rule);
[[nodiscard]] std::string to_string(SpawnReason reason);
[[nodiscard]] std::string to_string(DespawnReason reason);

}  // namespace sightline::testing
