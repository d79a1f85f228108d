#include "random_run.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <vector>

#include "rng.h"

namespace sightline::testing {

using scenarios::Rng;

bool sight_filter(void* context, ClientId client, EntityId entity) {
  const auto& state = *static_cast<const SightFilterState*>(context);
  std::uint64_t h = state.salt ^ (std::uint64_t{client.index} * 0x9e3779b97f4a7c15ull) ^
                    (std::uint64_t{entity.index} * 0xc2b2ae3d27d4eb4full);
  h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull;
  h ^= h >> 32;
  return h % state.modulus != 0;
}

std::vector<DistanceTier> custom_tiers() {
  return {DistanceTier{0.25f, 1}, DistanceTier{0.5f, 3}, DistanceTier{1.0f, 5}};
}

namespace {

class RandomInputs {
 public:
  RandomInputs(const RandomRunDef& def, Rng& rng, MirroredWorld& mirror, float width,
               SightFilterState& filter)
      : def_(def), rng_(rng), mirror_(mirror), width_(width), filter_(filter) {
    for (int i = 0; i < 3; ++i)
      centers_.push_back({rng_.uniform(-width_, width_), rng_.uniform(-width_, width_)});
  }

  [[nodiscard]] bool chance(float p) { return rng_.uniform() < p; }

  template <class T>
  [[nodiscard]] T pick(const std::vector<T>& items) {
    return items[rng_.below(static_cast<std::uint32_t>(items.size()))];
  }

  // A position chosen to stress the grid: see the kinds below.
  Position position() {
    const float r = mirror_.world().enter_radius();
    const std::vector<EntityId> live = mirror_.oracle().entities();
    // Owners, origins and bounds: sometimes at the reach of a bounded entity.
    if (def_.relevance && chance(0.15f)) {
      if (const std::optional<Position> p = at_bounded_reach()) return *p;
    }
    // Structure: sometimes at a space's own radii.
    if (def_.structure && chance(0.1f)) {
      if (const std::optional<Position> p = at_space_radius()) return *p;
    }
    switch (rng_.below(12)) {
      case 0:
      case 1:
      case 2: return {rng_.uniform(-width_ * 0.5f, width_), rng_.uniform(-width_ * 0.5f, width_)};
      case 3: {  // On cell edges of a grid of cell size R anchored at 0 (and on the anchor).
        const auto kx = static_cast<float>(static_cast<int>(rng_.below(13)) - 6);
        const auto kz = static_cast<float>(static_cast<int>(rng_.below(13)) - 6);
        return {kx * r, kz * r};
      }
      case 4:
      case 5: {  // Exactly R from another entity along an axis, or one float step beyond.
        if (live.empty()) return {r, 0.0f};
        const Position base = *mirror_.world().position(pick(live));
        const float sign = chance(0.5f) ? 1.0f : -1.0f;
        float offset = sign * r;
        if (chance(0.25f)) offset = std::nextafter(offset, sign * std::numeric_limits<float>::infinity());
        if (chance(0.25f)) offset = std::nextafter(offset, 0.0f);
        return chance(0.5f) ? Position{base.x + offset, base.z} : Position{base.x, base.z + offset};
      }
      case 6: {  // Nearly R along a diagonal (3-4-5): rounding decides.
        if (live.empty()) return {0.6f * r, 0.8f * r};
        const Position base = *mirror_.world().position(pick(live));
        return {base.x + 0.6f * r, base.z - 0.8f * r};
      }
      case 7:
      case 8: {  // Clusters: many entities within a fraction of R.
        const Position c = pick(centers_);
        return {c.x + rng_.uniform(-0.3f, 0.3f) * r, c.z + rng_.uniform(-0.3f, 0.3f) * r};
      }
      case 9: {  // Far outside any nominal bounds, either sign.
        const float far = chance(0.1f) ? 1.0e12f : rng_.uniform(1.0e3f, 1.0e6f);
        return {chance(0.5f) ? far : -far, rng_.uniform(-width_, width_)};
      }
      case 10: {  // Coincident with another entity.
        if (live.empty()) return {0.0f, 0.0f};
        return *mirror_.world().position(pick(live));
      }
      default: {  // At a tier boundary of another entity: 0.25 R and 0.5 R.
        if (live.empty()) return {0.5f * r, 0.0f};
        const Position base = *mirror_.world().position(pick(live));
        return {base.x, base.z + (chance(0.5f) ? 0.25f : 0.5f) * r};
      }
    }
  }

  EntityId create_entity() {
    const Position p = position();
    EntityDef entity_def;
    entity_def.x = p.x;
    entity_def.z = p.z;
    entity_def.always_relevant = chance(0.08f) && def_.always_relevant;
    if (def_.relevance) {
      if (chance(0.01f)) {  // A bad bound: refused, nothing created.
        EntityDef bad = entity_def;
        bad.bound_radius = bad_bound();
        (void)mirror_.create_entity(bad);
      }
      if (chance(0.04f) && bounded().size() < 4) entity_def.bound_radius = bound_value();
    }
    if (def_.structure) {
      const std::vector<SpaceId> spaces = mirror_.oracle().spaces();
      if (chance(0.4f)) entity_def.space = pick(spaces);
      entity_def.presenter = chance(0.05f);
    }
    if (def_.external_ids) external_id(entity_def);
    const Result<EntityId> id = mirror_.create_entity(entity_def);
    return id.ok() ? *id : EntityId{};
  }

  // An external id for `entity_def`: a new one (scrambled, some near 2^64 so the stagger's sum
  // wraps), or one whose entity has gone (handed back: not `created`); before it, now and then a
  // refused create with an id a live entity holds, or with none.
  void external_id(EntityDef& entity_def) {
    const std::vector<EntityId> live = mirror_.oracle().entities();
    if (chance(0.03f) && !live.empty()) {
      EntityDef held = entity_def;
      held.external_id = mirror_.oracle().external_id(pick(live));
      (void)mirror_.create_entity(held);
    }
    if (chance(0.02f)) {
      EntityDef none = entity_def;
      none.external_id = 0;
      (void)mirror_.create_entity(none);
    }
    if (chance(0.3f) && !issued_.empty()) {
      const std::uint64_t back = pick(issued_);
      if (mirror_.oracle().find_external(back).is_null()) {
        entity_def.external_id = back;
        entity_def.created = false;
        return;
      }
    }
    std::uint64_t id = 0;
    while (id == 0) {
      // splitmix64 of a counter: distinct for distinct counters.
      std::uint64_t z = ++external_counter_ * 0x9e3779b97f4a7c15ull;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      id = z ^ (z >> 31);
      if (chance(0.1f)) id |= 0xffffffff00000000ull;
      if (!mirror_.oracle().find_external(id).is_null()) id = 0;
    }
    issued_.push_back(id);
    entity_def.external_id = id;
  }

  // --- Owners, origins and bounds ---

  std::vector<EntityId> bounded() {
    std::vector<EntityId> out;
    for (const EntityId e : mirror_.oracle().entities()) {
      if (mirror_.oracle().bound_radius(e) > 0.0f) out.push_back(e);
    }
    return out;
  }

  // A bound radius the World must accept: mostly a fraction of R or a few R, sometimes large,
  // rarely huge, kMaxRadius, -0 or the smallest denormal.
  float bound_value() {
    const float r = mirror_.world().enter_radius();
    const std::uint32_t kind = rng_.below(40);
    if (kind < 16) return rng_.uniform(0.05f, 1.0f) * r;
    if (kind < 28) return rng_.uniform(1.0f, 5.0f) * r;
    if (kind < 35) return rng_.uniform(5.0f, 30.0f) * r;
    if (kind < 37) return 1.0e3f;
    if (kind == 37) return kMaxRadius;
    if (kind == 38) return -0.0f;
    return std::numeric_limits<float>::denorm_min();
  }

  float bad_bound() {
    const float bad[] = {-1.0f,
                         -1.0e-6f,
                         std::numeric_limits<float>::quiet_NaN(),
                         std::numeric_limits<float>::infinity(),
                         -std::numeric_limits<float>::infinity(),
                         std::nextafter(kMaxRadius, std::numeric_limits<float>::infinity()),
                         2.0e9f};
    return bad[rng_.below(7)];
  }

