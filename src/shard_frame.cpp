// The SLF1 codec: one writer and one reader over the same field order, and one check per record
// that both apply (the encoder refuses what the decoder would).
#include "sightline/shard_frame.h"

#include <cmath>
#include <cstring>
#include <string>

#include "format_value.h"
#include "sightline/limits.h"

namespace sightline {

namespace {

constexpr std::uint8_t kFrameEnd = 0xff;
constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ull;
constexpr std::uint64_t kFnvPrime = 0x100000001b3ull;

std::uint64_t fnv1a(std::span<const std::uint8_t> bytes) noexcept {
  std::uint64_t h = kFnvOffset;
  for (const std::uint8_t b : bytes) h = (h ^ b) * kFnvPrime;
  return h;
}

const char* type_name(ShardRecordType t) noexcept {
  switch (t) {
    case ShardRecordType::entity_image: return "entity_image";
    case ShardRecordType::ghost_out: return "ghost_out";
    case ShardRecordType::entity_handover: return "entity_handover";
    case ShardRecordType::client_handover: return "client_handover";
    case ShardRecordType::remote_event: return "remote_event";
    case ShardRecordType::holder_count: return "holder_count";
  }
  return "unknown";
}

// --- The rules both sides check: "" when the record keeps them, else the field and its value.

std::string coordinate(const char* field, float v) {
  if (std::isfinite(v) && std::fabs(v) <= kMaxCoordinate) return {};
  return std::string(field) + " is " + format_value(v) + ": must be finite, within +-" +
         format_value(kMaxCoordinate);
}

std::string bytes_limit(const char* field, std::size_t size) {
  if (size <= kMaxShardRecordBytes) return {};
  return std::string(field) + " is " + std::to_string(size) + " bytes: at most " +
         std::to_string(kMaxShardRecordBytes);
}

std::string shard(const char* field, ShardId s) {
  if (s < kMaxShards) return {};
  return std::string(field) + " is " + std::to_string(s) + ": must be < kMaxShards (" +
         std::to_string(kMaxShards) + ")";
}

std::string rule_of(const EntityImage& r) {
  if (r.id == 0) return "id is 0";
  for (std::string s : {shard("owner", r.owner), coordinate("x", r.x), coordinate("z", r.z),
                        coordinate("vx", r.vx), coordinate("vz", r.vz), bytes_limit("full", r.full.size()),
                        bytes_limit("update", r.update.size()), bytes_limit("blob", r.blob.size())}) {
    if (!s.empty()) return s;
  }
  if (!(r.bound_radius >= 0.0f && r.bound_radius <= kMaxRadius))
    return "bound_radius is " + format_value(r.bound_radius) + ": must be in [0, " +
           format_value(kMaxRadius) + "]";
  if (!(r.radius_scale >= kMinRadiusScale && r.radius_scale <= kMaxRadiusScale)) {
    return "radius_scale is " + format_value(r.radius_scale) + ": must be in [" +
           format_value(kMinRadiusScale) + ", " + format_value(kMaxRadiusScale) + "]";
  }
  const auto type = static_cast<unsigned>(r.key.type);
  if (type > 2) return "key type is " + std::to_string(type) + ": must be 0 (global), 1 (area) or 2 (user)";
  if (r.key.value > kMaxInterestKey)
    return "key value is " + std::to_string(r.key.value) + ": 63 bits at most";
  if (r.key.type == InterestKeyType::global && r.key.value != 0)
    return "key value is " + std::to_string(r.key.value) + " for a global key: must be 0";
  if (r.key.type == InterestKeyType::user && r.key.value == 0) return "key value is 0 for a user key";
  if (!r.has_full && !r.full.empty())
    return "full holds " + std::to_string(r.full.size()) + " bytes without has_full";
  if (r.parent == r.id) return "parent is its own id " + std::to_string(r.id);
  return {};
}

std::string rule_of(const GhostOut& r) {
  if (r.id == 0) return "id is 0";
  if (r.reason != DespawnReason::left && r.reason != DespawnReason::destroyed)
    return "reason is " + std::to_string(static_cast<unsigned>(r.reason)) +
           ": must be left (0) or destroyed (1)";
  return {};
}

std::string rule_of(const EntityHandover& r) {
  if (r.id == 0) return "id is 0";
  return shard("to", r.to);
}

std::string rule_of(const ClientHandover& r) {
  if (r.client == 0) return "client is 0";
  if (std::string s = shard("to", r.to); !s.empty()) return s;
  return bytes_limit("replicator", r.replicator.size());
}

std::string rule_of(const RemoteEvent& r) {
  if (std::string s = coordinate("x", r.x); !s.empty()) return s;
  return coordinate("z", r.z);
}

std::string rule_of(const HolderCount& r) { return r.id == 0 ? "id is 0" : std::string(); }

// --- Writing.

class Writer {
 public:
  explicit Writer(std::vector<std::uint8_t>& out) : out_(out) {}
  void u8(std::uint8_t v) { out_.push_back(v); }
  void flag(bool v) { out_.push_back(v ? 1 : 0); }
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<std::uint8_t>(v | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<std::uint8_t>(v));
  }
  void f32(float v) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    for (int i = 0; i < 4; ++i) out_.push_back(static_cast<std::uint8_t>(bits >> (8 * i)));
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void bytes(std::span<const std::uint8_t> b) {
    varint(b.size());
    out_.insert(out_.end(), b.begin(), b.end());
  }

