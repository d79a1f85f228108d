// The bytes of a recording (docs/recording.md): the calls it holds and, for each argument type,
// one function that both writes and reads it, so the Recorder and Replay cannot drift apart.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

#include "sightline/client_image.h"
#include "sightline/events.h"
#include "sightline/handles.h"
#include "sightline/interest_keys.h"
#include "sightline/occlusion.h"
#include "sightline/space_def.h"
#include "sightline/world.h"
#include "sightline/world_def.h"

namespace sightline::recording {

inline constexpr std::array<std::uint8_t, 8> kMagic = {'S', 'L', 'R', 'E', 'C', 'O', 'R', 'D'};
// Version 2 added EntityDef::external_id and created, WorldDef::order_key and first_tick, and
// adopt_client; a version 1
// recording still replays (those fields at their defaults).
inline constexpr std::uint32_t kVersion = 2;
inline constexpr std::uint32_t kOldestVersion = 1;

// One record per call; the numbers are the format's and never change meaning.
enum class Op : std::uint8_t {
  tick = 1,
  create_entity = 2,
  destroy_entity = 3,
  set_position = 4,
  set_positions = 5,
  set_bound_radius = 6,
  set_radius_scale = 7,
  set_always_relevant = 8,
  set_presenter = 9,
  teleport = 10,
  attach = 11,
  detach = 12,
  create_client = 13,
  destroy_client = 14,
  set_viewer = 15,
  add_origin = 16,
  remove_origin = 17,
  set_owner = 18,
  clear_owner = 19,
  set_area_interest_key = 20,
  set_user_interest_key = 21,
  set_global_interest_key = 22,
  set_area_subscriptions = 23,
  add_user_subscription = 24,
  remove_user_subscription = 25,
  clear_area_subscriptions = 26,
  clear_user_subscriptions = 27,
  clear_subscriptions = 28,
  create_space = 29,
  destroy_space = 30,
  set_space_def = 31,
  set_space = 32,
  set_culling_drill = 33,
  clear_culling_drill = 34,
  set_walls = 35,
  set_velocity = 36,
  set_look_ahead = 37,
  set_visibility_filter = 38,
  set_view_radius = 39,
  set_history_capacity = 40,
  set_radii = 41,
  set_crowd_cap = 42,
  create_event_class = 43,
  set_event_class = 44,
  emit_event = 45,
  withdraw_entity = 46,
  adopt_client = 47,
};
inline constexpr std::uint8_t kLastOp = 47;

// The World call's name, e.g. "set_position"; "unknown" beyond kLastOp.
const char* op_name(std::uint8_t op) noexcept;

// An Io is a Writer or a Reader below: `io.bytes(p, n)` moves n bytes, and returns false once a
// Reader runs out; `io.version()` is the recording's format version. Every field is little-endian; a float
// goes as its bits.
template <class Io, class T>
requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) bool field(Io& io, T& v) {
  std::array<std::uint8_t, sizeof(T)> b{};
  if (io.writing()) {
    for (std::size_t i = 0; i < sizeof(T); ++i)
      b[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(v) >> (8 * i));
  }
  if (!io.bytes(b.data(), b.size())) return false;
  if (!io.writing()) {
    std::uint64_t u = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) u |= std::uint64_t{b[i]} << (8 * i);
    v = static_cast<T>(u);
  }
  return true;
}

template <class Io>
bool field(Io& io, float& v) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  if (!field(io, bits)) return false;
  std::memcpy(&v, &bits, sizeof bits);
  return true;
}

// One byte, 0 or 1; a Reader refuses any other.
template <class Io>
bool field(Io& io, bool& v) {
  std::uint8_t b = v ? 1 : 0;
  if (!field(io, b)) return false;
  if (b > 1) return io.fail("a flag is neither 0 nor 1");
  v = b != 0;
  return true;
}

// An enum goes as its underlying integer; the World refuses a value it does not define.
template <class Io, class E>
requires std::is_enum_v<E>
bool field(Io& io, E& v) {
  auto u = static_cast<std::underlying_type_t<E>>(v);
  if (!field(io, u)) return false;
  v = static_cast<E>(u);
  return true;
}

template <class Io, class Handle>
requires(std::is_same_v<Handle, EntityId> || std::is_same_v<Handle, ClientId> ||
         std::is_same_v<Handle, SpaceId> ||
         std::is_same_v<Handle, EventClassId>) bool field(Io& io, Handle& h) {
  return field(io, h.index) && field(io, h.generation);
}

