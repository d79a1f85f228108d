#include "sightline/world.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "format_value.h"
#include "log_report.h"
#include "validation.h"
#include "world_impl.h"

namespace sightline {

namespace {

// Puts e in, or takes it out of, a sorted list of entity indices; a no-op when already so.
void set_listed(std::vector<std::uint32_t>& list, std::uint32_t e, bool listed) {
  const auto at = std::lower_bound(list.begin(), list.end(), e);
  const bool present = at != list.end() && *at == e;
  if (listed && !present) list.insert(at, e);
  if (!listed && present) list.erase(at);
}

}  // namespace

WorldImpl::WorldImpl(const WorldDef& world_def) : def(world_def), ticks(world_def.first_tick) {
  tasks = def.enqueue_task != nullptr ? std::make_unique<TaskRunner>(def.threads, def.enqueue_task,
                                                                     def.finish_task, def.task_user_context)
                                      : std::make_unique<TaskRunner>(def.threads);
  if (def.threads > 1) shares.resize(def.threads);
  parts.resize(std::max(1u, def.threads));
  grid.tasks = tasks.get();
  for (const DistanceTier& tier : def.tiers) {
    tier_period.push_back(tier.period);
    tier_fraction.push_back(tier.max_distance_fraction);
  }
  tier_limit2.resize(def.tiers.size());
  set_radii(def.enter_radius, def.leave_radius);
  xs.reserve(def.entity_capacity);
  zs.reserve(def.entity_capacity);
  generation.reserve(def.entity_capacity);
  alive.reserve(def.entity_capacity);
  live_generation.reserve(def.entity_capacity);
  cold.reserve(def.entity_capacity);
  external.reserve(def.entity_capacity);
  bound.reserve(def.entity_capacity);
  scale.reserve(def.entity_capacity);
  binned.reserve(def.entity_capacity);
  traits.reserve(def.entity_capacity);
  client_slots.reserve(def.client_capacity);
  // The default space: culling at the world's radii, no broadcast.
  SpaceSlot& default_slot = space_slots.emplace_back();
  default_slot.generation = SlotPool::next_generation(0);
  (void)space_pool.take();
  default_slot.alive = true;
  default_slot.def.culling = Culling::on;
  default_slot.culled_last_tick = true;
  default_slot.culls = true;
  settle_radii(default_slot, enter_radius, leave_radius);
  default_slot.entities.reserve(def.entity_capacity);
  live_clients.reserve(def.client_capacity);
}

void WorldImpl::set_radii(float enter, float leave) {
  enter_radius = enter;
  leave_radius = leave;
  // The same float arithmetic as the enter test: d == fraction * R is within the tier.
  for (std::size_t i = 0; i < def.tiers.size(); ++i) {
    const float limit = def.tiers[i].max_distance_fraction * enter;
    tier_limit2[i] = limit * limit;
  }
}

Status WorldImpl::check(EntityId id) const {
  if (id.is_null()) return {ErrorCode::null_handle, "entity handle is null"};
  // The same rule as set_positions' batch check (position_batch.h): a live slot holds its
  // generation in live_generation, a destroyed one 0, which no handle that passed is_null() has.
  if (id.index >= live_generation.size() || live_generation[id.index] != id.generation) {
    return {ErrorCode::stale_handle, describe(id) + " is stale: destroyed or never created"};
  }
  return {};
}

Status WorldImpl::check_root(EntityId id, const char* what) const {
  if (cold[id.index].parent == kNone) return {};
  const EntityId parent_id{cold[id.index].parent, generation[cold[id.index].parent]};
  return {ErrorCode::invalid_argument, describe(id) + " is attached to " + describe(parent_id) + ": " + what +
                                           " belongs to the root of its tree"};
}

Status WorldImpl::check(ClientId id) const {
  if (id.is_null()) return {ErrorCode::null_handle, "client handle is null"};
  if (id.index >= client_slots.size() || client_slots[id.index].generation != id.generation ||
      !client_slots[id.index].alive) {
    return {ErrorCode::stale_handle, describe(id) + " is stale: destroyed or never created"};
  }
  return {};
}

World::World(std::unique_ptr<WorldImpl> impl) noexcept : impl_(std::move(impl)) {}
World::World(World&&) noexcept = default;
World& World::operator=(World&&) noexcept = default;
World::~World() = default;

Result<World> World::create(const WorldDef& def) {
  if (Status s = validate(def); !s) return s;
  auto impl = std::make_unique<WorldImpl>(def);
  impl->recorder.start(def.recording, def);
  return World(std::move(impl));
}

Result<EntityId> World::create_entity(const EntityDef& def) {
  WorldImpl& w = *impl_;
  const std::uint32_t index = w.entity_slots.peek();
  const bool fresh = w.entity_slots.next_is_new();
  const std::uint32_t next_generation = SlotPool::next_generation(fresh ? 0 : w.generation[index]);
  const EntityId id{index, next_generation};
  if (Status s = validate_position(id, def.x, def.z); !s) return s;
  if (Status s = validate_bound_radius(id, def.bound_radius); !s) return s;
  if (Status s = validate_radius_scale(id, def.radius_scale); !s) return s;
  const SpaceId space_id = def.space.is_null() ? default_space() : def.space;
  if (Status s = w.check(space_id); !s) return Status{s.code(), "EntityDef::space: " + s.message()};
  if (Status s = w.check_external_id(def.external_id); !s) return s;

  (void)w.entity_slots.take();
  if (!fresh) {
    w.xs[index] = def.x;
    w.zs[index] = def.z;
    w.generation[index] = next_generation;
    w.live_generation[index] = next_generation;
    w.alive[index] = 1;
    w.cold[index] = EntityCold{};
    w.external[index] = def.external_id;
    w.bound[index] = 0.0f;
    w.scale[index] = 1.0f;
    w.binned[index] = 1;
  } else {
    const std::size_t slots_before = w.xs.capacity();
    w.xs.push_back(def.x);
    w.zs.push_back(def.z);
    w.generation.push_back(next_generation);
    w.live_generation.push_back(next_generation);
    w.alive.push_back(1);
    w.cold.emplace_back();
    w.external.push_back(def.external_id);
    w.bound.push_back(0.0f);
    w.scale.push_back(1.0f);
    w.binned.push_back(1);
    w.traits.push_back(0);
    // The release phase of a tick frees slots: keep room for every slot.
    w.entity_slots.reserve_frees(w.xs.capacity());
    if (w.xs.capacity() != slots_before && w.xs.size() > w.def.entity_capacity) {
      report(w.def.log, LogLevel::info,
             "World: entity storage grew to %zu slots for entity %u (WorldDef::entity_capacity is %u): "
             "creating entities beyond the hint allocates",
             w.xs.capacity(), index, w.def.entity_capacity);
    }
  }
  if (def.external_id != 0) w.by_external.insert(def.external_id, index);
  if (def.created) {
    w.cold[index].created = 1;
    w.created_list.push_back(index);
  }
  ++w.live_entities;
  w.add_to_space(index, space_id.index);
  w.set_bound(index, def.bound_radius);
  if (def.radius_scale != 1.0f) w.set_scale(index, def.radius_scale);
  {
    const Recorder::Quiet quiet(w.recorder);
    if (def.always_relevant) (void)set_always_relevant(id, true);
    if (def.presenter) (void)set_presenter(id, true);
  }
  w.refresh_traits(index);
  w.recorder.record(recording::Op::create_entity, def, id);
  return id;
}

Status World::destroy_entity(EntityId entity) { return impl_->remove_entity(*this, entity, false); }

Status World::withdraw_entity(EntityId entity) { return impl_->remove_entity(*this, entity, true); }

// destroy_entity and withdraw_entity: one path, the despawn reason apart.
Status WorldImpl::remove_entity(World& world, EntityId entity, bool withdraw) {
  WorldImpl& w = *this;
  if (Status s = w.check(entity); !s) return s;
  if (w.cold[entity.index].viewer_refs != 0) {
    for (const ClientId client : w.live_clients) {
      if (w.client_slots[client.index].viewer == entity.index) {
        return {ErrorCode::entity_is_viewer, describe(entity) + " is the viewer of " + describe(client) +
                                                 ": destroy the client or set another viewer first"};
      }
    }
  }
  w.recorder.record(withdraw ? recording::Op::withdraw_entity : recording::Op::destroy_entity, entity);
  const Recorder::Quiet quiet(w.recorder);
  (void)world.set_always_relevant(entity, false);
  const std::uint32_t e = entity.index;
  while (w.cold[e].first_child != WorldImpl::kNone) w.detach(w.cold[e].first_child);
  // Its despawns sort at the depth it had, so a destroyed attachment still goes before its parent.
  const std::uint8_t depth = w.cold[e].depth;
  w.detach(e);
  w.cold[e].depth = depth;
  if (depth != 0) ++w.deep_destroyed;
  if (w.cold[e].presenter) (void)world.set_presenter(entity, false);
  w.cold[e].withdrawn = withdraw ? 1 : 0;
  w.remove_from_space(e);
  w.set_entity_key(entity.index, 0);
  w.clear_owner(entity.index);
  w.forget_origin(entity.index);
  if (w.external[e] != 0) w.by_external.erase(w.external[e]);
  w.alive[entity.index] = 0;
  w.live_generation[entity.index] = 0;
  w.set_bound(entity.index, 0.0f);
  w.set_scale(entity.index, 1.0f);
  w.destroyed.push_back(entity.index);
  --w.live_entities;
  return {};
}

Status WorldImpl::check_external_id(std::uint64_t id) const {
  if (id == 0) {
    if (def.order_key != OrderKey::external) return {};
    return {ErrorCode::invalid_argument,
            "EntityDef::external_id is 0: WorldDef::order_key is external, so every entity needs one"};
  }
  const std::uint32_t holder = by_external.find(id);
  if (holder == ExternalIdMap::kNone) return {};
  return {ErrorCode::invalid_argument, "EntityDef::external_id " + std::to_string(id) + " is held by " +
                                           describe(EntityId{holder, generation[holder]})};
}

Result<std::uint64_t> World::external_id(EntityId entity) const {
  const WorldImpl& w = *impl_;
  // A removed entity is still named until its slot is reused: its despawn records name it.
  if (!entity.is_null() && entity.index < w.generation.size() &&
      w.generation[entity.index] == entity.generation) {
    return w.external[entity.index];
  }
  if (Status s = w.check(entity); !s) return s;
  return w.external[entity.index];
}

EntityId World::find_external(std::uint64_t external_id) const {
  const WorldImpl& w = *impl_;
  if (external_id == 0) return {};
  const std::uint32_t slot = w.by_external.find(external_id);
  return slot == ExternalIdMap::kNone ? EntityId{} : EntityId{slot, w.generation[slot]};
}

Status World::set_position(EntityId entity, float x, float z) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  if (Status s = validate_position(entity, x, z); !s) return s;
  w.xs[entity.index] = x;
  w.zs[entity.index] = z;
  w.recorder.record(recording::Op::set_position, entity, x, z);
  return {};
}

