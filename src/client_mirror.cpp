// The ClientMirror: decode and check a whole packet, then apply it; nothing half-applied.
#include "sightline/client_mirror.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

#include "format_value.h"
#include "index_map.h"
#include "sightline_assert.h"
#include "simd.h"

namespace sightline {

const char* anomaly_kind_name(AnomalyKind kind) noexcept {
  switch (kind) {
    case AnomalyKind::update_unknown: return "update_unknown";
    case AnomalyKind::spawn_held: return "spawn_held";
    case AnomalyKind::despawn_unknown: return "despawn_unknown";
    case AnomalyKind::generation_mismatch: return "generation_mismatch";
    case AnomalyKind::bad_sequence: return "bad_sequence";
    case AnomalyKind::bad_reliable_id: return "bad_reliable_id";
    case AnomalyKind::delivery_mismatch: return "delivery_mismatch";
    case AnomalyKind::too_many: return "too_many";
    case AnomalyKind::baseline_missing: return "baseline_missing";
    case AnomalyKind::refresh_unknown: return "refresh_unknown";
  }
  return "unknown";
}

void MirrorListener::on_enter(EntityId, SpawnReason, bool, std::span<const std::uint8_t>, std::uint32_t) {}
void MirrorListener::on_update(EntityId, std::span<const std::uint8_t>, std::uint32_t) {}
void MirrorListener::on_refresh(EntityId, std::span<const std::uint8_t>, std::uint32_t) {}
void MirrorListener::on_exit(EntityId, ExitKind, DespawnReason) {}
void MirrorListener::on_event(const ReceivedEvent&) {}
void MirrorListener::on_message(std::span<const std::uint8_t>, std::uint32_t) {}

namespace {

/// A state a delta update asked the mirror to keep, named by the tick of its packet.
struct Kept {
  bool valid = false;
  std::uint32_t tick = 0;
  std::vector<std::uint8_t> bytes;
};

// The two newest kept states of a held entity. The server names only the last it saw confirmed,
// and asks for a new one only once that is confirmed or given up, so two are enough.
struct KeptPair {
  std::array<Kept, 2> kept;

