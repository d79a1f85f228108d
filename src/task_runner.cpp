#include "task_runner.h"

#include <algorithm>

namespace sightline {

TaskRunner::TaskRunner(std::uint32_t threads) : workers_(std::max(1u, threads)) {
  if (workers_ > 1) pool_ = std::make_unique<WorkerPool>(workers_);
}

TaskRunner::TaskRunner(std::uint32_t workers, EnqueueTaskFunction* enqueue, FinishTaskFunction* finish,
                       void* user_context) noexcept
    : workers_(std::max(1u, workers)), enqueue_(enqueue), finish_(finish), user_context_(user_context) {}

void TaskRunner::run_range(void* batch, std::uint32_t range) {
  const Batch& b = *static_cast<const Batch*>(batch);
  const auto begin = static_cast<std::uint32_t>(std::uint64_t{b.items} * range / b.ranges);
  const auto end = static_cast<std::uint32_t>(std::uint64_t{b.items} * (range + 1) / b.ranges);
  if (begin < end) b.task(begin, end, range, b.context);
}

void TaskRunner::run(std::uint32_t items, std::uint32_t min_range, TaskFunction* task, void* context) {
  if (items == 0) return;
  min_range = std::max(1u, min_range);
  if (workers_ == 1 || items <= min_range) {
    task(0, items, 0, context);
    return;
  }
  if (enqueue_ != nullptr) {
    if (void* handle = enqueue_(task, items, min_range, context, user_context_); handle != nullptr) {
      finish_(handle, user_context_);
    }
    return;
  }
  batch_ = {task, context, items, std::min(workers_, (items + min_range - 1) / min_range)};
  pool_->run(batch_.ranges, &TaskRunner::run_range, &batch_);
}

}  // namespace sightline
