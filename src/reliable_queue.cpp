// The reliable queue of unreliable delivery: spawns and despawns kept, by reliable id, until an
// ack covers them, and resent meanwhile.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "format_value.h"
#include "replicator_impl.h"

namespace sightline {

std::uint32_t ReplicatorImpl::enqueue(ClientSend& s, Reliable r, std::span<const std::uint8_t> bytes) {
  ClientState& c = s.c;
  r.id = c.next_reliable;
  r.last_sent = s.now;
  if (s.unreliable) {
    r.payload_begin = static_cast<std::uint32_t>(c.store.size());
    r.payload_size = static_cast<std::uint32_t>(bytes.size());
    r.state_tick = s.tick;
    make_room(c.store, bytes.size(), kStoreFloor);
    c.store.insert(c.store.end(), bytes.begin(), bytes.end());
    make_room(c.queue, 1, kQueueFloor);
    // The spawns not yet acknowledged are some of the queue: their storage grows with its.
    if (c.unconfirmed.capacity() < c.queue.capacity()) c.unconfirmed.reserve(c.queue.capacity());
    c.queue.push_back(r);
    if (r.type == RecordType::spawn) note_unconfirmed(c, r.entity, r.id);
  }
  return c.next_reliable++;
}

/// Resends (unreliable): what an ack has not covered within the resend interval: resend_sends,
/// or the round trip measured from acks and a margin, whichever is longer, so a slow link is
/// not flooded with copies that were never lost.
void ReplicatorImpl::resend_reliable(ClientSend& s) {
  ClientState& c = s.c;
  const std::uint64_t resend_after = std::max<std::uint64_t>(
      def.resend_sends, static_cast<std::uint64_t>(std::ceil(c.round_trip * 1.25f)) + 1);
  for (std::size_t q = c.head; s.unreliable && q < c.queue.size(); ++q) {
    Reliable& r = c.queue[q];
    if (s.now - r.last_sent < resend_after) continue;
    r.last_sent = s.now;
    ++s.w.stats.resends;
    if (r.type == RecordType::despawn) {
      s.budget_used += write_despawn(s, r.id, r.entity, static_cast<DespawnReason>(r.reason));
      continue;
    }
    if (r.type == RecordType::message) {
      const std::size_t size = write_message(s, r.id, {c.store.data() + r.payload_begin, r.payload_size});
      s.budget_used += size;
      s.w.stats.message_bytes += size;
      continue;
    }
    if (r.type == RecordType::event) {
      const std::size_t size = write_event(s, true, r, {c.store.data() + r.payload_begin, r.payload_size});
      s.budget_used += size;
      s.w.stats.event_bytes += size;
      continue;
    }
    // A spawn or refresh: fresh state while the client still holds the entity; otherwise the
    // state it first went with, so nothing reaches the client from a time it was not entitled to.
    std::span<const std::uint8_t> bytes{c.store.data() + r.payload_begin, r.payload_size};
    std::uint32_t age = s.tick - r.state_tick;
    const Member* m = find(c.members, r.entity);
    Payload fresh;
    const bool current = m != nullptr && !m->pending && full_payload(s.w, r.entity, fresh);
    if (current) {
      bytes = own_bytes(s, r.entity, fresh);
      age = 0;
    }
    if (r.type == RecordType::refresh) {
      s.budget_used += write_refresh(s, r.id, r.entity, bytes, age);
    } else {
      s.entry_used +=
          write_spawn(s, r.id, r.entity, static_cast<SpawnReason>(r.reason), r.created, bytes, age);
    }
    // The client may apply any copy of it: what this one leaves null waits too, and nothing
    // the first copy left null is forgotten.
    if (current) note_references(s, r.entity, StatePart::full, false);
  }
}

Status ReplicatorImpl::receive_ack(ClientState& c, const AckPacket& ack) {
  if (ack.reliable_applied > c.next_reliable) {
    return {ErrorCode::invalid_argument, "ack from " + describe(c.id) + " covers reliable id " +
                                             std::to_string(ack.reliable_applied) + ", but only " +
                                             std::to_string(c.next_reliable) + " were sent"};
  }
  // A round-trip sample from the newest packet the ack names, if that packet is still on record.
  const std::size_t at = ack.latest_sequence % kSentWindow;
  if (ack.latest_sequence < c.sequence) c.acked_sequence = std::max(c.acked_sequence, ack.latest_sequence);
  if (ack.latest_sequence < c.sequence && c.packet_sequence[at] == ack.latest_sequence) {
    const auto sample = static_cast<float>(sends - c.packet_send[at]);
    c.round_trip = c.measured ? 0.875f * c.round_trip + 0.125f * sample : sample;
    c.measured = true;
  }
  // The packets the client says arrived with every state it was asked to keep (delta updates).
  for (std::uint32_t i = 0; i < 32 && i <= ack.latest_sequence; ++i) {
    const std::uint32_t sequence = ack.latest_sequence - i;
    if ((ack.received >> i & 1u) == 0 || sequence >= c.sequence) continue;
    if (c.packet_sequence[sequence % kSentWindow] == sequence) c.packet_received[sequence % kSentWindow] = 1;
  }
  if (ack.reliable_applied <= c.acked) return {};
  c.acked = ack.reliable_applied;
  while (c.head < c.queue.size() && c.queue[c.head].id < c.acked) ++c.head;
  if (c.head == c.queue.size()) {
    c.queue.clear();
    c.store.clear();
    c.head = 0;
  } else if (c.head >= 64 && c.head * 2 >= c.queue.size()) {
    const std::uint32_t cut = c.queue[c.head].payload_begin;
    c.queue.erase(c.queue.begin(), c.queue.begin() + static_cast<std::ptrdiff_t>(c.head));
    c.head = 0;
    c.store.erase(c.store.begin(), c.store.begin() + cut);
    for (Reliable& q : c.queue) q.payload_begin -= cut;
  }
  return {};
}

}  // namespace sightline
