// Level A of the sharded world (docs/scale-out.md): shards in one process, over a seeded loopback
// that reorders and duplicates frames, against one World fed the same trace. At every tick each
// client, on whichever shard holds it, has the set and records of the single World (by external
// id: so no copy is withdrawn while one process would still hold it); every entity has exactly
// one owner; no member is missing at a client handover, and none carried with one stays held.
#include "sightline/shard_node.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "named_world.h"
#include "rng.h"
#include "sightline/world.h"

namespace sightline::testing {
namespace {

struct ClusterDef {
  std::uint32_t shard_cols = 2;
  std::uint32_t shard_rows = 2;
  std::uint32_t entities = 120;
  std::uint32_t clients = 16;
  std::uint32_t ticks = 200;
  float speed = 1.5f;       ///< Largest step of a walker per tick, world units.
  float teleports = 0.01f;  ///< Chance per tick of a teleport across the map.
  float churn = 0.05f;      ///< Chance per tick of a destroy and a create.
  std::uint32_t crowd_cap = 0;
  float drop = 0.0f;  ///< Chance a frame is lost on the way (then, and its resends, asked for again).
  /// Always-relevant entities and presenters, area and user keys with clients subscribed (some
  /// bypassing distance, some at a slower rate), entities owned by far clients; changed as it runs.
  bool rules = false;
};

// R 16, L 20, h 2 and one tick of motion at up to 2 units per axis (2.83 diagonally): a band of
// at least 24.83, so 25, and cells of 25.
class Cluster {
 public:
  Cluster(const ClusterDef& def, std::uint64_t seed) : def_(def), rng_(seed), single_(world_def(def)) {
    map_def_ = region_blocks(0.0f, 0.0f, 25.0f, 8, 8, def.shard_cols, def.shard_rows, 25.0f, 2.0f);
    const RegionMap map = *RegionMap::create(map_def_);
    for (const ShardId s : map.shards()) {
      worlds_.push_back(std::make_unique<World>(std::move(World::create(world_def(def)).value())));
      nodes_.push_back(std::move(ShardNode::create({s, 0}, *worlds_.back(), map).value()));
    }
    // Two event classes, the same on every World: a shot heard within 30 that leaks no subject,
    // a shout heard within 60 with a null subject where it is not held.
    for (const EventClassDef& c : {EventClassDef{30.0f, AbsentSubject::drop, false},
                                   EventClassDef{60.0f, AbsentSubject::null_subject, false}}) {
      classes_.push_back(*single_.world().create_event_class(c));
      for (ShardNode& n : nodes_) EXPECT_TRUE(n.create_event_class(c).ok());
    }
  }
  static WorldDef world_def(const ClusterDef& def) {
    WorldDef w = default_world_def();
    w.enter_radius = 16.0f;
    w.leave_radius = 20.0f;
    w.order_key = OrderKey::external;
    w.tiers = {{0.5f, 1}, {1.0f, 2}};
    w.crowd_cap = def.crowd_cap;
    return w;
  }

  float coordinate() { return rng_.uniform(0.0f, 200.0f); }
  ShardNode& owner_of(std::uint64_t id) {
    for (ShardNode& n : nodes_) {
      if (n.owns(id)) return n;
    }
    ADD_FAILURE() << "no shard owns " << id;
    return nodes_[0];
  }
  ShardNode& node_at(float x, float z) {
    const RegionMap map = *RegionMap::create(map_def_);
    return nodes_[map.owner_at(x, z)];
  }

  void create(std::uint64_t id, float x, float z) {
    EntityDef d;
    d.x = x;
    d.z = z;
    d.external_id = id;
    ASSERT_TRUE(single_.world().create_entity(d).ok());
    ASSERT_TRUE(node_at(x, z).create_entity(d).ok());
    live_.push_back(id);
  }
  void move(std::uint64_t id, float x, float z) {
    ASSERT_TRUE(single_.world().set_position(single_.of(id), x, z).ok());
    ASSERT_TRUE(owner_of(id).set_position(id, x, z).ok());
  }
  void teleport(std::uint64_t id, float x, float z) {
    ASSERT_TRUE(single_.world().teleport(single_.of(id), x, z).ok());
    ASSERT_TRUE(owner_of(id).teleport(id, x, z).ok());
  }
  bool is_viewer(std::uint64_t id) const { return std::count(viewers_.begin(), viewers_.end(), id) != 0; }
  void destroy(std::uint64_t id) {
    ASSERT_TRUE(single_.world().destroy_entity(single_.of(id)).ok());
    ASSERT_TRUE(owner_of(id).destroy_entity(id).ok());
    std::erase(live_, id);
  }
  void create_client(std::uint64_t client, std::uint64_t viewer) {
    single_clients_[client] = *single_.world().create_client(single_.of(viewer));
    ASSERT_TRUE(owner_of(viewer).create_client(client, viewer).ok());
    viewers_.push_back(viewer);
  }

