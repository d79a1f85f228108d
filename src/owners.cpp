// Owners: a client always holds the entities it owns.
#include <algorithm>

#include "format_value.h"
#include "world_impl.h"

namespace sightline {

void WorldImpl::clear_owner(std::uint32_t entity_index) {
  const std::uint32_t owner_slot = cold[entity_index].owner;
  if (owner_slot == 0) return;
  std::vector<std::uint32_t>& owned = client_slots[owner_slot - 1].owned;
  owned.erase(std::lower_bound(owned.begin(), owned.end(), entity_index));
  cold[entity_index].owner = 0;
  refresh_traits(entity_index);
}

Status World::set_owner(EntityId entity, ClientId client) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  if (Status s = w.check(client); !s) return s;
  if (w.cold[entity.index].owner == client.index + 1) return {};
  w.clear_owner(entity.index);
  std::vector<std::uint32_t>& owned = w.client_slots[client.index].owned;
  owned.insert(std::lower_bound(owned.begin(), owned.end(), entity.index), entity.index);
  w.cold[entity.index].owner = client.index + 1;
  w.refresh_traits(entity.index);
  w.recorder.record(recording::Op::set_owner, entity, client);
  return {};
}

Status World::clear_owner(EntityId entity) {
  WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  w.clear_owner(entity.index);
  w.recorder.record(recording::Op::clear_owner, entity);
  return {};
}

Result<ClientId> World::owner(EntityId entity) const {
  const WorldImpl& w = *impl_;
  if (Status s = w.check(entity); !s) return s;
  const std::uint32_t owner_slot = w.cold[entity.index].owner;
  if (owner_slot == 0) return ClientId{};
  return ClientId{owner_slot - 1, w.client_slots[owner_slot - 1].generation};
}

}  // namespace sightline
