// Messages: the game's bytes for one client, a key's subscribers or a space's clients, queued
// between sends, put in each recipient's outbox when a send starts, and written from there in
// order, reliably, while the budget lasts.
#include <string>

#include "replicator_impl.h"
#include "sightline/interest_keys.h"

namespace sightline {

Status ReplicatorImpl::queue_message(const QueuedMessage& m, std::span<const std::uint8_t> payload) {
  if (payload.size() > max_message_payload) {
    return {ErrorCode::invalid_argument, "message of " + std::to_string(payload.size()) +
                                             " bytes: a packet of " + std::to_string(def.packet_bytes) +
                                             " bytes carries " + std::to_string(max_message_payload) +
                                             " at most (ReplicatorDef::packet_bytes)"};
  }
  QueuedMessage queued = m;
  queued.begin = static_cast<std::uint32_t>(message_store.size());
  queued.size = static_cast<std::uint32_t>(payload.size());
  message_store.insert(message_store.end(), payload.begin(), payload.end());
  messages.push_back(queued);
  return {};
}

/// Each queued message into the outbox of every live client it is for, in the order queued. A
/// client whose outbox would pass message_queue_bytes does not get it (counted).
void ReplicatorImpl::fan_out_messages() {
  messages_dropped = 0;
  for (const QueuedMessage& m : messages) {
    const std::span<const std::uint8_t> payload{message_store.data() + m.begin, m.size};
    for (const ClientId id : view.live_clients) {
      bool to = false;
      switch (m.to) {
        case MessageTo::client: to = id.index == m.slot && id.generation == m.generation; break;
        case MessageTo::key: to = world.admits(id.index, m.key); break;
        case MessageTo::space: to = world.space_slot(id.index) == m.slot; break;
      }
      if (!to) continue;
      ClientState& c = clients[id.index];
      if (c.outbox.size() + payload.size() > def.message_queue_bytes) {
        ++messages_dropped;
        continue;
      }
      c.outbox.insert(c.outbox.end(), payload.begin(), payload.end());
      c.outbox_sizes.push_back(m.size);
    }
  }
  messages.clear();
  message_store.clear();
}

/// The client's waiting messages, oldest first, while the budget lasts (the first of a send goes
/// whatever is left, so a message is never starved) and the reliable window is open.
void ReplicatorImpl::send_messages(ClientSend& s) {
  ClientState& c = s.c;
  std::size_t sent = 0;
  std::size_t bytes = 0;
  for (; sent < c.outbox_sizes.size() && window_open(s); ++sent) {
    const std::span<const std::uint8_t> payload{c.outbox.data() + bytes, c.outbox_sizes[sent]};
    const std::size_t size = message_record_bytes(c.next_reliable, payload.size());
    if (sent != 0 && s.budget_used + size > def.budget_bytes) break;
    Reliable r;
    r.type = RecordType::message;
    const std::uint32_t id = enqueue(s, r, payload);
    write_message(s, id, payload);
    s.budget_used += size;
    s.w.stats.message_bytes += size;
    ++s.w.stats.messages;
    bytes += payload.size();
  }
  c.outbox.erase(c.outbox.begin(), c.outbox.begin() + static_cast<std::ptrdiff_t>(bytes));
  c.outbox_sizes.erase(c.outbox_sizes.begin(), c.outbox_sizes.begin() + static_cast<std::ptrdiff_t>(sent));
  s.w.stats.messages_waiting += c.outbox_sizes.size();
}

}  // namespace sightline