  ShardNode& holder_of_client(std::uint64_t client) {
    for (ShardNode& n : nodes_) {
      if (!n.client(client).is_null()) return n;
    }
    ADD_FAILURE() << "no shard holds client " << client;
    return nodes_[0];
  }
  void set_always_relevant(std::uint64_t id, bool on) {
    ASSERT_TRUE(single_.world().set_always_relevant(single_.of(id), on).ok());
    ASSERT_TRUE(owner_of(id).set_always_relevant(id, on).ok());
  }
  void set_presenter(std::uint64_t id, bool on) {
    ASSERT_TRUE(single_.world().set_presenter(single_.of(id), on).ok());
    ASSERT_TRUE(owner_of(id).set_presenter(id, on).ok());
  }
  void set_key(std::uint64_t id, InterestKey key) {
    World& w = single_.world();
    const EntityId e = single_.of(id);
    ASSERT_TRUE((key.type == InterestKeyType::global ? w.set_global_interest_key(e)
                 : key.type == InterestKeyType::area ? w.set_area_interest_key(e, key.value)
                                                     : w.set_user_interest_key(e, key.value))
                    .ok());
    ASSERT_TRUE(owner_of(id).set_interest_key(id, key).ok());
  }
  void set_owner(std::uint64_t id, std::uint64_t client) {
    World& w = single_.world();
    ASSERT_TRUE(
        (client == 0 ? w.clear_owner(single_.of(id)) : w.set_owner(single_.of(id), single_clients_[client]))
            .ok());
    ASSERT_TRUE(owner_of(id).set_owner(id, client).ok());
  }
  void subscribe(std::uint64_t client) {
    const KeySubscription area[] = {{1, 1, client % 2 == 0}, {2, 2, false}};
    ShardNode& n = holder_of_client(client);
    for (World* w : {&single_.world(), &n.world()}) {
      const ClientId c = w == &single_.world() ? single_clients_[client] : n.client(client);
      ASSERT_TRUE(w->set_area_subscriptions(c, area).ok());
      if (client % 3 == 0) {
        ASSERT_TRUE(w->add_user_subscription(c, {5, 1, true}).ok());
      }
    }
  }
  void rule_inputs(std::uint32_t t) {
    if (t == 0) {
      for (std::size_t i = 0; i < live_.size(); ++i) {
        const std::uint64_t id = live_[i];
        if (i % 23 == 5) set_always_relevant(id, true);
        if (i % 29 == 7) set_presenter(id, true);
        if (i % 7 == 3) set_key(id, {InterestKeyType::area, 1 + i % 3});
        if (i % 31 == 11) set_key(id, {InterestKeyType::user, 5});
      }
      for (std::uint64_t c = 1; c <= def_.clients; ++c) {
        subscribe(c);
        set_owner(live_[(c * 37) % live_.size()], c);
      }
      return;
    }
    for (std::uint32_t k = rng_.below(3); k > 0; --k) {
      EventDef e;
      const std::size_t c = rng_.below(2);
      e.event_class = classes_[c];
      e.x = coordinate();
      e.z = coordinate();
      e.user_data = rng_.next();
      const std::uint64_t subject =
          rng_.below(3) == 0 ? 0 : live_[rng_.below(static_cast<std::uint32_t>(live_.size()))];
      e.subject = subject == 0 ? EntityId{} : single_.of(subject);
      ASSERT_TRUE(single_.world().emit_event(e).ok());
      ShardNode& n = subject == 0 ? node_at(e.x, e.z) : owner_of(subject);
      e.event_class = classes_[c];
      e.subject = subject == 0 ? EntityId{} : n.world().find_external(subject);
      ASSERT_TRUE(n.emit_event(e).ok());
    }
    const std::uint64_t id = live_[rng_.below(static_cast<std::uint32_t>(live_.size()))];
    switch (rng_.below(8)) {
      case 0: set_always_relevant(id, rng_.below(2) == 0); break;
      case 1: set_presenter(id, rng_.below(2) == 0); break;
      case 2: set_key(id, {InterestKeyType::area, 1 + rng_.below(3)}); break;
      case 3: set_key(id, {}); break;
      case 4: set_owner(id, rng_.below(2) == 0 ? 0 : 1 + rng_.below(def_.clients)); break;
      default: break;
    }
  }