  // A point at the reach of a bounded entity b: R + b (enter), L + b (leave), fraction * R + b
  // (the tier limits 0.25 and 0.5), along an axis or the 3-4-5 diagonal, sometimes a float step
  // off. Nothing when no entity is bounded.
  std::optional<Position> at_bounded_reach() {
    const std::vector<EntityId> candidates = bounded();
    if (candidates.empty()) return std::nullopt;
    const EntityId b = pick(candidates);
    const float bound = mirror_.oracle().bound_radius(b);
    const Position base = *mirror_.world().position(b);
    const float r = mirror_.world().enter_radius();
    const float l = mirror_.world().leave_radius();
    const float scales[] = {r, l, 0.25f * r, 0.5f * r};
    float reach = scales[rng_.below(4)] + bound;
    const float sign = chance(0.5f) ? 1.0f : -1.0f;
    if (chance(0.25f)) reach = std::nextafter(reach, std::numeric_limits<float>::infinity());
    if (chance(0.25f)) reach = std::nextafter(reach, 0.0f);
    switch (rng_.below(3)) {
      case 0: return Position{base.x + sign * reach, base.z};
      case 1: return Position{base.x, base.z + sign * reach};
      default: return Position{base.x + sign * 0.6f * reach, base.z - 0.8f * reach};
    }
  }

  // An entity some client's viewer is not (destroyable), or null.
  EntityId destroyable(const std::vector<EntityId>& from) {
    std::vector<EntityId> out;
    for (const EntityId e : from) {
      if (!mirror_.oracle().is_viewer(e)) out.push_back(e);
    }
    return out.empty() ? EntityId{} : pick(out);
  }

  std::vector<EntityId> owned_by_anyone() {
    std::vector<EntityId> out;
    for (const EntityId e : mirror_.oracle().entities()) {
      if (!mirror_.oracle().owner(e).is_null()) out.push_back(e);
    }
    return out;
  }

  void initial_relevance() {
    const std::vector<EntityId> entities = mirror_.oracle().entities();
    const std::uint32_t bounds = rng_.below(4);
    for (std::uint32_t i = 0; i < bounds; ++i) (void)mirror_.set_bound_radius(pick(entities), bound_value());
    for (const ClientId c : mirror_.oracle().clients()) {
      const std::uint32_t owns = rng_.below(3);
      for (std::uint32_t i = 0; i < owns; ++i) (void)mirror_.set_owner(pick(entities), c);
      const std::uint32_t origins = rng_.below(3);
      for (std::uint32_t i = 0; i < origins; ++i) {
        const EntityId o = pick(entities);
        if (mirror_.oracle().add_origin_refusal(c, o).empty()) (void)mirror_.add_origin(c, o);
      }
    }
  }

  void relevance_inputs() {
    const std::vector<EntityId> entities = mirror_.oracle().entities();
    const std::vector<ClientId> clients = mirror_.oracle().clients();
    if (entities.empty() || clients.empty()) return;
    const BruteForceOracle& oracle = mirror_.oracle();

    // Bounds: a few bounded entities; changed, reset to 0, refused.
    if (chance(0.1f)) {
      const EntityId e = pick(entities);
      const bool reset = oracle.bound_radius(e) > 0.0f ? chance(0.5f) : bounded().size() >= 4;
      (void)mirror_.set_bound_radius(e, reset ? 0.0f : bound_value());
    }
    if (chance(0.03f)) (void)mirror_.set_bound_radius(pick(entities), bad_bound());
    // Some entity to the reach of a bounded one: a viewer, an origin, or anything.
    if (chance(0.3f)) {
      if (const std::optional<Position> p = at_bounded_reach()) {
        EntityId e = pick(entities);
        const ClientId c = pick(clients);
        if (chance(0.4f)) e = oracle.viewer(c);
        const std::vector<EntityId> origins = oracle.origins(c);
        if (!origins.empty() && chance(0.3f)) e = pick(origins);
        (void)mirror_.set_position(e, p->x, p->z);
      }
    }

    // Owners: a few per client; replaced, cleared, the client's own viewer owned.
    if (chance(0.15f) && owned_by_anyone().size() < 2 * clients.size() + 2) {
      (void)mirror_.set_owner(pick(entities), pick(clients));
    }
    if (chance(0.05f)) {  // Replace: an owned entity to another client.
      const std::vector<EntityId> owned = owned_by_anyone();
      if (!owned.empty()) (void)mirror_.set_owner(pick(owned), pick(clients));
    }
    if (chance(0.03f)) {
      const ClientId c = pick(clients);
      (void)mirror_.set_owner(oracle.viewer(c), c);
    }
    if (chance(0.08f)) {
      const std::vector<EntityId> owned = owned_by_anyone();
      if (!owned.empty()) (void)mirror_.clear_owner(pick(owned));
    }
    if (chance(0.02f)) (void)mirror_.clear_owner(pick(entities));  // maybe unowned

    // Origins: a few per client; added, removed, refused, and sometimes a client filled up.
    for (const ClientId c : clients) {
      const std::vector<EntityId> origins = oracle.origins(c);
      if (chance(0.08f) && origins.size() < 3) {
        const EntityId o = pick(entities);
        if (oracle.add_origin_refusal(c, o).empty() || chance(0.3f)) (void)mirror_.add_origin(c, o);
      }
      if (!origins.empty() && chance(0.06f)) (void)mirror_.remove_origin(c, pick(origins));
      if (!origins.empty() && chance(0.03f)) (void)mirror_.add_origin(c, pick(origins));  // duplicate
      if (chance(0.02f)) (void)mirror_.add_origin(c, oracle.viewer(c));                   // the viewer
      if (chance(0.02f)) {                                                                // a non-origin
        const EntityId e = pick(entities);
        if (!oracle.is_origin(c, e)) (void)mirror_.remove_origin(c, e);
      }
      if (!origins.empty() && chance(0.03f)) (void)mirror_.set_viewer(c, pick(origins));
      // Origin positions the remaining rules must follow: a jump far away or home again.
      if (!origins.empty() && chance(0.04f)) {
        const Position p = position();
        (void)mirror_.set_position(pick(origins), p.x, p.z);
      }
    }
    if (chance(0.015f) && entities.size() > kMaxOrigins + 2) {  // Fill one client, then one more.
      const ClientId c = pick(clients);
      for (std::uint32_t tries = 0; tries < 4 * kMaxOrigins && oracle.origins(c).size() < kMaxOrigins;
           ++tries) {
        const EntityId o = pick(entities);
        if (oracle.add_origin_refusal(c, o).empty()) (void)mirror_.add_origin(c, o);
      }
      for (const EntityId o : entities) {
        if (oracle.origins(c).size() < kMaxOrigins) break;
        if (!oracle.is_origin(c, o) && oracle.viewer(c) != o) {
          (void)mirror_.add_origin(c, o);  // refused: full
          break;
        }
      }
    }
    // Once in a while a full client drops most of its origins again.
    for (const ClientId c : clients) {
      std::vector<EntityId> origins = oracle.origins(c);
      if (origins.size() > 3 && chance(0.3f)) {
        while (origins.size() > 2) {
          (void)mirror_.remove_origin(c, origins.back());
          origins.pop_back();
        }
      }
    }

    // Destroy an origin or an owned entity (ends the origin and the ownership at once), then
    // calls on the dead handle are refused. Churn only.
    if (def_.churn && chance(0.05f)) {
      std::vector<EntityId> special = owned_by_anyone();
      for (const ClientId c : clients) {
        for (const EntityId o : oracle.origins(c)) special.push_back(o);
      }
      const EntityId e = destroyable(special);
      if (!e.is_null() && mirror_.destroy_entity(e).ok()) {
        switch (rng_.below(4)) {
          case 0: (void)mirror_.set_owner(e, pick(clients)); break;
          case 1: (void)mirror_.add_origin(pick(clients), e); break;
          case 2: (void)mirror_.set_bound_radius(e, 1.0f); break;
          default: (void)mirror_.clear_owner(e); break;
        }
      }
    }
    // Dead and null handles, one bad handle per call.
    if (chance(0.05f)) {
      const EntityId e = pick(entities);
      const ClientId c = pick(clients);
      const EntityId bad_entity = chance(0.5f) ? EntityId{e.index, e.generation + 1} : EntityId{};
      const ClientId bad_client = chance(0.5f) ? ClientId{c.index, c.generation + 1} : ClientId{};
      switch (rng_.below(8)) {
        case 0: (void)mirror_.set_owner(bad_entity, c); break;
        case 1: (void)mirror_.set_owner(e, bad_client); break;
        case 2: (void)mirror_.clear_owner(bad_entity); break;
        case 3: (void)mirror_.add_origin(bad_client, e); break;
        case 4: (void)mirror_.add_origin(c, bad_entity); break;
        case 5: (void)mirror_.remove_origin(bad_client, e); break;
        case 6: (void)mirror_.remove_origin(c, bad_entity); break;
        default: (void)mirror_.set_bound_radius(bad_entity, 1.0f); break;
      }
    }
  }