Status World::set_positions(std::span<const EntityId> entities, std::span<const float> xs,
                            std::span<const float> zs) {
  WorldImpl& w = *impl_;
  if (xs.size() != entities.size() || zs.size() != entities.size()) {
    return {ErrorCode::invalid_argument, "set_positions: " + std::to_string(entities.size()) +
                                             " entities but " + std::to_string(xs.size()) + " xs and " +
                                             std::to_string(zs.size()) + " zs"};
  }
  // A plain boolean pass first (vectorised); Status objects are built only for the entry that
  // fails, and nothing is written unless every entry passes.
  bool contiguous = false;
  const std::size_t bad =
      w.position_check(entities.data(), xs.data(), zs.data(), entities.size(), w.live_generation.data(),
                       w.live_generation.size(), kMaxCoordinate, &contiguous);
  if (bad != entities.size()) {
    if (Status s = w.check(entities[bad]); !s) return s;
    return validate_position(entities[bad], xs[bad], zs[bad]);
  }
  w.recorder.record_positions(entities, xs, zs);
  float* const to_x = w.xs.data();
  float* const to_z = w.zs.data();
  if (contiguous && !entities.empty()) {
    // One run of slots (every entity, in creation order, is the usual batch): two block copies.
    std::copy(xs.begin(), xs.end(), to_x + entities[0].index);
    std::copy(zs.begin(), zs.end(), to_z + entities[0].index);
    return {};
  }
  for (std::size_t i = 0; i < entities.size(); ++i) {
    to_x[entities[i].index] = xs[i];
    to_z[entities[i].index] = zs[i];
  }
  return {};
}

