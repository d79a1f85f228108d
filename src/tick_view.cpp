// The World's side of the Replicator's view (tick_view.h).
#include "tick_view.h"

#include "sightline/world.h"
#include "world_impl.h"

namespace sightline {

static_assert(TickView::kNoParent == WorldImpl::kNone);

TickSource::TickSource(World& world) noexcept : world_(world.impl_.get()) {}

TickView TickSource::view() const noexcept {
  const WorldImpl& w = *world_;
  TickView t;
  t.ticks = w.ticks;
  t.entity_slots = w.alive.size();
  t.alive = w.alive.data();
  t.generation = w.generation.data();
  t.xs = w.xs.data();
  t.zs = w.zs.data();
  t.bound = w.bound.data();
  t.scale = w.scale.data();
  t.cold = w.cold.data();
  t.attachments = w.attached_entities != 0;
  t.teleported_roots = w.last_teleported_roots;
  t.live_clients = w.live_clients;
  if (w.pass_order_current && w.passes_in_cell_order) t.nearby_order = w.pass_order;
  t.members = w.member_total();
  t.thread_min_work = w.def.thread_min_work;
  t.client_slots = w.client_slots.size();
  t.events = w.events.delivered;
  return t;
}

ClientTick TickSource::client(std::uint32_t client_slot) const noexcept {
  const WorldImpl& w = *world_;
  const ClientSlot& slot = w.client_slots[client_slot];
  ClientTick c;
  c.viewer = slot.viewer;
  c.origins_changed = slot.origins_changed;
  const TickOutputs& out = w.outputs_of(slot);
  c.members = w.members_of(slot);
  // Periods are recorded only at ticks run while requested.
  if (out.periods.size() == out.members.size()) c.periods = out.periods.data() + slot.members.begin;
  c.spawns = out.spawns.span().subspan(slot.spawns.begin, slot.spawns.count);
  c.despawns = out.despawns.span().subspan(slot.despawns.begin, slot.despawns.count);
  c.updates = w.updates_of(slot);
  c.events = std::span<const EventRecord>(w.events.records).subspan(slot.events.begin, slot.events.count);
  const SpaceSlot& room = w.space_slots[w.cold[slot.viewer].space];
  c.culls = room.culls;
  c.enter = room.culls ? slot.enter : w.enter_radius;
  c.origins = w.origins_of(slot, c.origin_x.data(), c.origin_z.data());
  std::size_t o = 0;
  c.origin_entity[o++] = slot.viewer;
  for (const std::uint32_t e : slot.extra_origins) {
    if (w.cold[e].space == w.cold[slot.viewer].space) c.origin_entity[o++] = e;
  }
  return c;
}

const EventClassDef& TickSource::event_class(std::uint32_t index) const noexcept {
  return world_->events.classes[index].def;
}

bool TickSource::admits(std::uint32_t client_slot, std::uint64_t stored_key) const noexcept {
  return stored_key == 0 || find_subscription(world_->client_slots[client_slot], stored_key) != nullptr;
}

std::uint32_t TickSource::space_slot(std::uint32_t client_slot) const noexcept {
  return world_->cold[world_->client_slots[client_slot].viewer].space;
}

Status TickSource::check(SpaceId space) const { return world_->check(space); }

bool TickSource::holds(ClientId client) const noexcept {
  const ClientSlot& slot = world_->client_slots[client.index];
  return slot.alive && slot.generation == client.generation;
}

TaskRunner& TickSource::tasks() const noexcept { return *world_->tasks; }

std::size_t TickSource::entity_slots() const noexcept { return world_->alive.size(); }

Status TickSource::check(ClientId client) const { return world_->check(client); }

Status TickSource::check(EntityId entity) const { return world_->check(entity); }

void TickSource::request_periods() noexcept { world_->record_periods = ++world_->period_requests != 0; }

void TickSource::release_periods() noexcept { world_->record_periods = --world_->period_requests != 0; }

}  // namespace sightline
