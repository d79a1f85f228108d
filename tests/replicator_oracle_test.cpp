// The Replicator's priority sends against a plain model of the same rule (docs/bandwidth.md):
// maps instead of sorted tables, a full sort instead of partial selection, packets counted by
// hand. On seeded random worlds with churn, attachments, bounds, teleports, priorities, velocities
// and interactions, every packet of every client must be identical, byte for byte.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <vector>

#include "rng.h"
#include "sightline/protocol.h"
#include "sightline/replicator.h"
#include "sightline/world.h"

namespace sightline {
namespace {

// Payload sizes vary by entity, so the filler's skipping matters.
bool serialize(Stream& s, EntityId e, StatePart part, void* context) {
  const World& world = *static_cast<const World*>(context);
  Position p = *world.position(e);
  if (!s.serialize_quantized(p.x, -500.0f, 500.0f, 1.0f / 32.0f)) return false;
  if (!s.serialize_quantized(p.z, -500.0f, 500.0f, 1.0f / 32.0f)) return false;
  const std::uint32_t extra = part == StatePart::full ? 6 + e.index % 23 : e.index % 7;
  for (std::uint32_t i = 0; i < extra; ++i) {
    std::uint32_t byte = (e.index * 31 + i) & 0xff;
    if (!s.serialize_bits(byte, 8)) return false;
  }
  return true;
}

struct Rec {
  RecordType type;
  EntityId entity;
  std::uint32_t reliable_id = 0;
  std::uint8_t reason = 0;
  std::vector<std::uint8_t> payload;
  friend bool operator==(const Rec&, const Rec&) = default;
};

struct Model {
  struct Member {
    EntityId id;
    float acc = 0.0f;
    bool pending = true;
    SpawnReason reason = SpawnReason::near;
    std::uint64_t last_sent = 0;
    std::uint64_t interacted_until = 0;
  };
  struct Client {
    std::map<std::uint32_t, Member> table;
    std::uint32_t next_reliable = 0;
    std::uint32_t sequence = 0;
  };

  const World* world = nullptr;
  ReplicatorDef def;
  std::map<std::uint32_t, Client> clients;  // by client index
  std::map<std::uint32_t, float> priority;  // by entity index, for the live generation only
  std::uint64_t sends = 0;

  std::vector<std::uint8_t> bytes(EntityId e, StatePart part) const {
    std::vector<std::uint8_t> out(2048);
    Stream s = Stream::writer(out);
    EXPECT_TRUE(serialize(s, e, part, const_cast<World*>(world)));
    out.resize(s.bytes());
    return out;
  }
  EntityId root(EntityId e) const { return *world->root(e); }
  std::uint32_t depth(EntityId e) const {
    std::uint32_t d = 0;
    for (EntityId p = *world->parent(e); !p.is_null(); p = *world->parent(p)) ++d;
    return d;
  }