  // --- Spaces, attachments, presenters and teleports ---

  std::vector<EntityId> roots() {
    std::vector<EntityId> out;
    for (const EntityId e : mirror_.oracle().entities()) {
      if (!mirror_.oracle().is_attached(e)) out.push_back(e);
    }
    return out;
  }

  std::vector<EntityId> attached() {
    std::vector<EntityId> out;
    for (const EntityId e : mirror_.oracle().entities()) {
      if (mirror_.oracle().is_attached(e)) out.push_back(e);
    }
    return out;
  }

  std::vector<SpaceId> created_spaces() {
    std::vector<SpaceId> out = mirror_.oracle().spaces();
    out.erase(out.begin());  // the default space
    return out;
  }

  // A handle the World must refuse as stale: the default space never dies, so its slot with a
  // later generation names nothing.
  SpaceId stale_space() {
    if (!dead_spaces_.empty() && chance(0.7f)) return pick(dead_spaces_);
    const SpaceId d = mirror_.oracle().default_space();
    return SpaceId{d.index, d.generation + 1};
  }

  // A valid SpaceDef whose radii suit the World's scale: culling on or off; the World's radii,
  // explicit radii, or the factor form (radius in [8, 1000] with factors that bring it near R,
  // sometimes the default 1.2 and 1.4); a broadcast threshold of 0 or 1..6, margin 0..3.
  SpaceDef space_def_value() {
    SpaceDef d;
    d.culling = chance(0.65f) ? Culling::on : Culling::off;
    const float r = mirror_.world().enter_radius();
    switch (rng_.below(3)) {
      case 0: break;
      case 1:
        d.enter_radius = rng_.uniform(0.5f, 2.0f) * r;
        d.leave_radius = chance(0.3f) ? d.enter_radius : d.enter_radius * rng_.uniform(1.0f, 1.8f);
        break;
      default: {
        const float radii[] = {kLeastInterestRadius, rng_.uniform(8.0f, 40.0f), rng_.uniform(8.0f, 40.0f),
                               kMostInterestRadius};
        d.radius = radii[rng_.below(4)];
        if (chance(0.1f) && d.radius < 20.0f) break;  // the default factors: a wide radius
        d.enter_factor = std::min(kMaxRadiusFactor, rng_.uniform(0.5f, 2.0f) * r / d.radius);
        d.leave_factor = chance(0.3f) ? d.enter_factor
                                      : std::min(kMaxRadiusFactor, d.enter_factor * rng_.uniform(1.0f, 1.6f));
        break;
      }
    }
    if (chance(0.5f)) {
      d.broadcast_threshold = 1 + rng_.below(6);
      d.broadcast_margin = rng_.below(4);
    } else {
      d.broadcast_threshold = 0;
      d.broadcast_margin = rng_.below(4);
    }
    if (def_.sight) d.visibility_hold_ticks = hold_value();
    if (def_.radii) view_range(d);
    return d;
  }

  // --- Radii ---
  float scale_value() {
    const float scales[] = {
        0.5f, 0.25f, 2.0f, 1.5f, 1.0f, kMinRadiusScale, kMaxRadiusScale, rng_.uniform(0.3f, 3.0f)};
    return scales[rng_.below(8)];
  }

  // A client's view radii: none, an enter radius alone, or with its own leave radius (sometimes
  // equal: no hysteresis).
  void set_view(ClientId c) {
    if (chance(0.2f)) {
      (void)mirror_.set_view_radius(c, 0.0f, 0.0f);
      return;
    }
    const float enter = rng_.uniform(0.2f, 3.0f) * mirror_.world().enter_radius();
    const float leave = chance(0.5f) ? 0.0f : (chance(0.3f) ? enter : enter * rng_.uniform(1.0f, 2.0f));
    (void)mirror_.set_view_radius(c, enter, leave);
  }

  void view_range(SpaceDef& d) {
    const float r = mirror_.world().enter_radius();
    d.min_view_radius = chance(0.5f) ? 0.0f : rng_.uniform(0.2f, 1.0f) * r;
    d.max_view_radius = chance(0.3f) ? 0.0f : std::max(d.min_view_radius, rng_.uniform(0.5f, 3.0f) * r);
  }

  void set_default_view_range() {
    const SpaceId space = mirror_.oracle().default_space();
    SpaceDef d = mirror_.oracle().space_def(space);
    view_range(d);
    (void)mirror_.set_space_def(space, d);
  }

  void initial_radii() {
    const std::vector<EntityId> entities = mirror_.oracle().entities();
    const std::uint32_t scaled = rng_.below(5);
    for (std::uint32_t i = 0; i < scaled; ++i) (void)mirror_.set_radius_scale(pick(entities), scale_value());
    for (const ClientId c : mirror_.oracle().clients()) {
      if (chance(0.4f)) set_view(c);
    }
    if (chance(0.7f)) set_default_view_range();
  }

  void radii_inputs() {
    const std::vector<EntityId> entities = mirror_.oracle().entities();
    const std::vector<ClientId> clients = mirror_.oracle().clients();
    if (entities.empty() || clients.empty()) return;
    const BruteForceOracle& oracle = mirror_.oracle();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    if (chance(0.12f)) (void)mirror_.set_radius_scale(pick(entities), scale_value());
    if (chance(0.03f)) {
      const float bad[] = {
          0.0f, -1.0f, nan, inf, std::nextafter(kMaxRadiusScale, inf), std::nextafter(kMinRadiusScale, 0.0f)};
      (void)mirror_.set_radius_scale(pick(entities), bad[rng_.below(6)]);
    }
    if (chance(0.12f)) set_view(pick(clients));
    if (chance(0.03f)) {
      const float bad[] = {-1.0f, nan, inf, 2.0e9f, 0.5e-6f};
      const float value = bad[rng_.below(5)];
      switch (rng_.below(3)) {
        case 0: (void)mirror_.set_view_radius(pick(clients), value); break;
        case 1: (void)mirror_.set_view_radius(pick(clients), 2.0f, chance(0.5f) ? value : 1.5f); break;
        default: (void)mirror_.set_view_radius(pick(clients), 0.0f, 2.0f); break;
      }
    }
    if (chance(0.02f)) {
      const ClientId c = pick(clients);
      (void)mirror_.set_view_radius(chance(0.5f) ? ClientId{c.index, c.generation + 1} : ClientId{}, 1.0f);
      const EntityId e = pick(entities);
      (void)mirror_.set_radius_scale(chance(0.5f) ? EntityId{e.index, e.generation + 1} : EntityId{}, 1.0f);
    }
    if (chance(0.05f)) set_default_view_range();
    // A scaled root to the edge of a client's scaled reach (enter or leave), as the last tick
    // settled the client's radii.
    if (chance(0.3f)) {
      const ClientId c = pick(clients);
      const Result<ClientRadii> radii = mirror_.world().client_radii(c);
      std::vector<EntityId> scaled;
      for (const EntityId e : entities) {
        if (oracle.radius_scale(e) != 1.0f && !oracle.is_attached(e) && e != oracle.viewer(c))
          scaled.push_back(e);
      }
      if (radii.ok() && radii->enter_radius > 0.0f && !scaled.empty()) {
        const EntityId e = pick(scaled);
        const Position v = *mirror_.world().position(oracle.viewer(c));
        const float reach =
            oracle.radius_scale(e) * (chance(0.5f) ? radii->enter_radius : radii->leave_radius);
        (void)mirror_.set_position(e, v.x + reach, v.z);
      }
    }
  }

