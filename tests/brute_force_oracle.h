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
#include "sightline/stream.h"
#include "sightline/world_def.h"

namespace sightline {
class World;
}

namespace sightline::testing {

/// The rule, per client, per tick (the state starts empty; the first tick is tick 0):
///   1. leave: members that were destroyed leave (despawn `destroyed`); the viewer itself leaves
///      (`left`); always-relevant members stay without a test; any other member leaves (`left`)
///      when its float squared distance to the viewer exceeds L*L;
///   2. enter: every live always-relevant non-member other than the viewer enters (`always`);
///      every other live non-member non-viewer enters (`near`) when dx*dx + dz*dz <= R*R, with
///      dx = ex - vx and dz = ez - vz in float (d == R is inside);
///   3. schedule: every member gets an update (no tiers); with tiers, a member within
///      fraction * R of the viewer (inclusive) uses the first such tier's
///      period, a member beyond the last tier uses the last tier's period, and it is updated when
///      period == 1 or (tick + entity_index) % period == 0.
///      "Within" is tested like the enter radius: d2 <= (fraction * R) * (fraction * R) in float.
/// Interest keys (world.h's rule order): every entity stores one key (Global 0, Area (k<<1)|1,
/// User k<<1); every client holds Area and User subscriptions {key, send_rate, bypass_distance}.
/// A key admits a client when it is Global or the client subscribes to that stored key (so Area
/// keys match area subscriptions only, User keys user subscriptions only). With keys, per client:
///   1. leave, per member in this order: destroyed (`destroyed`); the viewer (`left`); always
///      relevant (kept, no test); its key does not admit the client (`key_removed`); admitted by
///      a bypass_distance subscription (kept, no test); farther than L (`left`);
///   2. enter, per live non-member non-viewer: always relevant (`always`); else admitted by a
///      bypass_distance subscription, at any distance (`key`); else admitted and within R (`near`);
///   3. schedule: period = max(tier period (1 without tiers), key rate), the key rate being the
///      matching subscription's send_rate (0 read as 1), and 1 for Global and always-relevant
///      entities; due when period == 1 or (tick + entity_index) % period == 0.
/// set_area_keys replaces the area subscriptions as a set (a key listed twice keeps the smallest
/// rate and bypass if either entry has it); the revision rises by one on every accepted call that
/// changed the client's subscriptions (by value, rates read with 0 as 1).
/// Owners, extra origins and bounds (world.h's class comment, docs/relevance.md):
///   - every entity has at most one owner (set_owner replaces; clear_owner, destroying the
///     owner client or destroying the entity ends it; a reused slot starts unowned);
///   - every client has up to kMaxOrigins extra origins besides its viewer (never the viewer,
///     no duplicates; destroying the entity removes it everywhere; set_viewer to an extra
///     origin removes it from the extra origins);
///   - every entity has a bound radius b in [0, kMaxRadius] (0 on creation unless the def says
///     otherwise; 0 again on slot reuse).
/// nearest2(e) is the smallest float dx*dx + dz*dz over the viewer and the extra origins. Per
/// client, the full rule is then:
///   1. leave, per member in this order: destroyed (`destroyed`); the viewer (`left`); always
///      relevant, owned by this client, or one of its extra origins (kept, no test); its key does
///      not admit the client (`key_removed`); admitted by a bypass_distance subscription (kept);
///      nearest2 > (L + b)^2 in float (`left`); else kept;
///   2. enter, per live non-member non-viewer, first match: always relevant (`always`); owned by
///      this client (`owner`); an extra origin (`origin`); bypass subscription (`key`); admitted
///      and nearest2 <= (R + b)^2 in float (`near`);
///   3. schedule: the tier is the first with nearest2 <= (fraction * R + b)^2 in float (the last
///      tier beyond all); period = max(tier period, key rate), the key rate being 1 for Global,
///      always-relevant, owned and origin members.
/// Every list is sorted by entity index. Destroyed slots are forgotten after the tick.
class BruteForceOracle {
 public:
  struct ClientRecords {
    std::vector<SpawnRecord> spawns;
    std::vector<UpdateRecord> updates;
    std::vector<DespawnRecord> despawns;
    std::vector<EntityId> members;  ///< The interest set after the last tick.
  };

  BruteForceOracle(float enter_radius, float leave_radius, std::vector<DistanceTier> tiers);

  // Mirrors of the World's inputs. Each returns an empty string when the call is consistent with
  // the rule (the handle names what the oracle knows), else a description of the inconsistency.
  std::string create_entity(EntityId id, float x, float z, bool always_relevant, float bound_radius = 0.0f);
  std::string destroy_entity(EntityId id);
  std::string set_position(EntityId id, float x, float z);
  std::string set_always_relevant(EntityId id, bool always_relevant);
  std::string create_client(ClientId id, EntityId viewer);
  std::string destroy_client(ClientId id);
  std::string set_viewer(ClientId id, EntityId viewer);
  void set_radii(float enter_radius, float leave_radius);

