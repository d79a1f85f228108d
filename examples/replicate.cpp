// From a World to a client's screen: one serialize function for the game's state, a Replicator
// that writes packets under a byte budget, and a ClientMirror that applies them.
#include <cstdio>
#include <vector>

#include "sightline/client_mirror.h"
#include "sightline/replicator.h"
#include "sightline/sightline.h"

namespace {

struct Npc {
  float x = 0.0f, z = 0.0f;
  std::uint32_t health = 100;
};

// The one function: writes on the server, reads on the client, measures for the packet filler.
bool serialize_npc(sightline::Stream& s, Npc& npc, sightline::StatePart part) {
  if (!s.serialize_quantized(npc.x, -1024.0f, 1024.0f, 1.0f / 64.0f)) return false;
  if (!s.serialize_quantized(npc.z, -1024.0f, 1024.0f, 1.0f / 64.0f)) return false;
  return part == sightline::StatePart::update || s.serialize_uint(npc.health, 0, 100);
}

struct Server {
  sightline::World* world = nullptr;
};

bool write_npc(sightline::Stream& s, sightline::EntityId e, sightline::StatePart part, void* context) {
  const auto p = *static_cast<Server*>(context)->world->position(e);
  Npc npc{p.x, p.z, 100 - e.index % 50};
  return serialize_npc(s, npc, part);
}

// The client's view: what it holds, as it reads it.
struct Screen : sightline::MirrorListener {
  void on_enter(sightline::EntityId e, sightline::SpawnReason, bool created,
                std::span<const std::uint8_t> state, std::uint32_t tick) override {
    Npc npc;
    sightline::Stream s = sightline::Stream::reader(state);
    if (serialize_npc(s, npc, sightline::StatePart::full)) {
      // A created entity plays its appearance; one that stood there all along just shows.
      std::printf("tick %u: %s %u at (%.2f, %.2f), health %u\n", tick, created ? "appears" : "enter", e.index,
                  npc.x, npc.z, npc.health);
    }
  }
  void on_exit(sightline::EntityId e, sightline::ExitKind kind, sightline::DespawnReason) override {
    std::printf("  exit %u (%s)\n", e.index,
                kind == sightline::ExitKind::destroy ? "destroyed" : "left view");
  }
};

}  // namespace

int main() {
  sightline::WorldDef def = sightline::default_world_def();
  def.enter_radius = 10.0f;
  def.leave_radius = 12.5f;
  auto world = sightline::World::create(def);
  if (!world) return 1;
  auto player = world->create_entity({.x = 0.0f, .z = 0.0f});
  std::vector<sightline::EntityId> npcs;
  for (int i = 0; i < 8; ++i)
    npcs.push_back(*world->create_entity({.x = 3.0f * static_cast<float>(i), .z = 1.0f}));
  world->tick();  // the world runs before the player joins: what stands there was not created for it
  auto client = world->create_client(*player);
  if (!player || !client) return 1;

  Server server{&*world};
  sightline::ReplicatorDef rdef = sightline::default_replicator_def();
  rdef.serialize = write_npc;
  rdef.serialize_context = &server;
  rdef.entry_budget_bytes = 24;  // tiny on purpose: watch entry being paced, nearest first
  auto replicator = sightline::Replicator::create(*world, rdef);
  auto mirror = sightline::ClientMirror::create(sightline::default_mirror_def());
  if (!replicator || !mirror) {
    std::fprintf(stderr, "%s%s\n", replicator.status().message().c_str(), mirror.status().message().c_str());
    return 1;
  }
  Screen screen;
  for (int tick = 0; tick < 6; ++tick) {
    if (tick == 4 && !world->destroy_entity(npcs[0])) return 1;
    if (tick == 5 && !world->create_entity({.x = 1.0f, .z = -1.0f})) return 1;
    world->tick();
    if (!replicator->send()) return 1;
    for (const auto packet : *replicator->packets(*client)) {
      // Here the bytes would cross the network.
      if (const auto status = mirror->receive(packet, &screen); !status) {
        std::fprintf(stderr, "%s\n", status.message().c_str());
        return 1;
      }
    }
    // The client's own count of what is still on its way (the server's pending(client)).
    std::printf("tick %llu: client holds %zu, %u still on their way\n",
                static_cast<unsigned long long>(world->tick_count() - 1), mirror->held_count(),
                mirror->interest().pending);
  }
  return mirror->anomalies().empty() ? 0 : 1;
}
