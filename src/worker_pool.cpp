#include "worker_pool.h"

namespace sightline {

WorkerPool::WorkerPool(std::uint32_t threads) {
  workers_.reserve(threads);
  try {
    for (std::uint32_t t = 1; t < threads; ++t) workers_.emplace_back([this, t] { work(t); });
  } catch (...) {
    stop();  // the threads started so far are joined, not left to terminate the program
    throw;
  }
}

WorkerPool::~WorkerPool() { stop(); }

void WorkerPool::stop() noexcept {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    ++batch_;
    published_.store(batch_, std::memory_order_release);
  }
  wake_.notify_all();
  for (std::thread& w : workers_) w.join();
}

void WorkerPool::run_own(std::uint32_t thread, Task task, void* context, std::uint32_t count) {
  const std::uint32_t stride = threads();
  std::uint32_t done = 0;
  for (std::uint32_t index = thread; index < count; index += stride) {
    task(context, index);
    ++done;
  }
  if (done == 0) return;
  const std::lock_guard lock(mutex_);
  finished_ += done;
  if (finished_ == count_) {
    batch_done_.store(true, std::memory_order_release);
    done_.notify_all();
  }
}

void WorkerPool::work(std::uint32_t thread) {
  std::uint64_t seen = 0;
  while (true) {
    // A tick runs its batches back to back: spin a little before sleeping, since waking a
    // sleeping thread costs more than a short batch.
    for (int spin = 0; spin < 2000 && published_.load(std::memory_order_acquire) == seen; ++spin) {
      std::this_thread::yield();
    }
    Task task = nullptr;
    void* context = nullptr;
    std::uint32_t count = 0;
    {
      // The batch is read under the lock: a batch where this thread has no task may be followed
      // by the next before it wakes, and then it takes that one.
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return batch_ != seen || stopping_; });
      if (stopping_) return;
      seen = batch_;
      task = task_;
      context = context_;
      count = count_;
    }
    run_own(thread, task, context, count);
  }
}

void WorkerPool::run(std::uint32_t count, Task task, void* context) {
  if (workers_.empty()) {
    for (std::uint32_t i = 0; i < count; ++i) task(context, i);
    return;
  }
  {
    const std::lock_guard lock(mutex_);
    task_ = task;
    context_ = context;
    count_ = count;
    finished_ = 0;
    batch_done_.store(false, std::memory_order_relaxed);
    ++batch_;
    published_.store(batch_, std::memory_order_release);
  }
  wake_.notify_all();
  run_own(0, task, context, count);
  // The workers' last tasks usually end within microseconds of this thread's: spin on the flag
  // before sleeping, since a futex wake-up of this thread costs tens of microseconds on a VM.
  for (int spin = 0; spin < 2000 && !batch_done_.load(std::memory_order_acquire); ++spin) {
    std::this_thread::yield();
  }
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return finished_ == count_; });
}

}  // namespace sightline
