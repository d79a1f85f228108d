#include "mirrored_world.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

namespace sightline::testing {

MirroredWorld::MirroredWorld(const WorldDef& def)
    : world_(std::move(World::create(def).value())),
      oracle_(def.enter_radius, def.leave_radius, def.tiers, world_.default_space()) {
  oracle_.set_crowd_cap(def.crowd_cap);
  oracle_.set_order_key(def.order_key);
}

void MirroredWorld::note(std::string message) {
  if (error_.empty() && !message.empty()) {
    error_ = "after " + std::to_string(oracle_.tick_count()) + " ticks: " + std::move(message);
  }
}

namespace {
// [0, kMaxRadius]; NaN is outside.
bool valid_bound(float radius) { return radius >= 0.0f && radius <= kMaxRadius; }
std::string describe_float(float v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.9g", static_cast<double>(v));
  return buffer;
}
}  // namespace

template <typename... Handles>
MirroredWorld::Outcome MirroredWorld::on_handles(std::string call, Expect expect, Handles... handles) const {
  Outcome outcome{.call = std::move(call), .expect = expect};
  // The first handle the oracle does not hold live names the refusal.
  const auto check = [&](auto handle) {
    if (outcome.live && !oracle_.is_live(handle)) {
      outcome.live = false;
      outcome.null = handle.is_null();
    }
  };
  (check(handles), ...);
  return outcome;
}

template <typename WorldCall, typename OracleCall, typename... Args>
auto MirroredWorld::mirror(const Outcome& outcome, WorldCall world_call, OracleCall oracle_call,
                           const Args&... args) {
  auto answer = std::invoke(world_call, world_, args...);
  const auto tell_oracle = [&](const auto&... inputs) {
    if constexpr (std::is_void_v<std::invoke_result_t<OracleCall, BruteForceOracle&, decltype(inputs)...>>) {
      std::invoke(oracle_call, oracle_, inputs...);
    } else {
      note(std::invoke(oracle_call, oracle_, inputs...));
    }
  };
  if constexpr (std::is_same_v<decltype(answer), Status>) {
    check_outcome(outcome, answer);
    if (answer.ok()) tell_oracle(args...);
  } else {  // a Result: the oracle learns the created handle first
    check_outcome(outcome, answer.status());
    if (answer.ok()) tell_oracle(*answer, args...);
  }
  return answer;
}

Result<EntityId> MirroredWorld::create_entity(const EntityDef& def) {
  const std::uint32_t before = world_.entity_count();
  const bool bad_bound = !valid_bound(def.bound_radius);
  const bool bad_space = !def.space.is_null() && !oracle_.is_live(def.space);
  // An external id another live entity holds, or none where the order key needs one.
  const bool bad_external = def.external_id == 0 ? oracle_.order_key() == OrderKey::external
                                                 : !oracle_.find_external(def.external_id).is_null();
  Outcome outcome{.call = "create_entity with bound_radius " + describe_float(def.bound_radius) + " in " +
                          to_string(def.space) + ", external id " + std::to_string(def.external_id)};
  if (bad_bound || bad_space || bad_external) {
    outcome.expect = Expect::refuse;
    outcome.refusal = bad_space ? ErrorCode::stale_handle : ErrorCode::invalid_argument;
    if (bad_space && (bad_bound || bad_external)) outcome.alternative = ErrorCode::invalid_argument;
  }
  Result<EntityId> id = mirror(
      outcome, &World::create_entity,
      [](BruteForceOracle& oracle, EntityId created, const EntityDef& d) {
        return oracle.create_entity(created, d.x, d.z, d.always_relevant, d.bound_radius, d.space,
                                    d.presenter, d.external_id, d.created);
      },
      def);
  if (!id.ok() && world_.entity_count() != before) note("a refused create_entity changed entity_count");
  if (bad_space) count_refusal(id.status(), "create_entity: dead space");
  if (bad_external && !bad_space && !bad_bound) {
    count_refusal(id.status(),
                  def.external_id == 0 ? "create_entity: no external id" : "create_entity: external id held");
  }
  if (id.ok()) {
    compare_entity(*id);
    compare_velocity(*id);
  }
  compare_structure();
  return id;
}

std::vector<EntityId> MirroredWorld::create_entities(std::span<const EntityDef> defs) {
  std::vector<EntityId> ids;
  ids.reserve(defs.size());
  in_bulk_ = true;
  for (const EntityDef& def : defs) {
    const Result<EntityId> id = create_entity(def);
    if (id.ok()) ids.push_back(*id);
  }
  in_bulk_ = false;
  compare_structure();
  return ids;
}

template <typename WorldCall, typename OracleCall>
Status MirroredWorld::remove_entity(const char* name, WorldCall world_call, OracleCall oracle_call,
                                    EntityId entity) {
  const bool viewer = oracle_.is_viewer(entity);
  Status status =
      mirror({.call = std::string(name) + "(" + to_string(entity) + ")" + (viewer ? " [viewer]" : ""),
              .expect = viewer ? Expect::refuse : Expect::accept,
              .refusal = ErrorCode::entity_is_viewer},
             world_call, oracle_call, entity);
  if (status.ok() && !viewer) {
    // The entity leaves every client's origins at once; its children become roots.
    for (const ClientId c : oracle_.clients()) compare_origins(c);
    compare_structure();
  }
  return status;
}

Status MirroredWorld::destroy_entity(EntityId entity) {
  return remove_entity("destroy_entity", &World::destroy_entity, &BruteForceOracle::destroy_entity, entity);
}

Status MirroredWorld::withdraw_entity(EntityId entity) {
  return remove_entity("withdraw_entity", &World::withdraw_entity, &BruteForceOracle::withdraw_entity,
                       entity);
}

Status MirroredWorld::set_position(EntityId entity, float x, float z) {
  return mirror({.call = "set_position(" + to_string(entity) + ")"}, &World::set_position,
                &BruteForceOracle::set_position, entity, x, z);
}

Status MirroredWorld::set_positions(std::span<const EntityId> entities, std::span<const float> xs,
                                    std::span<const float> zs) {
  return mirror(
      {.call = "set_positions"}, &World::set_positions,
      [](BruteForceOracle& oracle, std::span<const EntityId> ids, std::span<const float> x,
         std::span<const float> z) {
        std::string problem;
        for (std::size_t i = 0; i < ids.size(); ++i) {
          std::string p = oracle.set_position(ids[i], x[i], z[i]);
          if (problem.empty()) problem = std::move(p);
        }
        return problem;
      },
      entities, xs, zs);
}

Status MirroredWorld::set_always_relevant(EntityId entity, bool always_relevant) {
  Status status =
      mirror({.call = "set_always_relevant(" + to_string(entity) + ")"}, &World::set_always_relevant,
             &BruteForceOracle::set_always_relevant, entity, always_relevant);
  if (status.ok()) {
    const Result<bool> read = world_.always_relevant(entity);
    if (!read.ok() || *read != always_relevant)
      note("always_relevant(" + to_string(entity) + ") does not read back");
  }
  return status;
}

Result<ClientId> MirroredWorld::create_client(EntityId viewer) {
  Result<ClientId> id = mirror({.call = "create_client(" + to_string(viewer) + ")"}, &World::create_client,
                               &BruteForceOracle::create_client, viewer);
  if (!id.ok()) return id;
  compare_look_ahead(*id);
  const Result<std::uint64_t> revision = world_.subscription_revision(*id);
  if (!revision.ok()) {
    note("subscription_revision refused a new client: " + revision.status().message());
  } else {
    oracle_.set_revision_base(*id, *revision);
    last_call_ = "create_client";
    compare_subscriptions(*id);
  }
  return id;
}

Status MirroredWorld::destroy_client(ClientId client) {
  Status status = mirror({.call = "destroy_client(" + to_string(client) + ")"}, &World::destroy_client,
                         &BruteForceOracle::destroy_client, client);
  // Ownership ends at once: every entity it owned reads unowned now.
  if (status.ok()) {
    for (const EntityId e : oracle_.entities()) compare_entity(e);
  }
  return status;
}

Status MirroredWorld::set_viewer(ClientId client, EntityId viewer) {
  Status status = mirror({.call = "set_viewer(" + to_string(client) + ")"}, &World::set_viewer,
                         &BruteForceOracle::set_viewer, client, viewer);
  if (status.ok()) {
    compare_origins(client);
    compare_structure();
  }
  return status;
}

Status MirroredWorld::set_radii(float enter_radius, float leave_radius) {
  return mirror({.call = "set_radii"}, &World::set_radii, &BruteForceOracle::set_radii, enter_radius,
                leave_radius);
}

void MirroredWorld::set_crowd_cap(std::uint32_t cap) {
  world_.set_crowd_cap(cap);
  oracle_.set_crowd_cap(cap);
  if (world_.crowd_cap() != cap)
    note("crowd_cap() is " + std::to_string(world_.crowd_cap()) + " after set_crowd_cap(" +
         std::to_string(cap) + ")");
}

namespace {

bool valid_key(std::uint64_t key) { return key <= kMaxInterestKey; }
bool valid_rate(std::uint32_t rate) { return rate <= 65535u; }

std::string describe(const std::vector<KeySubscription>& keys) {
  std::string out = "{";
  for (const KeySubscription& k : keys) {
    if (out.size() > 1) out += ", ";
    out += std::to_string(k.key) + "/" + std::to_string(k.send_rate) + (k.bypass_distance ? "/bypass" : "");
  }
  return out + "}";
}

std::string describe(InterestKey key) {
  const char* type = key.type == InterestKeyType::global ? "global"
                     : key.type == InterestKeyType::area ? "area"
                                                         : "user";
  return std::string(type) + " " + std::to_string(key.value);
}

}  // namespace

void MirroredWorld::check_outcome(const Outcome& outcome, const Status& status) {
  const std::string& call = outcome.call;
  if (!outcome.live) {
    const ErrorCode want = outcome.null ? ErrorCode::null_handle : ErrorCode::stale_handle;
    if (status.code() != want) {
      note(call + " on a " + (outcome.null ? "null" : "dead") + " handle gave " +
           error_code_name(status.code()) + ", expected " + error_code_name(want));
    }
    return;
  }
  const bool refused_as_expected = status.code() == outcome.refusal || status.code() == outcome.alternative;
  if (outcome.expect == Expect::accept && !status.ok()) note(call + " refused: " + status.message());
  if (outcome.expect == Expect::refuse && !refused_as_expected) {
    note(call + " gave " + error_code_name(status.code()) + ", expected " + error_code_name(outcome.refusal));
  }
  if (outcome.expect == Expect::either && !status.ok() && !refused_as_expected) {
    note(call + " gave " + error_code_name(status.code()) + ", expected ok or " +
         error_code_name(outcome.refusal));
  }
}

void MirroredWorld::compare_key(EntityId entity) {
  if (!oracle_.is_live(entity)) return;
  const Result<InterestKey> key = world_.interest_key(entity);
  if (!key.ok()) {
    note("interest_key(" + to_string(entity) + ") refused: " + key.status().message());
    return;
  }
  const InterestKey want = decode_interest_key(oracle_.stored_key(entity));
  if (!(*key == want)) {
    note("interest_key(" + to_string(entity) + "): expected " + describe(want) + ", got " + describe(*key));
  }
}

void MirroredWorld::compare_subscriptions(ClientId client) {
  if (!oracle_.is_live(client)) return;
  const auto area = world_.area_subscriptions(client);
  const auto user = world_.user_subscriptions(client);
  const auto revision = world_.subscription_revision(client);
  if (!area.ok() || !user.ok() || !revision.ok()) {
    note("a subscription reader refused " + to_string(client));
    return;
  }
  if (*area != oracle_.area_subscriptions(client)) {
    note("area_subscriptions(" + to_string(client) + "): expected " +
         describe(oracle_.area_subscriptions(client)) + ", got " + describe(*area));
  } else if (*user != oracle_.user_subscriptions(client)) {
    note("user_subscriptions(" + to_string(client) + "): expected " +
         describe(oracle_.user_subscriptions(client)) + ", got " + describe(*user));
  } else if (*revision != oracle_.subscription_revision(client)) {
    if (revision_error_.empty()) {
      revision_error_ = "after " + std::to_string(oracle_.tick_count()) + " ticks: subscription_revision(" +
                        to_string(client) + ") after " + last_call_ + ": expected " +
                        std::to_string(oracle_.subscription_revision(client)) + ", got " +
                        std::to_string(*revision);
    }
    oracle_.set_revision_base(client, *revision);
  }
}

Status MirroredWorld::set_area_interest_key(EntityId entity, std::uint64_t key) {
  const bool attached = oracle_.is_attached(entity);
  Status status = mirror(
      on_handles("set_area_interest_key(" + to_string(entity) + ", " + std::to_string(key) + ")" +
                     (attached ? " [attached]" : ""),
                 valid_key(key) && !attached ? Expect::accept : Expect::refuse, entity),
      &World::set_area_interest_key,
      [](BruteForceOracle& oracle, EntityId e, std::uint64_t k) {
        return oracle.set_entity_key(e, encode_area_key(k));
      },
      entity, key);
  if (attached) count_refusal(status, "key setter: attached");
  compare_key(entity);
  return status;
}

Status MirroredWorld::set_user_interest_key(EntityId entity, std::uint64_t key) {
  const bool attached = oracle_.is_attached(entity);
  Status status = mirror(
      on_handles("set_user_interest_key(" + to_string(entity) + ", " + std::to_string(key) + ")" +
                     (attached ? " [attached]" : ""),
                 valid_key(key) && key != 0 && !attached ? Expect::accept : Expect::refuse, entity),
      &World::set_user_interest_key,
      [](BruteForceOracle& oracle, EntityId e, std::uint64_t k) {
        return oracle.set_entity_key(e, encode_user_key(k));
      },
      entity, key);
  if (attached) count_refusal(status, "key setter: attached");
  compare_key(entity);
  return status;
}

Status MirroredWorld::set_global_interest_key(EntityId entity) {
  const bool attached = oracle_.is_attached(entity);
  Status status = mirror(
      on_handles("set_global_interest_key(" + to_string(entity) + ")" + (attached ? " [attached]" : ""),
                 attached ? Expect::refuse : Expect::accept, entity),
      &World::set_global_interest_key,
      [](BruteForceOracle& oracle, EntityId e) { return oracle.set_entity_key(e, 0); }, entity);
  if (attached) count_refusal(status, "key setter: attached");
  compare_key(entity);
  return status;
}

Status MirroredWorld::set_area_subscriptions(ClientId client, std::span<const KeySubscription> keys) {
  const std::vector<KeySubscription> list(keys.begin(), keys.end());
  const bool valid = std::all_of(list.begin(), list.end(), [](const KeySubscription& k) {
    return valid_key(k.key) && valid_rate(k.send_rate);
  });
  last_call_ = "set_area_subscriptions(" + to_string(client) + ", " + describe(list) + ")";
  Status status = mirror(
      on_handles(last_call_, valid ? Expect::accept : Expect::refuse, client), &World::set_area_subscriptions,
      [](BruteForceOracle& oracle, ClientId c, std::span<const KeySubscription> k) {
        return oracle.set_area_subscriptions(c, std::vector<KeySubscription>(k.begin(), k.end()));
      },
      client, keys);
  compare_subscriptions(client);
  return status;
}

Status MirroredWorld::add_user_subscription(ClientId client, KeySubscription subscription) {
  const bool valid =
      valid_key(subscription.key) && subscription.key != 0 && valid_rate(subscription.send_rate);
  last_call_ = "add_user_subscription(" + to_string(client) + ", " + describe({subscription}) + ")";
  Status status =
      mirror(on_handles(last_call_, valid ? Expect::accept : Expect::refuse, client),
             &World::add_user_subscription, &BruteForceOracle::add_user_subscription, client, subscription);
  compare_subscriptions(client);
  return status;
}

Status MirroredWorld::remove_user_subscription(ClientId client, std::uint64_t key) {
  // Key 0 can never be subscribed: refusing it or accepting it as a no-op are both consistent.
  const Expect expect = !valid_key(key) ? Expect::refuse : key == 0 ? Expect::either : Expect::accept;
  last_call_ = "remove_user_subscription(" + to_string(client) + ", " + std::to_string(key) + ")";
  Status status = mirror(on_handles(last_call_, expect, client), &World::remove_user_subscription,
                         &BruteForceOracle::remove_user_subscription, client, key);
  compare_subscriptions(client);
  return status;
}

Status MirroredWorld::clear_area_subscriptions(ClientId client) {
  last_call_ = "clear_area_subscriptions(" + to_string(client) + ")";
  Status status = mirror(on_handles(last_call_, Expect::accept, client), &World::clear_area_subscriptions,
                         &BruteForceOracle::clear_area_subscriptions, client);
  compare_subscriptions(client);
  return status;
}

Status MirroredWorld::clear_user_subscriptions(ClientId client) {
  last_call_ = "clear_user_subscriptions(" + to_string(client) + ")";
  Status status = mirror(on_handles(last_call_, Expect::accept, client), &World::clear_user_subscriptions,
                         &BruteForceOracle::clear_user_subscriptions, client);
  compare_subscriptions(client);
  return status;
}

Status MirroredWorld::clear_subscriptions(ClientId client) {
  last_call_ = "clear_subscriptions(" + to_string(client) + ")";
  Status status = mirror(on_handles(last_call_, Expect::accept, client), &World::clear_subscriptions,
                         &BruteForceOracle::clear_subscriptions, client);
  compare_subscriptions(client);
  return status;
}

void MirroredWorld::compare_entity(EntityId entity) {
  if (!oracle_.is_live(entity)) return;
  const Result<float> bound = world_.bound_radius(entity);
  const Result<ClientId> owner = world_.owner(entity);
  if (!bound.ok() || !owner.ok()) {
    note("bound_radius or owner refused live " + to_string(entity));
    return;
  }
  if (!(*bound == oracle_.bound_radius(entity))) {
    note("bound_radius(" + to_string(entity) + "): expected " + describe_float(oracle_.bound_radius(entity)) +
         ", got " + describe_float(*bound));
  } else if (const Result<float> scale = world_.radius_scale(entity);
             !scale.ok() || !(*scale == oracle_.radius_scale(entity))) {
    note("radius_scale(" + to_string(entity) + "): expected " + describe_float(oracle_.radius_scale(entity)));
  } else if (*owner != oracle_.owner(entity)) {
    const ClientId want = oracle_.owner(entity);
    note("owner(" + to_string(entity) + "): expected " +
         (want.is_null() ? std::string("none") : to_string(want)) + ", got " +
         (owner->is_null() ? std::string("none") : to_string(*owner)));
  } else if (const Result<std::uint64_t> external = world_.external_id(entity);
             !external.ok() || *external != oracle_.external_id(entity)) {
    note("external_id(" + to_string(entity) + "): expected " + std::to_string(oracle_.external_id(entity)));
  } else if (*external != 0 && world_.find_external(*external) != entity) {
    note("find_external(" + std::to_string(*external) + ") is not " + to_string(entity));
  }
}

void MirroredWorld::compare_origins(ClientId client) {
  if (!oracle_.is_live(client)) return;
  const Result<std::vector<EntityId>> origins = world_.origins(client);
  if (!origins.ok()) {
    note("origins refused live " + to_string(client));
    return;
  }
  const std::vector<EntityId> want = oracle_.origins(client);
  if (*origins != want) {
    auto list = [](const std::vector<EntityId>& ids) {
      std::string out = "{";
      for (const EntityId e : ids) out += (out.size() > 1 ? ", " : "") + to_string(e);
      return out + "}";
    };
    note("origins(" + to_string(client) + "): expected " + list(want) + ", got " + list(*origins));
  }
}

Status MirroredWorld::set_bound_radius(EntityId entity, float radius) {
  Status status =
      mirror(on_handles("set_bound_radius(" + to_string(entity) + ", " + describe_float(radius) + ")",
                        valid_bound(radius) ? Expect::accept : Expect::refuse, entity),
             &World::set_bound_radius, &BruteForceOracle::set_bound_radius, entity, radius);
  compare_entity(entity);
  return status;
}

Status MirroredWorld::set_radius_scale(EntityId entity, float scale) {
  const bool valid = scale >= kMinRadiusScale && scale <= kMaxRadiusScale;
  last_call_ = "set_radius_scale(" + to_string(entity) + ", " + describe_float(scale) + ")";
  Status status = mirror(on_handles(last_call_, valid ? Expect::accept : Expect::refuse, entity),
                         &World::set_radius_scale, &BruteForceOracle::set_radius_scale, entity, scale);
  count_refusal(status, valid ? "set_radius_scale: handle" : "set_radius_scale: value");
  compare_entity(entity);
  return status;
}

Status MirroredWorld::set_view_radius(ClientId client, float enter_radius, float leave_radius) {
  const bool valid =
      enter_radius == 0.0f
          ? leave_radius == 0.0f
          : enter_radius >= kMinRadius && enter_radius <= kMaxRadius &&
                (leave_radius == 0.0f || (leave_radius >= enter_radius && leave_radius <= kMaxRadius));
  last_call_ = "set_view_radius(" + to_string(client) + ", " + describe_float(enter_radius) + ", " +
               describe_float(leave_radius) + ")";
  Status status =
      mirror(on_handles(last_call_, valid ? Expect::accept : Expect::refuse, client), &World::set_view_radius,
             &BruteForceOracle::set_view_radius, client, enter_radius, leave_radius);
  count_refusal(status, valid ? "set_view_radius: handle" : "set_view_radius: value");
  if (oracle_.is_live(client)) {
    const Result<ClientRadii> v = world_.view_radius(client);
    const ClientRadii want = oracle_.view_radius(client);
    if (!v.ok() || !(v->enter_radius == want.enter_radius) || !(v->leave_radius == want.leave_radius)) {
      note("after " + last_call_ + ": view_radius(" + to_string(client) + ") differs from the oracle's " +
           describe_float(want.enter_radius) + "/" + describe_float(want.leave_radius));
    }
  }
  return status;
}

Status MirroredWorld::set_owner(EntityId entity, ClientId client) {
  Status status = mirror(on_handles("set_owner(" + to_string(entity) + ", " + to_string(client) + ")",
                                    Expect::accept, entity, client),
                         &World::set_owner, &BruteForceOracle::set_owner, entity, client);
  compare_entity(entity);
  return status;
}

Status MirroredWorld::clear_owner(EntityId entity) {
  const bool owned = !oracle_.owner(entity).is_null();
  Status status = mirror(
      on_handles("clear_owner(" + to_string(entity) + ")", owned ? Expect::accept : Expect::either, entity),
      &World::clear_owner, &BruteForceOracle::clear_owner, entity);
  compare_entity(entity);
  return status;
}

Status MirroredWorld::add_origin(ClientId client, EntityId origin) {
  const std::string refusal = oracle_.add_origin_refusal(client, origin);
  Status status = mirror(on_handles("add_origin(" + to_string(client) + ", " + to_string(origin) + ")" +
                                        (refusal.empty() ? "" : " [" + refusal + "]"),
                                    refusal.empty() ? Expect::accept : Expect::refuse, client, origin),
                         &World::add_origin, &BruteForceOracle::add_origin, client, origin);
  compare_origins(client);
  return status;
}

Status MirroredWorld::remove_origin(ClientId client, EntityId origin) {
  Status status =
      mirror(on_handles("remove_origin(" + to_string(client) + ", " + to_string(origin) + ")",
                        oracle_.is_origin(client, origin) ? Expect::accept : Expect::refuse, client, origin),
             &World::remove_origin, &BruteForceOracle::remove_origin, client, origin);
  compare_origins(client);
  return status;
}

namespace {

bool same_float(float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); }

std::string describe(const SpaceDef& d) {
  return std::string("{culling ") + (d.culling == Culling::on ? "on" : "off") + ", radii " +
         describe_float(d.enter_radius) + "/" + describe_float(d.leave_radius) + ", radius " +
         describe_float(d.radius) + " x " + describe_float(d.enter_factor) + "/" +
         describe_float(d.leave_factor) + ", broadcast " + std::to_string(d.broadcast_threshold) + " - " +
         std::to_string(d.broadcast_margin) + ", hold " + std::to_string(d.visibility_hold_ticks) + "}";
}

bool same(const SpaceDef& a, const SpaceDef& b) {
  return a.culling == b.culling && same_float(a.enter_radius, b.enter_radius) &&
         same_float(a.leave_radius, b.leave_radius) && same_float(a.radius, b.radius) &&
         same_float(a.enter_factor, b.enter_factor) && same_float(a.leave_factor, b.leave_factor) &&
         a.broadcast_threshold == b.broadcast_threshold && a.broadcast_margin == b.broadcast_margin &&
         a.visibility_hold_ticks == b.visibility_hold_ticks;
}

std::string describe(const SpaceState& s) {
  return std::string("{culling ") + (s.culling ? "1" : "0") + ", broadcasting " +
         (s.broadcasting ? "1" : "0") + ", drill " + (s.drill ? "1" : "0") + ", radii " +
         describe_float(s.enter_radius) + "/" + describe_float(s.leave_radius) + ", clients " +
         std::to_string(s.clients) + ", entities " + std::to_string(s.entities) + "}";
}

bool same(const SpaceState& a, const SpaceState& b) {
  return a.culling == b.culling && a.broadcasting == b.broadcasting && a.drill == b.drill &&
         a.enter_radius == b.enter_radius && a.leave_radius == b.leave_radius && a.clients == b.clients &&
         a.entities == b.entities;
}

bool valid_position(float x, float z) {
  return std::isfinite(x) && std::isfinite(z) && std::fabs(x) <= kMaxCoordinate &&
         std::fabs(z) <= kMaxCoordinate;
}

}  // namespace