  // Bounds, owners and origins. The caller validates arguments (the oracle records accepted
  // inputs only); each returns an empty string, or why the call is inconsistent with the rule.
  std::string set_bound_radius(EntityId id, float radius);
  std::string set_owner(EntityId id, ClientId owner);
  std::string clear_owner(EntityId id);
  std::string add_origin(ClientId id, EntityId origin);
  std::string remove_origin(ClientId id, EntityId origin);
  /// Why add_origin must be refused with invalid_argument (the viewer, a duplicate, full), or
  /// empty when it must be accepted. Both handles must be live.
  [[nodiscard]] std::string add_origin_refusal(ClientId id, EntityId origin) const;
  /// Bound radius of a live entity (0 when unknown).
  [[nodiscard]] float bound_radius(EntityId id) const;
  /// Owner of a live entity (null when none or unknown).
  [[nodiscard]] ClientId owner(EntityId id) const;
  /// Extra origins of a live client, sorted by entity index (empty when unknown).
  [[nodiscard]] std::vector<EntityId> origins(ClientId id) const;
  [[nodiscard]] bool is_origin(ClientId id, EntityId origin) const;

  // Interest keys. The caller validates keys and rates (the oracle records accepted inputs only);
  // each returns an empty string, or why the handle makes the call inconsistent.
  std::string set_entity_key(EntityId id, std::uint64_t stored_key);
  std::string set_area_keys(ClientId id, const std::vector<KeySubscription>& keys);
  std::string add_user_key(ClientId id, KeySubscription subscription);
  std::string remove_user_key(ClientId id, std::uint64_t key);
  std::string clear_area_keys(ClientId id);
  std::string clear_user_keys(ClientId id);
  std::string clear_interest_keys(ClientId id);
  /// Sets the revision the oracle counts from (the world's value when the client was created).
  void set_revision_base(ClientId id, std::uint64_t revision);
  /// Decoded subscriptions, sorted by key value; expected revision. Client must be known.
  [[nodiscard]] std::vector<KeySubscription> area_keys(ClientId id) const;
  [[nodiscard]] std::vector<KeySubscription> user_keys(ClientId id) const;
  [[nodiscard]] std::uint64_t subscription_revision(ClientId id) const;
  /// Stored key of a live entity (0 when unknown).
  [[nodiscard]] std::uint64_t stored_key(EntityId id) const;
  [[nodiscard]] bool is_live(EntityId id) const { return live(id) != nullptr; }
  [[nodiscard]] bool is_live(ClientId id) const;

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

  /// Compares the World's clients(), and every client's stream and interest set, with the
  /// oracle's. Empty when equal; otherwise the first difference, naming client and entity.
  [[nodiscard]] std::string compare(const World& world) const;

 private:
  struct Entity {
    EntityId id;
    float x = 0.0f;
    float z = 0.0f;
    bool always = false;
    bool alive = true;  ///< False once destroyed, until the next tick forgets the slot.
    std::uint64_t key = 0;  ///< Stored encoding; 0 is Global.
    float bound = 0.0f;     ///< Bound radius, in [0, kMaxRadius].
    ClientId owner;         ///< Null when unowned.
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
    std::vector<EntityId> origins;  ///< Extra origins, sorted by index; never the viewer.
  };

  [[nodiscard]] Client* client(ClientId id);
  [[nodiscard]] const Client* client(ClientId id) const;
  /// Replaces the subscriptions of one kind; bumps the revision when anything changed.
  void replace_kind(Client& client, bool user, const std::map<std::uint64_t, Subscription>& replacement);
  [[nodiscard]] std::vector<KeySubscription> decoded(const Client& client, bool user) const;

  [[nodiscard]] const Entity* live(EntityId id) const;
  [[nodiscard]] std::uint32_t period_for(float distance2, float bound) const;

  float enter_radius_;
  float leave_radius_;
  std::vector<DistanceTier> tiers_;
  std::map<std::uint32_t, Entity> entities_;          // by slot index
  std::map<std::uint32_t, std::uint32_t> last_generation_;  // by slot index, ever seen
  std::map<std::uint32_t, Client> clients_;           // by slot index
  std::uint64_t ticks_ = 0;
};

/// "entity 3:1", "client 0:2": the library's own spelling, for messages.
[[nodiscard]] std::string to_string(EntityId id);
[[nodiscard]] std::string to_string(ClientId id);

}  // namespace sightline::testing
