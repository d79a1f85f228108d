// Spaces: independent rooms of one World, each with its own culling settings.
#include <cmath>
#include <string>
#include <utility>

#include "format_value.h"
#include "validation.h"
#include "world_impl.h"

namespace sightline {

namespace {

Status refuse(const std::string& message) { return {ErrorCode::invalid_def, "SpaceDef: " + message}; }

Status validate(const SpaceDef& def) {
  if (def.culling != Culling::off && def.culling != Culling::on) {
    return refuse("culling is " + std::to_string(static_cast<int>(def.culling)) + ": must be off or on");
  }
  const bool explicit_radii = def.enter_radius != 0.0f || def.leave_radius != 0.0f;
  if (explicit_radii) {
    if (def.enter_radius == 0.0f || def.leave_radius == 0.0f) {
      return refuse("enter_radius is " + format_value(def.enter_radius) + " and leave_radius is " +
                    format_value(def.leave_radius) + ": give both or neither (0 takes the world's)");
    }
    if (Status s = validate_radii(def.enter_radius, def.leave_radius); !s) return refuse(s.message());
  }
  if (def.radius != 0.0f) {
    if (!(def.radius >= kLeastInterestRadius && def.radius <= kMostInterestRadius)) {
      return refuse("radius is " + format_value(def.radius) + ": must be 0 or in [" +
                    format_value(kLeastInterestRadius) + ", " + format_value(kMostInterestRadius) + "]");
    }
    if (explicit_radii) return refuse("radius and enter_radius/leave_radius are both given: use one form");
    if (!(def.enter_factor > 0.0f && def.enter_factor <= kMaxRadiusFactor)) {
      return refuse("enter_factor is " + format_value(def.enter_factor) + ": must be in (0, " +
                    format_value(kMaxRadiusFactor) + "]");
    }
    if (!(def.leave_factor >= def.enter_factor && def.leave_factor <= kMaxRadiusFactor)) {
      return refuse("leave_factor is " + format_value(def.leave_factor) + ": must be in [enter_factor (" +
                    format_value(def.enter_factor) + "), " + format_value(kMaxRadiusFactor) + "]");
    }
    if (Status s = validate_radii(def.radius * def.enter_factor, def.radius * def.leave_factor); !s) {
      return refuse("radius x factors: " + s.message());
    }
  }
  for (const auto& [name, value] : {std::pair{"min_view_radius", def.min_view_radius},
                                    std::pair{"max_view_radius", def.max_view_radius}}) {
    if (value != 0.0f && !(value >= kMinRadius && value <= kMaxRadius)) {
      return refuse(std::string(name) + " is " + format_value(value) + ": must be 0 or in [" +
                    format_value(kMinRadius) + ", " + format_value(kMaxRadius) + "]");
    }
  }
  if (def.min_view_radius != 0.0f && def.max_view_radius != 0.0f &&
      def.min_view_radius > def.max_view_radius) {
    return refuse("min_view_radius is " + format_value(def.min_view_radius) +
                  ": must be <= max_view_radius (" + format_value(def.max_view_radius) + ")");
  }
  if (def.visibility_hold_ticks > kMaxVisibilityHoldTicks) {
    return refuse("visibility_hold_ticks is " + std::to_string(def.visibility_hold_ticks) +
                  ": must be <= " + std::to_string(kMaxVisibilityHoldTicks));
  }
  return {};
}

void reset_mode(SpaceSlot& slot) {
  slot.broadcasting = slot.def.broadcast_threshold > 0;
  slot.drill = false;
  slot.culled_last_tick = slot.def.culling == Culling::on && !slot.broadcasting;
}

}  // namespace

void settle_radii(SpaceSlot& slot, float world_enter, float world_leave) {
  const SpaceDef& d = slot.def;
  if (slot.drill) {
    slot.enter = slot.drill_enter;
    slot.leave = slot.drill_leave;
  } else if (d.enter_radius != 0.0f) {
    slot.enter = d.enter_radius;
    slot.leave = d.leave_radius;
  } else if (d.radius != 0.0f) {
    slot.enter = d.radius * d.enter_factor;
    slot.leave = d.radius * d.leave_factor;
  } else {
    slot.enter = world_enter;
    slot.leave = world_leave;
  }
  slot.view_min = d.min_view_radius;
  slot.view_max = d.max_view_radius != 0.0f ? d.max_view_radius : slot.enter;
}

Status WorldImpl::check(SpaceId id) const {
  if (id.is_null()) return {ErrorCode::null_handle, "space handle is null"};
  if (id.index >= space_slots.size() || space_slots[id.index].generation != id.generation ||
      !space_slots[id.index].alive) {
    return {ErrorCode::stale_handle, describe(id) + " is stale: destroyed or never created"};
  }
  return {};
}

void WorldImpl::add_to_space(std::uint32_t e, std::uint32_t space_slot) {
  std::vector<std::uint32_t>& list = space_slots[space_slot].entities;
  cold[e].space = space_slot;
  cold[e].space_pos = static_cast<std::uint32_t>(list.size());
  list.push_back(e);
}

void WorldImpl::remove_from_space(std::uint32_t e) {
  std::vector<std::uint32_t>& list = space_slots[cold[e].space].entities;
  const std::uint32_t last = list.back();
  list[cold[e].space_pos] = last;
  cold[last].space_pos = cold[e].space_pos;
  list.pop_back();
}

void WorldImpl::settle_spaces() {
  // Every live client's viewer is in a live space: with one live space (most worlds) it holds them
  // all, and no client slot is read (the loop below read two lines a client, 12 instructions and
  // 2 first-level misses a client of the observers' tick, callgrind --cache-sim).
  SpaceSlot* only = nullptr;
  std::uint32_t live_spaces = 0;
  for (SpaceSlot& slot : space_slots) {
    slot.clients = 0;
    if (slot.alive) {
      only = &slot;
      ++live_spaces;
    }
  }
  if (live_spaces == 1) {
    only->clients = static_cast<std::uint32_t>(live_clients.size());
  } else {
    for (const ClientId id : live_clients) ++space_slots[cold[client_slots[id.index].viewer].space].clients;
  }
  for (SpaceSlot& slot : space_slots) {
    if (!slot.alive) continue;
    const SpaceDef& d = slot.def;
    if (d.broadcast_threshold == 0) {
      slot.broadcasting = false;
    } else if (slot.broadcasting && slot.clients > d.broadcast_threshold) {
      slot.broadcasting = false;
    } else if (!slot.broadcasting &&
               static_cast<std::int64_t>(slot.clients) <=
                   static_cast<std::int64_t>(d.broadcast_threshold) - d.broadcast_margin) {
      slot.broadcasting = true;
    }
    slot.culls = slot.drill || (d.culling == Culling::on && !slot.broadcasting);
    slot.drilled = slot.drill;
    slot.showed_broadcasting = d.culling == Culling::on && slot.broadcasting && !slot.drill;
    slot.switched_on = slot.culls && !slot.culled_last_tick;
    slot.culled_last_tick = slot.culls;
    settle_radii(slot, enter_radius, leave_radius);
  }
}

SpaceId World::default_space() const noexcept { return SpaceId{0, impl_->space_slots[0].generation}; }

Result<SpaceId> World::create_space(const SpaceDef& def) {
  WorldImpl& w = *impl_;
  if (Status s = validate(def); !s) return s;
  const std::uint32_t index = w.space_pool.take();
  if (index == w.space_slots.size()) w.space_slots.emplace_back();
  SpaceSlot& slot = w.space_slots[index];
  slot.generation = SlotPool::next_generation(slot.generation);
  slot.alive = true;
  slot.def = def;
  slot.entities.clear();
  reset_mode(slot);
  slot.culls = slot.culled_last_tick;  // until the first tick settles it
  slot.drilled = false;
  slot.showed_broadcasting = def.culling == Culling::on && slot.broadcasting;
  settle_radii(slot, w.enter_radius, w.leave_radius);
  const SpaceId id{index, slot.generation};
  w.recorder.record(recording::Op::create_space, def, id);
  return id;
}

Status World::destroy_space(SpaceId space) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(space); !s) return s;
  if (space.index == 0) return {ErrorCode::invalid_argument, describe(space) + " is the default space"};
  SpaceSlot& slot = w.space_slots[space.index];
  if (!slot.entities.empty()) {
    return {ErrorCode::invalid_argument, describe(space) + " still holds " +
                                             std::to_string(slot.entities.size()) +
                                             " entities: destroy them or move them to another space first"};
  }
  slot.alive = false;
  slot.drill = false;
  slot.walls.build({}, 0.0f);  // a space made in this slot later starts without walls
  w.space_pool.free(space.index);
  w.recorder.record(recording::Op::destroy_space, space);
  return {};
}

