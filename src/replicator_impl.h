// The Replicator's private state: per-client tables and reliable queues, per-entity send marks,
// the buffers of one send, and the context one client's send passes through its phases.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "candidate_order.h"
#include "sightline/protocol.h"
#include "sightline/replicator.h"
#include "task_runner.h"
#include "tick_view.h"

namespace sightline {

// Largest record framing around a payload: a spawn's type, reliable id, index, generation, reason,
// state age, length.
inline constexpr std::size_t kMaxRecordFraming = 1 + 5 + 5 + 5 + 1 + 5 + 5;

// Largest message framing: type, reliable id, length.
inline constexpr std::size_t kMaxMessageFraming = 1 + 5 + 5;

// Largest event framing: type, flags, reliable id, age, class, x, z, subject's index and
// generation, length.
inline constexpr std::size_t kMaxEventFraming = 1 + 1 + 5 + 5 + 5 + 4 + 4 + 5 + 5 + 5;

static_assert(kMinPacketBytes == kStateHeaderBytes + kMaxRecordFraming + 28 &&
                  kMinPacketBytes == kStateHeaderBytes + kMaxEventFraming + 15,
              "replicator.h states the largest payloads at a packet size");

// Capacities a client's tables start with (see make_room).
inline constexpr std::size_t kMemberFloor = 64;
inline constexpr std::size_t kDespawnFloor = 64;
inline constexpr std::size_t kQueueFloor = 64;
inline constexpr std::size_t kStoreFloor = 1024;
inline constexpr std::size_t kSentWindow = 256;
inline constexpr std::size_t kOutboxFloor = 256;  // bytes of waiting messages
inline constexpr std::size_t kOutboxCountFloor = 16;

// 32 bytes: every send walks each table whole, and copies it when the set changed.
struct Member {
  EntityId id;
  // Pending: the send it joined the World's set at; then the send of its last spawn or update.
  std::uint64_t since = 0;
  std::uint64_t interacted_until = 0;
  float acc = 0.0f;
  bool pending = true;  // its spawn has not been written
  SpawnReason reason = SpawnReason::near;
  bool created = false;  // it joined the set at the tick it was created
};
static_assert(sizeof(Member) == 32);

struct Reliable {
  std::uint32_t id = 0;
  RecordType type = RecordType::spawn;
  std::uint8_t reason = 0;
  bool created = false;           // spawns
  EntityId entity;                // an event's subject, null for none
  std::uint32_t event_class = 0;  // events
  float x = 0.0f;
  float z = 0.0f;
  std::uint64_t last_sent = 0;
  std::uint32_t payload_begin = 0;  // unreliable spawns: the full state first sent, in `store`
  std::uint32_t payload_size = 0;
  std::uint32_t state_tick = 0;  // the tick that state is from
};

/// Delta updates: how a member's update went to its client.
struct UpdateChoice {
  bool keep = false;   // the client is asked to keep the state
  bool delta = false;  // written against the state it kept
};

/// Delta updates: what one member's client was sent to keep. Two halves of `delta_state_bytes`
/// each in ClientState::baseline_bytes at `slot`: the confirmed state (`base`) and the one asked
/// to be kept and not yet confirmed (`candidate`, unreliable delivery), -1 for none.
struct Baseline {
  EntityId id;
  std::uint32_t slot = 0;
  // Unreliable: no state is asked to be kept until the client has applied the reliable records
  // below this (its spawn among them), so that one kept by a copy of the entity the client
  // still held from before it left and came back never counts.
  std::uint32_t ready_after = 0;
  std::int8_t base = -1;
  std::int8_t candidate = -1;
  std::uint32_t candidate_sequence = 0;  // the packet it went in
  std::array<std::uint32_t, 2> tick{};   // of each half's state
  std::array<std::uint32_t, 2> size{};
};

/// Entity references: a member whose state, as the client was last sent it, names with null an
/// entity the client did not hold (its full part or its update part). Once the client holds the
/// target, the member's full state goes again (a refresh).
struct Unresolved {
  EntityId referrer;
  StatePart part = StatePart::full;
  EntityId target;
};

struct ClientState {
  ClientId id;
  bool known = false;
  std::vector<Member> members;  // the World's set, sorted by index
  std::vector<Member> merge;
  std::vector<Reliable> queue;  // unacknowledged spawns and despawns from `head`, by id
  std::size_t head = 0;
  std::vector<std::uint8_t> store;
  std::vector<DespawnRecord> waiting_despawns;  // not yet given an id: the window was full
  std::uint32_t next_reliable = 0;
  std::uint32_t acked = 0;
  std::uint32_t sequence = 0;
  // The interest status the client was last sent (none before its first packet), the sequence
  // of the first packet that carried it, and the highest sequence an ack named (unreliable).
  InterestStatus status_sent;
  bool status_known = false;
  std::uint32_t status_sequence = 0;
  std::uint32_t acked_sequence = 0;
  bool catching_up = true;
  std::uint32_t pending = 0;
  std::uint32_t longest_wait = 0;
  std::uint64_t bytes = 0;
  std::uint64_t packets_sent = 0;
  // This send's packets: their bytes, where each begins and ends in them, and views of them.
  std::vector<std::uint8_t> out;
  std::vector<std::uint32_t> packet_offsets;
  std::vector<std::span<const std::uint8_t>> packets;
  // Unreliable: the send each recent packet went at (by sequence % kSentWindow), and the smoothed
  // round trip in sends from acks of them.
  std::array<std::uint64_t, kSentWindow> packet_send{};
  std::array<std::uint32_t, kSentWindow> packet_sequence{};
  float round_trip = 0.0f;
  bool measured = false;
  std::uint32_t update_bytes = 16;  // the filler's estimate of an update record's size, from the last send
  // Messages queued for it and not yet written, oldest first: their bytes, and each one's size.
  std::vector<std::uint8_t> outbox;
  std::vector<std::uint32_t> outbox_sizes;
  // Delta updates: the members' baselines, sorted by entity index; their bytes, and the slots
  // of members that left, for the next.
  std::vector<Baseline> baselines;
  std::vector<std::uint8_t> baseline_bytes;
  std::vector<std::uint32_t> free_slots;
  std::uint32_t slots = 0;
  // Unreliable: whether an ack's `received` bits named each recent packet (by sequence %
  // kSentWindow, with packet_sequence).
  std::array<std::uint8_t, kSentWindow> packet_received{};
  // Entity references: what waits to resolve, sorted by (referrer, part, target), and the same
  // entries sorted by (target, referrer, part); and, unreliable, the spawns not yet acknowledged
  // (sorted by entity index, with their reliable ids), whose entities a reference does not name yet.
  std::vector<Unresolved> unresolved;
  std::vector<Unresolved> waiting_on;
  std::vector<EntityId> refresh_due;  // refreshes a full window or a failed serializer held back
  std::vector<std::pair<EntityId, std::uint32_t>> unconfirmed;