 private:
  std::vector<std::uint8_t>& out_;
};

void write(Writer& w, const EntityImage& r) {
  w.varint(r.id);
  w.varint(r.owner);
  w.varint(r.owner_epoch);
  w.u8(static_cast<std::uint8_t>((r.always_relevant ? 1 : 0) | (r.presenter ? 2 : 0) |
                                 (r.teleported ? 4 : 0) | (r.has_full ? 8 : 0) | (r.created ? 16 : 0) |
                                 (r.carried ? 32 : 0)));
  for (const float v : {r.x, r.z, r.vx, r.vz, r.bound_radius, r.radius_scale}) w.f32(v);
  w.u8(static_cast<std::uint8_t>(r.key.type));
  w.varint(r.key.value);
  w.varint(r.space);
  w.varint(r.parent);
  w.varint(r.owner_client);
  w.varint(r.full_revision);
  if (r.has_full) w.bytes(r.full);
  w.bytes(r.update);
  w.bytes(r.blob);
}

void write(Writer& w, const GhostOut& r) {
  w.varint(r.id);
  w.u8(static_cast<std::uint8_t>(r.reason));
}

void write(Writer& w, const EntityHandover& r) {
  w.varint(r.id);
  w.varint(r.to);
  w.varint(r.epoch);
}

void write(Writer& w, const std::vector<KeySubscription>& list) {
  w.varint(list.size());
  for (const KeySubscription& s : list) {
    w.varint(s.key);
    w.varint(s.send_rate);
    w.flag(s.bypass_distance);
  }
}

void write(Writer& w, const std::vector<std::uint64_t>& list) {
  w.varint(list.size());
  for (const std::uint64_t v : list) w.varint(v);
}

void write(Writer& w, const ClientHandover& r) {
  w.varint(r.client);
  w.varint(r.to);
  w.varint(r.last_input_seq);
  const ClientImage& c = r.world;
  w.varint(c.viewer);
  w.varint(c.members.size());
  for (const ClientImage::Member& m : c.members) {
    w.varint(m.entity);
    w.varint(m.unseen_ticks);
  }
  w.flag(c.sighted);
  write(w, c.area_subscriptions);
  write(w, c.user_subscriptions);
  w.varint(c.subscription_revision);
  write(w, c.extra_origins);
  write(w, c.owned);
  w.flag(c.origins_changed);
  w.flag(c.origins_changed_at_last_tick);
  for (const float v :
       {c.look_ahead, c.view_enter_radius, c.view_leave_radius, c.last_enter_radius, c.last_leave_radius})
    w.f32(v);
  w.bytes(r.replicator);
}

void write(Writer& w, const RemoteEvent& r) {
  w.varint(r.event_class);
  w.f32(r.x);
  w.f32(r.z);
  w.varint(r.space);
  w.varint(r.subject);
  w.varint(r.user_data);
  w.varint(r.emit_order);
}

void write(Writer& w, const HolderCount& r) {
  w.varint(r.id);
  w.varint(r.count);
}

// --- Reading: every read checks what is left and records the first fault with its offset.

class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
  [[nodiscard]] bool ok() const noexcept { return error_.empty(); }
  [[nodiscard]] std::size_t at() const noexcept { return at_; }
  [[nodiscard]] std::size_t left() const noexcept { return bytes_.size() - at_; }
  [[nodiscard]] const std::string& error() const noexcept { return error_; }
  bool fail(std::size_t offset, const std::string& what) {
    if (error_.empty()) error_ = "shard frame byte " + std::to_string(offset) + ": " + what;
    return false;
  }
  bool u8(std::uint8_t& v, const char* field) {
    if (left() < 1) return fail(at_, std::string(field) + ": the bytes end");
    v = bytes_[at_++];
    return true;
  }
  bool flag(bool& v, const char* field) {
    const std::size_t from = at_;
    std::uint8_t b = 0;
    if (!u8(b, field)) return false;
    if (b > 1) return fail(from, std::string(field) + " is " + std::to_string(b) + ": a flag is 0 or 1");
    v = b != 0;
    return true;
  }
  // LEB128 of at most `bits` bits, in its one shortest form.
  bool varint(std::uint64_t& v, const char* field, unsigned bits = 64) {
    const std::size_t from = at_;
    v = 0;
    for (unsigned shift = 0;; shift += 7) {
      std::uint8_t b = 0;
      if (!u8(b, field)) return false;
      if (shift == 63 && (b & 0xfe) != 0) return fail(from, std::string(field) + ": a varint beyond 64 bits");
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        if (b == 0 && shift != 0)
          return fail(from, std::string(field) + ": a varint in a longer form than it needs");
        break;
      }
    }
    if (bits < 64 && (v >> bits) != 0) {
      return fail(from, std::string(field) + " is " + std::to_string(v) + ": at most " +
                            std::to_string(bits) + " bits");
    }
    return true;
  }
  template <class T>
  bool number(T& out, const char* field) {
    std::uint64_t v = 0;
    if (!varint(v, field, 8 * sizeof(T))) return false;
    out = static_cast<T>(v);
    return true;
  }
  bool f32(float& v, const char* field) {
    if (left() < 4) return fail(at_, std::string(field) + ": the bytes end");
    std::uint32_t bits = 0;
    for (int i = 0; i < 4; ++i) bits |= std::uint32_t{bytes_[at_ + i]} << (8 * i);
    at_ += 4;
    std::memcpy(&v, &bits, sizeof v);
    return true;
  }
  bool u64(std::uint64_t& v, const char* field) {
    if (left() < 8) return fail(at_, std::string(field) + ": the bytes end");
    v = 0;
    for (int i = 0; i < 8; ++i) v |= std::uint64_t{bytes_[at_ + i]} << (8 * i);
    at_ += 8;
    return true;
  }
  bool bytes(std::span<const std::uint8_t>& out, const char* field) {
    const std::size_t from = at_;
    std::uint64_t n = 0;
    if (!varint(n, field)) return false;
    if (n > left()) {
      return fail(from, std::string(field) + " is " + std::to_string(n) + " bytes, " +
                            std::to_string(left()) + " are left");
    }
    out = bytes_.subspan(at_, static_cast<std::size_t>(n));
    at_ += static_cast<std::size_t>(n);
    return true;
  }
  // A list's length, refused when the bytes left cannot hold that many of at least `least`
  // bytes each (so nothing is sized by a forged count).
  bool count(std::size_t& n, const char* field, std::size_t least) {
    const std::size_t from = at_;
    std::uint64_t v = 0;
    if (!varint(v, field)) return false;
    if (v > left() / least) {
      return fail(from, std::string(field) + " is " + std::to_string(v) + ", more than the " +
                            std::to_string(left()) + " bytes left can hold");
    }
    n = static_cast<std::size_t>(v);
    return true;
  }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t at_ = 0;
  std::string error_;
};

