// Delta updates: per client, the last state of each member it kept, and each update written
// against it where that is shorter (docs/protocol.md's delta update, docs/bandwidth.md).
#include <algorithm>
#include <cstring>

#include "replicator_impl.h"
#include "sightline_assert.h"

namespace sightline {
namespace {

/// An update record's payload: what follows its type, entity and length varints.
std::span<const std::uint8_t> payload_of(std::span<const std::uint8_t> record) noexcept {
  std::size_t at = 1;
  for (int field = 0; field < 3; ++field) {
    while (record[at] & 0x80u) ++at;
    ++at;
  }
  return record.subspan(at);
}

Baseline* find_baseline(std::vector<Baseline>& baselines, EntityId e) noexcept {
  const auto at = std::lower_bound(baselines.begin(), baselines.end(), e.index,
                                   [](const Baseline& b, std::uint32_t index) { return b.id.index < index; });
  return at != baselines.end() && at->id == e ? &*at : nullptr;
}

/// A packet the client may still confirm arriving out of order: given up only once its acks have
/// gone this many packets past it without naming it.
constexpr std::uint32_t kConfirmSlack = 3;

}  // namespace

std::span<const std::uint8_t> ReplicatorImpl::client_update(ClientSend& s, EntityId e,
                                                            std::span<const std::uint8_t> record,
                                                            UpdateChoice& choice) {
  ClientState& c = s.c;
  const std::span<const std::uint8_t> state = payload_of(record);
  Baseline* b = find_baseline(c.baselines, e);
  if (b != nullptr && b->candidate >= 0) {
    // Unreliable: the state waiting for the client's word is kept once an ack names its packet,
    // and given up (with the base, which the client may lack) once acks pass it without.
    const std::uint32_t sequence = b->candidate_sequence;
    const std::size_t at = sequence % kSentWindow;
    const bool on_record = c.packet_sequence[at] == sequence;
    if (on_record && c.packet_received[at] != 0) {
      b->base = b->candidate;
      b->candidate = -1;
    } else if (!on_record || c.acked_sequence >= sequence + kConfirmSlack) {
      b->base = -1;
      b->candidate = -1;
    }
  }
  if (b == nullptr && s.unreliable) b = add_baseline(c, e);
  const bool has_base = b != nullptr && b->base >= 0 && b->tick[static_cast<std::size_t>(b->base)] < s.tick;
  // Reliable: every update is kept (it arrives, in order). Unreliable: one in flight at a time,
  // and none before the client acknowledged what was sent before the entity's spawn, so a state
  // from an earlier stay in its set (dropped with the despawn) is never a base.
  // A second send in one tick keeps nothing more: the client names kept states by tick.
  choice.keep = state.size() <= def.delta_state_bytes &&
                (!s.unreliable || (b->candidate < 0 && c.acked >= b->ready_after)) &&
                (b == nullptr || b->base < 0 || b->tick[static_cast<std::size_t>(b->base)] < s.tick);
  const auto state_size = static_cast<std::uint32_t>(state.size());
  if (has_base) {
    const auto half = static_cast<std::size_t>(b->base);
    const std::span<const std::uint8_t> base{
        c.baseline_bytes.data() + (std::size_t{b->slot} * 2 + half) * def.delta_state_bytes, b->size[half]};
    const std::size_t runs = write_delta_runs(base, state, s.w.delta_runs);
    const std::uint32_t age = s.tick - b->tick[half];
    // The two forms share type, flags and entity; a delta adds its base age and state length
    // (and, against an update record not kept, the flags byte).
    const std::size_t delta_tail =
        varint_bytes(age) + varint_bytes(state_size) + varint_bytes(static_cast<std::uint32_t>(runs)) + runs;
    const std::size_t whole_tail = varint_bytes(state_size) + state.size();
    SIGHTLINE_ASSERT(delta_update_record_bytes(e, age, state_size, runs) -
                         delta_update_record_bytes(e, 0, state_size, state.size()) ==
                     delta_tail - whole_tail);
    if (delta_tail + (choice.keep ? 0 : 1) < whole_tail) {
      choice.delta = true;
      const std::size_t size = encode_delta_update_record(s.w.delta_record, e, choice.keep, age, state_size,
                                                          {s.w.delta_runs.data(), runs});
      SIGHTLINE_ASSERT(size != 0);
      return {s.w.delta_record.data(), size};
    }
  }
  // Whole: as the shared update record unless the client is asked to keep it.
  if (!choice.keep) return record;
  const std::size_t size = encode_delta_update_record(s.w.delta_record, e, true, 0, state_size, state);
  SIGHTLINE_ASSERT(size != 0);
  return {s.w.delta_record.data(), size};
}

void ReplicatorImpl::note_kept(ClientSend& s, EntityId e, std::span<const std::uint8_t> record) {
  ClientState& c = s.c;
  const std::span<const std::uint8_t> state = payload_of(record);
  Baseline* b = find_baseline(c.baselines, e);
  if (b == nullptr) b = add_baseline(c, e);
  const auto half = static_cast<std::size_t>(b->base == 0 ? 1 : 0);
  std::memcpy(c.baseline_bytes.data() + (std::size_t{b->slot} * 2 + half) * def.delta_state_bytes,
              state.data(), state.size());
  b->tick[half] = s.tick;
  b->size[half] = static_cast<std::uint32_t>(state.size());
  if (s.unreliable) {
    b->candidate = static_cast<std::int8_t>(half);
    b->candidate_sequence = c.sequence - 1;  // the open packet's
  } else {
    b->base = static_cast<std::int8_t>(half);
  }
}

Baseline* ReplicatorImpl::add_baseline(ClientState& c, EntityId e) {
  std::uint32_t slot = 0;
  if (!c.free_slots.empty()) {
    slot = c.free_slots.back();
    c.free_slots.pop_back();
  } else {
    slot = c.slots++;
    const std::size_t bytes = std::size_t{c.slots} * 2 * def.delta_state_bytes;
    make_room(c.baseline_bytes, bytes - c.baseline_bytes.size(), 2 * def.delta_state_bytes * kMemberFloor);
    c.baseline_bytes.resize(bytes);
  }
  make_room(c.baselines, 1, kMemberFloor);
  const auto at = std::lower_bound(c.baselines.begin(), c.baselines.end(), e.index,
                                   [](const Baseline& x, std::uint32_t index) { return x.id.index < index; });
  return &*c.baselines.insert(at, Baseline{.id = e, .slot = slot, .ready_after = c.next_reliable});
}

void ReplicatorImpl::drop_baseline(ClientState& c, EntityId e) {
  Baseline* b = find_baseline(c.baselines, e);
  if (b == nullptr) return;
  make_room(c.free_slots, 1, kMemberFloor);
  c.free_slots.push_back(b->slot);
  c.baselines.erase(c.baselines.begin() + (b - c.baselines.data()));
}

}  // namespace sightline
