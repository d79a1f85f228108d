// Interest keys: Global, Area and User keys on entities, a client's Area and User subscriptions,
// their send rates and bypass_distance, how keys compose with distance (world.h's rule order),
// and every refused key input leaving the world unchanged.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "small_world.h"

namespace sightline {
namespace {

constexpr std::uint64_t kBit63 = std::uint64_t{1} << 63;

// The stored encoding is the documented one (include/sightline/interest_keys.h): Global 0,
// Area (k << 1) | 1, User k << 1. Checked when this file compiles.
static_assert(encode_area_key(42) == 85);
static_assert(encode_user_key(42) == 84);
static_assert(decode_interest_key(0) == InterestKey{InterestKeyType::global, 0});
static_assert(decode_interest_key(85) == InterestKey{InterestKeyType::area, 42});
static_assert(decode_interest_key(84) == InterestKey{InterestKeyType::user, 42});
static_assert(encode_area_key(kMaxInterestKey) == ~std::uint64_t{0});
static_assert(decode_interest_key(encode_user_key(kMaxInterestKey)) ==
              InterestKey{InterestKeyType::user, kMaxInterestKey});

using testing::small_world_def;
using testing::SmallWorld;
using Spawn = std::pair<EntityId, SpawnReason>;
using Despawn = std::pair<EntityId, DespawnReason>;

class InterestKeysTest : public ::testing::Test {
 protected:
  void SetUp() override { reset({}); }

  // A fresh world; its client views from an entity at the origin with a User key nobody
  // subscribes, so that no other client's viewer shows up in any set.
  void reset(std::vector<DistanceTier> tiers) {
    WorldDef def = small_world_def(10.0f, 12.0f);
    def.tiers = std::move(tiers);
    w = SmallWorld(def);
    viewer = make(0.0f, 0.0f);
    ASSERT_TRUE(world.set_user_interest_key(viewer, 1000000).ok());
    client = w.client(viewer);
    ASSERT_FALSE(client.is_null());
  }

  EntityId make(float x, float z, bool always = false) {
    return w.make({.x = x, .z = z, .always_relevant = always});
  }

  ClientId make_client(float x, float z) {
    const EntityId v = make(x, z);
    EXPECT_TRUE(world.set_user_interest_key(v, 1000000).ok());
    return w.client(v);
  }

  std::vector<EntityId> held(ClientId c) const { return w.held(c); }
  bool holds(ClientId c, EntityId e) const { return w.holds(c, e); }
  bool updated(ClientId c, EntityId e) const {
    const std::vector<EntityId> updates = w.updates(c);
    return std::find(updates.begin(), updates.end(), e) != updates.end();
  }
  std::vector<Spawn> spawns(ClientId c) const { return w.spawns(c); }
  std::vector<Despawn> despawns(ClientId c) const { return w.despawns(c); }
  std::uint64_t revision(ClientId c) {
    const Result<std::uint64_t> r = world.subscription_revision(c);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : ~std::uint64_t{0};
  }
  std::vector<KeySubscription> area(ClientId c) {
    const auto keys = world.area_subscriptions(c);
    EXPECT_TRUE(keys.ok());
    return keys.ok() ? *keys : std::vector<KeySubscription>{};
  }
  std::vector<KeySubscription> user(ClientId c) {
    const auto keys = world.user_subscriptions(c);
    EXPECT_TRUE(keys.ok());
    return keys.ok() ? *keys : std::vector<KeySubscription>{};
  }
  InterestKey key_of(EntityId e) {
    const Result<InterestKey> k = world.interest_key(e);
    EXPECT_TRUE(k.ok());
    return k.ok() ? *k : InterestKey{InterestKeyType::user, 0};
  }
  // Ticks on which `e` was updated, over `ticks` ticks starting at the next one.
  std::vector<std::uint64_t> update_ticks(EntityId e, int ticks) {
    std::vector<std::uint64_t> out;
    for (int i = 0; i < ticks; ++i) {
      const std::uint64_t t = world.tick().tick;
      if (updated(client, e)) out.push_back(t);
    }
    return out;
  }
  // Ticks t in [first, first + ticks) with (t + index) % period == 0 (or all, for period 1).
  static std::vector<std::uint64_t> due_ticks(std::uint64_t first, int ticks, std::uint32_t index,
                                              std::uint32_t period) {
    std::vector<std::uint64_t> out;
    for (std::uint64_t t = first; t < first + static_cast<std::uint64_t>(ticks); ++t) {
      if (period == 1 || (t + index) % period == 0) out.push_back(t);
    }
    return out;
  }