void WorldImpl::set_bound(std::uint32_t entity_index, float radius) {
  bound[entity_index] = radius;
  refresh_binning(entity_index);
}

void WorldImpl::set_scale(std::uint32_t entity_index, float s) {
  if ((scale[entity_index] != 1.0f) != (s != 1.0f)) {
    if (s != 1.0f) {
      ++scaled_entities;
    } else {
      --scaled_entities;
    }
  }
  scale[entity_index] = s;
  refresh_binning(entity_index);
}

// A root that may be held beyond its client's R (a bound, a scale above 1) is not in the grid,
// whose scans reach R: it is in the wide list every client tests.
void WorldImpl::refresh_binning(std::uint32_t e) {
  const bool root = cold[e].parent == kNone;
  const bool wide = bound[e] > 0.0f || scale[e] > 1.0f;
  binned[e] = alive[e] && root && !wide ? 1 : 0;
  set_listed(wide_list, e, alive[e] && root && wide);
  refresh_traits(e);
}

void WorldImpl::refresh_traits(std::uint32_t e) {
  traits[e] = static_cast<std::uint8_t>(
      (alive[e] ? 0 : kDead) | (cold[e].always ? kAlways : 0) | (cold[e].owner != 0 ? kOwned : 0) |
      (cold[e].key != 0 ? kKeyed : 0) | (bound[e] > 0.0f || scale[e] != 1.0f ? kReach : 0) |
      (cold[e].origin_refs != 0 ? kOrigin : 0) | (cold[e].parent != kNone ? kChild : 0) |
      (cold[e].first_child != kNone || cold[e].presenter ? kTree : 0));
}

