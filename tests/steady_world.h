// The steady worlds of the allocation and golden-hash tests: a seeded jittering walk of 2000
// entities, every 10th a client's viewer, with the whole relevance model available.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "jitter_walk.h"
#include "sightline/serialize.h"
#include "sightline/world.h"

namespace sightline::testing {

// A seeded jittering walk with hysteresis and the preset tiers; every 10th entity is a client's
// viewer and every 500th (from 7) always relevant.
struct SteadyWorldDef {
  float width = 0.0f;
  float height = 0.0f;
  float enter_radius = 0.0f;
  float leave_radius = 0.0f;
  std::uint32_t crowd_cap = 0;
  RecordingSink recording{};  ///< WorldDef::recording
};

// The brief's arena: 2000 entities in 200 x 200, R = 10, L = 12.5, 200 clients (~16 per R-disc).
constexpr SteadyWorldDef kArena{200.0f, 200.0f, 10.0f, 12.5f};
// Denser and faster-changing: 2000 entities in 120 x 75, R = 4, L = 5; at the walk's speed
// members cross R far more often, so spawns and despawns run at a high steady rate.
constexpr SteadyWorldDef kDense{120.0f, 75.0f, 4.0f, 5.0f};
// The arena with a crowd cap under its ~16 per R-disc, so the cap selects every tick.
constexpr SteadyWorldDef kCappedArena{200.0f, 200.0f, 10.0f, 12.5f, 6};

struct SteadyWorld {
  /// With `keys`, entities carry Area, User and Global keys and every client has area
  /// subscriptions with send rates and a bypass team channel, all set before the first tick.
  /// With `structure` besides: spaces (a broadcast arena whose client count crosses its
  /// threshold, and a room that never asked for culling, under a drill every other 10 ticks),
  /// attachment chains, presenters, owners, extra origins and teleports every tick; walls, look-ahead
  /// and a visibility filter.
  explicit SteadyWorld(const SteadyWorldDef& steady_def, bool keys = false, bool with_structure = false,
                       std::uint32_t threads = 1)
      : structure(with_structure) {
    scenarios::JitterWalkDef walk_def;
    walk_def.entities = 2000;
    walk_def.width = steady_def.width;
    walk_def.height = steady_def.height;
    walk_def.seed = 42;
    walk.emplace(walk_def);
    WorldDef def = default_world_def();
    def.enter_radius = steady_def.enter_radius;
    def.leave_radius = steady_def.leave_radius;
    def.crowd_cap = steady_def.crowd_cap;
    def.recording = steady_def.recording;
    def.tiers = default_distance_tiers();
    def.threads = threads;
    def.thread_min_work = 0;  // the pool's buffers are what a threaded run must not grow
    world.emplace(std::move(World::create(def).value()));
    for (std::size_t i = 0; i < walk->xs().size(); ++i) {
      ids.push_back(*world->create_entity({walk->xs()[i], walk->zs()[i], i % 500 == 7}));
    }
    for (std::size_t i = 0; i < ids.size(); i += 10) clients.push_back(*world->create_client(ids[i]));
    if (keys) set_keys();
    if (structure) set_structure();
  }

  void set_structure() {
    SpaceDef arena_def;
    arena_def.culling = Culling::on;
    // The arena holds 20 viewers: the mover below takes it to 21 and back, across the threshold.
    arena_def.broadcast_threshold = 20;
    arena_def.broadcast_margin = 0;
    arena = *world->create_space(arena_def);
    room = *world->create_space({});
    for (std::size_t i = 0; i < ids.size(); ++i) {
      Status status;
      // Keys belong to roots: a child gives its own up first.
      if (i % 20 == 3 || i % 20 == 4) status = world->set_global_interest_key(ids[i]);
      if (status.ok() && i % 20 == 3) status = world->attach(ids[i], ids[i + 1]);
      if (status.ok() && i % 20 == 4) status = world->attach(ids[i], ids[i + 1]);
      if (status.ok() && i % 250 == 9) status = world->set_presenter(ids[i], true);
      if (status.ok() && i % 100 == 11)
        status = world->set_owner(ids[i], clients[(i / 100) % clients.size()]);
      // Entities 400..599 live in the arena, 600..699 in the room (their viewers with them).
      if (status.ok() && i >= 400 && i < 600 && world->parent(ids[i])->is_null())
        status = world->set_space(ids[i], arena);
      if (status.ok() && i >= 600 && i < 700 && world->parent(ids[i])->is_null())
        status = world->set_space(ids[i], room);
      if (!status.ok()) {
        std::fprintf(stderr, "entity %zu: %s\n", i, status.message().c_str());
        std::abort();
      }
    }
    for (std::size_t c = 0; c < clients.size(); c += 7) {
      if (!world->add_origin(clients[c], ids[(c * 37 + 5) % ids.size()]).ok()) std::abort();
    }
    // Sight in the default space: a lattice of short walls, look-ahead, velocities, a filter.
    std::vector<WallSegment> walls;
    for (float x = 0.0f; x < 200.0f; x += 20.0f) {
      for (float z = 0.0f; z < 200.0f; z += 20.0f) walls.push_back({x, z, x + 6.0f, z + 2.0f});
    }
    if (!world->set_walls(world->default_space(), walls).ok()) std::abort();
    for (std::size_t i = 0; i < ids.size(); i += 3) {
      if (!world->set_velocity(ids[i], static_cast<float>(i % 7) - 3.0f, 1.5f).ok()) std::abort();
    }
    for (std::size_t c = 0; c < clients.size(); ++c) {
      if (!world->set_look_ahead(clients[c], 0.1f * static_cast<float>(c % 3)).ok()) std::abort();
    }
    world->set_visibility_filter(
        [](void*, ClientId client, EntityId entity) { return (client.index + entity.index) % 17 != 0; },
        nullptr);
  }

