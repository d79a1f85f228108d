// Every refused input: bad WorldDef fields, bad positions, bad radii. Each is refused with its
// code, a message naming the field (or entity) and the value, and changes nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "sightline/world.h"
#include "small_world.h"

namespace sightline {
namespace {

using testing::SmallWorld;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

struct BadDef {
  const char* what;
  WorldDef def;
  std::string field;  // the message must contain both
  std::string value;
};

WorldDef with_radii(float enter, float leave) {
  WorldDef def = default_world_def();
  def.enter_radius = enter;
  def.leave_radius = leave;
  return def;
}

WorldDef with_cell_size(float cell_size) {
  WorldDef def = default_world_def();
  def.cell_size = cell_size;
  return def;
}

WorldDef with_tiers(std::vector<DistanceTier> tiers) {
  WorldDef def = default_world_def();
  def.tiers = std::move(tiers);
  return def;
}

std::vector<BadDef> bad_defs() {
  WorldDef no_cells = default_world_def();
  no_cells.max_grid_cells = 0;
  return {
      {"enter_radius 0", with_radii(0.0f, 1.0f), "enter_radius", "0"},
      {"enter_radius denormal", with_radii(std::numeric_limits<float>::denorm_min(), 1.0f), "enter_radius",
       "1e-45"},
      {"enter_radius below kMinRadius", with_radii(std::nextafter(kMinRadius, 0.0f), 1.0f), "enter_radius",
       "9.9999"},
      {"enter_radius negative", with_radii(-1.5f, 1.0f), "enter_radius", "-1.5"},
      {"enter_radius NaN", with_radii(kNaN, 1.0f), "enter_radius", "nan"},
      {"enter_radius inf", with_radii(kInf, kInf), "enter_radius", "inf"},
      {"enter_radius -inf", with_radii(-kInf, 1.0f), "enter_radius", "-inf"},
      {"enter_radius above kMaxRadius", with_radii(2.0e9f, 2.0e9f), "enter_radius", "2e+09"},
      {"leave_radius below enter_radius", with_radii(1.6f, 1.5f), "leave_radius", "1.5"},
      {"leave_radius NaN", with_radii(1.6f, kNaN), "leave_radius", "nan"},
      {"leave_radius inf", with_radii(1.6f, kInf), "leave_radius", "inf"},
      {"leave_radius above kMaxRadius", with_radii(1.6f, 2.0e9f), "leave_radius", "2e+09"},
      {"leave_radius 0", with_radii(1.6f, 0.0f), "leave_radius", "0"},
      {"cell_size below enter_radius", with_cell_size(1.0f), "cell_size", "1"},
      {"cell_size negative", with_cell_size(-2.0f), "cell_size", "-2"},
      {"cell_size NaN", with_cell_size(kNaN), "cell_size", "nan"},
      {"cell_size inf", with_cell_size(kInf), "cell_size", "inf"},
      {"max_grid_cells 0", no_cells, "max_grid_cells", "0"},
      {"tier fractions equal", with_tiers({{0.5f, 1}, {0.5f, 2}}), "tiers[1].max_distance_fraction", "0.5"},
      {"tier fractions decreasing", with_tiers({{0.75f, 1}, {0.25f, 2}}), "tiers[1].max_distance_fraction",
       "0.25"},
      {"tier after infinity", with_tiers({{kInf, 1}, {kInf, 2}}), "tiers[1].max_distance_fraction", "inf"},
      {"tier fraction NaN", with_tiers({{kNaN, 1}}), "tiers[0].max_distance_fraction", "nan"},
      {"tier fraction 0", with_tiers({{0.0f, 1}}), "tiers[0].max_distance_fraction", "0"},
      {"tier fraction negative", with_tiers({{-0.5f, 1}}), "tiers[0].max_distance_fraction", "-0.5"},
      {"tier period 0", with_tiers({{0.5f, 1}, {kInf, 0}}), "tiers[1].period", "0"},
      {"tier period 70000", with_tiers({{0.5f, 70000}}), "tiers[0].period", "70000"},
  };
}

TEST(RefusedInputTest, EveryBadWorldDefIsRefusedNamingFieldAndValue) {
  for (const BadDef& bad : bad_defs()) {
    const Status status = validate(bad.def);
    EXPECT_EQ(status.code(), ErrorCode::invalid_def) << bad.what;
    EXPECT_NE(status.message().find(bad.field), std::string::npos) << bad.what << ": " << status.message();
    EXPECT_NE(status.message().find(bad.value), std::string::npos) << bad.what << ": " << status.message();
    const Result<World> world = World::create(bad.def);
    EXPECT_FALSE(world.ok()) << bad.what;
    EXPECT_EQ(world.status().code(), ErrorCode::invalid_def) << bad.what;
    EXPECT_EQ(world.status().message(), status.message()) << bad.what;
  }
}

TEST(RefusedInputTest, LeaveBelowEnterMessageNamesBothValues) {
  const Status status = validate(with_radii(1.6f, 1.5f));
  EXPECT_NE(status.message().find("leave_radius"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("1.5"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("1.6"), std::string::npos) << status.message();
}

TEST(RefusedInputTest, BoundaryWorldDefsAreAccepted) {
  const std::vector<WorldDef> good = {
      with_radii(kMaxRadius, kMaxRadius),   with_radii(1.6f, 1.6f),
      with_radii(kMinRadius, 1.0f),         with_cell_size(1.6f),
      with_cell_size(kMaxRadius),           with_tiers({{0.5f, 1}, {kInf, 65535}}),
      with_tiers(default_distance_tiers()),
  };
  for (const WorldDef& def : good) EXPECT_TRUE(validate(def).ok()) << validate(def).message();
  WorldDef one_cell = default_world_def();
  one_cell.max_grid_cells = 1;
  EXPECT_TRUE(World::create(one_cell).ok());
}

class RefusedPositionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 4; ++i) ids.push_back(w.make(static_cast<float>(i), 2.0f));
  }
  SmallWorld w{default_world_def()};
  World& world = w.world;
  std::vector<EntityId> ids;
};

TEST_F(RefusedPositionTest, SetPositionRefusesNonFiniteAndOutOfRangeAndNamesTheEntity) {
  const EntityId entity = ids[3];
  ASSERT_EQ(entity.index, 3u);
  ASSERT_EQ(entity.generation, 1u);
  const std::pair<float, float> bad[] = {{kNaN, 0.0f},
                                         {0.0f, kNaN},
                                         {kInf, 0.0f},
                                         {0.0f, -kInf},
                                         {1.0e20f, 0.0f},
                                         {0.0f, -1.0e20f},
                                         {std::nextafter(kMaxCoordinate, kInf), 0.0f}};
  for (const auto& [x, z] : bad) {
    const Status status = world.set_position(entity, x, z);
    EXPECT_EQ(status.code(), ErrorCode::non_finite_position) << x << ", " << z;
    EXPECT_NE(status.message().find("entity 3:1"), std::string::npos) << status.message();
    const Position p = *world.position(entity);
    EXPECT_EQ(p.x, 3.0f);
    EXPECT_EQ(p.z, 2.0f);
  }
  EXPECT_NE(world.set_position(entity, 1.0e20f, 0.0f).message().find("1e+20"), std::string::npos);
  EXPECT_TRUE(world.set_position(entity, kMaxCoordinate, -kMaxCoordinate).ok());
  EXPECT_EQ(world.position(entity)->x, kMaxCoordinate);
}

TEST_F(RefusedPositionTest, SetPositionsChecksEveryEntryBeforeWritingAny) {
  ASSERT_TRUE(world.destroy_entity(ids[1]).ok());
  auto expect_unchanged = [&] {
    for (const std::size_t i : {0u, 2u, 3u}) {
      EXPECT_EQ(world.position(ids[i])->x, static_cast<float>(i));
      EXPECT_EQ(world.position(ids[i])->z, 2.0f);
    }
  };
  const std::vector<float> xs = {10.0f, 11.0f, 12.0f};
  const std::vector<float> zs = {20.0f, 21.0f, 22.0f};
  // The bad entry is last, so a call that wrote as it checked would have moved the others.
  const std::vector<EntityId> with_nan_target = {ids[0], ids[2], ids[3]};
  const std::vector<float> bad_z = {20.0f, 21.0f, kNaN};
  Status status = world.set_positions(with_nan_target, xs, bad_z);
  EXPECT_EQ(status.code(), ErrorCode::non_finite_position);
  EXPECT_NE(status.message().find("entity 3:1"), std::string::npos) << status.message();
  expect_unchanged();
  const std::vector<float> far_x = {10.0f, 1.0e20f, 12.0f};
  status = world.set_positions(with_nan_target, far_x, zs);
  EXPECT_EQ(status.code(), ErrorCode::non_finite_position);
  EXPECT_NE(status.message().find("entity 2:1"), std::string::npos) << status.message();
  expect_unchanged();
  status = world.set_positions(std::vector<EntityId>{ids[0], ids[2], ids[1]}, xs, zs);
  EXPECT_EQ(status.code(), ErrorCode::stale_handle);
  expect_unchanged();
  status = world.set_positions(std::vector<EntityId>{ids[0], EntityId{}, ids[3]}, xs, zs);
  EXPECT_EQ(status.code(), ErrorCode::null_handle);
  expect_unchanged();
  status = world.set_positions(with_nan_target, std::span<const float>(xs).first(2), zs);
  EXPECT_EQ(status.code(), ErrorCode::invalid_argument);
  expect_unchanged();
  ASSERT_TRUE(world.set_positions(with_nan_target, xs, zs).ok());
  EXPECT_EQ(world.position(ids[3])->x, 12.0f);
  EXPECT_EQ(world.position(ids[3])->z, 22.0f);
  EXPECT_EQ(world.position(ids[0])->x, 10.0f);
}

TEST_F(RefusedPositionTest, CreateEntityWithBadPositionIsRefusedAndCountUnchanged) {
  ASSERT_TRUE(world.destroy_entity(ids[1]).ok());
  (void)world.tick();  // slot 1 is free now; a refused create must not consume it
  const std::uint32_t before = world.entity_count();
  for (const float bad : {kNaN, kInf, -kInf, 1.0e20f}) {
    const Result<EntityId> id = world.create_entity({bad, 0.0f, true});
    EXPECT_EQ(id.status().code(), ErrorCode::non_finite_position);
    EXPECT_NE(id.status().message().find("entity"), std::string::npos) << id.status().message();
    EXPECT_EQ(world.entity_count(), before);
  }
  const EntityId next = w.make(0.0f, 0.0f);
  EXPECT_EQ(next.index, 1u);
  EXPECT_EQ(next.generation, 2u);
  // The refused creates asked for always-relevant entities; none may have been left behind.
  // The other entities are 2 or more away from (0, 0), beyond R = 1.6.
  const ClientId client = w.client(next);
  (void)world.tick();
  EXPECT_TRUE(w.held(client).empty());
}

TEST_F(RefusedPositionTest, SetRadiiRefusesBadValuesAndKeepsTheRadii) {
  ASSERT_TRUE(world.set_radii(2.0f, 3.0f).ok());
  const std::pair<float, float> bad[] = {{0.0f, 1.0f},     {-1.0f, 1.0f}, {kNaN, 3.0f}, {kInf, kInf},
                                         {2.0e9f, 2.0e9f}, {2.0f, 1.0f},  {2.0f, kNaN}, {2.0f, kInf}};
  for (const auto& [enter, leave] : bad) {
    const Status status = world.set_radii(enter, leave);
    EXPECT_EQ(status.code(), ErrorCode::invalid_argument)
        << enter << ", " << leave << ": " << status.message();
    const bool names_field = status.message().find("enter_radius") != std::string::npos ||
                             status.message().find("leave_radius") != std::string::npos;
    EXPECT_TRUE(names_field) << status.message();
    EXPECT_EQ(world.enter_radius(), 2.0f);
    EXPECT_EQ(world.leave_radius(), 3.0f);
  }
}

TEST_F(RefusedPositionTest, SetRadiiMessageNamesTheRadiusAndItsValue) {
  Status status = world.set_radii(-1.5f, 1.0f);
  EXPECT_NE(status.message().find("enter_radius"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("-1.5"), std::string::npos) << status.message();
  status = world.set_radii(2.0f, 1.25f);
  EXPECT_NE(status.message().find("leave_radius"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("1.25"), std::string::npos) << status.message();
  status = world.set_radii(1.6f, kNaN);
  EXPECT_NE(status.message().find("leave_radius"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("nan"), std::string::npos) << status.message();
  EXPECT_EQ(world.enter_radius(), 1.6f);
  EXPECT_EQ(world.leave_radius(), 1.6f);
}

// A refused set_radii must also leave the interest rule alone: the next tick uses the old radii.
TEST_F(RefusedPositionTest, RefusedSetRadiiDoesNotChangeTheNextTick) {
  const ClientId client = w.client(ids[0]);  // ids at x = 0..3, z = 2
  (void)world.tick();
  ASSERT_EQ(w.held(client).size(), 1u);  // only x = 1 is within 1.6
  EXPECT_FALSE(world.set_radii(5.0f, 4.0f).ok());
  EXPECT_FALSE(world.set_radii(kInf, kInf).ok());
  const TickStats stats = world.tick();
  EXPECT_EQ(stats.spawns, 0u);
  EXPECT_EQ(w.held(client).size(), 1u);
}

TEST(RefusedInputTest, SetRadiiAboveConfiguredCellSizeIsRefused) {
  WorldDef def = default_world_def();
  def.cell_size = 2.0f;
  World world = std::move(World::create(def).value());
  const Status status = world.set_radii(2.5f, 3.0f);
  EXPECT_EQ(status.code(), ErrorCode::invalid_argument);
  EXPECT_NE(status.message().find("cell_size"), std::string::npos) << status.message();
  EXPECT_EQ(world.enter_radius(), 1.6f);
  EXPECT_TRUE(world.set_radii(2.0f, 3.0f).ok());
}

}  // namespace
}  // namespace sightline
