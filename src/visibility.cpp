// Sight: walls per space, velocities for look-ahead, the game's filter, and the visibility test
// the rule's near part applies in a space that needs sight.
#include <cmath>
#include <string>

#include "format_value.h"
#include "validation.h"
#include "world_impl.h"

namespace sightline {

Sight WorldImpl::sight_of(const ClientSlot& client, std::uint32_t client_slot, std::size_t origins,
                          const float* origin_x, const float* origin_z) const {
  const SpaceSlot& room = space_slots[cold[client.viewer].space];
  Sight sight;
  sight.walls = room.walls.wall_count() != 0;
  sight.needed = room.culls && (sight.walls || filter != nullptr);
  sight.look_ahead = client.look_ahead;
  sight.client = ClientId{client_slot, client.generation};
  sight.origins = origins;
  sight.origin_x = origin_x;
  sight.origin_z = origin_z;
  sight.hold_ticks = room.def.visibility_hold_ticks;
  return sight;
}

bool WorldImpl::sees(const Sight& sight, std::uint32_t r, OccluderScratch& occluder_scratch) const {
  const float b = bound[r];
  const float px = xs[r];
  const float pz = zs[r];
  bool visible = !sight.walls;
  if (!visible) {
    const OccluderGrid& walls = space_slots[cold[r].space].walls;
    const bool ahead = sight.look_ahead > 0.0f && (cold[r].vel_x != 0.0f || cold[r].vel_z != 0.0f);
    const float ax = px + cold[r].vel_x * sight.look_ahead;
    const float az = pz + cold[r].vel_z * sight.look_ahead;
    for (std::size_t o = 0; o < sight.origins && !visible; ++o) {
      visible = walls.sees(sight.origin_x[o], sight.origin_z[o], px, pz, b, occluder_scratch) ||
                (ahead && walls.sees(sight.origin_x[o], sight.origin_z[o], ax, az, b, occluder_scratch));
    }
  }
  if (visible && filter != nullptr)
    visible = filter(filter_context, sight.client, EntityId{r, generation[r]});
  return visible;
}

Status World::set_walls(SpaceId space, std::span<const WallSegment> walls) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(space); !s) return s;
  auto ok = [](float v) { return std::fabs(v) <= kMaxCoordinate; };  // false for NaN
  for (std::size_t i = 0; i < walls.size(); ++i) {
    const WallSegment& wall = walls[i];
    if (ok(wall.x0) && ok(wall.z0) && ok(wall.x1) && ok(wall.z1)) continue;
    return {ErrorCode::non_finite_position,
            "wall " + std::to_string(i) + " is (" + format_value(wall.x0) + ", " + format_value(wall.z0) +
                ") - (" + format_value(wall.x1) + ", " + format_value(wall.z1) +
                "): coordinates must be finite and within " + format_value(kMaxCoordinate)};
  }
  SpaceSlot& slot = w.space_slots[space.index];
  slot.walls.build(walls, 0.0f);
  w.scratch.occluders.prepare(slot.walls);
  w.recorder.record(recording::Op::set_walls, space, walls);
  return {};
}

Result<std::span<const WallSegment>> World::walls(SpaceId space) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(space); !s) return s;
  return w.space_slots[space.index].walls.walls();
}

Status World::set_velocity(EntityId entity, float vx, float vz) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  if (!(std::fabs(vx) <= kMaxCoordinate && std::fabs(vz) <= kMaxCoordinate)) {
    return {ErrorCode::invalid_argument, "velocity of " + describe(entity) + " is (" + format_value(vx) +
                                             ", " + format_value(vz) + "): must be finite and within " +
                                             format_value(kMaxCoordinate) + " per second"};
  }
  w.cold[entity.index].vel_x = vx;
  w.cold[entity.index].vel_z = vz;
  w.recorder.record(recording::Op::set_velocity, entity, vx, vz);
  return {};
}

Result<Velocity> World::velocity(EntityId entity) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  return Velocity{w.cold[entity.index].vel_x, w.cold[entity.index].vel_z};
}

Status World::set_look_ahead(ClientId client, float seconds) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  if (Status s = validate_look_ahead(describe(client), seconds); !s) return s;
  w.client_slots[client.index].look_ahead = seconds;
  w.recorder.record(recording::Op::set_look_ahead, client, seconds);
  return {};
}

Result<float> World::look_ahead(ClientId client) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  return w.client_slots[client.index].look_ahead;
}

void World::set_visibility_filter(VisibilityFilter filter, void* context) noexcept {
  impl_->filter = filter;
  impl_->filter_context = filter == nullptr ? nullptr : context;
  impl_->recorder.record(recording::Op::set_visibility_filter, filter != nullptr);
}

}  // namespace sightline
