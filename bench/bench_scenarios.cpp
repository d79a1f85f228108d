#include "bench_scenarios.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace sightline::bench {

BenchScenario reference_scenario() {
  BenchScenario s;
  s.name = "reference";
  s.walk = scenarios::JitterWalkDef{};
  s.clients = s.walk.entities;
  s.enter_radius = 1.6f;
  s.leave_radius = 1.25f * 1.6f;
  s.checked_from_start = 20;
  s.warmup_ticks = 12000;  // 10 min at 20 Hz: sets and buffers at their high-water marks.
  s.checked_steady = 200;
  s.frame_block = 256;
  return s;
}

BenchScenario arena_scenario() {
  BenchScenario s;
  s.name = "arena";
  s.walk.entities = 50'000;
  s.walk.width = 2000.0f;
  s.walk.height = 2000.0f;
  s.walk.hz = 30.0f;
  s.walk.seed = 1;
  s.walk.speed = 1.5f;
  s.walk.turn = 1.0f;
  s.walk.jitter = 0.02f;
  s.clients = 100;
  s.enter_radius = 100.0f;
  s.leave_radius = 125.0f;
  s.checked_from_start = 5;
  s.warmup_ticks = 2400;  // 80 s of walking: the band between R and L has filled (sets ~48k).
  s.checked_steady = 30;
  s.frame_block = 32;
  return s;
}

BenchScenario mmo_scenario() {
  BenchScenario s = arena_scenario();
  s.name = "mmo";
  s.walk.entities = 100'000;
  s.walk.width = 10'000.0f;
  s.walk.height = 10'000.0f;
  s.clients = 10'000;
  s.enter_radius = 178.0f;  // pi R^2 x density = 99.5 entities within R of a client
  s.leave_radius = 1.25f * 178.0f;
  s.checked_from_start = 2;
  s.warmup_ticks = 300;
  s.checked_steady = 2;
  s.frame_block = 8;
  return s;
}

BenchScenario mmo_outlier_scenario() {
  BenchScenario s = mmo_scenario();
  s.name = "mmo_outlier";
  s.walk.entities += 1;
  s.walk.far_entities = 1;
  s.walk.far_x = kMaxCoordinate;
  s.walk.far_z = -kMaxCoordinate;
  return s;
}

BenchScenario clustered_scenario() {
  BenchScenario s = arena_scenario();
  s.name = "clustered";
  s.walk.hotspots = 8;
  s.walk.hotspot_fraction = 0.8f;
  s.walk.hotspot_size = 200.0f;  // 5,000 entities in 200 x 200: every client of a hotspot sees them all
  s.warmup_ticks = 300;
  s.checked_steady = 10;
  return s;
}

BenchScenario clustered_capped_scenario() {
  BenchScenario s = clustered_scenario();
  s.name = "clustered_capped";
  s.crowd_cap = 128;
  return s;
}

BenchScenario teleports_scenario() {
  BenchScenario s = arena_scenario();
  s.name = "teleports";
  s.walk.teleport_fraction = 0.01f;
  s.warmup_ticks = 600;
  s.checked_steady = 10;
  return s;
}

BenchScenario observers_scenario(float leave_radius) {
  BenchScenario s;
  s.name = leave_radius == 30.0f ? "observers" : "observers_l33";
  s.walk.entities = 10'000;
  s.walk.width = 2048.0f;
  s.walk.height = 2048.0f;
  s.walk.hz = 30.0f;
  s.walk.speed = 2.0f * 30.0f;  // 2 units a tick
  s.walk.seed = 1;
  s.clients = 10'000;
  s.enter_radius = 30.0f;
  s.leave_radius = leave_radius;
  s.checked_from_start = 3;
  s.warmup_ticks = 300;
  s.checked_steady = 10;
  s.frame_block = 32;
  return s;
}

BenchScenario observers_crowd_scenario() {
  BenchScenario s = observers_scenario(30.0f);
  s.name = "observers_crowd";
  s.walk.entities = 2000;
  s.walk.width = 512.0f;
  s.walk.height = 512.0f;
  s.clients = 2000;
  return s;
}

BenchScenario crowd_spot_scenario(std::uint32_t crowd_cap) {
  BenchScenario s;
  s.name = crowd_cap == 0 ? "crowd_spot_uncapped" : "crowd_spot";
  s.walk.entities = 20'000;
  s.walk.width = 4.0f;
  s.walk.height = 4.0f;
  s.walk.seed = 1;
  s.clients = 1000;
  s.enter_radius = 50.0f;  // the whole spot is within R of everyone in it
  s.leave_radius = 62.5f;
  s.crowd_cap = crowd_cap;
  s.checked_from_start = 2;
  s.warmup_ticks = 60;
  s.checked_steady = 2;
  s.frame_block = 16;
  s.time_brute_force = false;  // 20 million pairs a tick: checked ticks only
  return s;
}

BenchScenario crowd_clients_scenario() {
  BenchScenario s = crowd_spot_scenario(64);
  s.name = "crowd_clients";
  s.clients = 20'000;
  s.checked_from_start = 1;
  s.warmup_ticks = 30;
  s.checked_steady = 1;
  return s;
}

BenchScenario sparse_scenario() {
  BenchScenario s = observers_scenario(30.0f);
  s.name = "sparse";
  s.walk.entities = 1000;
  s.clients = 1000;
  return s;
}