  void reset(ClientId client, bool unreliable);
};

/// The member with exactly this id in a table sorted by index, or null.
[[nodiscard]] inline Member* find(std::vector<Member>& table, EntityId e) noexcept {
  const auto at = std::lower_bound(table.begin(), table.end(), e.index,
                                   [](const Member& m, std::uint32_t index) { return m.id.index < index; });
  return at != table.end() && at->id == e ? &*at : nullptr;
}

/// Room for `extra` more elements, with headroom and at least `floor`: per-client tables creep
/// past their early highs for a long while, and each step of std::vector's own growth from a
/// small size would allocate in a steady send.
template <class T>
void make_room(std::vector<T>& v, std::size_t extra, std::size_t floor = 16) {
  if (v.capacity() < v.size() + extra) v.reserve(std::max(2 * (v.size() + extra), floor));
}

// Starts loading the cache line at p: a hint, nothing where the compiler has no builtin for it.
inline void prefetch(const void* p) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p);
#else
  (void)p;
#endif
}

struct EntryOrder {
  std::uint32_t critical = 0;  // 0 goes first
  float distance = 0.0f;
  std::uint32_t depth = 0;
  std::uint32_t index = 0;
  std::uint32_t member = 0;  // position in ClientState::members
  float scale = 1.0f;        // the root's radius scale: its promise radius is scaled too
  friend bool operator<(const EntryOrder& a, const EntryOrder& b) noexcept {
    if (a.critical != b.critical) return a.critical < b.critical;
    if (a.distance != b.distance) return a.distance < b.distance;
    if (a.depth != b.depth) return a.depth < b.depth;
    return a.index < b.index;
  }
};

