// Encode-then-decode properties of the wire format and of the state Stream (RapidCheck).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <variant>
#include <vector>

#include "sightline/protocol.h"
#include "sightline/serialize.h"

namespace sightline {
namespace {

struct Rec {
  RecordType type = RecordType::update;
  EntityId entity;
  std::uint32_t reliable_id = 0;
  std::uint8_t reason = 0;
  bool created = false;
  std::uint32_t state_age = 0;
  bool reliable = false;  // events
  std::uint32_t event_class = 0;
  float x = 0.0f;
  float z = 0.0f;
  std::vector<std::uint8_t> payload;
  bool keep = false;  // delta updates
  std::uint32_t base_age = 0;
  std::uint32_t state_size = 0;

  /// The record as decode_packet gives it, viewing this payload.
  [[nodiscard]] WireRecord wire() const {
    return {.type = type,
            .entity = entity,
            .reliable_id = reliable_id,
            .reason = reason,
            .created = created,
            .state_age = state_age,
            .reliable = reliable,
            .event_class = event_class,
            .x = x,
            .z = z,
            .payload = payload,
            .keep = keep,
            .base_age = base_age,
            .state_size = base_age != 0 ? state_size : static_cast<std::uint32_t>(payload.size())};
  }
};

// A state and a baseline that differ in a few places (or in many, or in length).
struct StatePair {
  std::vector<std::uint8_t> base;
  std::vector<std::uint8_t> state;
};

rc::Gen<StatePair> any_state_pair() {
  return rc::gen::exec([] {
    StatePair p;
    const auto size = *rc::gen::inRange<std::size_t>(0, 200);
    p.base = *rc::gen::container<std::vector<std::uint8_t>>(size, rc::gen::arbitrary<std::uint8_t>());
    p.state = p.base;
    p.state.resize(*rc::gen::oneOf(rc::gen::just(size), rc::gen::inRange<std::size_t>(0, 220)));
    const auto changes = *rc::gen::inRange<std::size_t>(0, 12);
    for (std::size_t i = 0; i < changes && !p.state.empty(); ++i)
      p.state[*rc::gen::inRange<std::size_t>(0, p.state.size())] = *rc::gen::arbitrary<std::uint8_t>();
    return p;
  });
}

// Ids across every varint length: small, around the 7-bit boundaries, and full 32-bit.
rc::Gen<std::uint32_t> any_u32() {
  return rc::gen::oneOf(rc::gen::inRange<std::uint32_t>(0, 200), rc::gen::inRange<std::uint32_t>(100, 20000),
                        rc::gen::arbitrary<std::uint32_t>(),
                        rc::gen::element<std::uint32_t>(127, 128, 16383, 16384, 2097151, 2097152, 268435455,
                                                        268435456, 0xffffffffu));
}

rc::Gen<Rec> any_record(std::uint32_t tick) {
  return rc::gen::exec([tick] {
    Rec r;
    r.type = *rc::gen::element(RecordType::spawn, RecordType::update, RecordType::despawn, RecordType::event,
                               RecordType::message, RecordType::delta_update, RecordType::refresh);
    r.entity = {*any_u32(), *rc::gen::suchThat(any_u32(), [](std::uint32_t g) { return g != 0; })};
    if (r.type == RecordType::message) r.entity = {};  // a message names no entity
    if (r.type == RecordType::event) {
      r.reliable = *rc::gen::arbitrary<bool>();
      if (*rc::gen::arbitrary<bool>()) r.entity = {};  // no subject
      r.event_class = *any_u32();
      const auto coordinate = rc::gen::suchThat(rc::gen::arbitrary<float>(), [](float v) {
        return std::isfinite(v) && std::fabs(v) <= kMaxCoordinate;
      });
      r.x = *coordinate;
      r.z = *coordinate;
      if (r.reliable)
        r.state_age = *rc::gen::inRange<std::uint32_t>(0, std::min<std::uint32_t>(tick, 1000) + 1);
    }
    if (r.type == RecordType::spawn || r.type == RecordType::despawn || r.type == RecordType::message ||
        r.type == RecordType::refresh || r.reliable)
      r.reliable_id = *any_u32();
    if (r.type == RecordType::spawn) {
      r.reason = *rc::gen::inRange<std::uint8_t>(0, 9);
      r.created = *rc::gen::arbitrary<bool>();
      r.state_age = *rc::gen::inRange<std::uint32_t>(0, std::min<std::uint32_t>(tick, 1000) + 1);
    }
    if (r.type == RecordType::refresh)
      r.state_age = *rc::gen::inRange<std::uint32_t>(0, std::min<std::uint32_t>(tick, 1000) + 1);
    if (r.type == RecordType::despawn) r.reason = *rc::gen::inRange<std::uint8_t>(0, 6);
    if (r.type != RecordType::despawn) {
      const auto size = *rc::gen::inRange<std::size_t>(0, 300);
      r.payload = *rc::gen::container<std::vector<std::uint8_t>>(size, rc::gen::arbitrary<std::uint8_t>());
    }
    if (r.type == RecordType::delta_update) {
      r.keep = *rc::gen::arbitrary<bool>();
      if (tick > 0 && *rc::gen::arbitrary<bool>()) {
        r.base_age = *rc::gen::inRange<std::uint32_t>(1, std::min<std::uint32_t>(tick, 1000) + 1);
        const StatePair pair = *any_state_pair();
        r.payload.resize(delta_runs_bound(pair.state.size()));
        r.payload.resize(write_delta_runs(pair.base, pair.state, r.payload));
        r.state_size = static_cast<std::uint32_t>(pair.state.size());
      }
    }
    return r;
  });
}

// An interest status a decoder accepts: a finite radius > 0 while culling (any such float), 0 without.
rc::Gen<InterestStatus> any_interest() {
  return rc::gen::exec([] {
    InterestStatus status;
    status.culling = *rc::gen::arbitrary<bool>();
    status.pending = *any_u32();
    if (status.culling) {
      status.radius = *rc::gen::suchThat(rc::gen::arbitrary<float>(),
                                         [](float r) { return std::isfinite(r) && r > 0.0f; });
    }
    return status;
  });
}

std::size_t record_bytes(const Rec& r) {
  switch (r.type) {
    case RecordType::spawn: return spawn_record_bytes(r.reliable_id, r.entity, r.payload.size(), r.state_age);
    case RecordType::update: return update_record_bytes(r.entity, r.payload.size());
    case RecordType::despawn: return despawn_record_bytes(r.reliable_id, r.entity);
    case RecordType::event:
      return event_record_bytes(r.reliable, r.reliable_id, r.state_age, r.event_class, r.entity,
                                r.payload.size());
    case RecordType::message: return message_record_bytes(r.reliable_id, r.payload.size());
    case RecordType::delta_update:
      return delta_update_record_bytes(r.entity, r.base_age, r.state_size, r.payload.size());
    case RecordType::refresh:
      return refresh_record_bytes(r.reliable_id, r.entity, r.payload.size(), r.state_age);
  }
  return 0;
}

RC_GTEST_PROP(ProtocolRoundTrip, PacketsDecodeToWhatWasWritten, ()) {
  PacketHeader header;
  header.delivery = *rc::gen::element(Delivery::reliable, Delivery::unreliable);
  header.sequence = *any_u32();
  header.tick = *any_u32();
  header.reliable_next = *any_u32();
  header.interest = *any_interest();
  const auto records =
      *rc::gen::container<std::vector<Rec>>(*rc::gen::inRange<std::size_t>(0, 40), any_record(header.tick));
  std::vector<std::uint8_t> buffer(kStateHeaderBytes + 40 * 340);
  PacketWriter writer(buffer, header);
  std::size_t expected = kStateHeaderBytes;
  for (const Rec& r : records) {
    bool added = false;
    switch (r.type) {
      case RecordType::spawn:
        added = writer.add_spawn(r.reliable_id, r.entity, static_cast<SpawnReason>(r.reason), r.created,
                                 r.payload, r.state_age);
        break;
      case RecordType::update: added = writer.add_update(r.entity, r.payload); break;
      case RecordType::despawn:
        added = writer.add_despawn(r.reliable_id, r.entity, static_cast<DespawnReason>(r.reason));
        break;
      case RecordType::event:
        added = writer.add_event(r.reliable, r.reliable_id, r.state_age, r.event_class, r.x, r.z, r.entity,
                                 r.payload);
        break;
      case RecordType::message: added = writer.add_message(r.reliable_id, r.payload); break;
      case RecordType::delta_update:
        added = writer.add_delta_update(r.entity, r.keep, r.base_age, r.state_size, r.payload);
        break;
      case RecordType::refresh:
        added = writer.add_refresh(r.reliable_id, r.entity, r.payload, r.state_age);
        break;
    }
    RC_ASSERT(added);
    expected += record_bytes(r);
  }
  const std::span<const std::uint8_t> bytes = writer.finish();
  RC_ASSERT(bytes.size() == expected);
  DecodedPacket decoded;
  const Status s = decode_packet(bytes, decoded);
  RC_ASSERT(s.ok());
  DecodedPacket want{.header = header, .records = {}};
  for (const Rec& r : records) want.records.push_back(r.wire());
  RC_ASSERT(decoded == want);
  // Every strict prefix is refused, and so is one byte more.
  for (std::size_t n = 0; n < bytes.size(); ++n) RC_ASSERT(!decode_packet(bytes.first(n), decoded).ok());
  std::vector<std::uint8_t> longer(bytes.begin(), bytes.end());
  longer.push_back(0);
  RC_ASSERT(!decode_packet(longer, decoded).ok());
}

// Writes a decoded packet again: the bytes of a packet that decodes are the only encoding of
// what it decodes to.
std::vector<std::uint8_t> rewrite(const DecodedPacket& p) {
  std::vector<std::uint8_t> buffer(kStateHeaderBytes + 64 * 1024);
  PacketWriter writer(buffer, p.header);
  for (const WireRecord& r : p.records) {
    const bool added = writer.add(r);
    if (!added) return {};
  }
  const std::span<const std::uint8_t> bytes = writer.finish();
  return {bytes.begin(), bytes.end()};
}

RC_GTEST_PROP(ProtocolRoundTrip, ACorruptedPacketIsRefusedOrHasOneEncoding, ()) {
  PacketHeader header;
  header.delivery = *rc::gen::element(Delivery::reliable, Delivery::unreliable);
  header.sequence = *any_u32();
  header.tick = *any_u32();
  header.reliable_next = *any_u32();
  header.interest = *any_interest();
  const auto records =
      *rc::gen::container<std::vector<Rec>>(*rc::gen::inRange<std::size_t>(1, 8), any_record(header.tick));
  std::vector<std::uint8_t> buffer(kStateHeaderBytes + 8 * 340);
  PacketWriter writer(buffer, header);
  for (const Rec& r : records) {
    switch (r.type) {
      case RecordType::spawn:
        RC_ASSERT(writer.add_spawn(r.reliable_id, r.entity, static_cast<SpawnReason>(r.reason), r.created,
                                   r.payload, r.state_age));
        break;
      case RecordType::update: RC_ASSERT(writer.add_update(r.entity, r.payload)); break;
      case RecordType::despawn:
        RC_ASSERT(writer.add_despawn(r.reliable_id, r.entity, static_cast<DespawnReason>(r.reason)));
        break;
      case RecordType::event:
        RC_ASSERT(writer.add_event(r.reliable, r.reliable_id, r.state_age, r.event_class, r.x, r.z, r.entity,
                                   r.payload));
        break;
      case RecordType::message: RC_ASSERT(writer.add_message(r.reliable_id, r.payload)); break;
      case RecordType::delta_update:
        RC_ASSERT(writer.add_delta_update(r.entity, r.keep, r.base_age, r.state_size, r.payload));
        break;
      case RecordType::refresh:
        RC_ASSERT(writer.add_refresh(r.reliable_id, r.entity, r.payload, r.state_age));
        break;
    }
  }
  const std::span<const std::uint8_t> good = writer.finish();
  std::vector<std::uint8_t> bad(good.begin(), good.end());
  const auto changes = *rc::gen::inRange(1, 4);
  for (int i = 0; i < changes; ++i) {
    bad[*rc::gen::inRange<std::size_t>(0, bad.size())] = *rc::gen::arbitrary<std::uint8_t>();
  }
  DecodedPacket decoded;
  const Status s = decode_packet(bad, decoded);
  if (!s.ok()) {
    RC_ASSERT(s.code() == ErrorCode::malformed_packet);
    RC_ASSERT(s.message().find("byte") != std::string::npos);
    return;
  }
  RC_ASSERT(rewrite(decoded) == bad);
}

// Delta runs rebuild exactly the state they were written from, within their bound, and never
// from a baseline too short for the bytes they keep.
RC_GTEST_PROP(ProtocolRoundTrip, DeltaRunsRebuildTheState, ()) {
  const StatePair p = *any_state_pair();
  std::vector<std::uint8_t> runs(delta_runs_bound(p.state.size()));
  runs.resize(write_delta_runs(p.base, p.state, runs));
  std::vector<std::uint8_t> out(p.state.size());
  RC_ASSERT(apply_delta_runs(p.base, runs, out));
  RC_ASSERT(out == p.state);
  // The plain rule: a byte not in a changed run is the baseline's at the same place.
  std::vector<bool> written(p.state.size(), false);
  std::size_t at = 0;
  std::size_t pos = 0;
  auto varint = [&] {
    std::uint32_t v = 0;
    for (int shift = 0;; shift += 7) {
      const std::uint8_t b = runs[at++];
      v |= std::uint32_t{b & 0x7fu} << shift;
      if ((b & 0x80u) == 0) return v;
    }
  };
  while (at < runs.size()) {
    pos += varint();
    const std::uint32_t changed = varint();
    RC_ASSERT(changed >= 1u);
    for (std::uint32_t i = 0; i < changed; ++i) written[pos + i] = true;
    pos += changed;
    at += changed;
  }
  for (std::size_t i = 0; i < p.state.size(); ++i) {
    if (!written[i]) RC_ASSERT(i < p.base.size() && p.base[i] == p.state[i]);
  }
  // Identical states need no runs; a baseline cut short of a kept byte is refused.
  if (p.state == p.base) RC_ASSERT(runs.empty());
  if (!p.state.empty() && !runs.empty() && pos < p.state.size()) {
    std::vector<std::uint8_t> cut(p.base.begin(), p.base.begin() + static_cast<std::ptrdiff_t>(pos));
    RC_ASSERT(!apply_delta_runs(cut, runs, out));
  }
}

// The runs' rule, byte by byte: a changed run starts at a byte that differs (or lies past the
// baseline), goes on over gaps of at most 2 kept bytes, and stops before 3 kept bytes or the end.
std::vector<std::uint8_t> plain_delta_runs(const std::vector<std::uint8_t>& base,
                                           const std::vector<std::uint8_t>& state) {
  const auto differs = [&](std::size_t i) { return i >= base.size() || state[i] != base[i]; };
  std::size_t last = state.size();  // one past the last byte that differs
  while (last > 0 && !differs(last - 1)) --last;
  std::vector<std::uint8_t> out;
  const auto varint = [&](std::size_t v) {
    for (; v >= 0x80; v >>= 7) out.push_back(static_cast<std::uint8_t>((v & 0x7f) | 0x80));
    out.push_back(static_cast<std::uint8_t>(v));
  };
  std::size_t p = 0;
  while (p < last) {
    std::size_t first = p;
    while (!differs(first)) ++first;
    std::size_t end = first + 1;
    for (;;) {
      std::size_t kept = 0;
      while (end + kept < last && !differs(end + kept)) ++kept;
      if (end + kept < last && kept <= 2) {
        end += kept + 1;  // bridge the gap and take the differing byte after it
      } else {
        break;
      }
    }
    varint(first - p);
    varint(end - first);
    out.insert(out.end(), state.begin() + static_cast<std::ptrdiff_t>(first),
               state.begin() + static_cast<std::ptrdiff_t>(end));
    p = end;
  }
  return out;
}

// The fast runs (a word at a time over kept stretches) are the plain rule's, byte for byte.
RC_GTEST_PROP(ProtocolRoundTrip, DeltaRunsMatchThePlainRule, ()) {
  const StatePair p = *any_state_pair();
  std::vector<std::uint8_t> runs(delta_runs_bound(p.state.size()));
  runs.resize(write_delta_runs(p.base, p.state, runs));
  RC_ASSERT(runs == plain_delta_runs(p.base, p.state));
}

RC_GTEST_PROP(ProtocolRoundTrip, AcksDecodeToWhatWasWritten, ()) {
  const AckPacket ack{*any_u32(), *any_u32(), *any_u32()};
  std::array<std::uint8_t, kAckBytes> bytes{};
  encode_ack(ack, bytes);
  const Result<AckPacket> back = decode_ack(bytes);
  RC_ASSERT(back.ok());
  RC_ASSERT(*back == ack);
  RC_ASSERT(!decode_ack(std::span<const std::uint8_t>(bytes).first(kAckBytes - 1)).ok());
}

// One field of a game's state, as a serialize function would declare it.
struct Field {
  enum Kind { bits, uint_range, int_range, boolean, real, quantized, raw } kind = bits;
  int width = 1;
  std::uint32_t umin = 0, umax = 0, uvalue = 0;
  std::int32_t imin = 0, imax = 0, ivalue = 0;
  bool flag = false;
  float fmin = 0.0f, fmax = 0.0f, resolution = 1.0f, fvalue = 0.0f;
  std::vector<std::uint8_t> bytes;
};

rc::Gen<Field> any_field() {
  return rc::gen::exec([] {
    Field f;
    f.kind = static_cast<Field::Kind>(*rc::gen::inRange(0, 7));
    switch (f.kind) {
      case Field::bits:
        f.width = *rc::gen::inRange(1, 33);
        f.uvalue = f.width == 32 ? *rc::gen::arbitrary<std::uint32_t>()
                                 : *rc::gen::inRange<std::uint32_t>(0, 1u << f.width);
        break;
      case Field::uint_range: {
        f.umin = *any_u32();
        f.umax = static_cast<std::uint32_t>(
            *rc::gen::inRange<std::uint64_t>(f.umin, std::uint64_t{0xffffffffu} + 1));
        f.uvalue =
            static_cast<std::uint32_t>(*rc::gen::inRange<std::uint64_t>(f.umin, std::uint64_t{f.umax} + 1));
        break;
      }
      case Field::int_range: {
        f.imin = *rc::gen::inRange<std::int32_t>(-100000, 100000);
        f.imax = *rc::gen::inRange<std::int32_t>(f.imin, 200001);
        f.ivalue = *rc::gen::inRange<std::int32_t>(f.imin, f.imax + 1);
        break;
      }
      case Field::boolean: f.flag = *rc::gen::arbitrary<bool>(); break;
      case Field::real: {
        const auto m = *rc::gen::inRange<std::int32_t>(-1000000, 1000000);
        const auto e = *rc::gen::inRange(-20, 20);
        f.fvalue = std::ldexp(static_cast<float>(m), e);
        break;
      }
      case Field::quantized: {
        // Ranges that are not a whole number of steps too: the top step is then closer than one
        // resolution, and a value near max must still read back within resolution / 2.
        f.fmin = static_cast<float>(*rc::gen::inRange(-500000, 500000)) / 100.0f;
        f.fmax = f.fmin + static_cast<float>(*rc::gen::inRange(1, 500000)) / 100.0f;
        f.resolution = *rc::gen::element(1.0f, 0.5f, 0.01f, 1.0f / 256.0f, 0.1f, 0.3f, 0.7f, 3.0f, 10.0f);
        const auto t =
            static_cast<float>(*rc::gen::oneOf(rc::gen::inRange(0, 1001), rc::gen::element(0, 999, 1000))) /
            1000.0f;
        f.fvalue = std::min(f.fmax, f.fmin + t * (f.fmax - f.fmin));
        break;
      }
      case Field::raw:
        f.bytes = *rc::gen::container<std::vector<std::uint8_t>>(*rc::gen::inRange<std::size_t>(0, 20),
                                                                 rc::gen::arbitrary<std::uint8_t>());
        break;
    }
    return f;
  });
}

// The one function: each field in turn, the same code whatever the mode.
bool serialize_fields(Stream& s, std::vector<Field>& fields) {
  for (Field& f : fields) {
    bool ok = false;
    switch (f.kind) {
      case Field::bits: ok = s.serialize_bits(f.uvalue, f.width); break;
      case Field::uint_range: ok = s.serialize_uint(f.uvalue, f.umin, f.umax); break;
      case Field::int_range: ok = s.serialize_int(f.ivalue, f.imin, f.imax); break;
      case Field::boolean: ok = s.serialize_bool(f.flag); break;
      case Field::real: ok = s.serialize_float(f.fvalue); break;
      case Field::quantized: ok = s.serialize_quantized(f.fvalue, f.fmin, f.fmax, f.resolution); break;
      case Field::raw: ok = s.serialize_bytes(f.bytes.data(), f.bytes.size()); break;
    }
    if (!ok) return false;
  }
  return true;
}

RC_GTEST_PROP(ProtocolRoundTrip, StateReadsBackWhatWasWrittenAndMeasureAgrees, ()) {
  auto fields = *rc::gen::container<std::vector<Field>>(*rc::gen::inRange<std::size_t>(0, 30), any_field());
  const std::vector<Field> written = fields;
  Stream measure = Stream::measurer();
  RC_ASSERT(serialize_fields(measure, fields));
  std::vector<std::uint8_t> buffer(measure.bytes());
  Stream writer = Stream::writer(buffer);
  RC_ASSERT(serialize_fields(writer, fields));
  RC_ASSERT(writer.bits() == measure.bits());
  std::vector<Field> read = written;
  for (Field& f : read) {  // scramble what the reader must overwrite
    f.uvalue = ~f.uvalue;
    f.ivalue = f.imin;
    f.flag = !f.flag;
    f.fvalue = -1.0f;
    std::fill(f.bytes.begin(), f.bytes.end(), 0x5a);
  }
  Stream reader = Stream::reader(buffer);
  RC_ASSERT(serialize_fields(reader, read));
  RC_ASSERT(reader.bits() == writer.bits());
  RC_ASSERT(reader.rest_is_zero());
  for (std::size_t i = 0; i < written.size(); ++i) {
    const Field& w = written[i];
    const Field& r = read[i];
    switch (w.kind) {
      case Field::bits:
      case Field::uint_range: RC_ASSERT(r.uvalue == w.uvalue); break;
      case Field::int_range: RC_ASSERT(r.ivalue == w.ivalue); break;
      case Field::boolean: RC_ASSERT(r.flag == w.flag); break;
      case Field::real: RC_ASSERT(r.fvalue == w.fvalue); break;
      case Field::quantized: {
        // Half a step, plus the float rounding of min + step * resolution (under 2^-22 of the magnitude).
        const float slack = 2.5e-7f * std::max(std::fabs(w.fmin), std::fabs(w.fmax));
        RC_ASSERT(std::fabs(r.fvalue - w.fvalue) <= w.resolution * 0.5f * 1.0001f + slack);
        RC_ASSERT(r.fvalue >= w.fmin);
        RC_ASSERT(r.fvalue <= w.fmax);
        // Quantizing the value read gives the same bits: a second round trip changes nothing.
        float again = r.fvalue;
        std::vector<std::uint8_t> b1(8), b2(8);
        Stream s1 = Stream::writer(b1);
        Stream s2 = Stream::writer(b2);
        float original = w.fvalue;
        RC_ASSERT(s1.serialize_quantized(original, w.fmin, w.fmax, w.resolution));
        RC_ASSERT(s2.serialize_quantized(again, w.fmin, w.fmax, w.resolution));
        RC_ASSERT(b1 == b2);
        break;
      }
      case Field::raw: RC_ASSERT(r.bytes == w.bytes); break;
    }
  }
  // A byte short is refused.
  if (!buffer.empty() && writer.bits() > (buffer.size() - 1) * 8) {
    std::vector<Field> again = written;
    Stream short_reader = Stream::reader(std::span<const std::uint8_t>(buffer).first(buffer.size() - 1));
    RC_ASSERT(!serialize_fields(short_reader, again));
    RC_ASSERT(short_reader.error() != nullptr);
  }
}

TEST(StreamTest, RefusesValuesItsWriterCouldNotHaveProduced) {
  std::array<std::uint8_t, 8> bytes{};
  Stream w = Stream::writer(bytes);
  std::uint32_t seven = 7;
  EXPECT_FALSE(w.serialize_uint(seven, 0, 5));
  EXPECT_STREQ(w.error(), "value outside its range");
  std::uint32_t after = 1;
  EXPECT_FALSE(w.serialize_bits(after, 1)) << "a failed stream stays failed";
  // 3 bits can hold 7 although the range is 0..5: a reader refuses it.
  bytes = {0x07};
  Stream r = Stream::reader(std::span<const std::uint8_t>(bytes).first(1));
  std::uint32_t v = 0;
  EXPECT_FALSE(r.serialize_uint(v, 0, 5));
  EXPECT_STREQ(r.error(), "value read outside its range");
  // A NaN is refused both ways.
  float nan = std::nanf("");
  Stream wf = Stream::writer(bytes);
  EXPECT_FALSE(wf.serialize_float(nan));
  bytes = {0x00, 0x00, 0xc0, 0x7f};  // quiet NaN, little-endian
  Stream rf = Stream::reader(std::span<const std::uint8_t>(bytes).first(4));
  float f = 0.0f;
  EXPECT_FALSE(rf.serialize_float(f));
  EXPECT_EQ(f, 0.0f) << "a refused read leaves the value alone";
  // Trailing garbage is visible.
  bytes = {0x01, 0x80};
  Stream rg = Stream::reader(std::span<const std::uint8_t>(bytes).first(2));
  bool b = false;
  EXPECT_TRUE(rg.serialize_bool(b));
  EXPECT_FALSE(rg.rest_is_zero());
}

TEST(StreamTest, AnEntityReferenceIsItsIndexThenItsGenerationAndTheWriterNotesWhere) {
  std::array<std::uint8_t, 40> bytes{};
  std::array<EntityReference, 2> noted{};
  Stream w = Stream::writer(bytes, noted);
  bool flag = true;
  EntityId target{130, 2};
  EntityId none{77, 0};  // null, whatever its index
  EntityId self{5, 1};
  ASSERT_TRUE(w.serialize_bool(flag));
  ASSERT_TRUE(w.serialize_entity(target));
  ASSERT_TRUE(w.serialize_entity(none));
  ASSERT_TRUE(w.serialize_entity(self));
  EXPECT_EQ(w.bits(), 1u + 3 * kEntityReferenceBits);
  ASSERT_EQ(w.references().size(), 2u) << "a null reference is not noted";
  EXPECT_EQ(w.references()[0].bit, 1u);
  EXPECT_EQ(w.references()[0].entity, target);
  EXPECT_EQ(w.references()[1].bit, 129u);
  EXPECT_EQ(w.references()[1].entity, self);
  // 130 then 2, 32 bits each, after the one-bit flag: 0x82 << 1 = 0x104.
  EXPECT_EQ(bytes[0], 0x05);
  EXPECT_EQ(bytes[1], 0x01);
  EXPECT_EQ(bytes[4], 0x04);
  EXPECT_EQ(bytes[5], 0x00);
  // A third reference does not fit what the writer notes: the stream fails.
  EXPECT_FALSE(w.serialize_entity(target));
  EXPECT_STREQ(w.error(), "more entity references than the stream notes");

  Stream r = Stream::reader(std::span<const std::uint8_t>(bytes).first(25));
  bool f = false;
  EntityId a, b, c;
  ASSERT_TRUE(r.serialize_bool(f) && r.serialize_entity(a) && r.serialize_entity(b) && r.serialize_entity(c));
  EXPECT_EQ(a, target);
  EXPECT_EQ(b, EntityId{});
  EXPECT_EQ(c, self);
  EXPECT_TRUE(r.rest_is_zero());
  // Measuring counts the same bits and notes nothing.
  Stream m = Stream::measurer();
  EXPECT_TRUE(m.serialize_entity(target));
  EXPECT_EQ(m.bits(), static_cast<std::size_t>(kEntityReferenceBits));
  EXPECT_TRUE(m.references().empty());
  // A null with an index is not what a writer writes.
  std::array<std::uint8_t, 8> odd{3, 0, 0, 0, 0, 0, 0, 0};
  Stream ro = Stream::reader(odd);
  EntityId e{9, 9};
  EXPECT_FALSE(ro.serialize_entity(e));
  EXPECT_STREQ(ro.error(), "null entity reference with a non-zero index");
  EXPECT_EQ(e, (EntityId{9, 9})) << "a refused read leaves the value alone";
}

TEST(StreamTest, AQuantizedRangeNotAWholeNumberOfStepsKeepsHalfAStepAtTheTop) {
  // [0, 0.79] at 0.4: steps 0, 0.4 and 0.8 read back as 0.79. A value near max is not rounded down
  // to 0.4.
  std::array<std::uint8_t, 4> bytes{};
  for (const float value : {0.79f, 0.61f, 0.59f, 0.0f}) {
    float v = value;
    Stream w = Stream::writer(bytes);
    ASSERT_TRUE(w.serialize_quantized(v, 0.0f, 0.79f, 0.4f));
    EXPECT_EQ(w.bits(), 2u);
    float back = -1.0f;
    Stream r = Stream::reader(bytes);
    ASSERT_TRUE(r.serialize_quantized(back, 0.0f, 0.79f, 0.4f));
    EXPECT_LE(std::fabs(back - value), 0.2f + 1e-6f) << value << " read back as " << back;
  }
  // A range that is a whole number of steps but for float rounding gets no extra step.
  Stream m = Stream::measurer();
  float x = 0.0f;
  ASSERT_TRUE(m.serialize_quantized(x, 0.0f, 2.55f, 0.01f));
  EXPECT_EQ(m.bits(), 8u);
}

// A random quantized range for the property tests below: min and max on a 1/64 and 1/128 grid
// over +-3125, and one of a set of resolutions, round and not.
struct QuantizedArgs {
  float min = 0.0f;
  float max = 0.0f;
  float width = 0.0f;
  float resolution = 0.0f;
};
QuantizedArgs random_quantized_args() {
  QuantizedArgs a;
  a.min =
      *rc::gen::map(rc::gen::inRange(-200000, 200000), [](int v) { return static_cast<float>(v) / 64.0f; });
  a.width = *rc::gen::map(rc::gen::inRange(1, 400000), [](int v) { return static_cast<float>(v) / 128.0f; });
  a.max = a.min + a.width;
  a.resolution = *rc::gen::element(0.01f, 0.1f, 1.0f / 64.0f, 1.0f / 256.0f, 0.001f, 0.3f, 1.0f, 2.5f,
                                   1.0f / 3.0f, 0.07f);
  return a;
}

// A QuantizedRange against the same range passed each call: the same bits written, the same
// float read back, the same refusals, on random ranges, resolutions and values.
RC_GTEST_PROP(QuantizedRangeTest, WritesAndReadsWhatThePlainCallDoes, ()) {
  const auto [min, max, width, resolution] = random_quantized_args();
  RC_PRE(min < max);
  const Result<QuantizedRange> range = QuantizedRange::make(min, max, resolution);
  RC_ASSERT(range.ok());
  RC_ASSERT(range->min() == min && range->max() == max && range->resolution() == resolution);
  const int choice = *rc::gen::inRange(0, 5);
  const float v = choice == 0   ? max
                  : choice == 1 ? min
                  : choice == 2 ? std::nextafter(max, min)
                  : choice == 3 ? max + width  // refused by both
                                : min + width * *rc::gen::map(rc::gen::inRange(0, 1000000), [](int f) {
                                          return static_cast<float>(f) / 1e6f;
                                        });
  std::array<std::uint8_t, 8> plain{};
  std::array<std::uint8_t, 8> ranged{};
  float a = v;
  float b = v;
  Stream wa = Stream::writer(plain);
  Stream wb = Stream::writer(ranged);
  const bool wrote = wa.serialize_quantized(a, min, max, resolution);
  RC_ASSERT(wb.serialize_quantized(b, *range) == wrote);
  RC_ASSERT(wa.bits() == wb.bits());
  RC_ASSERT(plain == ranged);
  if (!wrote) {
    RC_ASSERT(std::string(wa.error()) == wb.error());
    return;
  }
  RC_ASSERT(wb.bits() == static_cast<std::size_t>(bits_required(range->top_step())));
  float back_a = 0.0f;
  float back_b = 0.0f;
  Stream ra = Stream::reader(plain);
  Stream rb = Stream::reader(ranged);
  RC_ASSERT(ra.serialize_quantized(back_a, min, max, resolution));
  RC_ASSERT(rb.serialize_quantized(back_b, *range));
  RC_ASSERT(back_a == back_b);
  // A step above the top is refused by both readers alike.
  std::array<std::uint8_t, 8> all_ones{};
  all_ones.fill(0xff);
  Stream oa = Stream::reader(all_ones);
  Stream ob = Stream::reader(all_ones);
  const bool read_a = oa.serialize_quantized(back_a, min, max, resolution);
  RC_ASSERT(ob.serialize_quantized(back_b, *range) == read_a);
}

TEST(QuantizedRangeTest, RefusesWhatSerializeQuantizedRefusesNamingTheArgument) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const auto message = [](const Result<QuantizedRange>& r) {
    EXPECT_EQ(r.status().code(), ErrorCode::invalid_argument);
    return r.status().message();
  };
  EXPECT_EQ(message(QuantizedRange::make(nan, 1.0f, 0.1f)), "QuantizedRange min is nan: must be finite");
  EXPECT_EQ(message(QuantizedRange::make(0.0f, inf, 0.1f)), "QuantizedRange max is inf: must be finite");
  EXPECT_EQ(message(QuantizedRange::make(2.0f, 2.0f, 0.1f)),
            "QuantizedRange max is 2: must be above min (2)");
  EXPECT_EQ(message(QuantizedRange::make(0.0f, 1.0f, 0.0f)),
            "QuantizedRange resolution is 0: must be finite and > 0");
  EXPECT_EQ(message(QuantizedRange::make(0.0f, 1e6f, 1e-6f)),
            "QuantizedRange resolution is 1e-06: makes more than 2^32 - 1 steps of [0, 1e+06]");
  // A stream that failed before stays failed.
  const Result<QuantizedRange> range = QuantizedRange::make(0.0f, 1.0f, 0.25f);
  ASSERT_TRUE(range.ok());
  std::array<std::uint8_t, 1> bytes{};
  Stream w = Stream::writer(bytes);
  float outside = 2.0f;
  EXPECT_FALSE(w.serialize_quantized(outside, *range));
  float inside = 0.5f;
  EXPECT_FALSE(w.serialize_quantized(inside, *range));
  EXPECT_STREQ(w.error(), "value outside its range");
}

// The quantized float as docs/protocol.md spells it out for a decoder in another language, step
// by step in double, against the Stream: the same bits, and the same float read back.
RC_GTEST_PROP(ProtocolDocTest, TheQuantizedFloatFollowsTheDocumentedArithmetic, ()) {
  const auto [min, max, width, resolution] = random_quantized_args();
  RC_PRE(min < max);
  const int choice = *rc::gen::inRange(0, 4);
  const float v = choice == 0 ? max
                  : choice == 1
                      ? min
                      : min + (max - min) * static_cast<float>(*rc::gen::inRange(0, 1000001)) / 1.0e6f;
  RC_PRE(v >= min && v <= max);
  const double top = std::ceil((static_cast<double>(max) - static_cast<double>(min)) / resolution - 0.001);
  RC_PRE(top >= 0.0 && top <= 4294967295.0);
  const double step =
      std::min(std::round((static_cast<double>(v) - static_cast<double>(min)) / resolution), top);
  const double back_double = static_cast<double>(min) + step * static_cast<double>(resolution);
  const float documented = static_cast<float>(back_double > max ? static_cast<double>(max) : back_double);

  std::array<std::uint8_t, 8> payload{};
  Stream writer = Stream::writer(payload);
  float written = v;
  RC_ASSERT(writer.serialize_quantized(written, min, max, resolution));
  RC_ASSERT(writer.bits() == static_cast<std::size_t>(bits_required(static_cast<std::uint32_t>(top))));
  Stream reader = Stream::reader(std::span<const std::uint8_t>(payload).first(writer.bytes()));
  std::uint32_t raw = 0;
  RC_ASSERT(reader.serialize_uint(raw, 0, static_cast<std::uint32_t>(top)));
  RC_ASSERT(static_cast<double>(raw) == step);
  Stream again = Stream::reader(std::span<const std::uint8_t>(payload).first(writer.bytes()));
  float read = 0.0f;
  RC_ASSERT(again.serialize_quantized(read, min, max, resolution));
  RC_ASSERT(read == documented);
}

// The worked example of docs/protocol.md, byte for byte.
const std::vector<std::uint8_t> kDocumented{0x02, 0x01, 0x03, 0x07, 0x00, 0x00, 0x00, 0x2c, 0x01, 0x00, 0x00,
                                            0x2a, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0xa0,
                                            0x41, 0x03, 0x00, 0x01, 0x28, 0x82, 0x01, 0x02, 0x80, 0x00, 0x05,
                                            0x20, 0xfd, 0x60, 0xf2, 0x01, 0x02, 0x05, 0x01, 0x05, 0x20, 0xfd,
                                            0x60, 0xf2, 0x01, 0x03, 0x29, 0x09, 0x03, 0x00};

TEST(ProtocolDocTest, TheWorkedExampleInProtocolMdIsWhatTheCodeWrites) {
  std::array<std::uint8_t, 8> payload{};
  Stream state = Stream::writer(payload);
  float x = 12.5f;
  float z = -3.25f;
  ASSERT_TRUE(state.serialize_quantized(x, -1000.0f, 1000.0f, 1.0f / 64.0f));
  ASSERT_TRUE(state.serialize_quantized(z, -1000.0f, 1000.0f, 1.0f / 64.0f));
  ASSERT_EQ(state.bits(), 34u);
  const auto p = std::span<const std::uint8_t>(payload).first(state.bytes());
  std::array<std::uint8_t, 64> buffer{};
  PacketWriter writer(buffer,
                      {Delivery::unreliable, 7, 300, 42, {.culling = true, .radius = 20.0f, .pending = 3}});
  ASSERT_TRUE(writer.add_spawn(40, {130, 2}, SpawnReason::near, true, p));
  ASSERT_TRUE(writer.add_update({5, 1}, p));
  ASSERT_TRUE(writer.add_despawn(41, {9, 3}, DespawnReason::left));
  const auto bytes = writer.finish();
  EXPECT_EQ(std::vector<std::uint8_t>(bytes.begin(), bytes.end()), kDocumented);
  DecodedPacket decoded;
  ASSERT_TRUE(decode_packet(kDocumented, decoded).ok());
  EXPECT_EQ(decoded.header.interest, (InterestStatus{.culling = true, .radius = 20.0f, .pending = 3}));
  EXPECT_TRUE(decoded.records[0].created);
  // The delta update of docs/protocol.md: 12.75 against 12.5 kept a tick before.
  std::array<std::uint8_t, 8> next{};
  Stream later = Stream::writer(next);
  float x2 = 12.75f;
  float z2 = -3.25f;
  ASSERT_TRUE(later.serialize_quantized(x2, -1000.0f, 1000.0f, 1.0f / 64.0f));
  ASSERT_TRUE(later.serialize_quantized(z2, -1000.0f, 1000.0f, 1.0f / 64.0f));
  const auto q = std::span<const std::uint8_t>(next).first(later.bytes());
  std::array<std::uint8_t, 16> runs{};
  const std::size_t run_bytes = write_delta_runs(p, q, runs);
  std::array<std::uint8_t, 32> record{};
  const std::size_t size =
      encode_delta_update_record(record, {5, 1}, true, 1, 5, std::span(runs).first(run_bytes));
  EXPECT_EQ(std::vector<std::uint8_t>(record.begin(), record.begin() + static_cast<std::ptrdiff_t>(size)),
            (std::vector<std::uint8_t>{0x06, 0x03, 0x05, 0x01, 0x01, 0x05, 0x03, 0x00, 0x01, 0x30}));
  // The refresh of docs/protocol.md: entity 130:2's state again, reliable id 42.
  const std::size_t refresh = refresh_record_bytes(42, {130, 2}, p.size());
  std::array<std::uint8_t, 64> again{};
  PacketWriter with_refresh(again, {Delivery::reliable, 0, 300, 43, {}});
  ASSERT_TRUE(with_refresh.add_refresh(42, {130, 2}, p));
  const auto refresh_bytes = with_refresh.finish().subspan(kStateHeaderBytes);
  ASSERT_EQ(refresh_bytes.size(), refresh);
  EXPECT_EQ(
      std::vector<std::uint8_t>(refresh_bytes.begin(), refresh_bytes.end()),
      (std::vector<std::uint8_t>{0x07, 0x2a, 0x82, 0x01, 0x02, 0x00, 0x05, 0x20, 0xfd, 0x60, 0xf2, 0x01}));
  std::array<std::uint8_t, kAckBytes> ack{};
  encode_ack({7, 42, 1}, ack);
  EXPECT_EQ(ack, (std::array<std::uint8_t, kAckBytes>{0x02, 0x02, 0x07, 0x00, 0x00, 0x00, 0x2a, 0x00, 0x00,
                                                      0x00, 0x01, 0x00, 0x00, 0x00}));
}

// Every refusal names the first byte of the field it refuses (here: the byte corrupted), in the
// worked example's packet: flags 2, radius 19-22, record count 23-24; the spawn's type 25,
// reliable id 26, index 27-28, generation 29, reason 30, state age 31, payload length 32, payload
// 33-37; the despawn's reason at 51.
TEST(ProtocolDocTest, EachRefusalNamesTheFirstByteOfItsField) {
  DecodedPacket decoded;
  ASSERT_TRUE(decode_packet(kDocumented, decoded).ok());
  auto refusal = [&](std::initializer_list<std::pair<std::size_t, std::uint8_t>> changes) {
    std::vector<std::uint8_t> bytes = kDocumented;
    for (const auto& [at, value] : changes) bytes[at] = value;
    const Status status = decode_packet(bytes, decoded);
    EXPECT_EQ(status.code(), ErrorCode::malformed_packet);
    return status.message();
  };
  EXPECT_EQ(refusal({{0, 1}}), "version at byte 0 is 1, expected 2");
  EXPECT_EQ(refusal({{2, 7}}), "flags at byte 2 are 7: unknown bits set");
  EXPECT_EQ(refusal({{2, 1}}), "radius at byte 19 is 20 (bits 1101004800): without culling it must be 0");
  EXPECT_EQ(refusal({{22, 0xc1}}), "radius at byte 19 is -20: culling needs a finite radius > 0");
  EXPECT_EQ(refusal({{21, 0x80}, {22, 0x7f}}), "radius at byte 19 is inf: culling needs a finite radius > 0");
  EXPECT_EQ(refusal({{25, 8}}), "record type at byte 25 is 8, not 1 to 7");
  EXPECT_EQ(refusal({{29, 0}}), "entity generation at byte 29 is 0 (the null handle)");
  EXPECT_EQ(refusal({{30, 9}}), "spawn reason at byte 30 is 9, above 8");
  EXPECT_EQ(refusal({{30, 0x89}}), "spawn reason at byte 30 is 9, above 8");
  EXPECT_EQ(refusal({{51, 6}}), "despawn reason at byte 51 is 6, above 5");
  EXPECT_EQ(refusal({{27, 0x80}, {28, 0x00}}), "entity index at byte 27 is an overlong varint");
  EXPECT_EQ(refusal({{7, 0x05}, {8, 0x00}, {31, 0x06}}),
            "state age at byte 31 is 6, beyond the packet's tick 5");
  EXPECT_EQ(refusal({{32, 100}}), "payload at byte 33 of 100 bytes runs past the end");
  // 27 bytes of records hold 9 records of 3 bytes (the shortest, a message with an empty payload)
  // at most: a count of 10 is refused before any record is read.
  EXPECT_EQ(refusal({{23, 10}}), "record count 10 at byte 23 exceeds what 52 bytes can hold");
}

// The writer refuses what a decoder would: a header whose interest is not one, a reason outside
// its enum (a spawn's reason byte also carries `created`).
TEST(ProtocolTest, TheWriterRefusesAnInterestOrReasonADecoderWouldRefuse) {
  std::array<std::uint8_t, 64> buffer{};
  for (const InterestStatus bad :
       {InterestStatus{.culling = false, .radius = 1.0f}, InterestStatus{.culling = false, .radius = -0.0f},
        InterestStatus{.culling = true, .radius = 0.0f}, InterestStatus{.culling = true, .radius = -2.0f},
        InterestStatus{.culling = true, .radius = std::numeric_limits<float>::infinity()},
        InterestStatus{.culling = true, .radius = std::nanf("")}}) {
    PacketWriter writer(buffer, {Delivery::reliable, 0, 1, 0, bad});
    EXPECT_FALSE(writer.add_update({5, 1}, {}));
    EXPECT_TRUE(writer.finish().empty());
  }
  PacketWriter writer(buffer, {Delivery::reliable, 0, 1, 0, {.culling = true, .radius = 8.0f, .pending = 0}});
  EXPECT_FALSE(writer.add_spawn(0, {5, 1}, static_cast<SpawnReason>(9), false, {}));
  EXPECT_FALSE(writer.add_spawn(0, {5, 1}, static_cast<SpawnReason>(0x80), false, {}));
  EXPECT_FALSE(writer.add_despawn(0, {5, 1}, static_cast<DespawnReason>(6)));
  EXPECT_EQ(writer.records(), 0u);
  EXPECT_TRUE(writer.add_spawn(0, {5, 1}, SpawnReason::unculled, true, {}));
  DecodedPacket decoded;
  ASSERT_TRUE(decode_packet(writer.finish(), decoded).ok());
  EXPECT_EQ(decoded.records[0].reason, static_cast<std::uint8_t>(SpawnReason::unculled));
  EXPECT_TRUE(decoded.records[0].created);
}

// The record count's bound: a message with an empty payload is 3 bytes, the shortest record (an
// update takes 4). A packet of them decodes; one more than its bytes can hold is refused.
TEST(ProtocolDocTest, TheShortestRecordIsAnEmptyMessageOfThreeBytes) {
  std::array<std::uint8_t, 64> buffer{};
  PacketWriter writer(buffer, {Delivery::reliable, 0, 1, 0, {}});
  for (std::uint32_t i = 0; i < 3; ++i) ASSERT_TRUE(writer.add_message(i, {}));
  ASSERT_TRUE(writer.add_update({5, 1}, {}));
  const auto bytes = writer.finish();
  ASSERT_EQ(bytes.size(), kStateHeaderBytes + 3 * 3 + 4);
  DecodedPacket decoded;
  ASSERT_TRUE(decode_packet(bytes, decoded).ok());
  ASSERT_EQ(decoded.records.size(), 4u);
  EXPECT_TRUE(decoded.records[2].payload.empty());
  std::vector<std::uint8_t> more(bytes.begin(), bytes.end());
  more[kRecordCountOffset] = 5;
  EXPECT_EQ(decode_packet(more, decoded).message(),
            "record count 5 at byte 23 exceeds what 38 bytes can hold");
}

// A state sent to many clients is encoded once and appended as bytes: the packet is the one
// add_update writes, at every varint length and payload size.
RC_GTEST_PROP(ProtocolRoundTrip, AnEncodedUpdateWritesWhatAddUpdateWrites, ()) {
  const EntityId e{*any_u32(), *rc::gen::suchThat(any_u32(), [](std::uint32_t g) { return g != 0; })};
  const auto size = *rc::gen::inRange<std::size_t>(0, 40);
  const auto payload =
      *rc::gen::container<std::vector<std::uint8_t>>(size, rc::gen::arbitrary<std::uint8_t>());
  std::array<std::uint8_t, 64> record{};
  const std::size_t bytes = encode_update_record(record, e, payload);
  RC_ASSERT(bytes == update_record_bytes(e, payload.size()));
  std::array<std::uint8_t, 256> a{};
  std::array<std::uint8_t, 256> b{};
  PacketWriter direct(a, {Delivery::unreliable, 3, 9, 2, {}});
  PacketWriter encoded(b, {Delivery::unreliable, 3, 9, 2, {}});
  for (int i = 0; i < 2; ++i) {
    RC_ASSERT(direct.add_update(e, payload));
    RC_ASSERT(encoded.add_encoded_update({record.data(), bytes}));
  }
  const auto x = direct.finish();
  const auto y = encoded.finish();
  RC_ASSERT(std::vector<std::uint8_t>(x.begin(), x.end()) == std::vector<std::uint8_t>(y.begin(), y.end()));
}

TEST(ProtocolTest, AnEncodedUpdateIsRefusedWhereItCannotBeWritten) {
  const std::array<std::uint8_t, 6> payload{1, 2, 3, 4, 5, 6};
  std::array<std::uint8_t, 8> small{};
  EXPECT_EQ(encode_update_record(small, {300, 1}, payload), 0u);  // needs 1 + 2 + 1 + 1 + 6 = 11
  EXPECT_EQ(small, (std::array<std::uint8_t, 8>{}));
  std::array<std::uint8_t, 16> record{};
  EXPECT_EQ(encode_update_record(record, {}, payload), 0u);  // the null entity
  ASSERT_EQ(encode_update_record(record, {300, 1}, payload), 11u);

  std::array<std::uint8_t, kStateHeaderBytes + 15> buffer{};
  PacketWriter writer(buffer, {Delivery::reliable, 0, 1, 0, {}});
  EXPECT_FALSE(writer.add_encoded_update({}));
  std::array<std::uint8_t, 11> spawn = {};
  std::copy_n(record.begin(), 11, spawn.begin());
  spawn[0] = static_cast<std::uint8_t>(RecordType::spawn);
  EXPECT_FALSE(writer.add_encoded_update(spawn));  // not an update's bytes
  EXPECT_TRUE(writer.add_encoded_update({record.data(), 11}));
  EXPECT_FALSE(writer.add_encoded_update({record.data(), 11}));  // 4 bytes left
  EXPECT_EQ(writer.records(), 1u);
  EXPECT_EQ(writer.size(), kStateHeaderBytes + 11);
  DecodedPacket decoded;
  ASSERT_TRUE(decode_packet(writer.finish(), decoded).ok());
  ASSERT_EQ(decoded.records.size(), 1u);
  EXPECT_EQ(decoded.records[0].entity, (EntityId{300, 1}));
  EXPECT_TRUE(std::ranges::equal(decoded.records[0].payload, payload));
}

}  // namespace
}  // namespace sightline
