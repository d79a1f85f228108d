// Server to mirrors across a seeded bad network (drop, duplicate, reorder, delay): every mirror
// only ever holds what the server sent it, never applies an update out of place, and once the
// network settles holds exactly the server's set for its client.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "jitter_walk.h"
#include "lossy_channel.h"
#include "rng.h"
#include "sightline/client_mirror.h"
#include "sightline/protocol.h"
#include "sightline/replicator.h"
#include "sightline/world.h"

namespace sightline {
namespace {

using scenarios::LossyChannel;
using scenarios::LossyChannelDef;

// The game's state: the entity's own id, its position at 1/64 unit and its target, an entity
// reference (Stream::serialize_entity) in both parts; the full part adds its leader, a reference
// set when the entity is made, which only a spawn or a refresh carries. A payload that names
// another entity as its own, or a position the entity did not have at the packet's tick, is
// caught.
struct Game {
  const World* world = nullptr;
  // By entity index: what each entity refers to now, and its leader (either may be stale).
  std::vector<EntityId> target = std::vector<EntityId>(1024);
  std::vector<EntityId> leader = std::vector<EntityId>(1024);
};

template <class F>
bool state(Stream& s, std::uint32_t& index, std::uint32_t& generation, float& x, float& z, EntityId& target,
           StatePart part, F&& extra) {
  if (!s.serialize_bits(index, 32) || !s.serialize_bits(generation, 32)) return false;
  if (!s.serialize_quantized(x, -100.0f, 200.0f, 1.0f / 64.0f)) return false;
  if (!s.serialize_quantized(z, -100.0f, 200.0f, 1.0f / 64.0f)) return false;
  if (!s.serialize_entity(target)) return false;
  return part == StatePart::update || extra(s);
}

bool write_state(Stream& s, EntityId e, StatePart part, void* context) {
  const Game& game = *static_cast<Game*>(context);
  Position p = *game.world->position(e);
  std::uint32_t index = e.index;
  std::uint32_t generation = e.generation;
  EntityId target = game.target.at(e.index);
  EntityId leader = game.leader.at(e.index);
  return state(s, index, generation, p.x, p.z, target, part, [&](Stream& st) {
    std::uint32_t name = e.index * 7919u;  // stands for what only a spawn carries
    return st.serialize_bits(name, 32) && st.serialize_entity(leader);
  });
}

struct Read {
  std::uint32_t index = 0, generation = 0;
  float x = 0.0f, z = 0.0f;
  EntityId target;
  EntityId leader;  // the full part's
};

std::optional<Read> read_state(std::span<const std::uint8_t> payload, StatePart part) {
  Stream s = Stream::reader(payload);
  Read r;
  const bool ok = state(s, r.index, r.generation, r.x, r.z, r.target, part, [&r](Stream& st) {
    std::uint32_t name = 0;
    return st.serialize_bits(name, 32) && st.serialize_entity(r.leader);
  });
  if (!ok || !s.rest_is_zero()) return std::nullopt;
  return r;
}

bool check_payload(EntityId entity, StatePart part, std::span<const std::uint8_t> payload, void*) {
  const std::optional<Read> r = read_state(payload, part);
  return r && r->index == entity.index && r->generation == entity.generation;
}

struct Client {
  ClientId id;
  std::optional<ClientMirror> mirror;
  std::optional<LossyChannel> down;
  std::optional<LossyChannel> up;
  std::vector<WireRecord> log;  // every reliable record the server wrote, by id
  std::vector<std::vector<std::uint8_t>> log_payloads;
  std::set<std::uint64_t> shadow;  // the log applied up to the mirror's ack
  std::uint32_t shadow_applied = 0;
  std::uint32_t messages_sent = 0;
};

std::uint64_t key(EntityId e) { return (std::uint64_t{e.index} << 32) | e.generation; }

// Applies what the game hears to the checks.
class Checker : public MirrorListener {
 public:
  std::map<std::uint32_t, std::map<std::uint64_t, Position>>* positions =
      nullptr;  // tick -> entity -> position
  std::uint64_t enters = 0, updates = 0, exits = 0, refreshes = 0, references = 0;
  // Per client: what its mirror holds and has ever held, from what the game heard (a plain model).
  std::map<std::uint32_t, std::set<std::uint64_t>> held, ever_held;
  // Per client: each held entity's leader as its last spawn or refresh read.
  std::map<std::uint32_t, std::map<std::uint64_t, EntityId>> leaders;

