// One send: every live client's table brought to the World's set, then its packets written,
// reliable records first (resends, despawns, spawns in entry order), then updates.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "replicator_impl.h"

namespace sightline {
namespace {

void put_u32(std::uint8_t* p, std::uint32_t v) noexcept {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

}  // namespace

void ClientState::reset(ClientId client, bool unreliable) {
  id = client;
  known = true;
  members.reserve(kMemberFloor);
  merge.reserve(kMemberFloor);
  waiting_despawns.reserve(kDespawnFloor);
  if (unreliable) {
    queue.reserve(kQueueFloor);
    store.reserve(kStoreFloor);
  }
  members.clear();
  queue.clear();
  head = 0;
  store.clear();
  waiting_despawns.clear();
  next_reliable = acked = sequence = 0;
  catching_up = true;
  pending = longest_wait = 0;
  bytes = packets = 0;
  packet_count = 0;
}

Status ReplicatorImpl::send() {
  view = world.view();
  grow_entities();
  stats = SendStats{};
  first_error = {};
  payloads.clear();
  out.clear();
  packet_offsets.clear();
  violations.clear();
  for (const std::uint32_t r : view.teleported_roots) teleport_send[r] = sends + 1;
  if (def.development) {
    for (std::size_t e = 0; e < view.entity_slots; ++e) {
      if (view.alive[e] && born_generation[e] != view.generation[e]) {
        born_generation[e] = view.generation[e];
        born_send[e] = sends;
      }
    }
  }
  if (clients.size() < view.client_slots) clients.resize(view.client_slots);
  for (ClientState& c : clients) {
    if (c.known && !world.holds(c.id)) c = ClientState{};
  }
  for (const ClientId id : view.live_clients) {
    ClientState& c = clients[id.index];
    if (!c.known) c.reset(id, def.delivery == Delivery::unreliable);
    send_client(c, world.client(id.index));
  }
  packet_spans.clear();
  make_room(packet_spans, packet_offsets.size() / 2);
  for (std::size_t i = 0; i + 1 < packet_offsets.size(); i += 2) {
    packet_spans.emplace_back(out.data() + packet_offsets[i], packet_offsets[i + 1] - packet_offsets[i]);
  }
  ++sends;
  return first_error;
}

void ReplicatorImpl::send_client(ClientState& c, const ClientTick& client) {
  ClientSend s{c, client};
  s.now = sends;
  s.tick = static_cast<std::uint32_t>(view.ticks == 0 ? 0 : view.ticks - 1);
  s.unreliable = def.delivery == Delivery::unreliable;
  s.settled = !c.catching_up && !client.origins_changed;
  if (client.origins_changed) c.catching_up = true;

  merge_membership(s);
  s.first_packet = static_cast<std::uint32_t>(packet_offsets.size() / 2);
  resend_reliable(s);
  send_despawns(s);
  pace_entry(s);
  fill_updates(s);
  close_packet(s);
  finish_client(s);
}

/// Brings the table to the World's set (sorted by index): despawns of the tick queued, members
/// gone without one queued too, members new to the set added pending.
void ReplicatorImpl::merge_membership(ClientSend& s) {
  ClientState& c = s.c;
  const EntityId* const set = s.client.members.data();
  const auto set_size = static_cast<std::uint32_t>(s.client.members.size());
  const SpawnRecord* const spawned = s.client.spawns.data();
  const DespawnRecord* const despawned = s.client.despawns.data();
  ++stamp;
  for (std::uint32_t i = 0; i < s.client.spawns.size(); ++i) {
    spawn_stamp[spawned[i].entity.index] = stamp;
    spawn_reason[spawned[i].entity.index] = static_cast<std::uint8_t>(spawned[i].reason);
  }
  // Despawns in the World's order (attachments before their parents); a member whose spawn never
  // went leaves without a record.
  make_room(c.waiting_despawns, s.client.despawns.size(), kDespawnFloor);
  for (std::uint32_t i = 0; i < s.client.despawns.size(); ++i) {
    const Member* m = find(c.members, despawned[i].entity);
    if (m == nullptr || m->pending) continue;
    c.waiting_despawns.push_back(despawned[i]);
    despawn_stamp[despawned[i].entity.index] = stamp;
  }
  // Most sends find the set as the table holds it, or changed in a few places: the runs the
  // table already holds are copied whole.
  const std::size_t held = c.members.size();
  std::size_t kept = 0;
  while (kept < held && kept < set_size && c.members[kept].id == set[kept]) ++kept;
  c.merge.clear();
  make_room(c.merge, set_size, kMemberFloor);  // every send, so the table's two buffers grow in step
  if (kept == held && kept == set_size) return;
  c.merge.insert(c.merge.end(), c.members.begin(), c.members.begin() + static_cast<std::ptrdiff_t>(kept));
  std::size_t old = kept;
  for (std::size_t i = kept; i < set_size;) {
    const EntityId e = set[i];
    while (old < held && c.members[old].id.index < e.index) leave_unrecorded(c, c.members[old++]);
    if (old < held && c.members[old].id.index == e.index && c.members[old].id != e) {
      leave_unrecorded(c, c.members[old++]);
    }
    if (old < held && c.members[old].id == e) {
      const std::size_t from = old;
      while (i < set_size && old < held && c.members[old].id == set[i]) {
        ++i;
        ++old;
      }
      c.merge.insert(c.merge.end(), c.members.begin() + static_cast<std::ptrdiff_t>(from),
                     c.members.begin() + static_cast<std::ptrdiff_t>(old));
      continue;
    }
    Member m;
    m.id = e;
    m.since = s.now;
    m.reason =
        spawn_stamp[e.index] == stamp ? static_cast<SpawnReason>(spawn_reason[e.index]) : SpawnReason::near;
    c.merge.push_back(m);
    ++s.joined;
    ++i;
  }
  while (old < held) leave_unrecorded(c, c.members[old++]);
  c.members.swap(c.merge);
}

/// A member gone from the set without a record of this tick (a tick without a send in between)
/// still leaves the client: the table follows the set, whatever was missed.
void ReplicatorImpl::leave_unrecorded(ClientState& c, const Member& m) {
  if (m.pending || despawn_stamp[m.id.index] == stamp) return;
  const bool alive = view.alive[m.id.index] && view.generation[m.id.index] == m.id.generation;
  make_room(c.waiting_despawns, 1, kDespawnFloor);
  c.waiting_despawns.push_back({m.id, alive ? DespawnReason::left : DespawnReason::destroyed});
}

/// Despawns always go, in the World's order, as far as the reliable window allows.
void ReplicatorImpl::send_despawns(ClientSend& s) {
  ClientState& c = s.c;
  std::size_t despawns_sent = 0;
  for (; despawns_sent < c.waiting_despawns.size() && window_open(s); ++despawns_sent) {
    const DespawnRecord& d = c.waiting_despawns[despawns_sent];
    const std::uint32_t id =
        enqueue(s, RecordType::despawn, d.entity, static_cast<std::uint8_t>(d.reason), {});
    s.budget_used += write_despawn(s, id, d.entity, d.reason);
    ++stats.despawns;
  }
  c.waiting_despawns.erase(c.waiting_despawns.begin(),
                           c.waiting_despawns.begin() + static_cast<std::ptrdiff_t>(despawns_sent));
}

/// Paced entry: what the origins need at once, then nearest first within the entry allowance.
void ReplicatorImpl::pace_entry(ClientSend& s) {
  ClientState& c = s.c;
  std::array<std::uint32_t, kMaxOrigins + 1> origin_roots;
  for (std::size_t o = 0; o < s.client.origins; ++o)
    origin_roots[o] = view.root_of(s.client.origin_entity[o]);
  entry_order.clear();
  make_room(entry_order, c.members.size());
  // c.pending is still the last send's count: with no new member, none waits when it is 0.
  const bool any_pending = c.pending != 0 || s.joined != 0;
  for (std::uint32_t i = 0; any_pending && i < c.members.size(); ++i) {
    const Member& m = c.members[i];
    if (!m.pending) continue;
    const std::uint32_t r = view.root_of(m.id.index);
    const float d = surface(view, s.client, r);
    bool critical = d == 0.0f && view.bound[r] > 0.0f;
    for (std::size_t o = 0; o < s.client.origins && !critical; ++o) critical = origin_roots[o] == r;
    entry_order.push_back({critical ? 0u : 1u, d, view.cold[m.id.index].depth, m.id.index, i});
  }
  std::sort(entry_order.begin(), entry_order.end());
  const float promise = def.promise_fraction * s.client.enter;
  for (const EntryOrder& o : entry_order) {
    if (!window_open(s)) break;
    Member& m = c.members[o.member];
    const std::uint32_t parent = view.cold[m.id.index].parent;
    if (parent != TickView::kNoParent) {
      // Parent first. The World holds a tree whole, so a parent outside the table is the viewer,
      // which the client predicts and is never sent.
      const Member* p = find(c.members, EntityId{parent, view.generation[parent]});
      if (p != nullptr && p->pending) continue;
    }
    std::span<const std::uint8_t> bytes;
    if (!payload(m.id, StatePart::full, bytes)) continue;
    const std::size_t size = spawn_record_bytes(c.next_reliable, m.id, bytes.size());
    if (o.critical != 0 && s.entry_used != 0 && s.entry_used + size > def.entry_budget_bytes) continue;
    const std::uint32_t id = enqueue(s, RecordType::spawn, m.id, static_cast<std::uint8_t>(m.reason), bytes);
    s.entry_used += write_spawn(s, id, m.id, m.reason, bytes, 0);
    m.pending = false;
    m.acc = 0.0f;
    if (s.now > m.since) {
      ++stats.spawns_delayed;
      stats.spawn_delay_sends += s.now - m.since;
    }
    m.since = s.now;
    ++stats.spawns;
    if (def.development && s.settled && s.client.culls && (m.reason == SpawnReason::near) &&
        born_send[m.id.index] < s.now && o.distance <= promise) {
      violations.push_back({c.id, m.id, o.distance, promise});
      ++stats.promise_violations;
    }
  }
}

/// The client's packets stated and counted, then what waits after the send: pending, catching
/// up, longest wait.
void ReplicatorImpl::finish_client(ClientSend& s) {
  ClientState& c = s.c;
  // Every packet of this send states the reliable ids assigned before its updates were chosen.
  const std::uint32_t packet_end = static_cast<std::uint32_t>(packet_offsets.size() / 2);
  for (std::uint32_t p = s.first_packet; p < packet_end; ++p) {
    put_u32(out.data() + packet_offsets[2 * p] + kReliableNextOffset, c.next_reliable);
    const std::uint32_t size = packet_offsets[2 * p + 1] - packet_offsets[2 * p];
    c.bytes += size;
    stats.bytes += size;
  }
  c.packet_begin = s.first_packet;
  c.packet_count = packet_end - s.first_packet;
  c.packets += c.packet_count;
  stats.packets += c.packet_count;

  c.pending = 0;
  c.longest_wait = 0;
  for (const Member& m : c.members) {
    if (m.pending) {
      ++c.pending;
    } else {
      c.longest_wait = std::max(
          c.longest_wait, static_cast<std::uint32_t>(std::min<std::uint64_t>(s.now - m.since, 0xffffffffu)));
    }
  }
  if (c.pending == 0) c.catching_up = false;
  stats.pending += c.pending;
  stats.max_pending = std::max(stats.max_pending, c.pending);
  stats.longest_wait = std::max(stats.longest_wait, c.longest_wait);
}

}  // namespace sightline