template <class Io>
bool field(Io& io, EntityDef& d) {
  return field(io, d.x) && field(io, d.z) && field(io, d.always_relevant) && field(io, d.bound_radius) &&
         field(io, d.radius_scale) && field(io, d.space) && field(io, d.presenter) &&
         (io.version() < 2 || (field(io, d.external_id) && field(io, d.created)));
}

template <class Io>
bool field(Io& io, SpaceDef& d) {
  return field(io, d.culling) && field(io, d.enter_radius) && field(io, d.leave_radius) &&
         field(io, d.radius) && field(io, d.enter_factor) && field(io, d.leave_factor) &&
         field(io, d.min_view_radius) && field(io, d.max_view_radius) && field(io, d.broadcast_threshold) &&
         field(io, d.broadcast_margin) && field(io, d.visibility_hold_ticks);
}

template <class Io>
bool field(Io& io, KeySubscription& s) {
  return field(io, s.key) && field(io, s.send_rate) && field(io, s.bypass_distance);
}

template <class Io>
bool field(Io& io, WallSegment& w) {
  return field(io, w.x0) && field(io, w.z0) && field(io, w.x1) && field(io, w.z1);
}

template <class Io>
bool field(Io& io, DistanceTier& t) {
  return field(io, t.max_distance_fraction) && field(io, t.period);
}

template <class Io>
bool field(Io& io, EventClassDef& d) {
  return field(io, d.radius) && field(io, d.when_absent) && field(io, d.reliable);
}

template <class Io>
bool field(Io& io, EventDef& d) {
  return field(io, d.event_class) && field(io, d.x) && field(io, d.z) && field(io, d.space) &&
         field(io, d.subject) && field(io, d.user_data);
}

template <class Io>
bool field(Io& io, ClientImage::Member& m) {
  return field(io, m.entity) && field(io, m.unseen_ticks);
}

// The smallest encoded size of each element of a list, so that a Reader can refuse a count the
// remaining bytes cannot hold before it sizes anything by it.
template <class T>
inline constexpr std::size_t kMinBytes = 1;
template <>
inline constexpr std::size_t kMinBytes<KeySubscription> = 13;
template <>
inline constexpr std::size_t kMinBytes<WallSegment> = 16;
template <>
inline constexpr std::size_t kMinBytes<DistanceTier> = 8;
template <>
inline constexpr std::size_t kMinBytes<ClientImage::Member> = 16;
template <>
inline constexpr std::size_t kMinBytes<std::uint64_t> = 8;

// A list: its length (u32), then its elements. A Reader fills `list`, reusing its storage.
template <class Io, class T>
bool field(Io& io, std::vector<T>& list) {
  auto n = static_cast<std::uint32_t>(list.size());
  if (!field(io, n)) return false;
  if (!io.writing()) {
    if (n > io.remaining() / kMinBytes<T>) return io.fail("a list is longer than the bytes left");
    list.resize(n);
  }
  for (T& v : list) {
    if (!field(io, v)) return false;
  }
  return true;
}

// The same list from a span, for the Writer (which then allocates nothing).
template <class Io, class T>
bool field(Io& io, std::span<const T> list) {
  auto n = static_cast<std::uint32_t>(list.size());
  if (!field(io, n)) return false;
  for (T v : list) {
    if (!field(io, v)) return false;
  }
  return true;
}

template <class Io>
bool field(Io& io, ClientImage& c) {
  return field(io, c.viewer) && field(io, c.members) && field(io, c.sighted) &&
         field(io, c.area_subscriptions) && field(io, c.user_subscriptions) &&
         field(io, c.subscription_revision) && field(io, c.extra_origins) && field(io, c.owned) &&
         field(io, c.origins_changed) && field(io, c.origins_changed_at_last_tick) &&
         field(io, c.look_ahead) && field(io, c.view_enter_radius) && field(io, c.view_leave_radius) &&
         field(io, c.last_enter_radius) && field(io, c.last_leave_radius);
}

// The parts of a WorldDef that decide what a World does (not its hooks).
template <class Io>
bool field(Io& io, WorldDef& d) {
  return field(io, d.enter_radius) && field(io, d.leave_radius) && field(io, d.cell_size) &&
         field(io, d.max_grid_cells) && field(io, d.tiers) && field(io, d.threads) &&
         field(io, d.thread_min_work) && field(io, d.fast_paths) && field(io, d.crowd_cap) &&
         field(io, d.entity_capacity) && field(io, d.client_capacity) &&
         (io.version() < 2 || (field(io, d.order_key) && field(io, d.first_tick)));
}

}  // namespace sightline::recording