  // One tick everywhere; frames delivered in a shuffled order, some twice.
  void tick() {
    std::vector<std::pair<std::size_t, std::vector<std::uint8_t>>> mail;
    for (ShardNode& n : nodes_) {
      ASSERT_TRUE(n.begin_tick().ok());
      for (const OutFrame& f : n.outgoing()) {
        mail.emplace_back(f.to, std::vector<std::uint8_t>(f.bytes.begin(), f.bytes.end()));
        if (rng_.below(10) == 0)
          mail.emplace_back(f.to, std::vector<std::uint8_t>(f.bytes.begin(), f.bytes.end()));
      }
    }
    for (std::size_t i = mail.size(); i > 1; --i)
      std::swap(mail[i - 1], mail[rng_.below(static_cast<std::uint32_t>(i))]);
    for (const auto& [to, bytes] : mail) {
      if (rng_.uniform() < def_.drop) continue;
      ASSERT_TRUE(nodes_[to].receive(bytes).ok());
    }
    // A shard still waiting asks for what it lacks; the resend may be lost too.
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      while (!nodes_[i].ready()) {
        for (const ShardId peer : nodes_[i].missing()) {
          const std::span<const std::uint8_t> again =
              nodes_[peer].resend(static_cast<ShardId>(i), nodes_[i].next_tick());
          ASSERT_FALSE(again.empty());
          if (rng_.uniform() < def_.drop) continue;
          ASSERT_TRUE(nodes_[i].receive(again).ok());
        }
      }
    }
    for (ShardNode& n : nodes_) {
      ASSERT_TRUE(n.ready());
      ASSERT_TRUE(n.tick().ok());
    }
    (void)single_.world().tick();
  }

  std::string debug(const NamedView& one, const NamedView& sharded) {
    std::string out;
    for (const std::uint64_t id : one.set) {
      if (std::binary_search(sharded.set.begin(), sharded.set.end(), id)) continue;
      const Position p = *single_.world().position(single_.of(id));
      out += "\n missing " + std::to_string(id) + " at " + std::to_string(p.x) + "," + std::to_string(p.z);
      for (std::size_t n = 0; n < nodes_.size(); ++n) {
        const EntityId e = nodes_[n].world().find_external(id);
        out += "\n  shard " + std::to_string(n) + (nodes_[n].owns(id) ? " owns" : "") +
               (e.is_null() ? " none"
                            : " at " + std::to_string(nodes_[n].world().position(e)->x) + "," +
                                  std::to_string(nodes_[n].world().position(e)->z));
      }
    }
    return out;
  }

  // Every client's view on its shard against the single World's; how many differ.
  std::uint32_t compare(std::uint32_t t, std::uint64_t seed) {
    std::uint32_t differing = 0;
    for (const auto& [client, single_id] : single_clients_) {
      const ShardNode* on = nullptr;
      for (const ShardNode& n : nodes_) {
        if (!n.client(client).is_null()) {
          EXPECT_EQ(on, nullptr) << "client " << client << " on two shards";
          on = &n;
        }
      }
      EXPECT_NE(on, nullptr) << "client " << client << " on no shard";
      if (on == nullptr) continue;
      auto& node = const_cast<ShardNode&>(*on);
      const NamedView sharded = named_view(node.world(), node.client(client));
      const NamedView one = named_view(single_.world(), single_id);
      if (!(sharded == one)) {
        ++differing;
        if (differing == 1) {
          const auto text = [](const NamedView& v) {
            std::string out;
            for (const auto& [kind, id, reason, created] : v.records) {
              if (kind != 'u')
                out += std::string(" ") + kind + std::to_string(id) + "/" + std::to_string(reason) +
                       (created ? "c" : "");
            }
            return out + " (" + std::to_string(v.set.size()) + " held)";
          };
          ADD_FAILURE() << "seed " << seed << " tick " << t << ": client " << client << " events "
                        << sharded.events.size() << " / " << one.events.size() << " on shard "
                        << (on - nodes_.data()) << " differs:\n sharded" << text(sharded) << "\n one    "
                        << text(one) << debug(one, sharded);
        }
      }
    }
    // Exactly one owner per entity.
    for (const std::uint64_t id : live_) {
      const auto owners =
          std::count_if(nodes_.begin(), nodes_.end(), [&](const ShardNode& n) { return n.owns(id); });
      EXPECT_EQ(owners, 1) << "seed " << seed << " entity " << id;
    }
    return differing;
  }