  [[nodiscard]] const Kept* at(std::uint32_t kept_tick) const noexcept {
    for (const Kept& k : kept) {
      if (k.valid && k.tick == kept_tick) return &k;
    }
    return nullptr;
  }
};

// Each slot of a snapshot ring starts with its tick and its payload's size, the top bit of which
// says the state is an update part.
constexpr std::size_t kSlotHeader = 8;
constexpr std::uint32_t kUpdatePartBit = 0x80000000u;
// Room for a snapshot ring inside a Held: a history of 1 with states of up to 8 bytes needs no
// buffer of its own.
constexpr std::size_t kInlineRing = 16;

// One held entity, in 32 bytes. A mirror's table is mostly read cold, so its size is what an
// update costs: two Helds share a cache line, and a small ring lives inside one. The ring holds
// `history` slots of kSlotHeader bytes and then stride() payload bytes each: in the Held while it
// fits in kInlineRing bytes, else in a buffer the Held owns.
class alignas(32) Held {
 public:
  Held() noexcept = default;
  Held(Held&& other) noexcept { take(other); }
  Held& operator=(Held&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;
  ~Held() { release(); }

  std::uint32_t index = 0;
  std::uint32_t generation = 0;
  std::uint32_t tick = 0;  // of its latest state
  std::uint8_t first = 0;  // the oldest snapshot's slot
  std::uint8_t count = 0;  // snapshots kept, <= MirrorDef::history

  /// Payload bytes a slot has room for, a multiple of 8.
  [[nodiscard]] std::uint32_t stride() const noexcept { return (units_ & kStrideUnits) * 8u; }
  [[nodiscard]] bool owns_buffer() const noexcept { return (units_ & kOwnsBuffer) != 0; }
  [[nodiscard]] const std::uint8_t* ring() const noexcept {
    return owns_buffer() ? buffer() : storage_.data();
  }
  [[nodiscard]] std::uint8_t* ring() noexcept { return owns_buffer() ? buffer() : storage_.data(); }
  [[nodiscard]] std::size_t slot_offset(std::uint32_t slot) const noexcept {
    return slot * (kSlotHeader + stride());
  }
  /// The ring inside the Held, `stride` bytes a slot (it must fit in kInlineRing bytes).
  void use_inline(std::uint32_t stride) noexcept {
    release();
    units_ = static_cast<std::uint16_t>(stride / 8);
  }
  /// The ring in `buffer`, `stride` bytes a slot.
  void use_buffer(std::unique_ptr<std::uint8_t[]> buffer, std::uint32_t stride) noexcept {
    SIGHTLINE_ASSERT(stride % 8 == 0 && stride / 8 <= kStrideUnits);
    release();
    std::uint8_t* const address = buffer.release();
    std::memcpy(storage_.data(), &address, sizeof address);
    units_ = static_cast<std::uint16_t>(stride / 8) | kOwnsBuffer;
  }
  /// Its buffer, given up (null where the ring is inside the Held); the ring is then empty.
  std::unique_ptr<std::uint8_t[]> take_buffer() noexcept {
    std::unique_ptr<std::uint8_t[]> out(owns_buffer() ? buffer() : nullptr);
    units_ = 0;
    return out;
  }
  [[nodiscard]] Snapshot snapshot(std::uint32_t slot) const noexcept {
    const std::uint8_t* at = ring() + slot_offset(slot);
    std::uint32_t tick_of = 0;
    std::uint32_t size = 0;
    std::memcpy(&tick_of, at, 4);
    std::memcpy(&size, at + 4, 4);
    return {tick_of,
            (size & kUpdatePartBit) != 0 ? StatePart::update : StatePart::full,
            {at + kSlotHeader, size & ~kUpdatePartBit}};
  }

 private:
  static constexpr std::uint16_t kOwnsBuffer = 0x8000;
  // Of 8 bytes: up to 262,136, beyond any packet receive() takes (kMaxPacketBytes).
  static constexpr std::uint16_t kStrideUnits = 0x7fff;

  void release() noexcept {
    if (owns_buffer()) delete[] buffer();
    units_ = 0;
  }
  void take(Held& other) noexcept {
    index = other.index;
    generation = other.generation;
    tick = other.tick;
    first = other.first;
    count = other.count;
    units_ = other.units_;
    storage_ = other.storage_;  // the ring, or the buffer's address
    other.units_ = 0;
  }

  std::uint16_t units_ = 0;  // stride() / 8, and kOwnsBuffer
  // The ring itself, or the address of the buffer that holds it (copied in and out).
  alignas(8) std::array<std::uint8_t, kInlineRing> storage_{};

  [[nodiscard]] std::uint8_t* buffer() const noexcept {
    std::uint8_t* address = nullptr;
    std::memcpy(&address, storage_.data(), sizeof address);
    return address;
  }
};
static_assert(sizeof(Held) == 32, "two Helds to a cache line");

// A despawned entity's ring buffer, for the next ring that needs one.
struct SpareRing {
  std::uint32_t stride = 0;
  std::unique_ptr<std::uint8_t[]> ring;
};

/// A reliable record that arrived ahead of a missing one (unreliable delivery): the record as
/// decoded, its payload viewing a copy it owns, and the tick of the packet it came in.
struct Waiting {
  WireRecord record;
  std::uint32_t packet_tick = 0;
  std::vector<std::uint8_t> payload;
};

// Sequences received, for duplicate detection under unreliable delivery: a window of 1024. A
// packet older than the window is not recognised as a duplicate and is applied again, which is
// harmless: its reliable records dedupe by id and its updates by tick.
constexpr std::uint32_t kSequenceWindow = 1024;
// Below this many records a packet's lookups are few enough to leave to the out-of-order core.
constexpr std::size_t kPrefetchRecords = 8;

}  // namespace

class MirrorImpl {
 public:
  explicit MirrorImpl(const MirrorDef& d) : def(d), seen(kSequenceWindow, 0), complete(kSequenceWindow, 0) {}

  Status receive(std::span<const std::uint8_t> bytes, MirrorListener* listener);

  MirrorDef def;
  // The held entities, in no order, and where each is by entity index. Indices are untrusted:
  // nothing is sized by them.
  std::vector<Held> held;
  std::vector<std::unique_ptr<KeptPair>> kept;  // beside `held`, made at an entity's first kept state
  IndexMap slots;
  std::vector<std::uint32_t> held_slots;               // per record of the packet: see prefetch_held
  std::unordered_map<std::uint32_t, Waiting> waiting;  // by reliable id
  std::uint32_t next_reliable = 0;
  bool any_packet = false;
  std::uint32_t latest_sequence = 0;
  std::uint32_t expected_sequence = 0;  // reliable delivery
  // The interest status of the newest packet applied, and that packet's sequence and reliable_next.
  InterestStatus status;
  bool status_any = false;
  std::uint32_t status_sequence = 0;
  std::uint32_t status_reliable_next = 0;
  std::vector<std::uint64_t> seen;  // sequence + 1 per slot, 0 for none
  // Per slot of `seen`: every state its packet asked to keep was kept (ack().received).
  std::vector<std::uint8_t> complete;
  bool packet_complete = true;         // of the packet being applied
  std::vector<std::uint8_t> rebuilt;   // a delta update's state
  std::vector<SpareRing> spare_rings;  // at most as many as entities have left
  std::vector<Anomaly> anomalies;
  MirrorStats stats;
  DecodedPacket packet;

