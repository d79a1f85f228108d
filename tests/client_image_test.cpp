// A client carried between Worlds (World::export_client, adopt_client): after the move its sets
// and records are those of a client that never moved, on seeded scenes with every per-client
// rule that has state (hysteresis, the crowd cap, tiers and key rates, sight and its hold, keys,
// origins, owners, view radii, a pending viewer change); and bad images are refused whole.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "named_world.h"
#include "rng.h"
#include "sightline/world.h"

namespace sightline::testing {
namespace {

WorldDef scene_def(scenarios::Rng& rng) {
  WorldDef def = default_world_def();
  def.enter_radius = 10.0f;
  def.leave_radius = 12.5f;
  def.order_key = OrderKey::external;
  def.tiers = {{0.3f, 1}, {0.6f, 2}, {1.0f, 3}};
  const std::uint32_t caps[] = {0, 0, 3, 6};
  def.crowd_cap = caps[rng.below(4)];
  return def;
}

float coordinate(scenarios::Rng& rng) { return static_cast<float>(static_cast<int>(rng.below(61)) - 30); }

constexpr std::uint64_t id_of(std::uint64_t i) { return i * 0x9e3779b97f4a7c15ull | 1; }

// The same inputs to every World of a scene, by external id.
struct Scene {
  explicit Scene(std::uint64_t seed) : rng(seed) {}
  scenarios::Rng rng;
  std::vector<NamedWorld*> worlds;