  // --- Sight ---

  std::uint32_t hold_value() {
    if (chance(0.03f)) return kMaxVisibilityHoldTicks;
    return rng_.below(5);
  }

  // A few walls for `space`: across the line of sight from a viewer to an entity, on lattice
  // points of spacing R, posts (zero length), spanning the world, or short random ones.
  std::vector<WallSegment> wall_set() {
    const BruteForceOracle& oracle = mirror_.oracle();
    const float r = mirror_.world().enter_radius();
    const std::vector<EntityId> entities = oracle.entities();
    const std::vector<ClientId> clients = oracle.clients();
    std::vector<WallSegment> walls;
    const std::uint32_t n = 1 + rng_.below(8);
    for (std::uint32_t i = 0; i < n; ++i) {
      const Position v = clients.empty() || entities.empty()
                             ? Position{}
                             : *mirror_.world().position(oracle.viewer(pick(clients)));
      // Mostly an entity within 2 R of that viewer, whose line of sight matters.
      std::vector<EntityId> close;
      for (const EntityId e : entities) {
        const Position q = *mirror_.world().position(e);
        const float dx = q.x - v.x;
        const float dz = q.z - v.z;
        if (dx * dx + dz * dz <= 4.0f * r * r) close.push_back(e);
      }
      const std::vector<EntityId>& from = !close.empty() && chance(0.8f) ? close : entities;
      const Position p = from.empty() ? Position{r, 0.0f} : *mirror_.world().position(pick(from));
      const float mx = 0.5f * (v.x + p.x);
      const float mz = 0.5f * (v.z + p.z);
      auto lattice = [&] { return static_cast<float>(static_cast<int>(rng_.below(9)) - 4) * r; };
      switch (rng_.below(8)) {
        case 0:
        case 1:
        case 2: {  // across the line of sight, at its midpoint or off it
          const float dx = p.x - v.x;
          const float dz = p.z - v.z;
          const float length = std::sqrt(dx * dx + dz * dz);
          if (!(length > 0.0f) || !std::isfinite(length)) {
            walls.push_back({mx, mz, mx, mz});
            break;
          }
          const float half = rng_.uniform(0.05f, 1.0f) * r / length;
          const float t = chance(0.5f) ? 0.5f : rng_.uniform(0.1f, 0.9f);
          const float cx = v.x + t * dx;
          const float cz = v.z + t * dz;
          walls.push_back({cx - dz * half, cz + dx * half, cx + dz * half, cz - dx * half});
          break;
        }
        case 3: {  // on lattice points, along a lattice line or a diagonal
          const float x0 = lattice();
          const float z0 = lattice();
          const float step = chance(0.5f) ? r : -r;
          switch (rng_.below(3)) {
            case 0: walls.push_back({x0, z0, x0 + step, z0}); break;
            case 1: walls.push_back({x0, z0, x0, z0 + step}); break;
            default: walls.push_back({x0, z0, x0 + step, z0 + step}); break;
          }
          break;
        }
        case 4: {  // a post: at a lattice point, at the midpoint of a line of sight, at an entity
          switch (rng_.below(3)) {
            case 0: {
              const float x = lattice();
              const float z = lattice();
              walls.push_back({x, z, x, z});
              break;
            }
            case 1: walls.push_back({mx, mz, mx, mz}); break;
            default: walls.push_back({p.x, p.z, p.x, p.z}); break;
          }
          break;
        }
        case 5: {  // spanning the world, along an axis
          const float at = chance(0.5f) ? rng_.uniform(-width_, width_) : lattice();
          if (chance(0.5f)) {
            walls.push_back({-kMaxCoordinate, at, kMaxCoordinate, at});
          } else {
            walls.push_back({at, -kMaxCoordinate, at, kMaxCoordinate});
          }
          break;
        }
        default: {  // short and random
          const float x = rng_.uniform(-width_, width_);
          const float z = rng_.uniform(-width_, width_);
          walls.push_back({x, z, x + rng_.uniform(-1.0f, 1.0f) * r, z + rng_.uniform(-1.0f, 1.0f) * r});
          break;
        }
      }
    }
    return walls;
  }

  float velocity_component() {
    const float r = mirror_.world().enter_radius();
    const std::uint32_t kind = rng_.below(20);
    if (kind < 3) return 0.0f;
    if (kind == 3) return -0.0f;
    if (kind == 4) return chance(0.5f) ? kMaxCoordinate : -kMaxCoordinate;
    return rng_.uniform(-2.0f, 2.0f) * r;
  }

  float look_ahead_value() {
    const float values[] = {0.0f, 0.1f, 0.25f, 0.5f, 0.5f, 1.0f, kMaxLookAhead, rng_.uniform(0.0f, 2.0f)};
    return values[rng_.below(8)];
  }

  void set_hold(SpaceId space) {
    SpaceDef def = mirror_.oracle().space_def(space);
    def.visibility_hold_ticks = hold_value();
    (void)mirror_.set_space_def(space, def);
  }

  void initial_sight() {
    const BruteForceOracle& oracle = mirror_.oracle();
    for (const SpaceId space : oracle.spaces()) {
      if (chance(0.4f)) set_hold(space);
      if (chance(0.75f)) {
        const std::vector<WallSegment> walls = wall_set();
        (void)mirror_.set_walls(space, walls);
      }
    }
    for (const EntityId e : oracle.entities()) {
      if (chance(0.5f)) (void)mirror_.set_velocity(e, velocity_component(), velocity_component());
    }
    for (const ClientId c : oracle.clients()) {
      if (chance(0.8f)) (void)mirror_.set_look_ahead(c, look_ahead_value());
    }
    filter_.salt = rng_.next();
    filter_.modulus = 3 + rng_.below(4);
    if (chance(0.3f) && def_.visibility_filter) mirror_.set_visibility_filter(&sight_filter, &filter_);
  }

  void sight_inputs() {
    const BruteForceOracle& oracle = mirror_.oracle();
    const std::vector<EntityId> entities = oracle.entities();
    const std::vector<ClientId> clients = oracle.clients();
    const std::vector<SpaceId> spaces = oracle.spaces();
    if (entities.empty() || clients.empty()) return;

    // Walls: set, replaced, grown by one, cleared; a bad coordinate among good ones is refused.
    if (chance(0.4f)) {
      const SpaceId space = pick(spaces);
      std::vector<WallSegment> walls = chance(0.3f) ? oracle.walls(space) : wall_set();
      if (chance(0.3f)) {
        const std::vector<WallSegment> more = wall_set();
        walls.push_back(more.front());
      }
      (void)mirror_.set_walls(space, walls);
    }
    if (chance(0.04f)) (void)mirror_.set_walls(pick(spaces), std::vector<WallSegment>{});
    if (chance(0.03f)) {
      std::vector<WallSegment> walls = wall_set();
      const float bad[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(),
                           std::nextafter(kMaxCoordinate, std::numeric_limits<float>::infinity()), -2.0e15f};
      WallSegment& wall = walls[rng_.below(static_cast<std::uint32_t>(walls.size()))];
      float* coordinates[] = {&wall.x0, &wall.z0, &wall.x1, &wall.z1};
      *coordinates[rng_.below(4)] = bad[rng_.below(5)];
      (void)mirror_.set_walls(pick(spaces), walls);
    }

    // Velocities and look-aheads, and their refusals.
    const std::uint32_t velocities = chance(0.5f) ? 1 + rng_.below(6) : 0;
    for (std::uint32_t i = 0; i < velocities; ++i) {
      (void)mirror_.set_velocity(pick(entities), velocity_component(), velocity_component());
    }
    if (chance(0.03f)) {
      const float bad[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                           std::nextafter(kMaxCoordinate, std::numeric_limits<float>::infinity()), -2.0e15f};
      const float good = velocity_component();
      const float wrong = bad[rng_.below(4)];
      (void)mirror_.set_velocity(pick(entities), chance(0.5f) ? wrong : good, chance(0.5f) ? good : wrong);
    }
    if (chance(0.08f)) (void)mirror_.set_look_ahead(pick(clients), look_ahead_value());
    if (chance(0.03f)) {
      const float bad[] = {-1.0e-3f, -std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN(),
                           std::nextafter(kMaxLookAhead, std::numeric_limits<float>::infinity()), 11.0f};
      (void)mirror_.set_look_ahead(pick(clients), bad[rng_.below(5)]);
    }

    // Holds, and a refused one.
    if (chance(0.04f)) set_hold(pick(spaces));
    if (chance(0.02f)) {
      SpaceDef def = oracle.space_def(pick(spaces));
      def.visibility_hold_ticks = chance(0.5f) ? kMaxVisibilityHoldTicks + 1 : 0xffffffffu;
      if (chance(0.5f)) {
        (void)mirror_.create_space(def);
      } else {
        (void)mirror_.set_space_def(pick(spaces), def);
      }
    }

    // The filter: its value redrawn (the game's fog changing), set, removed.
    if (chance(0.2f)) filter_.salt = rng_.next();
    if (chance(0.05f) && def_.visibility_filter) mirror_.set_visibility_filter(&sight_filter, &filter_);
    if (chance(0.04f)) mirror_.set_visibility_filter(nullptr, &filter_);

    // Dead and null handles, one per call.
    if (chance(0.03f)) {
      const EntityId e = pick(entities);
      const ClientId c = pick(clients);
      const SpaceId d = oracle.default_space();
      switch (rng_.below(3)) {
        case 0:
          (void)mirror_.set_velocity(chance(0.5f) ? EntityId{e.index, e.generation + 1} : EntityId{}, 1.0f,
                                     0.0f);
          break;
        case 1:
          (void)mirror_.set_look_ahead(chance(0.5f) ? ClientId{c.index, c.generation + 1} : ClientId{}, 0.5f);
          break;
        default: {
          const std::vector<WallSegment> walls = wall_set();
          (void)mirror_.set_walls(chance(0.5f) ? SpaceId{d.index, d.generation + 1} : SpaceId{}, walls);
          break;
        }
      }
    }
  }

