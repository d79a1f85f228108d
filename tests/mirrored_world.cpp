#include "mirrored_world.h"

#include <utility>

namespace sightline::testing {

MirroredWorld::MirroredWorld(const WorldDef& def)
    : world_(std::move(World::create(def).value())),
      oracle_(def.enter_radius, def.leave_radius, def.tiers) {}

void MirroredWorld::note(std::string message) {
  if (error_.empty() && !message.empty()) {
    error_ = "after " + std::to_string(oracle_.tick_count()) + " ticks: " + std::move(message);
  }
}

Result<EntityId> MirroredWorld::create_entity(const EntityDef& def) {
  Result<EntityId> id = world_.create_entity(def);
  if (!id.ok()) {
    note("create_entity refused: " + id.status().message());
    return id;
  }
  note(oracle_.create_entity(*id, def.x, def.z, def.always_relevant));
  return id;
}

Status MirroredWorld::destroy_entity(EntityId entity) {
  Status status = world_.destroy_entity(entity);
  const bool viewer = oracle_.is_viewer(entity);
  if (viewer) {
    if (status.code() != ErrorCode::entity_is_viewer) {
      note("destroy_entity of viewer " + to_string(entity) + " gave " + error_code_name(status.code()));
    }
    return status;
  }
  if (!status.ok()) {
    note("destroy_entity(" + to_string(entity) + ") refused: " + status.message());
    return status;
  }
  note(oracle_.destroy_entity(entity));
  return status;
}

Status MirroredWorld::set_position(EntityId entity, float x, float z) {
  Status status = world_.set_position(entity, x, z);
  if (!status.ok()) {
    note("set_position(" + to_string(entity) + ") refused: " + status.message());
    return status;
  }
  note(oracle_.set_position(entity, x, z));
  return status;
}

Status MirroredWorld::set_positions(std::span<const EntityId> entities, std::span<const float> xs,
                                    std::span<const float> zs) {
  Status status = world_.set_positions(entities, xs, zs);
  if (!status.ok()) {
    note("set_positions refused: " + status.message());
    return status;
  }
  for (std::size_t i = 0; i < entities.size(); ++i) note(oracle_.set_position(entities[i], xs[i], zs[i]));
  return status;
}

Status MirroredWorld::set_always_relevant(EntityId entity, bool always_relevant) {
  Status status = world_.set_always_relevant(entity, always_relevant);
  if (!status.ok()) {
    note("set_always_relevant(" + to_string(entity) + ") refused: " + status.message());
    return status;
  }
  note(oracle_.set_always_relevant(entity, always_relevant));
  return status;
}

Result<ClientId> MirroredWorld::create_client(EntityId viewer) {
  Result<ClientId> id = world_.create_client(viewer);
  if (!id.ok()) {
    note("create_client(" + to_string(viewer) + ") refused: " + id.status().message());
    return id;
  }
  note(oracle_.create_client(*id, viewer));
  return id;
}

Status MirroredWorld::destroy_client(ClientId client) {
  Status status = world_.destroy_client(client);
  if (!status.ok()) {
    note("destroy_client(" + to_string(client) + ") refused: " + status.message());
    return status;
  }
  note(oracle_.destroy_client(client));
  return status;
}

Status MirroredWorld::set_viewer(ClientId client, EntityId viewer) {
  Status status = world_.set_viewer(client, viewer);
  if (!status.ok()) {
    note("set_viewer(" + to_string(client) + ") refused: " + status.message());
    return status;
  }
  note(oracle_.set_viewer(client, viewer));
  return status;
}

Status MirroredWorld::set_radii(float enter_radius, float leave_radius) {
  Status status = world_.set_radii(enter_radius, leave_radius);
  if (!status.ok()) {
    note("set_radii refused: " + status.message());
    return status;
  }
  oracle_.set_radii(enter_radius, leave_radius);
  return status;
}

TickStats MirroredWorld::tick() {
  const TickStats actual = world_.tick();
  const TickStats expected = oracle_.tick();
  std::string problem;
  if (actual.tick != expected.tick || actual.spawns != expected.spawns ||
      actual.updates != expected.updates || actual.despawns != expected.despawns ||
      actual.members != expected.members) {
    problem = "TickStats differ at tick " + std::to_string(expected.tick) +
              ": expected spawns/updates/despawns/members " + std::to_string(expected.spawns) + "/" +
              std::to_string(expected.updates) + "/" + std::to_string(expected.despawns) + "/" +
              std::to_string(expected.members) + ", got " + std::to_string(actual.spawns) + "/" +
              std::to_string(actual.updates) + "/" + std::to_string(actual.despawns) + "/" +
              std::to_string(actual.members);
  }
  const std::string records = oracle_.compare(world_);
  if (!records.empty()) problem += (problem.empty() ? "" : "; ") + records;
  note(problem);
  return actual;
}

}  // namespace sightline::testing
