// Payloads: each entity's state serialized once per send and part, and shared by every client's
// packets, an update framed once as its whole record (or, without share_payloads, measured and
// written per record, as a per-client serializer does). Clients are sent on several workers at
// once: the first worker to need a payload claims it and writes it into its own arena, and any
// other that needs it meanwhile waits for it, so each payload is serialized once, whatever the
// split.
#include <algorithm>
#include <array>
#include <string>
#include <thread>

#include "format_value.h"
#include "replicator_impl.h"
#include "sightline_assert.h"

namespace sightline {

void ReplicatorImpl::note_error(SendWorker& w, EntityId e, StatePart part, const char* why) {
  ++w.stats.serialize_errors;
  // Each worker keeps the lowest failure it met (failure_key); send() reports the lowest of all.
  const std::uint64_t key = failure_key(e, part);
  if (!w.error.ok() && w.error_key <= key) return;
  w.error_key = key;
  w.error = {ErrorCode::invalid_argument, "serializing the " +
                                              std::string(part == StatePart::full ? "full" : "update") +
                                              " state of " + describe(e) + " failed: " + why};
}

bool ReplicatorImpl::serialize(SendWorker& w, EntityId e, StatePart part, Payload& payload) {
  std::uint8_t* const at = w.payloads.room(max_payload);
  std::array<EntityReference, kMaxReferences> references;
  Stream s = Stream::writer({at, max_payload}, references);
  const std::span<const std::uint8_t> given = def.payload_source != nullptr
                                                  ? def.payload_source(e, part, def.payload_source_context)
                                                  : std::span<const std::uint8_t>{};
  std::size_t written = given.size();
  if (!given.empty()) {
    if (given.size() > max_payload) {
      note_error(w, e, part,
                 ("the payload source gave " + std::to_string(given.size()) +
                  " bytes (payloads are at most " + std::to_string(max_payload) + " bytes)")
                     .c_str());
      return false;
    }
    std::copy(given.begin(), given.end(), at);
    ++w.stats.sourced_payloads;
  } else {
    ++w.stats.serialize_calls;
    if (!def.serialize(s, e, part, def.serialize_context) || !s.ok()) {
      note_error(w, e, part,
                 s.ok() ? "the serializer returned false"
                        : (std::string(s.error()) + " (payloads are at most " + std::to_string(max_payload) +
                           " bytes and " + std::to_string(kMaxReferences) + " entity references)")
                              .c_str());
      return false;
    }
    written = s.bytes();
    w.stats.serialized_bytes += written;
  }
  w.payloads.take(written);
  payload.bytes = {at, written};
  std::size_t framing = 0;
  if (part == StatePart::update) {
    const std::size_t bytes = update_record_bytes(e, payload.bytes.size());
    std::uint8_t* const record = w.payloads.room(bytes);
    const std::size_t size = encode_update_record({record, bytes}, e, payload.bytes);
    SIGHTLINE_ASSERT(size != 0);
    w.payloads.take(size);
    framing = size - payload.bytes.size();
    payload.bytes = {record, size};
  }
  payload.references = {};
  if (const std::span<const EntityReference> found = s.references(); !found.empty()) {
    EntityReference* const kept = w.references.room(found.size());
    for (std::size_t i = 0; i < found.size(); ++i)
      kept[i] = {found[i].bit + static_cast<std::uint32_t>(framing * 8), found[i].entity};
    w.references.take(found.size());
    w.most_references = std::max(w.most_references, static_cast<std::uint32_t>(found.size()));
    payload.references = {kept, found.size()};
  }
  return true;
}

bool ReplicatorImpl::first_cached(SendWorker& w, EntityId e, StatePart part, Payload& payload) {
  if (!def.share_payloads) {
    // What a per-client serializer does: measure to see what the record costs, then write (a
    // payload source's bytes have their size already).
    if (def.payload_source == nullptr) {
      Stream measure = Stream::measurer();
      ++w.stats.serialize_calls;
      if (!def.serialize(measure, e, part, def.serialize_context) || !measure.ok()) {
        note_error(w, e, part, measure.ok() ? "the serializer returned false" : measure.error());
        return false;
      }
      w.stats.serialized_bytes += measure.bytes();
    }
    return serialize(w, e, part, payload);
  }
  CachedPayload& cached = cache[static_cast<int>(part)][e.index];
  const std::uint64_t claimed = 2 * (sends + 1);
  const std::uint64_t ready = claimed + 1;
  std::uint64_t seen = cached.load_state();
  if (seen < claimed && cached.claim_state(seen, claimed)) {
    Payload written;
    const bool ok = serialize(w, e, part, written);
    cached.bytes = ok ? written.bytes.data() : nullptr;
    cached.size = static_cast<std::uint16_t>(written.bytes.size());
    cached.reference_count = static_cast<std::uint16_t>(written.references.size());
    if (!written.references.empty()) {
      cached.set_references(written.references.data());
    } else if (ok && written.bytes.size() <= cached.small.size()) {
      cached.small = {};
      std::copy(written.bytes.begin(), written.bytes.end(), cached.small.begin());
      cached.bytes = cached.small.data();
      written.bytes = {cached.bytes, written.bytes.size()};
    }
    cached.publish_state(ready);
    payload = written;
    return ok;
  }
  // Another worker has it, written or being written.
  while (seen != ready) {
    std::this_thread::yield();
    seen = cached.load_state();
  }
  if (cached.bytes == nullptr) return false;
  payload.bytes = {cached.bytes, cached.size};
  payload.references = cached.references();
  return true;
}

}  // namespace sightline
