#include "brute_force_oracle.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "../src/occluder_grid.h"
#include "sightline/world.h"

namespace sightline::testing {

std::string to_string(EntityId id) {
  return "entity " + std::to_string(id.index) + ":" + std::to_string(id.generation);
}

std::string to_string(ClientId id) {
  return "client " + std::to_string(id.index) + ":" + std::to_string(id.generation);
}

std::string to_string(SpaceId id) {
  return "space " + std::to_string(id.index) + ":" + std::to_string(id.generation);
}

std::string to_string(Rule rule) { return rule_name(rule); }

// Any other value is printed as a number, so a reason this model never produces reads clearly.
std::string to_string(SpawnReason reason) { return spawn_reason_name(reason); }

std::string to_string(DespawnReason reason) { return despawn_reason_name(reason); }

namespace {

bool is_user_key(std::uint64_t stored) { return stored != 0 && (stored & 1u) == 0; }

std::string describe_float(float v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.9g", static_cast<double>(v));
  return buffer;
}

// The default space's settings: it culls at the World's radii and never broadcasts.
SpaceDef default_space_settings() {
  SpaceDef def;
  def.culling = Culling::on;
  def.broadcast_threshold = 0;
  return def;
}

}  // namespace

BruteForceOracle::BruteForceOracle(float enter_radius, float leave_radius, std::vector<DistanceTier> tiers,
                                   SpaceId default_space)
    : enter_radius_(enter_radius),
      leave_radius_(leave_radius),
      tiers_(std::move(tiers)),
      default_space_(default_space) {
  Space space;
  space.id = default_space;
  space.def = default_space_settings();
  settle(space, 0);
  spaces_[default_space.index] = space;
  last_space_generation_[default_space.index] = default_space.generation;
}

const BruteForceOracle::Entity* BruteForceOracle::live(EntityId id) const {
  const auto it = entities_.find(id.index);
  if (it == entities_.end() || !it->second.alive || it->second.id != id) return nullptr;
  return &it->second;
}

const BruteForceOracle::Space* BruteForceOracle::live_space(SpaceId id) const {
  const auto it = spaces_.find(resolved(id).index);
  if (it == spaces_.end() || it->second.id != resolved(id)) return nullptr;
  return &it->second;
}

const BruteForceOracle::Entity& BruteForceOracle::root_of(const Entity& e) const {
  const Entity* at = &e;
  while (!at->parent.is_null()) at = live(at->parent);
  return *at;
}

std::string BruteForceOracle::create_entity(EntityId id, float x, float z, bool always_relevant,
                                            float bound_radius, SpaceId space, bool presenter,
                                            std::uint64_t external_id, bool created) {
  if (id.is_null()) return "create_entity returned a null handle";
  if (entities_.contains(id.index)) {
    return "create_entity reused slot " + std::to_string(id.index) + " before a tick released it (" +
           to_string(id) + ")";
  }
  if (const auto it = last_generation_.find(id.index);
      it != last_generation_.end() && id.generation <= it->second) {
    return "create_entity reused slot " + std::to_string(id.index) + " without a new generation (" +
           to_string(id) + ", previous generation " + std::to_string(it->second) + ")";
  }
  if (live_space(space) == nullptr) return "create_entity accepted " + to_string(space) + ", not live";
  if (external_id == 0 && order_key_ == OrderKey::external) return "create_entity accepted external id 0";
  if (const EntityId holder = find_external(external_id); !holder.is_null()) {
    return "create_entity accepted external id " + std::to_string(external_id) + ", held by " +
           to_string(holder);
  }
  last_generation_[id.index] = id.generation;
  Entity entity;
  entity.id = id;
  entity.x = x;
  entity.z = z;
  entity.always = always_relevant;
  entity.bound = bound_radius;
  entity.space = resolved(space);
  entity.presenter = presenter;
  entity.created = created;
  entity.external = external_id;
  entities_[id.index] = entity;
  return {};
}

EntityId BruteForceOracle::find_external(std::uint64_t id) const {
  if (id == 0) return {};
  for (const auto& [index, e] : entities_) {
    if (e.alive && e.external == id) return e.id;
  }
  return {};
}

std::uint64_t BruteForceOracle::external_id(EntityId id) const {
  const Entity* e = live(id);
  return e == nullptr ? 0 : e->external;
}

std::string BruteForceOracle::withdraw_entity(EntityId id) {
  Entity* entity = live_mut(id);
  if (entity == nullptr) return "withdraw_entity accepted " + to_string(id) + ", not live";
  if (is_viewer(id)) return "withdraw_entity accepted " + to_string(id) + ", a viewer";
  entity->withdrawn = true;
  return destroy_entity(id);
}

std::string BruteForceOracle::destroy_entity(EntityId id) {
  Entity* entity = live_mut(id);
  if (entity == nullptr) return "destroy_entity accepted " + to_string(id) + ", not live";
  if (is_viewer(id)) return "destroy_entity accepted " + to_string(id) + ", a viewer";
  entity->destroyed_depth = depth(id);
  entity->alive = false;
  entity->always = false;
  entity->owner = ClientId{};
  entity->parent = EntityId{};
  // Destroying an entity removes it from every client's extra origins, at once, and makes its
  // children roots at their own positions.
  for (auto& [index, c] : clients_) {
    if (std::erase(c.origins, id) > 0) c.origins_changed = true;  // destroying an extra origin
  }
  for (auto& [index, other] : entities_) {
    if (other.alive && other.parent == id) other.parent = EntityId{};
  }
  return {};
}

std::string BruteForceOracle::set_position(EntityId id, float x, float z) {
  Entity* entity = live_mut(id);
  if (entity == nullptr) return "set_position accepted " + to_string(id) + ", not live";
  entity->x = x;
  entity->z = z;
  return {};
}

std::string BruteForceOracle::teleport(EntityId id, float x, float z) {
  Entity* entity = live_mut(id);
  if (entity == nullptr) return "teleport accepted " + to_string(id) + ", not live";
  entity->x = x;
  entity->z = z;
  entity->teleported = true;
  return {};
}

std::string BruteForceOracle::set_always_relevant(EntityId id, bool always_relevant) {
  Entity* entity = live_mut(id);
  if (entity == nullptr) return "set_always_relevant accepted " + to_string(id) + ", not live";
  entity->always = always_relevant;
  return {};
}

std::string BruteForceOracle::set_presenter(EntityId id, bool presenter) {
  Entity* entity = live_mut(id);
  if (entity == nullptr) return "set_presenter accepted " + to_string(id) + ", not live";
  if (!entity->parent.is_null()) return "set_presenter accepted attached " + to_string(id);
  entity->presenter = presenter;
  return {};
}

std::string BruteForceOracle::create_client(ClientId id, EntityId viewer) {
  if (id.is_null()) return "create_client returned a null handle";
  if (live(viewer) == nullptr) return "create_client accepted viewer " + to_string(viewer);
  if (clients_.contains(id.index)) return "create_client reused live slot of " + to_string(id);
  Client c;
  c.id = id;
  c.viewer = viewer;
  clients_[id.index] = c;
  return {};
}

std::string BruteForceOracle::destroy_client(ClientId id) {
  const auto it = clients_.find(id.index);
  if (it == clients_.end() || it->second.id != id) {
    return "destroy_client accepted " + to_string(id) + ", not live";
  }
  clients_.erase(it);
  // Destroying the client ends every ownership it held.
  for (auto& [index, entity] : entities_) {
    if (entity.owner == id) entity.owner = ClientId{};
  }
  return {};
}

std::string BruteForceOracle::set_viewer(ClientId id, EntityId viewer) {
  Client* c = client(id);
  if (c == nullptr) return "set_viewer accepted " + to_string(id) + ", not live";
  if (live(viewer) == nullptr) return "set_viewer accepted viewer " + to_string(viewer);
  c->viewer = viewer;
  c->origins_changed = true;
  // The viewer is never an extra origin: becoming the viewer removes it from them.
  std::erase(c->origins, viewer);
  return {};
}

void BruteForceOracle::set_radii(float enter_radius, float leave_radius) {
  enter_radius_ = enter_radius;
  leave_radius_ = leave_radius;
}

std::string BruteForceOracle::set_bound_radius(EntityId id, float radius) {
  Entity* entity = live_mut(id);
  if (entity == nullptr) return "set_bound_radius accepted " + to_string(id) + ", not live";
  entity->bound = radius;
  return {};
}

std::string BruteForceOracle::set_radius_scale(EntityId id, float scale) {
  Entity* entity = live_mut(id);
  if (entity == nullptr) return "set_radius_scale accepted " + to_string(id) + ", not live";
  entity->scale = scale;
  return {};
}

std::string BruteForceOracle::set_view_radius(ClientId id, float enter_radius, float leave_radius) {
  Client* c = client(id);
  if (c == nullptr) return "set_view_radius accepted " + to_string(id) + ", not live";
  c->view_enter = enter_radius;
  c->view_leave = leave_radius;
  return {};
}

std::string BruteForceOracle::set_owner(EntityId id, ClientId owner) {
  Entity* entity = live_mut(id);
  if (entity == nullptr) return "set_owner accepted " + to_string(id) + ", not live";
  if (client(owner) == nullptr) return "set_owner accepted " + to_string(owner) + ", not live";
  entity->owner = owner;
  return {};
}

std::string BruteForceOracle::clear_owner(EntityId id) {
  Entity* entity = live_mut(id);
  if (entity == nullptr) return "clear_owner accepted " + to_string(id) + ", not live";
  entity->owner = ClientId{};
  return {};
}

std::string BruteForceOracle::add_origin_refusal(ClientId id, EntityId origin) const {
  const Client* c = client(id);
  if (c == nullptr || live(origin) == nullptr) return {};
  if (c->viewer == origin) return to_string(origin) + " is the viewer of " + to_string(id);
  if (is_origin(id, origin)) return to_string(origin) + " is already an origin of " + to_string(id);
  if (c->origins.size() >= kMaxOrigins) return to_string(id) + " already has kMaxOrigins extra origins";
  return {};
}

std::string BruteForceOracle::add_origin(ClientId id, EntityId origin) {
  Client* c = client(id);
  if (c == nullptr) return "add_origin accepted " + to_string(id) + ", not live";
  if (live(origin) == nullptr) return "add_origin accepted " + to_string(origin) + ", not live";
  if (std::string why = add_origin_refusal(id, origin); !why.empty()) return "add_origin accepted: " + why;
  c->origins.push_back(origin);
  std::sort(c->origins.begin(), c->origins.end(), [](EntityId a, EntityId b) { return a.index < b.index; });
  c->origins_changed = true;
  return {};
}

std::string BruteForceOracle::remove_origin(ClientId id, EntityId origin) {
  Client* c = client(id);
  if (c == nullptr) return "remove_origin accepted " + to_string(id) + ", not live";
  if (!is_origin(id, origin)) {
    return "remove_origin accepted " + to_string(origin) + ", not an origin of " + to_string(id);
  }
  std::erase(c->origins, origin);
  c->origins_changed = true;
  return {};
}

float BruteForceOracle::radius_scale(EntityId id) const {
  const Entity* entity = live(id);
  return entity == nullptr ? 1.0f : entity->scale;
}

ClientRadii BruteForceOracle::view_radius(ClientId id) const {
  const Client* c = client(id);
  return c == nullptr ? ClientRadii{} : ClientRadii{c->view_enter, c->view_leave};
}

float BruteForceOracle::bound_radius(EntityId id) const {
  const Entity* entity = live(id);
  return entity == nullptr ? 0.0f : entity->bound;
}

ClientId BruteForceOracle::owner(EntityId id) const {
  const Entity* entity = live(id);
  return entity == nullptr ? ClientId{} : entity->owner;
}

std::vector<EntityId> BruteForceOracle::origins(ClientId id) const {
  const Client* c = client(id);
  return c == nullptr ? std::vector<EntityId>{} : c->origins;
}

bool BruteForceOracle::is_origin(ClientId id, EntityId origin) const {
  const Client* c = client(id);
  return c != nullptr && std::find(c->origins.begin(), c->origins.end(), origin) != c->origins.end();
}

BruteForceOracle::Client* BruteForceOracle::client(ClientId id) {
  const auto it = clients_.find(id.index);
  return it == clients_.end() || it->second.id != id ? nullptr : &it->second;
}

const BruteForceOracle::Client* BruteForceOracle::client(ClientId id) const {
  const auto it = clients_.find(id.index);
  return it == clients_.end() || it->second.id != id ? nullptr : &it->second;
}

bool BruteForceOracle::is_live(ClientId id) const { return client(id) != nullptr; }

// --- Attachments ---

EntityId BruteForceOracle::parent(EntityId id) const {
  const Entity* entity = live(id);
  return entity == nullptr ? EntityId{} : entity->parent;
}

EntityId BruteForceOracle::root(EntityId id) const {
  const Entity* entity = live(id);
  return entity == nullptr ? EntityId{} : root_of(*entity).id;
}

std::uint32_t BruteForceOracle::depth(EntityId id) const {
  std::uint32_t d = 0;
  for (const Entity* at = live(id); at != nullptr && !at->parent.is_null(); at = live(at->parent)) ++d;
  return d;
}

std::uint32_t BruteForceOracle::height(EntityId id) const {
  std::uint32_t h = 0;
  for (const auto& [index, e] : entities_) {
    if (!e.alive) continue;
    std::uint32_t steps = 0;
    for (const Entity* at = &e; at != nullptr;
         at = at->parent.is_null() ? nullptr : live(at->parent), ++steps) {
      if (at->id == id) {
        h = std::max(h, steps);
        break;
      }
    }
  }
  return h;
}

std::string BruteForceOracle::attach_refusal(EntityId child, EntityId parent_id) const {
  const Entity* c = live(child);
  const Entity* p = live(parent_id);
  if (c == nullptr || p == nullptr) return {};
  if (child == parent_id) return "child == parent (" + to_string(child) + ")";
  for (const Entity* at = p; at != nullptr; at = at->parent.is_null() ? nullptr : live(at->parent)) {
    if (at->id == child)
      return "parent " + to_string(parent_id) + " is attached to child " + to_string(child);
  }
  if (c->key != 0) return "child " + to_string(child) + " has a non-Global key";
  if (c->presenter) return "child " + to_string(child) + " is a presenter";
  if (c->space != p->space) {
    return "child " + to_string(child) + " is in " + to_string(c->space) + ", parent in " +
           to_string(p->space);
  }
  if (depth(parent_id) + 1 + height(child) > kMaxAttachmentDepth) {
    return "the tree would be " + std::to_string(depth(parent_id) + 1 + height(child)) + " deep";
  }
  return {};
}

std::string BruteForceOracle::attach(EntityId child, EntityId parent_id) {
  Entity* c = live_mut(child);
  if (c == nullptr || live(parent_id) == nullptr) return "attach accepted a dead handle";
  if (std::string why = attach_refusal(child, parent_id); !why.empty()) return "attach accepted: " + why;
  c->parent = parent_id;
  return {};
}

std::string BruteForceOracle::detach(EntityId child) {
  Entity* c = live_mut(child);
  if (c == nullptr) return "detach accepted " + to_string(child) + ", not live";
  c->parent = EntityId{};
  return {};
}

bool BruteForceOracle::presenter(EntityId id) const {
  const Entity* entity = live(id);
  return entity != nullptr && entity->presenter;
}

bool BruteForceOracle::always_relevant(EntityId id) const {
  const Entity* entity = live(id);
  return entity != nullptr && entity->always;
}

bool BruteForceOracle::teleported(EntityId id) const {
  const Entity* entity = live(id);
  return entity != nullptr && entity->teleported;
}

// --- Spaces ---

std::string BruteForceOracle::space_def_refusal(const SpaceDef& def) {
  if (def.culling != Culling::off && def.culling != Culling::on) return "culling: not off or on";
  const bool enter_given = def.enter_radius != 0.0f;
  const bool leave_given = def.leave_radius != 0.0f;
  if (enter_given != leave_given) {
    return std::string("one radius: only ") + (enter_given ? "enter_radius" : "leave_radius") + " given";
  }
  if (enter_given) {
    if (!(def.enter_radius >= kMinRadius && def.enter_radius <= kMaxRadius)) {
      return "enter_radius: " + describe_float(def.enter_radius);
    }
    if (!(def.leave_radius >= def.enter_radius && def.leave_radius <= kMaxRadius)) {
      return "leave_radius: " + describe_float(def.leave_radius) + " with enter_radius " +
             describe_float(def.enter_radius);
    }
  }
  if (def.radius != 0.0f && !(def.radius >= kLeastInterestRadius && def.radius <= kMostInterestRadius)) {
    return "radius: " + describe_float(def.radius);
  }
  const bool factors_valid = def.enter_factor > 0.0f && def.enter_factor <= kMaxRadiusFactor &&
                             def.leave_factor >= def.enter_factor && def.leave_factor <= kMaxRadiusFactor;
  // The factors are checked only when radius > 0.
  if (def.radius > 0.0f) {
    if (enter_given) return "both forms: radius and enter_radius given";
    if (!factors_valid) {
      return "factors: " + describe_float(def.enter_factor) + " and " + describe_float(def.leave_factor);
    }
  }
  auto view_valid = [](float v) { return v == 0.0f || (v >= kMinRadius && v <= kMaxRadius); };
  if (!view_valid(def.min_view_radius)) return "min_view_radius: " + describe_float(def.min_view_radius);
  if (!view_valid(def.max_view_radius)) return "max_view_radius: " + describe_float(def.max_view_radius);
  if (def.min_view_radius != 0.0f && def.max_view_radius != 0.0f &&
      def.min_view_radius > def.max_view_radius) {
    return "min_view_radius: " + describe_float(def.min_view_radius) + " above max_view_radius " +
           describe_float(def.max_view_radius);
  }
  if (def.visibility_hold_ticks > kMaxVisibilityHoldTicks) {
    return "visibility_hold_ticks: " + std::to_string(def.visibility_hold_ticks);
  }
  return {};
}

std::string BruteForceOracle::drill_refusal(float enter_radius, float leave_radius) {
  if (!(enter_radius >= kMinRadius && enter_radius <= kMaxRadius))
    return "enter_radius is " + describe_float(enter_radius);
  if (!(leave_radius >= enter_radius && leave_radius <= kMaxRadius))
    return "leave_radius is " + describe_float(leave_radius);
  return {};
}

std::string BruteForceOracle::destroy_space_refusal(SpaceId id) const {
  if (live_space(id) == nullptr) return {};
  if (resolved(id) == default_space_) return "it is the default space";
  for (const auto& [index, e] : entities_) {
    if (e.alive && e.space == id) return to_string(e.id) + " is in it";
  }
  return {};
}

bool BruteForceOracle::is_live(SpaceId id) const { return !id.is_null() && live_space(id) != nullptr; }

std::vector<SpaceId> BruteForceOracle::spaces() const {
  std::vector<SpaceId> out{default_space_};
  for (const auto& [index, s] : spaces_) {
    if (s.id != default_space_) out.push_back(s.id);
  }
  return out;
}

SpaceDef BruteForceOracle::space_def(SpaceId id) const {
  const Space* s = live_space(id);
  return s == nullptr ? SpaceDef{} : s->def;
}

SpaceState BruteForceOracle::space_state(SpaceId id) const {
  const Space* s = live_space(id);
  if (s == nullptr) return {};
  SpaceState state = s->state;
  state.entities = 0;
  for (const auto& [index, e] : entities_) {
    if (e.alive && e.space == s->id) ++state.entities;
  }
  return state;
}

bool BruteForceOracle::has_drill(SpaceId id) const {
  const Space* s = live_space(id);
  return s != nullptr && s->drill;
}

SpaceId BruteForceOracle::space(EntityId id) const {
  const Entity* entity = live(id);
  return entity == nullptr ? SpaceId{} : entity->space;
}

SpaceId BruteForceOracle::client_space(ClientId id) const {
  const Client* c = client(id);
  return c == nullptr ? SpaceId{} : space(c->viewer);
}

std::string BruteForceOracle::create_space(SpaceId id, const SpaceDef& def) {
  if (id.is_null()) return "create_space returned a null handle";
  if (spaces_.contains(id.index)) return "create_space reused the live slot of " + to_string(id);
  if (const auto it = last_space_generation_.find(id.index);
      it != last_space_generation_.end() && id.generation <= it->second) {
    return "create_space reused slot " + std::to_string(id.index) + " without a new generation (" +
           to_string(id) + ")";
  }
  if (std::string why = space_def_refusal(def); !why.empty()) return "create_space accepted: " + why;
  last_space_generation_[id.index] = id.generation;
  Space space;
  space.id = id;
  space.def = def;
  space.broadcasting = def.broadcast_threshold > 0;
  settle(space, 0);  // what it does before its first tick: as if settled now, with no clients
  spaces_[id.index] = space;
  return {};
}

std::string BruteForceOracle::destroy_space(SpaceId id) {
  if (live_space(id) == nullptr || id.is_null())
    return "destroy_space accepted " + to_string(id) + ", not live";
  if (std::string why = destroy_space_refusal(id); !why.empty()) return "destroy_space accepted: " + why;
  spaces_.erase(id.index);
  return {};
}

std::string BruteForceOracle::set_space_def(SpaceId id, const SpaceDef& def) {
  Space* s = live_space_mut(id);
  if (s == nullptr || id.is_null()) return "set_space_def accepted " + to_string(id) + ", not live";
  if (std::string why = space_def_refusal(def); !why.empty()) return "set_space_def accepted: " + why;
  s->def = def;  // the broadcast mode and any drill are kept
  return {};
}

// --- Sight ---

std::string BruteForceOracle::set_walls(SpaceId id, std::vector<WallSegment> walls) {
  Space* s = live_space_mut(id);
  if (s == nullptr || id.is_null()) return "set_walls accepted " + to_string(id) + ", not live";
  s->walls = std::move(walls);
  return {};
}

std::string BruteForceOracle::set_velocity(EntityId id, float vx, float vz) {
  Entity* entity = live_mut(id);
  if (entity == nullptr) return "set_velocity accepted " + to_string(id) + ", not live";
  entity->vx = vx;
  entity->vz = vz;
  return {};
}

std::string BruteForceOracle::set_look_ahead(ClientId id, float seconds) {
  Client* c = client(id);
  if (c == nullptr) return "set_look_ahead accepted " + to_string(id) + ", not live";
  c->look_ahead = seconds;
  return {};
}

void BruteForceOracle::set_visibility_filter(VisibilityFilter filter, void* context) {
  filter_ = filter;
  filter_context_ = filter == nullptr ? nullptr : context;
}

std::vector<WallSegment> BruteForceOracle::walls(SpaceId id) const {
  const Space* s = live_space(id);
  return s == nullptr ? std::vector<WallSegment>{} : s->walls;
}

Velocity BruteForceOracle::velocity(EntityId id) const {
  const Entity* e = live(id);
  return e == nullptr ? Velocity{} : Velocity{e->vx, e->vz};
}

float BruteForceOracle::look_ahead(ClientId id) const {
  const Client* c = client(id);
  return c == nullptr ? 0.0f : c->look_ahead;
}

std::string BruteForceOracle::set_space(EntityId id, SpaceId space_id) {
  Entity* entity = live_mut(id);
  if (entity == nullptr) return "set_space accepted " + to_string(id) + ", not live";
  if (!entity->parent.is_null()) return "set_space accepted attached " + to_string(id);
  if (space_id.is_null() || live_space(space_id) == nullptr)
    return "set_space accepted " + to_string(space_id);
  for (auto& [index, e] : entities_) {
    if (e.alive && root_of(e).id == id) e.space = space_id;
  }
  return {};
}

std::string BruteForceOracle::set_culling_drill(SpaceId id, float enter_radius, float leave_radius) {
  Space* s = live_space_mut(id);
  if (s == nullptr || id.is_null()) return "set_culling_drill accepted " + to_string(id) + ", not live";
  if (std::string why = drill_refusal(enter_radius, leave_radius); !why.empty())
    return "set_culling_drill accepted: " + why;
  s->drill = true;
  s->drill_enter = enter_radius;
  s->drill_leave = leave_radius;
  return {};
}

std::string BruteForceOracle::clear_culling_drill(SpaceId id) {
  Space* s = live_space_mut(id);
  if (s == nullptr || id.is_null()) return "clear_culling_drill accepted " + to_string(id) + ", not live";
  s->drill = false;
  return {};
}

std::string BruteForceOracle::set_entity_key(EntityId id, std::uint64_t stored_key) {
  Entity* entity = live_mut(id);
  if (entity == nullptr) return "an interest key setter accepted " + to_string(id) + ", not live";
  if (!entity->parent.is_null()) return "an interest key setter accepted attached " + to_string(id);
  entity->key = stored_key;
  return {};
}

void BruteForceOracle::replace_kind(Client& c, bool user,
                                    const std::map<std::uint64_t, Subscription>& replacement) {
  std::map<std::uint64_t, Subscription> next;
  for (const auto& [key, sub] : c.subscriptions) {
    if (is_user_key(key) != user) next[key] = sub;
  }
  for (const auto& [key, sub] : replacement) next[key] = sub;
  if (next != c.subscriptions) {
    c.subscriptions = std::move(next);
    ++c.revision;
  }
}

std::string BruteForceOracle::set_area_subscriptions(ClientId id, const std::vector<KeySubscription>& keys) {
  Client* c = client(id);
  if (c == nullptr) return "set_area_subscriptions accepted " + to_string(id) + ", not live";
  std::map<std::uint64_t, Subscription> replacement;
  for (const KeySubscription& k : keys) {
    const Subscription sub{std::max<std::uint32_t>(k.send_rate, 1), k.bypass_distance};
    const std::uint64_t stored = encode_area_key(k.key);
    const auto it = replacement.find(stored);
    if (it == replacement.end()) {
      replacement[stored] = sub;
    } else {
      it->second.send_rate = std::min(it->second.send_rate, sub.send_rate);
      it->second.bypass_distance = it->second.bypass_distance || sub.bypass_distance;
    }
  }
  replace_kind(*c, false, replacement);
  return {};
}

std::string BruteForceOracle::add_user_subscription(ClientId id, KeySubscription subscription) {
  Client* c = client(id);
  if (c == nullptr) return "add_user_subscription accepted " + to_string(id) + ", not live";
  std::map<std::uint64_t, Subscription> users;
  for (const auto& [key, sub] : c->subscriptions) {
    if (is_user_key(key)) users[key] = sub;
  }
  users[encode_user_key(subscription.key)] =
      Subscription{std::max<std::uint32_t>(subscription.send_rate, 1), subscription.bypass_distance};
  replace_kind(*c, true, users);
  return {};
}

std::string BruteForceOracle::remove_user_subscription(ClientId id, std::uint64_t key) {
  Client* c = client(id);
  if (c == nullptr) return "remove_user_subscription accepted " + to_string(id) + ", not live";
  std::map<std::uint64_t, Subscription> users;
  for (const auto& [stored, sub] : c->subscriptions) {
    if (is_user_key(stored) && stored != encode_user_key(key)) users[stored] = sub;
  }
  replace_kind(*c, true, users);
  return {};
}

std::string BruteForceOracle::clear_area_subscriptions(ClientId id) {
  Client* c = client(id);
  if (c == nullptr) return "clear_area_subscriptions accepted " + to_string(id) + ", not live";
  replace_kind(*c, false, {});
  return {};
}

std::string BruteForceOracle::clear_user_subscriptions(ClientId id) {
  Client* c = client(id);
  if (c == nullptr) return "clear_user_subscriptions accepted " + to_string(id) + ", not live";
  replace_kind(*c, true, {});
  return {};
}

std::string BruteForceOracle::clear_subscriptions(ClientId id) {
  Client* c = client(id);
  if (c == nullptr) return "clear_subscriptions accepted " + to_string(id) + ", not live";
  // One call, one change: the revision rises by one at most.
  if (!c->subscriptions.empty()) {
    c->subscriptions.clear();
    ++c->revision;
  }
  return {};
}

void BruteForceOracle::set_revision_base(ClientId id, std::uint64_t revision) {
  if (Client* c = client(id)) c->revision = revision;
}

std::vector<KeySubscription> BruteForceOracle::decoded(const Client& c, bool user) const {
  std::vector<KeySubscription> out;
  for (const auto& [stored, sub] : c.subscriptions) {
    if (is_user_key(stored) == user) out.push_back({stored >> 1, sub.send_rate, sub.bypass_distance});
  }
  std::sort(out.begin(), out.end(),
            [](const KeySubscription& a, const KeySubscription& b) { return a.key < b.key; });
  return out;
}

std::vector<KeySubscription> BruteForceOracle::area_subscriptions(ClientId id) const {
  return decoded(*client(id), false);
}
std::vector<KeySubscription> BruteForceOracle::user_subscriptions(ClientId id) const {
  return decoded(*client(id), true);
}
std::uint64_t BruteForceOracle::subscription_revision(ClientId id) const { return client(id)->revision; }

std::uint64_t BruteForceOracle::stored_key(EntityId id) const {
  const Entity* entity = live(id);
  return entity == nullptr ? 0 : entity->key;
}

std::vector<ClientId> BruteForceOracle::clients() const {
  std::vector<ClientId> out;
  for (const auto& [index, client] : clients_) out.push_back(client.id);
  return out;
}

std::vector<EntityId> BruteForceOracle::entities() const {
  std::vector<EntityId> out;
  for (const auto& [index, entity] : entities_) {
    if (entity.alive) out.push_back(entity.id);
  }
  return out;
}

bool BruteForceOracle::is_viewer(EntityId id) const {
  return std::any_of(clients_.begin(), clients_.end(),
                     [&](const auto& entry) { return entry.second.viewer == id; });
}

EntityId BruteForceOracle::viewer(ClientId id) const {
  const auto it = clients_.find(id.index);
  return it == clients_.end() || it->second.id != id ? EntityId{} : it->second.viewer;
}

const BruteForceOracle::ClientRecords* BruteForceOracle::records(ClientId id) const {
  const auto it = clients_.find(id.index);
  return it == clients_.end() || it->second.id != id ? nullptr : &it->second.records;
}

std::uint32_t BruteForceOracle::period_for(float distance2, float bound, float enter_radius) const {
  for (const DistanceTier& tier : tiers_) {
    // Like the enter test: squared distances compared in float, so a member at exactly
    // d == fraction * R (with fraction * R exact in float) is within the tier. A bounded
    // entity's limit is (fraction * R + b)^2, the sum and its square in float; for b == 0 the
    // documented limit is (fraction * R)^2, kept apart so that it reads exactly as documented.
    const float scaled = tier.max_distance_fraction * enter_radius;
    const float limit = bound > 0.0f ? scaled + bound : scaled;
    if (distance2 <= limit * limit) return tier.period;
  }
  return tiers_.back().period;
}

void BruteForceOracle::settle_spaces() {
  for (auto& [index, s] : spaces_) {
    std::uint32_t count = 0;
    for (const auto& [client_index, c] : clients_) {
      if (space(c.viewer) == s.id) ++count;
    }
    settle(s, count);
  }
}

void BruteForceOracle::settle(Space& s, std::uint32_t count) const {
  {
    const std::uint32_t threshold = s.def.broadcast_threshold;
    const std::uint32_t margin = s.def.broadcast_margin;
    if (threshold == 0) {
      s.broadcasting = false;
    } else if (s.broadcasting && count > threshold) {
      s.broadcasting = false;
    } else if (!s.broadcasting && margin <= threshold && count <= threshold - margin) {
      s.broadcasting = true;
    }
    const bool setting = s.def.culling == Culling::on;
    s.culls = s.drill || (setting && !s.broadcasting);
    if (s.drill) {
      s.enter = s.drill_enter;
      s.leave = s.drill_leave;
    } else if (s.def.radius > 0.0f) {
      s.enter = s.def.radius * s.def.enter_factor;
      s.leave = s.def.radius * s.def.leave_factor;
    } else if (s.def.enter_radius != 0.0f) {
      s.enter = s.def.enter_radius;
      s.leave = s.def.leave_radius;
    } else {
      s.enter = enter_radius_;
      s.leave = leave_radius_;
    }
    s.switched_on = s.culls && !s.state.culling;
    s.state = SpaceState{};
    s.state.culling = s.culls;
    s.state.broadcasting = setting && s.broadcasting && !s.drill;
    s.state.drill = s.drill;
    s.state.enter_radius = s.culls ? s.enter : 0.0f;
    s.state.leave_radius = s.culls ? s.leave : 0.0f;
    s.state.clients = count;
  }
}

TickStats BruteForceOracle::tick() {
  TickStats stats;
  stats.tick = ticks_;
  settle_spaces();

  // The trees as this tick sees them, by slot index: each live entity's root and depth, and per
  // root whether some member is always relevant and which clients own members.
  const std::uint32_t slots = entities_.empty() ? 0 : entities_.rbegin()->first + 1;
  std::vector<const Entity*> root_at(slots, nullptr);
  std::vector<std::uint32_t> depth_at(slots, 0);
  std::vector<char> tree_always(slots, 0);
  std::vector<char> tree_teleported(slots, 0);
  std::vector<std::vector<ClientId>> tree_owners(slots);
  for (const auto& [index, e] : entities_) {
    if (!e.alive) {
      depth_at[index] = e.destroyed_depth;
      continue;
    }
    const Entity& r = root_of(e);
    root_at[index] = &r;
    depth_at[index] = depth(e.id);
    if (e.always) tree_always[r.id.index] = 1;
    if (e.teleported) tree_teleported[r.id.index] = 1;
    if (!e.owner.is_null()) tree_owners[r.id.index].push_back(e.owner);
  }

  for (auto& [client_index, client] : clients_) {
    ClientRecords& out = client.records;
    out.spawns.clear();
    out.updates.clear();
    out.despawns.clear();
    const Entity& viewer = *live(client.viewer);
    const SpaceId space_id = viewer.space;
    const Space& space = *live_space(space_id);
    // O: the viewer and the extra origins in its space, each at its own position (attached or
    // not), and the roots of their trees (rule e).
    std::vector<const Entity*> origin_points{&viewer};
    std::vector<const Entity*> origin_roots{root_at[viewer.id.index]};
    bool origin_teleported = viewer.teleported;
    for (const EntityId o : client.origins) {
      const Entity& origin = *live(o);
      origin_teleported = origin_teleported || origin.teleported;  // teleporting an extra origin
      if (origin.space != space_id) continue;
      origin_points.push_back(&origin);
      origin_roots.push_back(root_at[o.index]);
    }
    const bool all_due = client.origins_changed || origin_teleported;
    // The client's radii: its space's, or its view radius held to the space's range.
    float client_enter = space.enter;
    float client_leave = space.leave;
    if (client.view_enter != 0.0f) {
      const float most = space.def.max_view_radius != 0.0f ? space.def.max_view_radius : space.enter;
      client_enter = std::min(std::max(client.view_enter, space.def.min_view_radius), most);
      const float e = client.view_leave != 0.0f ? client.view_enter : space.enter;
      const float f = client.view_leave != 0.0f ? client.view_leave : space.leave;
      client_leave = client_enter == e ? f : std::min(client_enter * (f / e), kMaxRadius);
    }
    client.enter = space.culls ? client_enter : 0.0f;
    client.leave = space.culls ? client_leave : 0.0f;
    // nearest2: the smallest float squared distance to any origin.
    auto nearest2 = [&](const Entity& e) {
      float best = std::numeric_limits<float>::infinity();
      for (const Entity* o : origin_points) {
        const float dx = e.x - o->x;
        const float dz = e.z - o->z;
        best = std::min(best, dx * dx + dz * dz);
      }
      return best;
    };
    // The matching subscription of a key, or null (always null for Global).
    auto subscription = [&](const Entity& r) -> const Subscription* {
      if (r.key == 0) return nullptr;
      const auto it = client.subscriptions.find(r.key);
      return it == client.subscriptions.end() ? nullptr : &it->second;
    };
    std::vector<std::uint32_t> previous(slots, 0);  // by slot: the member's generation, 0 if none
    for (const EntityId m : out.members) previous[m.index] = m.generation;
    auto was_member = [&](EntityId id) { return id.index < slots && previous[id.index] == id.generation; };
    // Sight, for rules j and k: a root not visible from any origin past the walls (at p or at the
    // look-ahead point), or hidden by the filter, is out of sight; a member stays within its hold.
    const bool sight = space.culls && (!space.walls.empty() || filter_ != nullptr);
    struct Sighting {
      bool visible = true;
      bool ahead_only = false;  // seen past the walls at p + v * T only
    };
    auto sighting = [&](const Entity& r) {
      Sighting seen;
      if (!space.walls.empty()) {
        const float ax = r.x + r.vx * client.look_ahead;
        const float az = r.z + r.vz * client.look_ahead;
        bool at_p = false;
        bool at_ahead = false;
        for (const Entity* o : origin_points) {
          at_p = at_p || sees_brute_force(space.walls, o->x, o->z, r.x, r.z, r.bound);
          at_ahead = at_ahead || sees_brute_force(space.walls, o->x, o->z, ax, az, r.bound);
        }
        seen.visible = at_p || at_ahead;
        seen.ahead_only = !at_p && at_ahead;
      }
      if (seen.visible && filter_ != nullptr && !filter_(filter_context_, client.id, r.id)) {
        seen.visible = false;
        ++sight_counts_.filter_refusals;
      }
      return seen;
    };
    std::map<std::uint32_t, std::uint64_t> unseen_since;  // root members held unseen: last visible tick
    std::map<std::uint32_t, char> ahead_entries;          // roots admitted by k through look-ahead only
    std::map<std::uint32_t, char> hidden_within_leave;    // members beyond R hidden past their hold
    std::map<std::uint32_t, char> crowded_within_leave;   // members beyond R left out by the crowd cap
    std::map<std::uint32_t, char> crowded_unseen;         // members within R, held unseen, left out by it

    auto decide = [&](const Entity& e) -> Why {
      const Entity& r = *root_at[e.id.index];
      Why why;
      why.root = r.id;
      auto rule = [&](bool held, Rule which) {
        why.held = held;
        why.rule = which;
        return why;
      };
      if (e.id == viewer.id) return rule(false, Rule::viewer);
      if (r.space != space_id) return rule(false, Rule::other_space);
      if (tree_always[r.id.index] != 0) return rule(true, Rule::always);
      const std::vector<ClientId>& owners = tree_owners[r.id.index];
      if (std::find(owners.begin(), owners.end(), client.id) != owners.end()) return rule(true, Rule::owner);
      if (std::find(origin_roots.begin(), origin_roots.end(), &r) != origin_roots.end()) {
        return rule(true, Rule::origin);
      }
      const Subscription* sub = subscription(r);
      if (r.key != 0 && sub == nullptr) return rule(false, Rule::key_excluded);
      if (r.presenter) return rule(true, Rule::presenter);
      if (sub != nullptr && sub->bypass_distance) return rule(true, Rule::key_bypass);
      if (!space.culls) return rule(true, Rule::unculled);
      const float d2 = nearest2(r);
      // (R + b)^2 and (L + b)^2 in float; for a point entity (b == 0) these are R*R and L*L.
      // why() names a held member `near` within R and `within_leave` beyond it (relevance.h).
      const float scaled_enter = r.scale * client_enter;
      const float enter = r.bound > 0.0f ? scaled_enter + r.bound : scaled_enter;
      const bool member = was_member(r.id);
      Rule in_range = Rule::out_of_range;
      if (d2 <= enter * enter) {
        in_range = Rule::near;
      } else if (member) {
        const float scaled_leave = r.scale * client_leave;
        const float leave = r.bound > 0.0f ? scaled_leave + r.bound : scaled_leave;
        if (d2 <= leave * leave) in_range = Rule::within_leave;
      }
      if (in_range == Rule::out_of_range) return rule(false, Rule::out_of_range);
      if (sight) {
        const Sighting seen = sighting(r);
        if (!seen.visible) {
          if (!member) return rule(false, Rule::hidden);
          const std::uint64_t last = client.last_visible.at(r.id.index);
          if (ticks_ - last > space.def.visibility_hold_ticks) {
            if (in_range == Rule::within_leave) hidden_within_leave[r.id.index] = 1;
            return rule(false, Rule::hidden);
          }
          unseen_since[r.id.index] = last;
        } else if (seen.ahead_only) {
          if (!member) ahead_entries[r.id.index] = 1;
          if (member && &e == &r) ++sight_counts_.look_ahead_keeps;
        }
      }
      return rule(true, in_range);
    };

    std::map<std::uint32_t, Why> decided;
    for (const auto& [index, e] : entities_) {
      if (e.alive) decided[index] = decide(e);
    }
    // Rule l: of the roots held by distance, the crowd_cap first by (d2 / reach^2, order).
    if (crowd_cap_ != 0 && space.culls) {
      std::vector<std::tuple<float, std::uint64_t, std::uint32_t>> ranked;
      for (const auto& [index, why] : decided) {
        if (why.root.index != index || !why.held) continue;
        if (why.rule != Rule::near && why.rule != Rule::within_leave) continue;
        const Entity& r = entities_.at(index);
        const float radius = r.scale * (was_member(r.id) ? client_leave : client_enter);
        const float reach = r.bound > 0.0f ? radius + r.bound : radius;
        ranked.emplace_back(nearest2(r) / (reach * reach), order_of(r), index);
      }
      std::sort(ranked.begin(), ranked.end());
      std::set<std::uint32_t> crowded;
      for (std::size_t i = crowd_cap_; i < ranked.size(); ++i) crowded.insert(std::get<2>(ranked[i]));
      for (const std::uint32_t index : crowded) {
        if (decided[index].rule == Rule::within_leave) crowded_within_leave[index] = 1;
        if (decided[index].rule == Rule::near && unseen_since.contains(index)) crowded_unseen[index] = 1;
      }
      crowded_total_ += crowded.size();
      for (auto& [index, why] : decided) {
        if (crowded.contains(why.root.index)) why = Why{false, Rule::crowded, why.root};
      }
    }
    std::vector<EntityId> members;
    for (const auto& [index, why] : decided) {
      if (why.held) members.push_back(entities_.at(index).id);
    }

    for (const EntityId m : out.members) {
      const Entity* e = live(m);
      if (e == nullptr) {
        const auto dead = entities_.find(m.index);
        const bool withdrawn = dead != entities_.end() && dead->second.id == m && dead->second.withdrawn;
        out.despawns.push_back({m, withdrawn ? DespawnReason::left : DespawnReason::destroyed});
        continue;
      }
      const Why& why = decided[m.index];
      if (why.held) continue;
      DespawnReason reason = DespawnReason::left;
      if (why.rule == Rule::other_space) reason = DespawnReason::space_changed;
      if (why.rule == Rule::key_excluded) reason = DespawnReason::key_removed;
      if (why.rule == Rule::out_of_range && space.switched_on) reason = DespawnReason::culling_switched;
      if (why.rule == Rule::hidden) reason = DespawnReason::hidden;
      if (reason == DespawnReason::hidden) ++sight_counts_.hidden_despawns;
      out.despawns.push_back({m, reason});
    }
    for (const EntityId m : members) {
      if (was_member(m)) continue;
      const Entity& e = *live(m);
      const Why& why = decided[m.index];
      SpawnReason reason = SpawnReason::near;
      if (why.root != m) {
        reason = SpawnReason::attached;
      } else {
        switch (why.rule) {
          case Rule::always: reason = SpawnReason::always; break;
          case Rule::owner: reason = SpawnReason::owner; break;
          case Rule::origin: reason = SpawnReason::origin; break;
          case Rule::presenter: reason = SpawnReason::presenter; break;
          case Rule::key_bypass: reason = SpawnReason::key; break;
          case Rule::unculled: reason = SpawnReason::unculled; break;
          default:
            reason = tree_teleported[e.id.index] != 0 ? SpawnReason::teleport : SpawnReason::near;
            break;
        }
      }
      out.spawns.push_back({m, reason, e.created});
    }

    for (const EntityId m : members) {
      const Why& why = decided[m.index];
      const Entity& r = *live(why.root);
      std::uint32_t period =
          space.culls && !tiers_.empty() ? period_for(nearest2(r), r.bound, r.scale * client_enter) : 1;
      const bool unconditional =
          why.rule == Rule::always || why.rule == Rule::owner || why.rule == Rule::origin;
      if (!unconditional) {
        // Every member here is admitted: Global (no key rate) or subscribed.
        if (const Subscription* sub = subscription(r)) period = std::max(period, sub->send_rate);
      }
      if (period == 1 || (ticks_ + order_of(r)) % period == 0 || tree_teleported[r.id.index] != 0 ||
          all_due) {
        out.updates.push_back(m);
      }
    }
    std::sort(out.spawns.begin(), out.spawns.end(), [&](const SpawnRecord& a, const SpawnRecord& b) {
      const std::uint32_t da = depth_at[a.entity.index];
      const std::uint32_t db = depth_at[b.entity.index];
      return da != db ? da < db : a.entity.index < b.entity.index;
    });
    std::sort(out.despawns.begin(), out.despawns.end(), [&](const DespawnRecord& a, const DespawnRecord& b) {
      const std::uint32_t da = depth_at[a.entity.index];
      const std::uint32_t db = depth_at[b.entity.index];
      return da != db ? da > db : a.entity.index < b.entity.index;
    });
    std::map<std::uint32_t, std::uint64_t> last_visible;
    for (const EntityId m : members) {
      const auto it = unseen_since.find(m.index);
      last_visible[m.index] = it == unseen_since.end() ? ticks_ : it->second;
    }
    for (const auto& [index, why] : decided) {
      if (why.rule == Rule::hidden) ++sight_counts_.hidden_answers;
    }
    sight_counts_.held_unseen += unseen_since.size();
    for (const auto& [index, entered] : ahead_entries) {
      if (decided[index].held && !was_member(entities_.at(index).id)) ++sight_counts_.look_ahead_spawns;
    }
    client.last_visible = std::move(last_visible);
    // why() after the tick reads the new set for membership (world.h): a member beyond R that
    // left `hidden`, or was left out by the crowd cap, is no member then, and rule k finds it out
    // of range (or, within R and held unseen, hidden).
    for (auto& [index, why] : decided) {
      if (why.rule == Rule::hidden && hidden_within_leave.contains(why.root.index))
        why.rule = Rule::out_of_range;
      if (why.rule == Rule::crowded && crowded_within_leave.contains(why.root.index))
        why.rule = Rule::out_of_range;
      if (why.rule == Rule::crowded && crowded_unseen.contains(why.root.index)) why.rule = Rule::hidden;
    }
    out.members = std::move(members);
    client.why = std::move(decided);

    stats.spawns += out.spawns.size();
    stats.updates += out.updates.size();
    stats.despawns += out.despawns.size();
    stats.members += out.members.size();
  }
  std::erase_if(entities_, [](const auto& entry) { return !entry.second.alive; });
  for (auto& [index, e] : entities_) e.teleported = e.created = false;
  for (auto& [index, c] : clients_) c.origins_changed = false;
  ++ticks_;
  return stats;
}

Why BruteForceOracle::why(ClientId client_id, EntityId entity) const {
  const Client* c = client(client_id);
  if (c == nullptr) return {};
  const auto it = c->why.find(entity.index);
  if (it == c->why.end() || live(entity) == nullptr) return {};
  Why out = it->second;
  out.root = root(entity);
  return out;
}

bool BruteForceOracle::is_relevant_to(ClientId client_id, EntityId entity) const {
  const Client* c = client(client_id);
  return c != nullptr &&
         std::find(c->records.members.begin(), c->records.members.end(), entity) != c->records.members.end();
}

std::uint32_t BruteForceOracle::holder_count(EntityId entity) const {
  std::uint32_t count = 0;
  for (const auto& [index, c] : clients_) {
    if (std::find(c.records.members.begin(), c.records.members.end(), entity) != c.records.members.end())
      ++count;
  }
  return count;
}

namespace {

bool same(const SpawnRecord& a, const SpawnRecord& b) {
  return a.entity == b.entity && a.reason == b.reason && a.created == b.created;
}
bool same(const DespawnRecord& a, const DespawnRecord& b) {
  return a.entity == b.entity && a.reason == b.reason;
}
bool same(const EntityId& a, const EntityId& b) { return a == b; }

// Describes the first difference of two lists, or returns empty.
template <class T, class Describe>
std::string first_difference(const char* what, ClientId client, const std::vector<T>& expected,
                             std::span<const T> actual, Describe describe) {
  const std::size_t n = std::max(expected.size(), actual.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (i < expected.size() && i < actual.size() && same(expected[i], actual[i])) continue;
    const std::string want = i < expected.size() ? describe(expected[i]) : "(nothing)";
    const std::string got = i < actual.size() ? describe(actual[i]) : "(nothing)";
    {
      std::ostringstream out;
      out << to_string(client) << " " << what << "[" << i << "]: expected " << want << ", got " << got
          << " (expected " << expected.size() << " records, got " << actual.size() << ")";
      return out.str();
    }
  }
  return {};
}

std::string describe(const Why& why) {
  return std::string(why.held ? "held" : "not held") + " by rule " + to_string(why.rule) + ", root " +
         to_string(why.root);
}

}  // namespace

std::string BruteForceOracle::compare(const World& world) const {
  const std::vector<ClientId> expected_clients = clients();
  const std::span<const ClientId> actual_clients = world.clients();
  if (!std::equal(expected_clients.begin(), expected_clients.end(), actual_clients.begin(),
                  actual_clients.end())) {
    return "clients() differ: expected " + std::to_string(expected_clients.size()) + ", got " +
           std::to_string(actual_clients.size());
  }
  for (const auto& [index, client] : clients_) {
    const auto stream = world.stream(client.id);
    const auto set = world.interest_set(client.id);
    const auto radii = world.client_radii(client.id);
    if (!stream.ok() || !set.ok() || !radii.ok()) return to_string(client.id) + " refused by the world";
    if (radii->enter_radius != client.enter || radii->leave_radius != client.leave) {
      return "tick " + std::to_string(ticks_ - 1) + ": client_radii of " + to_string(client.id) +
             " differ: expected " + describe_float(client.enter) + "/" + describe_float(client.leave) +
             ", got " + describe_float(radii->enter_radius) + "/" + describe_float(radii->leave_radius);
    }
    const ClientRecords& want = client.records;
    std::string diff = first_difference<SpawnRecord>(
        "spawns", client.id, want.spawns, stream->spawns, [](const SpawnRecord& r) {
          return to_string(r.entity) + " " + to_string(r.reason) + (r.created ? " created" : "");
        });
    if (diff.empty()) {
      diff = first_difference<DespawnRecord>(
          "despawns", client.id, want.despawns, stream->despawns,
          [](const DespawnRecord& r) { return to_string(r.entity) + " " + to_string(r.reason); });
    }
    if (diff.empty()) {
      diff = first_difference<EntityId>("updates", client.id, want.updates, stream->updates,
                                        [](const EntityId& r) { return to_string(r); });
    }
    if (diff.empty()) {
      diff = first_difference<EntityId>("interest_set", client.id, want.members, *set,
                                        [](const EntityId& e) { return to_string(e); });
    }
    if (!diff.empty()) return "tick " + std::to_string(ticks_ - 1) + ": " + diff;
  }
  return {};
}

std::string BruteForceOracle::compare_questions(const World& world) const {
  const std::string at = "tick " + std::to_string(ticks_ - 1) + ": ";
  std::map<std::uint32_t, std::uint32_t> holders;  // by entity slot
  for (const auto& [client_index, c] : clients_) {
    for (const EntityId m : c.records.members) ++holders[m.index];
  }
  for (const auto& [client_index, c] : clients_) {
    // Both are sorted by index: one walk answers membership.
    auto next_member = c.records.members.begin();
    for (const auto& [entity_index, want] : c.why) {
      const EntityId e = entities_.at(entity_index).id;
      const Result<bool> relevant = world.is_relevant_to(c.id, e);
      while (next_member != c.records.members.end() && next_member->index < entity_index) ++next_member;
      const bool member = next_member != c.records.members.end() && *next_member == e;
      if (!relevant.ok()) return at + "is_relevant_to(" + to_string(c.id) + ", " + to_string(e) + ") refused";
      if (*relevant != member) {
        return at + "is_relevant_to(" + to_string(c.id) + ", " + to_string(e) + "): expected " +
               (member ? "true" : "false");
      }
      const Result<Why> why = world.why(c.id, e);
      if (!why.ok())
        return at + "why(" + to_string(c.id) + ", " + to_string(e) + ") refused: " + why.status().message();
      const Why& expected = want;  // right after the tick, the root is the tick's
      if (why->held != expected.held || why->rule != expected.rule || why->root != expected.root) {
        return at + "why(" + to_string(c.id) + ", " + to_string(e) + "): expected " + describe(expected) +
               ", got " + describe(*why);
      }
    }
  }
  for (const auto& [index, e] : entities_) {
    const Result<std::uint32_t> count = world.holder_count(e.id);
    if (!count.ok()) return at + "holder_count(" + to_string(e.id) + ") refused";
    const auto it = holders.find(index);
    const std::uint32_t want = it == holders.end() ? 0 : it->second;
    if (*count != want) {
      return at + "holder_count(" + to_string(e.id) + "): expected " + std::to_string(want) + ", got " +
             std::to_string(*count);
    }
  }
  return {};
}

}  // namespace sightline::testing
