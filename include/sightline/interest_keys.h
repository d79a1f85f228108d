// Interest keys: which clients may hold an entity, independently of distance.
//
// Every entity carries one key. Global (the default) admits every client; an Area or User key
// admits only the clients subscribed to it. Application keys are 63-bit values; the stored 64-bit
// encoding keeps the type in bit 0: Area `(k << 1) | 1`, User `k << 1`, Global 0. So User key 0
// would read as Global and is refused, and a key with bit 63 set would lose that bit and is
// refused too.
#pragma once

#include <cstdint>

#include "sightline/limits.h"

namespace sightline {

enum class InterestKeyType : std::uint8_t {
  global = 0,  ///< Every client may hold the entity (subject to distance).
  area = 1,    ///< Clients subscribed through set_area_subscriptions: zones, regions, rooms.
  user = 2,    ///< Clients subscribed through add_user_subscription: teams, parties, private channels.
};

/// A decoded key: its type and the application value (0 for Global).
struct InterestKey {
  InterestKeyType type = InterestKeyType::global;
  std::uint64_t value = 0;
  friend constexpr bool operator==(InterestKey, InterestKey) noexcept = default;
};

[[nodiscard]] constexpr std::uint64_t encode_area_key(std::uint64_t key) noexcept { return (key << 1) | 1u; }
[[nodiscard]] constexpr std::uint64_t encode_user_key(std::uint64_t key) noexcept { return key << 1; }
[[nodiscard]] constexpr InterestKey decode_interest_key(std::uint64_t stored) noexcept {
  if (stored == 0) return {InterestKeyType::global, 0};
  return {(stored & 1u) ? InterestKeyType::area : InterestKeyType::user, stored >> 1};
}

/// One subscription of a client to an Area or User key.
struct KeySubscription {
  std::uint64_t key = 0;  ///< Application key value, <= kMaxInterestKey (User keys also != 0).
  /// Send period in ticks, 1..kMaxPeriod (0 is read as 1): entities admitted by this key are updated
  /// every `send_rate` ticks, staggered by entity order (world.h). When several subscriptions match one
  /// entity the fastest (smallest) wins; with distance tiers, the slower of key and tier wins.
  std::uint32_t send_rate = 1;
  /// Admits matching entities at any distance, as a team channel does: they are held while the
  /// subscription lasts, with no radius test.
  bool bypass_distance = false;
  friend constexpr bool operator==(const KeySubscription&, const KeySubscription&) noexcept = default;
};

}  // namespace sightline