bool read(Reader& r, EntityImage& e) {
  std::uint8_t flags = 0;
  std::uint8_t key_type = 0;
  if (!(r.varint(e.id, "id") && r.number(e.owner, "owner") && r.varint(e.owner_epoch, "owner_epoch") &&
        r.u8(flags, "flags")))
    return false;
  if ((flags & ~0x3fu) != 0)
    return r.fail(r.at() - 1, "flags is " + std::to_string(flags) + ": bits 6 and 7 must be 0");
  e.always_relevant = (flags & 1) != 0;
  e.presenter = (flags & 2) != 0;
  e.teleported = (flags & 4) != 0;
  e.has_full = (flags & 8) != 0;
  e.created = (flags & 16) != 0;
  e.carried = (flags & 32) != 0;
  if (!(r.f32(e.x, "x") && r.f32(e.z, "z") && r.f32(e.vx, "vx") && r.f32(e.vz, "vz") &&
        r.f32(e.bound_radius, "bound_radius") && r.f32(e.radius_scale, "radius_scale") &&
        r.u8(key_type, "key type") && r.varint(e.key.value, "key value") && r.number(e.space, "space") &&
        r.varint(e.parent, "parent") && r.varint(e.owner_client, "owner_client") &&
        r.varint(e.full_revision, "full_revision")))
    return false;
  e.key.type = static_cast<InterestKeyType>(key_type);
  e.full = {};
  if (e.has_full && !r.bytes(e.full, "full")) return false;
  return r.bytes(e.update, "update") && r.bytes(e.blob, "blob");
}