std::vector<BenchScenario> all_scenarios() {
  return {reference_scenario(),       arena_scenario(),          mmo_scenario(),
          mmo_outlier_scenario(),     clustered_scenario(),      clustered_capped_scenario(),
          teleports_scenario(),       observers_scenario(30.0f), observers_scenario(33.0f),
          observers_crowd_scenario(), crowd_spot_scenario(64),   crowd_spot_scenario(0),
          crowd_clients_scenario(),   sparse_scenario()};
}

BenchScenario scaling_scenario(std::uint32_t entities) {
  BenchScenario s = observers_scenario(33.0f);
  const float side =
      s.walk.width * std::sqrt(static_cast<float>(entities) / static_cast<float>(s.walk.entities));
  s.name = "scaling_" + std::to_string(entities);
  s.walk.entities = entities;
  s.walk.width = side;
  s.walk.height = side;
  s.clients = entities;
  if (entities > kScalingBruteMaxEntities) {
    s.time_brute_force = false;
    s.checked_from_start = 1;
    s.checked_steady = 2;
  }
  return s;
}

std::vector<BenchScenario> scaling_scenarios() {
  std::vector<BenchScenario> out;
  for (const std::uint32_t n : {500u, 1000u, 2000u, 5000u, 10'000u, 20'000u, 50'000u}) {
    out.push_back(scaling_scenario(n));
  }
  return out;
}

BenchScenario world_scaling_scenario(std::uint32_t entities) {
  BenchScenario s = mmo_scenario();
  const float side =
      s.walk.width * std::sqrt(static_cast<float>(entities) / static_cast<float>(s.walk.entities));
  s.name = "world_" + std::to_string(entities);
  s.walk.entities = entities;
  s.walk.width = side;
  s.walk.height = side;
  s.clients = 100;
  s.time_brute_force = false;
  s.checked_from_start = 1;
  s.warmup_ticks = 20;  // 100 clients fill their sets in a few ticks; the walk of 4M costs 0.1 s a step
  s.checked_steady = 1;
  s.frame_block = 4;
  return s;
}

std::vector<BenchScenario> world_scaling_scenarios() {
  std::vector<BenchScenario> out;
  for (const std::uint32_t n : {250'000u, 1'000'000u, 4'000'000u}) out.push_back(world_scaling_scenario(n));
  return out;
}

Result<ScenarioWorld> build_world(const BenchScenario& scenario, std::span<const float> xs,
                                  std::span<const float> zs, std::uint32_t clients) {
  WorldDef def = default_world_def();
  def.enter_radius = scenario.enter_radius;
  def.leave_radius = scenario.leave_radius;
  def.entity_capacity = static_cast<std::uint32_t>(xs.size());
  def.client_capacity = clients;
  def.threads = scenario.threads;
  def.crowd_cap = scenario.crowd_cap;
  Result<World> world = World::create(def);
  if (!world) return world.status();
  ScenarioWorld out{std::move(world).value(), {}, {}};
  out.entities.reserve(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) {
    Result<EntityId> entity = out.world.create_entity(EntityDef{xs[i], zs[i], false});
    if (!entity) return entity.status();
    out.entities.push_back(*entity);
  }
  const std::uint32_t viewers = std::min<std::uint32_t>(clients, static_cast<std::uint32_t>(xs.size()));
  for (std::uint32_t i = 0; i < viewers; ++i) {
    Result<ClientId> client = out.world.create_client(out.entities[i]);
    if (!client) return client.status();
    out.clients.push_back(*client);
  }
  return out;
}

Result<ScenarioRun> build_scenario(const BenchScenario& scenario) {
  scenarios::JitterWalk walk(scenario.walk);
  Result<ScenarioWorld> world = build_world(scenario, walk.xs(), walk.zs(), scenario.clients);
  if (!world) return world.status();
  return ScenarioRun{std::move(walk), std::move(world).value()};
}

FrameStream::FrameStream(const scenarios::JitterWalk& walk, std::uint32_t block)
    : walk_(walk),
      entities_(static_cast<std::uint32_t>(walk.xs().size())),
      block_(std::max<std::uint32_t>(block, 1)) {
  xs_.resize(std::size_t{block_} * entities_);
  zs_.resize(std::size_t{block_} * entities_);
  // Frame 0 is the current position, so the first block starts without a step.
  std::copy(walk_.xs().begin(), walk_.xs().end(), xs_.begin());
  std::copy(walk_.zs().begin(), walk_.zs().end(), zs_.begin());
  for (std::uint32_t f = 1; f < block_; ++f) {
    walk_.step();
    std::copy(walk_.xs().begin(), walk_.xs().end(), xs_.begin() + std::size_t{f} * entities_);
    std::copy(walk_.zs().begin(), walk_.zs().end(), zs_.begin() + std::size_t{f} * entities_);
  }
}

void FrameStream::refill() {
  for (std::uint32_t f = 0; f < block_; ++f) {
    walk_.step();
    std::copy(walk_.xs().begin(), walk_.xs().end(), xs_.begin() + std::size_t{f} * entities_);
    std::copy(walk_.zs().begin(), walk_.zs().end(), zs_.begin() + std::size_t{f} * entities_);
  }
  used_ = 0;
}

}  // namespace sightline::bench
