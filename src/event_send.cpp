// Events on the wire: each event of the tick written once a send, then each client's share of
// them framed into its packets after its spawns, reliable ones through the reliable queue.
#include <array>
#include <string>

#include "format_value.h"
#include "replicator_impl.h"

namespace sightline {

/// Every event's payload, serially and in emit order, before the clients' sends read them.
void ReplicatorImpl::serialize_events() {
  event_bytes.clear();
  event_offsets.clear();
  event_written.clear();
  event_error = {};
  event_failures = 0;
  event_offsets.push_back(0);
  for (std::size_t i = 0; i < view.events.size(); ++i) {
    const EventDef& event = view.events[i];
    const std::size_t begin = event_bytes.size();
    event_bytes.resize(begin + max_event_payload);
    // Every recipient gets the same bytes, so they may name no entity: one that some recipient
    // does not hold would reach it. The references are noted to refuse them.
    std::array<EntityReference, kMaxReferences> references;
    Stream s = Stream::writer({event_bytes.data() + begin, max_event_payload}, references);
    bool ok = false;
    const char* refused = nullptr;
    if (def.serialize_event != nullptr) {
      ok = def.serialize_event(s, event, def.event_context) && s.ok();
      if (ok && !s.references().empty()) {
        ok = false;
        refused =
            "its payload names an entity (Stream::serialize_entity), which would reach recipients that "
            "do not hold it: name the entity as the event's subject";
      }
    } else {
      auto low = static_cast<std::uint32_t>(event.user_data);
      auto high = static_cast<std::uint32_t>(event.user_data >> 32);
      ok = s.serialize_bits(low, 32) && s.serialize_bits(high, 32);
    }
    event_bytes.resize(ok ? begin + s.bytes() : begin);
    event_written.push_back(ok ? 1 : 0);
    event_offsets.push_back(static_cast<std::uint32_t>(event_bytes.size()));
    if (!ok) {
      ++event_failures;
      if (event_error.ok()) {
        event_error = {
            ErrorCode::invalid_argument,
            "serializing event " + std::to_string(i) + " failed: " +
                (refused != nullptr ? std::string(refused) + ", " + describe(s.references()[0].entity)
                 : s.ok()           ? std::string("the serializer returned false")
                                    : std::string(s.error()) + " (event payloads are at most " +
                                std::to_string(max_event_payload) + " bytes at this packet_bytes)")};
      }
    }
  }
}

/// The client's events of the tick, in emit order. The World settled each subject against the
/// client's set; a member whose spawn has not gone yet is absent for the client too.
void ReplicatorImpl::send_events(ClientSend& s) {
  ClientState& c = s.c;
  for (const EventRecord& record : s.client.events) {
    if (event_written[record.event] == 0) continue;
    const EventDef& event = view.events[record.event];
    const EventClassDef& event_class = world.event_class(event.event_class.index);
    Reliable r;
    r.type = RecordType::event;
    r.entity = record.subject;
    r.event_class = event.event_class.index;
    r.x = event.x;
    r.z = event.z;
    r.state_tick = s.tick;
    if (!r.entity.is_null() && r.entity.index != s.client.viewer) {
      const Member* m = find(c.members, r.entity);
      if (m != nullptr && m->pending) {
        if (event_class.when_absent == AbsentSubject::drop) continue;
        if (event_class.when_absent == AbsentSubject::null_subject) r.entity = {};
      }
    }
    const std::span<const std::uint8_t> payload{
        event_bytes.data() + event_offsets[record.event],
        event_offsets[record.event + 1] - event_offsets[record.event]};
    if (event_class.reliable) {
      if (!window_open(s)) {
        ++s.w.stats.events_dropped;
        continue;
      }
      r.id = enqueue(s, r, payload);
    }
    const std::size_t size = write_event(s, event_class.reliable, r, payload);
    s.budget_used += size;
    s.w.stats.event_bytes += size;
    ++s.w.stats.events;
  }
}

}  // namespace sightline
