// What a World tells the game beyond its records: reports through the log hook when its storage
// grows past the capacity hints, and the wall time of each phase of the last tick.
#include <gtest/gtest.h>

#include "log_capture.h"
#include "sightline/sightline.h"

namespace sightline {
namespace {

TEST(WorldReports, GrowthPastTheCapacityHintsIsReportedOncePerGrowth) {
  LogCapture log;
  WorldDef def = default_world_def();
  def.entity_capacity = 8;
  def.client_capacity = 2;
  def.log = log.hook();
  World world = std::move(World::create(def).value());
  std::vector<EntityId> made;
  for (int i = 0; i < 8; ++i) made.push_back(*world.create_entity({.x = 0.0f, .z = 0.0f}));
  EXPECT_TRUE(log.reports.empty());  // within the hint
  made.push_back(*world.create_entity({.x = 1.0f, .z = 0.0f}));
  ASSERT_EQ(log.reports.size(), 1u);
  EXPECT_EQ(log.reports[0].first, LogLevel::info);
  EXPECT_NE(log.reports[0].second.find("entity storage grew"), std::string::npos) << log.reports[0].second;
  EXPECT_NE(log.reports[0].second.find("for entity 8"), std::string::npos) << log.reports[0].second;
  EXPECT_NE(log.reports[0].second.find("WorldDef::entity_capacity is 8"), std::string::npos)
      << log.reports[0].second;
  // The next entities fit the grown storage until it grows again.
  for (int i = 0; i < 6; ++i) made.push_back(*world.create_entity({.x = 2.0f, .z = 0.0f}));
  EXPECT_EQ(log.reports.size(), 1u);
  // A reused slot never grows anything.
  ASSERT_TRUE(world.destroy_entity(made[3]).ok());
  world.tick();
  made.push_back(*world.create_entity({.x = 3.0f, .z = 0.0f}));
  EXPECT_EQ(log.reports.size(), 1u);

  for (int i = 0; i < 3; ++i) ASSERT_TRUE(world.create_client(made[static_cast<std::size_t>(i)]).ok());
  ASSERT_EQ(log.reports.size(), 2u);
  EXPECT_NE(log.reports[1].second.find("client storage grew"), std::string::npos) << log.reports[1].second;
  EXPECT_NE(log.reports[1].second.find("WorldDef::client_capacity is 2"), std::string::npos)
      << log.reports[1].second;
}

TEST(WorldReports, WithoutAHookNothingIsReportedAndNothingBreaks) {
  WorldDef def = default_world_def();
  def.entity_capacity = 1;
  World world = std::move(World::create(def).value());
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(world.create_entity({.x = 0.0f, .z = 0.0f}).ok());
  EXPECT_EQ(world.entity_count(), 100u);
}

TEST(WorldReports, TheLastTicksPhasesAreTimed) {
  World world = std::move(World::create(default_world_def()).value());
  EXPECT_EQ(world.last_tick_timings().relevance_ns, 0u);
  for (int i = 0; i < 2000; ++i) {
    ASSERT_TRUE(world.create_entity({.x = static_cast<float>(i % 50), .z = static_cast<float>(i / 50)}).ok());
  }
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(world.create_client(*world.create_entity({.x = static_cast<float>(i), .z = 5.0f})).ok());
  }
  world.tick();
  const TickTimings& t = world.last_tick_timings();
  // 50 clients over 2,000 entities take well over a microsecond of passes on any machine.
  EXPECT_GT(t.relevance_ns, 1000u);
  EXPECT_GT(t.index_ns, 0u);
  EXPECT_GT(t.spaces_ns + t.events_ns + t.release_ns, 0u);
}

}  // namespace
}  // namespace sightline
