// One-off events: their classes, the queue, and the delivery phase of a tick (phase 5).
#include <algorithm>
#include <string>

#include "format_value.h"
#include "validation.h"
#include "world_impl.h"

namespace sightline {

namespace {

std::string describe(EventClassId id) {
  return "event class " + std::to_string(id.index) + ":" + std::to_string(id.generation);
}

Status validate(const EventClassDef& def) {
  if (!(def.radius >= kMinRadius && def.radius <= kMaxRadius)) {
    return {ErrorCode::invalid_def, "EventClassDef: radius is " + format_value(def.radius) +
                                        ": must be in [" + format_value(kMinRadius) + ", " +
                                        format_value(kMaxRadius) + "]"};
  }
  switch (def.when_absent) {
    case AbsentSubject::drop:
    case AbsentSubject::null_subject:
    case AbsentSubject::send_as_is: return {};
  }
  return {ErrorCode::invalid_def, "EventClassDef: when_absent is " +
                                      std::to_string(static_cast<int>(def.when_absent)) +
                                      ": must be drop, null_subject or send_as_is"};
}

[[nodiscard]] float distance2(float ax, float az, float bx, float bz) noexcept {
  const float dx = ax - bx;
  const float dz = az - bz;
  return dx * dx + dz * dz;
}

template <class T>
[[nodiscard]] std::uint32_t size32(const std::vector<T>& v) noexcept {
  return static_cast<std::uint32_t>(v.size());
}

// Room for 3n once n passes two thirds of the room, as reserve_outputs keeps for the records: a
// count that wanders about its high does not allocate again.
template <class T>
void keep_room(std::vector<T>& v, std::size_t n) {
  if (3 * n > 2 * v.capacity()) v.reserve(3 * n + 64);
}

// Whether the client holds `subject` after this tick's relevance phase: a member, or its viewer
// (never sent, but the client knows it).
bool knows(const WorldImpl& w, const ClientSlot& client, EntityId subject) {
  if (subject.index == client.viewer) return w.generation[client.viewer] == subject.generation;
  const EntityId* const begin = w.outputs_of(client).members.data() + client.members.begin;
  const EntityId* const end = begin + client.members.count;
  const EntityId* at =
      std::lower_bound(begin, end, subject.index, [](EntityId m, std::uint32_t i) { return m.index < i; });
  return at != end && *at == subject;
}

// Events by space, in ev.order as (space << 32 | event), with ev.space_events their count per
// space. A space destroyed since the emit has no clients (a destroyed space was empty), and a slot
// reused since has a new generation: such events reach nobody.
void order_by_space(WorldImpl& w) {
  EventState& ev = w.events;
  const std::size_t spaces = w.space_slots.size();
  if (ev.space_events.size() < spaces) {
    ev.space_events.resize(spaces);
    ev.space_origins.resize(spaces + 1);
  }
  std::fill(ev.space_events.begin(), ev.space_events.begin() + spaces, 0);
  keep_room(ev.order, ev.delivered.size());
  ev.order.clear();
  for (std::uint32_t i = 0; i < size32(ev.delivered); ++i) {
    const SpaceId s = ev.delivered[i].space;
    if (!w.space_slots[s.index].alive || w.space_slots[s.index].generation != s.generation) continue;
    ++ev.space_events[s.index];
    ev.order.push_back(static_cast<std::uint64_t>(s.index) << 32 | i);
  }
  std::sort(ev.order.begin(), ev.order.end());
}

// The client's viewer and its extra origins in space s.
std::uint32_t origins_in(const WorldImpl& w, const ClientSlot& client, std::uint32_t s) {
  std::uint32_t n = 1;
  for (const std::uint32_t o : client.extra_origins) n += w.cold[o].space == s ? 1 : 0;
  return n;
}

void place_origin(EventState& ev, std::uint32_t s, float x, float z, std::uint32_t client) {
  const std::uint32_t at = ev.space_origins[s]++;
  ev.origin_x[at] = x;
  ev.origin_z[at] = z;
  ev.origin_client[at] = client;
}

// The origins of the clients in spaces with events, grouped by space by counting sort: space s's
// are [space_origins[s], space_origins[s + 1]).
void group_origins(WorldImpl& w) {
  EventState& ev = w.events;
  const std::size_t spaces = w.space_slots.size();
  std::fill(ev.space_origins.begin(), ev.space_origins.begin() + spaces + 1, 0);
  for (const ClientId id : w.live_clients) {
    const ClientSlot& client = w.client_slots[id.index];
    const std::uint32_t s = w.cold[client.viewer].space;
    if (ev.space_events[s] != 0) ev.space_origins[s + 1] += origins_in(w, client, s);
  }
  for (std::size_t s = 0; s < spaces; ++s) ev.space_origins[s + 1] += ev.space_origins[s];
  const std::uint32_t origin_total = ev.space_origins[spaces];
  keep_room(ev.origin_x, origin_total);
  keep_room(ev.origin_z, origin_total);
  keep_room(ev.origin_client, origin_total);
  keep_room(ev.origin_binned, origin_total);
  ev.origin_x.resize(origin_total);
  ev.origin_z.resize(origin_total);
  ev.origin_client.resize(origin_total);
  if (ev.origin_binned.size() < origin_total) ev.origin_binned.resize(origin_total, 1);
  // Scatter with space_origins as running cursors, then shift them back to starts.
  for (const ClientId id : w.live_clients) {
    const ClientSlot& client = w.client_slots[id.index];
    const std::uint32_t s = w.cold[client.viewer].space;
    if (ev.space_events[s] == 0) continue;
    place_origin(ev, s, w.xs[client.viewer], w.zs[client.viewer], id.index);
    for (const std::uint32_t o : client.extra_origins) {
      if (w.cold[o].space == s) place_origin(ev, s, w.xs[o], w.zs[o], id.index);
    }
  }
  for (std::size_t s = spaces; s > 0; --s) ev.space_origins[s] = ev.space_origins[s - 1];
  ev.space_origins[0] = 0;
}

// One event to every client with an origin of the grid (the space's, from `begin` on) within its
// radius, once, as its class says of a subject the client does not hold.
void deliver_one(WorldImpl& w, std::uint32_t index, std::uint32_t begin) {
  EventState& ev = w.events;
  const std::uint32_t* const items = ev.grid.items().data();
  const float* const item_x = ev.grid.item_x().data();
  const float* const item_z = ev.grid.item_z().data();
  std::uint32_t* const stamp = ev.client_stamp.data();
  const EventDef& e = ev.delivered[index];
  const EventClassDef& event_class = ev.classes[e.event_class.index].def;
  const float radius2 = event_class.radius * event_class.radius;
  if (++ev.epoch == 0) {
    std::fill(ev.client_stamp.begin(), ev.client_stamp.end(), 0);
    ev.epoch = 1;
  }
  const std::uint32_t epoch = ev.epoch;
  const Grid::Range range = ev.grid.cell_range(e.x, e.z, event_class.radius);
  for (std::uint32_t row = range.z0; row <= range.z1; ++row) {
    const std::uint32_t end = ev.grid.run_end(row, range.x1);
    for (std::uint32_t at = ev.grid.run_begin(row, range.x0); at < end; ++at) {
      const std::uint32_t c = ev.origin_client[begin + items[at]];
      if (stamp[c] == epoch || distance2(item_x[at], item_z[at], e.x, e.z) > radius2) continue;
      stamp[c] = epoch;
      EntityId subject = e.subject;
      if (!subject.is_null() && !knows(w, w.client_slots[c], subject)) {
        if (event_class.when_absent == AbsentSubject::drop) continue;
        if (event_class.when_absent == AbsentSubject::null_subject) subject = EntityId{};
      }
      ev.found.push_back({c, EventRecord{index, subject}});
    }
  }
}

// The events ev.order[run, run_end) of one space, whose `count` origins start at `begin`.
void deliver_in_space(WorldImpl& w, std::size_t run, std::size_t run_end, std::uint32_t begin,
                      std::uint32_t count) {
  EventState& ev = w.events;
  float cell = kMaxRadius;
  for (std::size_t k = run; k < run_end; ++k) {
    const EventDef& e = ev.delivered[static_cast<std::uint32_t>(ev.order[k])];
    cell = std::min(cell, ev.classes[e.event_class.index].def.radius);
  }
  // Cells of the smallest radius, but not many more than origins: a query costs a run lookup
  // per row and a test per origin in its box, so fine cells cost a large event little.
  ev.grid.build(std::span<const float>(ev.origin_x).subspan(begin, count),
                std::span<const float>(ev.origin_z).subspan(begin, count),
                std::span<const std::uint8_t>(ev.origin_binned).first(count), cell, 2 * count + 64);
  for (std::size_t k = run; k < run_end; ++k) deliver_one(w, static_cast<std::uint32_t>(ev.order[k]), begin);
}

// Each client's records, in slot order: a stable counting sort of the found records by client.
void slice_by_client(WorldImpl& w, TickStats& stats) {
  EventState& ev = w.events;
  for (const ClientId id : w.live_clients) ev.client_records[id.index] = 0;
  for (const EventState::Found& f : ev.found) ++ev.client_records[f.client];
  std::uint32_t next = 0;
  for (const ClientId id : w.live_clients) {
    const std::uint32_t count = ev.client_records[id.index];
    w.client_slots[id.index].events = {next, count};
    ev.client_records[id.index] = next;
    next += count;
  }
  keep_room(ev.records, ev.found.size());
  ev.records.resize(ev.found.size());
  for (const EventState::Found& f : ev.found) ev.records[ev.client_records[f.client]++] = f.record;
  keep_room(ev.found, ev.found.size());
  stats.event_records = ev.records.size();
}

}  // namespace

Status WorldImpl::check(EventClassId id) const {
  if (id.is_null()) return {ErrorCode::null_handle, "event class handle is null"};
  if (id.index >= events.classes.size() || events.classes[id.index].generation != id.generation) {
    return {ErrorCode::stale_handle, describe(id) + " is stale: not made by this World"};
  }
  return {};
}

Result<EventClassId> World::create_event_class(const EventClassDef& def) {
  WorldImpl& w = *impl_;
  if (Status s = validate(def); !s) return s;
  // Classes live as long as the World: a slot is never freed, so it is always a new one.
  const EventClassId id{w.events.class_pool.take(), SlotPool::next_generation(0)};
  w.events.classes.push_back({id.generation, def});
  w.recorder.record(recording::Op::create_event_class, def, id);
  return id;
}

Status World::set_event_class(EventClassId event_class, const EventClassDef& def) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(event_class); !s) return s;
  if (Status s = validate(def); !s) return s;
  w.events.classes[event_class.index].def = def;
  w.recorder.record(recording::Op::set_event_class, event_class, def);
  return {};
}

