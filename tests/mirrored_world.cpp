#include "mirrored_world.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

namespace sightline::testing {

MirroredWorld::MirroredWorld(const WorldDef& def)
    : world_(std::move(World::create(def).value())),
      oracle_(def.enter_radius, def.leave_radius, def.tiers) {}

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

Result<EntityId> MirroredWorld::create_entity(const EntityDef& def) {
  const std::uint32_t before = world_.entity_count();
  Result<EntityId> id = world_.create_entity(def);
  if (!valid_bound(def.bound_radius)) {
    if (id.ok() || id.status().code() != ErrorCode::invalid_argument) {
      note("create_entity with bound_radius " + describe_float(def.bound_radius) + " gave " +
           (id.ok() ? std::string("ok") : std::string(error_code_name(id.status().code()))) +
           ", expected invalid_argument");
    } else if (world_.entity_count() != before) {
      note("a refused create_entity changed entity_count");
    }
    return id;
  }
  if (!id.ok()) {
    note("create_entity refused: " + id.status().message());
    return id;
  }
  note(oracle_.create_entity(*id, def.x, def.z, def.always_relevant, def.bound_radius));
  compare_entity(*id);
  return id;
}

Status MirroredWorld::destroy_entity(EntityId entity) {
  Status status = world_.destroy_entity(entity);
  const bool viewer = oracle_.is_viewer(entity);
  if (viewer) {
    if (status.code() != ErrorCode::entity_is_viewer) {
      note("destroy_entity of viewer " + to_string(entity) + " gave " + error_code_name(status.code()));
    }
    return status;
  }
  if (!status.ok()) {
    note("destroy_entity(" + to_string(entity) + ") refused: " + status.message());
    return status;
  }
  note(oracle_.destroy_entity(entity));
  // The entity leaves every client's origins at once.
  for (const ClientId c : oracle_.clients()) compare_origins(c);
  return status;
}

Status MirroredWorld::set_position(EntityId entity, float x, float z) {
  Status status = world_.set_position(entity, x, z);
  if (!status.ok()) {
    note("set_position(" + to_string(entity) + ") refused: " + status.message());
    return status;
  }
  note(oracle_.set_position(entity, x, z));
  return status;
}

Status MirroredWorld::set_positions(std::span<const EntityId> entities, std::span<const float> xs,
                                    std::span<const float> zs) {
  Status status = world_.set_positions(entities, xs, zs);
  if (!status.ok()) {
    note("set_positions refused: " + status.message());
    return status;
  }
  for (std::size_t i = 0; i < entities.size(); ++i) note(oracle_.set_position(entities[i], xs[i], zs[i]));
  return status;
}

Status MirroredWorld::set_always_relevant(EntityId entity, bool always_relevant) {
  Status status = world_.set_always_relevant(entity, always_relevant);
  if (!status.ok()) {
    note("set_always_relevant(" + to_string(entity) + ") refused: " + status.message());
    return status;
  }
  note(oracle_.set_always_relevant(entity, always_relevant));
  return status;
}

Result<ClientId> MirroredWorld::create_client(EntityId viewer) {
  Result<ClientId> id = world_.create_client(viewer);
  if (!id.ok()) {
    note("create_client(" + to_string(viewer) + ") refused: " + id.status().message());
    return id;
  }
  note(oracle_.create_client(*id, viewer));
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
  Status status = world_.destroy_client(client);
  if (!status.ok()) {
    note("destroy_client(" + to_string(client) + ") refused: " + status.message());
    return status;
  }
  note(oracle_.destroy_client(client));
  // Ownership ends at once: every entity it owned reads unowned now.
  for (const EntityId e : oracle_.entities()) compare_entity(e);
  return status;
}

Status MirroredWorld::set_viewer(ClientId client, EntityId viewer) {
  Status status = world_.set_viewer(client, viewer);
  if (!status.ok()) {
    note("set_viewer(" + to_string(client) + ") refused: " + status.message());
    return status;
  }
  note(oracle_.set_viewer(client, viewer));
  compare_origins(client);
  return status;
}

Status MirroredWorld::set_radii(float enter_radius, float leave_radius) {
  Status status = world_.set_radii(enter_radius, leave_radius);
  if (!status.ok()) {
    note("set_radii refused: " + status.message());
    return status;
  }
  oracle_.set_radii(enter_radius, leave_radius);
  return status;
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
  const char* type = key.type == InterestKeyType::global ? "global" : key.type == InterestKeyType::area ? "area" : "user";
  return std::string(type) + " " + std::to_string(key.value);
}

}  // namespace

