// Payloads: each entity's state serialized once per send and part, and shared by every client's
// packets (or, without share_payloads, measured and written per record, as a per-client
// serializer does).
#include <string>

#include "format_value.h"
#include "replicator_impl.h"

namespace sightline {

void ReplicatorImpl::note_error(EntityId e, StatePart part, const char* why) {
  ++stats.serialize_errors;
  if (!first_error.ok()) return;
  first_error = {ErrorCode::invalid_argument, "serializing the " +
                                                  std::string(part == StatePart::full ? "full" : "update") +
                                                  " state of " + describe(e) + " failed: " + why};
}

bool ReplicatorImpl::payload(EntityId e, StatePart part, std::span<const std::uint8_t>& bytes) {
  const int p = static_cast<int>(part);
  const CachedPayload& cached = cache[p][e.index];
  if (def.share_payloads && cached.send == sends + 1) {
    bytes = {payloads.data() + cached.begin, cached.size};
    return true;
  }
  if (!def.share_payloads) {
    // What a per-client serializer does: measure to see what the record costs, then write.
    Stream measure = Stream::measurer();
    ++stats.serialize_calls;
    if (!def.serialize(measure, e, part, def.serialize_context) || !measure.ok()) {
      note_error(e, part, measure.ok() ? "the serializer returned false" : measure.error());
      return false;
    }
    stats.serialized_bytes += measure.bytes();
  }
  // Written aside and appended: growing `payloads` by max_payload would zero it on every call.
  Stream s = Stream::writer({writing.data(), max_payload});
  ++stats.serialize_calls;
  const bool ok = def.serialize(s, e, part, def.serialize_context) && s.ok();
  if (!ok) {
    note_error(e, part,
               s.ok() ? "the serializer returned false"
                      : (std::string(s.error()) + " (payloads are at most " + std::to_string(max_payload) +
                         " bytes at this packet_bytes)")
                            .c_str());
    return false;
  }
  const std::size_t begin = payloads.size();
  make_room(payloads, max_payload);
  payloads.insert(payloads.end(), writing.begin(), writing.begin() + static_cast<std::ptrdiff_t>(s.bytes()));
  stats.serialized_bytes += s.bytes();
  cache[p][e.index] = {sends + 1, static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(s.bytes())};
  bytes = {payloads.data() + begin, s.bytes()};
  return true;
}

}  // namespace sightline