/// A promise violation and its client's slot.
struct PlacedViolation {
  std::uint32_t client = 0;
  std::uint32_t rank = 0;  // its place in ReplicatorImpl::placed before the sort
  PromiseViolation violation;
};

/// What one send writes of an entity's part, shared by every client: the bytes, and where they
/// name other entities (bit offsets into the bytes).
struct Payload {
  std::span<const std::uint8_t> bytes;
  std::span<const EntityReference> references;
};

/// Payloads (or their references) of one send, in blocks that never move while the send runs (a
/// payload other workers read stays where it was written), kept from send to send.
template <class T, std::size_t kBlockFloor>
class BlockArena {
 public:
  /// Room for `count` contiguous elements (at most the block size): where they go. Call take()
  /// with what was used.
  T* room(std::size_t count) {
    if (block_size_ < count) {
      // Larger payloads than the blocks were made for: start over with larger blocks.
      blocks_.clear();
      block_size_ = std::max(kBlockFloor, count);
      block_ = used_ = 0;
    }
    if (block_ < blocks_.size() && block_size_ - used_ < count) {
      ++block_;
      used_ = 0;
    }
    if (block_ == blocks_.size()) blocks_.push_back(std::make_unique<T[]>(block_size_));
    return blocks_[block_].get() + used_;
  }
  void take(std::size_t count) noexcept { used_ += count; }
  void clear() noexcept {
    block_ = 0;
    used_ = 0;
  }

 private:
  std::vector<std::unique_ptr<T[]>> blocks_;
  std::size_t block_size_ = 0;
  std::size_t block_ = 0;
  std::size_t used_ = 0;
};
using PayloadArena = BlockArena<std::uint8_t, 64 * 1024>;
using ReferenceArena = BlockArena<EntityReference, 1024>;

/// What one worker of a send owns: its scratch, its counts, its payloads and its first error.
/// Clients are shared among workers by range; a worker's results are summed in worker order.
struct SendWorker {
  SendStats stats;
  Status error;  // the lowest serializer failure it met (failure_key), and its key
  std::uint64_t error_key = 0;
  PayloadArena payloads;
  ReferenceArena references;
  std::vector<std::uint8_t> measured;  // share_payloads off: each record's payload, measured then written
  std::vector<EntryOrder> entry_order;
  std::vector<Candidate> candidates;
  std::vector<Candidate> sort_scratch;  // as large as candidates' capacity
  // Per entity slot, for the client at hand.
  std::vector<std::uint64_t> spawn_stamp;  // == stamp when spawned to the client at hand
  std::vector<std::uint8_t> spawn_reason;
  std::vector<std::uint64_t> despawn_stamp;  // == stamp when despawned by a record of this tick
  std::uint64_t stamp = 0;
  // Development: this send's promise violations, each with its client's slot, in the order
  // this worker found them. Kept here, not per client, so the storage is
  // one worker's high-water mark and a client's first violation allocates nothing.
  std::vector<PlacedViolation> violations;
  // Delta updates: the runs and the record of the update at hand.
  std::vector<std::uint8_t> delta_runs;
  std::vector<std::uint8_t> delta_record;
  // Entity references: the record at hand as the client at hand may read it (the references to
  // what it does not hold made null), those made null, and the members to refresh.
  std::vector<std::uint8_t> own;
  std::array<EntityId, kMaxReferences> nulls{};
  std::size_t null_count = 0;
  std::array<Unresolved, kMaxReferences> fresh{};  // note_references' sorted entries
  std::vector<EntityId> refresh;
  std::vector<EntityId> named;        // entities a reference may name from this send on, not before
  std::uint32_t most_references = 0;  // in one payload it wrote this send
};