  void on_enter(EntityId e, SpawnReason, bool, std::span<const std::uint8_t> full,
                std::uint32_t tick) override {
    ++enters;
    held[client].insert(key(e));  // a state may name its own entity
    ever_held[client].insert(key(e));
    check(e, full, StatePart::full, tick, true);
  }
  void on_update(EntityId e, std::span<const std::uint8_t> update, std::uint32_t tick) override {
    ++updates;
    check(e, update, StatePart::update, tick, delivery == Delivery::reliable);
  }
  void on_refresh(EntityId e, std::span<const std::uint8_t> full, std::uint32_t tick) override {
    ++refreshes;
    check(e, full, StatePart::full, tick, true);
  }
  void on_exit(EntityId e, ExitKind, DespawnReason) override {
    ++exits;
    held[client].erase(key(e));
  }
  // Events: a reliable one comes in order after its subject's spawn and before its despawn, so
  // it names only what the client holds; so does any event on an ordered stream.
  // (The client's own viewer is never sent to it, and may be named.)
  Delivery delivery = Delivery::reliable;
  EntityId viewer;           // of the client whose packets are being applied
  std::uint32_t client = 0;  // its place
  std::map<std::uint32_t, std::vector<std::uint32_t>> messages;  // by client: the numbers read
  void on_message(std::span<const std::uint8_t> payload, std::uint32_t) override {
    ASSERT_EQ(payload.size(), 4u);
    messages[client].push_back(payload[0] | (payload[1] << 8) | (payload[2] << 16) |
                               (static_cast<std::uint32_t>(payload[3]) << 24));
  }
  std::uint64_t events = 0, reliable_events = 0;
  void on_event(const ReceivedEvent& e) override {
    ++events;
    reliable_events += e.reliable ? 1 : 0;
    if (e.reliable || delivery == Delivery::reliable) {
      EXPECT_TRUE(e.subject.is_null() || e.subject_held || e.subject == viewer)
          << "event names " << e.subject.index << ", not held";
    }
  }

