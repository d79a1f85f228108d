#include "run.h"

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "sightline/sightline.h"

namespace sightline::sim {

namespace {

Totals empty_totals(const RunConfig& config, std::uint32_t entities, std::uint64_t ticks) {
  Totals totals;
  totals.ticks = ticks;
  totals.entities = entities;
  totals.clients = config.clients;
  totals.send_all = entities == 0 ? 0 : ticks * config.clients * (entities - 1ull);
  return totals;
}

// The relevance scenario's extras; the boss, when there is one, is the first (index == entities).
Status add_extras(World& world, const RunConfig& config, const std::vector<EntityId>& ids,
                  const std::vector<ClientId>& clients, std::span<const float> xs,
                  std::span<const float> zs) {
  float min_x = 0.0f;
  float max_x = 0.0f;
  float min_z = 0.0f;
  float max_z = 0.0f;
  if (!xs.empty()) {
    min_x = *std::min_element(xs.begin(), xs.end());
    max_x = *std::max_element(xs.begin(), xs.end());
    min_z = *std::min_element(zs.begin(), zs.end());
    max_z = *std::max_element(zs.begin(), zs.end());
  }
  if (config.boss_from_tick != 0) {
    Result<EntityId> boss = world.create_entity({.x = (min_x + max_x) / 2, .z = (min_z + max_z) / 2});
    if (!boss.ok()) return boss.status();
  }
  for (std::uint32_t team = 0; team < config.teams; ++team) {
    for (std::uint32_t m = 0; m < config.team_markers; ++m) {
      const float f = (static_cast<float>(m) + 0.5f) / static_cast<float>(config.team_markers);
      Result<EntityId> marker =
          world.create_entity({.x = min_x + f * (max_x - min_x), .z = team % 2 == 0 ? min_z : max_z});
      if (!marker.ok()) return marker.status();
      if (Status s = world.set_user_interest_key(marker.value(), team + 1); !s) return s;
    }
  }
  if (config.walls) {
    std::vector<WallSegment> walls;
    const float step = 2.0f * config.enter_radius;
    for (float x = min_x; x <= max_x; x += step) {
      for (float z = min_z; z <= max_z; z += step) {
        const bool across = static_cast<int>((x - min_x) / step + (z - min_z) / step) % 2 == 0;
        walls.push_back(across ? WallSegment{x, z, x + config.enter_radius, z}
                               : WallSegment{x, z, x, z + config.enter_radius});
      }
    }
    if (Status s = world.set_walls(world.default_space(), walls); !s) return s;
  }
  for (std::size_t c = 0; c < clients.size(); ++c) {
    if (config.teams != 0) {
      const std::uint64_t team_key = c % config.teams + 1;
      if (Status s = world.add_user_subscription(clients[c], {.key = team_key, .bypass_distance = true}); !s)
        return s;
    }
    if (config.carried_every != 0 && c % config.carried_every == 0) {
      Result<EntityId> item = world.create_entity({.x = xs[c], .z = zs[c]});
      if (!item.ok()) return item.status();
      if (Status s = world.attach(item.value(), ids[c]); !s) return s;
    }
    if (config.drones) {
      const float far = 4.0f * (config.leave_radius + (max_x - min_x) + (max_z - min_z));
      Result<EntityId> drone = world.create_entity({.x = max_x + far, .z = max_z + far});
      if (!drone.ok()) return drone.status();
      if (Status s = world.set_owner(drone.value(), clients[c]); !s) return s;
    }
  }
  return {};
}

}  // namespace

WorldDef sim_world_def(float enter_radius, float leave_radius, bool tiers, std::uint32_t entities,
                       std::uint32_t clients) {
  WorldDef def = default_world_def();
  def.enter_radius = enter_radius;
  def.leave_radius = leave_radius;
  if (tiers) def.tiers = default_distance_tiers();
  def.entity_capacity = entities;
  def.client_capacity = clients;
  return def;
}

Result<Totals> run(const RunConfig& config, std::uint32_t entities, std::uint64_t ticks,
                   const PositionSource& positions, const Progress& progress) {
  if (config.clients > entities) {
    return Status(ErrorCode::invalid_argument, "clients is " + std::to_string(config.clients) +
                                                   ": must be <= entities (" + std::to_string(entities) +
                                                   ")");
  }
  std::vector<float> xs(entities);
  std::vector<float> zs(entities);
  Totals totals = empty_totals(config, entities, ticks);

  if (config.no_interest) {
    // The baseline does no interest work at all; positions are still read so a trace is consumed.
    for (std::uint64_t tick = 0; tick < ticks; ++tick) {
      positions(tick, xs, zs);
      if (progress) progress(tick + 1);
    }
    totals.updates = totals.send_all;
    totals.messages = totals.send_all;
    return totals;
  }

  WorldDef def =
      sim_world_def(config.enter_radius, config.leave_radius, config.tiers, entities, config.clients);
  def.recording = config.recording;
  Result<World> created = World::create(def);
  if (!created.ok()) return created.status();
  World& world = created.value();
  SpaceId space = world.default_space();
  if (config.drill || config.culling_off) {
    Result<SpaceId> room = world.create_space(SpaceDef{});  // culling off: never asked
    if (!room.ok()) return room.status();
    space = room.value();
    if (config.drill) {
      const Status drill = world.set_culling_drill(space, config.enter_radius, config.leave_radius);
      if (!drill.ok()) return drill;
    }
  }
  std::vector<ClientId> clients;

  std::vector<EntityId> ids;
  ids.reserve(entities);
  for (std::uint64_t tick = 0; tick < ticks; ++tick) {
    positions(tick, xs, zs);
    if (tick == 0) {
      for (std::uint32_t i = 0; i < entities; ++i) {
        Result<EntityId> entity = world.create_entity({.x = xs[i], .z = zs[i], .space = space});
        if (!entity.ok()) return entity.status();
        if (entity.value().index != i) {
          return Status(ErrorCode::invalid_argument,
                        "entity " + std::to_string(i) + " got slot " + std::to_string(entity.value().index));
        }
        ids.push_back(entity.value());
      }
      for (std::uint32_t i = 0; i < config.clients; ++i) {
        Result<ClientId> client = world.create_client(ids[i]);
        if (!client.ok()) return client.status();
        clients.push_back(client.value());
      }
      const Status extras = add_extras(world, config, ids, clients, xs, zs);
      if (!extras.ok()) return extras;
    } else {
      const Status moved = world.set_positions(ids, xs, zs);
      if (!moved.ok()) return moved;
    }
    if (config.boss_from_tick != 0 && tick == config.boss_from_tick) {
      const Status boss = world.set_always_relevant(EntityId{entities, 1}, true);
      if (!boss.ok()) return boss;
    }
    const TickStats stats = world.tick();
    totals.spawns += stats.spawns;
    totals.updates += stats.updates;
    totals.despawns += stats.despawns;
    totals.distance_tests += stats.distance_tests;
    totals.cell_candidates += stats.cell_candidates;
    if (progress) progress(tick + 1);
  }
  totals.messages = totals.updates + totals.spawns + totals.despawns;
  return totals;
}

}  // namespace sightline::sim