/// One client's send in progress: what its phases (ReplicatorImpl::send_client) share.
struct ClientSend {
  ClientState& c;
  const ClientTick& client;
  SendWorker& w;
  std::uint64_t now = 0;   // the send's number
  std::uint32_t tick = 0;  // the World tick its packets carry
  bool unreliable = false;
  bool settled = false;      // caught up, origins unchanged: the promise holds (development)
  std::uint32_t joined = 0;  // members new to the table at this send
  std::uint32_t first_packet = 0;
  // The packet being written, and the bytes spent.
  std::size_t packet_begin = 0;
  bool open = false;
  PacketWriter writer{{}, PacketHeader{}};
  std::uint64_t budget_used = 0;
  std::uint64_t entry_used = 0;
};

/// Distance from the client's nearest origin to the surface of a sphere at (x, z) (0 inside it).
[[nodiscard]] inline float surface(const ClientTick& client, float x, float z, float bound) noexcept {
  float best = std::numeric_limits<float>::infinity();
  for (std::size_t o = 0; o < client.origins; ++o) {
    const float dx = x - client.origin_x[o];
    const float dz = z - client.origin_z[o];
    best = std::min(best, dx * dx + dz * dz);
  }
  return std::max(0.0f, std::sqrt(best) - bound);
}

/// Distance from the client's nearest origin to the surface of root r (0 inside it).
[[nodiscard]] inline float surface(const TickView& view, const ClientTick& client, std::uint32_t r) noexcept {
  return surface(client, view.xs[r], view.zs[r], view.bound[r]);
}

/// What a member's priority reads of its entity e (root r): the root's place and bound, and
/// e's own speed. One struct, so a member costs one cache line of it rather than four.
struct Motion {
  float x = 0.0f;
  float z = 0.0f;
  float bound = 0.0f;
  float speed = 0.0f;
};

[[nodiscard]] inline Motion motion_of(const TickView& view, std::uint32_t e, std::uint32_t r) noexcept {
  const EntityCold& cold = view.cold[e];
  return {view.xs[r], view.zs[r], view.bound[r],
          std::sqrt(cold.vel_x * cold.vel_x + cold.vel_z * cold.vel_z)};
}

class ReplicatorImpl {
 public:
  ReplicatorImpl(World& w, const ReplicatorDef& settings);
  ReplicatorImpl(const ReplicatorImpl&) = delete;
  ReplicatorImpl& operator=(const ReplicatorImpl&) = delete;
  ~ReplicatorImpl();

  Status send();
  void report_drops();
  // What report_drops last told the log, per kind.
  struct Reported {
    std::uint64_t last = 0;   // the send of the last report
    std::uint64_t count = 0;  // since it
    bool reported = false;
  };
  static constexpr std::uint64_t kReportEverySends = 64;
  Reported reported_messages;
  Reported reported_events;
  Reported reported_violations;
  /// Applies a decoded ack of the client's (reliable_queue.cpp); refuses reliable ids never sent.
  Status receive_ack(ClientState& c, const AckPacket& ack);

  TickSource world;
  TickView view;  // of the tick at hand, set by send()
  ReplicatorDef def;
  std::size_t max_payload = 0;
  std::uint64_t sends = 0;
  SendStats stats;
  std::uint32_t reference_width = 0;  // the most entity references one payload carried so far
  Status first_error;
  std::vector<ClientState> clients;  // by client slot

