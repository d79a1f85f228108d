// Handles are values: a slot index plus a generation. Generation 0 is the null handle.
#pragma once

#include <cstdint>

namespace sightline {

/// An entity of a World. Copy it freely; it never dangles: once the entity is destroyed
/// (or its slot reused, which bumps the generation) every call refuses it with
/// ErrorCode::stale_handle. A value-initialised EntityId is null.
struct EntityId {
  std::uint32_t index = 0;       ///< Slot in the world's entity arrays, 0-based.
  std::uint32_t generation = 0;  ///< 0 means null; live entities have generation >= 1.

  [[nodiscard]] constexpr bool is_null() const noexcept { return generation == 0; }
  friend constexpr bool operator==(EntityId, EntityId) noexcept = default;
};

/// A client (a connection that receives a replication stream). Same rules as EntityId.
struct ClientId {
  std::uint32_t index = 0;
  std::uint32_t generation = 0;

  [[nodiscard]] constexpr bool is_null() const noexcept { return generation == 0; }
  friend constexpr bool operator==(ClientId, ClientId) noexcept = default;
};

/// A space of a World (a room, an instance): entities in different spaces never see each other.
/// Same rules as EntityId. Every World has a default space that cannot be destroyed.
struct SpaceId {
  std::uint32_t index = 0;
  std::uint32_t generation = 0;

  [[nodiscard]] constexpr bool is_null() const noexcept { return generation == 0; }
  friend constexpr bool operator==(SpaceId, SpaceId) noexcept = default;
};

}  // namespace sightline