  SmallWorld w;
  World& world = w.world;  // stays w's World across reset()
  EntityId viewer;
  ClientId client;
};

// --- Seed 002's table -----------------------------------------------------------------------

TEST_F(InterestKeysTest, SeedTableAreaKeysAndGlobal) {
  const EntityId a = make(1.0f, 0.0f);
  const EntityId b = make(0.0f, 2.0f);
  const EntityId c = make(-3.0f, 1.0f);
  ASSERT_TRUE(world.set_area_interest_key(a, 42).ok());
  ASSERT_TRUE(world.set_area_interest_key(b, 99).ok());
  ASSERT_TRUE(world.set_global_interest_key(c).ok());
  const ClientId player1 = client;
  const ClientId player2 = make_client(0.5f, 0.5f);
  const KeySubscription both[] = {{42, 1, false}, {99, 1, false}};
  const KeySubscription only42[] = {{42, 1, false}};
  ASSERT_TRUE(world.set_area_subscriptions(player1, both).ok());
  ASSERT_TRUE(world.set_area_subscriptions(player2, only42).ok());
  world.tick();
  EXPECT_EQ(held(player1), (std::vector<EntityId>{a, b, c}));
  EXPECT_EQ(held(player2), (std::vector<EntityId>{a, c}));
  for (const Spawn& s : spawns(player1)) EXPECT_EQ(s.second, SpawnReason::near);
  // A User subscription with the same value does not match an Area key.
  ASSERT_TRUE(world.add_user_subscription(player2, {99, 1, false}).ok());
  world.tick();
  EXPECT_EQ(held(player2), (std::vector<EntityId>{a, c}));
}

// --- Subscriptions: set semantics, revision, readers ---------------------------------------

TEST_F(InterestKeysTest, SetAreaKeysWithTheSameSetLeavesTheRevision) {
  const std::uint64_t r0 = revision(client);
  const KeySubscription set[] = {{42, 1, false}, {99, 2, true}};
  ASSERT_TRUE(world.set_area_subscriptions(client, set).ok());
  const std::uint64_t r1 = revision(client);
  EXPECT_EQ(r1, r0 + 1);
  ASSERT_TRUE(world.set_area_subscriptions(client, set).ok());
  EXPECT_EQ(revision(client), r1);
  const KeySubscription reordered[] = {{99, 2, true}, {42, 1, false}};
  ASSERT_TRUE(world.set_area_subscriptions(client, reordered).ok());
  EXPECT_EQ(revision(client), r1) << "the same set in another order";
  const KeySubscription other_key[] = {{42, 1, false}, {98, 2, true}};
  ASSERT_TRUE(world.set_area_subscriptions(client, other_key).ok());
  EXPECT_EQ(revision(client), r1 + 1);
  const KeySubscription other_rate[] = {{42, 3, false}, {98, 2, true}};
  ASSERT_TRUE(world.set_area_subscriptions(client, other_rate).ok());
  EXPECT_EQ(revision(client), r1 + 2);
  const KeySubscription other_bypass[] = {{42, 3, true}, {98, 2, true}};
  ASSERT_TRUE(world.set_area_subscriptions(client, other_bypass).ok());
  EXPECT_EQ(revision(client), r1 + 3);
  EXPECT_EQ(area(client), (std::vector<KeySubscription>{{42, 3, true}, {98, 2, true}}));
}

TEST_F(InterestKeysTest, UserKeysSurviveSetAreaKeysAndClearAreaKeys) {
  ASSERT_TRUE(world.add_user_subscription(client, {7, 2, true}).ok());
  const KeySubscription set[] = {{1, 1, false}};
  ASSERT_TRUE(world.set_area_subscriptions(client, set).ok());
  EXPECT_EQ(user(client), (std::vector<KeySubscription>{{7, 2, true}}));
  ASSERT_TRUE(world.set_area_subscriptions(client, std::span<const KeySubscription>{}).ok());
  EXPECT_EQ(user(client), (std::vector<KeySubscription>{{7, 2, true}}));
  EXPECT_TRUE(area(client).empty());
  ASSERT_TRUE(world.set_area_subscriptions(client, set).ok());
  ASSERT_TRUE(world.clear_area_subscriptions(client).ok());
  EXPECT_EQ(user(client), (std::vector<KeySubscription>{{7, 2, true}}));
  EXPECT_TRUE(area(client).empty());
}

TEST_F(InterestKeysTest, AddAndRemoveUserKeys) {
  const std::uint64_t r0 = revision(client);
  ASSERT_TRUE(world.add_user_subscription(client, {7, 2, false}).ok());
  EXPECT_EQ(revision(client), r0 + 1);
  ASSERT_TRUE(world.add_user_subscription(client, {7, 2, false}).ok());
  EXPECT_EQ(revision(client), r0 + 1) << "adding the same subscription again changes nothing";
  ASSERT_TRUE(world.add_user_subscription(client, {7, 3, true}).ok());  // replaces
  EXPECT_EQ(revision(client), r0 + 2);
  EXPECT_EQ(user(client), (std::vector<KeySubscription>{{7, 3, true}}));
  ASSERT_TRUE(world.remove_user_subscription(client, 8).ok()) << "removing an absent key is not an error";
  EXPECT_EQ(revision(client), r0 + 2);
  ASSERT_TRUE(world.remove_user_subscription(client, 7).ok());
  EXPECT_EQ(revision(client), r0 + 3);
  EXPECT_TRUE(user(client).empty());
  ASSERT_TRUE(world.remove_user_subscription(client, 7).ok());
  EXPECT_EQ(revision(client), r0 + 3);
}

TEST_F(InterestKeysTest, ClearCallsClearTheirKindAndBumpTheRevisionOnceWhenTheyChangeSomething) {
  const KeySubscription set[] = {{1, 1, false}, {2, 4, false}};
  ASSERT_TRUE(world.set_area_subscriptions(client, set).ok());
  ASSERT_TRUE(world.add_user_subscription(client, {5, 1, false}).ok());
  std::uint64_t r = revision(client);

  ASSERT_TRUE(world.clear_user_subscriptions(client).ok());
  EXPECT_TRUE(user(client).empty());
  EXPECT_EQ(area(client).size(), 2u);
  EXPECT_EQ(revision(client), ++r);
  ASSERT_TRUE(world.clear_user_subscriptions(client).ok());
  EXPECT_EQ(revision(client), r) << "clearing nothing changes nothing";

  ASSERT_TRUE(world.add_user_subscription(client, {5, 1, false}).ok());
  r = revision(client);
  ASSERT_TRUE(world.clear_area_subscriptions(client).ok());
  EXPECT_TRUE(area(client).empty());
  EXPECT_EQ(user(client).size(), 1u);
  EXPECT_EQ(revision(client), ++r);
  ASSERT_TRUE(world.clear_area_subscriptions(client).ok());
  EXPECT_EQ(revision(client), r);

  // clear_subscriptions with both kinds present: one call that changed the subscriptions, so
  // the revision "rises by one" (world.h).
  ASSERT_TRUE(world.set_area_subscriptions(client, set).ok());
  r = revision(client);
  ASSERT_TRUE(world.clear_subscriptions(client).ok());
  EXPECT_TRUE(area(client).empty());
  EXPECT_TRUE(user(client).empty());
  EXPECT_EQ(revision(client), r + 1) << "clear_subscriptions removing area and user keys in one call";
  r = revision(client);
  ASSERT_TRUE(world.clear_subscriptions(client).ok());
  EXPECT_EQ(revision(client), r);
}

TEST_F(InterestKeysTest, ClearingSubscriptionsDespawnsKeyedEntitiesWithKeyRemoved) {
  const EntityId a = make(1.0f, 0.0f);
  const EntityId u = make(2.0f, 0.0f);
  const EntityId g = make(3.0f, 0.0f);
  ASSERT_TRUE(world.set_area_interest_key(a, 1).ok());
  ASSERT_TRUE(world.set_user_interest_key(u, 1).ok());
  const KeySubscription set[] = {{1, 1, false}};
  ASSERT_TRUE(world.set_area_subscriptions(client, set).ok());
  ASSERT_TRUE(world.add_user_subscription(client, {1, 1, false}).ok());
  world.tick();
  ASSERT_EQ(held(client), (std::vector<EntityId>{a, u, g}));
  ASSERT_TRUE(world.clear_subscriptions(client).ok());
  world.tick();
  EXPECT_EQ(held(client), (std::vector<EntityId>{g}));
  EXPECT_EQ(despawns(client),
            (std::vector<Despawn>{{a, DespawnReason::key_removed}, {u, DespawnReason::key_removed}}));
}

TEST_F(InterestKeysTest, ReadersReturnDecodedValuesSortedByKey) {
  const KeySubscription set[] = {{99, 2, false}, {5, 1, true}, {kMaxInterestKey, 3, false}, {42, 4, false}};
  ASSERT_TRUE(world.set_area_subscriptions(client, set).ok());
  EXPECT_EQ(area(client), (std::vector<KeySubscription>{
                              {5, 1, true}, {42, 4, false}, {99, 2, false}, {kMaxInterestKey, 3, false}}));
  ASSERT_TRUE(world.add_user_subscription(client, {kMaxInterestKey, 1, false}).ok());
  ASSERT_TRUE(world.add_user_subscription(client, {3, 2, true}).ok());
  ASSERT_TRUE(world.add_user_subscription(client, {1, 1, false}).ok());
  EXPECT_EQ(user(client),
            (std::vector<KeySubscription>{{1, 1, false}, {3, 2, true}, {kMaxInterestKey, 1, false}}));

  const EntityId e = make(1.0f, 1.0f);
  EXPECT_EQ(key_of(e), (InterestKey{InterestKeyType::global, 0})) << "Global is the default";
  ASSERT_TRUE(world.set_area_interest_key(e, 42).ok());
  EXPECT_EQ(key_of(e), (InterestKey{InterestKeyType::area, 42}));
  ASSERT_TRUE(world.set_user_interest_key(e, kMaxInterestKey).ok());
  EXPECT_EQ(key_of(e), (InterestKey{InterestKeyType::user, kMaxInterestKey}));
  ASSERT_TRUE(world.set_area_interest_key(e, 0).ok()) << "Area key 0 is a real key (stored as 1)";
  EXPECT_EQ(key_of(e), (InterestKey{InterestKeyType::area, 0}));
  ASSERT_TRUE(world.set_global_interest_key(e).ok());
  EXPECT_EQ(key_of(e), (InterestKey{InterestKeyType::global, 0}));
}

TEST_F(InterestKeysTest, AreaKeyZeroMatchesAreaSubscriptionZero) {
  const EntityId e = make(1.0f, 0.0f);
  ASSERT_TRUE(world.set_area_interest_key(e, 0).ok());
  world.tick();
  EXPECT_FALSE(holds(client, e));
  const KeySubscription zero[] = {{0, 1, false}};
  ASSERT_TRUE(world.set_area_subscriptions(client, zero).ok());
  world.tick();
  EXPECT_TRUE(holds(client, e));
}

TEST_F(InterestKeysTest, NewEntityInAReusedSlotAndNewClientInAReusedSlotStartWithoutKeys) {
  const EntityId e = make(1.0f, 0.0f);
  ASSERT_TRUE(world.set_area_interest_key(e, 9).ok());
  ASSERT_TRUE(world.destroy_entity(e).ok());
  world.tick();
  const EntityId again = make(1.0f, 0.0f);
  ASSERT_EQ(again.index, e.index);
  EXPECT_EQ(key_of(again), (InterestKey{InterestKeyType::global, 0}));

  const ClientId other = make_client(5.0f, 5.0f);
  const KeySubscription set[] = {{9, 1, true}};
  ASSERT_TRUE(world.set_area_subscriptions(other, set).ok());
  ASSERT_TRUE(world.add_user_subscription(other, {9, 1, true}).ok());
  ASSERT_TRUE(world.destroy_client(other).ok());
  const Result<EntityId> v = world.create_entity({6.0f, 6.0f, false});
  ASSERT_TRUE(v.ok());
  const Result<ClientId> reused = world.create_client(*v);
  ASSERT_TRUE(reused.ok());
  ASSERT_EQ(reused->index, other.index);
  EXPECT_TRUE(area(*reused).empty());
  EXPECT_TRUE(user(*reused).empty());
}

// --- Send rates ----------------------------------------------------------------------------

TEST_F(InterestKeysTest, KeySendRateSetsTheUpdateCadence) {
  const EntityId e = make(1.0f, 0.0f);
  ASSERT_TRUE(world.set_area_interest_key(e, 3).ok());
  const KeySubscription set[] = {{3, 4, false}};
  ASSERT_TRUE(world.set_area_subscriptions(client, set).ok());
  const std::uint64_t first = world.tick_count();
  EXPECT_EQ(update_ticks(e, 24), due_ticks(first, 24, e.index, 4));
}

TEST_F(InterestKeysTest, SendRateZeroReadsAsOne) {
  const EntityId e = make(1.0f, 0.0f);
  ASSERT_TRUE(world.set_user_interest_key(e, 3).ok());
  ASSERT_TRUE(world.add_user_subscription(client, {3, 0, false}).ok());
  const std::uint64_t first = world.tick_count();
  EXPECT_EQ(update_ticks(e, 6), due_ticks(first, 6, e.index, 1));
}

// An entity has one key, so two matching subscriptions means the same Area key listed twice:
// the fastest rate wins, and bypass if either entry has it.
TEST_F(InterestKeysTest, MinimumSendRateWinsOverTwoMatchingAreaSubscriptions) {
  const EntityId e = make(1.0f, 0.0f);
  ASSERT_TRUE(world.set_area_interest_key(e, 42).ok());
  const KeySubscription twice[] = {{42, 5, false}, {42, 2, false}, {43, 1, false}};
  ASSERT_TRUE(world.set_area_subscriptions(client, twice).ok());
  EXPECT_EQ(area(client), (std::vector<KeySubscription>{{42, 2, false}, {43, 1, false}}));
  std::uint64_t first = world.tick_count();
  EXPECT_EQ(update_ticks(e, 20), due_ticks(first, 20, e.index, 2));

  const KeySubscription reversed[] = {{42, 2, false}, {42, 5, true}};
  ASSERT_TRUE(world.set_area_subscriptions(client, reversed).ok());
  EXPECT_EQ(area(client), (std::vector<KeySubscription>{{42, 2, true}}));
  first = world.tick_count();
  EXPECT_EQ(update_ticks(e, 20), due_ticks(first, 20, e.index, 2));
}

TEST_F(InterestKeysTest, KeyRateSlowerThanTheTierRateWins) {
  reset({DistanceTier{std::numeric_limits<float>::infinity(), 2}});
  const EntityId e = make(1.0f, 0.0f);
  ASSERT_TRUE(world.set_area_interest_key(e, 1).ok());
  const KeySubscription set[] = {{1, 5, false}};
  ASSERT_TRUE(world.set_area_subscriptions(client, set).ok());
  const std::uint64_t first = world.tick_count();
  EXPECT_EQ(update_ticks(e, 30), due_ticks(first, 30, e.index, 5));
}

TEST_F(InterestKeysTest, TierRateSlowerThanTheKeyRateWins) {
  reset({DistanceTier{std::numeric_limits<float>::infinity(), 6}});
  const EntityId e = make(1.0f, 0.0f);
  ASSERT_TRUE(world.set_user_interest_key(e, 1).ok());
  ASSERT_TRUE(world.add_user_subscription(client, {1, 3, false}).ok());
  const std::uint64_t first = world.tick_count();
  EXPECT_EQ(update_ticks(e, 30), due_ticks(first, 30, e.index, 6));
}

TEST_F(InterestKeysTest, GlobalAndAlwaysRelevantEntitiesTakeNoKeyRate) {
  const EntityId g = make(1.0f, 0.0f);
  const EntityId boss = make(500.0f, 0.0f, true);
  ASSERT_TRUE(world.set_area_interest_key(boss, 8).ok());
  const KeySubscription slow[] = {{8, 7, false}};
  ASSERT_TRUE(world.set_area_subscriptions(client, slow).ok());
  for (int t = 0; t < 5; ++t) {
    world.tick();
    EXPECT_TRUE(updated(client, g));
    EXPECT_TRUE(updated(client, boss)) << "always relevant: key rate 1 even when subscribed slower";
  }
}

// --- Keys and distance -------------------------------------------------------------------

TEST_F(InterestKeysTest, BypassSubscriptionAdmitsAFarEntityAndKeepsItBeyondTheLeaveRadius) {
  const EntityId teammate = make(100.0f, 0.0f);
  ASSERT_TRUE(world.set_user_interest_key(teammate, 7).ok());
  world.tick();
  EXPECT_FALSE(holds(client, teammate));
  ASSERT_TRUE(world.add_user_subscription(client, {7, 1, true}).ok());
  world.tick();
  EXPECT_EQ(spawns(client), (std::vector<Spawn>{{teammate, SpawnReason::key}}));
  EXPECT_TRUE(updated(client, teammate));
  for (int t = 0; t < 3; ++t) {
    ASSERT_TRUE(world.set_position(teammate, 1000.0f * static_cast<float>(t + 1), 50.0f).ok());
    world.tick();
    EXPECT_TRUE(holds(client, teammate));
    EXPECT_TRUE(despawns(client).empty());
    EXPECT_TRUE(updated(client, teammate));
  }
  ASSERT_TRUE(world.remove_user_subscription(client, 7).ok());
  world.tick();
  EXPECT_EQ(despawns(client), (std::vector<Despawn>{{teammate, DespawnReason::key_removed}}));
  EXPECT_FALSE(holds(client, teammate));
}

TEST_F(InterestKeysTest, BypassSpawnReasonIsKeyEvenWhenNear) {
  const EntityId near_mate = make(1.0f, 0.0f);
  ASSERT_TRUE(world.set_area_interest_key(near_mate, 7).ok());
  const KeySubscription set[] = {{7, 1, true}};
  ASSERT_TRUE(world.set_area_subscriptions(client, set).ok());
  world.tick();
  EXPECT_EQ(spawns(client), (std::vector<Spawn>{{near_mate, SpawnReason::key}}));
}

TEST_F(InterestKeysTest, DroppingBypassKeepsTheSubscriptionButPutsTheEntityBackUnderTheRadius) {
  const EntityId far_mate = make(100.0f, 0.0f);
  const EntityId near_mate = make(11.0f, 0.0f);  // between R and L
  ASSERT_TRUE(world.set_user_interest_key(far_mate, 7).ok());
  ASSERT_TRUE(world.set_user_interest_key(near_mate, 7).ok());
  ASSERT_TRUE(world.add_user_subscription(client, {7, 1, true}).ok());
  world.tick();
  ASSERT_EQ(held(client), (std::vector<EntityId>{far_mate, near_mate}));
  ASSERT_TRUE(world.add_user_subscription(client, {7, 1, false}).ok());
  world.tick();
  EXPECT_EQ(despawns(client), (std::vector<Despawn>{{far_mate, DespawnReason::left}}));
  EXPECT_EQ(held(client), (std::vector<EntityId>{near_mate}));
}

TEST_F(InterestKeysTest, ChangingAnEntityKeyToAnUnsubscribedOneDespawnsWithKeyRemoved) {
  const EntityId e = make(1.0f, 0.0f);
  world.tick();
  ASSERT_TRUE(holds(client, e));
  ASSERT_TRUE(world.set_area_interest_key(e, 5).ok());
  world.tick();
  EXPECT_EQ(despawns(client), (std::vector<Despawn>{{e, DespawnReason::key_removed}}));
  const KeySubscription set[] = {{5, 1, false}};
  ASSERT_TRUE(world.set_area_subscriptions(client, set).ok());
  world.tick();
  EXPECT_EQ(spawns(client), (std::vector<Spawn>{{e, SpawnReason::near}}));
  ASSERT_TRUE(world.set_user_interest_key(e, 5).ok());  // same value, other type
  world.tick();
  EXPECT_EQ(despawns(client), (std::vector<Despawn>{{e, DespawnReason::key_removed}}));
  ASSERT_TRUE(world.set_global_interest_key(e).ok());
  world.tick();
  EXPECT_EQ(spawns(client), (std::vector<Spawn>{{e, SpawnReason::near}}));
}

TEST_F(InterestKeysTest, KeyRemovedComesBeforeLeftAndDestroyedBeforeKeyRemoved) {
  const EntityId walker = make(1.0f, 0.0f);
  const EntityId doomed = make(2.0f, 0.0f);
  world.tick();
  // Both out of range and unsubscribed: the key test comes first.
  ASSERT_TRUE(world.set_position(walker, 50.0f, 0.0f).ok());
  ASSERT_TRUE(world.set_area_interest_key(walker, 3).ok());
  // Destroyed and unsubscribed: destroyed comes first.
  ASSERT_TRUE(world.set_area_interest_key(doomed, 3).ok());
  ASSERT_TRUE(world.destroy_entity(doomed).ok());
  world.tick();
  EXPECT_EQ(despawns(client),
            (std::vector<Despawn>{{walker, DespawnReason::key_removed}, {doomed, DespawnReason::destroyed}}));
}

TEST_F(InterestKeysTest, AlwaysRelevantWinsOverAnUnsubscribedKey) {
  const EntityId boss = make(500.0f, 0.0f, true);
  ASSERT_TRUE(world.set_user_interest_key(boss, 77).ok());
  world.tick();
  EXPECT_EQ(spawns(client), (std::vector<Spawn>{{boss, SpawnReason::always}}));
  ASSERT_TRUE(world.set_always_relevant(boss, false).ok());
  world.tick();
  EXPECT_EQ(despawns(client), (std::vector<Despawn>{{boss, DespawnReason::key_removed}}));
}

// --- Refused inputs: each gives its error and changes nothing ---------------------------------

class RefusedKeyInputTest : public InterestKeysTest {
 protected:
  void SetUp() override {
    InterestKeysTest::SetUp();
    entity = make(1.0f, 0.0f);
    ASSERT_TRUE(world.set_area_interest_key(entity, 3).ok());
    const KeySubscription set[] = {{3, 2, false}, {4, 1, true}};
    ASSERT_TRUE(world.set_area_subscriptions(client, set).ok());
    ASSERT_TRUE(world.add_user_subscription(client, {9, 1, false}).ok());
    world.tick();
    ASSERT_TRUE(holds(client, entity));
    snapshot();
  }