void MirroredWorld::count_refusal(const Status& status, const std::string& kind) {
  if (!status.ok()) ++refusals_[kind];
}

void MirroredWorld::compare_structure(bool after_tick) {
  if (!error_.empty() || in_bulk_) return;
  for (const EntityId e : oracle_.entities()) {
    const Result<EntityId> parent = world_.parent(e);
    const Result<EntityId> root = world_.root(e);
    const Result<SpaceId> space = world_.space(e);
    const Result<bool> presenter = world_.presenter(e);
    const Result<bool> always = world_.always_relevant(e);
    if (!parent.ok() || !root.ok() || !space.ok() || !presenter.ok() || !always.ok()) {
      note("a structure reader refused live " + to_string(e));
      return;
    }
    std::string problem;
    if (*parent != oracle_.parent(e)) {
      problem = "parent: expected " + to_string(oracle_.parent(e)) + ", got " + to_string(*parent);
    } else if (*root != oracle_.root(e)) {
      problem = "root: expected " + to_string(oracle_.root(e)) + ", got " + to_string(*root);
    } else if (*space != oracle_.space(e)) {
      problem = "space: expected " + to_string(oracle_.space(e)) + ", got " + to_string(*space);
    } else if (*presenter != oracle_.presenter(e)) {
      problem = std::string("presenter: expected ") + (oracle_.presenter(e) ? "true" : "false");
    } else if (*always != oracle_.always_relevant(e)) {
      problem = std::string("always_relevant: expected ") + (oracle_.always_relevant(e) ? "true" : "false");
    }
    if (!problem.empty()) {
      note("after " + last_call_ + ": " + to_string(e) + " " + problem);
      return;
    }
    compare_key(e);
  }
  for (const ClientId c : oracle_.clients()) {
    const Result<SpaceId> space = world_.client_space(c);
    if (!space.ok() || *space != oracle_.client_space(c)) {
      note("after " + last_call_ + ": client_space(" + to_string(c) + "): expected " +
           to_string(oracle_.client_space(c)) + ", got " + (space.ok() ? to_string(*space) : "a refusal"));
      return;
    }
  }
  for (const SpaceId s : oracle_.spaces()) {
    const Result<SpaceDef> def = world_.space_def(s);
    const Result<SpaceState> state = world_.space_state(s);
    if (!def.ok() || !state.ok()) {
      note("after " + last_call_ + ": space_def or space_state refused live " + to_string(s));
      return;
    }
    if (!same(*def, oracle_.space_def(s))) {
      note("after " + last_call_ + ": space_def(" + to_string(s) + "): expected " +
           describe(oracle_.space_def(s)) + ", got " + describe(*def));
      return;
    }
    if (!same(*state, oracle_.space_state(s))) {
      const std::string problem = "after " + last_call_ + ": space_state(" + to_string(s) + "): expected " +
                                  describe(oracle_.space_state(s)) + ", got " + describe(*state);
      if (after_tick) {
        note(problem);
        return;
      }
      if (state_error_.empty()) {
        state_error_ = "after " + std::to_string(oracle_.tick_count()) + " ticks: " + problem;
      }
    }
  }
}

