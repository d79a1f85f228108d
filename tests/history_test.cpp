// The flight recorder (World::set_history_capacity, World::history): a random world's records,
// distances and rules, gathered by hand tick after tick, are exactly what the history keeps; the
// ring keeps the newest; every refusal and the client's end are handled.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "small_world.h"

namespace sightline {
namespace {

using testing::SmallWorld;

bool same(const HistoryEntry& a, const HistoryEntry& b) {
  return a.tick == b.tick && a.entity == b.entity && a.spawned == b.spawned &&
         (a.spawned ? a.spawn_reason == b.spawn_reason : a.despawn_reason == b.despawn_reason) &&
         a.distance == b.distance && a.rule_known == b.rule_known && (!a.rule_known || a.rule == b.rule);
}

// What the recorder should have kept for one tick, from the records, the positions and why().
void expect_tick(const World& world, ClientId client, const std::vector<EntityId>& origins,
                 std::vector<HistoryEntry>& expected) {
  const ClientStream s = *world.stream(client);
  const auto describe = [&](EntityId e) {
    HistoryEntry h;
    h.tick = world.tick_count() - 1;
    h.entity = e;
    h.distance = std::numeric_limits<float>::infinity();
    // The entity's last position: a destroyed one is still where it was.
    const Result<Position> p = world.position(e);
    for (const EntityId o : origins) {
      const Position at = *world.position(o);
      if (p) h.distance = std::min(h.distance, std::hypot(p->x - at.x, p->z - at.z));
    }
    if (const Result<Why> why = world.why(client, e)) {
      h.rule_known = true;
      h.rule = why->rule;
    }
    return h;
  };
  for (const DespawnRecord& d : s.despawns) {
    HistoryEntry h = describe(d.entity);
    h.despawn_reason = d.reason;
    if (d.reason == DespawnReason::destroyed) h.distance = -1.0f;  // compared apart: position gone
    expected.push_back(h);
  }
  for (const SpawnRecord& r : s.spawns) {
    HistoryEntry h = describe(r.entity);
    h.spawned = true;
    h.spawn_reason = r.reason;
    expected.push_back(h);
  }
}

TEST(History, KeepsExactlyTheRecordsWithTheirDistanceAndRule) {
  SmallWorld w(8.0f, 10.0f);
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<float> coord(0.0f, 100.0f);
  std::vector<EntityId> walkers;
  for (int i = 0; i < 300; ++i) walkers.push_back(w.make(coord(rng), coord(rng)));
  const EntityId viewer = w.make(50.0f, 50.0f);
  const EntityId other = w.make(20.0f, 20.0f);
  const ClientId recorded = w.client(viewer);
  const ClientId silent = w.client(other);
  const EntityId origin = w.make(80.0f, 80.0f);
  ASSERT_TRUE(w.world.add_origin(recorded, origin).ok());
  ASSERT_TRUE(w.world.set_history_capacity(recorded, kMaxHistoryEntries).ok());

  std::vector<HistoryEntry> expected;
  std::uniform_real_distribution<float> step(-1.5f, 1.5f);
  for (int t = 0; t < 200; ++t) {
    for (EntityId& e : walkers) {
      if (rng() % 400 == 0) {  // churn: destroyed, and another made elsewhere
        ASSERT_TRUE(w.world.destroy_entity(e).ok());
        e = w.make(coord(rng), coord(rng));
        continue;
      }
      const Position p = *w.world.position(e);
      ASSERT_TRUE(w.world
                      .set_position(e, std::clamp(p.x + step(rng), 0.0f, 100.0f),
                                    std::clamp(p.z + step(rng), 0.0f, 100.0f))
                      .ok());
    }
    const Position v = *w.world.position(viewer);
    ASSERT_TRUE(w.world.set_position(viewer, std::clamp(v.x + 2.0f * step(rng), 0.0f, 100.0f), v.z).ok());
    w.world.tick();
    expect_tick(w.world, recorded, {viewer, origin}, expected);
  }
  const std::vector<HistoryEntry> kept = *w.world.history(recorded);
  ASSERT_EQ(kept.size(), expected.size());
  std::size_t destroyed = 0;
  for (std::size_t i = 0; i < kept.size(); ++i) {
    HistoryEntry want = expected[i];
    if (want.distance < 0.0f) {  // destroyed: the recorder saw its last position, the test cannot
      ++destroyed;
      EXPECT_FALSE(kept[i].rule_known);
      EXPECT_TRUE(std::isfinite(kept[i].distance));
      want.distance = kept[i].distance;
    }
    EXPECT_TRUE(same(kept[i], want)) << "entry " << i << " tick " << kept[i].tick << " entity "
                                     << kept[i].entity.index;
    if (kept[i].spawned) {
      EXPECT_TRUE(kept[i].rule_known);
    }
  }
  EXPECT_GT(destroyed, 0u);
  EXPECT_GT(kept.size(), 200u);
  // One entity's own history is the same entries, filtered.
  const EntityId busiest = kept[kept.size() / 2].entity;
  std::vector<HistoryEntry> of_one;
  for (const HistoryEntry& h : kept) {
    if (h.entity == busiest) of_one.push_back(h);
  }
  const std::vector<HistoryEntry> asked = *w.world.history(recorded, busiest);
  ASSERT_EQ(asked.size(), of_one.size());
  for (std::size_t i = 0; i < asked.size(); ++i) EXPECT_TRUE(same(asked[i], of_one[i]));
  // The other client records nothing.
  EXPECT_TRUE(w.world.history(silent)->empty());
}

TEST(History, TheRingKeepsTheNewest) {
  SmallWorld w;
  const EntityId viewer = w.make(0.0f, 0.0f);
  const ClientId c = w.client(viewer);
  ASSERT_TRUE(w.world.set_history_capacity(c, 3).ok());
  std::vector<EntityId> made;
  for (int t = 0; t < 5; ++t) {
    made.push_back(w.make(static_cast<float>(t), 1.0f));
    w.world.tick();
  }
  const std::vector<HistoryEntry> kept = *w.world.history(c);
  ASSERT_EQ(kept.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(kept[i].entity, made[i + 2]);
    EXPECT_EQ(kept[i].tick, i + 2);
    EXPECT_TRUE(kept[i].spawned);
    EXPECT_EQ(kept[i].spawn_reason, SpawnReason::near);
    EXPECT_EQ(kept[i].rule, Rule::near);
  }
  // The walk out and the destruction of the last one.
  ASSERT_TRUE(w.world.set_position(made[3], 50.0f, 50.0f).ok());
  ASSERT_TRUE(w.world.destroy_entity(made[4]).ok());
  w.world.tick();
  const std::vector<HistoryEntry> last = *w.world.history(c);
  ASSERT_EQ(last.size(), 3u);
  EXPECT_EQ(last[0].entity, made[4]);
  EXPECT_TRUE(last[0].spawned);
  EXPECT_FALSE(last[1].spawned);
  EXPECT_FALSE(last[2].spawned);
  // Despawns in the record's order: by index.
  EXPECT_EQ(last[1].entity, made[3]);
  EXPECT_EQ(last[1].despawn_reason, DespawnReason::left);
  EXPECT_TRUE(last[1].rule_known);
  EXPECT_EQ(last[1].rule, Rule::out_of_range);
  EXPECT_FLOAT_EQ(last[1].distance, std::hypot(50.0f, 50.0f));
  EXPECT_EQ(last[2].entity, made[4]);
  EXPECT_EQ(last[2].despawn_reason, DespawnReason::destroyed);
  EXPECT_FALSE(last[2].rule_known);
}

TEST(History, RefusalsAndTheClientsEnd) {
  SmallWorld w;
  const EntityId viewer = w.make(0.0f, 0.0f);
  const ClientId c = w.client(viewer);
  const Status too_many = w.world.set_history_capacity(c, kMaxHistoryEntries + 1);
  EXPECT_EQ(too_many.code(), ErrorCode::invalid_argument);
  EXPECT_EQ(too_many.message(), "history capacity is 65537: must be at most kMaxHistoryEntries (65536)");
  EXPECT_EQ(w.world.history(c, EntityId{}).status().code(), ErrorCode::invalid_argument);
  ASSERT_TRUE(w.world.set_history_capacity(c, 10).ok());
  w.make(1.0f, 1.0f);
  w.world.tick();
  EXPECT_EQ(w.world.history(c)->size(), 1u);
  // Off frees it; on again starts empty.
  ASSERT_TRUE(w.world.set_history_capacity(c, 0).ok());
  EXPECT_TRUE(w.world.history(c)->empty());
  ASSERT_TRUE(w.world.set_history_capacity(c, 10).ok());
  w.make(2.0f, 1.0f);
  w.world.tick();
  EXPECT_EQ(w.world.history(c)->size(), 1u);
  // A destroyed client's history goes with it; the next client in its slot starts off.
  ASSERT_TRUE(w.world.destroy_client(c).ok());
  EXPECT_EQ(w.world.history(c).status().code(), ErrorCode::stale_handle);
  EXPECT_EQ(w.world.set_history_capacity(c, 5).code(), ErrorCode::stale_handle);
  const ClientId next = w.client(viewer);
  EXPECT_EQ(next.index, c.index);
  w.make(3.0f, 1.0f);
  w.world.tick();
  EXPECT_TRUE(w.world.history(next)->empty());
}

}  // namespace
}  // namespace sightline
