// Seeded random shard frames for the codec's tests and its fuzzer: every record kind, with
// values at the edges the decoder checks (varint widths, coordinates at kMaxCoordinate, empty
// and full payloads, every flag).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <vector>

#include "rng.h"
#include "sightline/limits.h"
#include "sightline/shard_frame.h"

namespace sightline::testing {

/// A random frame whose byte spans point into `storage` (which must outlive it).
inline ShardFrame random_shard_frame(scenarios::Rng& rng, std::deque<std::vector<std::uint8_t>>& storage) {
  const auto u64 = [&]() -> std::uint64_t {
    switch (rng.below(5)) {
      case 0: return rng.below(128);
      case 1: return rng.below(1u << 14) + 128;
      case 2: return std::numeric_limits<std::uint64_t>::max() - rng.below(3);
      default: return rng.next() >> rng.below(64);
    }
  };
  const auto id = [&] { return u64() | 1; };
  const auto coordinate = [&]() -> float {
    switch (rng.below(4)) {
      case 0: return kMaxCoordinate;
      case 1: return -0.0f;
      default: return rng.uniform(-1.0e4f, 1.0e4f);
    }
  };
  const auto bytes = [&](std::size_t most) -> std::span<const std::uint8_t> {
    std::vector<std::uint8_t>& b =
        storage.emplace_back(rng.below(4) == 0 ? 0 : rng.below(static_cast<std::uint32_t>(most)));
    for (std::uint8_t& v : b) v = static_cast<std::uint8_t>(rng.next());
    return b;
  };
  const auto shard = [&] { return static_cast<ShardId>(rng.below(kMaxShards)); };
  ShardFrame f;
  f.header = {rng.below(2) == 0 ? ShardFrameKind::tick : ShardFrameKind::keyframe,
              shard(),
              shard(),
              u64(),
              u64(),
              u64()};
  const std::uint32_t records = rng.below(12);
  for (std::uint32_t i = 0; i < records; ++i) {
    switch (rng.below(6)) {
      case 0: {
        EntityImage e;
        e.id = id();
        e.owner = shard();
        e.owner_epoch = u64();
        e.always_relevant = rng.below(2) == 0;
        e.presenter = rng.below(2) == 0;
        e.teleported = rng.below(2) == 0;
        e.created = rng.below(2) == 0;
        e.carried = rng.below(2) == 0;
        e.x = coordinate();
        e.z = coordinate();
        e.vx = coordinate();
        e.vz = coordinate();
        e.bound_radius = rng.below(3) == 0 ? kMaxRadius : rng.uniform(0.0f, 10.0f);
        e.radius_scale = rng.below(3) == 0 ? kMinRadiusScale : 1.0f;
        const auto type = static_cast<InterestKeyType>(rng.below(3));
        e.key = {type, type == InterestKeyType::global ? 0 : (u64() & kMaxInterestKey) | 1};
        e.space = static_cast<std::uint32_t>(u64());
        e.parent = rng.below(2) == 0 ? 0 : e.id + 2;
        e.owner_client = rng.below(2) == 0 ? 0 : u64();
        e.full_revision = u64();
        e.has_full = rng.below(2) == 0;
        if (e.has_full) e.full = bytes(300);
        e.update = bytes(40);
        e.blob = bytes(20);
        f.add(e);
        break;
      }
      case 1:
        f.add(GhostOut{id(), rng.below(2) == 0 ? DespawnReason::left : DespawnReason::destroyed});
        break;
      case 2: f.add(EntityHandover{id(), shard(), u64()}); break;
      case 3: {
        ClientHandover h;
        h.client = id();
        h.to = shard();
        h.last_input_seq = u64();
        ClientImage& c = h.world;
        c.viewer = id();
        for (std::uint32_t m = rng.below(6); m > 0; --m) c.members.push_back({id(), u64()});
        c.sighted = rng.below(2) == 0;
        for (std::uint32_t s = rng.below(3); s > 0; --s)
          c.area_subscriptions.push_back({u64(), rng.below(70000), rng.below(2) == 0});
        for (std::uint32_t s = rng.below(3); s > 0; --s)
          c.user_subscriptions.push_back({u64(), rng.below(5), false});
        c.subscription_revision = u64();
        for (std::uint32_t o = rng.below(3); o > 0; --o) c.extra_origins.push_back(id());
        for (std::uint32_t o = rng.below(3); o > 0; --o) c.owned.push_back(id());
        c.origins_changed = rng.below(2) == 0;
        c.origins_changed_at_last_tick = rng.below(2) == 0;
        c.look_ahead = rng.uniform(0.0f, 2.0f);
        c.view_enter_radius = rng.uniform(0.0f, 50.0f);
        c.last_leave_radius = rng.uniform(0.0f, 50.0f);
        h.replicator = bytes(100);
        f.add(h);
        break;
      }
      case 4:
        f.add(RemoteEvent{static_cast<std::uint32_t>(u64()), coordinate(), coordinate(),
                          static_cast<std::uint32_t>(u64()), rng.below(2) == 0 ? 0 : id(), u64(), u64()});
        break;
      default: f.add(HolderCount{id(), static_cast<std::uint32_t>(u64())}); break;
    }
  }
  return f;
}

}  // namespace sightline::testing
