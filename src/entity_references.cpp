// Entity references (Stream::serialize_entity): a payload is serialized once a send and shared,
// so each client's copy makes null every reference to an entity that client was not sent; a
// member whose copy left one null is sent whole again (a refresh) once the client holds it.
#include <algorithm>
#include <cstring>

#include "replicator_impl.h"
#include "sightline_assert.h"

namespace sightline {
namespace {

/// The order of ClientState::unresolved: by referrer, part, target.
bool unresolved_before(const Unresolved& a, const Unresolved& b) noexcept {
  if (a.referrer.index != b.referrer.index) return a.referrer.index < b.referrer.index;
  if (a.part != b.part) return a.part < b.part;
  if (a.target.index != b.target.index) return a.target.index < b.target.index;
  return a.target.generation < b.target.generation;
}

/// The order of ClientState::waiting_on: by target, referrer, part.
bool waiting_before(const Unresolved& a, const Unresolved& b) noexcept {
  if (a.target.index != b.target.index) return a.target.index < b.target.index;
  if (a.target.generation != b.target.generation) return a.target.generation < b.target.generation;
  if (a.referrer.index != b.referrer.index) return a.referrer.index < b.referrer.index;
  return a.part < b.part;
}

bool by_index(EntityId a, EntityId b) noexcept {
  return a.index != b.index ? a.index < b.index : a.generation < b.generation;
}

/// Clears the kEntityReferenceBits bits of `bytes` from bit `at` on: a null reference. They span 8
/// bytes from at / 8, and a ninth where `at` is not on a byte.
void clear_reference(std::uint8_t* bytes, std::uint32_t at) noexcept {
  static_assert(kEntityReferenceBits == 64);
  std::uint8_t* const p = bytes + at / 8;
  const unsigned shift = at % 8;
  const auto below = static_cast<std::uint8_t>((1u << shift) - 1u);  // bits before the reference
  p[0] = static_cast<std::uint8_t>(p[0] & below);
  std::memset(p + 1, 0, 7);
  if (shift != 0) p[8] = static_cast<std::uint8_t>(p[8] & ~below);
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

void ReplicatorImpl::prune_unconfirmed(ClientSend& s) {
  ClientState& c = s.c;
  std::erase_if(c.unconfirmed, [&](const std::pair<EntityId, std::uint32_t>& u) {
    if (u.second >= c.acked) return false;
    s.w.named.push_back(u.first);  // acknowledged since the last send: named from now on
    return true;
  });
}

std::span<const std::uint8_t> ReplicatorImpl::own_copy(ClientSend& s, EntityId referrer,
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

void ReplicatorImpl::erase_unresolved(ClientState& c, std::vector<Unresolved>::iterator first,
                                      std::vector<Unresolved>::iterator last) {
  for (auto u = first; u != last; ++u) {
    const auto at = std::lower_bound(c.waiting_on.begin(), c.waiting_on.end(), *u, waiting_before);
    SIGHTLINE_ASSERT(at != c.waiting_on.end() && at->referrer == u->referrer && at->target == u->target);
    c.waiting_on.erase(at);
  }
  c.unresolved.erase(first, last);
}

void ReplicatorImpl::forget_referrer(ClientState& c, EntityId referrer) {
  const auto first =
      std::lower_bound(c.unresolved.begin(), c.unresolved.end(),
                       Unresolved{{referrer.index, 0}, StatePart::full, {0, 0}}, unresolved_before);
  auto last = first;
  while (last != c.unresolved.end() && last->referrer.index == referrer.index) ++last;
  erase_unresolved(c, first, last);
}

void ReplicatorImpl::note_references(ClientSend& s, EntityId referrer, StatePart part, bool supersedes) {
  ClientState& c = s.c;
  SendWorker& w = s.w;
  std::vector<Unresolved>& list = c.unresolved;
  // The new entries, in the list's order: a handful, sorted in place.
  Unresolved* const fresh = w.fresh.data();
  std::size_t count = 0;
  for (std::size_t i = 0; i < w.null_count; ++i) {
    const Unresolved u{referrer, part, w.nulls[i]};
    std::size_t at = count;
    while (at > 0 && unresolved_before(u, fresh[at - 1])) --at;
    if (at > 0 && !unresolved_before(fresh[at - 1], u)) continue;  // named twice
    for (std::size_t j = count; j > at; --j) fresh[j] = fresh[j - 1];
    fresh[at] = u;
    ++count;
  }
  w.null_count = 0;
  // Before the searches: no insert below moves the storage.
  make_room(list, count);
  make_room(c.waiting_on, count);
  const auto add = [&](const Unresolved& u) {
    c.waiting_on.insert(std::lower_bound(c.waiting_on.begin(), c.waiting_on.end(), u, waiting_before), u);
  };
  // The referrer's entries: those of this part, and (the full part carries every field, so it
  // supersedes both) those of the update part after them.
  auto first = std::lower_bound(list.begin(), list.end(), Unresolved{{referrer.index, 0}, part, {0, 0}},
                                unresolved_before);
  auto last = first;
  while (last != list.end() && last->referrer.index == referrer.index &&
         (part == StatePart::full || last->part == part)) {
    ++last;
  }
  if (!supersedes) {
    // Only adds: each new entry not there already.
    for (std::size_t i = 0; i < count; ++i) {
      const auto at = std::lower_bound(list.begin(), list.end(), fresh[i], unresolved_before);
      if (at != list.end() && !unresolved_before(fresh[i], *at) && at->referrer == referrer) continue;
      list.insert(at, fresh[i]);
      add(fresh[i]);
    }
    // Copies that name ever other entities (a client that does not acknowledge them, a reference
    // that changes) would grow the union without bound: past a limit, what waits goes, and the
    // member's full state goes again as soon as the window lets it, superseding every copy.
    first = std::lower_bound(list.begin(), list.end(), Unresolved{{referrer.index, 0}, part, {0, 0}},
                             unresolved_before);
    last = first;
    while (last != list.end() && last->referrer.index == referrer.index && last->part == part) ++last;
    if (static_cast<std::size_t>(last - first) > 2 * kMaxReferences) {
      erase_unresolved(c, first, last);
      if (std::find(c.refresh_due.begin(), c.refresh_due.end(), referrer) == c.refresh_due.end()) {
        make_room(c.refresh_due, 1);
        c.refresh_due.push_back(referrer);
      }
    }
    return;
  }
  // Most states leave the same references null as the last one: nothing to change.
  const auto same = [](const Unresolved& a, const Unresolved& b) {
    return a.referrer == b.referrer && a.part == b.part && a.target == b.target;
  };
  if (static_cast<std::size_t>(last - first) == count && std::equal(first, last, fresh, same)) return;
  const std::ptrdiff_t place = first - list.begin();
  erase_unresolved(c, first, last);
  list.insert(list.begin() + place, fresh, fresh + count);
  for (std::size_t i = 0; i < count; ++i) add(fresh[i]);
}

/// Each member a reference of which waits for an entity named to the client from this send on
/// (spawned, or its spawn acknowledged) goes whole again, after the spawns, in order of index.
void ReplicatorImpl::send_refreshes(ClientSend& s) {
  ClientState& c = s.c;
  std::vector<EntityId>& named = s.w.named;
  if (c.refresh_due.empty() && (c.unresolved.empty() || named.empty())) return;
  std::vector<EntityId>& refresh = s.w.refresh;
  refresh.clear();
  const std::size_t room = c.unresolved.capacity() + c.refresh_due.size();
  if (refresh.capacity() < room) refresh.reserve(room);
  // Those a full window or a failed serializer held back at an earlier send first.
  refresh.insert(refresh.end(), c.refresh_due.begin(), c.refresh_due.end());
  c.refresh_due.clear();
  // An entity may be named twice (acknowledged and now the viewer), or named and gone since.
  std::sort(named.begin(), named.end(), by_index);
  named.erase(std::unique(named.begin(), named.end()), named.end());
  for (const EntityId t : named) {
    if (!names(s, t)) continue;
    auto u = std::lower_bound(c.waiting_on.begin(), c.waiting_on.end(),
                              Unresolved{{0, 0}, StatePart::full, t}, waiting_before);
    for (; u != c.waiting_on.end() && u->target == t; ++u) {
      refresh.push_back(u->referrer);  // reserved: at most the entries
    }
  }
  std::sort(refresh.begin(), refresh.end(), by_index);
  refresh.erase(std::unique(refresh.begin(), refresh.end()), refresh.end());
  for (const EntityId r : refresh) {
    Member* m = find(c.members, r);
    if (m == nullptr || m->pending) continue;  // gone: its next spawn carries its state whole
    Payload payload;
    if (!window_open(s) || !full_payload(s.w, r, payload)) {
      c.refresh_due.push_back(r);  // reserved with `unresolved`
      continue;
    }
    const std::span<const std::uint8_t> bytes = own_bytes(s, r, payload);
    const std::uint32_t id = enqueue(s, {.type = RecordType::refresh, .entity = r}, bytes);
    s.budget_used += write_refresh(s, id, r, bytes, 0);
    note_references(s, r, StatePart::full, true);
    ++s.w.stats.refreshes;
    // Its whole state went: it needs no update this send.
    m->since = s.now;
    m->acc = 0.0f;
  }
}

}  // namespace sightline