bool read(Reader& r, GhostOut& g) {
  std::uint8_t reason = 0;
  if (!(r.varint(g.id, "id") && r.u8(reason, "reason"))) return false;
  g.reason = static_cast<DespawnReason>(reason);
  return true;
}

bool read(Reader& r, EntityHandover& h) {
  return r.varint(h.id, "id") && r.number(h.to, "to") && r.varint(h.epoch, "epoch");
}

bool read(Reader& r, std::vector<KeySubscription>& list, const char* field) {
  std::size_t n = 0;
  if (!r.count(n, field, 3)) return false;
  list.resize(n);
  for (KeySubscription& s : list) {
    if (!(r.varint(s.key, "subscription key") && r.number(s.send_rate, "send_rate") &&
          r.flag(s.bypass_distance, "bypass_distance")))
      return false;
  }
  return true;
}

bool read(Reader& r, std::vector<std::uint64_t>& list, const char* field) {
  std::size_t n = 0;
  if (!r.count(n, field, 1)) return false;
  list.resize(n);
  for (std::uint64_t& v : list) {
    if (!r.varint(v, field)) return false;
  }
  return true;
}

bool read(Reader& r, ClientHandover& h) {
  ClientImage& c = h.world;
  std::size_t members = 0;
  if (!(r.varint(h.client, "client") && r.number(h.to, "to") &&
        r.varint(h.last_input_seq, "last_input_seq") && r.varint(c.viewer, "viewer") &&
        r.count(members, "members", 2)))
    return false;
  c.members.resize(members);
  for (ClientImage::Member& m : c.members) {
    if (!(r.varint(m.entity, "member") && r.varint(m.unseen_ticks, "unseen_ticks"))) return false;
  }
  return r.flag(c.sighted, "sighted") && read(r, c.area_subscriptions, "area_subscriptions") &&
         read(r, c.user_subscriptions, "user_subscriptions") &&
         r.varint(c.subscription_revision, "subscription_revision") &&
         read(r, c.extra_origins, "extra_origins") && read(r, c.owned, "owned") &&
         r.flag(c.origins_changed, "origins_changed") &&
         r.flag(c.origins_changed_at_last_tick, "origins_changed_at_last_tick") &&
         r.f32(c.look_ahead, "look_ahead") && r.f32(c.view_enter_radius, "view_enter_radius") &&
         r.f32(c.view_leave_radius, "view_leave_radius") && r.f32(c.last_enter_radius, "last_enter_radius") &&
         r.f32(c.last_leave_radius, "last_leave_radius") && r.bytes(h.replicator, "replicator");
}

bool read(Reader& r, RemoteEvent& e) {
  return r.number(e.event_class, "event_class") && r.f32(e.x, "x") && r.f32(e.z, "z") &&
         r.number(e.space, "space") && r.varint(e.subject, "subject") && r.varint(e.user_data, "user_data") &&
         r.varint(e.emit_order, "emit_order");
}

bool read(Reader& r, HolderCount& h) { return r.varint(h.id, "id") && r.number(h.count, "count"); }