  // A SpaceDef the World must refuse: one field or combination out of range.
  SpaceDef bad_space_def() {
    SpaceDef d = space_def_value();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    if (def_.radii && chance(0.3f)) {  // a view range out of bounds, or upside down
      d.min_view_radius = 0.0f;
      d.max_view_radius = 0.0f;
      const float bad[] = {-1.0f, nan, inf, 2.0e9f, 0.5e-6f};
      switch (rng_.below(3)) {
        case 0: d.min_view_radius = bad[rng_.below(5)]; break;
        case 1: d.max_view_radius = bad[rng_.below(5)]; break;
        default:
          d.max_view_radius = 2.0f;
          d.min_view_radius = std::nextafter(2.0f, inf);
          break;
      }
      return d;
    }
    auto factor_form = [&] {
      d.enter_radius = 0.0f;
      d.leave_radius = 0.0f;
      d.radius = rng_.uniform(8.0f, 40.0f);
      d.enter_factor = 0.1f;
      d.leave_factor = 0.15f;
    };
    auto radius_form = [&] {
      d.radius = 0.0f;
      d.enter_radius = 1.0f;
      d.leave_radius = 1.5f;
    };
    switch (rng_.below(9)) {
      case 0: {  // enter_factor outside (0, 16]
        factor_form();
        const float bad[] = {0.0f, -0.5f, std::nextafter(kMaxRadiusFactor, inf), nan};
        d.enter_factor = bad[rng_.below(4)];
        break;
      }
      case 1: {  // leave_factor below enter_factor or above 16
        factor_form();
        const float bad[] = {0.05f, std::nextafter(0.1f, 0.0f), 17.0f, nan};
        d.leave_factor = bad[rng_.below(4)];
        break;
      }
      case 2: {  // radius outside [8, 1000]
        factor_form();
        const float bad[] = {7.99f,
                             std::nextafter(kLeastInterestRadius, 0.0f),
                             std::nextafter(kMostInterestRadius, inf),
                             -8.0f,
                             nan,
                             inf};
        d.radius = bad[rng_.below(6)];
        break;
      }
      case 3:  // only enter_radius given
        radius_form();
        d.leave_radius = 0.0f;
        break;
      case 4:  // only leave_radius given
        radius_form();
        d.enter_radius = 0.0f;
        break;
      case 5:  // leave < enter
        radius_form();
        d.leave_radius = std::nextafter(d.enter_radius, 0.0f);
        break;
      case 6:  // both forms at once
        factor_form();
        d.enter_radius = 1.0f;
        d.leave_radius = 1.5f;
        break;
      case 7: {  // enter_radius out of the World's range
        radius_form();
        const float bad[] = {-1.0f, 0.5e-6f, 2.0e9f, nan};
        d.enter_radius = bad[rng_.below(4)];
        d.leave_radius = 3.0e9f;
        break;
      }
      default:  // leave_radius beyond kMaxRadius
        radius_form();
        d.leave_radius = 2.0e9f;
        break;
    }
    return d;
  }

  void set_drill(SpaceId space) {
    float enter = rng_.uniform(0.3f, 1.5f) * mirror_.world().enter_radius();
    if (cell_size_ != 0.0f && enter > cell_size_) enter = cell_size_;
    const float leave = chance(0.3f) ? enter : enter * rng_.uniform(1.0f, 1.8f);
    (void)mirror_.set_culling_drill(space, enter, leave);
  }

  void bad_drill(SpaceId space) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    const float bad[][2] = {{0.0f, 1.0f}, {-1.0f, 1.0f},  {nan, 1.0f}, {1.0f, 0.5f},
                            {1.0f, inf},  {1.0f, 2.0e9f}, {inf, inf}};
    const auto* radii = bad[rng_.below(7)];
    (void)mirror_.set_culling_drill(space, radii[0], radii[1]);
  }

  // Moves a tree (or tries to move an attached entity, refused) into a space.
  void move_to(EntityId e, SpaceId space) { (void)mirror_.set_space(e, space); }

  // The deepest entity of a random tree: chains grow from it.
  EntityId deepest(const std::vector<EntityId>& entities) {
    return deepest_in(mirror_.oracle().root(pick(entities)));
  }

  // One attach call, mostly one the World must accept: a random child (sometimes a viewer) to a
  // parent that is a viewer, an extra origin, an owned entity, a chain's deepest entity or any.
  void attach_random() {
    const BruteForceOracle& oracle = mirror_.oracle();
    const std::vector<EntityId> entities = oracle.entities();
    const std::vector<ClientId> clients = oracle.clients();
    if (entities.size() < 2) return;
    EntityId child = pick(entities);
    if (!clients.empty() && chance(0.1f)) child = oracle.viewer(pick(clients));
    EntityId parent = pick(entities);
    switch (rng_.below(7)) {
      case 0:
        if (!clients.empty()) parent = oracle.viewer(pick(clients));
        break;
      case 1:
        if (!clients.empty()) {
          const std::vector<EntityId> origins = oracle.origins(pick(clients));
          if (!origins.empty()) parent = pick(origins);
        }
        break;
      case 2: {
        std::vector<EntityId> owned;
        for (const EntityId e : entities) {
          if (!oracle.owner(e).is_null()) owned.push_back(e);
        }
        if (!owned.empty()) parent = pick(owned);
        break;
      }
      case 3: parent = deepest(entities); break;
      default: break;
    }
    if (oracle.attach_refusal(child, parent).empty() || chance(0.1f)) (void)mirror_.attach(child, parent);
  }

  // The deepest entity of the tree rooted at `root`.
  EntityId deepest_in(EntityId root) {
    const BruteForceOracle& oracle = mirror_.oracle();
    EntityId best = root;
    for (const EntityId e : oracle.entities()) {
      if (oracle.root(e) == root && oracle.depth(e) > oracle.depth(best)) best = e;
    }
    return best;
  }

