// libFuzzer target for the packet decoder and the ClientMirror. The input is a first byte (bit 0:
// unreliable delivery; bits 1..4: history - 1) and then chunks of [u16 little-endian length][bytes],
// each fed to one mirror as a packet and to decode_ack. After each: the mirror refused exactly the
// chunks that do not decode or whose payloads fail the check, and a refused one left it exactly
// as it was; a packet that decodes is the one encoding of what it decodes to (PacketWriter writes
// the same bytes); the ack never goes back (the reliable id only under unreliable delivery); the
// table stays within max_entities; every history is within its bounds; an ack that decodes
// encodes back to the same bytes.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "packet_state.h"
#include "sightline/client_mirror.h"

namespace {

using namespace sightline;

struct Picture {
  std::vector<EntityId> held;
  std::vector<std::uint32_t> ticks;
  std::vector<std::vector<std::uint8_t>> histories;  // every snapshot's tick, part and payload, flattened
  AckPacket ack;
  MirrorStats stats;
};

Picture picture(const ClientMirror& m) {
  Picture p;
  p.held = m.held();
  for (const EntityId e : p.held) {
    p.ticks.push_back(*m.state_tick(e));
    std::vector<std::uint8_t> flat;
    for (const Snapshot& s : *m.history(e)) {
      for (int i = 0; i < 4; ++i) flat.push_back(static_cast<std::uint8_t>(s.tick >> (8 * i)));
      flat.push_back(static_cast<std::uint8_t>(s.part));
      flat.insert(flat.end(), s.payload.begin(), s.payload.end());
    }
    p.histories.push_back(std::move(flat));
  }
  p.ack = m.ack();
  p.stats = m.stats();
  return p;
}

bool same(const Picture& a, const Picture& b) {
  const MirrorStats& x = a.stats;
  const MirrorStats& y = b.stats;
  return a.held == b.held && a.ticks == b.ticks && a.histories == b.histories && a.ack == b.ack &&
         x.packets == y.packets && x.rejected + 1 == y.rejected && x.duplicates == y.duplicates &&
         x.enters == y.enters && x.updates == y.updates && x.exits == y.exits && x.events == y.events &&
         x.stale_events == y.stale_events && x.stale_updates == y.stale_updates && x.deltas == y.deltas &&
         x.reliable_duplicates == y.reliable_duplicates && x.reliable_buffered == y.reliable_buffered &&
         x.anomalies == y.anomalies;
}

constexpr std::uint32_t kMaxEntities = 64;

// Decodes the chunk on its own: whether the mirror must accept it, and whether it is canonical.
struct Expected {
  bool decodes = false;
  bool checks = false;
  // A delta update is checked as the state it rebuilds from one the mirror kept: whether that
  // passes is the mirror's to say.
  bool deltas = false;
};

Expected expect(std::span<const std::uint8_t> chunk, DecodedPacket& decoded,
                std::vector<std::uint8_t>& buffer) {
  Expected e;
  e.decodes = decode_packet(chunk, decoded).ok();
  if (!e.decodes) return e;
  buffer.assign(chunk.size(), 0);
  PacketWriter writer(buffer, decoded.header);
  e.checks = true;
  for (const WireRecord& r : decoded.records) {
    const bool added = writer.add(r);
    if (!added) __builtin_trap();
    if (r.type == RecordType::delta_update && r.base_age != 0) {
      e.deltas = true;
    } else if (r.type == RecordType::spawn || r.type == RecordType::refresh || r.type == RecordType::update ||
               r.type == RecordType::delta_update) {
      const bool full = r.type == RecordType::spawn || r.type == RecordType::refresh;
      const StatePart part = full ? StatePart::full : StatePart::update;
      e.checks = e.checks && fuzz::check_payload(r.entity, part, r.payload, nullptr);
    }
  }
  const std::span<const std::uint8_t> again = writer.finish();
  if (!std::equal(again.begin(), again.end(), chunk.begin(), chunk.end())) __builtin_trap();
  return e;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  MirrorDef def;
  def.delivery = (data[0] & 1) != 0 ? Delivery::unreliable : Delivery::reliable;
  def.history = 1 + ((data[0] >> 1) & 15);
  def.max_entities = kMaxEntities;
  def.check = fuzz::check_payload;
  Result<ClientMirror> made = ClientMirror::create(def);
  if (!made.ok()) std::abort();
  ClientMirror& mirror = made.value();
  DecodedPacket decoded;
  std::vector<std::uint8_t> buffer;
  std::size_t at = 1;
  while (at + 2 <= size) {
    const std::size_t length =
        std::min<std::size_t>(data[at] | (std::size_t{data[at + 1]} << 8), size - at - 2);
    const std::span<const std::uint8_t> chunk(data + at + 2, length);
    at += 2 + length;

    const Result<AckPacket> ack = decode_ack(chunk);
    if (ack.ok()) {
      std::array<std::uint8_t, kAckBytes> back{};
      encode_ack(*ack, back);
      if (!std::equal(back.begin(), back.end(), chunk.begin(), chunk.end())) __builtin_trap();
    } else if (ack.status().code() != ErrorCode::malformed_packet || ack.status().message().empty()) {
      __builtin_trap();
    }

    const Expected expected = expect(chunk, decoded, buffer);
    const Picture before = picture(mirror);
    const Status s = mirror.receive(chunk);
    const bool must_accept = expected.decodes && expected.checks && !expected.deltas;
    const bool may_accept = expected.decodes && expected.checks;
    if ((must_accept && !s.ok()) || (!may_accept && s.ok())) __builtin_trap();
    if (!s.ok()) {
      if (s.code() != ErrorCode::malformed_packet || s.message().empty()) __builtin_trap();
      if (!same(before, picture(mirror))) __builtin_trap();
      if (!mirror.anomalies().empty()) __builtin_trap();
    } else {
      const AckPacket now = mirror.ack();
      if (mirror.stats().packets != before.stats.packets + 1) __builtin_trap();
      if (now.latest_sequence < before.ack.latest_sequence) __builtin_trap();
      if (def.delivery == Delivery::unreliable && now.reliable_applied < before.ack.reliable_applied)
        __builtin_trap();
    }
    if (mirror.held_count() > kMaxEntities) __builtin_trap();
    for (const EntityId e : mirror.held()) {
      if (e.is_null() || !mirror.holds(e)) __builtin_trap();
      const Result<std::vector<Snapshot>> h = mirror.history(e);
      if (!h.ok() || h->empty() || h->size() > def.history) __builtin_trap();
      if (h->front().part != StatePart::full && h->size() < def.history)
        __builtin_trap();  // a spawn starts it
      if (h->back().tick != *mirror.state_tick(e)) __builtin_trap();
    }
  }
  return 0;
}