  // Per entity slot.
  std::vector<float> priority;
  std::vector<std::uint32_t> priority_generation;  // the generation `priority` was set for
  bool priorities_set = false;                     // false: every priority is 1
  std::vector<std::uint64_t> teleport_send;        // send + 1 at which its tree was teleported
  std::vector<std::uint32_t> born_generation;      // development: the generation last seen alive
  std::vector<std::uint64_t> born_send;
  // Each entity's Motion, this send, where the members outnumber the entity slots (each
  // entity is then read by a client or more, and packing saves misses); empty otherwise.
  std::vector<Motion> motion;
  bool motion_packed = false;
  // This send's update payload of every entity a client holds is serialized with the packing of
  // the motion, in slot order, before any client's packets (pack_motion).
  bool serialize_ahead = false;
  // Per part: what its records carry this send (a full payload; an update's whole record, framed
  // once for every client). One struct, so a lookup or an entry touches one cache
  // line of a table as large as the world. `state`, read and written atomically (payloads.cpp),
  // is below 2 * (send + 1) before this send's payload is claimed, 2 * (send + 1) while the
  // worker that claimed it writes it, and 2 * (send + 1) + 1 once `bytes` and `size` hold it
  // (`bytes` null when the serializer failed).
  // A payload of up to kSmallPayload bytes that names no entity is kept in the entry itself
  // (`bytes` points at `small`), so reading it costs no second cache line; one that does keeps
  // where its references are in its place.
  struct alignas(32) CachedPayload {
    static constexpr std::size_t kSmallPayload = 12;
    std::uint64_t state = 0;
    const std::uint8_t* bytes = nullptr;
    std::uint16_t size = 0;  // a record is at most kMaxPacketBytes
    std::uint16_t reference_count = 0;
    std::array<std::uint8_t, kSmallPayload> small{};  // or, with references, where they are

    // `state` read and written by several workers at once: std::atomic_ref's operations, as the
    // compilers' builtins (Emscripten 3.1.6's libc++ has no atomic_ref).
    [[nodiscard]] std::uint64_t load_state() const noexcept {
      return __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    }
    /// Sets `state` to `desired` if it still holds `expected`; else false, `expected` what it holds.
    bool claim_state(std::uint64_t& expected, std::uint64_t desired) noexcept {
      return __atomic_compare_exchange_n(&state, &expected, desired, false, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE);
    }
    void publish_state(std::uint64_t value) noexcept { __atomic_store_n(&state, value, __ATOMIC_RELEASE); }

    void set_references(const EntityReference* at) noexcept { std::memcpy(small.data(), &at, sizeof at); }
    [[nodiscard]] std::span<const EntityReference> references() const noexcept {
      if (reference_count == 0) return {};
      const EntityReference* at = nullptr;
      std::memcpy(&at, small.data(), sizeof at);
      return {at, reference_count};
    }
  };
  static_assert(sizeof(CachedPayload) == 32);
  static_assert(kMaxPacketBytes <= 0xffff, "a record's size fits CachedPayload::size");
  std::array<std::vector<CachedPayload>, 2> cache;

  // Per send.
  std::vector<SendWorker> workers;           // one per worker of the World's tasks
  std::vector<PromiseViolation> violations;  // every client's, in client order
  std::vector<PlacedViolation> placed;       // the workers' violations, being put in client order

  void grow_entities();
  /// Fills `motion` for this send, or leaves it unused where few members read it; serializes
  /// ahead where the last send says it pays.
  void pack_motion(TaskRunner& tasks, bool threaded);
  /// The entity's full state for a spawn this send, in `bytes`; false (and the error noted) when
  /// the serializer fails.
  bool full_payload(SendWorker& w, EntityId e, Payload& payload) {
    return cached(w, e, StatePart::full, payload);
  }
  /// The entity's whole update record for this send (encode_update_record): the same bytes for
  /// every client, copied into each packet as they are. False (and the error noted) when the
  /// serializer fails.
  bool update_record(SendWorker& w, EntityId e, Payload& record) {
    return cached(w, e, StatePart::update, record);
  }
  /// What a record of `part` carries this send: the full payload, or the whole update record.
  bool cached(SendWorker& w, EntityId e, StatePart part, Payload& payload);
  /// cached() where it is not yet written this send, or not shared (payloads.cpp).
  bool first_cached(SendWorker& w, EntityId e, StatePart part, Payload& payload);
  /// Serializes into the worker's payloads (an update part then framed as its record): false, and
  /// the failure noted, when the serializer fails.
  bool serialize(SendWorker& w, EntityId e, StatePart part, Payload& payload);
  void note_error(SendWorker& w, EntityId e, StatePart part, const char* why);
  /// The order of serializer failures, for the one a send reports: by entity index, then the
  /// full part before the update part. Each part of an entity is serialized once a send, but by
  /// whichever worker needs it first: an order over what failed, not over who met it first,
  /// makes the report the same for any split.
  [[nodiscard]] static std::uint64_t failure_key(EntityId e, StatePart part) noexcept {
    return std::uint64_t{e.index} << 1 | (part == StatePart::full ? 0u : 1u);
  }