  template <class Call>
  void each(Call call) {
    for (NamedWorld* w : worlds) call(*w);
  }
  void set_position(std::uint64_t id, float x, float z) {
    each([&](NamedWorld& w) { EXPECT_TRUE(w.world().set_position(w.of(id), x, z).ok()); });
  }
};

// How many ticks after the move the moved client's view differs from the client that stayed.
std::uint32_t moved_client_differs(std::uint64_t seed, bool naive) {
  Scene scene(seed);
  scenarios::Rng& rng = scene.rng;
  const WorldDef def = scene_def(rng);
  NamedWorld stays(def);  // the reference: the client never moves
  NamedWorld from(def);
  NamedWorld to(def);
  scene.worlds = {&stays, &from, &to};
  // `to` holds the same entities in other slots.
  for (int i = 0; i < 9; ++i) to.decoy();
  scene.each([](NamedWorld& w) { (void)w.tick(); });
  constexpr std::uint64_t kEntities = 90;
  std::vector<std::uint64_t> ids;
  for (std::uint64_t i = 1; i <= kEntities; ++i) ids.push_back(id_of(i));
  std::vector<std::pair<float, float>> at;
  for (std::size_t i = 0; i < ids.size(); ++i) at.emplace_back(coordinate(rng), coordinate(rng));
  for (std::size_t i = 0; i < ids.size(); ++i) stays.create(ids[i], at[i].first, at[i].second);
  for (std::size_t i = 0; i < ids.size(); ++i) from.create(ids[i], at[i].first, at[i].second);
  for (std::size_t i = ids.size(); i-- > 0;) to.create(ids[i], at[i].first, at[i].second);
  // Walls with a hold, keys on some entities, velocities for the look-ahead.
  const std::vector<WallSegment> walls = {{-5.0f, -20.0f, -5.0f, 20.0f}, {5.0f, 3.0f, 25.0f, 3.0f}};
  SpaceDef room;
  room.visibility_hold_ticks = 1 + rng.below(4);
  scene.each([&](NamedWorld& w) {
    EXPECT_TRUE(w.world().set_walls(w.world().default_space(), walls).ok());
    EXPECT_TRUE(w.world().set_space_def(w.world().default_space(), room).ok());
  });
  for (std::size_t i = 10; i < 40; i += 3) {
    const std::uint64_t key = 1 + i % 3;
    scene.each([&](NamedWorld& w) { EXPECT_TRUE(w.world().set_area_interest_key(w.of(ids[i]), key).ok()); });
  }
  for (std::size_t i = 40; i < 50; ++i) {
    scene.each([&](NamedWorld& w) { EXPECT_TRUE(w.world().set_velocity(w.of(ids[i]), 20.0f, -10.0f).ok()); });
  }
  // The client that moves, set up alike where it starts and where it stays; others beside it.
  const auto set_up = [&](NamedWorld& w) {
    World& world = w.world();
    const ClientId c = *world.create_client(w.of(ids[0]));
    const KeySubscription area[] = {{1, 2, false}, {2, 1, true}};
    EXPECT_TRUE(world.set_area_subscriptions(c, area).ok());
    EXPECT_TRUE(world.add_user_subscription(c, {7, 3, false}).ok());
    EXPECT_TRUE(world.add_origin(c, w.of(ids[1])).ok());
    EXPECT_TRUE(world.set_owner(w.of(ids[2]), c).ok());
    EXPECT_TRUE(world.set_look_ahead(c, 0.5f).ok());
    if (seed % 2 == 0) {
      EXPECT_TRUE(world.set_view_radius(c, 8.0f).ok());
    }
    for (std::size_t v = 3; v < 6; ++v) EXPECT_TRUE(world.create_client(w.of(ids[v])).ok());
    return c;
  };
  const ClientId stayed = set_up(stays);
  ClientId moved = set_up(from);
  NamedWorld* holder = &from;
  for (std::size_t v = 6; v < 8; ++v) EXPECT_TRUE(to.world().create_client(to.of(ids[v])).ok());

  const std::uint32_t move_at = 4 + rng.below(8);
  std::uint32_t differing = 0;
  for (std::uint32_t t = 0; t < 30; ++t) {
    for (std::uint32_t m = 0; m < 12; ++m) {
      const std::uint64_t id = ids[rng.below(kEntities)];
      const float step = 4.0f;
      const Position p = *stays.world().position(stays.of(id));
      scene.set_position(id, std::clamp(p.x + (rng.uniform() - 0.5f) * step, -30.0f, 30.0f),
                         std::clamp(p.z + (rng.uniform() - 0.5f) * step, -30.0f, 30.0f));
    }
    if (rng.below(6) == 0) {
      // The mover views from another entity: a change pending at the move when it comes now.
      const std::uint64_t viewer = ids[rng.below(2) == 0 ? 0 : 8];
      EXPECT_TRUE(stays.world().set_viewer(stayed, stays.of(viewer)).ok());
      EXPECT_TRUE(holder->world().set_viewer(moved, holder->of(viewer)).ok());
    }
    if (t == move_at) {
      const Result<ClientImage> image = from.world().export_client(moved);
      EXPECT_TRUE(image.ok()) << image.status().message();
      if (!image) return 1000;
      const Result<ClientId> adopted =
          naive ? to.world().create_client(to.of(image->viewer)) : to.world().adopt_client(*image);
      EXPECT_TRUE(adopted.ok()) << adopted.status().message();
      if (!adopted) return 1000;
      EXPECT_TRUE(from.world().destroy_client(moved).ok());
      if (!naive) {
        // Read back at once, the adopted client is the image.
        const Result<ClientImage> again = to.world().export_client(*adopted);
        EXPECT_TRUE(again.ok() && *again == *image) << "seed " << seed;
      }
      moved = *adopted;
      holder = &to;
    }
    scene.each([](NamedWorld& w) { (void)w.tick(); });
    if (!(stays.view(stayed) == holder->view(moved))) {
      if (!naive) ADD_FAILURE() << "seed " << seed << ": the client's view differs at tick " << t;
      ++differing;
    }
  }
  return differing;
}

TEST(ClientImage, AMovedClientGoesOnAsIfItHadStayed) {
  std::uint32_t naive_differs = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    EXPECT_EQ(moved_client_differs(seed, false), 0u) << "seed " << seed;
    naive_differs += moved_client_differs(seed, true) != 0 ? 1 : 0;
  }
  // The control: a client made afresh where the image went does differ, so the comparison sees it.
  EXPECT_EQ(naive_differs, 40u);
}

// --- Refusals ----------------------------------------------------------------------------

struct Pair {
  Pair() : from(def()), to(def()) {
    for (std::uint64_t i = 1; i <= 6; ++i) {
      from.create(i, static_cast<float>(i), 0.0f);
      to.create(i, static_cast<float>(i), 0.0f);
    }
    client = *from.world().create_client(from.of(1));
    EXPECT_TRUE(from.world().add_origin(client, from.of(2)).ok());
    (void)from.tick();
    (void)to.tick();
    image = *from.world().export_client(client);
  }
  static WorldDef def() {
    WorldDef d = default_world_def();
    d.enter_radius = 10.0f;
    d.leave_radius = 10.0f;
    d.order_key = OrderKey::external;
    return d;
  }
  // Adopting `bad` is refused, naming `names`, and `to` is as it was.
  void expect_refused(const ClientImage& bad, const std::string& names) {
    const std::uint32_t clients = to.world().client_count();
    const Result<ClientId> r = to.world().adopt_client(bad);
    ASSERT_FALSE(r.ok()) << names;
    EXPECT_EQ(r.status().code(), ErrorCode::invalid_argument);
    EXPECT_NE(r.status().message().find(names), std::string::npos) << r.status().message();
    EXPECT_EQ(to.world().client_count(), clients);
    EXPECT_EQ(*to.world().holder_count(to.of(3)), 0u);
    EXPECT_EQ(*to.world().owner(to.of(4)), ClientId{});
  }
  NamedWorld from;
  NamedWorld to;
  ClientId client;
  ClientImage image;
};

TEST(ClientImage, TheImageHoldsTheSetOriginsAndSubscriptionsByExternalId) {
  Pair p;
  EXPECT_EQ(p.image.viewer, 1u);
  EXPECT_EQ(p.image.members.size(), 5u);  // 2..6; the viewer is no member
  EXPECT_EQ(p.image.members.front().entity, 2u);
  EXPECT_EQ(p.image.extra_origins, (std::vector<std::uint64_t>{2}));
  const ClientId adopted = *p.to.world().adopt_client(p.image);
  EXPECT_EQ(*p.to.world().holder_count(p.to.of(3)), 1u);
  EXPECT_EQ(p.to.world().interest_set(adopted)->size(), 5u);
  (void)p.to.tick();
  EXPECT_TRUE(p.to.view(adopted).records.empty() ||
              std::get<0>(p.to.view(adopted).records.front()) == 'u');  // no spawn: it held them
}

TEST(ClientImage, ABadImageIsRefusedWholeNamingTheField) {
  Pair p;
  ClientImage bad = p.image;
  bad.members[2].entity = 99;
  p.expect_refused(bad, "members[2].entity is external id 99: no live entity here");
  bad = p.image;
  bad.viewer = 98;
  p.expect_refused(bad, "viewer is external id 98");
  bad = p.image;
  bad.members.push_back(bad.members[0]);
  p.expect_refused(bad, "members holds external id 2 twice");
  bad = p.image;
  bad.extra_origins = {1};
  p.expect_refused(bad, "extra_origins holds the viewer");
  bad = p.image;
  bad.owned = {4, 4};
  p.expect_refused(bad, "owned holds external id 4 twice");
  bad = p.image;
  bad.owned = {4};
  bad.area_subscriptions = {{1ull << 63, 1, false}};
  p.expect_refused(bad, "area_subscriptions[0]: area key is 9223372036854775808");
  bad = p.image;
  bad.user_subscriptions = {{5, 1, false}, {5, 2, false}};
  p.expect_refused(bad, "user_subscriptions list key 5 twice");
  bad = p.image;
  bad.look_ahead = -1.0f;
  p.expect_refused(bad, "look_ahead");
  bad = p.image;
  bad.view_enter_radius = 5.0f;
  bad.view_leave_radius = 4.0f;
  p.expect_refused(bad, "view leave radius");
  bad = p.image;
  bad.last_enter_radius = -3.0f;
  p.expect_refused(bad, "last_enter_radius");
  bad = p.image;
  bad.sighted = true;
  bad.members[0].unseen_ticks = 50;
  p.expect_refused(bad, "WorldDef::first_tick");
}

TEST(ClientImage, ExportNamesAnEntityWithoutAnExternalId) {
  World world = std::move(World::create(default_world_def()).value());
  EntityDef viewer;
  viewer.external_id = 5;
  const ClientId c = *world.create_client(*world.create_entity(viewer));
  (void)world.create_entity(EntityDef{});
  (void)world.tick();
  const Result<ClientImage> image = world.export_client(c);
  ASSERT_FALSE(image.ok());
  EXPECT_EQ(image.status().code(), ErrorCode::invalid_argument);
  EXPECT_NE(image.status().message().find("its member entity 1:1 has no external id"), std::string::npos)
      << image.status().message();
}

TEST(ClientImage, AWorldStartedLaterCountsTicksFromItsFirstTick) {
  WorldDef def = Pair::def();
  def.first_tick = 1000;
  World world = std::move(World::create(def).value());
  EXPECT_EQ(world.tick().tick, 1000u);
  EXPECT_EQ(world.tick().tick, 1001u);
}

}  // namespace
}  // namespace sightline::testing
