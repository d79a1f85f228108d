// Interest keys: the World's key and subscription API, and the index bypass subscriptions use.
#include <algorithm>
#include <string>

#include "format_value.h"
#include "world_impl.h"

namespace sightline {

namespace {

Status check_key(std::uint64_t key, bool user, const char* field) {
  if (key > kMaxInterestKey) {
    return {ErrorCode::invalid_argument,
            std::string(field) + " is " + std::to_string(key) +
                ": bit 63 is set, keys are 63-bit (<= " + std::to_string(kMaxInterestKey) + ")"};
  }
  if (user && key == 0) {
    return {ErrorCode::invalid_argument,
            std::string(field) + " is 0: user key 0 would encode as Global and cannot be used"};
  }
  return {};
}

bool is_user(std::uint64_t stored_key) { return stored_key != 0 && (stored_key & 1u) == 0; }

// Replaces the subscriptions of one kind with `replacement` (sorted, unique, that kind only);
// bumps the revision only if something changed.
void replace_kind(ClientSlot& client, bool user, const std::vector<Subscription>& replacement) {
  std::vector<Subscription> merged;
  merged.reserve(client.subscriptions.size() + replacement.size());
  for (const Subscription& s : client.subscriptions) {
    if (is_user(s.stored_key) != user) merged.push_back(s);
  }
  merged.insert(merged.end(), replacement.begin(), replacement.end());
  std::sort(merged.begin(), merged.end(),
            [](const Subscription& a, const Subscription& b) { return a.stored_key < b.stored_key; });
  const bool same = merged.size() == client.subscriptions.size() &&
                    std::equal(merged.begin(), merged.end(), client.subscriptions.begin(),
                               [](const Subscription& a, const Subscription& b) {
                                 return a.stored_key == b.stored_key && a.send_rate == b.send_rate &&
                                        a.bypass_distance == b.bypass_distance;
                               });
  if (same) return;
  client.subscriptions = std::move(merged);
  client.bypass_subscriptions =
      static_cast<std::uint32_t>(std::count_if(client.subscriptions.begin(), client.subscriptions.end(),
                                               [](const Subscription& s) { return s.bypass_distance; }));
  ++client.subscription_revision;
}

std::vector<Subscription> of_kind(const ClientSlot& client, bool user) {
  std::vector<Subscription> out;
  for (const Subscription& s : client.subscriptions) {
    if (is_user(s.stored_key) == user) out.push_back(s);
  }
  return out;
}

std::vector<KeySubscription> decoded(const ClientSlot& client, bool user) {
  std::vector<KeySubscription> out;
  for (const Subscription& s : client.subscriptions) {
    if (is_user(s.stored_key) == user) {
      out.push_back({decode_interest_key(s.stored_key).value, s.send_rate, s.bypass_distance});
    }
  }
  // Stored order is by encoded key, which for one kind is the order of the values.
  return out;
}

}  // namespace

Status check_subscription(const KeySubscription& subscription, bool user) {
  if (Status s = check_key(subscription.key, user, user ? "user key" : "area key"); !s) return s;
  if (subscription.send_rate > kMaxPeriod) {
    return {ErrorCode::invalid_argument, "send_rate of key " + std::to_string(subscription.key) + " is " +
                                             std::to_string(subscription.send_rate) +
                                             ": must be in 0..65535"};
  }
  return {};
}

Subscription stored(const KeySubscription& subscription, bool user) {
  return {user ? encode_user_key(subscription.key) : encode_area_key(subscription.key),
          std::max<std::uint32_t>(subscription.send_rate, 1), subscription.bypass_distance};
}

const Subscription* find_subscription(const ClientSlot& client, std::uint64_t stored_key) noexcept {
  const auto at = std::lower_bound(client.subscriptions.begin(), client.subscriptions.end(), stored_key,
                                   [](const Subscription& s, std::uint64_t k) { return s.stored_key < k; });
  return at != client.subscriptions.end() && at->stored_key == stored_key ? &*at : nullptr;
}

void WorldImpl::set_entity_key(std::uint32_t index, std::uint64_t stored_key) {
  const std::uint64_t old = cold[index].key;
  if (old == stored_key) return;
  if (old == 0) ++keyed_entities;
  if (stored_key == 0) --keyed_entities;
  cold[index].key = stored_key;
  refresh_traits(index);
  keys_dirty = true;
}

void WorldImpl::rebuild_keyed_index() {
  keys_dirty = false;
  keyed_index.clear();
  if (keyed_index.capacity() < cold.size()) keyed_index.reserve(cold.size());
  for (std::uint32_t i = 0; i < cold.size(); ++i) {
    if (alive[i] && cold[i].key != 0) keyed_index.emplace_back(cold[i].key, i);
  }
  std::sort(keyed_index.begin(), keyed_index.end());
}

Status World::set_area_interest_key(EntityId entity, std::uint64_t key) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  if (Status s = w.check_root(entity, "an interest key"); !s) return s;
  if (Status s = check_key(key, false, "area key"); !s) return s;
  w.set_entity_key(entity.index, encode_area_key(key));
  w.recorder.record(recording::Op::set_area_interest_key, entity, key);
  return {};
}

