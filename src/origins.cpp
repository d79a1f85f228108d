// Origins: the entities a client sees from, besides its viewer.
#include <algorithm>
#include <string>

#include "format_value.h"
#include "world_impl.h"

namespace sightline {

std::size_t WorldImpl::origins_of(const ClientSlot& client, float* origin_x, float* origin_z) const noexcept {
  const std::uint32_t client_space = cold[client.viewer].space;
  origin_x[0] = xs[client.viewer];
  origin_z[0] = zs[client.viewer];
  std::size_t origins = 1;
  for (const std::uint32_t o : client.extra_origins) {
    if (cold[o].space != client_space) continue;
    origin_x[origins] = xs[o];
    origin_z[origins] = zs[o];
    ++origins;
  }
  return origins;
}

Status World::add_origin(ClientId client, EntityId origin) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  if (Status s = w.check(origin); !s) return s;
  ClientSlot& slot = w.client_slots[client.index];
  if (origin.index == slot.viewer) {
    return {ErrorCode::invalid_argument, describe(origin) + " is already the viewer of " + describe(client)};
  }
  std::vector<std::uint32_t>& extra = slot.extra_origins;
  const auto at = std::lower_bound(extra.begin(), extra.end(), origin.index);
  if (at != extra.end() && *at == origin.index) {
    return {ErrorCode::invalid_argument, describe(origin) + " is already an origin of " + describe(client)};
  }
  if (extra.size() >= kMaxOrigins) {
    return {ErrorCode::invalid_argument, describe(client) + " already has " + std::to_string(kMaxOrigins) +
                                             " extra origins (kMaxOrigins): cannot add " + describe(origin)};
  }
  extra.insert(at, origin.index);
  slot.refresh = true;
  ++w.cold[origin.index].origin_refs;
  w.refresh_traits(origin.index);
  w.recorder.record(recording::Op::add_origin, client, origin);
  return {};
}

Status World::remove_origin(ClientId client, EntityId origin) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  if (Status s = w.check(origin); !s) return s;
  std::vector<std::uint32_t>& extra = w.client_slots[client.index].extra_origins;
  const auto at = std::lower_bound(extra.begin(), extra.end(), origin.index);
  if (at == extra.end() || *at != origin.index) {
    return {ErrorCode::invalid_argument, describe(origin) + " is not an origin of " + describe(client)};
  }
  extra.erase(at);
  w.client_slots[client.index].refresh = true;
  --w.cold[origin.index].origin_refs;
  w.refresh_traits(origin.index);
  w.recorder.record(recording::Op::remove_origin, client, origin);
  return {};
}

Result<std::vector<EntityId>> World::origins(ClientId client) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(client); !s) return s;
  std::vector<EntityId> out;
  for (const std::uint32_t e : w.client_slots[client.index].extra_origins) {
    out.push_back({e, w.generation[e]});
  }
  return out;
}

void WorldImpl::forget_origin(std::uint32_t entity_index) {
  if (cold[entity_index].origin_refs == 0) return;
  for (const ClientId id : live_clients) {
    std::vector<std::uint32_t>& extra = client_slots[id.index].extra_origins;
    const auto at = std::lower_bound(extra.begin(), extra.end(), entity_index);
    if (at != extra.end() && *at == entity_index) {
      extra.erase(at);
      client_slots[id.index].refresh = true;
    }
  }
  cold[entity_index].origin_refs = 0;
  refresh_traits(entity_index);
}

}  // namespace sightline