Status World::set_bound_radius(EntityId entity, float radius) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  if (Status s = validate_bound_radius(entity, radius); !s) return s;
  w.set_bound(entity.index, radius);
  w.recorder.record(recording::Op::set_bound_radius, entity, radius);
  return {};
}

Result<float> World::bound_radius(EntityId entity) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  return w.bound[entity.index];
}

Status World::set_radius_scale(EntityId entity, float scale) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  if (Status s = validate_radius_scale(entity, scale); !s) return s;
  w.set_scale(entity.index, scale);
  w.recorder.record(recording::Op::set_radius_scale, entity, scale);
  return {};
}

Result<float> World::radius_scale(EntityId entity) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  return w.scale[entity.index];
}

Status World::set_view_radius(ClientId client, float enter_radius, float leave_radius) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  if (Status s = validate_view_radius(describe(client), enter_radius, leave_radius); !s) return s;
  ClientSlot& slot = w.client_slots[client.index];
  slot.view_enter = enter_radius;
  slot.view_leave = leave_radius;
  w.recorder.record(recording::Op::set_view_radius, client, enter_radius, leave_radius);
  return {};
}

Result<ClientRadii> World::view_radius(ClientId client) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  const ClientSlot& slot = w.client_slots[client.index];
  return ClientRadii{slot.view_enter, slot.view_leave};
}

Result<ClientRadii> World::client_radii(ClientId client) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  const ClientSlot& slot = w.client_slots[client.index];
  return ClientRadii{slot.enter, slot.leave};
}

Status World::set_always_relevant(EntityId entity, bool always_relevant) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  const auto flag = static_cast<std::uint8_t>(always_relevant);
  if (w.cold[entity.index].always == flag) return {};
  w.cold[entity.index].always = flag;
  w.refresh_traits(entity.index);
  set_listed(w.always_list, entity.index, always_relevant);
  w.recorder.record(recording::Op::set_always_relevant, entity, always_relevant);
  return {};
}