  // Per client, the packets of one send, as records.
  std::map<std::uint32_t, std::vector<std::vector<Rec>>> send(
      const std::set<std::uint32_t>& teleported_roots) {
    std::map<std::uint32_t, std::vector<std::vector<Rec>>> out;
    const std::uint64_t now = sends;
    for (const ClientId id : world->clients()) {
      Client& c = clients[id.index];
      std::vector<std::vector<Rec>>& packets = out[id.index];
      const std::span<const EntityId> set = *world->interest_set(id);
      const ClientStream stream = *world->stream(id);
      // Origins: the viewer and the extra origins in its space.
      const EntityId viewer = *world->viewer(id);
      std::vector<Position> origins{*world->position(viewer)};
      std::vector<EntityId> origin_roots{root(viewer)};
      for (const EntityId o : *world->origins(id)) {
        if (*world->space(o) != *world->space(viewer)) continue;
        origins.push_back(*world->position(o));
        origin_roots.push_back(root(o));
      }
      auto surface = [&](EntityId r) {
        const Position p = *world->position(r);
        float best = std::numeric_limits<float>::infinity();
        for (const Position& o : origins) {
          const float dx = p.x - o.x;
          const float dz = p.z - o.z;
          best = std::min(best, dx * dx + dz * dz);
        }
        return std::max(0.0f, std::sqrt(best) - *world->bound_radius(r));
      };
      const float enter = world->enter_radius();

      // Membership.
      std::vector<DespawnRecord> leaving;
      for (const DespawnRecord& d : stream.despawns) {
        const auto at = c.table.find(d.entity.index);
        if (at != c.table.end() && at->second.id == d.entity && !at->second.pending) leaving.push_back(d);
      }
      std::map<std::uint32_t, Member> next;
      for (const EntityId e : set) {
        const auto at = c.table.find(e.index);
        if (at != c.table.end() && at->second.id == e) {
          next[e.index] = at->second;
          continue;
        }
        Member m;
        m.id = e;
        for (const SpawnRecord& s : stream.spawns) {
          if (s.entity == e) m.reason = s.reason;
        }
        next[e.index] = m;
      }
      c.table = std::move(next);

      // Packets, counted by hand.
      std::size_t used = 0;  // of the open packet
      bool open = false;
      std::uint64_t budget_used = 0;
      std::uint64_t entry_used = 0;
      auto room_for = [&](std::size_t size) {
        if (open && def.packet_bytes - used >= size) return;
        packets.emplace_back();
        open = true;
        used = kStateHeaderBytes;
        budget_used += kStateHeaderBytes;
        ++c.sequence;
      };
      auto add = [&](Rec r, std::size_t size) {
        room_for(size);
        used += size;
        packets.back().push_back(std::move(r));
      };
      for (const DespawnRecord& d : leaving) {
        const std::size_t size = despawn_record_bytes(c.next_reliable, d.entity);
        add({RecordType::despawn, d.entity, c.next_reliable++, static_cast<std::uint8_t>(d.reason), {}},
            size);
        budget_used += size;
      }
      // Paced entry: a full sort of what waits.
      struct Entry {
        bool critical;
        float distance;
        std::uint32_t depth;
        std::uint32_t index;
      };
      std::vector<Entry> waiting;
      for (const auto& [index, m] : c.table) {
        if (!m.pending) continue;
        const EntityId r = root(m.id);
        const float d = surface(r);
        const bool critical = (d == 0.0f && *world->bound_radius(r) > 0.0f) ||
                              std::find(origin_roots.begin(), origin_roots.end(), r) != origin_roots.end();
        waiting.push_back({critical, d, depth(m.id), index});
      }
      std::sort(waiting.begin(), waiting.end(), [](const Entry& a, const Entry& b) {
        if (a.critical != b.critical) return a.critical;
        if (a.distance != b.distance) return a.distance < b.distance;
        if (a.depth != b.depth) return a.depth < b.depth;
        return a.index < b.index;
      });
      for (const Entry& w : waiting) {
        Member& m = c.table[w.index];
        const EntityId parent = *world->parent(m.id);
        if (!parent.is_null()) {
          const auto p = c.table.find(parent.index);
          if (p != c.table.end() && p->second.pending) continue;
        }
        std::vector<std::uint8_t> payload = bytes(m.id, StatePart::full);
        const std::size_t size = spawn_record_bytes(c.next_reliable, m.id, payload.size());
        if (!w.critical && entry_used != 0 && entry_used + size > def.entry_budget_bytes) continue;
        add({RecordType::spawn, m.id, c.next_reliable++, static_cast<std::uint8_t>(m.reason),
             std::move(payload)},
            size);
        entry_used += size;
        m.pending = false;
        m.acc = 0.0f;
        m.last_sent = now;
      }
      // Updates: a full sort by accumulator.
      struct Cand {
        float acc;
        std::uint32_t index;
      };
      std::vector<Cand> cands;
      for (auto& [index, m] : c.table) {
        if (m.pending || m.last_sent == now) continue;
        const EntityId r = root(m.id);
        const float distance = surface(r);
        const float bound = *world->bound_radius(r);
        const Velocity v = *world->velocity(m.id);
        const float speed = std::sqrt(v.x * v.x + v.z * v.z);
        const bool interacted = m.interacted_until > now;
        const auto own = priority.find(index);
        const float tenth = enter / 10.0f;
        const float base = (own == priority.end() ? 1.0f : own->second) / 1.0f / (1.0f + distance / tenth) *
                           (1.0f + bound / tenth) * (1.0f + speed / tenth) *
                           (interacted ? def.interaction_boost : 1.0f);
        m.acc = std::min(m.acc + base * def.tick_seconds, std::numeric_limits<float>::max());
        const float acc =
            teleported_roots.count(r.index) != 0 ? std::numeric_limits<float>::infinity() : m.acc;
        if (acc > 0.0f) cands.push_back({acc, index});
      }
      std::sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) {
        return a.acc != b.acc ? a.acc > b.acc : a.index < b.index;
      });
      std::uint32_t misfits = 0;
      for (const Cand& cand : cands) {
        if (budget_used + 3 > def.budget_bytes || misfits >= def.filler_misfits) break;
        Member& m = c.table[cand.index];
        std::vector<std::uint8_t> payload = bytes(m.id, StatePart::update);
        const std::size_t size = update_record_bytes(m.id, payload.size());
        const bool fits_open = open && def.packet_bytes - used >= size;
        const std::size_t cost = fits_open ? size : size + kStateHeaderBytes;
        if (budget_used + cost > def.budget_bytes || size + kStateHeaderBytes > def.packet_bytes) {
          ++misfits;
          continue;
        }
        misfits = 0;
        add({RecordType::update, m.id, 0, 0, std::move(payload)}, size);
        budget_used += size;
        m.acc = 0.0f;
        m.last_sent = now;
      }
    }
    ++sends;
    return out;
  }
};