  // A chain: trees of one space hung one below the other's deepest entity until the depth limit
  // refuses one more.
  void build_chain() {
    const BruteForceOracle& oracle = mirror_.oracle();
    const EntityId top = oracle.root(pick(oracle.entities()));
    const SpaceId space = oracle.space(top);
    for (const EntityId e : roots()) {
      if (e == top || oracle.space(e) != space || oracle.stored_key(e) != 0 || oracle.presenter(e)) continue;
      const EntityId tail = deepest_in(top);
      const bool refused = !oracle.attach_refusal(e, tail).empty();
      (void)mirror_.attach(e, tail);
      if (refused) break;
    }
  }

  // One attach call the World must refuse, of each kind in turn.
  void refused_attach() {
    const BruteForceOracle& oracle = mirror_.oracle();
    const std::vector<EntityId> entities = oracle.entities();
    const EntityId e = pick(entities);
    switch (rng_.below(6)) {
      case 0: (void)mirror_.attach(e, e); break;
      case 1: {  // the parent is below the child
        const std::vector<EntityId> children = attached();
        if (!children.empty()) {
          const EntityId below = pick(children);
          (void)mirror_.attach(oracle.root(below), below);
        }
        break;
      }
      case 2:
        for (const EntityId keyed : entities) {
          if (oracle.stored_key(keyed) != 0 && keyed != e) {
            (void)mirror_.attach(keyed, e);
            break;
          }
        }
        break;
      case 3:
        for (const EntityId p : entities) {
          if (oracle.presenter(p) && p != e) {
            (void)mirror_.attach(p, e);
            break;
          }
        }
        break;
      case 4:
        for (const EntityId other : entities) {
          if (oracle.space(other) != oracle.space(e)) {
            (void)mirror_.attach(e, other);
            break;
          }
        }
        break;
      default: {  // a dead or null handle
        const EntityId bad = chance(0.5f) ? EntityId{e.index, e.generation + 1} : EntityId{};
        if (chance(0.5f))
          (void)mirror_.attach(bad, e);
        else
          (void)mirror_.attach(e, bad);
        break;
      }
    }
  }

  // A position for a teleport: far away, or next to some client's viewer (a `teleport` spawn).
  Position teleport_target() {
    const std::vector<ClientId> clients = mirror_.oracle().clients();
    if (!clients.empty() && chance(0.5f)) {
      const Position v =
          *mirror_.world().position(mirror_.oracle().root(mirror_.oracle().viewer(pick(clients))));
      const float r = mirror_.world().enter_radius();
      return {v.x + rng_.uniform(-0.7f, 0.7f) * r, v.z + rng_.uniform(-0.7f, 0.7f) * r};
    }
    if (chance(0.3f)) {
      const float far = rng_.uniform(1.0e3f, 1.0e5f);
      return {chance(0.5f) ? far : -far, rng_.uniform(-width_, width_)};
    }
    return {rng_.uniform(-3.0f * width_, 3.0f * width_), rng_.uniform(-3.0f * width_, 3.0f * width_)};
  }

  // A point at exactly a space's radius (enter or leave, as its last tick used them) from an
  // entity of that space, along an axis, sometimes a float step off.
  std::optional<Position> at_space_radius() {
    const std::vector<EntityId> live = mirror_.oracle().entities();
    if (live.empty()) return std::nullopt;
    const EntityId e = mirror_.oracle().root(pick(live));
    const SpaceState state = mirror_.oracle().space_state(mirror_.oracle().space(e));
    if (state.enter_radius <= 0.0f) return std::nullopt;
    const Position base = *mirror_.world().position(e);
    float offset = chance(0.5f) ? state.enter_radius : state.leave_radius;
    if (chance(0.25f)) offset = std::nextafter(offset, std::numeric_limits<float>::infinity());
    if (chance(0.25f)) offset = std::nextafter(offset, 0.0f);
    if (chance(0.5f)) offset = -offset;
    return chance(0.5f) ? Position{base.x + offset, base.z} : Position{base.x, base.z + offset};
  }

  void initial_structure() {
    const std::uint32_t spaces = 1 + rng_.below(3);
    for (std::uint32_t i = 0; i < spaces; ++i) (void)mirror_.create_space(space_def_value());
    const std::vector<SpaceId> all = mirror_.oracle().spaces();
    for (const EntityId e : mirror_.oracle().entities()) {
      if (chance(0.5f)) move_to(e, pick(all));
    }
    const std::uint32_t attaches = rng_.below(8);
    for (std::uint32_t i = 0; i < attaches; ++i) attach_random();
    const std::uint32_t presenters = rng_.below(3);
    for (std::uint32_t i = 0; i < presenters; ++i) (void)mirror_.set_presenter(pick(roots()), true);
  }

  void structure_inputs() {
    const BruteForceOracle& oracle = mirror_.oracle();
    if (oracle.entities().empty() || oracle.clients().empty()) return;

    // Spaces: created, redefined, refused definitions, emptied and destroyed.
    if (chance(0.05f) && created_spaces().size() < 4) (void)mirror_.create_space(space_def_value());
    if (chance(0.08f) && !created_spaces().empty())
      (void)mirror_.set_space_def(pick(created_spaces()), space_def_value());
    if (chance(0.02f)) {  // the default space's setting changes too, and comes back
      SpaceDef def = space_def_value();
      if (chance(0.5f)) {
        def = SpaceDef{};
        def.culling = Culling::on;
      }
      (void)mirror_.set_space_def(oracle.default_space(), def);
    }
    if (chance(0.04f)) {
      if (chance(0.5f) || created_spaces().empty()) {
        (void)mirror_.create_space(bad_space_def());
      } else {
        (void)mirror_.set_space_def(pick(created_spaces()), bad_space_def());
      }
    }
    if (chance(0.01f)) {  // factors out of range while radius is 0: not checked, accepted
      SpaceDef odd;
      odd.enter_factor = chance(0.5f) ? 0.0f : 20.0f;
      (void)mirror_.create_space(odd);
    }
    if (chance(0.03f) && !created_spaces().empty()) {  // empty a space, destroy it, use the dead handle
      const SpaceId gone = pick(created_spaces());
      std::vector<SpaceId> others = oracle.spaces();
      std::erase(others, gone);
      for (const EntityId e : roots()) {
        if (oracle.space(e) == gone) move_to(e, pick(others));
      }
      // Destroyed with its walls on: a space made later in the slot must start without them.
      if (mirror_.destroy_space(gone).ok()) {
        dead_spaces_.push_back(gone);
        const EntityId e = pick(roots());
        switch (rng_.below(4)) {
          case 0: move_to(e, gone); break;
          case 1: (void)mirror_.set_culling_drill(gone, 1.0f, 1.0f); break;
          case 2: (void)mirror_.set_space_def(gone, space_def_value()); break;
          default: (void)mirror_.destroy_space(gone); break;
        }
      }
    }
    if (chance(0.03f)) {  // the default or non-empty: refused
      const SpaceId space = pick(oracle.spaces());
      if (def_.sight && oracle.destroy_space_refusal(space).empty()) {
        (void)mirror_.set_walls(space, std::vector<WallSegment>{});  // as above
      }
      (void)mirror_.destroy_space(space);
    }
    if (chance(0.01f)) {
      EntityDef in_dead;
      in_dead.space = stale_space();
      (void)mirror_.create_entity(in_dead);
    }

    // Clients between spaces, one by one and several at once, so counts cross thresholds.
    const std::vector<SpaceId> spaces = oracle.spaces();
    for (const ClientId c : oracle.clients()) {
      if (!chance(0.05f)) continue;
      const EntityId viewer = oracle.viewer(c);
      move_to(chance(0.8f) ? oracle.root(viewer) : viewer, pick(spaces));  // an attached viewer is refused
    }
    if (chance(0.05f)) {
      const SpaceId target = pick(spaces);
      const std::uint32_t n = 2 + rng_.below(5);
      for (std::uint32_t i = 0; i < n; ++i)
        move_to(oracle.root(oracle.viewer(pick(oracle.clients()))), target);
    }
    // Entities between spaces; refused moves of attached entities and to dead spaces.
    const std::uint32_t moves = chance(0.3f) ? 1 + rng_.below(3) : 0;
    for (std::uint32_t i = 0; i < moves; ++i) move_to(pick(roots()), pick(spaces));
    if (chance(0.04f) && !attached().empty()) move_to(pick(attached()), pick(spaces));
    if (chance(0.01f)) move_to(pick(roots()), stale_space());

    // Drills.
    if (chance(0.05f)) set_drill(pick(spaces));
    if (chance(0.06f)) (void)mirror_.clear_culling_drill(pick(spaces));
    if (chance(0.02f)) bad_drill(pick(spaces));

    // Attachments.
    const std::uint32_t attaches = chance(0.35f) ? 1 + rng_.below(3) : 0;
    for (std::uint32_t i = 0; i < attaches; ++i) attach_random();
    if (chance(0.04f)) build_chain();
    if (chance(0.06f)) refused_attach();
    if (chance(0.12f) && !attached().empty()) (void)mirror_.detach(pick(attached()));
    if (chance(0.02f)) (void)mirror_.detach(pick(roots()));  // a root: not an error
    if (def_.churn && chance(0.05f)) {                       // destroy a parent: its children become roots
      std::vector<EntityId> parents;
      for (const EntityId e : attached()) {
        const EntityId p = oracle.parent(e);
        if (!oracle.is_viewer(p)) parents.push_back(p);
      }
      if (!parents.empty()) (void)mirror_.destroy_entity(pick(parents));
    }

    // Presenters, and the refusals on attached entities.
    if (chance(0.06f)) (void)mirror_.set_presenter(pick(roots()), chance(0.6f));
    if (chance(0.04f) && !attached().empty()) {
      const EntityId child = pick(attached());
      switch (rng_.below(4)) {
        case 0: (void)mirror_.set_presenter(child, chance(0.5f)); break;
        case 1: (void)mirror_.set_area_interest_key(child, key_value()); break;
        case 2: (void)mirror_.set_user_interest_key(child, key_value()); break;
        default: (void)mirror_.set_global_interest_key(child); break;
      }
    }

    // Teleports: mostly roots, sometimes an attached entity (its tree is teleported), a viewer or
    // an extra origin (every member of that client is due).
    const std::uint32_t teleports = chance(0.25f) ? 1 + rng_.below(2) : 0;
    for (std::uint32_t i = 0; i < teleports; ++i) {
      EntityId e = pick(roots());
      if (chance(0.15f) && !attached().empty()) e = pick(attached());
      if (chance(0.25f)) e = oracle.viewer(pick(oracle.clients()));
      if (chance(0.1f)) {
        const std::vector<EntityId> origins = oracle.origins(pick(oracle.clients()));
        if (!origins.empty()) e = pick(origins);
      }
      const Position p = teleport_target();
      (void)mirror_.teleport(e, p.x, p.z);
    }
    if (chance(0.01f)) {
      const float bad[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                           2.0e15f};
      (void)mirror_.teleport(pick(roots()), bad[rng_.below(3)], 0.0f);
    }
  }

