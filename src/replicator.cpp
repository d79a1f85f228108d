// The Replicator: from each client's World set to its packets of one send.
#include "sightline/replicator.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "format_value.h"
#include "sightline/world.h"
#include "tick_view.h"

namespace sightline {
namespace {

// Largest record framing around a payload: type, reliable id, index, generation, reason, length.
constexpr std::size_t kMaxRecordFraming = 1 + 5 + 5 + 5 + 1 + 5;

// Capacities a client's tables start with (see make_room).
constexpr std::size_t kMemberFloor = 64;
constexpr std::size_t kDespawnFloor = 64;
constexpr std::size_t kQueueFloor = 64;
constexpr std::size_t kStoreFloor = 1024;
constexpr std::size_t kSentWindow = 256;

// 32 bytes: every send walks each table whole, and copies it when the set changed.
struct Member {
  EntityId id;
  // Pending: the send it joined the World's set at; then the send of its last spawn or update.
  std::uint64_t since = 0;
  std::uint64_t interacted_until = 0;
  float acc = 0.0f;
  bool pending = true;  // its spawn has not been written
  SpawnReason reason = SpawnReason::near;
};

struct Reliable {
  std::uint32_t id = 0;
  RecordType type = RecordType::spawn;
  std::uint8_t reason = 0;
  EntityId entity;
  std::uint64_t last_sent = 0;
  std::uint32_t payload_begin = 0;  // unreliable spawns: the full state first sent, in `store`
  std::uint32_t payload_size = 0;
  std::uint32_t state_tick = 0;  // the tick that state is from
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
  bool catching_up = true;
  std::uint32_t pending = 0;
  std::uint32_t longest_wait = 0;
  std::uint64_t bytes = 0;
  std::uint64_t packets = 0;
  std::uint32_t packet_begin = 0;  // into ReplicatorImpl::packet_spans
  std::uint32_t packet_count = 0;
  // Unreliable: the send each recent packet went at (by sequence % kSentWindow), and the smoothed
  // round trip in sends from acks of them.
  std::array<std::uint64_t, kSentWindow> packet_send{};
  std::array<std::uint32_t, kSentWindow> packet_sequence{};
  float round_trip = 0.0f;
  bool measured = false;
  std::uint32_t update_bytes = 16;  // the filler's estimate of an update record's size, from the last send

  void reset(ClientId client, bool unreliable) {
    id = client;
    known = true;
    members.reserve(kMemberFloor);
    merge.reserve(kMemberFloor);
    waiting_despawns.reserve(kDespawnFloor);
    if (unreliable) {
      queue.reserve(kQueueFloor);
      store.reserve(kStoreFloor);
    }
    members.clear();
    queue.clear();
    head = 0;
    store.clear();
    waiting_despawns.clear();
    next_reliable = acked = sequence = 0;
    catching_up = true;
    pending = longest_wait = 0;
    bytes = packets = 0;
    packet_count = 0;
  }
};

/// The member with exactly this id in a table sorted by index, or null.
Member* find(std::vector<Member>& table, EntityId e) noexcept {
  const auto at = std::lower_bound(table.begin(), table.end(), e.index,
                                   [](const Member& m, std::uint32_t index) { return m.id.index < index; });
  return at != table.end() && at->id == e ? &*at : nullptr;
}

struct EntryOrder {
  std::uint32_t critical = 0;  // 0 goes first
  float distance = 0.0f;
  std::uint32_t depth = 0;
  std::uint32_t index = 0;
  std::uint32_t member = 0;  // position in ClientState::members
  friend bool operator<(const EntryOrder& a, const EntryOrder& b) noexcept {
    if (a.critical != b.critical) return a.critical < b.critical;
    if (a.distance != b.distance) return a.distance < b.distance;
    if (a.depth != b.depth) return a.depth < b.depth;
    return a.index < b.index;
  }
};

// A candidate for an update packs its accumulator (> 0, so its bits order as the float does,
// +infinity on top) over the complement of its position in the table, which is sorted by entity
// index: one integer compare gives highest accumulator first, then lowest index, a total order,
// so selection is deterministic.
using Candidate = std::uint64_t;

Candidate candidate(float acc, std::uint32_t member) noexcept {
  return static_cast<std::uint64_t>(std::bit_cast<std::uint32_t>(acc)) << 32 | (0xFFFFFFFFu - member);
}

std::uint32_t member_of(Candidate c) noexcept { return 0xFFFFFFFFu - static_cast<std::uint32_t>(c); }

/// Moves the highest candidates of [first, last) to its front, keeping the order among them and
/// among the rest, and returns the end of them: about `want` of them, at least one, each higher
/// than any behind them. `scratch` holds as many as the range.
Candidate* gather_highest(Candidate* first, Candidate* last, std::size_t want, Candidate* scratch) noexcept {
  const auto n = static_cast<std::size_t>(last - first);
  if (want >= n) return last;
  // A threshold from an even sample, then one pass without a branch to mispredict.
  constexpr std::size_t kSamples = 64;
  std::array<Candidate, kSamples> sample;
  const std::size_t samples = std::min(n, kSamples);
  for (std::size_t i = 0; i < samples; ++i) sample[i] = first[i * n / samples];
  const std::size_t rank = want * samples / n;
  std::nth_element(sample.begin(), sample.begin() + static_cast<std::ptrdiff_t>(rank),
                   sample.begin() + static_cast<std::ptrdiff_t>(samples), std::greater<>());
  const Candidate threshold = sample[rank];
  std::size_t high = 0;
  std::size_t rest = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Candidate x = first[i];
    const auto passes = static_cast<std::size_t>(x >= threshold);
    first[high] = x;
    scratch[rest] = x;
    high += passes;
    rest += passes ^ 1;
  }
  std::copy(scratch, scratch + rest, first + high);
  return first + high;
}

/// Sorts candidates highest first, given them in table order. Accumulators order at random, on
/// which a comparison sort mispredicts every other branch: a few dozen are ranked by counting,
/// more by a stable radix sort of the accumulators alone (least significant byte first, over the
/// bytes in which they differ, the table order breaking ties), both without a branch on the
/// keys and several times faster. `scratch` holds as many.
void sort_highest_first(Candidate* first, Candidate* last, Candidate* scratch) noexcept {
  const auto n = static_cast<std::size_t>(last - first);
  if (n < 64) {
    // Each one's place is how many are higher (keys are unique): n * n compares, no branch.
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t higher = 0;
      for (std::size_t j = 0; j < n; ++j) higher += static_cast<std::size_t>(first[j] > first[i]);
      scratch[higher] = first[i];
    }
    std::copy(scratch, scratch + n, first);
    return;
  }
  // The complement of the accumulator's bits: ascending order of it is descending order of the
  // accumulator.
  auto digits = [](Candidate c) { return static_cast<std::uint32_t>(~c >> 32); };
  std::array<std::array<std::uint32_t, 256>, 4> at{};
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t d = digits(first[i]);
    ++at[0][d & 0xFF];
    ++at[1][(d >> 8) & 0xFF];
    ++at[2][(d >> 16) & 0xFF];
    ++at[3][d >> 24];
  }
  const std::uint32_t any = digits(first[0]);
  Candidate* from = first;
  Candidate* to = scratch;
  for (int byte = 0; byte < 4; ++byte) {
    const int shift = 8 * byte;
    std::array<std::uint32_t, 256>& place = at[static_cast<std::size_t>(byte)];
    if (place[(any >> shift) & 0xFF] == n) continue;  // one value: nothing to order
    std::uint32_t sum = 0;
    for (std::uint32_t& p : place) sum += std::exchange(p, sum);
    for (std::size_t i = 0; i < n; ++i) to[place[(digits(from[i]) >> shift) & 0xFF]++] = from[i];
    std::swap(from, to);
  }
  if (from != first) std::copy(from, from + n, first);
}