std::vector<std::vector<Rec>> decoded(const Replicator& r, ClientId c, std::uint32_t reliable_next) {
  std::vector<std::vector<Rec>> out;
  DecodedPacket p;
  for (const std::span<const std::uint8_t> bytes : *r.packets(c)) {
    EXPECT_TRUE(decode_packet(bytes, p).ok());
    EXPECT_EQ(p.header.reliable_next, reliable_next);
    out.emplace_back();
    for (const WireRecord& w : p.records) {
      out.back().push_back({w.type, w.entity, w.reliable_id, w.reason, {w.payload.begin(), w.payload.end()}});
    }
  }
  return out;
}

// `client_count` clients: 12 hold more members than the world has entities, 3 fewer (the send
// reads the entities' motion from a table packed per send in the first case, in place in the second).
void run_oracle(std::uint64_t seed, int client_count) {
  scenarios::Rng rng(seed);
  WorldDef def = default_world_def();
  def.enter_radius = 8.0f;
  def.leave_radius = 10.0f;
  World world = std::move(World::create(def).value());
  std::vector<EntityId> ids;
  auto spot = [&] { return Position{rng.uniform(0.0f, 40.0f), rng.uniform(0.0f, 40.0f)}; };
  for (int i = 0; i < 150; ++i) {
    const Position p = spot();
    ids.push_back(*world.create_entity({.x = p.x, .z = p.z}));
  }
  // Bounded entities (the ground a viewer may stand inside), attachments, a viewer on a mount.
  for (int i = 140; i < 145; ++i) ASSERT_TRUE(world.set_bound_radius(ids[i], rng.uniform(1.0f, 6.0f)).ok());
  for (int i = 100; i < 110; i += 2) ASSERT_TRUE(world.attach(ids[i], ids[i + 1]).ok());
  ASSERT_TRUE(world.attach(ids[0], ids[120]).ok());
  std::vector<ClientId> clients;
  for (int i = 0; i < client_count; ++i) clients.push_back(*world.create_client(ids[i * 7]));
  ASSERT_TRUE(world.add_origin(clients[2], ids[130]).ok());

  ReplicatorDef rdef;
  rdef.serialize = serialize;
  rdef.serialize_context = &world;
  rdef.budget_bytes = 40 + rng.below(200);
  rdef.entry_budget_bytes = 1 + rng.below(300);
  rdef.packet_bytes = 90 + rng.below(200);  // the largest spawn (35 bytes of payload) fits from 87
  rdef.filler_misfits = 1 + rng.below(6);
  Replicator replicator = std::move(Replicator::create(world, rdef).value());
  Model model;
  model.world = &world;
  model.def = rdef;
  std::uint64_t updates = 0, spawns = 0, skipped_somewhere = 0;

  for (int t = 0; t < 120; ++t) {
    std::set<std::uint32_t> teleported;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (!world.parent(ids[i])->is_null()) continue;
      const Position p = *world.position(ids[i]);
      const float x = std::clamp(p.x + rng.uniform(-0.8f, 0.8f), 0.0f, 40.0f);
      const float z = std::clamp(p.z + rng.uniform(-0.8f, 0.8f), 0.0f, 40.0f);
      ASSERT_TRUE(world.set_position(ids[i], x, z).ok());
    }
    for (int k = 0; k < 2; ++k) {
      const EntityId e = ids[12 * 7 + rng.below(40)];
      const Position p = spot();
      ASSERT_TRUE(world.teleport(e, p.x, p.z).ok());
      teleported.insert(world.root(e)->index);
    }
    // Churn: entities die and slots come back with a new generation.
    const std::size_t victim = 85 + rng.below(15);
    ASSERT_TRUE(world.destroy_entity(ids[victim]).ok());
    model.priority.erase(ids[victim].index);
    const Position p = spot();
    ids[victim] = *world.create_entity({.x = p.x, .z = p.z});
    // Priorities, velocities and interactions.
    const EntityId favoured = ids[rng.below(80)];
    const float priority = rng.uniform(0.0f, 5.0f);
    ASSERT_TRUE(replicator.set_priority(favoured, priority).ok());
    model.priority[favoured.index] = priority;
    ASSERT_TRUE(
        world.set_velocity(ids[rng.below(80)], rng.uniform(-5.0f, 5.0f), rng.uniform(-5.0f, 5.0f)).ok());
    const ClientId who = clients[rng.below(static_cast<std::uint32_t>(client_count))];
    const EntityId what = ids[rng.below(150)];
    ASSERT_TRUE(replicator.note_interaction(who, what).ok());
    auto& table = model.clients[who.index].table;
    const auto at = table.find(what.index);
    if (at != table.end() && at->second.id == what)
      at->second.interacted_until = model.sends + rdef.interaction_sends;

    world.tick();
    const Status sent = replicator.send();
    ASSERT_TRUE(sent.ok()) << sent.message();
    const auto expected = model.send(teleported);
    for (const ClientId c : clients) {
      const auto got = decoded(replicator, c, model.clients[c.index].next_reliable);
      ASSERT_EQ(got, expected.at(c.index)) << "seed " << seed << " tick " << t << " client " << c.index;
      for (const auto& packet : got) {
        for (const Rec& r : packet) {
          updates += r.type == RecordType::update;
          spawns += r.type == RecordType::spawn;
        }
      }
    }
    skipped_somewhere += replicator.stats().updates_skipped;
  }
  // The run exercised what it is about.
  const auto per_client = static_cast<std::uint64_t>(client_count);
  EXPECT_GT(updates, 1000u * per_client / 12);
  EXPECT_GT(spawns, 200u * per_client / 12);
  EXPECT_GT(skipped_somewhere, 100u * per_client / 12) << "the budget must bind";
}

TEST(ReplicatorOracleTest, PrioritySendsEqualTheModelOnRandomWorlds) {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    run_oracle(seed, 12);
    if (HasFatalFailure()) return;
  }
}

TEST(ReplicatorOracleTest, PrioritySendsOfFewClientsEqualTheModel) {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    run_oracle(seed, 3);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace sightline