template <class T>
std::vector<T>& list_of(ShardFrame& f) {
  if constexpr (std::is_same_v<T, EntityImage>) return f.images;
  if constexpr (std::is_same_v<T, GhostOut>) return f.ghost_outs;
  if constexpr (std::is_same_v<T, EntityHandover>) return f.entity_handovers;
  if constexpr (std::is_same_v<T, ClientHandover>) return f.client_handovers;
  if constexpr (std::is_same_v<T, RemoteEvent>) return f.events;
  if constexpr (std::is_same_v<T, HolderCount>) return f.holder_counts;
}

// Decodes one record of kind T, whose type byte is at `from`, checks it, and appends it.
template <class T>
bool read_record(Reader& r, ShardFrame& f, ShardRecordType type, std::size_t from) {
  std::vector<T>& list = list_of<T>(f);
  list.emplace_back();
  if (!read(r, list.back())) return false;
  if (std::string broken = rule_of(list.back()); !broken.empty())
    return r.fail(from, std::string(type_name(type)) + " " + broken);
  f.order.push_back({type, static_cast<std::uint32_t>(list.size() - 1)});
  return true;
}

}  // namespace

void ShardFrame::clear() noexcept {
  header = {};
  order.clear();
  images.clear();
  ghost_outs.clear();
  entity_handovers.clear();
  client_handovers.clear();
  events.clear();
  holder_counts.clear();
}

#define SIGHTLINE_SHARD_FRAME_ADD(Type, list, kind)                                    \
  void ShardFrame::add(const Type& r) {                                                \
    order.push_back({ShardRecordType::kind, static_cast<std::uint32_t>(list.size())}); \
    list.push_back(r);                                                                 \
  }
SIGHTLINE_SHARD_FRAME_ADD(EntityImage, images, entity_image)
SIGHTLINE_SHARD_FRAME_ADD(GhostOut, ghost_outs, ghost_out)
SIGHTLINE_SHARD_FRAME_ADD(EntityHandover, entity_handovers, entity_handover)
SIGHTLINE_SHARD_FRAME_ADD(ClientHandover, client_handovers, client_handover)
SIGHTLINE_SHARD_FRAME_ADD(RemoteEvent, events, remote_event)
SIGHTLINE_SHARD_FRAME_ADD(HolderCount, holder_counts, holder_count)
#undef SIGHTLINE_SHARD_FRAME_ADD

Status encode_shard_frame(const ShardFrame& frame, std::vector<std::uint8_t>& out) {
  out.clear();
  const auto refuse = [&](std::size_t i, ShardRecordType type, const std::string& why) {
    out.clear();
    return Status{ErrorCode::invalid_argument,
                  "encode_shard_frame: record " + std::to_string(i) + " (" + type_name(type) + "): " + why};
  };
  const ShardFrameHeader& h = frame.header;
  if (h.kind != ShardFrameKind::tick && h.kind != ShardFrameKind::keyframe) {
    return {ErrorCode::invalid_argument, "encode_shard_frame: header kind is " +
                                             std::to_string(static_cast<unsigned>(h.kind)) +
                                             ": 0 (tick) or 1 (keyframe)"};
  }
  if (std::string s =
          shard("header from", h.from).empty() ? shard("header to", h.to) : shard("header from", h.from);
      !s.empty())
    return {ErrorCode::invalid_argument, "encode_shard_frame: " + s};
  Writer w(out);
  w.u8(kShardFrameVersion);
  w.u8(static_cast<std::uint8_t>(h.kind));
  w.varint(h.from);
  w.varint(h.to);
  w.varint(h.tick);
  w.varint(h.frame_seq);
  w.varint(h.region_epoch);
  for (std::size_t i = 0; i < frame.order.size(); ++i) {
    const ShardFrame::Entry e = frame.order[i];
    const auto put = [&](const auto& list) -> std::string {
      if (e.index >= list.size()) return "index " + std::to_string(e.index) + " beyond its list";
      if (std::string broken = rule_of(list[e.index]); !broken.empty()) return broken;
      w.u8(static_cast<std::uint8_t>(e.type));
      write(w, list[e.index]);
      return {};
    };
    std::string broken;
    switch (e.type) {
      case ShardRecordType::entity_image: broken = put(frame.images); break;
      case ShardRecordType::ghost_out: broken = put(frame.ghost_outs); break;
      case ShardRecordType::entity_handover: broken = put(frame.entity_handovers); break;
      case ShardRecordType::client_handover: broken = put(frame.client_handovers); break;
      case ShardRecordType::remote_event: broken = put(frame.events); break;
      case ShardRecordType::holder_count: broken = put(frame.holder_counts); break;
      default: broken = "unknown type " + std::to_string(static_cast<unsigned>(e.type));
    }
    if (!broken.empty()) return refuse(i, e.type, broken);
  }
  const std::uint64_t digest = fnv1a(out);
  w.u8(kFrameEnd);
  w.varint(frame.order.size());
  w.u64(digest);
  if (out.size() > kMaxShardFrameBytes) {
    const std::size_t size = out.size();
    out.clear();
    return {ErrorCode::invalid_argument, "encode_shard_frame: " + std::to_string(size) +
                                             " bytes, more than " + std::to_string(kMaxShardFrameBytes) +
                                             " (kMaxShardFrameBytes)"};
  }
  return {};
}

