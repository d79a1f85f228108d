#include "worker_pool.h"

namespace sightline {

WorkerPool::WorkerPool(std::uint32_t threads) {
  for (std::uint32_t t = 1; t < threads; ++t) {
    workers_.emplace_back([this](std::stop_token stop) { work(stop); });
  }
}

WorkerPool::~WorkerPool() {
  for (std::jthread& w : workers_) w.request_stop();
  {
    const std::lock_guard lock(mutex_);
    ++batch_;
    published_.store(batch_, std::memory_order_release);
  }
  wake_.notify_all();
  workers_.clear();  // joins
}

// Takes tasks until none is left; each task index goes to exactly one thread.
void WorkerPool::drain() {
  std::unique_lock lock(mutex_);
  while (next_ < count_) {
    const std::uint32_t index = next_++;
    lock.unlock();
    task_(context_, index);
    lock.lock();
    if (++finished_ == count_) done_.notify_all();
  }
}

void WorkerPool::work(std::stop_token stop) {
  std::uint64_t seen = 0;
  while (true) {
    // A tick runs its batches back to back: spin a little before sleeping, since waking a
    // sleeping thread costs more than a short batch.
    for (int spin = 0; spin < 2000 && published_.load(std::memory_order_acquire) == seen; ++spin) {
      std::this_thread::yield();
    }
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return batch_ != seen || stop.stop_requested(); });
      if (stop.stop_requested()) return;
      seen = batch_;
    }
    drain();
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
    next_ = 0;
    finished_ = 0;
    ++batch_;
    published_.store(batch_, std::memory_order_release);
  }
  wake_.notify_all();
  drain();
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return finished_ == count_; });
}

}  // namespace sightline
