// Hysteresis: on the seeded reference walk, a leave radius above the enter radius costs fewer
// spawns and despawns than a single radius (and more updates, because sets are larger).
#include <gtest/gtest.h>

#include "jitter_walk.h"
#include "sightline/world.h"

namespace sightline::testing {
namespace {

struct RunTotals {
  std::uint64_t spawns = 0;
  std::uint64_t despawns = 0;
  std::uint64_t updates = 0;
};

// 120 entities, every one a client, 12 x 7.5, 20 Hz, 60 s = 1200 ticks, R = 1.6.
RunTotals run_reference_walk(float leave_factor) {
  scenarios::JitterWalk walk(scenarios::JitterWalkDef{});
  WorldDef def = default_world_def();
  def.enter_radius = 1.6f;
  def.leave_radius = 1.6f * leave_factor;
  World world = std::move(World::create(def).value());
  std::vector<EntityId> ids;
  for (std::size_t i = 0; i < walk.xs().size(); ++i) ids.push_back(*world.create_entity({walk.xs()[i], walk.zs()[i], false}));
  for (const EntityId id : ids) (void)world.create_client(id);
  RunTotals totals;
  const auto ticks = static_cast<int>(walk.def().hz * 60.0f);
  for (int t = 0; t < ticks; ++t) {
    const TickStats stats = world.tick();
    totals.spawns += stats.spawns;
    totals.despawns += stats.despawns;
    totals.updates += stats.updates;
    walk.step();
    for (std::size_t i = 0; i < ids.size(); ++i) (void)world.set_position(ids[i], walk.xs()[i], walk.zs()[i]);
  }
  return totals;
}

TEST(HysteresisTest, LeaveRadiusAboveEnterRadiusGivesFewerSpawnsAndDespawns) {
  const RunTotals one_radius = run_reference_walk(1.0f);
  const RunTotals hysteresis = run_reference_walk(1.25f);
  EXPECT_LT(hysteresis.spawns + hysteresis.despawns, one_radius.spawns + one_radius.despawns);
  EXPECT_GT(hysteresis.updates, one_radius.updates);
  EXPECT_GT(one_radius.spawns, 0u);
}

TEST(HysteresisTest, WiderHysteresisGivesFewerSpawnsAndDespawns) {
  std::uint64_t previous = ~0ull;
  for (const float factor : {1.0f, 1.1f, 1.25f, 1.5f}) {
    const RunTotals totals = run_reference_walk(factor);
    EXPECT_LT(totals.spawns + totals.despawns, previous) << "L = " << factor << " R";
    previous = totals.spawns + totals.despawns;
  }
}

}  // namespace
}  // namespace sightline::testing