  void between_ticks() {
    const float r = mirror_.world().enter_radius();
    // Moves go one by one through set_position, or all at once through set_positions.
    const bool batched = chance(0.5f);
    std::vector<EntityId> moved;
    std::vector<float> xs;
    std::vector<float> zs;
    for (const EntityId e : mirror_.oracle().entities()) {
      if (chance(0.5f)) continue;
      Position p;
      if (chance(0.06f)) {
        p = position();
      } else {
        p = *mirror_.world().position(e);
        p.x += rng_.uniform(-0.25f, 0.25f) * r;
        p.z += rng_.uniform(-0.25f, 0.25f) * r;
      }
      if (batched) {
        moved.push_back(e);
        xs.push_back(p.x);
        zs.push_back(p.z);
      } else {
        (void)mirror_.set_position(e, p.x, p.z);
      }
    }
    if (batched) (void)mirror_.set_positions(moved, xs, zs);
    if (def_.keys) key_inputs();
    if (def_.relevance) relevance_inputs();
    if (def_.structure) structure_inputs();
    if (def_.sight) sight_inputs();
    if (def_.radii) radii_inputs();
    if (!def_.churn) return;

    const std::uint32_t destroys = chance(0.1f) ? rng_.below(6) : (chance(0.3f) ? 1 : 0);
    for (std::uint32_t i = 0; i < destroys; ++i) {
      const std::vector<EntityId> live = mirror_.oracle().entities();
      if (live.size() > 1) {
        const EntityId e = pick(live);
        (void)(def_.withdraw && chance(0.5f) ? mirror_.withdraw_entity(e) : mirror_.destroy_entity(e));
      }
    }
    const std::uint32_t creates = chance(0.1f) ? rng_.below(6) : (chance(0.3f) ? 1 : 0);
    for (std::uint32_t i = 0; i < creates; ++i) create_entity();
    if (chance(0.05f)) {  // Destroy an entity created in this same window.
      (void)mirror_.destroy_entity(create_entity());
    }
    if (chance(0.15f)) {
      const std::vector<EntityId> live = mirror_.oracle().entities();
      (void)mirror_.set_always_relevant(pick(live), chance(0.5f) && def_.always_relevant);
    }
    const std::vector<ClientId> clients = mirror_.oracle().clients();
    if (!clients.empty() && chance(0.1f)) {
      (void)mirror_.set_viewer(pick(clients), pick(mirror_.oracle().entities()));
    }
    if (chance(0.08f)) (void)mirror_.create_client(pick(mirror_.oracle().entities()));
    if (!clients.empty() && chance(0.06f)) (void)mirror_.destroy_client(pick(clients));
    if (chance(0.05f)) set_random_radii();
    if (def_.crowd_cap && chance(0.1f)) mirror_.set_crowd_cap(random_crowd_cap());
  }

  std::uint32_t random_crowd_cap() {
    const std::uint32_t caps[] = {0, 1, 2, 3, 5, 8};
    return caps[rng_.below(6)];
  }

  // --- Interest keys ---

  std::uint64_t key_value() {
    if (chance(0.04f)) return kMaxInterestKey;  // the largest accepted value, both encodings
    return 1 + rng_.below(5);
  }

  KeySubscription subscription() { return KeySubscription{key_value(), rng_.below(5), chance(0.2f)}; }

  // A key or rate the World must refuse.
  std::uint64_t bad_key() {
    const std::uint64_t bad[] = {kMaxInterestKey + 1, ~std::uint64_t{0}, (std::uint64_t{1} << 63) | 3u};
    return bad[rng_.below(3)];
  }
  std::uint32_t bad_rate() {
    const std::uint32_t bad[] = {65536u, 70000u, 0xffffffffu};
    return bad[rng_.below(3)];
  }

  void set_entity_key(EntityId e) {
    const std::uint32_t kind = rng_.below(10);
    if (kind < 4) {
      (void)mirror_.set_area_interest_key(e, key_value());
    } else if (kind < 7) {
      (void)mirror_.set_user_interest_key(e, key_value());
    } else {
      (void)mirror_.set_global_interest_key(e);
    }
  }

  std::vector<KeySubscription> area_set() {
    std::vector<KeySubscription> keys;
    const std::uint32_t n = rng_.below(5);
    for (std::uint32_t i = 0; i < n; ++i) keys.push_back(subscription());
    return keys;
  }

  void change_subscriptions(ClientId c) {
    switch (rng_.below(12)) {
      case 0:
      case 1:
      case 2: {
        const std::vector<KeySubscription> keys = area_set();
        (void)mirror_.set_area_subscriptions(c, keys);
        break;
      }
      case 3: {  // The set it already has, reversed, sometimes with a duplicate entry: no change.
        std::vector<KeySubscription> keys = mirror_.oracle().area_subscriptions(c);
        std::reverse(keys.begin(), keys.end());
        if (!keys.empty() && chance(0.5f)) {
          KeySubscription dup = keys[0];
          dup.send_rate = dup.send_rate + rng_.below(3);  // slower: the fastest entry still wins
          dup.bypass_distance = dup.bypass_distance && chance(0.5f);
          keys.push_back(dup);
        }
        (void)mirror_.set_area_subscriptions(c, keys);
        break;
      }
      case 4:
      case 5:
      case 6: (void)mirror_.add_user_subscription(c, subscription()); break;
      case 7:
      case 8:
        (void)mirror_.remove_user_subscription(c, chance(0.1f) ? 0 : key_value());  // absent keys too
        break;
      case 9: (void)mirror_.clear_area_subscriptions(c); break;
      case 10: (void)mirror_.clear_user_subscriptions(c); break;
      default: (void)mirror_.clear_subscriptions(c); break;
    }
  }