Result<SpaceId> MirroredWorld::create_space(const SpaceDef& def) {
  const std::string refusal = BruteForceOracle::space_def_refusal(def);
  last_call_ = "create_space(" + describe(def) + ")";
  Result<SpaceId> id = mirror({.call = last_call_ + (refusal.empty() ? "" : " [" + refusal + "]"),
                               .expect = refusal.empty() ? Expect::accept : Expect::refuse,
                               .alternative = ErrorCode::invalid_def},
                              &World::create_space, &BruteForceOracle::create_space, def);
  if (id.ok()) compare_walls(*id);
  count_refusal(id.status(), "create_space: " + refusal.substr(0, refusal.find(':')));
  compare_structure();
  return id;
}

Status MirroredWorld::destroy_space(SpaceId space) {
  const std::string refusal = oracle_.destroy_space_refusal(space);
  last_call_ = "destroy_space(" + to_string(space) + ")" + (refusal.empty() ? "" : " [" + refusal + "]");
  Status status = mirror(on_handles(last_call_, refusal.empty() ? Expect::accept : Expect::refuse, space),
                         &World::destroy_space, &BruteForceOracle::destroy_space, space);
  count_refusal(status, "destroy_space: " + (refusal.empty() ? std::string("handle")
                                             : refusal.find("default") != std::string::npos
                                                 ? std::string("default space")
                                                 : std::string("not empty")));
  compare_structure();
  return status;
}

