// A client carried between Worlds: export_client names its state by external ids, adopt_client
// checks every part of an image before it changes anything, then makes the client and gives it
// the image's set as its set after the last tick.
#include <algorithm>
#include <string>

#include "format_value.h"
#include "validation.h"
#include "world_impl.h"

namespace sightline {

namespace {

// The sorted list's neighbours equal: the first repeated value, or none.
template <class T>
const T* repeated(const std::vector<T>& sorted) {
  const auto at = std::adjacent_find(sorted.begin(), sorted.end());
  return at == sorted.end() ? nullptr : &*at;
}

}  // namespace

Result<ClientImage> World::export_client(ClientId client) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  const ClientSlot& slot = w.client_slots[client.index];
  // The external id of entity slot `e`, refused when it has none.
  Status missing;
  const auto id_of = [&](std::uint32_t e, const char* role) -> std::uint64_t {
    if (w.external[e] == 0 && missing.ok()) {
      missing = {ErrorCode::invalid_argument, "export_client of " + describe(client) + ": its " + role + " " +
                                                  describe(EntityId{e, w.generation[e]}) +
                                                  " has no external id (EntityDef::external_id)"};
    }
    return w.external[e];
  };
  ClientImage image;
  image.viewer = id_of(slot.viewer, "viewer");
  const std::span<const EntityId> members = w.members_of(slot);
  const std::uint64_t last_tick = w.ticks == 0 ? 0 : w.ticks - 1;
  image.members.reserve(members.size());
  for (std::size_t i = 0; i < members.size(); ++i) {
    const std::uint64_t seen = slot.sighted ? w.outputs_of(slot).seen[slot.seen.begin + i] : last_tick;
    image.members.push_back({id_of(members[i].index, "member"), last_tick - seen});
  }
  std::sort(image.members.begin(), image.members.end(),
            [](const ClientImage::Member& a, const ClientImage::Member& b) { return a.entity < b.entity; });
  image.sighted = slot.sighted;
  image.area_subscriptions = *area_subscriptions(client);
  image.user_subscriptions = *user_subscriptions(client);
  image.subscription_revision = slot.subscription_revision;
  for (const std::uint32_t e : slot.extra_origins) image.extra_origins.push_back(id_of(e, "extra origin"));
  for (const std::uint32_t e : slot.owned) image.owned.push_back(id_of(e, "owned entity"));
  if (!missing) return missing;
  std::sort(image.extra_origins.begin(), image.extra_origins.end());
  std::sort(image.owned.begin(), image.owned.end());
  image.origins_changed = slot.refresh;
  image.origins_changed_at_last_tick = slot.origins_changed;
  image.look_ahead = slot.look_ahead;
  image.view_enter_radius = slot.view_enter;
  image.view_leave_radius = slot.view_leave;
  image.last_enter_radius = slot.enter;
  image.last_leave_radius = slot.leave;
  return image;
}

