// The slots of one kind of handle (entities, clients, spaces, event classes).
#pragma once

#include <cstdint>
#include <vector>

#include "sightline_assert.h"

namespace sightline {

/// Which slot a new handle takes: the last one freed, else a new one at the end. A handle is a
/// slot and a generation; a slot's generation goes up each time it is taken again (next_generation),
/// so a handle to a freed slot is stale. The generations themselves live with each kind's slots.
class SlotPool {
 public:
  /// The slot take() would return now.
  [[nodiscard]] std::uint32_t peek() const noexcept { return free_.empty() ? count_ : free_.back(); }
  /// Whether take() would return a new slot (== count()) rather than a freed one.
  [[nodiscard]] bool next_is_new() const noexcept { return free_.empty(); }
  /// Takes the last freed slot, else a new one.
  std::uint32_t take() {
    if (free_.empty()) return count_++;
    const std::uint32_t slot = free_.back();
    free_.pop_back();
    return slot;
  }
  /// Gives a taken slot back; the next take() returns it.
  void free(std::uint32_t slot) {
    SIGHTLINE_ASSERT(slot < count_);
    free_.push_back(slot);
  }
  /// Room to free `slots` slots without allocating.
  void reserve_frees(std::size_t slots) {
    if (free_.capacity() < slots) free_.reserve(slots);
  }
  /// Slots made so far, taken or free.
  [[nodiscard]] std::uint32_t count() const noexcept { return count_; }
  [[nodiscard]] const std::vector<std::uint32_t>& freed() const noexcept { return free_; }

  /// The generation of a slot taken again after `last` (0 for a new slot): one more, skipping 0,
  /// which no live handle has.
  [[nodiscard]] static constexpr std::uint32_t next_generation(std::uint32_t last) noexcept {
    return last + 1 == 0 ? 1 : last + 1;
  }

 private:
  std::vector<std::uint32_t> free_;
  std::uint32_t count_ = 0;
};

}  // namespace sightline