Status MirroredWorld::set_space_def(SpaceId space, const SpaceDef& def) {
  const std::string refusal = BruteForceOracle::space_def_refusal(def);
  last_call_ = "set_space_def(" + to_string(space) + ", " + describe(def) + ")";
  Outcome outcome = on_handles(last_call_ + (refusal.empty() ? "" : " [" + refusal + "]"),
                               refusal.empty() ? Expect::accept : Expect::refuse, space);
  outcome.alternative = ErrorCode::invalid_def;
  Status status = mirror(outcome, &World::set_space_def, &BruteForceOracle::set_space_def, space, def);
  count_refusal(status, oracle_.is_live(space) ? "set_space_def: " + refusal.substr(0, refusal.find(':'))
                                               : "set_space_def: handle");
  compare_structure();
  return status;
}

Status MirroredWorld::set_space(EntityId entity, SpaceId space) {
  const bool attached = oracle_.is_attached(entity);
  last_call_ =
      "set_space(" + to_string(entity) + ", " + to_string(space) + ")" + (attached ? " [attached]" : "");
  Status status = mirror(on_handles(last_call_, attached ? Expect::refuse : Expect::accept, entity, space),
                         &World::set_space, &BruteForceOracle::set_space, entity, space);
  count_refusal(status, attached ? "set_space: attached" : "set_space: handle");
  compare_structure();
  return status;
}