Result<EventClassDef> World::event_class(EventClassId event_class) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(event_class); !s) return s;
  return w.events.classes[event_class.index].def;
}

Result<std::uint32_t> World::emit_event(const EventDef& def) {
  WorldImpl& w = *impl_;
  std::vector<EventDef>& pending = w.events.pending;
  if (Status s = w.check(def.event_class); !s)
    return Status{s.code(), "EventDef::event_class: " + s.message()};
  if (Status s = validate_position(EntityId{}, def.x, def.z); !s) {
    return Status{s.code(), "EventDef: position is (" + format_value(def.x) + ", " + format_value(def.z) +
                                "): x and z must be finite and within +-" + format_value(kMaxCoordinate)};
  }
  const SpaceId space = def.space.is_null() ? default_space() : def.space;
  if (Status s = w.check(space); !s) return Status{s.code(), "EventDef::space: " + s.message()};
  if (!def.subject.is_null()) {
    if (Status s = w.check(def.subject); !s) return Status{s.code(), "EventDef::subject: " + s.message()};
  }
  if (pending.size() >= kMaxEventsPerTick) {
    return Status{ErrorCode::invalid_argument,
                  "emit_event: " + std::to_string(pending.size()) +
                      " events since the last tick (kMaxEventsPerTick): tick first"};
  }
  const std::uint32_t index = size32(pending);
  pending.push_back(def);
  pending.back().space = space;
  w.recorder.record(recording::Op::emit_event, def, index);
  return index;
}