  // One client's send (client_send.cpp), its phases in order.
  void send_client(SendWorker& w, ClientState& c, const ClientTick& client);
  void merge_membership(ClientSend& s);
  void resend_reliable(ClientSend& s);  // reliable_queue.cpp
  void send_despawns(ClientSend& s);
  void pace_entry(ClientSend& s);
  void send_refreshes(ClientSend& s);  // entity_references.cpp
  void send_events(ClientSend& s);     // event_send.cpp
  void send_messages(ClientSend& s);   // message_send.cpp
  void fill_updates(ClientSend& s);    // update_selection.cpp
  void finish_client(ClientSend& s);

  // Membership.
  void leave_unrecorded(ClientSend& s, const Member& m);

  // Entity references (entity_references.cpp).
  /// The payload of `referrer` as this client may read it: shared, or in the worker's `own` with
  /// each reference to an entity it does not hold made null (those listed in the worker's `nulls`).
  /// A reference to the referrer itself stands: the record carries it.
  /// A payload that names no entity (most) is the shared bytes as they are: inline.
  std::span<const std::uint8_t> own_bytes(ClientSend& s, EntityId referrer, const Payload& payload) {
    if (payload.references.empty()) {
      s.w.null_count = 0;
      return payload.bytes;
    }
    return own_copy(s, referrer, payload);
  }
  /// own_bytes for a payload with references.
  std::span<const std::uint8_t> own_copy(ClientSend& s, EntityId referrer, const Payload& payload);
  /// After a record of `part` of `referrer` went to the client as own_bytes left it, the references
  /// it left null wait to resolve. `supersedes`: the record replaces what the client held of that
  /// part (of every part, for the full one), so what waited for the earlier records goes; false
  /// for a resend, whose first copy the client may have applied instead.
  void note_references(ClientSend& s, EntityId referrer, StatePart part, bool supersedes);
  /// Whether a reference may name the entity to the client: its viewer, or a member whose spawn
  /// went (unreliable: and was acknowledged).
  [[nodiscard]] bool names(const ClientSend& s, EntityId target) const noexcept;
  /// Unreliable: the spawn of `e` went with reliable id `id`; acks covered some spawns (their
  /// entities are named from this send on).
  void note_unconfirmed(ClientState& c, EntityId e, std::uint32_t id);
  void prune_unconfirmed(ClientSend& s);
  /// Entries of `unresolved`, and the same in `waiting_on`, go.
  void erase_unresolved(ClientState& c, std::vector<Unresolved>::iterator first,
                        std::vector<Unresolved>::iterator last);
  /// The member left the client: nothing waits for it any more.
  void forget_referrer(ClientState& c, EntityId referrer);

  // Delta updates (delta_updates.cpp).
  /// The record to write for member e's update this send, given its shared update record: that
  /// record, or one for this client (a delta against its baseline, or the state marked to be
  /// kept) in the worker's scratch; `choice` says which.
  std::span<const std::uint8_t> client_update(ClientSend& s, EntityId e, std::span<const std::uint8_t> record,
                                              UpdateChoice& choice);
  /// After the record went into the open packet: a state to keep becomes the baseline (reliable),
  /// or the one waiting for the client's confirmation (unreliable); the references it left null
  /// wait to resolve.
  void note_written(ClientSend& s, EntityId e, std::span<const std::uint8_t> record, UpdateChoice choice) {
    if (choice.delta) ++s.w.stats.delta_updates;
    if (choice.keep) note_kept(s, e, record);
    if (s.w.null_count != 0 || !s.c.unresolved.empty()) note_references(s, e, StatePart::update, true);
  }
  void note_kept(ClientSend& s, EntityId e, std::span<const std::uint8_t> record);
  /// A member's first baseline entry, no state in it yet.
  Baseline* add_baseline(ClientState& c, EntityId e);
  /// The member left the client: its baselines go.
  void drop_baseline(ClientState& c, EntityId e);
  /// The bytes of an update record as written by one of the above.
  std::span<const std::uint8_t> update_bytes(ClientSend& s, EntityId e, std::span<const std::uint8_t> record,
                                             UpdateChoice& choice) {
    choice = {};
    return def.delta_updates ? client_update(s, e, record, choice) : record;
  }

