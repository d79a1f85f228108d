// Writes the packet fuzzer's seed corpus: real packets from a Replicator, in the fuzzer's input
// format. Run from the repository root: build-fuzz/bin/sightline-packet-corpus fuzz/corpus/packet
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "packet_state.h"
#include "sightline/replicator.h"
#include "sightline/world.h"

namespace {

using namespace sightline;

// Updates carry x and z, and with delta updates three values that never change, so that most go
// as deltas.
bool g_deltas = false;

bool write_state(Stream& s, EntityId e, StatePart part, void* context) {
  const World& world = *static_cast<const World*>(context);
  const Position p = *world.position(e);
  std::uint32_t count = part == StatePart::full ? 2 + e.index % 3 : g_deltas ? 5 : 2;
  std::array<float, fuzz::kMaxValues> values{p.x, p.z, 1.0f, -2.5f, 100.0f};
  return fuzz::serialize_values(s, count, values);
}

// An event's payload in the same format: where it happened and its user_data.
bool write_event(Stream& s, const EventDef& event, void*) {
  std::array<float, fuzz::kMaxValues> values{event.x, event.z, static_cast<float>(event.user_data)};
  std::uint32_t count = 3;
  return fuzz::serialize_values(s, count, values);
}

struct Input {
  std::vector<std::uint8_t> bytes;
  explicit Input(std::uint8_t first) { bytes.push_back(first); }
  void chunk(std::span<const std::uint8_t> packet) {
    bytes.push_back(static_cast<std::uint8_t>(packet.size()));
    bytes.push_back(static_cast<std::uint8_t>(packet.size() >> 8));
    bytes.insert(bytes.end(), packet.begin(), packet.end());
  }
  [[nodiscard]] bool save(const std::string& path) const {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (out) return true;
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return false;
  }
};

int make(const std::string& dir, Delivery delivery, bool deltas) {
  g_deltas = deltas;
  WorldDef def = default_world_def();
  def.enter_radius = 10.0f;
  def.leave_radius = 12.0f;
  World world = World::create(def).value();
  std::vector<EntityId> ids;
  for (int i = 0; i < 60; ++i) {
    ids.push_back(
        *world.create_entity({static_cast<float>(i % 10) * 3.0f, static_cast<float>(i / 10) * 3.0f}));
  }
  const ClientId client = *world.create_client(ids[0]);
  // Events: a reliable one heard far that names its subject where the client holds it, and an
  // unreliable one that names it as it is.
  const EventClassId shot = *world.create_event_class(
      {.radius = 20.0f, .when_absent = AbsentSubject::null_subject, .reliable = true});
  const EventClassId step =
      *world.create_event_class({.radius = 6.0f, .when_absent = AbsentSubject::send_as_is});
  ReplicatorDef rdef;
  rdef.serialize = write_state;
  rdef.serialize_context = &world;
  rdef.serialize_event = write_event;
  rdef.delivery = delivery;
  rdef.entry_budget_bytes = 300;
  rdef.budget_bytes = 200;
  rdef.packet_bytes = 200;
  rdef.delta_updates = deltas;
  Replicator replicator = Replicator::create(world, rdef).value();
  const bool unreliable = delivery == Delivery::unreliable;
  const std::string name = std::string(unreliable ? "unreliable" : "reliable") + (deltas ? "_deltas" : "");
  const auto first = static_cast<std::uint8_t>((unreliable ? 1 : 0) | (3 << 1));
  Input join(first), steady(first), lossy(first);
  for (int t = 0; t < 40; ++t) {
    for (std::size_t i = 1; i < ids.size(); ++i) {
      const Position p = *world.position(ids[i]);
      if (!world.set_position(ids[i], p.x + 0.7f * static_cast<float>((t + i) % 3) - 0.7f, p.z + 0.4f).ok())
        return 1;
    }
    if (t == 30) {
      if (!world.destroy_entity(ids[7]).ok()) return 1;
      ids[7] = *world.create_entity({5.0f, 5.0f});  // the slot comes back with a new generation
    }
    if (t % 3 == 1) {
      const EntityId who = ids[static_cast<std::size_t>(t) % ids.size()];
      const Position p = *world.position(who);
      if (!world.emit_event({.event_class = shot, .x = p.x, .z = p.z, .subject = who, .user_data = 7}).ok())
        return 1;
      if (!world.emit_event({.event_class = step, .x = p.x, .z = p.z, .subject = who, .user_data = 0}).ok())
        return 1;
    }
    if (t % 10 == 2) {
      const std::array<std::uint8_t, 3> hello{'h', 'i', static_cast<std::uint8_t>(t)};
      if (!replicator.send_message(client, hello).ok()) return 1;
    }
    world.tick();
    if (!replicator.send().ok()) return 1;
    int k = 0;
    for (const std::span<const std::uint8_t> packet : *replicator.packets(client)) {
      if (t < 4) join.chunk(packet);
      if (t >= 28 && t < 34) steady.chunk(packet);
      // Lost, duplicated and late packets, for the unreliable mirror.
      if (t >= 2 && t < 12 && (k++ + t) % 3 != 0) {
        lossy.chunk(packet);
        if (t % 4 == 0) lossy.chunk(packet);
      }
    }
    if (unreliable && t % 5 == 4) {
      std::array<std::uint8_t, kAckBytes> ack{};
      const ClientSendStats s = *replicator.client_stats(client);
      encode_ack({static_cast<std::uint32_t>(s.packets - 1), s.reliable_next, 0xffffffffu}, ack);
      if (!replicator.receive_ack(client, ack).ok()) return 1;
      if (t == 4) steady.chunk(ack);
    }
  }
  if (!join.save(dir + "/" + name + "_join.bin") || !steady.save(dir + "/" + name + "_steady.bin")) return 1;
  if (unreliable && !lossy.save(dir + "/" + name + "_lossy.bin")) return 1;
  return 0;
}

// Hand-made with PacketWriter: every spawn and despawn reason, created and not, events, a
// message, a slot reused at a new generation, large ids, and interest statuses with and without
// culling, which a small World's Replicator does not produce.
int make_reasons(const std::string& dir) {
  std::array<std::uint8_t, 64> state{};
  auto payload = [&](std::uint32_t count) {
    Stream s = Stream::writer(state);
    std::array<float, fuzz::kMaxValues> values{12.5f, -3.25f, 4095.0f, -4096.0f};
    if (!fuzz::serialize_values(s, count, values)) std::abort();
    return std::span<const std::uint8_t>(state).first(s.bytes());
  };
  for (const Delivery delivery : {Delivery::reliable, Delivery::unreliable}) {
    const bool unreliable = delivery == Delivery::unreliable;
    Input input(static_cast<std::uint8_t>((unreliable ? 1 : 0) | (1 << 1)));
    std::array<std::uint8_t, 1200> buffer{};
    std::uint32_t id = 0;
    std::uint32_t sequence = 0;
    std::vector<std::vector<std::uint8_t>> sent;
    for (std::uint32_t tick = 100; tick < 106; ++tick) {
      const std::uint32_t n = tick - 100;
      const InterestStatus interest = n % 2 == 0 ? InterestStatus{true, 8.0f + static_cast<float>(n), 3 * n}
                                                 : InterestStatus{false, 0.0f, n};
      PacketWriter w(buffer, {delivery, sequence++, tick, id, interest});
      for (std::uint32_t k = 0; k < 9; ++k) {
        const EntityId e{k == 8 ? 0xfffffff0u : k * 300, tick - 99};
        if (!w.add_spawn(id++, e, static_cast<SpawnReason>(k), k % 3 == 0, payload(4), k % 2)) std::abort();
      }
      for (std::uint32_t k = 0; k < 9; ++k) {
        if (!w.add_update({k == 8 ? 0xfffffff0u : k * 300, tick - 99}, payload(2))) std::abort();
      }
      for (std::uint32_t k = 0; k < 9; ++k) {
        const EntityId e{k == 8 ? 0xfffffff0u : k * 300, tick - 99};
        if (!w.add_despawn(id++, e, static_cast<DespawnReason>(k % 6))) std::abort();
      }
      // An unreliable event with no subject, and a reliable one about a large id.
      if (!w.add_event(false, 0, 0, n, 1.5f, -2.25f, {}, payload(1))) std::abort();
      if (!w.add_event(true, id++, n % 2, 300 + n, -1.0e15f, 4096.0f, {0xfffffff0u, tick - 99}, payload(2))) {
        std::abort();
      }
      const std::string note = "note " + std::to_string(n);
      if (!w.add_message(id++, {reinterpret_cast<const std::uint8_t*>(note.data()), note.size()}))
        std::abort();
      const std::span<const std::uint8_t> packet = w.finish();
      sent.emplace_back(packet.begin(), packet.end());
    }
    if (unreliable) {
      // Out of order, one duplicated, one lost.
      for (const std::size_t i : {1u, 0u, 3u, 3u, 5u, 2u}) input.chunk(sent[i]);
    } else {
      for (const auto& packet : sent) input.chunk(packet);
    }
    if (!input.save(dir + "/" + (unreliable ? "unreliable" : "reliable") + "_reasons.bin")) return 1;
  }
  return 0;
}

// Hand-made: refreshes (an entity's full state again, sent when an entity it refers to arrived)
// of entities spawned in the same packet or earlier, one resent with an older state.
int make_refreshes(const std::string& dir) {
  std::array<std::uint8_t, 64> state{};
  auto payload = [&](std::uint32_t count, float x) {
    Stream s = Stream::writer(state);
    std::array<float, fuzz::kMaxValues> values{x, -3.25f, 4095.0f};
    if (!fuzz::serialize_values(s, count, values)) std::abort();
    return std::span<const std::uint8_t>(state).first(s.bytes());
  };
  for (const Delivery delivery : {Delivery::reliable, Delivery::unreliable}) {
    const bool unreliable = delivery == Delivery::unreliable;
    Input input(static_cast<std::uint8_t>((unreliable ? 1 : 0) | (2 << 1)));
    std::array<std::uint8_t, 600> buffer{};
    std::uint32_t id = 0;
    for (std::uint32_t n = 0; n < 4; ++n) {
      const std::uint32_t tick = 50 + n;
      PacketWriter w(buffer, {delivery, n, tick, id, {true, 12.0f, 2 - std::min(n, 2u)}});
      const EntityId spawned{10 + n, 1};
      if (!w.add_spawn(id++, spawned, SpawnReason::near, n == 2, payload(3, 1.0f))) std::abort();
      for (std::uint32_t k = 10; k <= 10 + n; ++k) {
        if (!w.add_refresh(id++, {k, 1}, payload(3, static_cast<float>(n)), k == 10 ? n % 2 : 0))
          std::abort();
      }
      if (!w.add_update(spawned, payload(2, 2.0f))) std::abort();
      input.chunk(w.finish());
    }
    if (!input.save(dir + "/" + (unreliable ? "unreliable" : "reliable") + "_refreshes.bin")) return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  return make(argv[1], Delivery::reliable, false) | make(argv[1], Delivery::unreliable, false) |
         make(argv[1], Delivery::reliable, true) | make(argv[1], Delivery::unreliable, true) |
         make_reasons(argv[1]) | make_refreshes(argv[1]);
}