Result<bool> World::always_relevant(EntityId entity) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  return w.cold[entity.index].always != 0;
}

Status World::set_presenter(EntityId entity, bool presenter) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  if (Status s = w.check_root(entity, "presenting"); !s) return s;
  const auto flag = static_cast<std::uint8_t>(presenter);
  if (w.cold[entity.index].presenter == flag) return {};
  w.cold[entity.index].presenter = flag;
  w.refresh_traits(entity.index);
  set_listed(w.presenter_list, entity.index, presenter);
  w.recorder.record(recording::Op::set_presenter, entity, presenter);
  return {};
}

Result<bool> World::presenter(EntityId entity) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  return w.cold[entity.index].presenter != 0;
}

Status World::teleport(EntityId entity, float x, float z) {
  WorldImpl& w = *impl_;
  {
    const Recorder::Quiet quiet(w.recorder);
    if (Status s = set_position(entity, x, z); !s) return s;
  }
  if (!w.cold[entity.index].teleported) {
    w.cold[entity.index].teleported = 1;
    w.teleported_list.push_back(entity.index);
  }
  w.recorder.record(recording::Op::teleport, entity, x, z);
  return {};
}

Result<Position> World::position(EntityId entity) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  return Position{w.xs[entity.index], w.zs[entity.index]};
}

bool World::is_valid(EntityId entity) const noexcept { return impl_->check(entity).ok(); }
std::uint32_t World::entity_count() const noexcept { return impl_->live_entities; }

Result<ClientId> World::create_client(EntityId viewer) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(viewer); !s) return s;
  const std::uint32_t index = w.client_pool.take();
  if (index == w.client_slots.size()) {
    const std::size_t slots_before = w.client_slots.capacity();
    w.client_slots.emplace_back();
    if (w.client_slots.capacity() != slots_before && w.client_slots.size() > w.def.client_capacity) {
      report(w.def.log, LogLevel::info,
             "World: client storage grew to %zu slots for client %u (WorldDef::client_capacity is %u): "
             "creating clients beyond the hint allocates",
             w.client_slots.capacity(), index, w.def.client_capacity);
    }
  }
  ClientSlot& slot = w.client_slots[index];
  slot.generation = SlotPool::next_generation(slot.generation);
  slot.alive = true;
  slot.viewer = viewer.index;
  slot.members = slot.spawns = slot.updates = slot.despawns = Slice{};
  slot.updates_in_set = false;
  slot.subscriptions.clear();
  slot.bypass_subscriptions = 0;
  slot.refresh = false;
  slot.look_ahead = 0.0f;
  slot.view_enter = slot.view_leave = 0.0f;
  slot.enter = slot.leave = 0.0f;
  slot.sighted = false;
  slot.seen = Slice{};
  ++w.cold[viewer.index].viewer_refs;
  const ClientId id{index, slot.generation};
  const auto at = std::lower_bound(w.live_clients.begin(), w.live_clients.end(), id,
                                   [](ClientId a, ClientId b) { return a.index < b.index; });
  w.live_clients.insert(at, id);
  w.pass_order_current = false;
  w.recorder.record(recording::Op::create_client, viewer, id);
  return id;
}

Status World::destroy_client(ClientId client) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  ClientSlot& slot = w.client_slots[client.index];
  for (const std::uint32_t e : slot.owned) {
    w.cold[e].owner = 0;
    w.refresh_traits(e);
  }
  slot.owned.clear();
  for (const std::uint32_t e : slot.extra_origins) {
    --w.cold[e].origin_refs;
    w.refresh_traits(e);
  }
  slot.extra_origins.clear();
  --w.cold[slot.viewer].viewer_refs;
  for (const EntityId member : w.members_of(slot)) --w.cold[member.index].holders;
  slot.alive = false;
  slot.members = slot.spawns = slot.updates = slot.despawns = slot.events = Slice{};
  if (client.index < w.histories.size() && w.histories[client.index].generation != 0) {
    w.histories[client.index] = WorldImpl::HistoryRing{};
    --w.history_clients;
  }
  w.client_pool.free(client.index);
  const auto at = std::lower_bound(w.live_clients.begin(), w.live_clients.end(), client,
                                   [](ClientId a, ClientId b) { return a.index < b.index; });
  w.live_clients.erase(at);
  w.pass_order_current = false;
  w.recorder.record(recording::Op::destroy_client, client);
  return {};
}