Status World::set_user_interest_key(EntityId entity, std::uint64_t key) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  if (Status s = w.check_root(entity, "an interest key"); !s) return s;
  if (Status s = check_key(key, true, "user key"); !s) return s;
  w.set_entity_key(entity.index, encode_user_key(key));
  w.recorder.record(recording::Op::set_user_interest_key, entity, key);
  return {};
}

Status World::set_global_interest_key(EntityId entity) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  if (Status s = w.check_root(entity, "an interest key"); !s) return s;
  w.set_entity_key(entity.index, 0);
  w.recorder.record(recording::Op::set_global_interest_key, entity);
  return {};
}

Result<InterestKey> World::interest_key(EntityId entity) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  return decode_interest_key(w.cold[entity.index].key);
}

Status World::set_area_subscriptions(ClientId client, std::span<const KeySubscription> subscriptions) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  for (const KeySubscription& k : subscriptions) {
    if (Status s = check_subscription(k, false); !s) return s;
  }
  std::vector<Subscription> replacement;
  replacement.reserve(subscriptions.size());
  for (const KeySubscription& k : subscriptions) replacement.push_back(stored(k, false));
  std::sort(replacement.begin(), replacement.end(),
            [](const Subscription& a, const Subscription& b) { return a.stored_key < b.stored_key; });
  // A key listed twice: the fastest rate, bypass if either entry is.
  std::vector<Subscription> unique;
  for (const Subscription& s : replacement) {
    if (!unique.empty() && unique.back().stored_key == s.stored_key) {
      unique.back().send_rate = std::min(unique.back().send_rate, s.send_rate);
      unique.back().bypass_distance = unique.back().bypass_distance || s.bypass_distance;
    } else {
      unique.push_back(s);
    }
  }
  replace_kind(w.client_slots[client.index], false, unique);
  w.recorder.record(recording::Op::set_area_subscriptions, client, subscriptions);
  return {};
}

Status World::add_user_subscription(ClientId client, KeySubscription subscription) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  if (Status s = check_subscription(subscription, true); !s) return s;
  ClientSlot& slot = w.client_slots[client.index];
  std::vector<Subscription> users = of_kind(slot, true);
  const Subscription added = stored(subscription, true);
  const auto at = std::find_if(users.begin(), users.end(),
                               [&](const Subscription& s) { return s.stored_key == added.stored_key; });
  if (at != users.end()) {
    *at = added;
  } else {
    users.push_back(added);
  }
  replace_kind(slot, true, users);
  w.recorder.record(recording::Op::add_user_subscription, client, subscription);
  return {};
}

Status World::remove_user_subscription(ClientId client, std::uint64_t key) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  if (Status s = check_key(key, true, "user key"); !s) return s;
  ClientSlot& slot = w.client_slots[client.index];
  std::vector<Subscription> users = of_kind(slot, true);
  std::erase_if(users, [&](const Subscription& s) { return s.stored_key == encode_user_key(key); });
  replace_kind(slot, true, users);
  w.recorder.record(recording::Op::remove_user_subscription, client, key);
  return {};
}

Status World::clear_area_subscriptions(ClientId client) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  replace_kind(w.client_slots[client.index], false, {});
  w.recorder.record(recording::Op::clear_area_subscriptions, client);
  return {};
}

Status World::clear_user_subscriptions(ClientId client) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  replace_kind(w.client_slots[client.index], true, {});
  w.recorder.record(recording::Op::clear_user_subscriptions, client);
  return {};
}

Status World::clear_subscriptions(ClientId client) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  ClientSlot& slot = w.client_slots[client.index];
  if (slot.subscriptions.empty()) return {};
  slot.subscriptions.clear();
  slot.bypass_subscriptions = 0;
  ++slot.subscription_revision;
  w.recorder.record(recording::Op::clear_subscriptions, client);
  return {};
}

Result<std::vector<KeySubscription>> World::area_subscriptions(ClientId client) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  return decoded(w.client_slots[client.index], false);
}

Result<std::vector<KeySubscription>> World::user_subscriptions(ClientId client) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  return decoded(w.client_slots[client.index], true);
}

Result<std::uint64_t> World::subscription_revision(ClientId client) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  return w.client_slots[client.index].subscription_revision;
}

}  // namespace sightline
