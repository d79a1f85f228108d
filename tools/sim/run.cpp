#include "run.h"

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

}  // namespace

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

  WorldDef def = default_world_def();
  def.enter_radius = config.enter_radius;
  def.leave_radius = config.leave_radius;
  if (config.tiers) def.tiers = default_distance_tiers();
  def.entity_capacity = entities;
  def.client_capacity = config.clients;
  Result<World> created = World::create(def);
  if (!created.ok()) return created.status();
  World& world = created.value();

  std::vector<EntityId> ids;
  ids.reserve(entities);
  for (std::uint64_t tick = 0; tick < ticks; ++tick) {
    positions(tick, xs, zs);
    if (tick == 0) {
      for (std::uint32_t i = 0; i < entities; ++i) {
        Result<EntityId> entity = world.create_entity(EntityDef{xs[i], zs[i], false});
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
      }
    } else {
      const Status moved = world.set_positions(ids, xs, zs);
      if (!moved.ok()) return moved;
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