// Starts loading the cache line at p: a hint, nothing where the compiler has no builtin for it.
void prefetch(const void* p) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p);
#else
  (void)p;
#endif
}

/// Room for `extra` more elements, with headroom and at least `floor`: per-client tables creep
/// past their early highs for a long while, and each step of std::vector's own growth from a
/// small size would allocate in a steady send.
template <class T>
void make_room(std::vector<T>& v, std::size_t extra, std::size_t floor = 16) {
  if (v.capacity() < v.size() + extra) v.reserve(std::max(2 * (v.size() + extra), floor));
}

void put_u32(std::uint8_t* p, std::uint32_t v) noexcept {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

Status invalid_def(const std::string& field, const std::string& value, const char* rule) {
  return {ErrorCode::invalid_def, "ReplicatorDef::" + field + " is " + value + ": " + rule};
}

Status validate(const ReplicatorDef& d) {
  auto finite_nonneg = [](float v) { return std::isfinite(v) && v >= 0.0f; };
  if (d.serialize == nullptr) return invalid_def("serialize", "null", "a serializer is required");
  if (d.delivery != Delivery::reliable && d.delivery != Delivery::unreliable) {
    return invalid_def("delivery", std::to_string(static_cast<int>(d.delivery)),
                       "must be reliable or unreliable");
  }
  if (d.mode != UpdateMode::priority && d.mode != UpdateMode::fixed_rate) {
    return invalid_def("mode", std::to_string(static_cast<int>(d.mode)), "must be priority or fixed_rate");
  }
  if (!(std::isfinite(d.tick_seconds) && d.tick_seconds > 0.0f)) {
    return invalid_def("tick_seconds", format_value(d.tick_seconds), "must be finite and > 0");
  }
  if (d.packet_bytes < kStateHeaderBytes + 16 || d.packet_bytes > 65535) {
    return invalid_def("packet_bytes", std::to_string(d.packet_bytes), "must be in [33, 65535]");
  }
  if (d.budget_bytes < kStateHeaderBytes + 16) {
    return invalid_def("budget_bytes", std::to_string(d.budget_bytes), "must be >= 33");
  }
  if (d.entry_budget_bytes < 1) return invalid_def("entry_budget_bytes", "0", "must be >= 1");
  if (!finite_nonneg(d.distance_scale))
    return invalid_def("distance_scale", format_value(d.distance_scale), "must be finite and >= 0");
  if (!finite_nonneg(d.size_scale))
    return invalid_def("size_scale", format_value(d.size_scale), "must be finite and >= 0");
  if (!finite_nonneg(d.speed_scale))
    return invalid_def("speed_scale", format_value(d.speed_scale), "must be finite and >= 0");
  if (!(std::isfinite(d.interaction_boost) && d.interaction_boost >= 1.0f)) {
    return invalid_def("interaction_boost", format_value(d.interaction_boost), "must be finite and >= 1");
  }
  if (d.resend_sends < 1) return invalid_def("resend_sends", "0", "must be >= 1");
  if (d.filler_misfits < 1) return invalid_def("filler_misfits", "0", "must be >= 1");
  if (!(d.promise_fraction > 0.0f && d.promise_fraction <= 1.0f)) {
    return invalid_def("promise_fraction", format_value(d.promise_fraction), "must be in (0, 1]");
  }
  return {};
}

}  // namespace