Result<ClientId> World::adopt_client(const ClientImage& image) {
  WorldImpl& w = *impl_;
  const auto refuse = [](std::string what) {
    return Status{ErrorCode::invalid_argument, "adopt_client: ClientImage::" + std::move(what)};
  };
  // Each external id to a live entity here.
  std::string unknown;
  const auto local = [&](std::uint64_t id, const std::string& field) -> std::uint32_t {
    const EntityId e = find_external(id);
    if (e.is_null() && unknown.empty())
      unknown = field + " is external id " + std::to_string(id) + ": no live entity here has it";
    return e.index;
  };
  const std::uint32_t viewer = local(image.viewer, "viewer");
  std::vector<std::uint32_t> members;
  members.reserve(image.members.size());
  for (std::size_t i = 0; i < image.members.size(); ++i)
    members.push_back(local(image.members[i].entity, "members[" + std::to_string(i) + "].entity"));
  std::vector<std::uint32_t> origins;
  for (std::size_t i = 0; i < image.extra_origins.size(); ++i)
    origins.push_back(local(image.extra_origins[i], "extra_origins[" + std::to_string(i) + "]"));
  std::vector<std::uint32_t> owned;
  for (std::size_t i = 0; i < image.owned.size(); ++i)
    owned.push_back(local(image.owned[i], "owned[" + std::to_string(i) + "]"));
  if (!unknown.empty()) return refuse(unknown);

  // The order members take in a set, with their sightings beside them.
  std::vector<std::pair<std::uint32_t, std::uint64_t>> set;
  set.reserve(members.size());
  for (std::size_t i = 0; i < members.size(); ++i)
    set.emplace_back(members[i], image.members[i].unseen_ticks);
  std::sort(set.begin(), set.end());
  for (std::size_t i = 1; i < set.size(); ++i) {
    if (set[i].first == set[i - 1].first)
      return refuse("members holds external id " + std::to_string(w.external[set[i].first]) + " twice");
  }
  std::sort(origins.begin(), origins.end());
  if (const std::uint32_t* twice = repeated(origins))
    return refuse("extra_origins holds external id " + std::to_string(w.external[*twice]) + " twice");
  if (std::binary_search(origins.begin(), origins.end(), viewer))
    return refuse("extra_origins holds the viewer, external id " + std::to_string(image.viewer));
  if (origins.size() > kMaxOrigins) {
    return refuse("extra_origins holds " + std::to_string(origins.size()) + ": at most " +
                  std::to_string(kMaxOrigins) + " (kMaxOrigins)");
  }
  std::sort(owned.begin(), owned.end());
  if (const std::uint32_t* twice = repeated(owned))
    return refuse("owned holds external id " + std::to_string(w.external[*twice]) + " twice");
  std::vector<Subscription> subscriptions;
  for (const bool user : {false, true}) {
    const std::vector<KeySubscription>& list = user ? image.user_subscriptions : image.area_subscriptions;
    const char* field = user ? "user_subscriptions" : "area_subscriptions";
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (Status s = check_subscription(list[i], user); !s)
        return refuse(std::string(field) + "[" + std::to_string(i) + "]: " + s.message());
      subscriptions.push_back(stored(list[i], user));
    }
  }
  std::sort(subscriptions.begin(), subscriptions.end(),
            [](const Subscription& a, const Subscription& b) { return a.stored_key < b.stored_key; });
  for (std::size_t i = 1; i < subscriptions.size(); ++i) {
    if (subscriptions[i].stored_key == subscriptions[i - 1].stored_key) {
      const InterestKey key = decode_interest_key(subscriptions[i].stored_key);
      return refuse(std::string(key.type == InterestKeyType::user ? "user" : "area") +
                    "_subscriptions list key " + std::to_string(key.value) + " twice");
    }
  }
  if (Status s = validate_view_radius("the image", image.view_enter_radius, image.view_leave_radius); !s)
    return refuse("view_enter_radius, view_leave_radius: " + s.message());
  if (Status s = validate_look_ahead("the image", image.look_ahead); !s)
    return refuse("look_ahead: " + s.message());
  const auto radius_ok = [](float r) { return r == 0.0f || (r >= kMinRadius && r <= kMaxRadius); };
  if (!radius_ok(image.last_enter_radius) || !radius_ok(image.last_leave_radius)) {
    return refuse("last_enter_radius, last_leave_radius are " + format_value(image.last_enter_radius) + ", " +
                  format_value(image.last_leave_radius) + ": each must be 0 or in [" +
                  format_value(kMinRadius) + ", " + format_value(kMaxRadius) + "]");
  }
  const std::uint64_t last_tick = w.ticks == 0 ? 0 : w.ticks - 1;
  if (image.sighted) {
    for (const auto& [e, unseen] : set) {
      if (unseen > last_tick) {
        return refuse("members: external id " + std::to_string(w.external[e]) + " was last seen " +
                      std::to_string(unseen) + " ticks before the last tick, which is tick " +
                      std::to_string(last_tick) +
                      " here: start this World at the same tick as the image's (WorldDef::first_tick)");
      }
    }
  }

  // Everything checked: nothing below refuses.
  ClientId client;
  {
    const Recorder::Quiet quiet(w.recorder);
    client = *create_client(EntityId{viewer, w.generation[viewer]});
    for (const std::uint32_t o : origins) (void)add_origin(client, EntityId{o, w.generation[o]});
    for (const std::uint32_t e : owned) (void)set_owner(EntityId{e, w.generation[e]}, client);
  }
  ClientSlot& slot = w.client_slots[client.index];
  slot.subscriptions = std::move(subscriptions);
  slot.bypass_subscriptions =
      static_cast<std::uint32_t>(std::count_if(slot.subscriptions.begin(), slot.subscriptions.end(),
                                               [](const Subscription& s) { return s.bypass_distance; }));
  slot.subscription_revision = image.subscription_revision;
  slot.refresh = image.origins_changed;
  slot.origins_changed = image.origins_changed_at_last_tick;
  slot.look_ahead = image.look_ahead;
  slot.view_enter = image.view_enter_radius;
  slot.view_leave = image.view_leave_radius;
  slot.enter = image.last_enter_radius;
  slot.leave = image.last_leave_radius;
  // Its set after the last tick: at the end of part 0's, with its sightings and periods beside it.
  TickOutputs& out = w.parts[0].out;
  const auto count = static_cast<std::uint32_t>(set.size());
  slot.part = 0;
  slot.members = {static_cast<std::uint32_t>(out.members.size()), count};
  EntityId* const held = out.members.extend(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint32_t e = set[i].first;
    held[i] = EntityId{e, w.generation[e]};
    ++w.cold[e].holders;
  }
  if (w.record_periods) std::fill_n(out.periods.extend(count), count, 1u);
  slot.sighted = image.sighted;
  if (image.sighted) {
    slot.seen = {static_cast<std::uint32_t>(out.seen.size()), count};
    std::uint64_t* const seen = out.seen.extend(count);
    for (std::uint32_t i = 0; i < count; ++i) seen[i] = last_tick - set[i].second;
  }
  w.recorder.record(recording::Op::adopt_client, image, client);
  return client;
}

}  // namespace sightline
