// A small fixed pool of std::thread workers that runs one batch of indexed tasks at a time.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace sightline {

/// run(count, fn, context) calls fn(context, i) for every i in [0, count) and returns when all
/// are done. Thread t (the calling thread is 0) always takes the tasks t, t + threads, ...: a
/// task index keeps its thread from run to run, so the memory a task works in (a World share's
/// scratch and outputs) stays with one core instead of following whichever thread came first.
/// No allocation per run.
class WorkerPool {
 public:
  using Task = void (*)(void* context, std::uint32_t index);

  /// `threads` counts the calling thread: 1 makes no worker and runs everything inline.
  explicit WorkerPool(std::uint32_t threads);
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  ~WorkerPool();

  [[nodiscard]] std::uint32_t threads() const noexcept {
    return static_cast<std::uint32_t>(workers_.size()) + 1;
  }
  void run(std::uint32_t count, Task task, void* context);

 private:
  void work(std::uint32_t thread);
  // Asks every worker to return and joins them.
  void stop() noexcept;
  // This thread's tasks of one batch.
  void run_own(std::uint32_t thread, Task task, void* context, std::uint32_t count);

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::uint64_t batch_ = 0;                  // bumped per run; workers wait for a new one
  std::atomic<std::uint64_t> published_{0};  // batch_, readable without the lock, for spinning
  std::uint32_t count_ = 0;
  std::uint32_t finished_ = 0;           // tasks done in this batch
  std::atomic<bool> batch_done_{false};  // finished_ == count_, readable without the lock, for spinning
  Task task_ = nullptr;
  void* context_ = nullptr;
  bool stopping_ = false;             // the destructor asks the workers to return (under the lock)
  std::vector<std::thread> workers_;  // last: they start once the rest is set up
};

}  // namespace sightline
