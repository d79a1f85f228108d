// One send: every live client's table brought to the World's set, then its packets written,
// reliable records first (resends, despawns, spawns in entry order, refreshes), then events,
// messages and updates.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "bit_cast.h"
#include "log_report.h"
#include "replicator_impl.h"

namespace sightline {
namespace {

void put_u32(std::uint8_t* p, std::uint32_t v) noexcept {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// SendWorker::spawn_reason holds a spawn record's reason in its low bits and `created` here.
constexpr std::uint8_t kCreatedBit = 0x80;

}  // namespace

void ClientState::reset(ClientId client, bool unreliable) {
  id = client;
  known = true;
  members.reserve(kMemberFloor);
  merge.reserve(kMemberFloor);
  waiting_despawns.reserve(kDespawnFloor);
  outbox.reserve(kOutboxFloor);
  outbox_sizes.reserve(kOutboxCountFloor);
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
  status_sent = {};
  status_known = false;
  status_sequence = acked_sequence = 0;
  catching_up = true;
  pending = longest_wait = 0;
  bytes = packets_sent = 0;
  out.clear();
  packet_offsets.clear();
  packets.clear();
  outbox.clear();
  outbox_sizes.clear();
  baselines.clear();
  baseline_bytes.clear();
  free_slots.clear();
  slots = 0;
  packet_received.fill(0);
  unresolved.clear();
  waiting_on.clear();
  refresh_due.clear();
  unconfirmed.clear();
}

namespace {

// A range of the live clients, sent on one worker: by slot, neighbours together where the tick
// gave that order (they share most members, so the entities' lines one reads are in cache for
// the next, and each worker reads a region of the world rather than all of it).
struct SendRange {
  ReplicatorImpl* r;
  std::span<const std::uint32_t> nearby;  // or, empty, live_clients
  std::span<const ClientId> live;
};

void send_range(std::uint32_t begin, std::uint32_t end, std::uint32_t worker, void* context) {
  const SendRange& range = *static_cast<const SendRange*>(context);
  ReplicatorImpl& r = *range.r;
  for (std::uint32_t i = begin; i < end; ++i) {
    const std::uint32_t slot = range.nearby.empty() ? range.live[i].index : range.nearby[i];
    r.send_client(r.workers[worker], r.clients[slot], r.world.client(slot));
  }
}

void add(SendStats& to, const SendStats& from) noexcept {
  to.packets += from.packets;
  to.bytes += from.bytes;
  to.spawns += from.spawns;
  to.updates += from.updates;
  to.delta_updates += from.delta_updates;
  to.refreshes += from.refreshes;
  to.despawns += from.despawns;
  to.messages += from.messages;
  to.message_bytes += from.message_bytes;
  to.messages_waiting += from.messages_waiting;
  to.events += from.events;
  to.event_bytes += from.event_bytes;
  to.events_dropped += from.events_dropped;
  to.resends += from.resends;
  to.updates_skipped += from.updates_skipped;
  to.pending += from.pending;
  to.max_pending = std::max(to.max_pending, from.max_pending);
  to.spawns_delayed += from.spawns_delayed;
  to.spawn_delay_sends += from.spawn_delay_sends;
  to.longest_wait = std::max(to.longest_wait, from.longest_wait);
  to.serialize_calls += from.serialize_calls;
  to.serialized_bytes += from.serialized_bytes;
  to.sourced_payloads += from.sourced_payloads;
  to.serialize_errors += from.serialize_errors;
  to.promise_violations += from.promise_violations;
}

void pack_range(std::uint32_t begin, std::uint32_t end, std::uint32_t worker, void* context) {
  ReplicatorImpl& r = *static_cast<ReplicatorImpl*>(context);
  const TickView& view = r.view;
  for (std::uint32_t e = begin; e < end; ++e) {
    if (!view.alive[e]) continue;
    r.motion[e] = motion_of(view, e, view.attachments ? view.root_of(e) : e);
    if (r.serialize_ahead && view.cold[e].holders != 0) {
      Payload unused;
      (void)r.first_cached(r.workers[worker], EntityId{e, view.generation[e]}, StatePart::update, unused);
    }
  }
}

}  // namespace

// Serializing ahead: a payload serialized when a client first needs it is a read of the game's
// state (and of the World's, for the entity's handle) at a random place, a cache miss or more
// each; in slot order the same reads stream (MMO: a send 15% faster, interleaved runs). Done
// only where the last send wrote at least two update records per entity slot, so that the
// serializer calls it makes, needed or not, are at most half the records written; and not in a
// world small enough to stay in the caches, where it gains nothing (the reference scenario's
// 120 entities: a send 3% slower with it).
void ReplicatorImpl::pack_motion(TaskRunner& tasks, bool threaded) {
  constexpr std::size_t kAheadMinSlots = 16384;
  motion_packed = view.members >= view.entity_slots;
  serialize_ahead = motion_packed && def.share_payloads && view.entity_slots >= kAheadMinSlots &&
                    stats.updates >= 2 * std::uint64_t{view.entity_slots};
  if (!motion_packed) return;
  if (motion.size() < view.entity_slots) motion.resize(view.entity_slots);
  const auto slots = static_cast<std::uint32_t>(view.entity_slots);
  constexpr std::uint32_t kSlice = 4096;
  tasks.run(slots, threaded ? kSlice : slots, pack_range, this);
}

Status ReplicatorImpl::send() {
  view = world.view();
  grow_entities();
  TaskRunner& tasks = world.tasks();
  if (workers.size() < tasks.workers()) workers.resize(tasks.workers());
  for (SendWorker& w : workers) {
    w.stats = SendStats{};
    w.error = {};
    w.payloads.clear();
    w.references.clear();
    w.most_references = 0;
    w.violations.clear();
    if (w.own.size() < max_payload + kMaxRecordFraming) w.own.resize(max_payload + kMaxRecordFraming);
    if (def.delta_updates && w.delta_record.empty()) {
      w.delta_runs.resize(delta_runs_bound(max_payload));
      w.delta_record.resize(delta_runs_bound(max_payload) + kMaxRecordFraming + 10);
    }
  }
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
  }
  // The tick's rule for its own passes: members plus 16 a client, against WorldDef::thread_min_work.
  const auto live = static_cast<std::uint32_t>(view.live_clients.size());
  const bool threaded = view.members + 16 * std::uint64_t{live} >= view.thread_min_work;
  pack_motion(tasks, threaded);
  serialize_events();
  fan_out_messages();
  SendRange range{this, view.nearby_order, view.live_clients};
  tasks.run(live, threaded ? 1 : live, send_range, &range);
  // The workers' results in a fixed order, so the totals, the violations and the error reported
  // are the same whatever the split.
  stats = SendStats{};
  stats.serialize_errors = event_failures;
  stats.messages_dropped = messages_dropped;
  first_error = {};
  std::uint64_t error_key = 0;
  for (const SendWorker& w : workers) {
    add(stats, w.stats);
    reference_width = std::max(reference_width, w.most_references);
    if (!w.error.ok() && (first_error.ok() || w.error_key < error_key)) {
      first_error = w.error;
      error_key = w.error_key;
    }
  }
  if (first_error.ok()) first_error = event_error;  // an entity's failure is reported first
  if (def.development) {
    // One client's violations are all one worker's, in the order found. Sorting by (client slot,
    // rank) puts them in client order as a stable sort would, without std::stable_sort's buffer.
    placed.clear();
    for (const SendWorker& w : workers) {
      make_room(placed, w.violations.size());
      for (PlacedViolation p : w.violations) {
        p.rank = static_cast<std::uint32_t>(placed.size());
        placed.push_back(p);
      }
    }
    std::sort(placed.begin(), placed.end(), [](const PlacedViolation& a, const PlacedViolation& b) {
      return a.client != b.client ? a.client < b.client : a.rank < b.rank;
    });
    make_room(violations, placed.size());
    for (const PlacedViolation& p : placed) violations.push_back(p.violation);
  }
  report_drops();
  ++sends;
  return first_error;
}

// After the send, on the calling thread: what the game's operator should hear about, each kind
// at its first send and then at most once every kReportEverySends sends, with the count since.
void ReplicatorImpl::report_drops() {
  const auto due = [this](Reported& r, std::uint64_t count) {
    r.count += count;
    if (r.count == 0 || (r.reported && sends - r.last < kReportEverySends)) return std::uint64_t{0};
    const std::uint64_t total = r.count;
    r = Reported{.last = sends, .count = 0, .reported = true};
    return total;
  };
  if (const std::uint64_t n = due(reported_messages, stats.messages_dropped)) {
    report(def.log, LogLevel::warning,
           "Replicator send %llu: %llu messages dropped, a client's queue being full "
           "(ReplicatorDef::message_queue_bytes is %u)",
           static_cast<unsigned long long>(sends), static_cast<unsigned long long>(n),
           def.message_queue_bytes);
  }
  if (const std::uint64_t n = due(reported_events, stats.events_dropped)) {
    report(def.log, LogLevel::warning,
           "Replicator send %llu: %llu reliable events dropped for clients with %u reliable records "
           "unacknowledged (a client that stopped acking)",
           static_cast<unsigned long long>(sends), static_cast<unsigned long long>(n), kReliableWindow);
  }
  // Violations are told with one of this send's, so only at a send that has some.
  const std::uint64_t violated = violations.empty() ? 0 : due(reported_violations, violations.size());
  if (violated > 0) {
    const PromiseViolation& v = violations.front();
    report(def.log, LogLevel::warning,
           "Replicator send %llu: %llu promise violations; this send's first: client %u:%u got entity %u:%u "
           "at distance %.3f, inside its promise radius %.3f",
           static_cast<unsigned long long>(sends), static_cast<unsigned long long>(violated), v.client.index,
           v.client.generation, v.entity.index, v.entity.generation, static_cast<double>(v.distance),
           static_cast<double>(v.promise_radius));
  }
}

void ReplicatorImpl::send_client(SendWorker& w, ClientState& c, const ClientTick& client) {
  ClientSend s{c, client, w};
  s.now = sends;
  s.tick = static_cast<std::uint32_t>(view.ticks == 0 ? 0 : view.ticks - 1);
  s.unreliable = def.delivery == Delivery::unreliable;
  s.settled = !c.catching_up && !client.origins_changed;
  if (client.origins_changed) c.catching_up = true;

  c.out.clear();
  c.packet_offsets.clear();
  s.w.named.clear();
  make_room(s.w.named, c.unconfirmed.size() + 1);
  if (!c.unconfirmed.empty()) prune_unconfirmed(s);
  s.w.named.push_back(EntityId{client.viewer, view.generation[client.viewer]});  // it may be new
  merge_membership(s);
  resend_reliable(s);
  send_despawns(s);
  pace_entry(s);
  send_refreshes(s);
  send_events(s);
  send_messages(s);
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
  SendWorker& w = s.w;
  if (w.spawn_stamp.size() < view.entity_slots) {
    w.spawn_stamp.resize(view.entity_slots, 0);
    w.spawn_reason.resize(view.entity_slots, 0);
    w.despawn_stamp.resize(view.entity_slots, 0);
  }
  const std::uint64_t stamp = ++w.stamp;
  for (std::uint32_t i = 0; i < s.client.spawns.size(); ++i) {
    w.spawn_stamp[spawned[i].entity.index] = stamp;
    w.spawn_reason[spawned[i].entity.index] = static_cast<std::uint8_t>(
        static_cast<std::uint8_t>(spawned[i].reason) | (spawned[i].created ? kCreatedBit : 0));
  }
  // Despawns in the World's order (attachments before their parents); a member whose spawn never
  // went leaves without a record.
  make_room(c.waiting_despawns, s.client.despawns.size(), kDespawnFloor);
  for (std::uint32_t i = 0; i < s.client.despawns.size(); ++i) {
    const Member* m = find(c.members, despawned[i].entity);
    if (m == nullptr || m->pending) continue;
    if (!c.unresolved.empty()) forget_referrer(c, m->id);
    c.waiting_despawns.push_back(despawned[i]);
    w.despawn_stamp[despawned[i].entity.index] = stamp;
  }
  // Most sends find the set as the table holds it, or changed in a few places: the runs the
  // table already holds are copied whole.
  const std::size_t held = c.members.size();
  std::size_t kept = 0;
  while (kept < held && kept < set_size && c.members[kept].id == set[kept]) ++kept;
  c.merge.clear();
  make_room(c.merge, set_size, kMemberFloor);  // every send, so the table's two buffers grow in step
  if (def.delta_updates && c.baselines.capacity() < c.merge.capacity()) {
    // Baselines are at most the members held: their storage grows with the table's.
    const std::size_t room = c.merge.capacity();
    c.baselines.reserve(room);
    c.free_slots.reserve(room);
    c.baseline_bytes.reserve(room * 2 * def.delta_state_bytes);
  }
  // What waits to resolve is at most each member's references in its two parts. Its storage grows
  // with the table's, with room for up to 4 references a payload (20 bytes an entry, twice);
  // states that leave more null than that grow it further as needed.
  if (const std::size_t room = 2 * std::min<std::size_t>(reference_width, 4) * c.merge.capacity();
      !c.unresolved.empty() && c.unresolved.capacity() < room) {
    c.unresolved.reserve(room);
    c.waiting_on.reserve(room);
  }
  if (!c.unresolved.empty() && c.refresh_due.capacity() < c.merge.capacity()) {
    c.refresh_due.reserve(c.merge.capacity());  // at most the members
  }
  if (kept == held && kept == set_size) return;
  c.merge.insert(c.merge.end(), c.members.begin(), c.members.begin() + static_cast<std::ptrdiff_t>(kept));
  std::size_t old = kept;
  for (std::size_t i = kept; i < set_size;) {
    const EntityId e = set[i];
    while (old < held && c.members[old].id.index < e.index) leave_unrecorded(s, c.members[old++]);
    if (old < held && c.members[old].id.index == e.index && c.members[old].id != e) {
      leave_unrecorded(s, c.members[old++]);
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
    if (w.spawn_stamp[e.index] == stamp) {
      m.reason = static_cast<SpawnReason>(w.spawn_reason[e.index] & ~kCreatedBit);
      m.created = (w.spawn_reason[e.index] & kCreatedBit) != 0;
    }
    c.merge.push_back(m);
    ++s.joined;
    ++i;
  }
  while (old < held) leave_unrecorded(s, c.members[old++]);
  c.members.swap(c.merge);
}

/// A member gone from the set without a record of this tick (a tick without a send in between)
/// still leaves the client: the table follows the set, whatever was missed.
void ReplicatorImpl::leave_unrecorded(ClientSend& s, const Member& m) {
  ClientState& c = s.c;
  if (def.delta_updates && !m.pending) drop_baseline(c, m.id);
  if (!m.pending && !c.unresolved.empty()) forget_referrer(c, m.id);
  if (m.pending || s.w.despawn_stamp[m.id.index] == s.w.stamp) return;
  // Gone with its generation's slot not yet reused: withdrawn or destroyed as it was; reused: it
  // was destroyed or withdrawn ticks ago, told as destroyed.
  const bool same = view.generation[m.id.index] == m.id.generation;
  const bool left = same && (view.alive[m.id.index] || view.cold[m.id.index].withdrawn);
  make_room(c.waiting_despawns, 1, kDespawnFloor);
  c.waiting_despawns.push_back({m.id, left ? DespawnReason::left : DespawnReason::destroyed});
}

/// Despawns always go, in the World's order, as far as the reliable window allows.
void ReplicatorImpl::send_despawns(ClientSend& s) {
  ClientState& c = s.c;
  std::size_t despawns_sent = 0;
  for (; despawns_sent < c.waiting_despawns.size() && window_open(s); ++despawns_sent) {
    const DespawnRecord& d = c.waiting_despawns[despawns_sent];
    const std::uint32_t id = enqueue(
        s, {.type = RecordType::despawn, .reason = static_cast<std::uint8_t>(d.reason), .entity = d.entity},
        {});
    s.budget_used += write_despawn(s, id, d.entity, d.reason);
    ++s.w.stats.despawns;
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
  std::vector<EntryOrder>& entry_order = s.w.entry_order;
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
    entry_order.push_back({critical ? 0u : 1u, d, view.cold[m.id.index].depth, m.id.index, i, view.scale[r]});
  }
  std::sort(entry_order.begin(), entry_order.end());
  make_room(s.w.named, entry_order.size());
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
    Payload payload;
    if (!full_payload(s.w, m.id, payload)) continue;
    const std::size_t size = spawn_record_bytes(c.next_reliable, m.id, payload.bytes.size());
    if (o.critical != 0 && s.entry_used != 0 && s.entry_used + size > def.entry_budget_bytes) continue;
    const std::span<const std::uint8_t> bytes = own_bytes(s, m.id, payload);
    const std::uint32_t id = enqueue(s,
                                     {.type = RecordType::spawn,
                                      .reason = static_cast<std::uint8_t>(m.reason),
                                      .created = m.created,
                                      .entity = m.id},
                                     bytes);
    s.entry_used += write_spawn(s, id, m.id, m.reason, m.created, bytes, 0);
    note_references(s, m.id, StatePart::full, true);
    if (!s.unreliable) s.w.named.push_back(m.id);  // unreliable: once the client acknowledges it
    m.pending = false;
    m.acc = 0.0f;
    SendStats& counts = s.w.stats;
    if (s.now > m.since) {
      ++counts.spawns_delayed;
      counts.spawn_delay_sends += s.now - m.since;
    }
    m.since = s.now;
    ++counts.spawns;
    if (def.development && s.settled && s.client.culls && (m.reason == SpawnReason::near) &&
        born_send[m.id.index] < s.now && o.distance <= promise * o.scale) {
      make_room(s.w.violations, 1);
      s.w.violations.push_back({c.id.index, 0, {c.id, m.id, o.distance, promise}});
      ++counts.promise_violations;
    }
  }
}

/// What waits after the send (pending, catching up, longest wait), then the client's packets
/// stated and counted: each carries the reliable ids assigned and the interest status as of the
/// end of the send. A send with nothing else to say still writes one packet when the status
/// changed (or, unreliable, until an ack shows the client has it), so the client's count of
/// entities on their way reaches 0 when the server's does.
void ReplicatorImpl::finish_client(ClientSend& s) {
  ClientState& c = s.c;
  SendStats& counts = s.w.stats;
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
  counts.pending += c.pending;
  counts.max_pending = std::max(counts.max_pending, c.pending);
  counts.longest_wait = std::max(counts.longest_wait, c.longest_wait);

  InterestStatus status;
  status.culling = s.client.culls;
  status.radius = s.client.culls ? def.promise_fraction * s.client.enter : 0.0f;
  status.pending = c.pending;
  const bool changed = !c.status_known || status != c.status_sent;
  // acked_sequence > 0: an ack of "latest 0" may mean that nothing arrived.
  const bool unconfirmed = s.unreliable && !(c.acked_sequence > 0 && c.acked_sequence >= c.status_sequence);
  if (c.packet_offsets.empty() && (changed || unconfirmed)) {
    room_for(s, 0);
    close_packet(s);
  }
  if (changed && !c.packet_offsets.empty()) {
    c.status_sent = status;
    c.status_known = true;
    c.status_sequence = c.sequence - static_cast<std::uint32_t>(c.packet_offsets.size() / 2);
  }

  c.packets.clear();
  make_room(c.packets, c.packet_offsets.size() / 2);
  for (std::size_t p = 0; p + 1 < c.packet_offsets.size(); p += 2) {
    std::uint8_t* const packet = c.out.data() + c.packet_offsets[p];
    put_u32(packet + kReliableNextOffset, c.next_reliable);
    // The header went out before the send knew its status (as reliable_next): stated here.
    if (status.culling) packet[kFlagsOffset] |= kFlagCulling;
    put_u32(packet + kPendingOffset, status.pending);
    put_u32(packet + kRadiusOffset, bit_cast<std::uint32_t>(status.radius));
    const std::uint32_t size = c.packet_offsets[p + 1] - c.packet_offsets[p];
    c.packets.emplace_back(packet, size);
    c.bytes += size;
    counts.bytes += size;
  }
  c.packets_sent += c.packets.size();
  counts.packets += c.packets.size();
}

}  // namespace sightline
