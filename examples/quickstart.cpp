// Three entities, one client: watch an entity walk into view and out again.
#include <cstdio>

#include "sightline/sightline.h"

int main() {
  sightline::WorldDef def = sightline::default_world_def();
  def.enter_radius = 10.0f;  // spawn within 10 m of the viewer
  def.leave_radius = 12.5f;  // despawn beyond 12.5 m: no flicker at the edge
  auto world = sightline::World::create(def);
  if (!world) {
    std::fprintf(stderr, "%s\n", world.status().message().c_str());
    return 1;
  }

  auto player = world->create_entity({.x = 0.0f, .z = 0.0f});
  auto walker = world->create_entity({.x = 30.0f, .z = 0.0f});
  auto flag = world->create_entity({.x = 500.0f, .z = 500.0f, .always_relevant = true});
  auto client = world->create_client(*player);
  if (!player || !walker || !flag || !client) return 1;

  for (int tick = 0; tick < 8; ++tick) {
    // Inputs first: the walker crosses the player's view, 7.5 m per tick.
    if (!world->set_position(*walker, 30.0f - 7.5f * static_cast<float>(tick), 0.0f)) return 1;
    world->tick();
    const auto stream = world->stream(*client);
    for (const auto& despawn : stream->despawns) {
      std::printf("tick %d: despawn entity %u (%s)\n", tick, despawn.entity.index,
                  sightline::despawn_reason_name(despawn.reason));
    }
    for (const auto& spawn : stream->spawns) {
      std::printf("tick %d: spawn entity %u (full state)\n", tick, spawn.entity.index);
    }
    std::printf("tick %d: %zu updates\n", tick, stream->updates.size());
  }
  return 0;
}