  void snapshot() {
    key_before = key_of(entity);
    area_before = area(client);
    user_before = user(client);
    revision_before = revision(client);
  }

  // The key and subscriptions are as before and the next tick changes nothing in the set.
  void expect_unchanged(const char* what) {
    EXPECT_EQ(key_of(entity), key_before) << what;
    EXPECT_EQ(area(client), area_before) << what;
    EXPECT_EQ(user(client), user_before) << what;
    EXPECT_EQ(revision(client), revision_before) << what;
  }

  void expect_refused(const Status& status, const char* what) {
    EXPECT_EQ(status.code(), ErrorCode::invalid_argument) << what;
    EXPECT_FALSE(status.message().empty()) << what;
    expect_unchanged(what);
  }

  EntityId entity;
  InterestKey key_before;
  std::vector<KeySubscription> area_before;
  std::vector<KeySubscription> user_before;
  std::uint64_t revision_before = 0;
};

TEST_F(RefusedKeyInputTest, UserKeyZero) {
  expect_refused(world.set_user_interest_key(entity, 0), "set_user_interest_key(e, 0)");
  expect_refused(world.add_user_subscription(client, {0, 1, false}), "add_user_subscription(0)");
  expect_refused(world.add_user_subscription(client, {0, 1, true}), "add_user_subscription(0, bypass)");
  world.tick();
  EXPECT_TRUE(holds(client, entity));
  EXPECT_TRUE(despawns(client).empty());
}

TEST_F(RefusedKeyInputTest, KeysWithBit63SetInEveryCallTakingAKey) {
  for (const std::uint64_t bad : {kMaxInterestKey + 1, kBit63 | 3u, ~std::uint64_t{0}}) {
    expect_refused(world.set_area_interest_key(entity, bad), "set_area_interest_key");
    expect_refused(world.set_user_interest_key(entity, bad), "set_user_interest_key");
    const KeySubscription one[] = {{bad, 1, false}};
    expect_refused(world.set_area_subscriptions(client, one), "set_area_subscriptions");
    expect_refused(world.add_user_subscription(client, {bad, 1, false}), "add_user_subscription");
    expect_refused(world.remove_user_subscription(client, bad), "remove_user_subscription");
  }
  world.tick();
  EXPECT_TRUE(holds(client, entity));
  EXPECT_TRUE(despawns(client).empty());
  // The largest 63-bit value is accepted everywhere.
  EXPECT_TRUE(world.set_area_interest_key(entity, kMaxInterestKey).ok());
  EXPECT_TRUE(world.set_user_interest_key(entity, kMaxInterestKey).ok());
  const KeySubscription max_key[] = {{kMaxInterestKey, 1, false}};
  EXPECT_TRUE(world.set_area_subscriptions(client, max_key).ok());
  EXPECT_TRUE(world.add_user_subscription(client, {kMaxInterestKey, 1, false}).ok());
  EXPECT_TRUE(world.remove_user_subscription(client, kMaxInterestKey).ok());
}

TEST_F(RefusedKeyInputTest, SetAreaKeysWithOneBadKeyAmongGoodOnesAppliesNothing) {
  const KeySubscription first_bad[] = {{kBit63, 1, false}, {5, 1, false}, {6, 2, true}};
  expect_refused(world.set_area_subscriptions(client, first_bad), "bad key first");
  const KeySubscription middle_bad[] = {{5, 1, false}, {kMaxInterestKey + 1, 1, false}, {6, 2, true}};
  expect_refused(world.set_area_subscriptions(client, middle_bad), "bad key in the middle");
  const KeySubscription last_bad[] = {{5, 1, false}, {6, 2, true}, {~std::uint64_t{0}, 1, false}};
  expect_refused(world.set_area_subscriptions(client, last_bad), "bad key last");
  const KeySubscription bad_rate[] = {{5, 1, false}, {6, 65536, false}};
  expect_refused(world.set_area_subscriptions(client, bad_rate), "bad rate among good keys");
  world.tick();
  EXPECT_TRUE(holds(client, entity));
  EXPECT_TRUE(despawns(client).empty());
}

TEST_F(RefusedKeyInputTest, SendRateAbove65535) {
  for (const std::uint32_t bad : {65536u, 100000u, std::numeric_limits<std::uint32_t>::max()}) {
    const KeySubscription one[] = {{5, bad, false}};
    expect_refused(world.set_area_subscriptions(client, one), "set_area_subscriptions rate");
    expect_refused(world.add_user_subscription(client, {5, bad, false}), "add_user_subscription rate");
    expect_refused(world.add_user_subscription(client, {9, bad, false}),
                   "add_user_subscription rate replacing");
  }
  const KeySubscription max_rate[] = {{5, 65535, false}};
  EXPECT_TRUE(world.set_area_subscriptions(client, max_rate).ok());
  EXPECT_TRUE(world.add_user_subscription(client, {5, 65535, false}).ok());
}

TEST_F(RefusedKeyInputTest, StaleAndNullHandles) {
  const EntityId doomed = make(2.0f, 0.0f);
  ASSERT_TRUE(world.destroy_entity(doomed).ok());
  const ClientId gone = make_client(3.0f, 3.0f);
  ASSERT_TRUE(world.destroy_client(gone).ok());
  world.tick();
  snapshot();
  const EntityId stale_entity{entity.index, entity.generation + 1};
  const ClientId stale_client{client.index, client.generation + 1};
  const KeySubscription set[] = {{3, 1, false}};
  for (const auto& [e, code] :
       {std::pair{doomed, ErrorCode::stale_handle}, std::pair{stale_entity, ErrorCode::stale_handle},
        std::pair{EntityId{}, ErrorCode::null_handle}}) {
    EXPECT_EQ(world.set_area_interest_key(e, 1).code(), code);
    EXPECT_EQ(world.set_user_interest_key(e, 1).code(), code);
    EXPECT_EQ(world.set_global_interest_key(e).code(), code);
    EXPECT_EQ(world.interest_key(e).status().code(), code);
  }
  for (const auto& [c, code] :
       {std::pair{gone, ErrorCode::stale_handle}, std::pair{stale_client, ErrorCode::stale_handle},
        std::pair{ClientId{}, ErrorCode::null_handle}}) {
    EXPECT_EQ(world.set_area_subscriptions(c, set).code(), code);
    EXPECT_EQ(world.add_user_subscription(c, {1, 1, false}).code(), code);
    EXPECT_EQ(world.remove_user_subscription(c, 9).code(), code);
    EXPECT_EQ(world.clear_area_subscriptions(c).code(), code);
    EXPECT_EQ(world.clear_user_subscriptions(c).code(), code);
    EXPECT_EQ(world.clear_subscriptions(c).code(), code);
    EXPECT_EQ(world.area_subscriptions(c).status().code(), code);
    EXPECT_EQ(world.user_subscriptions(c).status().code(), code);
    EXPECT_EQ(world.subscription_revision(c).status().code(), code);
  }
  expect_unchanged("after dead handles");
  world.tick();
  EXPECT_TRUE(holds(client, entity));
  EXPECT_TRUE(despawns(client).empty());
}

}  // namespace
}  // namespace sightline