Status MirroredWorld::set_culling_drill(SpaceId space, float enter_radius, float leave_radius) {
  const std::string refusal = BruteForceOracle::drill_refusal(enter_radius, leave_radius);
  last_call_ = "set_culling_drill(" + to_string(space) + ", " + describe_float(enter_radius) + ", " +
               describe_float(leave_radius) + ")" + (refusal.empty() ? "" : " [" + refusal + "]");
  Status status = mirror(on_handles(last_call_, refusal.empty() ? Expect::accept : Expect::refuse, space),
                         &World::set_culling_drill, &BruteForceOracle::set_culling_drill, space, enter_radius,
                         leave_radius);
  count_refusal(status, refusal.empty() ? "set_culling_drill: handle" : "set_culling_drill: radii");
  compare_structure();
  return status;
}

Status MirroredWorld::clear_culling_drill(SpaceId space) {
  last_call_ = "clear_culling_drill(" + to_string(space) + ")";
  // Clearing where no drill is set may be a no-op or a refusal.
  Status status =
      mirror(on_handles(last_call_, oracle_.has_drill(space) ? Expect::accept : Expect::either, space),
             &World::clear_culling_drill, &BruteForceOracle::clear_culling_drill, space);
  compare_structure();
  return status;
}

Status MirroredWorld::attach(EntityId child, EntityId parent) {
  const std::string refusal = oracle_.attach_refusal(child, parent);
  last_call_ = "attach(" + to_string(child) + ", " + to_string(parent) + ")" +
               (refusal.empty() ? "" : " [" + refusal + "]");
  Status status =
      mirror(on_handles(last_call_, refusal.empty() ? Expect::accept : Expect::refuse, child, parent),
             &World::attach, &BruteForceOracle::attach, child, parent);
  std::string kind = "attach: handle";
  if (refusal.find("child == parent") != std::string::npos) kind = "attach: child == parent";
  if (refusal.find("is attached to child") != std::string::npos) kind = "attach: cycle";
  if (refusal.find("non-Global key") != std::string::npos) kind = "attach: keyed child";
  if (refusal.find("is a presenter") != std::string::npos) kind = "attach: presenter child";
  if (refusal.find(" is in ") != std::string::npos) kind = "attach: different spaces";
  if (refusal.find(" deep") != std::string::npos) kind = "attach: too deep";
  count_refusal(status, kind);
  compare_structure();
  return status;
}