Status World::set_space_def(SpaceId space, const SpaceDef& def) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(space); !s) return s;
  if (Status s = validate(def); !s) return s;
  w.space_slots[space.index].def = def;
  w.recorder.record(recording::Op::set_space_def, space, def);
  return {};
}

Result<SpaceDef> World::space_def(SpaceId space) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(space); !s) return s;
  return w.space_slots[space.index].def;
}

Result<SpaceState> World::space_state(SpaceId space) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(space); !s) return s;
  const SpaceSlot& slot = w.space_slots[space.index];
  SpaceState state;
  state.culling = slot.culls;
  state.broadcasting = slot.showed_broadcasting;
  state.drill = slot.drilled;
  state.enter_radius = slot.culls ? slot.enter : 0.0f;
  state.leave_radius = slot.culls ? slot.leave : 0.0f;
  state.clients = slot.clients;
  state.entities = static_cast<std::uint32_t>(slot.entities.size());
  return state;
}

Status World::set_space(EntityId entity, SpaceId space) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  if (Status s = w.check(space); !s) return s;
  if (Status s = w.check_root(entity, "the space"); !s) return s;
  if (w.cold[entity.index].space == space.index) return {};
  auto move = [&w, &space](auto& self, std::uint32_t e) -> void {
    w.remove_from_space(e);
    w.add_to_space(e, space.index);
    for (std::uint32_t c = w.cold[e].first_child; c != WorldImpl::kNone; c = w.cold[c].next_sibling)
      self(self, c);
  };
  move(move, entity.index);
  w.recorder.record(recording::Op::set_space, entity, space);
  return {};
}

Result<SpaceId> World::space(EntityId entity) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  const std::uint32_t slot = w.cold[entity.index].space;
  return SpaceId{slot, w.space_slots[slot].generation};
}

Result<SpaceId> World::client_space(ClientId client) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  const std::uint32_t slot = w.cold[w.client_slots[client.index].viewer].space;
  return SpaceId{slot, w.space_slots[slot].generation};
}

Status World::set_culling_drill(SpaceId space, float enter_radius, float leave_radius) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(space); !s) return s;
  if (Status s = validate_radii(enter_radius, leave_radius); !s)
    return {ErrorCode::invalid_argument, s.message()};
  SpaceSlot& slot = w.space_slots[space.index];
  slot.drill = true;
  slot.drill_enter = enter_radius;
  slot.drill_leave = leave_radius;
  w.recorder.record(recording::Op::set_culling_drill, space, enter_radius, leave_radius);
  return {};
}

Status World::clear_culling_drill(SpaceId space) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(space); !s) return s;
  w.space_slots[space.index].drill = false;
  w.recorder.record(recording::Op::clear_culling_drill, space);
  return {};
}

}  // namespace sightline