class ReplicatorImpl {
 public:
  ReplicatorImpl(World& w, const ReplicatorDef& settings) : world(w), def(settings) {
    if (def.mode == UpdateMode::priority) world.request_periods();
    max_payload = def.packet_bytes - kStateHeaderBytes - kMaxRecordFraming;
    writing.resize(max_payload);
  }
  ReplicatorImpl(const ReplicatorImpl&) = delete;
  ReplicatorImpl& operator=(const ReplicatorImpl&) = delete;
  ~ReplicatorImpl() {
    if (def.mode == UpdateMode::priority) world.release_periods();
  }

  Status send();
  void send_client(ClientState& c, const ClientTick& slot);

  TickSource world;
  TickView view;  // of the tick at hand, set by send()
  ReplicatorDef def;
  std::size_t max_payload = 0;
  std::uint64_t sends = 0;
  SendStats stats;
  Status first_error;
  std::vector<ClientState> clients;  // by client slot

  // Per entity slot.
  std::vector<float> priority;
  std::vector<std::uint32_t> priority_generation;  // the generation `priority` was set for
  bool priorities_set = false;                     // false: every priority is 1
  std::vector<std::uint64_t> spawn_stamp;          // == stamp when spawned to the client at hand
  std::vector<std::uint8_t> spawn_reason;
  std::vector<std::uint64_t> despawn_stamp;    // == stamp when despawned by a record of this tick
  std::vector<std::uint64_t> teleport_send;    // send + 1 at which its tree was teleported
  std::vector<std::uint32_t> born_generation;  // development: the generation last seen alive
  std::vector<std::uint64_t> born_send;
  // Per part: where its payload of this send is in `payloads`. One struct, so a lookup or an
  // entry touches one cache line of a table as large as the world.
  struct CachedPayload {
    std::uint64_t send = 0;  // send + 1 it is from
    std::uint32_t begin = 0;
    std::uint32_t size = 0;
  };
  std::array<std::vector<CachedPayload>, 2> cache;
  std::uint64_t stamp = 0;

  // Per send.
  std::vector<std::uint8_t> payloads;         // shared payloads of this send
  std::vector<std::uint8_t> writing;          // one payload being written (max_payload bytes)
  std::vector<std::uint8_t> out;              // every packet of this send
  std::vector<std::uint32_t> packet_offsets;  // begin, end of each packet in `out`
  std::vector<std::span<const std::uint8_t>> packet_spans;
  std::vector<PromiseViolation> violations;
  std::vector<EntryOrder> entry_order;
  std::vector<Candidate> candidates;
  std::vector<Candidate> sort_scratch;  // as large as candidates' capacity

  void grow_entities();
  /// The entity's payload of `part` for this send in `bytes`; false (and the error noted) when the
  /// serializer fails.
  bool payload(EntityId e, StatePart part, std::span<const std::uint8_t>& bytes);
  void note_error(EntityId e, StatePart part, const char* why);
};

void ReplicatorImpl::grow_entities() {
  const std::size_t n = world.entity_slots();
  if (priority.size() >= n) return;
  priority.resize(n, 1.0f);
  priority_generation.resize(n, 0);
  spawn_stamp.resize(n, 0);
  spawn_reason.resize(n, 0);
  despawn_stamp.resize(n, 0);
  teleport_send.resize(n, 0);
  born_generation.resize(n, 0);
  born_send.resize(n, 0);
  for (int p = 0; p < 2; ++p) {
    cache[p].resize(n);
  }
}

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

Status ReplicatorImpl::send() {
  view = world.view();
  grow_entities();
  stats = SendStats{};
  first_error = {};
  payloads.clear();
  out.clear();
  packet_offsets.clear();
  violations.clear();
  for (const std::uint32_t r : view.teleported_roots) teleport_send[r] = sends + 1;
  if (def.development) {
    for (std::size_t e = 0; e < view.entity_slots; ++e) {
      if (view.alive[e] && born_generation[e] != view.generation[e]) {
        born_generation[e] = view.generation[e];
        born_send[e] = sends;
      }
    }
  }
  if (clients.size() < view.client_slots) clients.resize(view.client_slots);
  for (ClientState& c : clients) {
    if (c.known && !world.holds(c.id)) c = ClientState{};
  }
  for (const ClientId id : view.live_clients) {
    ClientState& c = clients[id.index];
    if (!c.known) c.reset(id, def.delivery == Delivery::unreliable);
    send_client(c, world.client(id.index));
  }
  packet_spans.clear();
  make_room(packet_spans, packet_offsets.size() / 2);
  for (std::size_t i = 0; i + 1 < packet_offsets.size(); i += 2) {
    packet_spans.emplace_back(out.data() + packet_offsets[i], packet_offsets[i + 1] - packet_offsets[i]);
  }
  ++sends;
  return first_error;
}

