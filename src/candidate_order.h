// The order of a client's update candidates: highest accumulator first, then lowest place in
// its table, found in part (the best few) or whole without a branch on the keys to mispredict.
#pragma once

#include <cstddef>
#include <cstdint>

#include "bit_cast.h"

namespace sightline {

/// A candidate for an update packs its accumulator (> 0, so its bits order as the float does,
/// +infinity on top) over the complement of its position in the table, which is sorted by entity
/// index: one integer compare gives highest accumulator first, then lowest index, a total order,
/// so selection is deterministic.
using Candidate = std::uint64_t;

[[nodiscard]] inline Candidate candidate(float acc, std::uint32_t member) noexcept {
  return static_cast<std::uint64_t>(bit_cast<std::uint32_t>(acc)) << 32 | (0xFFFFFFFFu - member);
}

[[nodiscard]] inline std::uint32_t member_of(Candidate c) noexcept {
  return 0xFFFFFFFFu - static_cast<std::uint32_t>(c);
}

/// Moves the highest candidates of [first, last) to its front, keeping the order among them and
/// among the rest, and returns the end of them: about `want` of them, at least one, each higher
/// than any behind them. `scratch` holds as many as the range.
Candidate* gather_highest(Candidate* first, Candidate* last, std::size_t want, Candidate* scratch) noexcept;

/// Sorts [first, last) highest first, given them in table order. `scratch` holds as many.
void sort_highest_first(Candidate* first, Candidate* last, Candidate* scratch) noexcept;

/// The same order by a radix sort whatever the count (sort_highest_first's fallback, and its check).
void radix_sort_highest_first(Candidate* first, Candidate* last, Candidate* scratch) noexcept;

}  // namespace sightline