Status decode_shard_frame(std::span<const std::uint8_t> bytes, ShardFrame& frame) {
  frame.clear();
  Reader r(bytes);
  const auto refused = [&] {
    frame.clear();
    return Status{ErrorCode::malformed_packet, r.error()};
  };
  if (bytes.size() > kMaxShardFrameBytes) {
    r.fail(0, std::to_string(bytes.size()) + " bytes, more than " + std::to_string(kMaxShardFrameBytes));
    return refused();
  }
  std::uint8_t version = 0;
  std::uint8_t kind = 0;
  ShardFrameHeader& h = frame.header;
  if (!r.u8(version, "version")) return refused();
  if (version != kShardFrameVersion) {
    r.fail(0, "version is " + std::to_string(version) + ": this library reads " +
                  std::to_string(kShardFrameVersion));
    return refused();
  }
  if (!r.u8(kind, "kind")) return refused();
  if (kind > 1) {
    r.fail(1, "kind is " + std::to_string(kind) + ": 0 (tick) or 1 (keyframe)");
    return refused();
  }
  h.kind = static_cast<ShardFrameKind>(kind);
  const std::size_t shards_at = r.at();
  if (!(r.number(h.from, "from") && r.number(h.to, "to") && r.varint(h.tick, "tick") &&
        r.varint(h.frame_seq, "frame_seq") && r.varint(h.region_epoch, "region_epoch")))
    return refused();
  if (std::string s = shard("from", h.from).empty() ? shard("to", h.to) : shard("from", h.from); !s.empty()) {
    r.fail(shards_at, s);
    return refused();
  }
  for (;;) {
    const std::size_t at = r.at();
    std::uint8_t type = 0;
    if (!r.u8(type, "record type")) return refused();
    bool ok = true;
    switch (type) {
      case 1: ok = read_record<EntityImage>(r, frame, ShardRecordType::entity_image, at); break;
      case 2: ok = read_record<GhostOut>(r, frame, ShardRecordType::ghost_out, at); break;
      case 3: ok = read_record<EntityHandover>(r, frame, ShardRecordType::entity_handover, at); break;
      case 4: ok = read_record<ClientHandover>(r, frame, ShardRecordType::client_handover, at); break;
      case 5: ok = read_record<RemoteEvent>(r, frame, ShardRecordType::remote_event, at); break;
      case 6: ok = read_record<HolderCount>(r, frame, ShardRecordType::holder_count, at); break;
      case kFrameEnd: {
        std::uint64_t count = 0;
        std::uint64_t digest = 0;
        if (!(r.varint(count, "record count") && r.u64(digest, "digest"))) return refused();
        if (count != frame.order.size()) {
          r.fail(at, "the end record counts " + std::to_string(count) + " records, the frame holds " +
                         std::to_string(frame.order.size()));
          return refused();
        }
        if (digest != fnv1a(bytes.first(at))) {
          r.fail(at, "the digest does not match the bytes before it");
          return refused();
        }
        if (r.left() != 0) {
          r.fail(r.at(), std::to_string(r.left()) + " bytes after the end record");
          return refused();
        }
        return {};
      }
      default: r.fail(at, "record type is " + std::to_string(type) + ": unknown"); return refused();
    }
    if (!ok) return refused();
  }
}

}  // namespace sightline
