// Uses the installed headers and library: one client sees one neighbour.
#include <sightline/sightline.h>

int main() {
  auto world = sightline::World::create(sightline::default_world_def());
  if (!world) return 1;
  auto viewer = world->create_entity({.x = 0.0f, .z = 0.0f});
  auto other = world->create_entity({.x = 1.0f, .z = 0.0f});
  auto client = world->create_client(*viewer);
  if (!viewer || !other || !client) return 2;
  world->tick();
  auto stream = world->stream(*client);
  return stream && stream->spawns.size() == 1 && stream->spawns[0].entity == *other ? 0 : 3;
}