Status MirroredWorld::detach(EntityId child) {
  last_call_ = "detach(" + to_string(child) + ")";
  Status status =
      mirror(on_handles(last_call_, Expect::accept, child), &World::detach, &BruteForceOracle::detach, child);
  compare_structure();
  return status;
}

Status MirroredWorld::set_presenter(EntityId entity, bool presenter) {
  const bool attached = oracle_.is_attached(entity);
  last_call_ = "set_presenter(" + to_string(entity) + ", " + (presenter ? "true" : "false") + ")" +
               (attached ? " [attached]" : "");
  Status status = mirror(on_handles(last_call_, attached ? Expect::refuse : Expect::accept, entity),
                         &World::set_presenter, &BruteForceOracle::set_presenter, entity, presenter);
  count_refusal(status, attached ? "set_presenter: attached" : "set_presenter: handle");
  compare_structure();
  return status;
}

Status MirroredWorld::teleport(EntityId entity, float x, float z) {
  const bool valid = valid_position(x, z);
  last_call_ = "teleport(" + to_string(entity) + ", " + describe_float(x) + ", " + describe_float(z) + ")";
  Outcome outcome = on_handles(last_call_, valid ? Expect::accept : Expect::refuse, entity);
  outcome.refusal = ErrorCode::non_finite_position;
  Status status = mirror(outcome, &World::teleport, &BruteForceOracle::teleport, entity, x, z);
  count_refusal(status, valid ? "teleport: handle" : "teleport: position");
  return status;
}

