/* Uses the installed C API (libsightline_c): one client sees one neighbour. */
#include <sightline/sightline_c.h>

int main(void) {
  sl_world_def def;
  sl_world_def_default(&def);
  sl_world* world = NULL;
  if (sl_world_create(&def, &world) != SL_OK) return 1;
  sl_entity_def at;
  sl_entity_def_default(&at);
  sl_entity viewer = SL_NULL_HANDLE;
  sl_entity other = SL_NULL_HANDLE;
  sl_client client = SL_NULL_HANDLE;
  if (sl_world_create_entity(world, &at, &viewer) != SL_OK) return 2;
  at.x = 1.0f;
  if (sl_world_create_entity(world, &at, &other) != SL_OK) return 2;
  if (sl_world_create_client(world, viewer, &client) != SL_OK) return 2;
  if (sl_world_tick(world, NULL) != SL_OK) return 3;
  sl_spawn spawns[4];
  size_t count = 0;
  if (sl_world_spawns(world, client, spawns, 4, &count) != SL_OK) return 3;
  const int ok = count == 1 && spawns[0].entity == other;
  sl_world_destroy(world);
  return ok ? 0 : 4;
}
