// Entity references (Stream::serialize_entity): a payload is serialized once a send and shared,
// so each client's copy makes null every reference to an entity that client was not sent; a
// member whose copy left one null is sent whole again (a refresh) once the client holds it.
#include <algorithm>
#include <cstring>

#include "replicator_impl.h"
#include "sightline_assert.h"

namespace sightline {
namespace {

/// The order of ClientState::unresolved.
bool unresolved_before(const Unresolved& a, const Unresolved& b) noexcept {
  if (a.referrer.index != b.referrer.index) return a.referrer.index < b.referrer.index;
  if (a.part != b.part) return a.part < b.part;
  if (a.target.index != b.target.index) return a.target.index < b.target.index;
  return a.target.generation < b.target.generation;
}

/// Clears the kEntityReferenceBits bits of `bytes` from bit `at` on: a null reference.
void clear_reference(std::uint8_t* bytes, std::uint32_t at) noexcept {
  const std::uint32_t end = at + kEntityReferenceBits;
  while (at < end) {
    if (at % 8 == 0 && end - at >= 8) {
      bytes[at / 8] = 0;
      at += 8;
    } else {
      bytes[at / 8] = static_cast<std::uint8_t>(bytes[at / 8] & ~(1u << (at % 8)));
      ++at;
    }
  }
}

}  // namespace

bool ReplicatorImpl::names(const ClientSend& s, EntityId target) const noexcept {
  if (target.index == s.client.viewer) return view.generation[target.index] == target.generation;
  const auto& members = s.c.members;
  const auto at = std::lower_bound(members.begin(), members.end(), target.index,
                                   [](const Member& m, std::uint32_t index) { return m.id.index < index; });
  if (at == members.end() || at->id != target || at->pending) return false;
  if (!s.unreliable) return true;
  // Unreliable: the client may not have its spawn yet.
  const auto& unconfirmed = s.c.unconfirmed;
  const auto spawn = std::lower_bound(
      unconfirmed.begin(), unconfirmed.end(), target.index,
      [](const std::pair<EntityId, std::uint32_t>& u, std::uint32_t index) { return u.first.index < index; });
  return spawn == unconfirmed.end() || spawn->first != target;
}

void ReplicatorImpl::note_unconfirmed(ClientState& c, EntityId e, std::uint32_t id) {
  auto at = std::lower_bound(
      c.unconfirmed.begin(), c.unconfirmed.end(), e.index,
      [](const std::pair<EntityId, std::uint32_t>& u, std::uint32_t index) { return u.first.index < index; });
  if (at != c.unconfirmed.end() && at->first.index == e.index) {
    *at = {e, id};  // an earlier entity of the slot is no member: only the newest counts
    return;
  }
  c.unconfirmed.insert(at, {e, id});  // enqueue() reserved room for it
}

void ReplicatorImpl::prune_unconfirmed(ClientState& c) {
  std::erase_if(c.unconfirmed,
                [&](const std::pair<EntityId, std::uint32_t>& u) { return u.second < c.acked; });
}

std::span<const std::uint8_t> ReplicatorImpl::own_bytes(ClientSend& s, EntityId referrer,
                                                        const Payload& payload) {
  SendWorker& w = s.w;
  w.null_count = 0;
  bool copied = false;
  for (const EntityReference& r : payload.references) {
    if (r.entity == referrer || names(s, r.entity)) continue;
    if (!copied) {
      SIGHTLINE_ASSERT(payload.bytes.size() <= w.own.size());
      std::memcpy(w.own.data(), payload.bytes.data(), payload.bytes.size());
      copied = true;
    }
    clear_reference(w.own.data(), r.bit);
    w.nulls[w.null_count++] = r.entity;
  }
  return copied ? std::span<const std::uint8_t>(w.own.data(), payload.bytes.size()) : payload.bytes;
}

void ReplicatorImpl::note_references(ClientSend& s, EntityId referrer, StatePart part, bool supersedes) {
  ClientState& c = s.c;
  SendWorker& w = s.w;
  std::vector<Unresolved>& list = c.unresolved;
  if (supersedes && !list.empty()) {
    // The full part carries every field: it supersedes what waited for either part.
    const auto first = std::lower_bound(list.begin(), list.end(),
                                        Unresolved{{referrer.index, 0}, part, {0, 0}}, unresolved_before);
    auto last = first;
    while (last != list.end() && last->referrer.index == referrer.index &&
           (part == StatePart::full || last->part == part)) {
      ++last;
    }
    list.erase(first, last);
  }
  make_room(list, w.null_count);  // before the searches: no insert below moves the storage
  for (std::size_t i = 0; i < w.null_count; ++i) {
    const Unresolved u{referrer, part, w.nulls[i]};
    const auto at = std::lower_bound(list.begin(), list.end(), u, unresolved_before);
    if (at != list.end() && !unresolved_before(u, *at) && at->referrer == referrer) continue;
    list.insert(at, u);
  }
  w.null_count = 0;
}

/// Each member a reference of which waits for an entity the client now holds goes whole again,
/// after the spawns, in order of index; what waits for a member that left goes with it.
void ReplicatorImpl::send_refreshes(ClientSend& s) {
  ClientState& c = s.c;
  if (c.unresolved.empty()) return;
  std::vector<EntityId>& refresh = s.w.refresh;
  refresh.clear();
  if (refresh.capacity() < c.unresolved.capacity()) refresh.reserve(c.unresolved.capacity());
  std::size_t kept = 0;
  for (const Unresolved& u : c.unresolved) {
    const Member* m = find(c.members, u.referrer);
    if (m == nullptr || m->pending) continue;
    if (names(s, u.target) && (refresh.empty() || refresh.back() != u.referrer))
      refresh.push_back(u.referrer);
    c.unresolved[kept++] = u;
  }
  c.unresolved.resize(kept);
  for (const EntityId r : refresh) {
    if (!window_open(s)) break;
    Payload payload;
    if (!full_payload(s.w, r, payload)) continue;
    const std::span<const std::uint8_t> bytes = own_bytes(s, r, payload);
    const std::uint32_t id = enqueue(s, {.type = RecordType::refresh, .entity = r}, bytes);
    s.budget_used += write_refresh(s, id, r, bytes, 0);
    note_references(s, r, StatePart::full, true);
    ++s.w.stats.refreshes;
  }
}

}  // namespace sightline