  /// The held entity at `index` with that generation, else null.
  [[nodiscard]] const Held* find(EntityId e) const noexcept {
    const std::uint32_t slot = slots.find(e.index);
    return slot != IndexMap::kNone && held[slot].generation == e.generation ? &held[slot] : nullptr;
  }
  [[nodiscard]] Held* find(EntityId e) noexcept { return const_cast<Held*>(std::as_const(*this).find(e)); }

  /// Whether a record's entity is looked up among the held ones in the usual case.
  static bool names_held(const WireRecord& r) noexcept {
    return r.type == RecordType::update || r.type == RecordType::delta_update ||
           r.type == RecordType::despawn;
  }
  /// Each update or despawn of the packet costs a lookup in the index and then a read of the
  /// entity's entry: in a mirror among many (a bots process; a game whose other work evicts it)
  /// two cache misses, one behind the other. receive()'s check of the records asks for their
  /// index lines; this asks for their entries, keeping the slots found per record (held_slots)
  /// for the updates to start from, so the misses wait together.
  /// Inlined: GCC took an earlier form, of prefetches and reads alone, for a function without
  /// effects and dropped its calls. Called before any record is applied (its vector may grow).
  SIGHTLINE_FORCE_INLINE void prefetch_held() {
    held_slots.clear();
    if (packet.records.size() < kPrefetchRecords) return;
    held_slots.resize(packet.records.size());
    for (std::size_t i = 0; i < packet.records.size(); ++i) {
      const WireRecord& r = packet.records[i];
      const std::uint32_t slot = names_held(r) ? slots.find(r.entity.index) : IndexMap::kNone;
      if (slot != IndexMap::kNone) __builtin_prefetch(&held[slot]);
      held_slots[i] = slot;
    }
  }
  /// find(), starting from the slot prefetch_held found for record `i`: the entity's slot still
  /// where no earlier record of the packet moved it (a despawn moves the last entry into its gap).
  [[nodiscard]] Held* find_held(EntityId e, std::size_t i) noexcept {
    if (i < held_slots.size()) {
      const std::uint32_t slot = held_slots[i];
      if (slot < held.size() && held[slot].index == e.index) {
        return held[slot].generation == e.generation ? &held[slot] : nullptr;
      }
    }
    return find(e);
  }

