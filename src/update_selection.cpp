// Update selection: each member's priority accumulated, then the highest written first while
// the budget lasts (priority mode), or the World's schedule as it is (fixed rate).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "candidate_order.h"
#include "replicator_impl.h"

namespace sightline {
namespace {

/// The filler stops when fewer than 3 bytes of the budget are left (no record fits), or after
/// filler_misfits candidates in a row that did not fit.
bool filler_done(const ClientSend& s, const ReplicatorDef& def, std::uint32_t misfits) noexcept {
  return s.budget_used + 3 > def.budget_bytes || misfits >= def.filler_misfits;
}

}  // namespace

void ReplicatorImpl::fill_updates(ClientSend& s) {
  if (def.mode == UpdateMode::fixed_rate) {
    fill_fixed_rate(s);
    return;
  }
  score_members(s);
  fill_by_priority(s);
}

/// The World's schedule: each member it names that is held and was not sent whole this send.
void ReplicatorImpl::fill_fixed_rate(ClientSend& s) {
  ClientState& c = s.c;
  std::size_t m = 0;
  for (const EntityId e : s.client.updates) {
    while (m < c.members.size() && c.members[m].id.index < e.index) ++m;
    if (m == c.members.size() || c.members[m].id != e) continue;
    Member& member = c.members[m];
    if (member.pending || member.since == s.now) continue;
    Payload shared;
    if (!update_record(s.w, e, shared)) continue;
    const std::span<const std::uint8_t> own = own_bytes(s, e, shared);
    UpdateChoice choice;
    const std::span<const std::uint8_t> record = update_bytes(s, e, own, choice);
    const std::size_t size = record.size();
    if (room_for(s, size) && s.writer.add_encoded_update(record)) note_written(s, e, own, choice);
    s.budget_used += size;
    member.since = s.now;
    ++s.w.stats.updates;
  }
}

/// Adds each held member's priority for this send to its accumulator, and lists the candidates.
void ReplicatorImpl::score_members(ClientSend& s) {
  // The usual case in a loop of its own: no game's hook or priorities, no attachments or
  // teleports, one origin (a fifth of the loop's instructions go with them).
  const bool plain = def.priority_hook == nullptr && !priorities_set && !view.attachments &&
                     view.teleported_roots.empty() && s.client.origins == 1;
  if (motion_packed) {
    plain ? score_members_from<true, true>(s) : score_members_from<true, false>(s);
  } else {
    plain ? score_members_from<false, true>(s) : score_members_from<false, false>(s);
  }
}

/// score_members with each member's Motion read from `motion` (kPacked) or from the World's
/// arrays, and (kPlain) with what score_members found absent left out: four loops from one, so
/// none tests on every member what is the same for all.
template <bool kPacked, bool kPlain>
void ReplicatorImpl::score_members_from(ClientSend& s) {
  ClientState& c = s.c;
  const std::uint64_t now = s.now;
  const std::uint32_t* const periods = s.client.periods;
  const float dt = def.tick_seconds;
  const float tenth = s.client.enter / 10.0f;
  const float distance_scale = def.distance_scale > 0.0f ? def.distance_scale : tenth;
  const float size_scale = def.size_scale > 0.0f ? def.size_scale : tenth;
  const float speed_scale = def.speed_scale > 0.0f ? def.speed_scale : tenth;
  const PriorityHook hook = kPlain ? nullptr : def.priority_hook;
  // Without attachments every member is its own root; without teleports at this tick no
  // teleport_send is now + 1.
  const bool trees = !kPlain && view.attachments;
  const bool teleports = !kPlain && !view.teleported_roots.empty();
  const bool priorities = !kPlain && priorities_set;
  std::vector<Candidate>& candidates = s.w.candidates;
  candidates.clear();
  make_room(candidates, c.members.size());
  if (s.w.sort_scratch.size() < candidates.capacity()) s.w.sort_scratch.resize(candidates.capacity());
  const std::uint32_t count = static_cast<std::uint32_t>(c.members.size());
  Member* const members = c.members.data();
  constexpr std::uint32_t kAhead = 8;
  for (std::uint32_t i = 0; i < count; ++i) {
    // Members are scattered over the World's arrays: each of their lines a miss, started a few
    // members ahead.
    if (i + kAhead < count) {
      const std::uint32_t ahead = members[i + kAhead].id.index;
      // And its payload's cache entry, read by the filler once the candidates are sorted.
      prefetch(&cache[1][ahead]);
      if constexpr (kPacked) {
        prefetch(&motion[ahead]);
      } else {
        prefetch(&view.xs[ahead]);
        prefetch(&view.zs[ahead]);
        prefetch(&view.bound[ahead]);
        prefetch(&view.cold[ahead]);
      }
    }
    Member& m = members[i];
    if (m.pending || m.since == now) continue;
    const std::uint32_t e = m.id.index;
    // The root is read only where it is needed: packed motion already holds the root's place.
    const std::uint32_t r = trees && (!kPacked || teleports) ? view.root_of(e) : e;
    Motion mo;
    if constexpr (kPacked) {
      mo = motion[e];
    } else {
      mo = motion_of(view, e, r);
    }
    float distance;
    if constexpr (kPlain) {
      const float dx = mo.x - s.client.origin_x[0];
      const float dz = mo.z - s.client.origin_z[0];
      distance = std::max(0.0f, std::sqrt(dx * dx + dz * dz) - mo.bound);  // surface() of one origin
    } else {
      distance = surface(s.client, mo.x, mo.z, mo.bound);
    }
    const std::uint32_t period = periods != nullptr ? std::max(1u, periods[i]) : 1u;
    const bool interacted = m.interacted_until > now;
    const float own = priorities && priority_generation[e] == m.id.generation ? priority[e] : 1.0f;
    float base = own / static_cast<float>(period) / (1.0f + distance / distance_scale) *
                 (1.0f + mo.bound / size_scale) * (1.0f + mo.speed / speed_scale) *
                 (interacted ? def.interaction_boost : 1.0f);
    if (hook != nullptr) {
      PriorityInputs in;
      in.client = c.id;
      in.entity = m.id;
      in.distance = distance;
      in.bound_radius = mo.bound;
      in.speed = mo.speed;
      in.period = period;
      in.interacted = interacted;
      in.base = base;
      base = hook(in, def.priority_context);
    }
    if (!(base >= 0.0f)) base = 0.0f;  // NaN and negatives
    base = std::min(base, 1.0e30f);
    m.acc = std::min(m.acc + base * dt, std::numeric_limits<float>::max());
    // A teleported tree jumps the queue: the client must not draw it where it was.
    const float acc =
        teleports && teleport_send[r] == now + 1 ? std::numeric_limits<float>::infinity() : m.acc;
    if (acc > 0.0f) candidates.push_back(candidate(acc, i));
  }
}

// The rule (checked against a full sort by tests/replicator_oracle_test.cpp): candidates in
// order of (accumulator descending, index ascending); each that fits is written, each that
// does not is skipped for smaller ones behind it; the filler stops when fewer than 3 bytes
// are left (no record fits), after filler_misfits candidates in a row that did not fit, or
// when the candidates run out. Partial selection finds that order a round at a time: about
// as many of the best as could still fit at the average record size, and filler_misfits
// more (gather_highest, then a sort of those), twice that in each further round, so there
// are O(log n) rounds of O(n) and the sorts of what is tried. How the rounds fall changes
// nothing written, only the work.
void ReplicatorImpl::fill_by_priority(ClientSend& s) {
  ClientState& c = s.c;
  std::vector<Candidate>& candidates = s.w.candidates;
  Candidate* const sort_scratch = s.w.sort_scratch.data();
  SendStats& counts = s.w.stats;
  std::size_t begin = 0;
  std::size_t average = c.update_bytes;  // running estimate of an update record's bytes
  std::size_t growth = 1;
  std::uint64_t written = 0;
  std::uint64_t written_bytes = 0;
  std::uint32_t misfits = 0;
  // Without deltas, a written update record is every client's as it is (the fast path below).
  const bool shared_as_is = def.share_payloads && !def.delta_updates;
  const std::uint64_t ready = 2 * (sends + 1) + 1;  // CachedPayload::state once written this send
  while (begin < candidates.size() && !filler_done(s, def, misfits)) {
    const auto left = static_cast<std::size_t>(def.budget_bytes - s.budget_used);
    const std::size_t k = (left / average + def.filler_misfits) * growth;
    growth *= 2;
    Candidate* const first = candidates.data() + begin;
    Candidate* const last = gather_highest(first, candidates.data() + candidates.size(), k, sort_scratch);
    sort_highest_first(first, last, sort_scratch);
    for (const Candidate* it = first; it != last && !filler_done(s, def, misfits); ++it) {
      Member& m = c.members[member_of(*it)];
      // The shared record as it is where it is already written and names no entity (most):
      // what update_record, own_bytes and update_bytes give then, read in one step.
      std::span<const std::uint8_t> own;
      std::span<const std::uint8_t> record;
      UpdateChoice choice;
      const CachedPayload* const entry = shared_as_is ? &cache[1][m.id.index] : nullptr;
      if (entry != nullptr && entry->load_state() == ready && entry->bytes != nullptr &&
          entry->reference_count == 0) {
        own = record = {entry->bytes, entry->size};
        s.w.null_count = 0;
      } else {
        Payload shared;
        if (!update_record(s.w, m.id, shared)) continue;
        own = own_bytes(s, m.id, shared);
        record = update_bytes(s, m.id, own, choice);
      }
      const std::size_t size = record.size();
      const bool fits_open = s.open && s.writer.room() >= size;
      const std::size_t cost = fits_open ? size : size + kStateHeaderBytes;
      if (s.budget_used + cost > def.budget_bytes || size + kStateHeaderBytes > def.packet_bytes) {
        ++misfits;
        continue;
      }
      misfits = 0;
      room_for(s, size);
      if (s.writer.add_encoded_update(record)) note_written(s, m.id, own, choice);
      s.budget_used += size;
      m.acc = 0.0f;
      m.since = s.now;
      ++counts.updates;
      ++written;
      written_bytes += size;
    }
    if (written != 0) average = std::max<std::size_t>(3, static_cast<std::size_t>(written_bytes / written));
    begin = static_cast<std::size_t>(last - candidates.data());
  }
  c.update_bytes = static_cast<std::uint32_t>(average);
  counts.updates_skipped += candidates.size() - written;
}

}  // namespace sightline
