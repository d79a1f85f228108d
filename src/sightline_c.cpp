// The C API (sightline_c.h): each call checks its pointers, converts handles and runs the C++
// call inside a guard, so a refusal becomes a status with its message kept for sl_last_error()
// and no exception crosses into C.
#include "sightline/sightline_c.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sightline/client_mirror.h"
#include "sightline/protocol.h"
#include "sightline/replicator.h"
#include "sightline/serialize.h"
#include "sightline/version.h"
#include "sightline/world.h"

static_assert(SL_ERR_INVALID_DEF == static_cast<int>(sightline::ErrorCode::invalid_def) &&
                  SL_ERR_INVALID_ARGUMENT == static_cast<int>(sightline::ErrorCode::invalid_argument) &&
                  SL_ERR_NULL_HANDLE == static_cast<int>(sightline::ErrorCode::null_handle) &&
                  SL_ERR_STALE_HANDLE == static_cast<int>(sightline::ErrorCode::stale_handle) &&
                  SL_ERR_NON_FINITE_POSITION == static_cast<int>(sightline::ErrorCode::non_finite_position) &&
                  SL_ERR_ENTITY_IS_VIEWER == static_cast<int>(sightline::ErrorCode::entity_is_viewer) &&
                  SL_ERR_MALFORMED_PACKET == static_cast<int>(sightline::ErrorCode::malformed_packet),
              "sightline_c.h's status codes are ErrorCode's values");

struct sl_world {
  // Before `owned`: the World's end hands its last bytes to them.
  sl_recording_fn recording = nullptr;  // WorldDef::recording's, through record_to below
  void* recording_context = nullptr;
  std::optional<sightline::World> owned;  // empty in a replay's view of its World (read-only)
  sightline::World* world = nullptr;
  std::vector<sightline::EntityId> ids;  // set_positions' handles, converted
};

struct sl_replay {
  std::optional<sightline::Replay> replay;
  sl_world view;  // of the replay's World: the queries of sl_world read it
  uint32_t history_capacity = 0;
};

struct sl_replicator {
  std::optional<sightline::Replicator> replicator;  // made once its serializer context (this) is
  sl_serialize_fn serialize = nullptr;
  void* context = nullptr;
  sl_payload_source_fn source = nullptr;
  void* source_context = nullptr;
};

struct sl_mirror {
  sightline::ClientMirror mirror;
};