  // The reliable queue (reliable_queue.cpp).
  [[nodiscard]] bool window_open(const ClientSend& s) const noexcept {
    return !s.unreliable || s.c.next_reliable - s.c.acked < kReliableWindow;
  }
  /// The next reliable id, the record kept for resending under unreliable delivery.
  /// `r` as the caller filled it (type, entity, reason, created, an event's fields).
  std::uint32_t enqueue(ClientSend& s, Reliable r, std::span<const std::uint8_t> bytes);

  // Update selection (update_selection.cpp).
  void fill_fixed_rate(ClientSend& s);
  void score_members(ClientSend& s);
  template <bool kPacked, bool kPlain>
  void score_members_from(ClientSend& s);
  void fill_by_priority(ClientSend& s);

  // The client's packets: a record goes into the open packet, or a new one when it does not fit.
  void close_packet(ClientSend& s);
  bool room_for(ClientSend& s, std::size_t bytes);
  std::size_t write_spawn(ClientSend& s, std::uint32_t id, EntityId e, SpawnReason reason, bool created,
                          std::span<const std::uint8_t> bytes, std::uint32_t age);
  std::size_t write_despawn(ClientSend& s, std::uint32_t id, EntityId e, DespawnReason reason);
  std::size_t write_refresh(ClientSend& s, std::uint32_t id, EntityId e, std::span<const std::uint8_t> bytes,
                            std::uint32_t age);
  std::size_t write_message(ClientSend& s, std::uint32_t id, std::span<const std::uint8_t> payload);
  /// An event as `r` holds it (subject, class, position; its id, and its age from r.state_tick,
  /// when `reliable`).
  std::size_t write_event(ClientSend& s, bool reliable, const Reliable& r,
                          std::span<const std::uint8_t> payload);

  // Events (event_send.cpp): each event of the tick's payload, written once a send before the
  // clients' packets (events[i]'s bytes are event_bytes[event_offsets[i], event_offsets[i + 1]),
  // event_written[i] 0 where its serializer failed).
  std::size_t max_event_payload = 0;
  std::vector<std::uint8_t> event_bytes;
  std::vector<std::uint32_t> event_offsets;
  std::vector<std::uint8_t> event_written;
  Status event_error;  // the first event whose serializer failed this send
  std::uint64_t event_failures = 0;
  void serialize_events();

  // Messages (message_send.cpp): queued between sends, then put in each recipient's outbox at the
  // start of send().
  enum class MessageTo : std::uint8_t { client, key, space };
  struct QueuedMessage {
    MessageTo to = MessageTo::client;
    std::uint32_t slot = 0;        // the client's or the space's
    std::uint32_t generation = 0;  // the client's
    std::uint64_t key = 0;         // stored form (interest_keys.h)
    std::uint32_t begin = 0;       // in message_store
    std::uint32_t size = 0;
  };
  std::size_t max_message_payload = 0;
  std::vector<QueuedMessage> messages;
  std::vector<std::uint8_t> message_store;
  std::uint64_t messages_dropped = 0;  // this send's, by fan_out_messages
  Status queue_message(const QueuedMessage& m, std::span<const std::uint8_t> payload);
  void fan_out_messages();
};

// The packet functions run once per record, from three files: inline here.

