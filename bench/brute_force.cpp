#include "brute_force.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "sightline/serialize.h"

namespace sightline::bench {

namespace {

// The same float expression as the library's, so both draw the line at exactly the same pairs.
[[nodiscard]] float distance2(float ax, float az, float bx, float bz) noexcept {
  const float dx = ax - bx;
  const float dz = az - bz;
  return dx * dx + dz * dz;
}

}  // namespace

BruteForce::BruteForce(std::uint32_t entities, std::span<const std::uint32_t> viewers, float enter_radius,
                       float leave_radius, std::uint32_t crowd_cap)
    : xs_(entities, 0.0f),
      zs_(entities, 0.0f),
      enter_radius_(enter_radius),
      enter2_(enter_radius * enter_radius),
      leave2_(leave_radius * leave_radius),
      crowd_cap_(crowd_cap) {
  clients_.resize(viewers.size());
  for (std::size_t c = 0; c < viewers.size(); ++c) {
    clients_[c].viewer = viewers[c];
    clients_[c].is_member.assign(entities, 0);
  }
}

void BruteForce::set_positions(std::span<const float> xs, std::span<const float> zs) {
  std::copy(xs.begin(), xs.end(), xs_.begin());
  std::copy(zs.begin(), zs.end(), zs_.begin());
}

void BruteForce::set_members(std::size_t client, std::span<const std::uint32_t> members) {
  Client& c = clients_[client];
  for (const std::uint32_t e : c.members) c.is_member[e] = 0;
  c.members.assign(members.begin(), members.end());
  for (const std::uint32_t e : c.members) c.is_member[e] = 1;
}

TickStats BruteForce::tick() {
  TickStats stats;
  stats.tick = ticks_++;
  const auto entities = static_cast<std::uint32_t>(xs_.size());
  const float* const xs = xs_.data();
  const float* const zs = zs_.data();
  for (Client& client : clients_) {
    const float vx = xs[client.viewer];
    const float vz = zs[client.viewer];
    std::uint8_t* const is_member = client.is_member.data();
    client.kept.clear();
    client.spawns.clear();
    client.despawns.clear();
    client.updates.clear();

    for (const std::uint32_t e : client.members) {
      ++stats.distance_tests;
      if (distance2(xs[e], zs[e], vx, vz) > leave2_) {
        client.despawns.push_back(e);
        is_member[e] = 0;
      } else {
        client.kept.push_back(e);
      }
    }

    // Members were tested above; every other entity but the viewer is tested here.
    stats.distance_tests += entities - 1 - client.kept.size();
    for (std::uint32_t e = 0; e < entities; ++e) {
      if (distance2(xs[e], zs[e], vx, vz) <= enter2_ && !is_member[e] && e != client.viewer) {
        client.spawns.push_back(e);
      }
    }
    if (crowd_cap_ != 0 && client.kept.size() + client.spawns.size() > crowd_cap_) {
      client.ranked.clear();
      for (const std::uint32_t e : client.kept)
        client.ranked.emplace_back(distance2(xs[e], zs[e], vx, vz) / leave2_, e);
      for (const std::uint32_t e : client.spawns)
        client.ranked.emplace_back(distance2(xs[e], zs[e], vx, vz) / enter2_, e);
      std::sort(client.ranked.begin(), client.ranked.end());
      for (std::size_t i = crowd_cap_; i < client.ranked.size(); ++i) is_member[client.ranked[i].second] = 2;
      // 2 marks the left-out: kept ones despawn, new ones never enter.
      std::erase_if(client.kept, [&](std::uint32_t e) {
        if (is_member[e] != 2) return false;
        client.despawns.push_back(e);
        is_member[e] = 0;
        return true;
      });
      std::erase_if(client.spawns, [&](std::uint32_t e) {
        if (is_member[e] != 2) return false;
        is_member[e] = 0;
        return true;
      });
    }
    for (const std::uint32_t e : client.spawns) is_member[e] = 1;

    client.members.resize(client.kept.size() + client.spawns.size());
    std::merge(client.kept.begin(), client.kept.end(), client.spawns.begin(), client.spawns.end(),
               client.members.begin());
    client.updates.assign(client.members.begin(), client.members.end());

    stats.spawns += client.spawns.size();
    stats.despawns += client.despawns.size();
    stats.updates += client.updates.size();
    stats.members += client.members.size();
  }
  return stats;
}

BruteForce::SendTotals BruteForce::send(float tick_seconds, std::uint32_t budget_bytes) {
  SendTotals totals;
  packet_.resize(budget_bytes);
  const float distance_scale = enter_radius_ / 10.0f;
  for (Client& client : clients_) {
    std::uint32_t used = 0;
    // A record: its type, the entity's index, then the state; it goes if it fits.
    auto write = [&](std::uint32_t e, std::uint32_t type) {
      Stream record = Stream::writer({packet_.data() + used, budget_bytes - used});
      float x = xs_[e];
      float z = zs_[e];
      bool ok = record.serialize_uint(type, 0, 2) && record.serialize_uint(e, 0, 0xffffffffu);
      if (type != 2) {
        ok = ok && record.serialize_quantized(x, -10000.0f, 10000.0f, 1.0f / 256.0f) &&
             record.serialize_quantized(z, -10000.0f, 10000.0f, 1.0f / 256.0f);
      }
      if (type == 0) {
        std::uint32_t kind = e % 5;
        std::uint32_t health = 100;
        std::array<std::uint8_t, 16> name{};
        for (std::size_t i = 0; i < name.size(); ++i) name[i] = static_cast<std::uint8_t>('a' + (e + i) % 26);
        ok = ok && record.serialize_uint(kind, 0, 7) && record.serialize_uint(health, 0, 100) &&
             record.serialize_bytes(name.data(), name.size());
      }
      if (!ok || !record.ok()) return false;
      used += static_cast<std::uint32_t>(record.bytes());
      return true;
    };
    for (const std::uint32_t e : client.despawns) {
      client.accumulators.erase(e);
      write(e, 2);
    }
    for (const std::uint32_t e : client.spawns) {
      client.accumulators[e] = 0.0f;
      write(e, 0);
    }
    const float vx = xs_[client.viewer];
    const float vz = zs_[client.viewer];
    candidates_.clear();
    for (const std::uint32_t e : client.members) {
      float& acc = client.accumulators[e];
      const float dx = xs_[e] - vx;
      const float dz = zs_[e] - vz;
      acc += tick_seconds / (1.0f + std::sqrt(dx * dx + dz * dz) / distance_scale);
      candidates_.emplace_back(-acc, e);
    }
    std::sort(candidates_.begin(), candidates_.end());
    for (const auto& [order, e] : candidates_) {
      if (used + 3 > budget_bytes) break;
      if (!write(e, 1)) continue;
      client.accumulators[e] = 0.0f;
      ++totals.updates;
    }
    totals.bytes += used;
  }
  return totals;
}

}  // namespace sightline::bench