  // Between ticks: a few teleports, one viewer in and out of the arena (its count crosses the
  // threshold), the room's drill on and off.
  void move_structure() {
    ++structure_ticks;
    for (std::size_t k = 0; k < 5; ++k) {
      const std::size_t i = (structure_ticks * 131 + k * 977) % ids.size();
      if (!world->teleport(ids[i], walk->xs()[(i + 1) % ids.size()], walk->zs()[(i + 1) % ids.size()]).ok()) {
        std::abort();
      }
    }
    const EntityId mover = ids[10];
    if (!world->set_space(mover, structure_ticks % 3 == 0 ? arena : world->default_space()).ok())
      std::abort();
    const Status drill = structure_ticks % 20 < 10 ? world->set_culling_drill(room, 10.0f, 12.0f)
                                                   : world->clear_culling_drill(room);
    if (!drill.ok()) std::abort();
  }

  void set_keys() {
    for (std::size_t i = 0; i < ids.size(); ++i) {
      Status status;
      if (i % 50 == 1) {
        status = world->set_user_interest_key(ids[i], 1 + i % 4);  // team channels 1..4
      } else if (i % 3 == 0) {
        status = world->set_area_interest_key(ids[i], i % 5);  // zones 0..4
      }
      if (!status.ok()) std::abort();
    }
    for (std::size_t c = 0; c < clients.size(); ++c) {
      const KeySubscription zones[] = {{c % 5, 1, false}, {(c + 1) % 5, 3, false}, {(c + 1) % 5, 2, false}};
      if (!world->set_area_subscriptions(clients[c], zones).ok()) std::abort();
      if (!world->add_user_subscription(clients[c], {1 + c % 4, 2, true}).ok()) std::abort();
    }
  }

  // Moves every entity, ticks, and reads every client's stream and set.
  std::uint64_t step() {
    walk->step();
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (!world->set_position(ids[i], walk->xs()[i], walk->zs()[i]).ok()) std::abort();
    }
    if (structure) move_structure();
    const TickStats stats = world->tick();
    last_stats = stats;
    std::uint64_t records = stats.spawns + stats.updates + stats.despawns;
    if (structure) broadcast_switches += world->space_state(arena)->broadcasting != was_broadcasting;
    if (structure) was_broadcasting = world->space_state(arena)->broadcasting;
    for (const ClientId client : world->clients()) {
      const Result<ClientStream> stream = world->stream(client);
      const Result<std::span<const EntityId>> set = world->interest_set(client);
      if (!stream.ok() || !set.ok()) std::abort();
      for (const SpawnRecord& s : stream->spawns) records += s.entity.index;
      for (const EntityId u : stream->updates) records += u.index;
      for (const DespawnRecord& d : stream->despawns) records += d.entity.index;
      records += set->size();
    }
    return records;
  }

  std::optional<scenarios::JitterWalk> walk;
  std::optional<World> world;
  std::vector<EntityId> ids;
  std::vector<ClientId> clients;
  TickStats last_stats;
  bool structure = false;
  std::uint64_t structure_ticks = 0;
  std::uint64_t broadcast_switches = 0;
  bool was_broadcasting = false;
  SpaceId arena;
  SpaceId room;
};

/// The steady worlds' entity state, for a Replicator over one (context: the World): the position
/// to a centimetre in every part, and a health in full states.
inline bool serialize_steady_state(Stream& s, EntityId e, StatePart part, void* context) {
  const World& world = *static_cast<const World*>(context);
  Position p = *world.position(e);
  if (!s.serialize_quantized(p.x, -1000.0f, 1000.0f, 0.01f)) return false;
  if (!s.serialize_quantized(p.z, -1000.0f, 1000.0f, 0.01f)) return false;
  std::uint32_t health = e.index % 101;
  return part == StatePart::update || s.serialize_uint(health, 0, 100);
}

}  // namespace sightline::testing
