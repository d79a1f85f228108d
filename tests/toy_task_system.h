// A small job system of the kind a game brings (WorldDef::enqueue_task): its own threads take
// ranges from one queue. Ranges are cut at uneven sizes and queued last first, so a World that
// depended on the split, the order or the worker would show it.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "sightline/tasks.h"

namespace sightline::testing {

class ToyTaskSystem {
 public:
  explicit ToyTaskSystem(std::uint32_t workers) {
    for (std::uint32_t w = 0; w < workers; ++w) threads_.emplace_back([this, w] { work(w); });
  }
  ToyTaskSystem(const ToyTaskSystem&) = delete;
  ToyTaskSystem& operator=(const ToyTaskSystem&) = delete;
  ~ToyTaskSystem() {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  /// Tasks enqueued and ranges run so far.
  [[nodiscard]] std::uint64_t tasks() const {
    const std::lock_guard lock(mutex_);
    return tasks_;
  }
  [[nodiscard]] std::uint64_t ranges() const {
    const std::lock_guard lock(mutex_);
    return ranges_;
  }

  static void* enqueue(TaskFunction* task, std::uint32_t items, std::uint32_t min_range, void* task_context,
                       void* user_context) {
    return static_cast<ToyTaskSystem*>(user_context)->start(task, items, min_range, task_context);
  }
  static void finish(void* user_task, void* user_context) {
    static_cast<ToyTaskSystem*>(user_context)->wait(static_cast<Job*>(user_task));
  }

 private:
  struct Job {
    TaskFunction* task = nullptr;
    void* context = nullptr;
    std::uint32_t left = 0;  // ranges not yet done
  };
  struct Range {
    Job* job = nullptr;
    std::uint32_t begin = 0;
    std::uint32_t end = 0;
  };

  Job* start(TaskFunction* task, std::uint32_t items, std::uint32_t min_range, void* context) {
    const std::lock_guard lock(mutex_);
    jobs_.push_back(std::make_unique<Job>(Job{task, context, 0}));
    Job* job = jobs_.back().get();
    ++tasks_;
    // Sizes 1, 2, 3, 1, 2, 3, ... times min_range; the last range takes what is left.
    std::vector<Range> ranges;
    for (std::uint32_t begin = 0, k = 0; begin < items; ++k) {
      const std::uint32_t end = std::min(items, begin + min_range * (1 + k % 3));
      ranges.push_back({job, begin, end});
      begin = end;
    }
    job->left = static_cast<std::uint32_t>(ranges.size());
    for (auto it = ranges.rbegin(); it != ranges.rend(); ++it) queue_.push_back(*it);
    wake_.notify_all();
    return job;
  }

  void wait(Job* job) {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return job->left == 0; });
    jobs_.erase(std::find_if(jobs_.begin(), jobs_.end(), [&](const auto& j) { return j.get() == job; }));
  }

  void work(std::uint32_t worker) {
    std::unique_lock lock(mutex_);
    while (true) {
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      const Range range = queue_.front();
      queue_.pop_front();
      ++ranges_;
      lock.unlock();
      range.job->task(range.begin, range.end, worker, range.job->context);
      lock.lock();
      if (--range.job->left == 0) done_.notify_all();
    }
  }

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::deque<Range> queue_;
  std::vector<std::unique_ptr<Job>> jobs_;
  std::uint64_t tasks_ = 0;
  std::uint64_t ranges_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;  // last: they start once the rest is set up
};

}  // namespace sightline::testing