 private:
  // `in_order`: the record applies in the order the server wrote it (a spawn or refresh, or any
  // record on an ordered stream), so a reference in it names what the client holds as it applies.
  // An unreliable update may trail the despawn of what it names: it names one the client held.
  void check(EntityId e, std::span<const std::uint8_t> payload, StatePart part, std::uint32_t tick,
             bool in_order) {
    const std::optional<Read> r = read_state(payload, part);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->index, e.index);
    EXPECT_EQ(r->generation, e.generation);
    if (part == StatePart::full) leaders[client][key(e)] = r->leader;
    for (const EntityId named : {r->target, r->leader}) {
      if (named.is_null() || named == viewer) continue;
      ++references;
      const auto& known = in_order ? held[client] : ever_held[client];
      EXPECT_TRUE(known.count(key(named)) != 0)
          << "client " << client << " read a reference to " << named.index << ":" << named.generation
          << ", which it " << (in_order ? "does not hold" : "never held");
    }
    // The state is the entity's own at the packet's tick (quantized as it was written).
    const auto at = positions->find(tick);
    ASSERT_NE(at, positions->end()) << "tick " << tick;
    const auto p = at->second.find(key(e));
    ASSERT_NE(p, at->second.end()) << "entity " << e.index << " was not alive at tick " << tick;
    EXPECT_NEAR(r->x, p->second.x, 1.0f / 128.0f + 1e-4f);
    EXPECT_NEAR(r->z, p->second.z, 1.0f / 128.0f + 1e-4f);
  }
};

struct NetworkRun {
  Delivery delivery = Delivery::unreliable;
  LossyChannelDef down;
  LossyChannelDef up;
  std::uint64_t seed = 1;
  int bad_ticks = 300;
  bool deltas = false;  // ReplicatorDef::delta_updates
};

void run_bad_network(const NetworkRun& run) {
  scenarios::JitterWalkDef walk_def;
  walk_def.entities = 300;
  walk_def.width = 60.0f;
  walk_def.height = 40.0f;
  walk_def.speed = 3.0f;
  walk_def.seed = run.seed;
  scenarios::JitterWalk walk(walk_def);
  WorldDef def = default_world_def();
  def.enter_radius = 6.0f;
  def.leave_radius = 7.5f;
  def.tiers = default_distance_tiers();
  World world = std::move(World::create(def).value());
  std::vector<EntityId> ids;
  for (std::size_t i = 0; i < walk.xs().size(); ++i)
    ids.push_back(*world.create_entity({walk.xs()[i], walk.zs()[i]}));
  Game game{&world};
  scenarios::Rng rng(run.seed);
  // The nearest of a few entities picked at random: most often near, sometimes far (a viewer,
  // itself, one that will die); none a fifth of the time.
  auto pick_near = [&](EntityId who) {
    EntityId found;
    float best = 1e30f;
    const Position at = *world.position(who);
    for (int pick = rng.below(5) == 0 ? 0 : 1 + static_cast<int>(rng.below(30)); pick > 0; --pick) {
      const EntityId other = ids[rng.below(static_cast<std::uint32_t>(ids.size()))];
      const Position p = *world.position(other);
      const float d = (p.x - at.x) * (p.x - at.x) + (p.z - at.z) * (p.z - at.z);
      if (d < best) {
        best = d;
        found = other;
      }
    }
    return found;
  };
  for (const EntityId e : ids) game.leader.at(e.index) = pick_near(e);
  ReplicatorDef rdef;
  rdef.serialize = write_state;
  rdef.serialize_context = &game;
  rdef.delivery = run.delivery;
  rdef.budget_bytes = 400;        // tight: members wait their turn
  rdef.entry_budget_bytes = 300;  // tight: entry is paced
  rdef.packet_bytes = 256;
  rdef.resend_sends = 3;
  rdef.delta_updates = run.deltas;
  Replicator replicator = std::move(Replicator::create(world, rdef).value());
  // Shots are heard beyond sight and must arrive; steps are near and may be lost.
  const EventClassId shot = *world.create_event_class(
      {.radius = 9.0f, .when_absent = AbsentSubject::null_subject, .reliable = true});
  const EventClassId step_sound =
      *world.create_event_class({.radius = 5.0f, .when_absent = AbsentSubject::drop});
  MirrorDef mdef;
  mdef.delivery = run.delivery;
  mdef.check = check_payload;

  std::vector<Client> clients(20);
  for (std::size_t c = 0; c < clients.size(); ++c) {
    clients[c].id = *world.create_client(ids[c * 15]);
    clients[c].mirror.emplace(std::move(ClientMirror::create(mdef).value()));
    LossyChannelDef down = run.down;
    down.seed = run.seed * 1000 + c;
    LossyChannelDef up = run.up;
    up.seed = run.seed * 2000 + c;
    clients[c].down.emplace(down);
    clients[c].up.emplace(up);
  }
  std::map<std::uint32_t, std::map<std::uint64_t, Position>> positions;
  Checker checker;
  checker.positions = &positions;
  checker.delivery = run.delivery;
  DecodedPacket decoded;
  std::uint64_t anomalies = 0;
  std::uint64_t leaks_checked = 0;

  auto step = [&](std::uint64_t t, bool moving) {
    if (moving) {
      walk.step();
      for (std::size_t i = 0; i < ids.size(); ++i)
        ASSERT_TRUE(world.set_position(ids[i], walk.xs()[i], walk.zs()[i]).ok());
      // Churn: entities die and are born in their slots (same index, a new generation), others
      // teleport.
      for (int k = 0; k < 3; ++k) {
        const std::size_t i = rng.below(static_cast<std::uint32_t>(ids.size()));
        if (i % 15 == 0) continue;  // viewers
        ASSERT_TRUE(world.destroy_entity(ids[i]).ok());
        ids[i] = *world.create_entity({walk.xs()[i], walk.zs()[i]});
        game.leader.at(ids[i].index) = pick_near(ids[i]);
      }
      const std::size_t j = rng.below(static_cast<std::uint32_t>(ids.size()));
      ASSERT_TRUE(world.teleport(ids[j], rng.uniform(0.0f, 60.0f), rng.uniform(0.0f, 40.0f)).ok());
      // Entities change what they refer to.
      for (int k = 0; k < 12; ++k) {
        const EntityId who = ids[rng.below(static_cast<std::uint32_t>(ids.size()))];
        game.target.at(who.index) = pick_near(who);
      }
      // A message to one client a tick, numbered in the order sent to it.
      Client& to = clients[t % clients.size()];
      const std::uint32_t number = to.messages_sent++;
      const std::array<std::uint8_t, 4> bytes{
          static_cast<std::uint8_t>(number), static_cast<std::uint8_t>(number >> 8),
          static_cast<std::uint8_t>(number >> 16), static_cast<std::uint8_t>(number >> 24)};
      ASSERT_TRUE(replicator.send_message(to.id, bytes).ok());
      for (int k = 0; k < 4; ++k) {
        const EntityId who = ids[rng.below(static_cast<std::uint32_t>(ids.size()))];
        const Position p = *world.position(who);
        const EventClassId kind = k % 2 == 0 ? shot : step_sound;
        ASSERT_TRUE(world.emit_event({.event_class = kind, .x = p.x, .z = p.z, .subject = who}).ok());
      }
    }
    const TickStats stats = world.tick();
    auto& now = positions[static_cast<std::uint32_t>(stats.tick)];
    for (const EntityId e : ids) now[key(e)] = *world.position(e);
    Status sent = replicator.send();
    ASSERT_TRUE(sent.ok()) << sent.message();
    for (Client& c : clients) {
      for (const std::span<const std::uint8_t> packet : *replicator.packets(c.id)) {
        ASSERT_TRUE(decode_packet(packet, decoded).ok());
        for (const WireRecord& r : decoded.records) {
          if (r.type == RecordType::update || r.type == RecordType::delta_update ||
              (r.type == RecordType::event && !r.reliable)) {
            continue;
          }
          if (r.reliable_id < c.log.size()) continue;  // a resend
          ASSERT_EQ(r.reliable_id, c.log.size()) << "reliable ids are dense and in order";
          c.log.push_back(r);
          c.log_payloads.emplace_back(r.payload.begin(), r.payload.end());
        }
        c.down->send(t, packet);
      }
      bool received = false;
      checker.viewer = *world.viewer(c.id);
      checker.client = static_cast<std::uint32_t>(&c - clients.data());
      c.down->deliver(t, [&](std::span<const std::uint8_t> bytes) {
        const Status s = c.mirror->receive(bytes, &checker);
        ASSERT_TRUE(s.ok()) << s.message();
        for (const Anomaly& a : c.mirror->anomalies()) {
          ADD_FAILURE() << anomaly_kind_name(a.kind) << " entity " << a.entity.index << ":"
                        << a.entity.generation << " packet " << a.sequence;
        }
        anomalies += c.mirror->anomalies().size();
        received = true;
      });
      if (received && run.delivery == Delivery::unreliable) {
        std::array<std::uint8_t, kAckBytes> ack{};
        encode_ack(c.mirror->ack(), ack);
        c.up->send(t, ack);
      }
      c.up->deliver(t, [&](std::span<const std::uint8_t> bytes) {
        const Status s = replicator.receive_ack(c.id, bytes);
        ASSERT_TRUE(s.ok()) << s.message();
      });
      // The mirror holds exactly the server's log applied up to what it has applied.
      const std::uint32_t applied = c.mirror->ack().reliable_applied;
      ASSERT_LE(applied, c.log.size());
      for (; c.shadow_applied < applied; ++c.shadow_applied) {
        const WireRecord& r = c.log[c.shadow_applied];
        if (r.type == RecordType::event || r.type == RecordType::message) continue;
        if (r.type == RecordType::spawn) {
          ASSERT_TRUE(c.shadow.insert(key(r.entity)).second);
        } else if (r.type == RecordType::refresh) {
          ASSERT_EQ(c.shadow.count(key(r.entity)), 1u) << "a refresh of an entity the client does not hold";
        } else {
          ASSERT_EQ(c.shadow.erase(key(r.entity)), 1u);
        }
      }
      std::set<std::uint64_t> held;
      for (const EntityId e : c.mirror->held()) held.insert(key(e));
      ASSERT_EQ(held, c.shadow) << "tick " << t;
      // Nothing leaks: what the mirror holds is in the World's set now, or its despawn is on the
      // way.
      const std::span<const EntityId> set = *world.interest_set(c.id);
      for (const std::uint64_t h : held) {
        const bool member = std::any_of(set.begin(), set.end(), [&](EntityId e) { return key(e) == h; });
        if (member) continue;
        const bool leaving = std::any_of(c.log.begin() + applied, c.log.end(), [&](const WireRecord& r) {
          return r.type == RecordType::despawn && key(r.entity) == h;
        });
        ASSERT_TRUE(leaving) << "client " << c.id.index << " holds " << (h >> 32)
                             << " with no despawn on the way";
        ++leaks_checked;
      }
    }
  };

  std::uint64_t t = 0;
  for (; t < static_cast<std::uint64_t>(run.bad_ticks); ++t) {
    step(t, true);
    if (::testing::Test::HasFatalFailure()) return;
  }
  // The network settles: no loss, no duplicates, no reordering, the same delay. The world
  // stands still; the server drains what waits and resends what was lost.
  for (Client& c : clients) {
    c.down->set_def({.latency_ticks = run.down.latency_ticks});
    c.up->set_def({.latency_ticks = run.up.latency_ticks});
  }
  bool settled = false;
  for (int extra = 0; extra < 400 && !settled; ++extra, ++t) {
    step(t, false);
    if (::testing::Test::HasFatalFailure()) return;
    settled = true;
    for (const Client& c : clients) {
      const ClientSendStats s = *replicator.client_stats(c.id);
      // Updates keep flowing; what must have come to rest is the reliable stream.
      // The client's own count of what is on its way comes to 0 with the server's.
      settled = settled && s.pending == 0 && c.mirror->ack().reliable_applied == c.log.size() &&
                (run.delivery == Delivery::reliable || s.reliable_acked == s.reliable_next) &&
                c.mirror->interest().pending == 0;
    }
  }
  ASSERT_TRUE(settled) << "the network settled but the mirrors did not catch up";
  // Until every member was sent a state since the world stood still, and that state arrived.
  const std::uint64_t still_since = t;
  for (int extra = 0; extra < 400; ++extra, ++t) {
    bool fresh = true;
    for (const Client& c : clients) {
      const ClientSendStats st = *replicator.client_stats(c.id);
      fresh = fresh && st.longest_wait + run.down.latency_ticks + 2 < t - still_since &&
              c.mirror->ack().reliable_applied == c.log.size();
    }
    if (fresh) break;
    step(t, false);
    if (::testing::Test::HasFatalFailure()) return;
  }
  std::uint64_t resolved = 0;
  for (std::size_t k = 0; k < clients.size(); ++k) {
    const Client& c = clients[k];
    std::vector<EntityId> expected(world.interest_set(c.id)->begin(), world.interest_set(c.id)->end());
    EXPECT_EQ(c.mirror->held(), expected) << "client " << c.id.index;
    EXPECT_TRUE(c.mirror->interest().culling);
    EXPECT_GT(c.mirror->interest().radius, 0.0f);
    // Every reference resolves: to its target where the client holds it (or it is the client's
    // viewer), else to null.
    const EntityId viewer = *world.viewer(c.id);
    for (const EntityId e : c.mirror->held()) {
      const auto history = *c.mirror->history(e);
      const Snapshot& latest = history.back();
      const std::optional<Read> r = read_state(latest.payload, latest.part);
      ASSERT_TRUE(r.has_value());
      // The target from the latest state; the leader from the latest spawn or refresh.
      const auto leader = checker.leaders[static_cast<std::uint32_t>(k)].find(key(e));
      ASSERT_NE(leader, checker.leaders[static_cast<std::uint32_t>(k)].end());
      const std::array<std::pair<EntityId, EntityId>, 2> references{
          {{r->target, game.target[e.index]}, {leader->second, game.leader[e.index]}}};
      for (const auto& [read, truth] : references) {
        const bool named = !truth.is_null() && (truth == viewer || c.mirror->holds(truth));
        const EntityId got = read == viewer ? viewer : c.mirror->resolve(read);
        EXPECT_EQ(got, named ? truth : EntityId{})
            << "client " << k << ": " << e.index << " refers to " << got.index << ":" << got.generation
            << ", not " << truth.index << ":" << truth.generation;
        resolved += named ? 1 : 0;
      }
    }
  }
  EXPECT_GT(resolved, 30u);
  EXPECT_GT(checker.references, 2000u);
  EXPECT_EQ(anomalies, 0u);
  // Every reliable event a client was sent was heard, once.
  std::uint64_t reliable_events = 0;
  for (const Client& c : clients) {
    reliable_events += static_cast<std::uint64_t>(std::count_if(
        c.log.begin(), c.log.end(), [](const WireRecord& r) { return r.type == RecordType::event; }));
  }
  EXPECT_GT(reliable_events, 100u);
  // Every message was read once, in the order sent.
  for (std::size_t c = 0; c < clients.size(); ++c) {
    std::vector<std::uint32_t> sent(clients[c].messages_sent);
    for (std::uint32_t i = 0; i < sent.size(); ++i) sent[i] = i;
    EXPECT_EQ(checker.messages[static_cast<std::uint32_t>(c)], sent) << "client " << c;
  }
  EXPECT_EQ(checker.reliable_events, reliable_events);
  EXPECT_GT(checker.events, checker.reliable_events);
  EXPECT_GT(checker.enters, 500u);
  EXPECT_GT(checker.updates, 5000u);
  EXPECT_GT(checker.exits, 200u);
  std::uint64_t dropped = 0;
  std::uint64_t stale = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t deltas = 0;
  for (const Client& c : clients) {
    deltas += c.mirror->stats().deltas;
    dropped += c.down->dropped();
    stale += c.mirror->stats().stale_updates;
    duplicates += c.mirror->stats().duplicates + c.mirror->stats().reliable_duplicates;
  }
  // Deltas rebuilt by the mirrors: each checked above as the state it rebuilt, with no baseline
  // ever missing.
  if (run.deltas) {
    EXPECT_GT(deltas, checker.updates / 4);
  } else {
    EXPECT_EQ(deltas, 0u);
  }
  if (run.delivery == Delivery::unreliable && run.down.loss > 0.0) {
    EXPECT_GT(dropped, 100u);
    EXPECT_GT(stale + duplicates, 0u) << "the network must have made the mirror drop something";
  }
  std::printf(
      "enters %llu, updates %llu, exits %llu, datagrams dropped %llu, stale updates dropped %llu, "
      "duplicates %llu, leaving-but-held checks %llu, deltas %llu, references read %llu, refreshes %llu, "
      "references resolved at the end %llu\n",
      static_cast<unsigned long long>(checker.enters), static_cast<unsigned long long>(checker.updates),
      static_cast<unsigned long long>(checker.exits), static_cast<unsigned long long>(dropped),
      static_cast<unsigned long long>(stale), static_cast<unsigned long long>(duplicates),
      static_cast<unsigned long long>(leaks_checked), static_cast<unsigned long long>(deltas),
      static_cast<unsigned long long>(checker.references), static_cast<unsigned long long>(checker.refreshes),
      static_cast<unsigned long long>(resolved));
}

TEST(BadNetworkTest, UnreliableMirrorsConvergeAndNeverLeak) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE(seed);
    NetworkRun run;
    run.seed = seed;
    run.down = {.loss = 0.2, .duplicate = 0.1, .latency_ticks = 2, .jitter_ticks = 4};
    run.up = {.loss = 0.2, .duplicate = 0.05, .latency_ticks = 2, .jitter_ticks = 3};
    run_bad_network(run);
    if (HasFatalFailure()) return;
  }
}