namespace {

using namespace sightline;

thread_local std::string last_error;

sl_status done() noexcept { return SL_OK; }

sl_status fail(sl_status code, std::string message) {
  last_error = std::move(message);
  return code;
}

sl_status from(const Status& s) {
  if (s.ok()) return SL_OK;
  return fail(static_cast<sl_status>(s.code()), s.message());
}

// Runs `body` (returning an sl_status); what it throws becomes a status.
template <class F>
sl_status guarded(F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(SL_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail(SL_ERR_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return fail(SL_ERR_INTERNAL, "internal error");
  }
}

sl_status null_argument(const char* call, const char* name) {
  return fail(SL_ERR_INVALID_ARGUMENT, std::string(call) + ": " + name + " is NULL");
}

EntityId entity_of(sl_entity h) noexcept { return {SL_HANDLE_INDEX(h), SL_HANDLE_GENERATION(h)}; }
ClientId client_of(sl_client h) noexcept { return {SL_HANDLE_INDEX(h), SL_HANDLE_GENERATION(h)}; }
sl_entity handle(EntityId e) noexcept { return std::uint64_t{e.index} | (std::uint64_t{e.generation} << 32); }
sl_client handle(ClientId c) noexcept { return std::uint64_t{c.index} | (std::uint64_t{c.generation} << 32); }

// The conventions' list copy: the count, and as many as fit.
template <class From, class To, class Convert>
sl_status copy_list(std::span<const From> items, To* out, std::size_t capacity, std::size_t* count,
                    const char* call, Convert convert) {
  if (count == nullptr) return null_argument(call, "count");
  if (capacity != 0 && out == nullptr) return null_argument(call, "out (with a capacity)");
  *count = items.size();
  const std::size_t n = std::min(capacity, items.size());
  for (std::size_t i = 0; i < n; ++i) out[i] = convert(items[i]);
  return done();
}

sl_tick_stats stats_of(const TickStats& s) {
  return {
      .tick = s.tick, .spawns = s.spawns, .updates = s.updates, .despawns = s.despawns, .members = s.members};
}

// A replay's view of its World answers questions only: a change would make the replay diverge.
sl_status read_only(const char* call) {
  return fail(SL_ERR_INVALID_ARGUMENT, std::string(call) + ": a replay's world is read-only");
}

// One World call that changes it, with nothing to copy out: its pointer checked, its Status
// converted.
template <class Call>
sl_status on_world(sl_world* world, const char* call, Call&& body) noexcept {
  return guarded([&] {
    if (world == nullptr) return null_argument(call, "world");
    if (!world->owned) return read_only(call);
    return from(body(*world->world));
  });
}

Stream& stream_of(sl_stream* s) noexcept { return *reinterpret_cast<Stream*>(s); }
const Stream& stream_of(const sl_stream* s) noexcept { return *reinterpret_cast<const Stream*>(s); }

bool serialize_through_c(Stream& stream, EntityId entity, StatePart part, void* context) {
  const auto& r = *static_cast<const sl_replicator*>(context);
  return r.serialize(reinterpret_cast<sl_stream*>(&stream), handle(entity),
                     part == StatePart::full ? SL_PART_FULL : SL_PART_UPDATE, r.context);
}

std::span<const std::uint8_t> source_through_c(EntityId entity, StatePart part, void* context) {
  const auto& r = *static_cast<const sl_replicator*>(context);
  std::size_t size = 0;
  const std::uint8_t* bytes = r.source(
      handle(entity), part == StatePart::full ? SL_PART_FULL : SL_PART_UPDATE, r.source_context, &size);
  return bytes == nullptr ? std::span<const std::uint8_t>{} : std::span<const std::uint8_t>{bytes, size};
}

// Hands what a packet tells the game to the C listener's callbacks.
class CListener final : public MirrorListener {
 public:
  explicit CListener(const sl_mirror_listener& l) noexcept : l_(l) {}
  void on_enter(EntityId e, SpawnReason reason, bool created, std::span<const std::uint8_t> state,
                std::uint32_t tick) override {
    if (l_.on_enter != nullptr) {
      l_.on_enter(l_.context, handle(e), static_cast<std::uint8_t>(reason), created, state.data(),
                  state.size(), tick);
    }
  }
  void on_update(EntityId e, std::span<const std::uint8_t> state, std::uint32_t tick) override {
    if (l_.on_update != nullptr) l_.on_update(l_.context, handle(e), state.data(), state.size(), tick);
  }
  void on_refresh(EntityId e, std::span<const std::uint8_t> state, std::uint32_t tick) override {
    if (l_.on_refresh != nullptr) l_.on_refresh(l_.context, handle(e), state.data(), state.size(), tick);
  }
  void on_exit(EntityId e, ExitKind kind, DespawnReason reason) override {
    if (l_.on_exit != nullptr) {
      l_.on_exit(l_.context, handle(e), static_cast<std::uint8_t>(kind), static_cast<std::uint8_t>(reason));
    }
  }
  void on_message(std::span<const std::uint8_t> payload, std::uint32_t tick) override {
    if (l_.on_message != nullptr) l_.on_message(l_.context, payload.data(), payload.size(), tick);
  }

 private:
  sl_mirror_listener l_;
};

}  // namespace

extern "C" {

// --- Status -----------------------------------------------------------------------------------

const char* sl_last_error(void) { return last_error.c_str(); }

const char* sl_status_name(sl_status status) {
  switch (status) {
    case SL_OK:
    case SL_ERR_INVALID_DEF:
    case SL_ERR_INVALID_ARGUMENT:
    case SL_ERR_NULL_HANDLE:
    case SL_ERR_STALE_HANDLE:
    case SL_ERR_NON_FINITE_POSITION:
    case SL_ERR_ENTITY_IS_VIEWER:
    case SL_ERR_MALFORMED_PACKET: return error_code_name(static_cast<ErrorCode>(status));
    case SL_ERR_OUT_OF_MEMORY: return "out_of_memory";
    case SL_ERR_INTERNAL: return "internal";
    default: return "unknown";
  }
}

const char* sl_version(void) {
  static const std::string version = std::to_string(kVersionMajor) + "." + std::to_string(kVersionMinor) +
                                     "." + std::to_string(kVersionPatch);
  return version.c_str();
}

const char* sl_spawn_reason_name(uint8_t reason) {
  return spawn_reason_name(static_cast<SpawnReason>(reason));
}
const char* sl_despawn_reason_name(uint8_t reason) {
  return despawn_reason_name(static_cast<DespawnReason>(reason));
}
const char* sl_rule_name(uint8_t rule) { return rule_name(static_cast<Rule>(rule)); }

// --- World ------------------------------------------------------------------------------------

void sl_world_def_default(sl_world_def* def) {
  if (def == nullptr) return;
  const WorldDef d = default_world_def();
  *def = {.enter_radius = d.enter_radius,
          .leave_radius = d.leave_radius,
          .cell_size = d.cell_size,
          .threads = d.threads,
          .crowd_cap = d.crowd_cap,
          .entity_capacity = d.entity_capacity,
          .client_capacity = d.client_capacity,
          .order_key = static_cast<uint8_t>(d.order_key)};
}

void sl_entity_def_default(sl_entity_def* def) {
  if (def == nullptr) return;
  const EntityDef d;
  *def = {.x = d.x,
          .z = d.z,
          .bound_radius = d.bound_radius,
          .radius_scale = d.radius_scale,
          .always_relevant = d.always_relevant,
          .presenter = d.presenter,
          .external_id = d.external_id,
          .created = d.created};
}

namespace {

// WorldDef::recording's sink over the C function the world was made with.
void record_to(void* context, std::span<const std::uint8_t> bytes) {
  const auto* w = static_cast<const sl_world*>(context);
  w->recording(w->recording_context, bytes.data(), bytes.size());
}

sl_status create_world(const sl_world_def* def, sl_recording_fn recording, void* recording_context,
                       sl_world** out, const char* call) {
  if (def == nullptr) return null_argument(call, "def");
  if (out == nullptr) return null_argument(call, "out");
  WorldDef d = default_world_def();
  d.enter_radius = def->enter_radius;
  d.leave_radius = def->leave_radius;
  d.cell_size = def->cell_size;
  d.threads = def->threads;
  d.crowd_cap = def->crowd_cap;
  d.entity_capacity = def->entity_capacity;
  d.client_capacity = def->client_capacity;
  d.order_key = static_cast<OrderKey>(def->order_key);
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  if (d.threads != 1) {
    return fail(SL_ERR_INVALID_DEF, "sl_world_def::threads is " + std::to_string(d.threads) +
                                        ": this WebAssembly build has no threads (must be 1)");
  }
#endif
  // The wrapper first: the World records its header to it as it is made.
  auto w = std::make_unique<sl_world>();
  w->recording = recording;
  w->recording_context = recording_context;
  if (recording != nullptr) d.recording = {&record_to, w.get()};
  Result<World> world = World::create(d);
  if (!world) return from(world.status());
  w->owned.emplace(std::move(*world));
  w->world = &*w->owned;
  *out = w.release();
  return done();
}

}  // namespace

sl_status sl_world_create(const sl_world_def* def, sl_world** out) {
  return guarded([&] { return create_world(def, nullptr, nullptr, out, "sl_world_create"); });
}

sl_status sl_world_create_recording(const sl_world_def* def, sl_recording_fn recording, void* context,
                                    sl_world** out) {
  return guarded([&] {
    if (recording == nullptr) return null_argument("sl_world_create_recording", "recording");
    return create_world(def, recording, context, out, "sl_world_create_recording");
  });
}

void sl_world_destroy(sl_world* world) {
  if (world != nullptr && world->owned) delete world;  // a replay's view goes with its replay
}

#define SL_NEED(pointer, call) \
  if ((pointer) == nullptr) return null_argument(call, #pointer)

sl_status sl_world_create_entity(sl_world* world, const sl_entity_def* def, sl_entity* out) {
  return guarded([&] {
    SL_NEED(world, "sl_world_create_entity");
    if (!world->owned) return read_only("sl_world_create_entity");
    SL_NEED(def, "sl_world_create_entity");
    SL_NEED(out, "sl_world_create_entity");
    EntityDef d;
    d.x = def->x;
    d.z = def->z;
    d.bound_radius = def->bound_radius;
    d.radius_scale = def->radius_scale;
    d.always_relevant = def->always_relevant;
    d.presenter = def->presenter;
    d.external_id = def->external_id;
    d.created = def->created;
    Result<EntityId> e = world->world->create_entity(d);
    if (!e) return from(e.status());
    *out = handle(*e);
    return done();
  });
}

sl_status sl_world_destroy_entity(sl_world* world, sl_entity entity) {
  return on_world(world, "sl_world_destroy_entity",
                  [&](World& w) { return w.destroy_entity(entity_of(entity)); });
}

sl_status sl_world_withdraw_entity(sl_world* world, sl_entity entity) {
  return on_world(world, "sl_world_withdraw_entity",
                  [&](World& w) { return w.withdraw_entity(entity_of(entity)); });
}

sl_status sl_world_external_id(const sl_world* world, sl_entity entity, uint64_t* out) {
  return guarded([&] {
    SL_NEED(world, "sl_world_external_id");
    SL_NEED(out, "sl_world_external_id");
    Result<std::uint64_t> id = world->world->external_id(entity_of(entity));
    if (!id) return from(id.status());
    *out = *id;
    return done();
  });
}

sl_entity sl_world_find_external(const sl_world* world, uint64_t external_id) {
  if (world == nullptr) return SL_NULL_HANDLE;
  return handle(world->world->find_external(external_id));
}

sl_status sl_world_set_position(sl_world* world, sl_entity entity, float x, float z) {
  return on_world(world, "sl_world_set_position",
                  [&](World& w) { return w.set_position(entity_of(entity), x, z); });
}

sl_status sl_world_set_positions(sl_world* world, const sl_entity* entities, const float* xs, const float* zs,
                                 size_t count) {
  return guarded([&] {
    SL_NEED(world, "sl_world_set_positions");
    if (!world->owned) return read_only("sl_world_set_positions");
    if (count != 0) {
      SL_NEED(entities, "sl_world_set_positions");
      SL_NEED(xs, "sl_world_set_positions");
      SL_NEED(zs, "sl_world_set_positions");
    }
    world->ids.resize(count);
    for (std::size_t i = 0; i < count; ++i) world->ids[i] = entity_of(entities[i]);
    return from(world->world->set_positions(world->ids, {xs, count}, {zs, count}));
  });
}

sl_status sl_world_position(const sl_world* world, sl_entity entity, float* x, float* z) {
  return guarded([&] {
    SL_NEED(world, "sl_world_position");
    SL_NEED(x, "sl_world_position");
    SL_NEED(z, "sl_world_position");
    Result<Position> p = world->world->position(entity_of(entity));
    if (!p) return from(p.status());
    *x = p->x;
    *z = p->z;
    return done();
  });
}

sl_status sl_world_teleport(sl_world* world, sl_entity entity, float x, float z) {
  return on_world(world, "sl_world_teleport", [&](World& w) { return w.teleport(entity_of(entity), x, z); });
}

sl_status sl_world_set_velocity(sl_world* world, sl_entity entity, float vx, float vz) {
  return on_world(world, "sl_world_set_velocity",
                  [&](World& w) { return w.set_velocity(entity_of(entity), vx, vz); });
}

sl_status sl_world_set_always_relevant(sl_world* world, sl_entity entity, bool always_relevant) {
  return on_world(world, "sl_world_set_always_relevant",
                  [&](World& w) { return w.set_always_relevant(entity_of(entity), always_relevant); });
}

sl_status sl_world_set_bound_radius(sl_world* world, sl_entity entity, float radius) {
  return on_world(world, "sl_world_set_bound_radius",
                  [&](World& w) { return w.set_bound_radius(entity_of(entity), radius); });
}

sl_status sl_world_attach(sl_world* world, sl_entity child, sl_entity parent) {
  return on_world(world, "sl_world_attach",
                  [&](World& w) { return w.attach(entity_of(child), entity_of(parent)); });
}

sl_status sl_world_detach(sl_world* world, sl_entity child) {
  return on_world(world, "sl_world_detach", [&](World& w) { return w.detach(entity_of(child)); });
}

bool sl_world_entity_valid(const sl_world* world, sl_entity entity) {
  return world != nullptr && world->world->is_valid(entity_of(entity));
}

uint32_t sl_world_entity_count(const sl_world* world) {
  return world == nullptr ? 0 : world->world->entity_count();
}

sl_status sl_world_create_client(sl_world* world, sl_entity viewer, sl_client* out) {
  return guarded([&] {
    SL_NEED(world, "sl_world_create_client");
    if (!world->owned) return read_only("sl_world_create_client");
    SL_NEED(out, "sl_world_create_client");
    Result<ClientId> c = world->world->create_client(entity_of(viewer));
    if (!c) return from(c.status());
    *out = handle(*c);
    return done();
  });
}

sl_status sl_world_destroy_client(sl_world* world, sl_client client) {
  return on_world(world, "sl_world_destroy_client",
                  [&](World& w) { return w.destroy_client(client_of(client)); });
}

sl_status sl_world_set_viewer(sl_world* world, sl_client client, sl_entity viewer) {
  return on_world(world, "sl_world_set_viewer",
                  [&](World& w) { return w.set_viewer(client_of(client), entity_of(viewer)); });
}

sl_status sl_world_add_origin(sl_world* world, sl_client client, sl_entity origin) {
  return on_world(world, "sl_world_add_origin",
                  [&](World& w) { return w.add_origin(client_of(client), entity_of(origin)); });
}

sl_status sl_world_remove_origin(sl_world* world, sl_client client, sl_entity origin) {
  return on_world(world, "sl_world_remove_origin",
                  [&](World& w) { return w.remove_origin(client_of(client), entity_of(origin)); });
}

sl_status sl_world_set_owner(sl_world* world, sl_entity entity, sl_client client) {
  return on_world(world, "sl_world_set_owner",
                  [&](World& w) { return w.set_owner(entity_of(entity), client_of(client)); });
}

sl_status sl_world_clear_owner(sl_world* world, sl_entity entity) {
  return on_world(world, "sl_world_clear_owner", [&](World& w) { return w.clear_owner(entity_of(entity)); });
}

sl_status sl_world_set_view_radius(sl_world* world, sl_client client, float enter_radius,
                                   float leave_radius) {
  return on_world(world, "sl_world_set_view_radius",
                  [&](World& w) { return w.set_view_radius(client_of(client), enter_radius, leave_radius); });
}

bool sl_world_client_valid(const sl_world* world, sl_client client) {
  return world != nullptr && world->world->is_valid(client_of(client));
}

uint32_t sl_world_client_count(const sl_world* world) {
  return world == nullptr ? 0 : world->world->client_count();
}

sl_status sl_world_tick(sl_world* world, sl_tick_stats* stats) {
  return guarded([&] {
    SL_NEED(world, "sl_world_tick");
    if (!world->owned) return read_only("sl_world_tick");
    const TickStats s = world->world->tick();
    if (stats != nullptr) *stats = stats_of(s);
    return done();
  });
}

uint64_t sl_world_tick_count(const sl_world* world) {
  return world == nullptr ? 0 : world->world->tick_count();
}

sl_status sl_world_interest_set(const sl_world* world, sl_client client, sl_entity* out, size_t capacity,
                                size_t* count) {
  return guarded([&] {
    SL_NEED(world, "sl_world_interest_set");
    Result<std::span<const EntityId>> set = world->world->interest_set(client_of(client));
    if (!set) return from(set.status());
    return copy_list(*set, out, capacity, count, "sl_world_interest_set",
                     [](EntityId e) { return handle(e); });
  });
}

sl_status sl_world_spawns(const sl_world* world, sl_client client, sl_spawn* out, size_t capacity,
                          size_t* count) {
  return guarded([&] {
    SL_NEED(world, "sl_world_spawns");
    Result<ClientStream> s = world->world->stream(client_of(client));
    if (!s) return from(s.status());
    return copy_list(s->spawns, out, capacity, count, "sl_world_spawns", [](const SpawnRecord& r) {
      return sl_spawn{
          .entity = handle(r.entity), .reason = static_cast<std::uint8_t>(r.reason), .created = r.created};
    });
  });
}

sl_status sl_world_updates(const sl_world* world, sl_client client, sl_entity* out, size_t capacity,
                           size_t* count) {
  return guarded([&] {
    SL_NEED(world, "sl_world_updates");
    Result<ClientStream> s = world->world->stream(client_of(client));
    if (!s) return from(s.status());
    return copy_list(s->updates, out, capacity, count, "sl_world_updates",
                     [](EntityId e) { return handle(e); });
  });
}

sl_status sl_world_despawns(const sl_world* world, sl_client client, sl_despawn* out, size_t capacity,
                            size_t* count) {
  return guarded([&] {
    SL_NEED(world, "sl_world_despawns");
    Result<ClientStream> s = world->world->stream(client_of(client));
    if (!s) return from(s.status());
    return copy_list(s->despawns, out, capacity, count, "sl_world_despawns", [](const DespawnRecord& r) {
      return sl_despawn{.entity = handle(r.entity), .reason = static_cast<std::uint8_t>(r.reason)};
    });
  });
}

sl_status sl_world_why(const sl_world* world, sl_client client, sl_entity entity, sl_why* out) {
  return guarded([&] {
    SL_NEED(world, "sl_world_why");
    SL_NEED(out, "sl_world_why");
    Result<Why> why = world->world->why(client_of(client), entity_of(entity));
    if (!why) return from(why.status());
    *out = {.held = why->held, .rule = static_cast<std::uint8_t>(why->rule), .root = handle(why->root)};
    return done();
  });
}

// --- History and replay -------------------------------------------------------------------------

sl_status sl_world_set_history_capacity(sl_world* world, sl_client client, uint32_t capacity) {
  return guarded([&] {
    SL_NEED(world, "sl_world_set_history_capacity");
    return from(world->world->set_history_capacity(client_of(client), capacity));
  });
}

sl_status sl_world_history(const sl_world* world, sl_client client, sl_entity entity, sl_history_entry* out,
                           size_t capacity, size_t* count) {
  return guarded([&] {
    SL_NEED(world, "sl_world_history");
    Result<std::vector<HistoryEntry>> h = entity == SL_NULL_HANDLE
                                              ? world->world->history(client_of(client))
                                              : world->world->history(client_of(client), entity_of(entity));
    if (!h) return from(h.status());
    return copy_list(std::span<const HistoryEntry>(*h), out, capacity, count, "sl_world_history",
                     [](const HistoryEntry& e) {
                       return sl_history_entry{.tick = e.tick,
                                               .entity = handle(e.entity),
                                               .spawned = e.spawned,
                                               .reason = e.spawned
                                                             ? static_cast<std::uint8_t>(e.spawn_reason)
                                                             : static_cast<std::uint8_t>(e.despawn_reason),
                                               .distance = e.distance,
                                               .rule_known = e.rule_known,
                                               .rule = static_cast<std::uint8_t>(e.rule)};
                     });
  });
}

void sl_replay_def_default(sl_replay_def* def) {
  if (def == nullptr) return;
  *def = {.threads = 0, .history_capacity = 0, .max_grid_cells = 0, .max_history_capacity = 0};
}

sl_status sl_replay_open(const uint8_t* bytes, size_t size, const sl_replay_def* def, sl_replay** out) {
  return guarded([&] {
    SL_NEED(def, "sl_replay_open");
    SL_NEED(out, "sl_replay_open");
    if (size != 0 && bytes == nullptr) return null_argument("sl_replay_open", "bytes (with a size)");
    if (def->history_capacity > kMaxHistoryEntries) {
      return fail(SL_ERR_INVALID_DEF, "sl_replay_def::history_capacity is " +
                                          std::to_string(def->history_capacity) + ": must be at most " +
                                          std::to_string(kMaxHistoryEntries));
    }
    auto r = std::make_unique<sl_replay>();
    r->history_capacity = def->history_capacity;
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
    const std::uint32_t threads = 1;  // this WebAssembly build has no threads: records do not depend on them
#else
    const std::uint32_t threads = def->threads;
#endif
    ReplayDef d{.threads = threads,
                .max_grid_cells = def->max_grid_cells,
                .max_history_capacity = def->max_history_capacity};
    if (r->history_capacity != 0) {
      d.on_client = [](void* context, World& world, ClientId c) {
        (void)world.set_history_capacity(c, static_cast<const sl_replay*>(context)->history_capacity);
      };
      d.on_client_context = r.get();
    }
    Result<Replay> replay = Replay::open(std::span<const std::uint8_t>(bytes, size), d);
    if (!replay) return from(replay.status());
    r->replay.emplace(std::move(*replay));
    r->view.world = &r->replay->world();
    *out = r.release();
    return done();
  });
}

void sl_replay_destroy(sl_replay* replay) { delete replay; }

sl_status sl_replay_next_tick(sl_replay* replay, sl_tick_stats* stats) {
  return guarded([&] {
    SL_NEED(replay, "sl_replay_next_tick");
    Result<TickStats> s = replay->replay->next_tick();
    if (!s) return from(s.status());
    if (stats != nullptr) *stats = stats_of(*s);
    return done();
  });
}

bool sl_replay_done(const sl_replay* replay) { return replay == nullptr || replay->replay->done(); }

const sl_world* sl_replay_world(const sl_replay* replay) {
  return replay == nullptr ? nullptr : &replay->view;
}

// --- Streams ----------------------------------------------------------------------------------

bool sl_stream_bits(sl_stream* stream, uint32_t* value, int bits) {
  return stream != nullptr && value != nullptr && stream_of(stream).serialize_bits(*value, bits);
}

bool sl_stream_uint(sl_stream* stream, uint32_t* value, uint32_t min, uint32_t max) {
  return stream != nullptr && value != nullptr && stream_of(stream).serialize_uint(*value, min, max);
}

bool sl_stream_int(sl_stream* stream, int32_t* value, int32_t min, int32_t max) {
  return stream != nullptr && value != nullptr && stream_of(stream).serialize_int(*value, min, max);
}

bool sl_stream_bool(sl_stream* stream, bool* value) {
  return stream != nullptr && value != nullptr && stream_of(stream).serialize_bool(*value);
}

bool sl_stream_float(sl_stream* stream, float* value) {
  return stream != nullptr && value != nullptr && stream_of(stream).serialize_float(*value);
}

bool sl_stream_quantized(sl_stream* stream, float* value, float min, float max, float resolution) {
  return stream != nullptr && value != nullptr &&
         stream_of(stream).serialize_quantized(*value, min, max, resolution);
}

sl_status sl_quantized_range_create(float min, float max, float resolution, sl_quantized_range** out) {
  return guarded([&] {
    SL_NEED(out, "sl_quantized_range_create");
    *out = nullptr;
    Result<QuantizedRange> range = QuantizedRange::make(min, max, resolution);
    if (!range) return from(range.status());
    *out = reinterpret_cast<sl_quantized_range*>(new QuantizedRange(*range));
    return done();
  });
}

void sl_quantized_range_destroy(sl_quantized_range* range) {
  delete reinterpret_cast<QuantizedRange*>(range);
}

bool sl_stream_quantized_range(sl_stream* stream, float* value, const sl_quantized_range* range) {
  return stream != nullptr && value != nullptr && range != nullptr &&
         stream_of(stream).serialize_quantized(*value, *reinterpret_cast<const QuantizedRange*>(range));
}

bool sl_stream_bytes(sl_stream* stream, uint8_t* data, size_t count) {
  return stream != nullptr && (data != nullptr || count == 0) &&
         stream_of(stream).serialize_bytes(data, count);
}

bool sl_stream_entity(sl_stream* stream, sl_entity* entity) {
  if (stream == nullptr || entity == nullptr) return false;
  EntityId e = entity_of(*entity);
  if (!stream_of(stream).serialize_entity(e)) return false;
  *entity = handle(e);
  return true;
}

bool sl_stream_is_reading(const sl_stream* stream) {
  return stream != nullptr && stream_of(stream).reading();
}

bool sl_stream_ok(const sl_stream* stream) { return stream != nullptr && stream_of(stream).ok(); }

const char* sl_stream_error(const sl_stream* stream) {
  if (stream == nullptr) return "the stream is NULL";
  const char* error = stream_of(stream).error();
  return error == nullptr ? "" : error;
}

sl_status sl_stream_reader_create(const uint8_t* bytes, size_t size, sl_stream** out) {
  return guarded([&] {
    if (bytes == nullptr && size != 0) return null_argument("sl_stream_reader_create", "bytes");
    SL_NEED(out, "sl_stream_reader_create");
    *out = reinterpret_cast<sl_stream*>(new Stream(Stream::reader({bytes, size})));
    return done();
  });
}

bool sl_stream_rest_is_zero(const sl_stream* stream) {
  return stream != nullptr && stream_of(stream).rest_is_zero();
}

void sl_stream_destroy(sl_stream* stream) { delete reinterpret_cast<Stream*>(stream); }

// --- Replicator -------------------------------------------------------------------------------

void sl_replicator_def_default(sl_replicator_def* def) {
  if (def == nullptr) return;
  const ReplicatorDef d = default_replicator_def();
  *def = {.serialize = nullptr,
          .serialize_context = nullptr,
          .delivery = d.delivery == Delivery::reliable ? SL_DELIVERY_RELIABLE : SL_DELIVERY_UNRELIABLE,
          .tick_seconds = d.tick_seconds,
          .packet_bytes = d.packet_bytes,
          .budget_bytes = d.budget_bytes,
          .entry_budget_bytes = d.entry_budget_bytes,
          .delta_updates = d.delta_updates,
          .payload_source = nullptr,
          .payload_source_context = nullptr};
}

sl_status sl_replicator_create(sl_world* world, const sl_replicator_def* def, sl_replicator** out) {
  return guarded([&] {
    SL_NEED(world, "sl_replicator_create");
    SL_NEED(def, "sl_replicator_create");
    SL_NEED(out, "sl_replicator_create");
    if (def->serialize == nullptr) {
      return fail(SL_ERR_INVALID_DEF, "sl_replicator_def::serialize is NULL: a serializer is required");
    }
    if (def->delivery != SL_DELIVERY_RELIABLE && def->delivery != SL_DELIVERY_UNRELIABLE) {
      return fail(SL_ERR_INVALID_DEF, "sl_replicator_def::delivery is " + std::to_string(def->delivery) +
                                          ": must be SL_DELIVERY_RELIABLE (0) or SL_DELIVERY_UNRELIABLE (1)");
    }
    // The C++ Replicator keeps the serializer's context: it points at the wrapper, made first.
    auto wrapper = std::make_unique<sl_replicator>(sl_replicator{
        {}, def->serialize, def->serialize_context, def->payload_source, def->payload_source_context});
    ReplicatorDef d = default_replicator_def();
    d.serialize = serialize_through_c;
    d.serialize_context = wrapper.get();
    d.delivery = def->delivery == SL_DELIVERY_RELIABLE ? Delivery::reliable : Delivery::unreliable;
    d.tick_seconds = def->tick_seconds;
    d.packet_bytes = def->packet_bytes;
    d.budget_bytes = def->budget_bytes;
    d.entry_budget_bytes = def->entry_budget_bytes;
    d.delta_updates = def->delta_updates;
    if (def->payload_source != nullptr) {
      d.payload_source = source_through_c;
      d.payload_source_context = wrapper.get();
    }
    Result<Replicator> r = Replicator::create(*world->world, d);
    if (!r) return from(r.status());
    wrapper->replicator.emplace(std::move(*r));
    *out = wrapper.release();
    return done();
  });
}

void sl_replicator_destroy(sl_replicator* replicator) { delete replicator; }

sl_status sl_replicator_send(sl_replicator* replicator) {
  return guarded([&] {
    SL_NEED(replicator, "sl_replicator_send");
    return from(replicator->replicator->send());
  });
}

sl_status sl_replicator_packet_count(const sl_replicator* replicator, sl_client client, size_t* count) {
  return guarded([&] {
    SL_NEED(replicator, "sl_replicator_packet_count");
    SL_NEED(count, "sl_replicator_packet_count");
    auto packets = replicator->replicator->packets(client_of(client));
    if (!packets) return from(packets.status());
    *count = packets->size();
    return done();
  });
}

sl_status sl_replicator_packet(const sl_replicator* replicator, sl_client client, size_t index,
                               const uint8_t** bytes, size_t* size) {
  return guarded([&] {
    SL_NEED(replicator, "sl_replicator_packet");
    SL_NEED(bytes, "sl_replicator_packet");
    SL_NEED(size, "sl_replicator_packet");
    auto packets = replicator->replicator->packets(client_of(client));
    if (!packets) return from(packets.status());
    if (index >= packets->size()) {
      return fail(SL_ERR_INVALID_ARGUMENT, "sl_replicator_packet: index " + std::to_string(index) +
                                               " is beyond the client's " + std::to_string(packets->size()) +
                                               " packets");
    }
    *bytes = (*packets)[index].data();
    *size = (*packets)[index].size();
    return done();
  });
}

sl_status sl_replicator_receive_ack(sl_replicator* replicator, sl_client client, const uint8_t* bytes,
                                    size_t size) {
  return guarded([&] {
    SL_NEED(replicator, "sl_replicator_receive_ack");
    if (bytes == nullptr && size != 0) return null_argument("sl_replicator_receive_ack", "bytes");
    return from(replicator->replicator->receive_ack(client_of(client), {bytes, size}));
  });
}

sl_status sl_replicator_pending(const sl_replicator* replicator, sl_client client, uint32_t* pending) {
  return guarded([&] {
    SL_NEED(replicator, "sl_replicator_pending");
    SL_NEED(pending, "sl_replicator_pending");
    Result<std::uint32_t> p = replicator->replicator->pending(client_of(client));
    if (!p) return from(p.status());
    *pending = *p;
    return done();
  });
}

sl_status sl_replicator_set_priority(sl_replicator* replicator, sl_entity entity, float priority) {
  return guarded([&] {
    SL_NEED(replicator, "sl_replicator_set_priority");
    return from(replicator->replicator->set_priority(entity_of(entity), priority));
  });
}

sl_status sl_replicator_send_message(sl_replicator* replicator, sl_client client, const uint8_t* bytes,
                                     size_t size) {
  return guarded([&] {
    SL_NEED(replicator, "sl_replicator_send_message");
    if (bytes == nullptr && size != 0) return null_argument("sl_replicator_send_message", "bytes");
    return from(replicator->replicator->send_message(client_of(client), {bytes, size}));
  });
}

void sl_replicator_get_stats(const sl_replicator* replicator, sl_send_stats* stats) {
  if (replicator == nullptr || stats == nullptr) return;
  const SendStats& s = replicator->replicator->stats();
  *stats = {.packets = s.packets,
            .bytes = s.bytes,
            .spawns = s.spawns,
            .updates = s.updates,
            .despawns = s.despawns,
            .resends = s.resends,
            .pending = s.pending,
            .serialize_calls = s.serialize_calls,
            .serialize_errors = s.serialize_errors,
            .sourced_payloads = s.sourced_payloads};
}

// --- ClientMirror -----------------------------------------------------------------------------

void sl_mirror_def_default(sl_mirror_def* def) {
  if (def == nullptr) return;
  const MirrorDef d = default_mirror_def();
  *def = {.delivery = d.delivery == Delivery::reliable ? SL_DELIVERY_RELIABLE : SL_DELIVERY_UNRELIABLE,
          .history = d.history,
          .max_entities = d.max_entities};
}

sl_status sl_mirror_create(const sl_mirror_def* def, sl_mirror** out) {
  return guarded([&] {
    SL_NEED(def, "sl_mirror_create");
    SL_NEED(out, "sl_mirror_create");
    if (def->delivery != SL_DELIVERY_RELIABLE && def->delivery != SL_DELIVERY_UNRELIABLE) {
      return fail(SL_ERR_INVALID_DEF, "sl_mirror_def::delivery is " + std::to_string(def->delivery) +
                                          ": must be SL_DELIVERY_RELIABLE (0) or SL_DELIVERY_UNRELIABLE (1)");
    }
    MirrorDef d = default_mirror_def();
    d.delivery = def->delivery == SL_DELIVERY_RELIABLE ? Delivery::reliable : Delivery::unreliable;
    d.history = def->history;
    d.max_entities = def->max_entities;
    Result<ClientMirror> m = ClientMirror::create(d);
    if (!m) return from(m.status());
    *out = new sl_mirror{std::move(*m)};
    return done();
  });
}

void sl_mirror_destroy(sl_mirror* mirror) { delete mirror; }

sl_status sl_mirror_receive(sl_mirror* mirror, const uint8_t* bytes, size_t size,
                            const sl_mirror_listener* listener) {
  return guarded([&] {
    SL_NEED(mirror, "sl_mirror_receive");
    if (bytes == nullptr && size != 0) return null_argument("sl_mirror_receive", "bytes");
    if (listener == nullptr) return from(mirror->mirror.receive({bytes, size}));
    CListener relay(*listener);
    return from(mirror->mirror.receive({bytes, size}, &relay));
  });
}

bool sl_mirror_holds(const sl_mirror* mirror, sl_entity entity) {
  return mirror != nullptr && mirror->mirror.holds(entity_of(entity));
}

sl_status sl_mirror_held(const sl_mirror* mirror, sl_entity* out, size_t capacity, size_t* count) {
  return guarded([&] {
    SL_NEED(mirror, "sl_mirror_held");
    const std::vector<EntityId> held = mirror->mirror.held();
    return copy_list(std::span<const EntityId>(held), out, capacity, count, "sl_mirror_held",
                     [](EntityId e) { return handle(e); });
  });
}

sl_status sl_mirror_state(const sl_mirror* mirror, sl_entity entity, const uint8_t** bytes, size_t* size,
                          int* part, uint32_t* tick) {
  return guarded([&] {
    SL_NEED(mirror, "sl_mirror_state");
    SL_NEED(bytes, "sl_mirror_state");
    SL_NEED(size, "sl_mirror_state");
    const EntityId e = entity_of(entity);
    if (!mirror->mirror.holds(e)) return from(mirror->mirror.history(e).status());  // not held: its error
    const std::optional<Snapshot> latest = mirror->mirror.snapshot(e);
    if (!latest) {
      return fail(SL_ERR_INVALID_ARGUMENT, "sl_mirror_state: the mirror holds no state of entity " +
                                               std::to_string(SL_HANDLE_INDEX(entity)));
    }
    *bytes = latest->payload.data();
    *size = latest->payload.size();
    if (part != nullptr) *part = latest->part == StatePart::full ? SL_PART_FULL : SL_PART_UPDATE;
    if (tick != nullptr) *tick = latest->tick;
    return done();
  });
}

sl_status sl_mirror_ack(const sl_mirror* mirror, uint8_t* out, size_t capacity) {
  return guarded([&] {
    SL_NEED(mirror, "sl_mirror_ack");
    SL_NEED(out, "sl_mirror_ack");
    if (capacity < kAckBytes) {
      return fail(SL_ERR_INVALID_ARGUMENT, "sl_mirror_ack: capacity is " + std::to_string(capacity) +
                                               ": an ack takes " + std::to_string(kAckBytes) + " bytes");
    }
    encode_ack(mirror->mirror.ack(), std::span<std::uint8_t, kAckBytes>(out, kAckBytes));
    return done();
  });
}

void sl_mirror_interest(const sl_mirror* mirror, sl_interest* interest) {
  if (mirror == nullptr || interest == nullptr) return;
  const InterestStatus s = mirror->mirror.interest();
  *interest = {.culling = s.culling, .radius = s.radius, .pending = s.pending};
}

void sl_mirror_get_stats(const sl_mirror* mirror, sl_mirror_stats* stats) {
  if (mirror == nullptr || stats == nullptr) return;
  const MirrorStats& s = mirror->mirror.stats();
  *stats = {.packets = s.packets,
            .rejected = s.rejected,
            .enters = s.enters,
            .updates = s.updates,
            .exits = s.exits,
            .messages = s.messages,
            .anomalies = s.anomalies};
}

}  // extern "C"