  void run(std::uint64_t seed) {
    for (std::uint64_t i = 1; i <= def_.entities; ++i) create(i * 1000 + 7, coordinate(), coordinate());
    for (std::uint64_t c = 1; c <= def_.clients; ++c) create_client(c, live_[c * 3]);
    std::uint64_t next = 900000;
    for (std::uint32_t t = 0; t < def_.ticks; ++t) {
      for (const std::uint64_t id : live_) {
        const Position p = *single_.world().position(single_.of(id));
        const float s = def_.speed;
        move(id, std::clamp(p.x + rng_.uniform(-s, s), -20.0f, 220.0f),
             std::clamp(p.z + rng_.uniform(-s, s), -20.0f, 220.0f));
      }
      if (rng_.uniform() < def_.teleports)
        teleport(live_[rng_.below(static_cast<std::uint32_t>(live_.size()))], coordinate(), coordinate());
      if (def_.rules) rule_inputs(t);
      if (rng_.uniform() < def_.churn) {
        const std::uint64_t id = live_[rng_.below(static_cast<std::uint32_t>(live_.size()))];
        if (!is_viewer(id)) destroy(id);
        create(++next, coordinate(), coordinate());
      }
      tick();
      if (::testing::Test::HasFatalFailure()) return;
      if (compare(t, seed) != 0) return;
    }
  }

  const std::vector<ShardNode>& nodes() const { return nodes_; }

