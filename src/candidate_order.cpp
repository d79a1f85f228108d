// The order of update candidates (candidate_order.h).
#include "candidate_order.h"

#include <algorithm>
#include <array>
#include <functional>
#include <utility>

namespace sightline {

Candidate* gather_highest(Candidate* first, Candidate* last, std::size_t want, Candidate* scratch) noexcept {
  const auto n = static_cast<std::size_t>(last - first);
  if (want >= n) return last;
  // A threshold from an even sample, then one pass without a branch to mispredict.
  constexpr std::size_t kSamples = 64;
  // Zeroed: only the first `samples` are read, which GCC cannot prove in the sanitizer builds.
  std::array<Candidate, kSamples> sample{};
  const std::size_t samples = std::min(n, kSamples);
  for (std::size_t i = 0; i < samples; ++i) sample[i] = first[i * n / samples];
  const std::size_t rank = want * samples / n;
  std::nth_element(sample.begin(), sample.begin() + static_cast<std::ptrdiff_t>(rank),
                   sample.begin() + static_cast<std::ptrdiff_t>(samples), std::greater<>());
  const Candidate threshold = sample[rank];
  std::size_t high = 0;
  std::size_t rest = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Candidate x = first[i];
    const auto passes = static_cast<std::size_t>(x >= threshold);
    first[high] = x;
    scratch[rest] = x;
    high += passes;
    rest += passes ^ 1;
  }
  std::copy(scratch, scratch + rest, first + high);
  return first + high;
}

/// Sorts candidates highest first by a stable radix sort of the accumulators alone (least
/// significant byte first, over the bytes in which they differ, the table order breaking ties),
/// without a branch on the keys. `scratch` holds as many.
void radix_sort_highest_first(Candidate* first, Candidate* last, Candidate* scratch) noexcept {
  const auto n = static_cast<std::size_t>(last - first);
  if (n < 2) return;
  // The complement of the accumulator's bits: ascending order of it is descending order of the
  // accumulator.
  auto digits = [](Candidate c) { return static_cast<std::uint32_t>(~c >> 32); };
  std::array<std::array<std::uint32_t, 256>, 4> at{};
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t d = digits(first[i]);
    ++at[0][d & 0xFF];
    ++at[1][(d >> 8) & 0xFF];
    ++at[2][(d >> 16) & 0xFF];
    ++at[3][d >> 24];
  }
  const std::uint32_t any = digits(first[0]);
  Candidate* from = first;
  Candidate* to = scratch;
  for (int byte = 0; byte < 4; ++byte) {
    const int shift = 8 * byte;
    std::array<std::uint32_t, 256>& place = at[static_cast<std::size_t>(byte)];
    if (place[(any >> shift) & 0xFF] == n) continue;  // one value: nothing to order
    std::uint32_t sum = 0;
    for (std::uint32_t& p : place) sum += std::exchange(p, sum);
    for (std::size_t i = 0; i < n; ++i) to[place[(digits(from[i]) >> shift) & 0xFF]++] = from[i];
    std::swap(from, to);
  }
  if (from != first) std::copy(from, from + n, first);
}

/// Sorts candidates highest first, given them in table order. Accumulators order at random, on
/// which a comparison sort mispredicts every other branch. A few dozen are ranked by counting,
/// without a branch on the keys. Up to a few thousand (a client's usual table) are spread over
/// twice as many buckets by where their accumulator's bits fall between the lowest and the
/// highest, then put in order by insertion, which finds them nearly sorted: a third of the
/// instructions of the radix sort, and faster. Where they bunch (a teleported member's infinite
/// accumulator, say) insertion would take long: past a few moves each, and for more, the radix
/// sort. `scratch` holds as many.
void sort_highest_first(Candidate* first, Candidate* last, Candidate* scratch) noexcept {
  const auto n = static_cast<std::size_t>(last - first);
  if (n < 64) {
    // Each one's place is how many are higher (keys are unique): n * n compares, no branch.
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t higher = 0;
      for (std::size_t j = 0; j < n; ++j) higher += static_cast<std::size_t>(first[j] > first[i]);
      scratch[higher] = first[i];
    }
    std::copy(scratch, scratch + n, first);
    return;
  }
  constexpr std::size_t kBucketed = 2048;
  if (n > kBucketed) {
    radix_sort_highest_first(first, last, scratch);
    return;
  }
  // The accumulator's bits, complemented (ascending is highest first), each computed once.
  std::array<std::uint32_t, kBucketed> digit;
  std::uint32_t lo = 0xFFFFFFFFu;
  std::uint32_t hi = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto d = static_cast<std::uint32_t>(~first[i] >> 32);
    digit[i] = d;
    lo = std::min(lo, d);
    hi = std::max(hi, d);
  }
  // Bucket of d: (d - lo) * (buckets - 1) / (hi - lo), by a multiply (the product fits 64 bits),
  // kept in place of its digit for the scatter.
  const std::size_t buckets = 2 * n;
  const std::uint64_t scale = hi == lo ? 0 : (std::uint64_t{buckets - 1} << 32) / (hi - lo);
  std::array<std::uint32_t, 2 * kBucketed + 1> at;
  std::fill(at.begin(), at.begin() + static_cast<std::ptrdiff_t>(buckets + 1), 0u);
  for (std::size_t i = 0; i < n; ++i) {
    const auto b = static_cast<std::uint32_t>((digit[i] - lo) * scale >> 32);
    digit[i] = b;
    ++at[b + 1];
  }
  for (std::size_t b = 1; b <= buckets; ++b) at[b] += at[b - 1];
  for (std::size_t i = 0; i < n; ++i) scratch[at[digit[i]]++] = first[i];
  std::size_t moves = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Candidate x = scratch[i];
    std::size_t j = i;
    for (; j > 0 && first[j - 1] < x; --j) first[j] = first[j - 1];
    first[j] = x;
    moves += i - j;
    if (moves > 4 * n) {
      // first[0, i] holds scratch[0, i]; with the rest it is the whole set again.
      std::copy(scratch + i + 1, scratch + n, first + i + 1);
      radix_sort_highest_first(first, last, scratch);
      return;
    }
  }
}

}  // namespace sightline