Status World::set_viewer(ClientId client, EntityId viewer) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  if (Status s = w.check(viewer); !s) return s;
  ClientSlot& slot = w.client_slots[client.index];
  // The new viewer stops being an extra origin: the viewer is never sent.
  std::vector<std::uint32_t>& extra = slot.extra_origins;
  const auto at = std::lower_bound(extra.begin(), extra.end(), viewer.index);
  if (at != extra.end() && *at == viewer.index) {
    extra.erase(at);
    --w.cold[viewer.index].origin_refs;
    w.refresh_traits(viewer.index);
  }
  --w.cold[slot.viewer].viewer_refs;
  ++w.cold[viewer.index].viewer_refs;
  slot.viewer = viewer.index;
  slot.refresh = true;
  w.recorder.record(recording::Op::set_viewer, client, viewer);
  return {};
}

Result<EntityId> World::viewer(ClientId client) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  const std::uint32_t index = w.client_slots[client.index].viewer;
  return EntityId{index, w.generation[index]};
}

bool World::is_valid(ClientId client) const noexcept { return impl_->check(client).ok(); }
std::uint32_t World::client_count() const noexcept {
  return static_cast<std::uint32_t>(impl_->live_clients.size());
}

Status World::set_radii(float enter_radius, float leave_radius) {
  WorldImpl& w = *impl_;
  if (Status s = validate_radii(enter_radius, leave_radius); !s) {
    return {ErrorCode::invalid_argument, s.message()};
  }
  if (w.def.cell_size != 0.0f && w.def.cell_size < enter_radius) {
    return {ErrorCode::invalid_argument, "enter_radius is " + format_value(enter_radius) +
                                             ": must be <= the configured cell_size (" +
                                             format_value(w.def.cell_size) + ")"};
  }
  w.set_radii(enter_radius, leave_radius);
  w.recorder.record(recording::Op::set_radii, enter_radius, leave_radius);
  return {};
}

float World::enter_radius() const noexcept { return impl_->enter_radius; }
float World::leave_radius() const noexcept { return impl_->leave_radius; }

void World::set_crowd_cap(std::uint32_t cap) noexcept {
  impl_->def.crowd_cap = cap;
  impl_->recorder.record(recording::Op::set_crowd_cap, cap);
}
std::uint32_t World::crowd_cap() const noexcept { return impl_->def.crowd_cap; }
OrderKey World::order_key() const noexcept { return impl_->def.order_key; }

TickStats World::tick() {
  TickStats stats;
  impl_->run_tick(stats);
  impl_->record_history(*this);
  impl_->recorder.record(recording::Op::tick);
  impl_->recorder.flush();
  return stats;
}

std::uint64_t World::tick_count() const noexcept { return impl_->ticks; }
const TickTimings& World::last_tick_timings() const noexcept { return impl_->timings; }

Result<ClientStream> World::stream(ClientId client) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  const ClientSlot& slot = w.client_slots[client.index];
  const TickOutputs& out = w.outputs_of(slot);
  return ClientStream{out.spawns.span().subspan(slot.spawns.begin, slot.spawns.count), w.updates_of(slot),
                      out.despawns.span().subspan(slot.despawns.begin, slot.despawns.count),
                      std::span(w.events.records).subspan(slot.events.begin, slot.events.count)};
}

Result<std::span<const EntityId>> World::interest_set(ClientId client) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  return w.members_of(w.client_slots[client.index]);
}

std::span<const ClientId> World::clients() const noexcept { return impl_->live_clients; }

}  // namespace sightline