/// Most lookups find the bytes written: that path inline, the rest in payloads.cpp.
inline bool ReplicatorImpl::cached(SendWorker& w, EntityId e, StatePart part, Payload& payload) {
  if (def.share_payloads) {
    CachedPayload& cached = cache[static_cast<int>(part)][e.index];
    const std::uint64_t ready = 2 * (sends + 1) + 1;
    if (cached.load_state() == ready && cached.bytes != nullptr) {
      payload.bytes = {cached.bytes, cached.size};
      payload.references = cached.references();
      return true;
    }
  }
  return first_cached(w, e, part, payload);
}

inline void ReplicatorImpl::close_packet(ClientSend& s) {
  if (!s.open) return;
  const std::size_t size = s.writer.finish().size();
  ClientState& c = s.c;
  c.out.resize(s.packet_begin + size);
  make_room(c.packet_offsets, 2);
  c.packet_offsets.push_back(static_cast<std::uint32_t>(s.packet_begin));
  c.packet_offsets.push_back(static_cast<std::uint32_t>(s.packet_begin + size));
  s.open = false;
}

/// Room for a record of `bytes`: in the open packet, or in a new one (its header is charged to
/// the budget).
inline bool ReplicatorImpl::room_for(ClientSend& s, std::size_t bytes) {
  if (s.open && s.writer.room() >= bytes) return true;
  close_packet(s);
  std::vector<std::uint8_t>& out = s.c.out;
  s.packet_begin = out.size();
  make_room(out, def.packet_bytes, def.packet_bytes);
  out.resize(s.packet_begin + def.packet_bytes);
  PacketHeader header;
  header.delivery = def.delivery;
  header.sequence = s.c.sequence++;
  s.c.packet_send[header.sequence % kSentWindow] = s.now;
  s.c.packet_sequence[header.sequence % kSentWindow] = header.sequence;
  s.c.packet_received[header.sequence % kSentWindow] = 0;
  header.tick = s.tick;
  s.writer = PacketWriter({out.data() + s.packet_begin, def.packet_bytes}, header);
  s.open = true;
  s.budget_used += kStateHeaderBytes;
  return s.writer.room() >= bytes;
}

inline std::size_t ReplicatorImpl::write_spawn(ClientSend& s, std::uint32_t id, EntityId e,
                                               SpawnReason reason, bool created,
                                               std::span<const std::uint8_t> bytes, std::uint32_t age) {
  const std::size_t size = spawn_record_bytes(id, e, bytes.size(), age);
  if (room_for(s, size)) s.writer.add_spawn(id, e, reason, created, bytes, age);
  return size;
}

inline std::size_t ReplicatorImpl::write_despawn(ClientSend& s, std::uint32_t id, EntityId e,
                                                 DespawnReason reason) {
  const std::size_t size = despawn_record_bytes(id, e);
  if (room_for(s, size)) s.writer.add_despawn(id, e, reason);
  return size;
}

inline std::size_t ReplicatorImpl::write_refresh(ClientSend& s, std::uint32_t id, EntityId e,
                                                 std::span<const std::uint8_t> bytes, std::uint32_t age) {
  const std::size_t size = refresh_record_bytes(id, e, bytes.size(), age);
  if (room_for(s, size)) s.writer.add_refresh(id, e, bytes, age);
  return size;
}

inline std::size_t ReplicatorImpl::write_message(ClientSend& s, std::uint32_t id,
                                                 std::span<const std::uint8_t> payload) {
  const std::size_t size = message_record_bytes(id, payload.size());
  if (room_for(s, size)) s.writer.add_message(id, payload);
  return size;
}

inline std::size_t ReplicatorImpl::write_event(ClientSend& s, bool reliable, const Reliable& r,
                                               std::span<const std::uint8_t> payload) {
  const std::uint32_t age = reliable ? s.tick - r.state_tick : 0;
  const std::size_t size = event_record_bytes(reliable, r.id, age, r.event_class, r.entity, payload.size());
  if (room_for(s, size)) s.writer.add_event(reliable, r.id, age, r.event_class, r.x, r.z, r.entity, payload);
  return size;
}

}  // namespace sightline