 private:
  void anomaly(AnomalyKind kind, EntityId entity) {
    anomalies.push_back({kind, entity, packet.header.sequence, packet.header.tick});
    ++stats.anomalies;
  }
  void note_sequence(std::uint32_t sequence) {
    if (!any_packet || sequence > latest_sequence) latest_sequence = sequence;
    any_packet = true;
  }
  void push_state(Held& h, std::uint32_t tick, StatePart part, std::span<const std::uint8_t> payload) {
    SIGHTLINE_ASSERT(payload.size() < kUpdatePartBit);
    if (payload.size() > h.stride()) widen_ring(h, payload.size());
    // first < history and count <= history: one subtraction wraps it.
    std::uint32_t slot = std::uint32_t{h.first} + h.count;
    if (slot >= def.history) slot -= def.history;
    std::uint8_t* at = h.ring() + h.slot_offset(slot);
    const std::uint32_t size =
        static_cast<std::uint32_t>(payload.size()) | (part == StatePart::update ? kUpdatePartBit : 0u);
    std::memcpy(at, &tick, 4);
    std::memcpy(at + 4, &size, 4);
    if (!payload.empty()) std::memcpy(at + kSlotHeader, payload.data(), payload.size());
    if (h.count < def.history) {
      ++h.count;
    } else {
      h.first = static_cast<std::uint8_t>(h.first + 1u == def.history ? 0u : h.first + 1u);
    }
    h.tick = tick;
  }
  [[nodiscard]] std::size_t ring_bytes(std::uint32_t stride) const noexcept {
    return def.history * (kSlotHeader + stride);
  }
  /// Gives the ring room for payloads of `size` bytes, keeping its snapshots: in the Held while
  /// it fits, else in a buffer of its own (the last spare one where it is large enough).
  void widen_ring(Held& h, std::size_t size) {
    const auto stride =
        static_cast<std::uint32_t>(std::max<std::size_t>((size + 7) & ~std::size_t{7}, h.stride()));
    const std::uint32_t old_stride = h.stride();
    std::array<std::uint8_t, kInlineRing> old_inline{};
    if (!h.owns_buffer()) std::memcpy(old_inline.data(), h.ring(), kInlineRing);
    const std::unique_ptr<std::uint8_t[]> old_buffer = h.take_buffer();
    const std::uint8_t* old = old_buffer ? old_buffer.get() : old_inline.data();
    if (!old_buffer && ring_bytes(stride) <= kInlineRing) {
      h.use_inline(stride);
    } else {
      // A spare too small is dropped rather than kept, so that spares never outnumber the
      // entities that let them go.
      std::unique_ptr<std::uint8_t[]> buffer;
      std::uint32_t room = stride;
      if (!spare_rings.empty()) {
        if (spare_rings.back().stride >= stride) {
          buffer = std::move(spare_rings.back().ring);
          room = spare_rings.back().stride;
        }
        spare_rings.pop_back();
      }
      if (!buffer) buffer = std::make_unique<std::uint8_t[]>(ring_bytes(stride));
      h.use_buffer(std::move(buffer), room);
    }
    for (std::uint32_t i = 0; i < h.count; ++i) {
      const std::uint32_t slot = (h.first + i) % def.history;
      std::memcpy(h.ring() + h.slot_offset(slot), old + slot * (kSlotHeader + old_stride),
                  kSlotHeader + old_stride);
    }
  }
  /// The slot for a new held entity, with no snapshot and no kept state yet.
  Held& add(EntityId e) {
    slots.insert(e.index, static_cast<std::uint32_t>(held.size()));
    Held& h = held.emplace_back();
    kept.emplace_back();
    h.index = e.index;
    h.generation = e.generation;
    if (ring_bytes(0) > kInlineRing) widen_ring(h, 0);
    return h;
  }
  /// Removes a held entity; the last one takes its slot, and its ring's buffer serves a later one.
  void remove(Held& h) {
    const std::uint32_t slot = slots.find(h.index);
    if (h.owns_buffer()) {
      const std::uint32_t stride = h.stride();
      spare_rings.push_back({stride, h.take_buffer()});
    }
    slots.erase(h.index);
    if (slot + 1 != held.size()) {
      held[slot] = std::move(held.back());
      kept[slot] = std::move(kept.back());
      slots.assign(held[slot].index, slot);
    }
    held.pop_back();
    kept.pop_back();
  }
  /// The entity's kept states, null before it has kept one.
  [[nodiscard]] std::unique_ptr<KeptPair>& kept_of(const Held& h) noexcept {
    return kept[static_cast<std::size_t>(&h - held.data())];
  }
  void take_status(const PacketHeader& h) {
    if (status_any && def.delivery == Delivery::unreliable && h.sequence < status_sequence) return;
    status = h.interest;
    status_any = true;
    status_sequence = h.sequence;
    status_reliable_next = h.reliable_next;
  }
  void apply_spawn(EntityId e, SpawnReason reason, bool created, std::uint32_t tick,
                   std::span<const std::uint8_t> payload, MirrorListener* listener);
  void apply_despawn(EntityId e, DespawnReason reason, MirrorListener* listener);
  void apply_refresh(EntityId e, std::uint32_t tick, std::span<const std::uint8_t> payload,
                     MirrorListener* listener);
  void apply_update(std::size_t record, std::uint32_t tick, bool should_hold, MirrorListener* listener);
  void apply_delta_update(std::size_t record, std::uint32_t tick, bool should_hold, MirrorListener* listener);
  [[nodiscard]] AnomalyKind missing(EntityId e, AnomalyKind not_held) const noexcept;
  /// A delta update's state: its payload, or rebuilt into `rebuilt` from the state it names.
  /// False where the entity is not held at that generation or the state named is not kept.
  bool state_of(const WireRecord& r, std::uint32_t packet_tick, std::span<const std::uint8_t>& state) {
    if (r.base_age == 0) {
      state = r.payload;
      return true;
    }
    const Held* h = find(r.entity);
    if (h == nullptr) return false;
    const std::unique_ptr<KeptPair>& pair = kept_of(*h);
    const Kept* base = pair ? pair->at(packet_tick - r.base_age) : nullptr;
    // Bytes past the runs come from the base: a longer state cannot be rebuilt, and is refused
    // before anything is allocated for it.
    if (base == nullptr || r.state_size > base->bytes.size() + r.payload.size()) return false;
    rebuilt.resize(r.state_size);
    if (!apply_delta_runs(base->bytes, r.payload, rebuilt)) return false;
    state = rebuilt;
    return true;
  }
  /// Records the packet in the duplicate window, with whether it kept what it was asked to.
  void note_seen(std::uint32_t sequence) {
    seen[sequence % kSequenceWindow] = std::uint64_t{sequence} + 1;
    complete[sequence % kSequenceWindow] = packet_complete ? 1 : 0;
  }
  void apply_event(ReceivedEvent event, MirrorListener* listener) {
    ++stats.events;
    if (listener == nullptr) return;
    event.subject_held = !event.subject.is_null() && find(event.subject) != nullptr;
    listener->on_event(event);
  }
  static ReceivedEvent event_of(const WireRecord& r, std::uint32_t packet_tick) {
    return {r.event_class, r.x, r.z, r.entity, false, r.reliable, r.payload, packet_tick - r.state_age};
  }
  /// A reliable record whose turn it is (reliable ids in order).
  void apply_reliable(const WireRecord& r, std::uint32_t packet_tick, MirrorListener* listener) {
    if (r.type == RecordType::spawn) {
      apply_spawn(r.entity, static_cast<SpawnReason>(r.reason), r.created, packet_tick - r.state_age,
                  r.payload, listener);
    } else if (r.type == RecordType::despawn) {
      apply_despawn(r.entity, static_cast<DespawnReason>(r.reason), listener);
    } else if (r.type == RecordType::refresh) {
      apply_refresh(r.entity, packet_tick - r.state_age, r.payload, listener);
    } else if (r.type == RecordType::message) {
      apply_message(r.payload, packet_tick, listener);
    } else {
      apply_event(event_of(r, packet_tick), listener);
    }
  }
  void apply_message(std::span<const std::uint8_t> payload, std::uint32_t tick, MirrorListener* listener) {
    ++stats.messages;
    if (listener != nullptr) listener->on_message(payload, tick);
  }
};

void MirrorImpl::apply_spawn(EntityId e, SpawnReason reason, bool created, std::uint32_t tick,
                             std::span<const std::uint8_t> payload, MirrorListener* listener) {
  if (const std::uint32_t slot = slots.find(e.index); slot != IndexMap::kNone) {
    anomaly(
        held[slot].generation == e.generation ? AnomalyKind::spawn_held : AnomalyKind::generation_mismatch,
        e);
    return;
  }
  if (held.size() >= def.max_entities) {
    anomaly(AnomalyKind::too_many, e);
    return;
  }
  Held& h = add(e);
  push_state(h, tick, StatePart::full, payload);
  ++stats.enters;
  if (listener != nullptr) listener->on_enter(e, reason, created, payload, tick);
}

void MirrorImpl::apply_despawn(EntityId e, DespawnReason reason, MirrorListener* listener) {
  const std::uint32_t slot = slots.find(e.index);
  if (slot == IndexMap::kNone) {
    anomaly(AnomalyKind::despawn_unknown, e);
    return;
  }
  if (held[slot].generation != e.generation) {
    anomaly(AnomalyKind::generation_mismatch, e);
    return;
  }
  remove(held[slot]);
  ++stats.exits;
  if (listener != nullptr) {
    listener->on_exit(e, reason == DespawnReason::destroyed ? ExitKind::destroy : ExitKind::leave, reason);
  }
}

/// Why a record names an entity the mirror does not hold at that generation: not at all, or at
/// another generation.
AnomalyKind MirrorImpl::missing(EntityId e, AnomalyKind not_held) const noexcept {
  return slots.find(e.index) == IndexMap::kNone ? not_held : AnomalyKind::generation_mismatch;
}

void MirrorImpl::apply_refresh(EntityId e, std::uint32_t tick, std::span<const std::uint8_t> payload,
                               MirrorListener* listener) {
  Held* h = find(e);
  if (h == nullptr) {
    anomaly(missing(e, AnomalyKind::refresh_unknown), e);
    return;
  }
  // A late copy under unreliable delivery may carry a state older than the last one applied: the
  // game still hears it (its references are what matter), but the history stays in tick order
  // and the tick an update is tested against never goes back.
  if (tick >= h->tick) push_state(*h, tick, StatePart::full, payload);
  ++stats.refreshes;
  if (listener != nullptr) listener->on_refresh(e, payload, tick);
}

void MirrorImpl::apply_update(std::size_t record, std::uint32_t tick, bool should_hold,
                              MirrorListener* listener) {
  const EntityId e = packet.records[record].entity;
  const std::span<const std::uint8_t> payload = packet.records[record].payload;
  Held* h = find_held(e, record);
  if (h == nullptr) {
    if (should_hold) {
      anomaly(missing(e, AnomalyKind::update_unknown), e);
    } else {
      ++stats.stale_updates;
    }
    return;
  }
  // Reliable delivery keeps order, so an update is never older than what is held; unreliable
  // drops one that is not newer (a duplicate, or overtaken by a later state).
  if (def.delivery == Delivery::unreliable && tick <= h->tick) {
    ++stats.stale_updates;
    return;
  }
  push_state(*h, tick, StatePart::update, payload);
  ++stats.updates;
  if (listener != nullptr) listener->on_update(e, payload, tick);
}

void MirrorImpl::apply_delta_update(std::size_t record, std::uint32_t tick, bool should_hold,
                                    MirrorListener* listener) {
  const WireRecord& r = packet.records[record];
  const EntityId e = r.entity;
  Held* h = find_held(e, record);
  std::span<const std::uint8_t> state;
  if (h == nullptr || !state_of(r, tick, state)) {
    if (r.keep) packet_complete = false;
    if (h != nullptr && (def.delivery == Delivery::reliable || tick > h->tick)) {
      anomaly(AnomalyKind::baseline_missing, e);
    } else if (h == nullptr && should_hold) {
      anomaly(missing(e, AnomalyKind::update_unknown), e);
    } else {
      // Overtaken by a newer state: whatever it was written against may be gone, and it adds
      // nothing.
      ++stats.stale_updates;
    }
    return;
  }
  if (r.keep) {
    std::unique_ptr<KeptPair>& made = kept_of(*h);
    if (!made) made = std::make_unique<KeptPair>();
    KeptPair& pair = *made;
    // Into the older of the two, unless both are newer (a late copy of an older packet).
    Kept& older = !pair.kept[0].valid || (pair.kept[1].valid && pair.kept[0].tick < pair.kept[1].tick)
                      ? pair.kept[0]
                      : pair.kept[1];
    if (pair.at(tick) == nullptr && (!older.valid || older.tick < tick)) {
      older.bytes.assign(state.begin(), state.end());
      older.tick = tick;
      older.valid = true;
    }
  }
  if (def.delivery == Delivery::unreliable && tick <= h->tick) {
    ++stats.stale_updates;
    return;
  }
  push_state(*h, tick, StatePart::update, state);
  ++stats.updates;
  if (r.base_age != 0) ++stats.deltas;
  if (listener != nullptr) listener->on_update(e, state, tick);
}

Status MirrorImpl::receive(std::span<const std::uint8_t> bytes, MirrorListener* listener) {
  // No Replicator writes more (ReplicatorDef::max_packet_bytes), and a held state's size must
  // fit the ring's slot stride.
  if (bytes.size() > kMaxPacketBytes) {
    ++stats.rejected;
    anomalies.clear();
    return {ErrorCode::malformed_packet, "packet is " + std::to_string(bytes.size()) +
                                             " bytes: more than kMaxPacketBytes (" +
                                             std::to_string(kMaxPacketBytes) + ")"};
  }
  // Check everything first: nothing below may fail once the first record is applied.
  if (Status s = decode_packet(bytes, packet); !s) {
    ++stats.rejected;
    anomalies.clear();
    return s;
  }
  for (std::size_t i = 0; i < packet.records.size(); ++i) {
    const WireRecord& r = packet.records[i];
    // The first of prefetch_held's two steps, here where every record is read anyway.
    if (names_held(r)) slots.prefetch(r.entity.index);
    if (r.type == RecordType::event) {
      if (def.check_event != nullptr && !def.check_event(r.event_class, r.payload, def.check_event_context)) {
        ++stats.rejected;
        anomalies.clear();
        return {ErrorCode::malformed_packet, "record " + std::to_string(i) + " (event of class " +
                                                 std::to_string(r.event_class) +
                                                 "): its payload fails the event check"};
      }
      continue;
    }
    if ((r.type != RecordType::spawn && r.type != RecordType::refresh && r.type != RecordType::update &&
         r.type != RecordType::delta_update) ||
        def.check == nullptr) {
      continue;
    }
    const bool full = r.type == RecordType::spawn || r.type == RecordType::refresh;
    const StatePart part = full ? StatePart::full : StatePart::update;
    // A delta is checked as the state it rebuilds; one whose base is not kept is an anomaly when
    // it applies, and never reaches the game.
    std::span<const std::uint8_t> state = r.payload;
    if (r.type == RecordType::delta_update && !state_of(r, packet.header.tick, state)) continue;
    if (!def.check(r.entity, part, state, def.check_context)) {
      ++stats.rejected;
      anomalies.clear();
      return {ErrorCode::malformed_packet, "record " + std::to_string(i) + " (" +
                                               (r.type == RecordType::spawn     ? "spawn"
                                                : r.type == RecordType::refresh ? "refresh"
                                                                                : "update") +
                                               " of " + describe(r.entity) +
                                               "): its payload fails the state check"};
    }
  }
  anomalies.clear();
  const PacketHeader& h = packet.header;
  ++stats.packets;
  packet_complete = true;
  if (h.delivery != def.delivery) {
    anomaly(AnomalyKind::delivery_mismatch, {});
    return {};
  }

  if (def.delivery == Delivery::reliable) {
    if (h.sequence != expected_sequence) anomaly(AnomalyKind::bad_sequence, {});
    expected_sequence = h.sequence + 1;
    note_sequence(h.sequence);
    take_status(h);
    prefetch_held();
    for (std::size_t i = 0; i < packet.records.size(); ++i) {
      const WireRecord& r = packet.records[i];
      if (r.type == RecordType::update) {
        apply_update(i, h.tick, true, listener);
        continue;
      }
      if (r.type == RecordType::delta_update) {
        apply_delta_update(i, h.tick, true, listener);
        continue;
      }
      if (r.type == RecordType::event && !r.reliable) {
        apply_event(event_of(r, h.tick), listener);
        continue;
      }
      if (r.reliable_id != next_reliable) anomaly(AnomalyKind::bad_reliable_id, r.entity);
      next_reliable = r.reliable_id + 1;
      apply_reliable(r, h.tick, listener);
    }
    note_seen(h.sequence);
    return {};
  }

  // Unreliable: a sequence seen before is a duplicate; its reliable records dedupe by id and its
  // updates by tick anyway, so it is counted and otherwise skipped.
  std::uint64_t& slot = seen[h.sequence % kSequenceWindow];
  if (slot == std::uint64_t{h.sequence} + 1) {
    ++stats.duplicates;
    return {};
  }
  // A packet older than the window cannot be told from a copy: its events are not heard.
  const bool stale =
      any_packet && latest_sequence >= kSequenceWindow && h.sequence <= latest_sequence - kSequenceWindow;
  note_sequence(h.sequence);
  take_status(h);
  // The slots it finds may move as the reliable records below apply: find_held checks each.
  prefetch_held();

  for (const WireRecord& r : packet.records) {
    if (r.type == RecordType::update || r.type == RecordType::delta_update ||
        (r.type == RecordType::event && !r.reliable)) {
      continue;
    }
    if (r.reliable_id < next_reliable) {
      ++stats.reliable_duplicates;
      continue;
    }
    if (r.reliable_id - next_reliable >= kReliableWindow) {
      anomaly(AnomalyKind::bad_reliable_id, r.entity);
      continue;
    }
    if (r.reliable_id == next_reliable) {
      apply_reliable(r, h.tick, listener);
      ++next_reliable;
      // Whatever waited behind it may follow now.
      for (auto at = waiting.find(next_reliable); at != waiting.end(); at = waiting.find(next_reliable)) {
        apply_reliable(at->second.record, at->second.packet_tick, listener);
        waiting.erase(at);
        ++next_reliable;
      }
      continue;
    }
    if (waiting.count(r.reliable_id) != 0) {
      ++stats.reliable_duplicates;
      continue;
    }
    // The map's nodes never move, so the view of the owned copy stays valid while it waits.
    Waiting& w = waiting[r.reliable_id];
    w.record = r;
    w.packet_tick = h.tick;
    w.payload.assign(r.payload.begin(), r.payload.end());
    w.record.payload = w.payload;
    ++stats.reliable_buffered;
  }
  for (const WireRecord& r : packet.records) {
    if (r.type != RecordType::event || r.reliable) continue;
    if (stale) {
      ++stats.stale_events;
    } else {
      apply_event(event_of(r, h.tick), listener);
    }
  }
  // The packet's updates were chosen against the reliable records below reliable_next: having
  // applied exactly those, the mirror must hold every entity updated.
  const bool exact = next_reliable == h.reliable_next;
  for (std::size_t i = 0; i < packet.records.size(); ++i) {
    if (packet.records[i].type == RecordType::update) apply_update(i, h.tick, exact, listener);
    if (packet.records[i].type == RecordType::delta_update) apply_delta_update(i, h.tick, exact, listener);
  }
  note_seen(h.sequence);
  return {};
}

// --- Public API -------------------------------------------------------------------------------

ClientMirror::ClientMirror(std::unique_ptr<MirrorImpl> impl) noexcept : impl_(std::move(impl)) {}
ClientMirror::ClientMirror(ClientMirror&&) noexcept = default;
ClientMirror& ClientMirror::operator=(ClientMirror&&) noexcept = default;
ClientMirror::~ClientMirror() = default;

MirrorDef default_mirror_def() { return MirrorDef{}; }

Result<ClientMirror> ClientMirror::create(const MirrorDef& def) {
  if (def.delivery != Delivery::reliable && def.delivery != Delivery::unreliable) {
    return Status{ErrorCode::invalid_def, "MirrorDef::delivery is " +
                                              std::to_string(static_cast<int>(def.delivery)) +
                                              ": must be reliable or unreliable"};
  }
  if (def.history < 1 || def.history > kMaxHistory) {
    return Status{ErrorCode::invalid_def, "MirrorDef::history is " + std::to_string(def.history) +
                                              ": must be in [1, " + std::to_string(kMaxHistory) + "]"};
  }
  if (def.max_entities < 1)
    return Status{ErrorCode::invalid_def, "MirrorDef::max_entities is 0: must be >= 1"};
  return ClientMirror(std::make_unique<MirrorImpl>(def));
}

Status ClientMirror::receive(std::span<const std::uint8_t> bytes, MirrorListener* listener) {
  return impl_->receive(bytes, listener);
}

bool ClientMirror::holds(EntityId entity) const noexcept {
  return !entity.is_null() && std::as_const(*impl_).find(entity) != nullptr;
}

std::size_t ClientMirror::held_count() const noexcept { return impl_->held.size(); }

std::vector<EntityId> ClientMirror::held() const {
  std::vector<EntityId> out;
  out.reserve(impl_->held.size());
  for (const Held& h : impl_->held) out.push_back({h.index, h.generation});
  std::sort(out.begin(), out.end(), [](EntityId a, EntityId b) { return a.index < b.index; });
  return out;
}

EntityId ClientMirror::held_at(std::size_t i) const noexcept {
  if (i >= impl_->held.size()) return {};
  const Held& h = impl_->held[i];
  return {h.index, h.generation};
}

std::optional<Snapshot> ClientMirror::snapshot(EntityId entity, std::uint32_t back) const noexcept {
  if (entity.is_null()) return std::nullopt;
  const Held* h = std::as_const(*impl_).find(entity);
  if (h == nullptr || back >= h->count) return std::nullopt;
  return h->snapshot((h->first + h->count - 1 - back) % impl_->def.history);
}

Result<std::vector<Snapshot>> ClientMirror::history(EntityId entity) const {
  if (!holds(entity))
    return Status{ErrorCode::stale_handle, describe(entity) + " is not held by this mirror"};
  const Held& h = *std::as_const(*impl_).find(entity);
  std::vector<Snapshot> out;
  for (std::uint32_t i = 0; i < h.count; ++i) out.push_back(h.snapshot((h.first + i) % impl_->def.history));
  return out;
}

Result<std::uint32_t> ClientMirror::state_tick(EntityId entity) const {
  if (!holds(entity))
    return Status{ErrorCode::stale_handle, describe(entity) + " is not held by this mirror"};
  return std::as_const(*impl_).find(entity)->tick;
}

InterestStatus ClientMirror::interest() const noexcept {
  const MirrorImpl& m = *impl_;
  InterestStatus out = m.status;
  // Reliable records the server had assigned that have not been applied are on their way too.
  const std::uint32_t unapplied =
      m.status_reliable_next > m.next_reliable ? m.status_reliable_next - m.next_reliable : 0;
  out.pending = m.status.pending > 0xffffffffu - unapplied ? 0xffffffffu : m.status.pending + unapplied;
  return out;
}

AckPacket ClientMirror::ack() const noexcept {
  const MirrorImpl& m = *impl_;
  AckPacket ack{m.latest_sequence, m.next_reliable, 0};
  for (std::uint32_t i = 0; m.any_packet && i < 32 && i <= m.latest_sequence; ++i) {
    const std::uint32_t sequence = m.latest_sequence - i;
    const std::size_t slot = sequence % kSequenceWindow;
    if (m.seen[slot] == std::uint64_t{sequence} + 1 && m.complete[slot] != 0) ack.received |= 1u << i;
  }
  return ack;
}

std::span<const Anomaly> ClientMirror::anomalies() const noexcept { return impl_->anomalies; }

const MirrorStats& ClientMirror::stats() const noexcept { return impl_->stats; }

}  // namespace sightline