// --- Sight ---

namespace {
bool valid_wall_coordinate(float v) { return std::isfinite(v) && std::fabs(v) <= kMaxCoordinate; }
bool same_wall(const WallSegment& a, const WallSegment& b) {
  return a.x0 == b.x0 && a.z0 == b.z0 && a.x1 == b.x1 && a.z1 == b.z1;
}
}  // namespace

void MirroredWorld::compare_walls(SpaceId space) {
  if (!oracle_.is_live(space)) return;
  const Result<std::span<const WallSegment>> walls = world_.walls(space);
  if (!walls.ok()) {
    note("walls(" + to_string(space) + ") refused: " + walls.status().message());
    return;
  }
  const std::vector<WallSegment> want = oracle_.walls(space);
  if (!std::equal(want.begin(), want.end(), walls->begin(), walls->end(), same_wall)) {
    note("after " + last_call_ + ": walls(" + to_string(space) + "): expected " +
         std::to_string(want.size()) + " walls, got " + std::to_string(walls->size()) +
         " (or different coordinates)");
  }
}

void MirroredWorld::compare_velocity(EntityId entity) {
  if (!oracle_.is_live(entity)) return;
  const Result<Velocity> v = world_.velocity(entity);
  const Velocity want = oracle_.velocity(entity);
  if (!v.ok()) {
    note("velocity(" + to_string(entity) + ") refused: " + v.status().message());
  } else if (!(v->x == want.x && v->z == want.z)) {
    note("after " + last_call_ + ": velocity(" + to_string(entity) + "): expected (" +
         describe_float(want.x) + ", " + describe_float(want.z) + "), got (" + describe_float(v->x) + ", " +
         describe_float(v->z) + ")");
  }
}