  // One call the World must refuse, changing nothing.
  void refused_key_input(EntityId e, ClientId c) {
    switch (rng_.below(9)) {
      case 0: (void)mirror_.set_user_interest_key(e, 0); break;
      case 1: (void)mirror_.set_user_interest_key(e, bad_key()); break;
      case 2: (void)mirror_.set_area_interest_key(e, bad_key()); break;
      case 3: {  // One bad entry among good ones.
        std::vector<KeySubscription> keys = area_set();
        KeySubscription bad = subscription();
        if (chance(0.5f))
          bad.key = bad_key();
        else
          bad.send_rate = bad_rate();
        keys.insert(keys.begin() +
                        static_cast<std::ptrdiff_t>(rng_.below(static_cast<std::uint32_t>(keys.size() + 1))),
                    bad);
        (void)mirror_.set_area_subscriptions(c, keys);
        break;
      }
      case 4: (void)mirror_.add_user_subscription(c, {0, 1, false}); break;
      case 5: (void)mirror_.add_user_subscription(c, {bad_key(), 1, chance(0.5f)}); break;
      case 6: (void)mirror_.add_user_subscription(c, {key_value(), bad_rate(), false}); break;
      case 7: (void)mirror_.remove_user_subscription(c, bad_key()); break;
      default: {  // Dead and null handles.
        const EntityId stale_entity{e.index, e.generation + 1};
        const ClientId stale_client{c.index, c.generation + 1};
        switch (rng_.below(6)) {
          case 0:
            (void)mirror_.set_area_interest_key(chance(0.5f) ? stale_entity : EntityId{}, key_value());
            break;
          case 1:
            (void)mirror_.set_user_interest_key(chance(0.5f) ? stale_entity : EntityId{}, key_value());
            break;
          case 2: (void)mirror_.set_global_interest_key(chance(0.5f) ? stale_entity : EntityId{}); break;
          case 3:
            (void)mirror_.set_area_subscriptions(chance(0.5f) ? stale_client : ClientId{}, area_set());
            break;
          case 4:
            (void)mirror_.add_user_subscription(chance(0.5f) ? stale_client : ClientId{}, subscription());
            break;
          default: (void)mirror_.clear_subscriptions(chance(0.5f) ? stale_client : ClientId{}); break;
        }
        break;
      }
    }
  }

  void initial_keys() {
    for (const EntityId e : mirror_.oracle().entities()) {
      if (chance(0.5f)) set_entity_key(e);
    }
    for (const ClientId c : mirror_.oracle().clients()) {
      const std::vector<KeySubscription> keys = area_set();
      (void)mirror_.set_area_subscriptions(c, keys);
      const std::uint32_t users = rng_.below(3);
      for (std::uint32_t i = 0; i < users; ++i) (void)mirror_.add_user_subscription(c, subscription());
    }
  }

  void key_inputs() {
    const std::vector<EntityId> entities = mirror_.oracle().entities();
    const std::vector<ClientId> clients = mirror_.oracle().clients();
    const std::uint32_t entity_changes = chance(0.4f) ? 1 + rng_.below(4) : 0;
    for (std::uint32_t i = 0; i < entity_changes && !entities.empty(); ++i) set_entity_key(pick(entities));
    for (const ClientId c : clients) {
      if (chance(0.1f)) change_subscriptions(c);
    }
    if (chance(0.15f) && !entities.empty() && !clients.empty())
      refused_key_input(pick(entities), pick(clients));
    // A key set on an entity destroyed this window must be refused (the handle is dead).
    if (chance(0.03f) && entities.size() > 1) {
      const EntityId e = pick(entities);
      if (!mirror_.oracle().is_viewer(e) && mirror_.destroy_entity(e).ok())
        (void)mirror_.set_area_interest_key(e, 1);
    }
  }

  void set_random_radii() {
    const float cell = cell_size_;
    float enter = rng_.uniform(0.3f, 4.0f);
    if (cell != 0.0f && enter > cell) enter = cell;
    const float leave = def_.hysteresis ? enter * rng_.uniform(1.0f, 2.0f) : enter;
    (void)mirror_.set_radii(enter, leave);
  }

  float cell_size_ = 0.0f;

 private:
  const RandomRunDef& def_;
  Rng& rng_;
  MirroredWorld& mirror_;
  float width_;
  std::vector<Position> centers_;
  std::vector<SpaceId> dead_spaces_;   ///< Destroyed spaces: their handles must be refused.
  std::vector<std::uint64_t> issued_;  ///< External ids given so far.
  std::uint64_t external_counter_ = 0;
  SightFilterState& filter_;
};

}  // namespace

void run_random(const RandomRunDef& def,
                const std::function<void(MirroredWorld&, const TickStats&)>& after_tick) {
  Rng rng(def.seed * 0x9e3779b97f4a7c15ull + 17);
  WorldDef world_def = default_world_def();
  const float radii[] = {1.0f, 1.6f, 0.75f, 2.5f, rng.uniform(0.3f, 4.0f)};
  world_def.enter_radius = radii[rng.below(5)];
  const float factors[] = {1.1f, 1.25f, 1.5f, 2.0f};
  world_def.leave_radius =
      def.hysteresis ? world_def.enter_radius * factors[rng.below(4)] : world_def.enter_radius;
  if (def.vary_grid) {
    if (rng.below(4) == 0) world_def.cell_size = world_def.enter_radius * (rng.below(2) == 0 ? 1.5f : 3.0f);
    // Far outliers make every tick cost O(max_grid_cells); the default cap (2^20) would
    // dominate the suite's time, so most runs use a smaller one, which still forces cell growth.
    const std::uint32_t caps[] = {1u << 12, 1u << 12, 1u << 12, 1u << 12, 16, 4, 1, 1u << 20};
    world_def.max_grid_cells = caps[rng.below(8)];
  }
  if (def.tiers == TierMode::preset) world_def.tiers = default_distance_tiers();
  if (def.tiers == TierMode::custom) world_def.tiers = custom_tiers();
  world_def.threads = def.threads;
  world_def.enqueue_task = def.enqueue_task;
  world_def.finish_task = def.finish_task;
  world_def.task_user_context = def.task_user_context;
  world_def.recording = def.recording;
  world_def.thread_min_work = 0;  // these worlds are small: run them on the pool all the same
  world_def.fast_paths = !def.general_pass;
  if (def.external_ids) world_def.order_key = OrderKey::external;
  if (def.crowd_cap) {
    const std::uint32_t caps[] = {0, 1, 2, 3, 5, 8};
    world_def.crowd_cap = caps[1 + rng.below(5)];
  }

  SightFilterState filter;  // outlives the mirror, whose World may call the filter
  MirroredWorld mirror(world_def);
  const float width = rng.uniform(4.0f, 40.0f);
  RandomInputs inputs(def, rng, mirror, width, filter);
  inputs.cell_size_ = world_def.cell_size;

  const std::uint32_t entities = 1 + rng.below(def.max_entities);
  for (std::uint32_t i = 0; i < entities; ++i) inputs.create_entity();
  const std::vector<EntityId> live = mirror.oracle().entities();
  const std::uint32_t clients = 1 + rng.below(std::min<std::uint32_t>(entities, def.max_clients));
  for (std::uint32_t i = 0; i < clients; ++i) {
    // Mostly distinct viewers; sometimes two clients share one.
    const EntityId viewer = rng.below(5) == 0 ? inputs.pick(live) : live[i % live.size()];
    (void)mirror.create_client(viewer);
  }
  if (def.keys) inputs.initial_keys();
  if (def.relevance) inputs.initial_relevance();
  if (def.structure) inputs.initial_structure();
  if (def.sight) inputs.initial_sight();
  if (def.radii) inputs.initial_radii();

  for (std::uint32_t t = 0; t < def.ticks && mirror.error().empty(); ++t) {
    if (t > 0) inputs.between_ticks();
    const TickStats stats = mirror.tick();
    if (after_tick) after_tick(mirror, stats);
  }
}

}  // namespace sightline::testing
