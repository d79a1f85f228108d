// A game's own task system, for the work a World's tick and a Replicator's send spread over
// threads (WorldDef::enqueue_task). Without one, a World makes its own pool of WorldDef::threads.
#pragma once

#include <cstdint>

namespace sightline {

/// Work a tick or a send hands out: items [begin, end) of a task, on worker `worker`, which is
/// < WorldDef::threads and is not shared by two ranges running at the same time. `task_context`
/// is the one given to EnqueueTaskFunction. Results do not depend on how the items are split
/// into ranges, nor on which worker runs which range, nor in what order.
using TaskFunction = void(std::uint32_t begin, std::uint32_t end, std::uint32_t worker, void* task_context);

/// Starts `task` over the items [0, items): the game's task system calls it on ranges that cover
/// every item once, each at least `min_range` items long except perhaps the last, from any of its
/// workers (numbered 0..WorldDef::threads - 1; the calling thread may be one of them). Returns a
/// handle for FinishTaskFunction, or null when it ran the whole task before returning.
/// `user_context` is WorldDef::task_user_context.
using EnqueueTaskFunction = void*(TaskFunction* task, std::uint32_t items, std::uint32_t min_range,
                                  void* task_context, void* user_context);

/// Returns once every range of the task behind `user_task` (a non-null handle from
/// EnqueueTaskFunction) has run.
using FinishTaskFunction = void(void* user_task, void* user_context);

}  // namespace sightline