void MirroredWorld::compare_look_ahead(ClientId client) {
  if (!oracle_.is_live(client)) return;
  const Result<float> t = world_.look_ahead(client);
  if (!t.ok()) {
    note("look_ahead(" + to_string(client) + ") refused: " + t.status().message());
  } else if (!(*t == oracle_.look_ahead(client))) {
    note("after " + last_call_ + ": look_ahead(" + to_string(client) + "): expected " +
         describe_float(oracle_.look_ahead(client)) + ", got " + describe_float(*t));
  }
}

Status MirroredWorld::set_walls(SpaceId space, std::span<const WallSegment> walls) {
  const bool valid = std::all_of(walls.begin(), walls.end(), [](const WallSegment& w) {
    return valid_wall_coordinate(w.x0) && valid_wall_coordinate(w.z0) && valid_wall_coordinate(w.x1) &&
           valid_wall_coordinate(w.z1);
  });
  last_call_ = "set_walls(" + to_string(space) + ", " + std::to_string(walls.size()) + " walls)" +
               (valid ? "" : " [bad coordinate]");
  Outcome outcome = on_handles(last_call_, valid ? Expect::accept : Expect::refuse, space);
  outcome.refusal = ErrorCode::non_finite_position;
  Status status = mirror(
      outcome, &World::set_walls,
      [](BruteForceOracle& oracle, SpaceId s, std::span<const WallSegment> w) {
        return oracle.set_walls(s, std::vector<WallSegment>(w.begin(), w.end()));
      },
      space, walls);
  count_refusal(status, valid ? "set_walls: handle" : "set_walls: coordinate");
  compare_walls(space);
  return status;
}

Status MirroredWorld::set_velocity(EntityId entity, float vx, float vz) {
  const bool valid = valid_wall_coordinate(vx) && valid_wall_coordinate(vz);
  last_call_ =
      "set_velocity(" + to_string(entity) + ", " + describe_float(vx) + ", " + describe_float(vz) + ")";
  Status status = mirror(on_handles(last_call_, valid ? Expect::accept : Expect::refuse, entity),
                         &World::set_velocity, &BruteForceOracle::set_velocity, entity, vx, vz);
  count_refusal(status, valid ? "set_velocity: handle" : "set_velocity: value");
  compare_velocity(entity);
  return status;
}

Status MirroredWorld::set_look_ahead(ClientId client, float seconds) {
  const bool valid = seconds >= 0.0f && seconds <= kMaxLookAhead;
  last_call_ = "set_look_ahead(" + to_string(client) + ", " + describe_float(seconds) + ")";
  Status status = mirror(on_handles(last_call_, valid ? Expect::accept : Expect::refuse, client),
                         &World::set_look_ahead, &BruteForceOracle::set_look_ahead, client, seconds);
  count_refusal(status, valid ? "set_look_ahead: handle" : "set_look_ahead: value");
  compare_look_ahead(client);
  return status;
}

void MirroredWorld::set_visibility_filter(VisibilityFilter filter, void* context) {
  world_.set_visibility_filter(filter, context);
  oracle_.set_visibility_filter(filter, context);
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
  if (question_error_.empty() && problem.empty()) {
    const std::string questions = oracle_.compare_questions(world_);
    if (!questions.empty())
      question_error_ = "after " + std::to_string(oracle_.tick_count()) + " ticks: " + questions;
  }
  last_call_ = "tick()";
  compare_structure(true);
  // The readers after the tick (slot release must not disturb them).
  for (const EntityId e : oracle_.entities()) {
    compare_key(e);
    compare_entity(e);
    compare_velocity(e);
  }
  last_call_ = "tick()";
  for (const ClientId c : oracle_.clients()) {
    compare_subscriptions(c);
    compare_origins(c);
    compare_look_ahead(c);
  }
  for (const SpaceId s : oracle_.spaces()) compare_walls(s);
  return actual;
}

}  // namespace sightline::testing
