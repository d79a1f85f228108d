// The benchmark scenarios: seeded walks, the clients among their entities, the radii, and a ring
// stream of pre-generated frames so a timed loop only copies positions in and ticks.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "jitter_walk.h"
#include "sightline/sightline.h"

namespace sightline::bench {

/// One seeded scenario. Entities 0 .. clients-1 are the clients' viewers.
struct BenchScenario {
  std::string name;
  scenarios::JitterWalkDef walk;
  std::uint32_t clients = 0;
  float enter_radius = 0.0f;             ///< R, world units.
  float leave_radius = 0.0f;             ///< L >= R, world units.
  std::uint32_t checked_from_start = 0;  ///< Ticks from empty sets checked against brute force.
  std::uint32_t warmup_ticks = 0;        ///< Then walked and ticked, so the sets reach steady state.
  std::uint32_t checked_steady = 0;      ///< Then ticks checked against brute force from that state.
  std::uint32_t frame_block = 0;         ///< Frames generated per refill of a FrameStream, >= 1.
  std::uint32_t threads = 1;             ///< WorldDef::threads of the World build_world makes.
  std::uint32_t crowd_cap = 0;           ///< WorldDef::crowd_cap (0: none).
  bool time_brute_force = true;          ///< False: the brute force only runs the checked ticks.
};

/// (c) of issue 5, the seed 000 default run: the JitterWalk defaults (120 entities, 12 x 7.5,
/// 20 Hz), every entity a client, R = 1.6, L = 1.25R.
[[nodiscard]] BenchScenario reference_scenario();

/// (a) of issue 5, the arena: 100 clients, 50,000 walking entities, 2000 x 2000, R = 100,
/// L = 125, 1.5 m/s, 30 Hz.
[[nodiscard]] BenchScenario arena_scenario();

/// (b) the MMO: 10,000 clients, 100,000 entities, 10,000 x 10,000, R = 178 (about 100 entities
/// within R of a client), L = 1.25R, the arena's walk.
[[nodiscard]] BenchScenario mmo_scenario();
/// (b) plus one entity standing at (1e15, -1e15), kMaxCoordinate away: the MMO's other 100,000
/// walk exactly as in (b), so the two rows differ only by the outlier (issue 18's item 7).
[[nodiscard]] BenchScenario mmo_outlier_scenario();
/// (d) clustered: the arena with 80% of the entities in 8 hotspots of 200 x 200 (the O(N^2) case).
[[nodiscard]] BenchScenario clustered_scenario();
/// (d) with a crowd cap of 128 per client (issue 5's item 5): the work per client bounded.
[[nodiscard]] BenchScenario clustered_capped_scenario();
/// (e) teleports: the arena with 1% of the entities jumping to a random point each tick.
[[nodiscard]] BenchScenario teleports_scenario();
/// (f) everyone observes: 10,000 entities that are all clients, 2048 x 2048, R = 30, 2 units a
/// tick at 30 Hz, with L = R ("observers") or L = 33 ("observers_l33").
[[nodiscard]] BenchScenario observers_scenario(float leave_radius);
/// (f)'s crowd: 2,000 entities, all clients, in 512 x 512.
[[nodiscard]] BenchScenario observers_crowd_scenario();
/// A crowd in one spot: 20,000 entities walking in 4 x 4, the first 1,000 of them clients, R = 50,
/// L = 62.5 (everyone is within R of everyone), with WorldDef::crowd_cap = `crowd_cap`
/// ("crowd_spot" with a cap, "crowd_spot_uncapped" with 0). Issue 18's item 6: with the cap, a
/// client's work is bounded by the cap, not by the crowd.
[[nodiscard]] BenchScenario crowd_spot_scenario(std::uint32_t crowd_cap);
/// crowd_spot with every one of the 20,000 entities a client, cap 64.
[[nodiscard]] BenchScenario crowd_clients_scenario();
/// (f) made sparse: 1,000 entities, all clients, in (f)'s 2048 x 2048, R = L = 30 (under one
/// other entity within R of a client): the per-client fixed cost is the whole tick.
[[nodiscard]] BenchScenario sparse_scenario();
/// Every scenario above, (c) reference first, in the order the table prints them.
[[nodiscard]] std::vector<BenchScenario> all_scenarios();

/// Above this many entities the scaling family times only Sightline: the brute force's
/// O(N^2) tick passes a second, so it runs just a few checked ticks there.
inline constexpr std::uint32_t kScalingBruteMaxEntities = 20'000;
/// (f) with L = 33 at `entities` entities, every one a client, on a square of side
/// 2048 x sqrt(entities / 10,000): (f)'s density, so the work per entity stays the same.
[[nodiscard]] BenchScenario scaling_scenario(std::uint32_t entities);
/// The scaling family, 500 to 50,000 entities, smallest first.
[[nodiscard]] std::vector<BenchScenario> scaling_scenarios();

/// The MMO at `entities` entities with 100 clients: (b)'s density (a square of side
/// 10,000 x sqrt(entities / 100,000)) and radii, so every client sees about as much and the tick's
/// work per entity should stay the same (issue 18's item 5). The brute force is not timed.
[[nodiscard]] BenchScenario world_scaling_scenario(std::uint32_t entities);
/// That family at 250,000, 1M and 4M entities, smallest first.
[[nodiscard]] std::vector<BenchScenario> world_scaling_scenarios();

/// A World holding one entity per walker, with the first `clients` entities as viewers.
struct ScenarioWorld {
  World world;
  std::vector<EntityId> entities;
  std::vector<ClientId> clients;
};

/// Builds a World for `scenario` with entities at (xs[i], zs[i]) and `clients` clients.
[[nodiscard]] Result<ScenarioWorld> build_world(const BenchScenario& scenario, std::span<const float> xs,
                                                std::span<const float> zs, std::uint32_t clients);

/// The scenario's walk at its start and a World with its entities and clients there.
struct ScenarioRun {
  scenarios::JitterWalk walk;
  ScenarioWorld world;
};

[[nodiscard]] Result<ScenarioRun> build_scenario(const BenchScenario& scenario);

/// The walk's positions, one frame per tick, generated a block at a time so a timed loop only
/// copies a frame in and ticks. Frame 0 is the walk's position when the stream was made; every
/// stream made from the same walk state yields the same frames.
class FrameStream {
 public:
  /// Copies `walk` (the original is left where it is) and generates the first `block` frames.
  FrameStream(const scenarios::JitterWalk& walk, std::uint32_t block);

  /// False when the block is used up: call refill() (outside the timed region) before next().
  [[nodiscard]] bool ready() const noexcept { return used_ < block_; }
  /// Generates the next block of frames, continuing the walk.
  void refill();

  struct Frame {
    std::span<const float> xs;
    std::span<const float> zs;
  };
  /// The next frame; requires ready(). Valid until the next refill().
  [[nodiscard]] Frame next() noexcept {
    const std::size_t at = std::size_t{used_++} * entities_;
    return {{xs_.data() + at, entities_}, {zs_.data() + at, entities_}};
  }

 private:
  scenarios::JitterWalk walk_;
  std::uint32_t entities_;
  std::uint32_t block_;
  std::uint32_t used_ = 0;
  std::vector<float> xs_;
  std::vector<float> zs_;
};

}  // namespace sightline::bench