 private:
  ClusterDef def_;
  scenarios::Rng rng_;
  RegionMapDef map_def_;
  std::vector<std::unique_ptr<World>> worlds_;
  std::vector<ShardNode> nodes_;
  NamedWorld single_;
  std::map<std::uint64_t, ClientId> single_clients_;
  std::vector<std::uint64_t> live_;
  std::vector<std::uint64_t> viewers_;
  std::vector<EventClassId> classes_;  ///< The single World's (the shards' have the same indices).
};

bool mentions(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

ShardNodeStats totals(const std::vector<ShardNode>& nodes) {
  ShardNodeStats t;
  for (const ShardNode& n : nodes) {
    t.entity_handovers += n.stats().entity_handovers;
    t.client_handovers += n.stats().client_handovers;
    t.members_missing += n.stats().members_missing;
    t.carried_held += n.stats().carried_held;
    t.records_refused += n.stats().records_refused;
    t.events_received += n.stats().events_received;
    t.duplicates_dropped += n.stats().duplicates_dropped;
    t.copies += n.stats().copies;
    t.resends += n.stats().resends;
  }
  return t;
}

void expect_level_a(const ClusterDef& def, std::uint64_t seeds, std::uint64_t least_client_handovers) {
  ShardNodeStats all;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    Cluster cluster(def, seed);
    cluster.run(seed);
    if (::testing::Test::HasFailure()) return;
    const ShardNodeStats t = totals(cluster.nodes());
    EXPECT_EQ(t.members_missing, 0u) << "seed " << seed;
    EXPECT_EQ(t.carried_held, 0u) << "seed " << seed;
    EXPECT_EQ(t.records_refused, 0u) << "seed " << seed;
    all.entity_handovers += t.entity_handovers;
    all.client_handovers += t.client_handovers;
    all.duplicates_dropped += t.duplicates_dropped;
    all.copies += t.copies;
    all.resends += t.resends;
    all.events_received += t.events_received;
  }
  std::printf(
      "%llu seeds x %u ticks: %llu entity and %llu client handovers, %llu duplicate frames dropped, %llu "
      "resent, %llu copies at the end\n",
      static_cast<unsigned long long>(seeds), def.ticks,
      static_cast<unsigned long long>(all.entity_handovers),
      static_cast<unsigned long long>(all.client_handovers),
      static_cast<unsigned long long>(all.duplicates_dropped), static_cast<unsigned long long>(all.resends),
      static_cast<unsigned long long>(all.copies));
  // The runs cross borders: entities and clients change hands.
  EXPECT_GT(all.entity_handovers, 5 * least_client_handovers);
  EXPECT_GE(all.client_handovers, least_client_handovers);
  EXPECT_GT(all.duplicates_dropped, 0u);
  if (def.rules) {
    EXPECT_GT(all.events_received, 100u);
  }
}

TEST(ShardNode, SeamWalkEqualsOneProcess) { expect_level_a(ClusterDef{}, 6, 10); }

TEST(ShardNode, SeamStressWithTeleportsChurnAndTheCrowdCapEqualsOneProcess) {
  ClusterDef def;
  def.speed = 2.0f;
  def.teleports = 0.2f;
  def.churn = 0.3f;
  def.crowd_cap = 6;
  def.clients = 30;
  expect_level_a(def, 4, 20);
}

TEST(ShardNode, LostFramesAskedForAgainEqualOneProcess) {
  ClusterDef def;
  def.drop = 0.2f;
  def.teleports = 0.05f;
  def.churn = 0.1f;
  expect_level_a(def, 4, 10);
}

TEST(ShardNode, RulesAcrossBordersEqualOneProcess) {
  ClusterDef def;
  def.rules = true;
  def.churn = 0.0f;  // a destroyed owner or viewer would need its own bookkeeping here
  expect_level_a(def, 4, 10);
}

TEST(ShardNode, StripsEqualOneProcess) {
  ClusterDef def;
  def.shard_cols = 4;
  def.shard_rows = 1;
  expect_level_a(def, 4, 10);
}

TEST(ShardNode, FramesAreCheckedAndTheBarrierWaits) {
  const RegionMap map = *RegionMap::create(region_blocks(0.0f, 0.0f, 25.0f, 8, 8, 2, 1, 25.0f, 2.0f));
  std::vector<std::unique_ptr<World>> worlds;
  std::vector<ShardNode> nodes;
  for (const ShardId s : map.shards()) {
    worlds.push_back(std::make_unique<World>(std::move(World::create(Cluster::world_def({})).value())));
    nodes.push_back(std::move(ShardNode::create({s, 0}, *worlds.back(), map).value()));
  }
  World by_slot = std::move(World::create(default_world_def()).value());
  EXPECT_EQ(ShardNode::create({0, 0}, by_slot, map).status().code(), ErrorCode::invalid_argument);
  EXPECT_EQ(ShardNode::create({7, 0}, *worlds[0], map).status().code(), ErrorCode::invalid_argument);
  EntityDef d;
  d.x = 90.0f;
  d.external_id = 5;
  ASSERT_TRUE(nodes[0].create_entity(d).ok());
  EXPECT_FALSE(nodes[1].set_position(5, 1.0f, 1.0f).ok());  // not its entity
  EXPECT_FALSE(nodes[0].tick().ok());                       // begin_tick first
  ASSERT_TRUE(nodes[0].begin_tick().ok());
  ASSERT_TRUE(nodes[1].begin_tick().ok());
  EXPECT_FALSE(nodes[0].ready());
  // The tick's frames are written: inputs wait for the next tick.
  EXPECT_TRUE(mentions(nodes[0].set_position(5, 1.0f, 1.0f), "has begun"));
  EXPECT_TRUE(mentions(nodes[0].create_entity(d).status(), "has begun"));
  const std::vector<std::uint8_t> to_1(nodes[0].outgoing()[0].bytes.begin(),
                                       nodes[0].outgoing()[0].bytes.end());
  const std::vector<std::uint8_t> to_0(nodes[1].outgoing()[0].bytes.begin(),
                                       nodes[1].outgoing()[0].bytes.end());
  EXPECT_EQ(nodes[0].receive(to_1).code(), ErrorCode::invalid_argument);  // addressed to shard 1
  // Frames of another region epoch, or too far ahead, are refused.
  ShardFrame forged;
  forged.header = {ShardFrameKind::tick, 1, 0, 0, 0, 9};
  std::vector<std::uint8_t> bytes;
  ASSERT_TRUE(encode_shard_frame(forged, bytes).ok());
  EXPECT_TRUE(mentions(nodes[0].receive(bytes), "region epoch 9"));
  forged.header = {ShardFrameKind::tick, 1, 0, kResendTicks, 0, 0};
  ASSERT_TRUE(encode_shard_frame(forged, bytes).ok());
  EXPECT_TRUE(mentions(nodes[0].receive(bytes), "more than 64 ticks ahead"));
  std::vector<std::uint8_t> cut(to_0.begin(), to_0.end() - 1);
  EXPECT_EQ(nodes[0].receive(cut).code(), ErrorCode::malformed_packet);
  EXPECT_FALSE(nodes[0].ready());
  ASSERT_TRUE(nodes[0].receive(to_0).ok());
  ASSERT_TRUE(nodes[0].receive(to_0).ok());  // a duplicate, dropped
  EXPECT_EQ(nodes[0].stats().duplicates_dropped, 1u);
  ASSERT_TRUE(nodes[1].receive(to_1).ok());
  ASSERT_TRUE(nodes[0].ready() && nodes[1].ready());
  ASSERT_TRUE(nodes[0].tick().ok());
  ASSERT_TRUE(nodes[1].tick().ok());
  // Shard 1 holds a copy of the entity 10 units from its border, and refuses the old frame now.
  EXPECT_FALSE(worlds[1]->find_external(5).is_null());
  EXPECT_EQ(nodes[1].receive(to_1).code(), ErrorCode::invalid_argument);
  // A World whose next tick is not the node's first is refused.
  World late = std::move(World::create(Cluster::world_def({})).value());
  (void)late.tick();
  EXPECT_TRUE(mentions(ShardNode::create({0, 0}, late, map).status(), "the World's next tick is 1"));
  // Clients come and go through the node.
  ASSERT_TRUE(nodes[0].create_client(3, 5).ok());
  EXPECT_TRUE(nodes[0].destroy_client(3).ok());
  EXPECT_FALSE(nodes[0].destroy_client(3).ok());
  EXPECT_TRUE(nodes[0].client(3).is_null());
}

// Two shards side by side, ticked in lockstep with every frame delivered.
struct Pair {
  Pair() : map(*RegionMap::create(region_blocks(0.0f, 0.0f, 25.0f, 8, 8, 2, 1, 25.0f, 2.0f))) {
    for (const ShardId s : map.shards()) {
      worlds.push_back(std::make_unique<World>(std::move(World::create(Cluster::world_def({})).value())));
      nodes.push_back(std::move(ShardNode::create({s, 0}, *worlds.back(), map).value()));
    }
  }
  void tick() {
    for (ShardNode& n : nodes) ASSERT_TRUE(n.begin_tick().ok());
    for (ShardNode& n : nodes) {
      for (const OutFrame& f : n.outgoing()) ASSERT_TRUE(nodes[f.to].receive(f.bytes).ok());
    }
    for (ShardNode& n : nodes) ASSERT_TRUE(n.tick().ok());
  }
  RegionMap map;
  std::vector<std::unique_ptr<World>> worlds;
  std::vector<ShardNode> nodes;
};

// The client's viewer jumps to the other shard in the tick a member dies far from that shard's
// border: the client, adopted there, still sees the member die, as one process shows it.
TEST(ShardNode, AMemberThatDiesAsItsClientJumpsAwayDiesForItThere) {
  Pair p;
  EntityDef v;
  v.x = 90.0f;
  v.z = 10.0f;
  v.external_id = 1;
  EntityDef m = v;
  m.x = 74.0f;  // 26 from the border: no copy on shard 1; 16 (R) from the viewer
  m.external_id = 2;
  ASSERT_TRUE(p.nodes[0].create_entity(v).ok());
  ASSERT_TRUE(p.nodes[0].create_entity(m).ok());
  ASSERT_TRUE(p.nodes[0].create_client(7, 1).ok());
  p.tick();
  ASSERT_EQ(named_view(p.nodes[0].world(), p.nodes[0].client(7)).set, std::vector<std::uint64_t>{2});
  EXPECT_TRUE(p.worlds[1]->find_external(2).is_null());
  ASSERT_TRUE(p.nodes[0].teleport(1, 190.0f, 10.0f).ok());
  ASSERT_TRUE(p.nodes[0].destroy_entity(2).ok());
  p.tick();
  ASSERT_FALSE(p.nodes[1].client(7).is_null());
  const NamedView there = named_view(p.nodes[1].world(), p.nodes[1].client(7));
  EXPECT_EQ(there.records, (NamedRecords{{'d', 2, static_cast<int>(DespawnReason::destroyed), false}}));
  EXPECT_TRUE(p.worlds[1]->find_external(2).is_null());
  EXPECT_EQ(p.nodes[1].stats().members_missing, 0u);
}

}  // namespace
}  // namespace sightline::testing
