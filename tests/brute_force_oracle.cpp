#include "brute_force_oracle.h"

#include <algorithm>
#include <limits>
#include <set>
#include <sstream>
#include <utility>

#include "sightline/world.h"

namespace sightline::testing {

std::string to_string(EntityId id) {
  return "entity " + std::to_string(id.index) + ":" + std::to_string(id.generation);
}

std::string to_string(ClientId id) {
  return "client " + std::to_string(id.index) + ":" + std::to_string(id.generation);
}

BruteForceOracle::BruteForceOracle(float enter_radius, float leave_radius,
                                   std::vector<DistanceTier> tiers)
    : enter_radius_(enter_radius), leave_radius_(leave_radius), tiers_(std::move(tiers)) {}

const BruteForceOracle::Entity* BruteForceOracle::live(EntityId id) const {
  const auto it = entities_.find(id.index);
  if (it == entities_.end() || !it->second.alive || it->second.id != id) return nullptr;
  return &it->second;
}

std::string BruteForceOracle::create_entity(EntityId id, float x, float z, bool always_relevant,
                                            float bound_radius) {
  if (id.is_null()) return "create_entity returned a null handle";
  if (entities_.contains(id.index)) {
    return "create_entity reused slot " + std::to_string(id.index) +
           " before a tick released it (" + to_string(id) + ")";
  }
  if (const auto it = last_generation_.find(id.index);
      it != last_generation_.end() && id.generation <= it->second) {
    return "create_entity reused slot " + std::to_string(id.index) + " without a new generation (" +
           to_string(id) + ", previous generation " + std::to_string(it->second) + ")";
  }
  last_generation_[id.index] = id.generation;
  entities_[id.index] = Entity{id, x, z, always_relevant, true, 0, bound_radius, ClientId{}};
  return {};
}

std::string BruteForceOracle::destroy_entity(EntityId id) {
  Entity* entity = const_cast<Entity*>(live(id));
  if (entity == nullptr) return "destroy_entity accepted " + to_string(id) + ", not live";
  if (is_viewer(id)) return "destroy_entity accepted " + to_string(id) + ", a viewer";
  entity->alive = false;
  entity->always = false;
  entity->owner = ClientId{};
  // Destroying an entity removes it from every client's extra origins, at once.
  for (auto& [index, c] : clients_) std::erase(c.origins, id);
  return {};
}

std::string BruteForceOracle::set_position(EntityId id, float x, float z) {
  Entity* entity = const_cast<Entity*>(live(id));
  if (entity == nullptr) return "set_position accepted " + to_string(id) + ", not live";
  entity->x = x;
  entity->z = z;
  return {};
}

std::string BruteForceOracle::set_always_relevant(EntityId id, bool always_relevant) {
  Entity* entity = const_cast<Entity*>(live(id));
  if (entity == nullptr) return "set_always_relevant accepted " + to_string(id) + ", not live";
  entity->always = always_relevant;
  return {};
}

std::string BruteForceOracle::create_client(ClientId id, EntityId viewer) {
  if (id.is_null()) return "create_client returned a null handle";
  if (live(viewer) == nullptr) return "create_client accepted viewer " + to_string(viewer);
  if (clients_.contains(id.index)) return "create_client reused live slot of " + to_string(id);
  clients_[id.index] = Client{id, viewer, {}, {}, 0, {}};
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
  const auto it = clients_.find(id.index);
  if (it == clients_.end() || it->second.id != id) {
    return "set_viewer accepted " + to_string(id) + ", not live";
  }
  if (live(viewer) == nullptr) return "set_viewer accepted viewer " + to_string(viewer);
  it->second.viewer = viewer;
  // The viewer is never an extra origin: becoming the viewer removes it from them.
  std::erase(it->second.origins, viewer);
  return {};
}

void BruteForceOracle::set_radii(float enter_radius, float leave_radius) {
  enter_radius_ = enter_radius;
  leave_radius_ = leave_radius;
}

std::string BruteForceOracle::set_bound_radius(EntityId id, float radius) {
  Entity* entity = const_cast<Entity*>(live(id));
  if (entity == nullptr) return "set_bound_radius accepted " + to_string(id) + ", not live";
  entity->bound = radius;
  return {};
}

std::string BruteForceOracle::set_owner(EntityId id, ClientId owner) {
  Entity* entity = const_cast<Entity*>(live(id));
  if (entity == nullptr) return "set_owner accepted " + to_string(id) + ", not live";
  if (client(owner) == nullptr) return "set_owner accepted " + to_string(owner) + ", not live";
  entity->owner = owner;
  return {};
}

std::string BruteForceOracle::clear_owner(EntityId id) {
  Entity* entity = const_cast<Entity*>(live(id));
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
  return {};
}

std::string BruteForceOracle::remove_origin(ClientId id, EntityId origin) {
  Client* c = client(id);
  if (c == nullptr) return "remove_origin accepted " + to_string(id) + ", not live";
  if (!is_origin(id, origin)) {
    return "remove_origin accepted " + to_string(origin) + ", not an origin of " + to_string(id);
  }
  std::erase(c->origins, origin);
  return {};
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

namespace {
bool is_user_key(std::uint64_t stored) { return stored != 0 && (stored & 1u) == 0; }
}  // namespace

std::string BruteForceOracle::set_entity_key(EntityId id, std::uint64_t stored_key) {
  Entity* entity = const_cast<Entity*>(live(id));
  if (entity == nullptr) return "an interest key setter accepted " + to_string(id) + ", not live";
  entity->key = stored_key;
  return {};
}

void BruteForceOracle::replace_kind(Client& c, bool user, const std::map<std::uint64_t, Subscription>& replacement) {
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

std::string BruteForceOracle::set_area_keys(ClientId id, const std::vector<KeySubscription>& keys) {
  Client* c = client(id);
  if (c == nullptr) return "set_area_keys accepted " + to_string(id) + ", not live";
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

std::string BruteForceOracle::add_user_key(ClientId id, KeySubscription subscription) {
  Client* c = client(id);
  if (c == nullptr) return "add_user_key accepted " + to_string(id) + ", not live";
  std::map<std::uint64_t, Subscription> users;
  for (const auto& [key, sub] : c->subscriptions) {
    if (is_user_key(key)) users[key] = sub;
  }
  users[encode_user_key(subscription.key)] =
      Subscription{std::max<std::uint32_t>(subscription.send_rate, 1), subscription.bypass_distance};
  replace_kind(*c, true, users);
  return {};
}

std::string BruteForceOracle::remove_user_key(ClientId id, std::uint64_t key) {
  Client* c = client(id);
  if (c == nullptr) return "remove_user_key accepted " + to_string(id) + ", not live";
  std::map<std::uint64_t, Subscription> users;
  for (const auto& [stored, sub] : c->subscriptions) {
    if (is_user_key(stored) && stored != encode_user_key(key)) users[stored] = sub;
  }
  replace_kind(*c, true, users);
  return {};
}

std::string BruteForceOracle::clear_area_keys(ClientId id) {
  Client* c = client(id);
  if (c == nullptr) return "clear_area_keys accepted " + to_string(id) + ", not live";
  replace_kind(*c, false, {});
  return {};
}

std::string BruteForceOracle::clear_user_keys(ClientId id) {
  Client* c = client(id);
  if (c == nullptr) return "clear_user_keys accepted " + to_string(id) + ", not live";
  replace_kind(*c, true, {});
  return {};
}

std::string BruteForceOracle::clear_interest_keys(ClientId id) {
  Client* c = client(id);
  if (c == nullptr) return "clear_interest_keys accepted " + to_string(id) + ", not live";
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
  std::sort(out.begin(), out.end(), [](const KeySubscription& a, const KeySubscription& b) { return a.key < b.key; });
  return out;
}

std::vector<KeySubscription> BruteForceOracle::area_keys(ClientId id) const { return decoded(*client(id), false); }
std::vector<KeySubscription> BruteForceOracle::user_keys(ClientId id) const { return decoded(*client(id), true); }
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

std::uint32_t BruteForceOracle::period_for(float distance2, float bound) const {
  for (const DistanceTier& tier : tiers_) {
    // Like the enter test: squared distances compared in float, so a member at exactly
    // d == fraction * R (with fraction * R exact in float) is within the tier. A bounded
    // entity's limit is (fraction * R + b)^2, the sum and its square in float; for b == 0 the
    // documented limit is (fraction * R)^2, kept apart so that it reads exactly as documented.
    const float scaled = tier.max_distance_fraction * enter_radius_;
    const float limit = bound > 0.0f ? scaled + bound : scaled;
    if (distance2 <= limit * limit) return tier.period;
  }
  return tiers_.back().period;
}

TickStats BruteForceOracle::tick() {
  TickStats stats;
  stats.tick = ticks_;
  // (R + b)^2 and (L + b)^2 in float; for a point entity (b == 0) these are R*R and L*L.
  auto enter2 = [&](const Entity& e) {
    const float reach = e.bound > 0.0f ? enter_radius_ + e.bound : enter_radius_;
    return reach * reach;
  };
  auto leave2 = [&](const Entity& e) {
    const float reach = e.bound > 0.0f ? leave_radius_ + e.bound : leave_radius_;
    return reach * reach;
  };
  for (auto& [client_index, client] : clients_) {
    ClientRecords& out = client.records;
    out.spawns.clear();
    out.updates.clear();
    out.despawns.clear();
    // The viewer first, then the extra origins (all live: destroying one removes it).
    std::vector<const Entity*> origins{live(client.viewer)};
    for (const EntityId o : client.origins) origins.push_back(live(o));
    // nearest2: the smallest float squared distance to any origin.
    auto distance2 = [&](const Entity& e) {
      float best = std::numeric_limits<float>::infinity();
      for (const Entity* o : origins) {
        const float dx = e.x - o->x;
        const float dz = e.z - o->z;
        best = std::min(best, dx * dx + dz * dz);
      }
      return best;
    };
    auto owned = [&](const Entity& e) { return e.owner == client.id; };
    auto is_extra_origin = [&](const Entity& e) {
      return std::find(client.origins.begin(), client.origins.end(), e.id) != client.origins.end();
    };
    // Held at any distance and whatever the key, with no key send rate.
    auto unconditional = [&](const Entity& e) { return e.always || owned(e) || is_extra_origin(e); };
    // The matching subscription of an entity's key, or null (always null for Global).
    auto subscription = [&](const Entity& e) -> const Subscription* {
      if (e.key == 0) return nullptr;
      const auto it = client.subscriptions.find(e.key);
      return it == client.subscriptions.end() ? nullptr : &it->second;
    };
    auto admits = [&](const Entity& e) { return e.key == 0 || subscription(e) != nullptr; };
    auto bypasses = [&](const Entity& e) {
      const Subscription* sub = subscription(e);
      return sub != nullptr && sub->bypass_distance;
    };

    std::vector<EntityId> kept;
    std::set<std::uint32_t> kept_index;
    for (const EntityId member : out.members) {
      const Entity* entity = live(member);
      if (entity == nullptr) {
        out.despawns.push_back({member, DespawnReason::destroyed});
      } else if (member == client.viewer) {
        out.despawns.push_back({member, DespawnReason::left});
      } else if (unconditional(*entity)) {
        kept.push_back(member);
        kept_index.insert(member.index);
      } else if (!admits(*entity)) {
        out.despawns.push_back({member, DespawnReason::key_removed});
      } else if (bypasses(*entity)) {
        kept.push_back(member);
        kept_index.insert(member.index);
      } else if (distance2(*entity) > leave2(*entity)) {
        out.despawns.push_back({member, DespawnReason::left});
      } else {
        kept.push_back(member);
        kept_index.insert(member.index);
      }
    }

    for (const auto& [entity_index, entity] : entities_) {
      if (!entity.alive || entity.id == client.viewer) continue;
      if (kept_index.contains(entity_index)) continue;
      if (entity.always) {
        out.spawns.push_back({entity.id, SpawnReason::always});
      } else if (owned(entity)) {
        out.spawns.push_back({entity.id, SpawnReason::owner});
      } else if (is_extra_origin(entity)) {
        out.spawns.push_back({entity.id, SpawnReason::origin});
      } else if (bypasses(entity)) {
        out.spawns.push_back({entity.id, SpawnReason::key});
      } else if (admits(entity) && distance2(entity) <= enter2(entity)) {
        out.spawns.push_back({entity.id, SpawnReason::near});
      }
    }

    out.members = kept;
    for (const SpawnRecord& spawn : out.spawns) out.members.push_back(spawn.entity);
    std::sort(out.members.begin(), out.members.end(),
              [](EntityId a, EntityId b) { return a.index < b.index; });

    for (const EntityId member : out.members) {
      const Entity& entity = *live(member);
      std::uint32_t period = tiers_.empty() ? 1 : period_for(distance2(entity), entity.bound);
      if (!unconditional(entity)) {
        // Every member here is admitted: Global (key rate 1) or subscribed.
        if (const Subscription* sub = subscription(entity)) period = std::max(period, sub->send_rate);
      }
      if (period == 1 || (ticks_ + member.index) % period == 0) out.updates.push_back({member});
    }
    std::sort(out.despawns.begin(), out.despawns.end(),
              [](const DespawnRecord& a, const DespawnRecord& b) { return a.entity.index < b.entity.index; });

    stats.spawns += out.spawns.size();
    stats.updates += out.updates.size();
    stats.despawns += out.despawns.size();
    stats.members += out.members.size();
  }
  std::erase_if(entities_, [](const auto& entry) { return !entry.second.alive; });
  ++ticks_;
  return stats;
}

namespace {

// Any other value is printed as a number, so a reason this model never produces reads clearly.
std::string spawn_reason(SpawnReason reason) {
  if (reason == SpawnReason::near) return "near";
  if (reason == SpawnReason::always) return "always";
  if (reason == SpawnReason::key) return "key";
  if (reason == SpawnReason::owner) return "owner";
  if (reason == SpawnReason::origin) return "origin";
  return "reason " + std::to_string(static_cast<int>(reason));
}
std::string despawn_reason(DespawnReason reason) {
  if (reason == DespawnReason::left) return "left";
  if (reason == DespawnReason::destroyed) return "destroyed";
  if (reason == DespawnReason::key_removed) return "key_removed";
  return "reason " + std::to_string(static_cast<int>(reason));
}

bool same(const SpawnRecord& a, const SpawnRecord& b) { return a.entity == b.entity && a.reason == b.reason; }
bool same(const DespawnRecord& a, const DespawnRecord& b) { return a.entity == b.entity && a.reason == b.reason; }
bool same(const UpdateRecord& a, const UpdateRecord& b) { return a.entity == b.entity; }
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
      out << to_string(client) << " " << what << "[" << i << "]: expected " << want << ", got "
          << got << " (expected " << expected.size() << " records, got " << actual.size() << ")";
      return out.str();
    }
  }
  return {};
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
    if (!stream.ok() || !set.ok()) return to_string(client.id) + " refused by the world";
    const ClientRecords& want = client.records;
    std::string diff = first_difference<SpawnRecord>("spawns", client.id, want.spawns, stream->spawns,
                                                     [](const SpawnRecord& r) {
                                                       return to_string(r.entity) + " " + spawn_reason(r.reason);
                                                     });
    if (diff.empty()) {
      diff = first_difference<DespawnRecord>("despawns", client.id, want.despawns, stream->despawns,
                                             [](const DespawnRecord& r) {
                                               return to_string(r.entity) + " " + despawn_reason(r.reason);
                                             });
    }
    if (diff.empty()) {
      diff = first_difference<UpdateRecord>("updates", client.id, want.updates, stream->updates,
                                            [](const UpdateRecord& r) { return to_string(r.entity); });
    }
    if (diff.empty()) {
      diff = first_difference<EntityId>("interest_set", client.id, want.members, *set,
                                        [](const EntityId& e) { return to_string(e); });
    }
    if (!diff.empty()) return "tick " + std::to_string(ticks_ - 1) + ": " + diff;
  }
  return {};
}

}  // namespace sightline::testing