std::span<const EventDef> World::events() const noexcept { return impl_->events.delivered; }

// Per space with events: its clients' origins binned in a grid with cells of the smallest radius
// among its events, then every event scans the rows of its circle. A client is stamped with the
// event's epoch once it has the event, so several origins in range give one record. Found
// records come in (space, event) order; a stable counting sort by client slot then gives each
// client its slice, sorted by event index.
void WorldImpl::deliver_events(TickStats& stats) {
  EventState& ev = events;
  ev.delivered.swap(ev.pending);
  ev.pending.clear();
  keep_room(ev.pending, ev.delivered.size());
  keep_room(ev.delivered, ev.delivered.size());
  ev.records.clear();
  stats.events = ev.delivered.size();
  if (ev.delivered.empty()) {
    for (const ClientId id : live_clients) client_slots[id.index].events = Slice{};
    return;
  }
  order_by_space(*this);
  group_origins(*this);
  if (ev.client_stamp.size() < client_slots.size()) {
    ev.client_stamp.resize(client_slots.size(), 0);
    ev.client_records.resize(client_slots.size(), 0);
  }
  ev.found.clear();
  for (std::size_t run = 0; run < ev.order.size();) {
    const auto s = static_cast<std::uint32_t>(ev.order[run] >> 32);
    const std::size_t run_end = run + ev.space_events[s];
    const std::uint32_t begin = ev.space_origins[s];
    const std::uint32_t count = ev.space_origins[s + 1] - begin;
    if (count != 0) deliver_in_space(*this, run, run_end, begin, count);
    run = run_end;
  }
  slice_by_client(*this, stats);
}

}  // namespace sightline
