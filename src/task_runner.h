// Where a tick's and a send's parallel work runs: the World's own WorkerPool, or the game's task
// system (WorldDef::enqueue_task).
#pragma once

#include <cstdint>
#include <memory>

#include "sightline/tasks.h"
#include "worker_pool.h"

namespace sightline {

/// run(items, min_range, task, context) calls task on ranges covering [0, items) once each and
/// returns when all are done. Callers make results independent of the split: a range writes only
/// what its items own, or what its worker owns (worker < workers()).
class TaskRunner {
 public:
  /// The built-in pool: `threads` counts the calling thread; 1 runs everything inline.
  explicit TaskRunner(std::uint32_t threads);
  /// A game's task system with `workers` workers.
  TaskRunner(std::uint32_t workers, EnqueueTaskFunction* enqueue, FinishTaskFunction* finish,
             void* user_context) noexcept;
  TaskRunner(const TaskRunner&) = delete;
  TaskRunner& operator=(const TaskRunner&) = delete;

  [[nodiscard]] std::uint32_t workers() const noexcept { return workers_; }
  void run(std::uint32_t items, std::uint32_t min_range, TaskFunction* task, void* context);

 private:
  // The task of the pool's batch at hand: batch index t runs range t on worker t, so a range's
  // memory stays with one thread from run to run when the split is the same.
  struct Batch {
    TaskFunction* task = nullptr;
    void* context = nullptr;
    std::uint32_t items = 0;
    std::uint32_t ranges = 0;
  };
  static void run_range(void* batch, std::uint32_t range);

  std::uint32_t workers_ = 1;
  EnqueueTaskFunction* enqueue_ = nullptr;
  FinishTaskFunction* finish_ = nullptr;
  void* user_context_ = nullptr;
  Batch batch_;
  std::unique_ptr<WorkerPool> pool_;  // with more than one thread and no game's task system
};

}  // namespace sightline