TEST(BadNetworkTest, UnreliableMirrorsSurviveHeavyLoss) {
  NetworkRun run;
  run.seed = 7;
  run.down = {.loss = 0.5, .duplicate = 0.2, .latency_ticks = 1, .jitter_ticks = 8};
  run.up = {.loss = 0.5, .duplicate = 0.2, .latency_ticks = 1, .jitter_ticks = 8};
  run_bad_network(run);
}

// Delta updates: the server names only states the client confirmed keeping, so a mirror never
// lacks the one a delta needs, whatever the network loses, duplicates or reorders.
TEST(BadNetworkTest, UnreliableDeltaUpdatesNeverMissTheirBaseline) {
  NetworkRun run;
  run.seed = 5;
  run.deltas = true;
  run.down = {.loss = 0.2, .duplicate = 0.1, .latency_ticks = 2, .jitter_ticks = 4};
  run.up = {.loss = 0.2, .duplicate = 0.05, .latency_ticks = 2, .jitter_ticks = 3};
  run_bad_network(run);
}

TEST(BadNetworkTest, ReliableDeltaUpdatesConverge) {
  NetworkRun run;
  run.delivery = Delivery::reliable;
  run.seed = 6;
  run.deltas = true;
  run.down = {.latency_ticks = 3};
  run.up = {.latency_ticks = 3};
  run_bad_network(run);
}

TEST(BadNetworkTest, ReliableStreamMirrorsConverge) {
  NetworkRun run;
  run.delivery = Delivery::reliable;
  run.seed = 4;
  run.down = {.latency_ticks = 3};  // ordered and lossless, only late
  run.up = {.latency_ticks = 3};
  run_bad_network(run);
}

}  // namespace
}  // namespace sightline
