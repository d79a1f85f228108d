// The simulated game's state, shared by the simulator and the benchmarks: a walker's position to
// 1/256 unit in every update; a spawn adds what a character carries besides (a kind, health and a
// 16-byte name). About 6 bytes an update, 25 a spawn.
#pragma once

#include <array>

#include "sightline/serialize.h"
#include "sightline/world.h"

namespace sightline::scenarios {

/// An EntitySerializer (replicator.h) whose context is the const World the walkers live in.
inline bool serialize_walker(Stream& s, EntityId e, StatePart part, void* context) {
  const World& world = *static_cast<const World*>(context);
  Position p = *world.position(e);
  if (!s.serialize_quantized(p.x, -10000.0f, 10000.0f, 1.0f / 256.0f)) return false;
  if (!s.serialize_quantized(p.z, -10000.0f, 10000.0f, 1.0f / 256.0f)) return false;
  if (part == StatePart::update) return true;
  std::uint32_t kind = e.index % 5;
  std::uint32_t health = 100;
  std::array<std::uint8_t, 16> name{};
  for (std::size_t i = 0; i < name.size(); ++i) name[i] = static_cast<std::uint8_t>('a' + (e.index + i) % 26);
  return s.serialize_uint(kind, 0, 7) && s.serialize_uint(health, 0, 100) &&
         s.serialize_bytes(name.data(), name.size());
}

/// The same walker sent whole in every update as well: position, kind, health, a 16-byte name and
/// 16 bytes of gear, about 40 bytes of which only the position changes while it walks. The state a
/// game sends when it does not split its state by part, and what delta updates are for.
inline bool serialize_walker_whole(Stream& s, EntityId e, StatePart /*part*/, void* context) {
  if (!serialize_walker(s, e, StatePart::full, context)) return false;
  std::array<std::uint8_t, 16> gear{};
  for (std::size_t i = 0; i < gear.size(); ++i)
    gear[i] = static_cast<std::uint8_t>((e.index * 7 + i * 13) & 0xff);
  return s.serialize_bytes(gear.data(), gear.size());
}

}  // namespace sightline::scenarios