void ReplicatorImpl::send_client(ClientState& c, const ClientTick& slot) {
  const std::uint64_t now = sends;
  const bool unreliable = def.delivery == Delivery::unreliable;
  const bool settled = !c.catching_up && !slot.origins_changed;
  if (slot.origins_changed) c.catching_up = true;

  // Origins and the space's radii, for distances, priorities and the promise.
  const std::size_t origins = slot.origins;
  const float* const ox = slot.origin_x.data();
  const float* const oz = slot.origin_z.data();
  const float enter = slot.enter;
  auto surface = [&](std::uint32_t r) {
    float best = std::numeric_limits<float>::infinity();
    for (std::size_t o = 0; o < origins; ++o) {
      const float dx = view.xs[r] - ox[o];
      const float dz = view.zs[r] - oz[o];
      best = std::min(best, dx * dx + dz * dz);
    }
    return std::max(0.0f, std::sqrt(best) - view.bound[r]);
  };
  std::array<std::uint32_t, kMaxOrigins + 1> origin_roots;
  const std::size_t origin_root_count = origins;
  for (std::size_t o = 0; o < origins; ++o) origin_roots[o] = view.root_of(slot.origin_entity[o]);

  // 1. Membership: merge the World's set (sorted by index) into the table.
  const EntityId* const set = slot.members.data();
  const auto set_size = static_cast<std::uint32_t>(slot.members.size());
  const std::uint32_t* const periods = def.mode == UpdateMode::priority ? slot.periods : nullptr;
  const SpawnRecord* const spawned = slot.spawns.data();
  const DespawnRecord* const despawned = slot.despawns.data();
  ++stamp;
  for (std::uint32_t i = 0; i < slot.spawns.size(); ++i) {
    spawn_stamp[spawned[i].entity.index] = stamp;
    spawn_reason[spawned[i].entity.index] = static_cast<std::uint8_t>(spawned[i].reason);
  }
  // Despawns in the World's order (attachments before their parents); a member whose spawn never
  // went leaves without a record.
  make_room(c.waiting_despawns, slot.despawns.size(), kDespawnFloor);
  for (std::uint32_t i = 0; i < slot.despawns.size(); ++i) {
    const Member* m = find(c.members, despawned[i].entity);
    if (m == nullptr || m->pending) continue;
    c.waiting_despawns.push_back(despawned[i]);
    despawn_stamp[despawned[i].entity.index] = stamp;
  }
  // A member gone from the set without a record of this tick (a tick without a send in between)
  // still leaves the client: the table follows the set, whatever was missed.
  auto gone = [&](const Member& m) {
    if (m.pending || despawn_stamp[m.id.index] == stamp) return;
    const bool alive = view.alive[m.id.index] && view.generation[m.id.index] == m.id.generation;
    make_room(c.waiting_despawns, 1, kDespawnFloor);
    c.waiting_despawns.push_back({m.id, alive ? DespawnReason::left : DespawnReason::destroyed});
  };
  // Most sends find the set as the table holds it, or changed in a few places: the runs the
  // table already holds are copied whole.
  const std::size_t held = c.members.size();
  std::size_t kept = 0;
  while (kept < held && kept < set_size && c.members[kept].id == set[kept]) ++kept;
  std::uint32_t joined = 0;
  c.merge.clear();
  make_room(c.merge, set_size, kMemberFloor);  // every send, so the table's two buffers grow in step
  if (kept != held || kept != set_size) {
    c.merge.insert(c.merge.end(), c.members.begin(), c.members.begin() + static_cast<std::ptrdiff_t>(kept));
    std::size_t old = kept;
    for (std::size_t i = kept; i < set_size;) {
      const EntityId e = set[i];
      while (old < held && c.members[old].id.index < e.index) gone(c.members[old++]);
      if (old < held && c.members[old].id.index == e.index && c.members[old].id != e) gone(c.members[old++]);
      if (old < held && c.members[old].id == e) {
        const std::size_t from = old;
        while (i < set_size && old < held && c.members[old].id == set[i]) {
          ++i;
          ++old;
        }
        c.merge.insert(c.merge.end(), c.members.begin() + static_cast<std::ptrdiff_t>(from),
                       c.members.begin() + static_cast<std::ptrdiff_t>(old));
        continue;
      }
      Member m;
      m.id = e;
      m.since = now;
      m.reason =
          spawn_stamp[e.index] == stamp ? static_cast<SpawnReason>(spawn_reason[e.index]) : SpawnReason::near;
      c.merge.push_back(m);
      ++joined;
      ++i;
    }
    while (old < held) gone(c.members[old++]);
    c.members.swap(c.merge);
  }

  // 2. Packets: reliable records first, then updates.
  const auto tick = static_cast<std::uint32_t>(view.ticks == 0 ? 0 : view.ticks - 1);
  const std::uint32_t first_packet = static_cast<std::uint32_t>(packet_offsets.size() / 2);
  std::size_t packet_begin = 0;
  bool open = false;
  PacketWriter writer({}, PacketHeader{});
  std::uint64_t budget_used = 0;
  std::uint64_t entry_used = 0;
  auto close = [&] {
    if (!open) return;
    const std::size_t size = writer.finish().size();
    out.resize(packet_begin + size);
    make_room(packet_offsets, 2);
    packet_offsets.push_back(static_cast<std::uint32_t>(packet_begin));
    packet_offsets.push_back(static_cast<std::uint32_t>(packet_begin + size));
    open = false;
  };
  // Room for a record of `bytes`: in the open packet, or in a new one (its header is charged to
  // the budget).
  auto room_for = [&](std::size_t bytes) {
    if (open && writer.room() >= bytes) return true;
    close();
    packet_begin = out.size();
    make_room(out, def.packet_bytes);
    out.resize(packet_begin + def.packet_bytes);
    PacketHeader header;
    header.delivery = def.delivery;
    header.sequence = c.sequence++;
    c.packet_send[header.sequence % kSentWindow] = now;
    c.packet_sequence[header.sequence % kSentWindow] = header.sequence;
    header.tick = tick;
    writer = PacketWriter({out.data() + packet_begin, def.packet_bytes}, header);
    open = true;
    budget_used += kStateHeaderBytes;
    return writer.room() >= bytes;
  };
  auto write_spawn = [&](std::uint32_t id, EntityId e, SpawnReason reason,
                         std::span<const std::uint8_t> bytes, std::uint32_t age) {
    const std::size_t size = spawn_record_bytes(id, e, bytes.size(), age);
    if (room_for(size)) writer.add_spawn(id, e, reason, bytes, age);
    return size;
  };
  auto write_despawn = [&](std::uint32_t id, EntityId e, DespawnReason reason) {
    const std::size_t size = despawn_record_bytes(id, e);
    if (room_for(size)) writer.add_despawn(id, e, reason);
    return size;
  };

  // Resends (unreliable): what an ack has not covered within the resend interval: resend_sends,
  // or the round trip measured from acks and a margin, whichever is longer, so a slow link is
  // not flooded with copies that were never lost.
  const std::uint64_t resend_after = std::max<std::uint64_t>(
      def.resend_sends, static_cast<std::uint64_t>(std::ceil(c.round_trip * 1.25f)) + 1);
  for (std::size_t q = c.head; unreliable && q < c.queue.size(); ++q) {
    Reliable& r = c.queue[q];
    if (now - r.last_sent < resend_after) continue;
    r.last_sent = now;
    ++stats.resends;
    if (r.type == RecordType::despawn) {
      budget_used += write_despawn(r.id, r.entity, static_cast<DespawnReason>(r.reason));
      continue;
    }
    // Fresh state while the client still holds the entity; otherwise the state it was spawned
    // with, so nothing reaches the client from a time it was not entitled to.
    std::span<const std::uint8_t> bytes{c.store.data() + r.payload_begin, r.payload_size};
    std::uint32_t age = tick - r.state_tick;
    const Member* m = find(c.members, r.entity);
    std::span<const std::uint8_t> fresh;
    if (m != nullptr && !m->pending && payload(r.entity, StatePart::full, fresh)) {
      bytes = fresh;
      age = 0;
    }
    entry_used += write_spawn(r.id, r.entity, static_cast<SpawnReason>(r.reason), bytes, age);
  }
  auto window_open = [&] { return !unreliable || c.next_reliable - c.acked < kReliableWindow; };
  auto enqueue = [&](RecordType type, EntityId e, std::uint8_t reason, std::span<const std::uint8_t> bytes) {
    Reliable r;
    r.id = c.next_reliable;
    r.type = type;
    r.reason = reason;
    r.entity = e;
    r.last_sent = now;
    if (unreliable) {
      r.payload_begin = static_cast<std::uint32_t>(c.store.size());
      r.payload_size = static_cast<std::uint32_t>(bytes.size());
      r.state_tick = tick;
      make_room(c.store, bytes.size(), kStoreFloor);
      c.store.insert(c.store.end(), bytes.begin(), bytes.end());
      make_room(c.queue, 1, kQueueFloor);
      c.queue.push_back(r);
    }
    return c.next_reliable++;
  };

  // Despawns always go, in the World's order.
  std::size_t despawns_sent = 0;
  for (; despawns_sent < c.waiting_despawns.size() && window_open(); ++despawns_sent) {
    const DespawnRecord& d = c.waiting_despawns[despawns_sent];
    const std::uint32_t id = enqueue(RecordType::despawn, d.entity, static_cast<std::uint8_t>(d.reason), {});
    budget_used += write_despawn(id, d.entity, d.reason);
    ++stats.despawns;
  }
  c.waiting_despawns.erase(c.waiting_despawns.begin(),
                           c.waiting_despawns.begin() + static_cast<std::ptrdiff_t>(despawns_sent));

  // Paced entry: what the origins need at once, then nearest first within the entry allowance.
  entry_order.clear();
  make_room(entry_order, c.members.size());
  // c.pending is still the last send's count: with no new member, none waits when it is 0.
  const bool any_pending = c.pending != 0 || joined != 0;
  for (std::uint32_t i = 0; any_pending && i < c.members.size(); ++i) {
    const Member& m = c.members[i];
    if (!m.pending) continue;
    const std::uint32_t r = view.root_of(m.id.index);
    const float d = surface(r);
    bool critical = d == 0.0f && view.bound[r] > 0.0f;
    for (std::size_t o = 0; o < origin_root_count && !critical; ++o) critical = origin_roots[o] == r;
    entry_order.push_back({critical ? 0u : 1u, d, view.depth[m.id.index], m.id.index, i});
  }
  std::sort(entry_order.begin(), entry_order.end());
  const float promise = def.promise_fraction * enter;
  for (const EntryOrder& o : entry_order) {
    if (!window_open()) break;
    Member& m = c.members[o.member];
    const std::uint32_t parent = view.parent[m.id.index];
    if (parent != TickView::kNoParent) {
      // Parent first. The World holds a tree whole, so a parent outside the table is the viewer,
      // which the client predicts and is never sent.
      const Member* p = find(c.members, EntityId{parent, view.generation[parent]});
      if (p != nullptr && p->pending) continue;
    }
    std::span<const std::uint8_t> bytes;
    if (!payload(m.id, StatePart::full, bytes)) continue;
    const std::size_t size = spawn_record_bytes(c.next_reliable, m.id, bytes.size());
    if (o.critical != 0 && entry_used != 0 && entry_used + size > def.entry_budget_bytes) continue;
    const std::uint32_t id = enqueue(RecordType::spawn, m.id, static_cast<std::uint8_t>(m.reason), bytes);
    entry_used += write_spawn(id, m.id, m.reason, bytes, 0);
    m.pending = false;
    m.acc = 0.0f;
    if (now > m.since) {
      ++stats.spawns_delayed;
      stats.spawn_delay_sends += now - m.since;
    }
    m.since = now;
    ++stats.spawns;
    if (def.development && settled && slot.culls && (m.reason == SpawnReason::near) &&
        born_send[m.id.index] < now && o.distance <= promise) {
      violations.push_back({c.id, m.id, o.distance, promise});
      ++stats.promise_violations;
    }
  }

  // Updates.
  if (def.mode == UpdateMode::fixed_rate) {
    std::size_t m = 0;
    for (const EntityId e : slot.updates) {
      while (m < c.members.size() && c.members[m].id.index < e.index) ++m;
      if (m == c.members.size() || c.members[m].id != e) continue;
      Member& member = c.members[m];
      if (member.pending || member.since == now) continue;
      std::span<const std::uint8_t> bytes;
      if (!payload(e, StatePart::update, bytes)) continue;
      const std::size_t size = update_record_bytes(e, bytes.size());
      if (room_for(size)) writer.add_update(e, bytes);
      budget_used += size;
      member.since = now;
      ++stats.updates;
    }
  } else {
    const float dt = def.tick_seconds;
    const float tenth = enter / 10.0f;
    const float distance_scale = def.distance_scale > 0.0f ? def.distance_scale : tenth;
    const float size_scale = def.size_scale > 0.0f ? def.size_scale : tenth;
    const float speed_scale = def.speed_scale > 0.0f ? def.speed_scale : tenth;
    // Without attachments every member is its own root; without teleports at this tick no
    // teleport_send is now + 1.
    const bool trees = view.attachments;
    const bool teleports = !view.teleported_roots.empty();
    candidates.clear();
    make_room(candidates, c.members.size());
    if (sort_scratch.size() < candidates.capacity()) sort_scratch.resize(candidates.capacity());
    constexpr std::uint32_t kAhead = 8;
    for (std::uint32_t i = 0; i < c.members.size(); ++i) {
      // Members are scattered over the World's arrays: each of their lines a miss, started a few
      // members ahead.
      if (i + kAhead < c.members.size()) {
        const std::uint32_t ahead = c.members[i + kAhead].id.index;
        prefetch(&view.xs[ahead]);
        prefetch(&view.zs[ahead]);
        prefetch(&view.bound[ahead]);
        prefetch(&view.vel_x[ahead]);
        prefetch(&view.vel_z[ahead]);
      }
      Member& m = c.members[i];
      if (m.pending || m.since == now) continue;
      const std::uint32_t e = m.id.index;
      const std::uint32_t r = trees ? view.root_of(e) : e;
      PriorityInputs in;
      in.client = c.id;
      in.entity = m.id;
      in.distance = surface(r);
      in.bound_radius = view.bound[r];
      in.speed = std::sqrt(view.vel_x[e] * view.vel_x[e] + view.vel_z[e] * view.vel_z[e]);
      in.period = periods != nullptr ? std::max(1u, periods[i]) : 1u;
      in.interacted = m.interacted_until > now;
      const float own = priorities_set && priority_generation[e] == m.id.generation ? priority[e] : 1.0f;
      in.base = own / static_cast<float>(in.period) / (1.0f + in.distance / distance_scale) *
                (1.0f + in.bound_radius / size_scale) * (1.0f + in.speed / speed_scale) *
                (in.interacted ? def.interaction_boost : 1.0f);
      float base = def.priority_hook != nullptr ? def.priority_hook(in, def.priority_context) : in.base;
      if (!(base >= 0.0f)) base = 0.0f;  // NaN and negatives
      base = std::min(base, 1.0e30f);
      m.acc = std::min(m.acc + base * dt, std::numeric_limits<float>::max());
      // A teleported tree jumps the queue: the client must not draw it where it was.
      const float acc =
          teleports && teleport_send[r] == now + 1 ? std::numeric_limits<float>::infinity() : m.acc;
      if (acc > 0.0f) candidates.push_back(candidate(acc, i));
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
    std::size_t begin = 0;
    std::size_t average = c.update_bytes;  // running estimate of an update record's bytes
    std::size_t growth = 1;
    std::uint64_t written = 0;
    std::uint64_t written_bytes = 0;
    std::uint32_t misfits = 0;
    auto done = [&] { return budget_used + 3 > def.budget_bytes || misfits >= def.filler_misfits; };
    while (begin < candidates.size() && !done()) {
      const std::size_t left = def.budget_bytes - budget_used;
      const std::size_t k = (left / average + def.filler_misfits) * growth;
      growth *= 2;
      Candidate* const first = candidates.data() + begin;
      Candidate* const last =
          gather_highest(first, candidates.data() + candidates.size(), k, sort_scratch.data());
      sort_highest_first(first, last, sort_scratch.data());
      // The payload cache is as large as the world and each candidate's entry a miss: start them
      // all now rather than one at a time behind each serialization.
      for (const Candidate* it = first; it != last; ++it) {
        prefetch(&cache[1][c.members[member_of(*it)].id.index]);
      }
      for (const Candidate* it = first; it != last && !done(); ++it) {
        Member& m = c.members[member_of(*it)];
        std::span<const std::uint8_t> bytes;
        if (!payload(m.id, StatePart::update, bytes)) continue;
        const std::size_t size = update_record_bytes(m.id, bytes.size());
        const bool fits_open = open && writer.room() >= size;
        const std::size_t cost = fits_open ? size : size + kStateHeaderBytes;
        if (budget_used + cost > def.budget_bytes || size + kStateHeaderBytes > def.packet_bytes) {
          ++misfits;
          continue;
        }
        misfits = 0;
        room_for(size);
        writer.add_update(m.id, bytes);
        budget_used += size;
        m.acc = 0.0f;
        m.since = now;
        ++stats.updates;
        ++written;
        written_bytes += size;
      }
      if (written != 0) average = std::max<std::size_t>(3, static_cast<std::size_t>(written_bytes / written));
      begin = static_cast<std::size_t>(last - candidates.data());
    }
    c.update_bytes = static_cast<std::uint32_t>(average);
    stats.updates_skipped += candidates.size() - written;
  }
  close();

  // Every packet of this send states the reliable ids assigned before its updates were chosen.
  const std::uint32_t packet_end = static_cast<std::uint32_t>(packet_offsets.size() / 2);
  for (std::uint32_t p = first_packet; p < packet_end; ++p) {
    put_u32(out.data() + packet_offsets[2 * p] + 11, c.next_reliable);
    const std::uint32_t size = packet_offsets[2 * p + 1] - packet_offsets[2 * p];
    c.bytes += size;
    stats.bytes += size;
  }
  c.packet_begin = first_packet;
  c.packet_count = packet_end - first_packet;
  c.packets += c.packet_count;
  stats.packets += c.packet_count;

  // After the send: pending, catching up, longest wait.
  c.pending = 0;
  c.longest_wait = 0;
  for (const Member& m : c.members) {
    if (m.pending) {
      ++c.pending;
    } else {
      c.longest_wait = std::max(
          c.longest_wait, static_cast<std::uint32_t>(std::min<std::uint64_t>(now - m.since, 0xffffffffu)));
    }
  }
  if (c.pending == 0) c.catching_up = false;
  stats.pending += c.pending;
  stats.max_pending = std::max(stats.max_pending, c.pending);
  stats.longest_wait = std::max(stats.longest_wait, c.longest_wait);
}

// --- Public API -------------------------------------------------------------------------------

Replicator::Replicator(std::unique_ptr<ReplicatorImpl> impl) noexcept : impl_(std::move(impl)) {}
Replicator::Replicator(Replicator&&) noexcept = default;
Replicator& Replicator::operator=(Replicator&&) noexcept = default;
Replicator::~Replicator() = default;

Result<Replicator> Replicator::create(World& world, const ReplicatorDef& def) {
  if (Status s = validate(def); !s) return s;
  return Replicator(std::make_unique<ReplicatorImpl>(world, def));
}

Status Replicator::send() { return impl_->send(); }

Result<std::span<const std::span<const std::uint8_t>>> Replicator::packets(ClientId client) const {
  const ReplicatorImpl& r = *impl_;
  if (Status s = r.world.check(client); !s) return s;
  if (client.index >= r.clients.size() || !r.clients[client.index].known ||
      r.clients[client.index].id != client) {
    return std::span<const std::span<const std::uint8_t>>{};
  }
  const ClientState& c = r.clients[client.index];
  return std::span<const std::span<const std::uint8_t>>(r.packet_spans)
      .subspan(c.packet_begin, c.packet_count);
}

Status Replicator::receive_ack(ClientId client, std::span<const std::uint8_t> bytes) {
  ReplicatorImpl& r = *impl_;
  if (Status s = r.world.check(client); !s) return s;
  Result<AckPacket> ack = decode_ack(bytes);
  if (!ack) return ack.status();
  if (client.index >= r.clients.size() || r.clients[client.index].id != client) {
    return {ErrorCode::invalid_argument,
            "ack from " + describe(client) + ", which has been sent nothing yet"};
  }
  ClientState& c = r.clients[client.index];
  if (ack->reliable_applied > c.next_reliable) {
    return {ErrorCode::invalid_argument, "ack from " + describe(client) + " covers reliable id " +
                                             std::to_string(ack->reliable_applied) + ", but only " +
                                             std::to_string(c.next_reliable) + " were sent"};
  }
  // A round-trip sample from the newest packet the ack names, if that packet is still on record.
  const std::size_t at = ack->latest_sequence % kSentWindow;
  if (ack->latest_sequence < c.sequence && c.packet_sequence[at] == ack->latest_sequence) {
    const auto sample = static_cast<float>(r.sends - c.packet_send[at]);
    c.round_trip = c.measured ? 0.875f * c.round_trip + 0.125f * sample : sample;
    c.measured = true;
  }
  if (ack->reliable_applied <= c.acked) return {};
  c.acked = ack->reliable_applied;
  while (c.head < c.queue.size() && c.queue[c.head].id < c.acked) ++c.head;
  if (c.head == c.queue.size()) {
    c.queue.clear();
    c.store.clear();
    c.head = 0;
  } else if (c.head >= 64 && c.head * 2 >= c.queue.size()) {
    const std::uint32_t cut = c.queue[c.head].payload_begin;
    c.queue.erase(c.queue.begin(), c.queue.begin() + static_cast<std::ptrdiff_t>(c.head));
    c.head = 0;
    c.store.erase(c.store.begin(), c.store.begin() + cut);
    for (Reliable& q : c.queue) q.payload_begin -= cut;
  }
  return {};
}

Result<std::uint32_t> Replicator::pending(ClientId client) const {
  Result<ClientSendStats> s = client_stats(client);
  if (!s) return s.status();
  return s->pending;
}

Result<ClientSendStats> Replicator::client_stats(ClientId client) const {
  const ReplicatorImpl& r = *impl_;
  if (Status s = r.world.check(client); !s) return s;
  ClientSendStats out;
  if (client.index >= r.clients.size() || r.clients[client.index].id != client ||
      !r.clients[client.index].known) {
    // Not sent to yet: everything the World holds for it waits.
    out.pending = static_cast<std::uint32_t>(r.world.client(client.index).members.size());
    out.catching_up = true;
    return out;
  }
  const ClientState& c = r.clients[client.index];
  out.pending = c.pending;
  out.held = static_cast<std::uint32_t>(c.members.size()) - c.pending;
  out.catching_up = c.catching_up;
  out.bytes = c.bytes;
  out.packets = c.packets;
  out.longest_wait = c.longest_wait;
  out.reliable_next = c.next_reliable;
  out.reliable_acked = c.acked;
  out.round_trip_sends = c.round_trip;
  return out;
}

Status Replicator::set_priority(EntityId entity, float priority) {
  ReplicatorImpl& r = *impl_;
  if (Status s = r.world.check(entity); !s) return s;
  if (!(std::isfinite(priority) && priority >= 0.0f)) {
    return {ErrorCode::invalid_argument, "priority of " + describe(entity) + " is " + format_value(priority) +
                                             ": must be finite and >= 0"};
  }
  r.grow_entities();
  r.priority[entity.index] = priority;
  r.priority_generation[entity.index] = entity.generation;
  r.priorities_set = true;
  return {};
}

Result<float> Replicator::priority(EntityId entity) const {
  const ReplicatorImpl& r = *impl_;
  if (Status s = r.world.check(entity); !s) return s;
  if (entity.index < r.priority.size() && r.priority_generation[entity.index] == entity.generation) {
    return r.priority[entity.index];
  }
  return 1.0f;
}

Status Replicator::note_interaction(ClientId client, EntityId entity) {
  ReplicatorImpl& r = *impl_;
  if (Status s = r.world.check(client); !s) return s;
  if (Status s = r.world.check(entity); !s) return s;
  if (client.index >= r.clients.size() || r.clients[client.index].id != client) return {};
  if (Member* m = find(r.clients[client.index].members, entity))
    m->interacted_until = r.sends + r.def.interaction_sends;
  return {};
}

const SendStats& Replicator::stats() const noexcept { return impl_->stats; }

std::span<const PromiseViolation> Replicator::promise_violations() const noexcept {
  return impl_->violations;
}

std::uint64_t Replicator::send_count() const noexcept { return impl_->sends; }

}  // namespace sightline
