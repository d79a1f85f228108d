// The plain pass (src/plain_pass.cpp) is a fast path of the general client pass: on the same
// inputs both must give the same records, sets and stats, tick by tick. WorldDef::fast_paths off
// sends every client through the general pass and every member through every rule of the leave
// test, so each run here is made twice, once each way, and compared; the brute-force oracle checks
// the random runs besides.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "random_run.h"
#include "sightline/world.h"
#include "tick_fingerprint.h"

namespace sightline {
namespace {

void must(const Status& s) { EXPECT_TRUE(s.ok()) << s.message(); }

struct Prints {
  std::vector<std::uint64_t> ticks;
  std::uint64_t plain_passes = 0;
  std::uint64_t client_passes = 0;
  std::uint64_t mixed_ticks = 0;  // ticks where some clients but not all took the plain pass
};

Prints random_run(std::uint64_t seed, bool hysteresis, std::uint32_t threads, bool general) {
  testing::RandomRunDef def;
  def.seed = seed;
  def.hysteresis = hysteresis;
  def.ticks = 40;
  def.max_entities = 150;
  def.max_clients = 40;
  def.threads = threads;
  def.general_pass = general;
  def.always_relevant = false;  // they take every client off the plain pass
  Prints out;
  testing::run_random(def, [&](testing::MirroredWorld& mirror, const TickStats& stats) {
    EXPECT_EQ(mirror.error(), "") << "seed " << seed;
    out.ticks.push_back(testing::tick_fingerprint(mirror.world(), stats));
    out.plain_passes += stats.plain_passes;
    out.client_passes += mirror.world().clients().size();
    out.mixed_ticks += stats.plain_passes != 0 && stats.plain_passes != mirror.world().clients().size();
  });
  return out;
}

TEST(PlainPassTest, RandomRunsGiveTheGeneralPassRecords) {
  std::uint64_t plain = 0;
  std::uint64_t passes = 0;
  for (std::uint64_t seed = 1; seed <= sightline::testing::seeds_for_build(24); ++seed) {
    for (const std::uint32_t threads : {1u, 3u}) {
      const bool hysteresis = seed % 3 != 0;
      const Prints fast = random_run(seed, hysteresis, threads, false);
      const Prints general = random_run(seed, hysteresis, threads, true);
      ASSERT_FALSE(fast.ticks.empty());
      EXPECT_EQ(fast.ticks, general.ticks) << "seed " << seed << ", " << threads << " threads";
      EXPECT_EQ(general.plain_passes, 0u) << "seed " << seed;
      EXPECT_EQ(fast.mixed_ticks, 0u) << "seed " << seed;
      plain += fast.plain_passes;
      passes += fast.client_passes;
      if (HasFailure()) return;
    }
  }
  // Radius changes keep every client of these worlds on the plain pass, but for the ticks after an
  // entity was destroyed, when all take the general pass.
  EXPECT_GT(plain, passes / 2);
}

// A world where some clients take the plain pass and others do not (extra origins, owned
// entities), with walking, teleports, destroyed and new entities (ticks after one was destroyed
// take the general pass), viewer changes, a second space, radius changes and culling
// switched off and on.
Prints mixed_run(std::uint32_t seed, std::uint32_t threads, bool general) {
  WorldDef def = default_world_def();
  // About 25 members a client (the vectorised leave test), 7 after the radii shrink at tick 50.
  def.enter_radius = 10.0f;
  def.leave_radius = 12.5f;
  def.threads = threads;
  def.thread_min_work = 0;
  def.fast_paths = !general;
  World world = *World::create(def);
  std::mt19937 rng(seed);
  auto uniform = [&](float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); };
  auto below = [&](std::uint32_t n) { return static_cast<std::uint32_t>(rng() % n); };
  const float side = 60.0f;
  std::vector<EntityId> entities;
  for (int i = 0; i < 240; ++i)
    entities.push_back(*world.create_entity(EntityDef{uniform(0, side), uniform(0, side), false}));
  std::vector<ClientId> clients;
  for (std::uint32_t i = 0; i < 48; ++i) clients.push_back(*world.create_client(entities[i]));
  for (std::uint32_t i = 0; i < 8; ++i) must(world.add_origin(clients[i], entities[100 + i]));
  for (std::uint32_t i = 8; i < 14; ++i) must(world.set_owner(entities[120 + i], clients[i]));
  const SpaceId lobby = *world.create_space(SpaceDef{});

  Prints out;
  for (std::uint32_t t = 0; t < 80; ++t) {
    for (std::size_t i = 0; i < entities.size(); ++i) {
      const Position p = *world.position(entities[i]);
      const float x = std::clamp(p.x + uniform(-1.0f, 1.0f), -2.0f, side + 2.0f);
      const float z = std::clamp(p.z + uniform(-1.0f, 1.0f), -2.0f, side + 2.0f);
      must(world.set_position(entities[i], x, z));
    }
    if (below(3) == 0) must(world.teleport(entities[below(240)], uniform(0, side), uniform(0, side)));
    if (t % 5 == 4) {
      // A non-viewer, non-origin entity is destroyed and another made in its slot.
      const std::uint32_t i = 150 + below(90);
      must(world.destroy_entity(entities[i]));
      entities[i] = *world.create_entity(EntityDef{uniform(0, side), uniform(0, side), false});
    }
    if (t % 9 == 8) must(world.set_viewer(clients[20 + below(20)], entities[60 + below(40)]));
    if (t % 13 == 6) must(world.remove_origin(clients[0], entities[100]));
    if (t % 13 == 12) must(world.add_origin(clients[0], entities[100]));
    // An entity in another space takes every client off the plain pass for as long as it stays.
    if (t == 30) must(world.set_space(entities[200], lobby));
    if (t == 34) must(world.set_space(entities[200], world.default_space()));
    if (t == 50) must(world.set_radii(6.0f, 6.0f));
    // Culling off for a tick (every client takes the general pass and holds everything), then on
    // again: the plain pass lets the far go with reason culling_switched.
    if (t == 40 || t == 41) {
      SpaceDef room = *world.space_def(world.default_space());
      room.culling = t == 40 ? Culling::off : Culling::on;
      must(world.set_space_def(world.default_space(), room));
    }
    const TickStats stats = world.tick();
    out.ticks.push_back(testing::tick_fingerprint(world, stats));
    out.plain_passes += stats.plain_passes;
    out.client_passes += clients.size();
  }
  return out;
}

TEST(PlainPassTest, MixedWorldsGiveTheGeneralPassRecords) {
  for (std::uint32_t seed = 1; seed <= 4; ++seed) {
    for (const std::uint32_t threads : {1u, 2u}) {
      const Prints fast = mixed_run(seed, threads, false);
      const Prints general = mixed_run(seed, threads, true);
      EXPECT_EQ(fast.ticks, general.ticks) << "seed " << seed << ", " << threads << " threads";
      EXPECT_EQ(general.plain_passes, 0u);
      // 14 of the 48 clients have origins or owned entities; ticks 30-33 have a second space and
      // tick 40 no culling.
      EXPECT_GT(fast.plain_passes, 0u);
      EXPECT_LT(fast.plain_passes, fast.client_passes - 5 * 48);
      if (HasFailure()) return;
    }
  }
}

}  // namespace
}  // namespace sightline
