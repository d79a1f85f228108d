#include "sending_run.h"

#include "alloc_counter.h"
#include "walker_state.h"

namespace sightline::bench {

Result<std::unique_ptr<SendingRun>> start_sending(const BenchScenario& scenario,
                                                  std::int64_t idle_world_bytes, HeapFigures& heap) {
  scenarios::JitterWalk walk(scenario.walk);
  const std::int64_t before_world = support::live_heap_bytes();
  Result<ScenarioWorld> built = build_world(scenario, walk.xs(), walk.zs(), scenario.clients);
  if (!built) return built.status();
  auto run =
      std::make_unique<SendingRun>(SendingRun{std::move(walk), std::move(built).value(), std::nullopt});
  World& world = run->world.world;
  auto step = [&]() -> Status {
    run->walk.step();
    return world.set_positions(run->world.entities, run->walk.xs(), run->walk.zs());
  };
  const std::uint32_t warmup = scenario.warmup_ticks;
  const std::uint32_t quiet = warmup > kSendWarmup ? warmup - kSendWarmup : 0;
  for (std::uint32_t t = 0; t < quiet; ++t) {
    (void)world.tick();
    if (Status s = step(); !s.ok()) return s;
  }
  // Less the run itself and the handle lists, which are the caller's, not the World's.
  const auto lists =
      static_cast<std::int64_t>(run->world.entities.capacity() * sizeof(EntityId) +
                                run->world.clients.capacity() * sizeof(ClientId) + sizeof(SendingRun));
  const std::int64_t world_bytes = support::live_heap_bytes() - before_world - lists;
  ReplicatorDef def;
  def.serialize = scenarios::serialize_walker;
  def.serialize_context = &world;
  def.tick_seconds = 1.0f / scenario.walk.hz;
  def.budget_bytes = kSendBudgetBytes;
  const std::int64_t before_replicator = support::live_heap_bytes();
  Result<Replicator> replicator = Replicator::create(world, def);
  if (!replicator) return replicator.status();
  run->replicator.emplace(std::move(replicator).value());
  for (std::uint32_t t = quiet; t < warmup; ++t) {
    (void)world.tick();
    if (Status s = run->replicator->send(); !s.ok()) return s;
    if (Status s = step(); !s.ok()) return s;
  }
  const double clients = scenario.clients == 0 ? 1.0 : static_cast<double>(scenario.clients);
  heap.world_per_entity = static_cast<double>(idle_world_bytes) / static_cast<double>(scenario.walk.entities);
  heap.world_per_client = static_cast<double>(world_bytes - idle_world_bytes) / clients;
  heap.replicator_per_client = static_cast<double>(support::live_heap_bytes() - before_replicator) / clients;
  return run;
}

}  // namespace sightline::bench