void MirroredWorld::check_outcome(const std::string& call, const Status& status, bool live, bool null, Expect args) {
  if (!live) {
    const ErrorCode want = null ? ErrorCode::null_handle : ErrorCode::stale_handle;
    if (status.code() != want) {
      note(call + " on a " + (null ? "null" : "dead") + " handle gave " + error_code_name(status.code()) +
           ", expected " + error_code_name(want));
    }
    return;
  }
  if (args == Expect::accept && !status.ok()) note(call + " refused: " + status.message());
  if (args == Expect::refuse && status.code() != ErrorCode::invalid_argument) {
    note(call + " gave " + error_code_name(status.code()) + ", expected invalid_argument");
  }
  if (args == Expect::either && !status.ok() && status.code() != ErrorCode::invalid_argument) {
    note(call + " gave " + error_code_name(status.code()) + ", expected ok or invalid_argument");
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
  const auto area = world_.area_keys(client);
  const auto user = world_.user_keys(client);
  const auto revision = world_.subscription_revision(client);
  if (!area.ok() || !user.ok() || !revision.ok()) {
    note("a subscription reader refused " + to_string(client));
    return;
  }
  if (*area != oracle_.area_keys(client)) {
    note("area_keys(" + to_string(client) + "): expected " + describe(oracle_.area_keys(client)) + ", got " +
         describe(*area));
  } else if (*user != oracle_.user_keys(client)) {
    note("user_keys(" + to_string(client) + "): expected " + describe(oracle_.user_keys(client)) + ", got " +
         describe(*user));
  } else if (*revision != oracle_.subscription_revision(client)) {
    if (revision_error_.empty()) {
      revision_error_ = "after " + std::to_string(oracle_.tick_count()) + " ticks: subscription_revision(" +
                        to_string(client) + ") after " + last_call_ + ": expected " +
                        std::to_string(oracle_.subscription_revision(client)) + ", got " + std::to_string(*revision);
    }
    oracle_.set_revision_base(client, *revision);
  }
}

Status MirroredWorld::set_area_interest_key(EntityId entity, std::uint64_t key) {
  Status status = world_.set_area_interest_key(entity, key);
  const bool live = oracle_.is_live(entity);
  const std::string call = "set_area_interest_key(" + to_string(entity) + ", " + std::to_string(key) + ")";
  check_outcome(call, status, live, entity.is_null(), valid_key(key) ? Expect::accept : Expect::refuse);
  if (status.ok()) note(oracle_.set_entity_key(entity, encode_area_key(key)));
  compare_key(entity);
  return status;
}

Status MirroredWorld::set_user_interest_key(EntityId entity, std::uint64_t key) {
  Status status = world_.set_user_interest_key(entity, key);
  const bool live = oracle_.is_live(entity);
  const std::string call = "set_user_interest_key(" + to_string(entity) + ", " + std::to_string(key) + ")";
  check_outcome(call, status, live, entity.is_null(), valid_key(key) && key != 0 ? Expect::accept : Expect::refuse);
  if (status.ok()) note(oracle_.set_entity_key(entity, encode_user_key(key)));
  compare_key(entity);
  return status;
}

Status MirroredWorld::set_global_interest_key(EntityId entity) {
  Status status = world_.set_global_interest_key(entity);
  check_outcome("set_global_interest_key(" + to_string(entity) + ")", status, oracle_.is_live(entity),
                entity.is_null(), Expect::accept);
  if (status.ok()) note(oracle_.set_entity_key(entity, 0));
  compare_key(entity);
  return status;
}

Status MirroredWorld::set_area_keys(ClientId client, std::span<const KeySubscription> keys) {
  Status status = world_.set_area_keys(client, keys);
  const std::vector<KeySubscription> list(keys.begin(), keys.end());
  const bool valid = std::all_of(list.begin(), list.end(), [](const KeySubscription& k) {
    return valid_key(k.key) && valid_rate(k.send_rate);
  });
  last_call_ = "set_area_keys(" + to_string(client) + ", " + describe(list) + ")";
  check_outcome(last_call_, status, oracle_.is_live(client),
                client.is_null(), valid ? Expect::accept : Expect::refuse);
  if (status.ok()) note(oracle_.set_area_keys(client, list));
  compare_subscriptions(client);
  return status;
}

Status MirroredWorld::add_user_key(ClientId client, KeySubscription subscription) {
  Status status = world_.add_user_key(client, subscription);
  const bool valid = valid_key(subscription.key) && subscription.key != 0 && valid_rate(subscription.send_rate);
  last_call_ = "add_user_key(" + to_string(client) + ", " + describe({subscription}) + ")";
  check_outcome(last_call_, status,
                oracle_.is_live(client), client.is_null(), valid ? Expect::accept : Expect::refuse);
  if (status.ok()) note(oracle_.add_user_key(client, subscription));
  compare_subscriptions(client);
  return status;
}

Status MirroredWorld::remove_user_key(ClientId client, std::uint64_t key) {
  Status status = world_.remove_user_key(client, key);
  // Key 0 can never be subscribed: refusing it or accepting it as a no-op are both consistent.
  const Expect args = !valid_key(key) ? Expect::refuse : key == 0 ? Expect::either : Expect::accept;
  last_call_ = "remove_user_key(" + to_string(client) + ", " + std::to_string(key) + ")";
  check_outcome(last_call_, status,
                oracle_.is_live(client), client.is_null(), args);
  if (status.ok()) note(oracle_.remove_user_key(client, key));
  compare_subscriptions(client);
  return status;
}

Status MirroredWorld::clear_area_keys(ClientId client) {
  Status status = world_.clear_area_keys(client);
  last_call_ = "clear_area_keys(" + to_string(client) + ")";
  check_outcome(last_call_, status, oracle_.is_live(client), client.is_null(),
                Expect::accept);
  if (status.ok()) note(oracle_.clear_area_keys(client));
  compare_subscriptions(client);
  return status;
}

Status MirroredWorld::clear_user_keys(ClientId client) {
  Status status = world_.clear_user_keys(client);
  last_call_ = "clear_user_keys(" + to_string(client) + ")";
  check_outcome(last_call_, status, oracle_.is_live(client), client.is_null(),
                Expect::accept);
  if (status.ok()) note(oracle_.clear_user_keys(client));
  compare_subscriptions(client);
  return status;
}

Status MirroredWorld::clear_interest_keys(ClientId client) {
  Status status = world_.clear_interest_keys(client);
  last_call_ = "clear_interest_keys(" + to_string(client) + ")";
  check_outcome(last_call_, status, oracle_.is_live(client), client.is_null(),
                Expect::accept);
  if (status.ok()) note(oracle_.clear_interest_keys(client));
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
  } else if (*owner != oracle_.owner(entity)) {
    const ClientId want = oracle_.owner(entity);
    note("owner(" + to_string(entity) + "): expected " + (want.is_null() ? std::string("none") : to_string(want)) +
         ", got " + (owner->is_null() ? std::string("none") : to_string(*owner)));
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
  Status status = world_.set_bound_radius(entity, radius);
  check_outcome("set_bound_radius(" + to_string(entity) + ", " + describe_float(radius) + ")", status,
                oracle_.is_live(entity), entity.is_null(), valid_bound(radius) ? Expect::accept : Expect::refuse);
  if (status.ok()) note(oracle_.set_bound_radius(entity, radius));
  compare_entity(entity);
  return status;
}

Status MirroredWorld::set_owner(EntityId entity, ClientId client) {
  Status status = world_.set_owner(entity, client);
  const bool entity_live = oracle_.is_live(entity);
  const bool client_live = oracle_.is_live(client);
  check_outcome("set_owner(" + to_string(entity) + ", " + to_string(client) + ")", status,
                entity_live && client_live, entity_live ? client.is_null() : entity.is_null(), Expect::accept);
  if (status.ok()) note(oracle_.set_owner(entity, client));
  compare_entity(entity);
  return status;
}

Status MirroredWorld::clear_owner(EntityId entity) {
  Status status = world_.clear_owner(entity);
  const bool owned = !oracle_.owner(entity).is_null();
  check_outcome("clear_owner(" + to_string(entity) + ")", status, oracle_.is_live(entity), entity.is_null(),
                owned ? Expect::accept : Expect::either);
  if (status.ok()) note(oracle_.clear_owner(entity));
  compare_entity(entity);
  return status;
}

Status MirroredWorld::add_origin(ClientId client, EntityId origin) {
  Status status = world_.add_origin(client, origin);
  const bool entity_live = oracle_.is_live(origin);
  const bool client_live = oracle_.is_live(client);
  const std::string refusal = oracle_.add_origin_refusal(client, origin);
  std::string call = "add_origin(" + to_string(client) + ", " + to_string(origin) + ")";
  if (!refusal.empty()) call += " [" + refusal + "]";
  check_outcome(call, status, entity_live && client_live, client_live ? origin.is_null() : client.is_null(),
                refusal.empty() ? Expect::accept : Expect::refuse);
  if (status.ok()) note(oracle_.add_origin(client, origin));
  compare_origins(client);
  return status;
}

Status MirroredWorld::remove_origin(ClientId client, EntityId origin) {
  Status status = world_.remove_origin(client, origin);
  const bool entity_live = oracle_.is_live(origin);
  const bool client_live = oracle_.is_live(client);
  check_outcome("remove_origin(" + to_string(client) + ", " + to_string(origin) + ")", status,
                entity_live && client_live, client_live ? origin.is_null() : client.is_null(),
                oracle_.is_origin(client, origin) ? Expect::accept : Expect::refuse);
  if (status.ok()) note(oracle_.remove_origin(client, origin));
  compare_origins(client);
  return status;
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
  // The readers after the tick (slot release must not disturb them).
  for (const EntityId e : oracle_.entities()) {
    compare_key(e);
    compare_entity(e);
  }
  last_call_ = "tick()";
  for (const ClientId c : oracle_.clients()) {
    compare_subscriptions(c);
    compare_origins(c);
  }
  return actual;
}

}  // namespace sightline::testing
