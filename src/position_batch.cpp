#include "position_batch.h"

#include <cmath>

#include "simd.h"

namespace sightline {

namespace {

// The check of entries [from, count), and whether their indices run on from entities[0]'s.
std::size_t check_from(std::size_t from, const EntityId* entities, const float* xs, const float* zs,
                       std::size_t count, const std::uint32_t* live_generation, std::size_t slots,
                       float max_coordinate, bool& contiguous) noexcept {
  const std::uint32_t base = count == 0 ? 0 : entities[0].index;
  for (std::size_t i = from; i < count; ++i) {
    const EntityId id = entities[i];
    const bool handle_ok =
        id.generation != 0 && id.index < slots && live_generation[id.index] == id.generation;
    // Written as <= so that NaN fails.
    if (!(handle_ok && std::fabs(xs[i]) <= max_coordinate && std::fabs(zs[i]) <= max_coordinate)) return i;
    contiguous = contiguous && id.index == base + i;
  }
  return count;
}

}  // namespace

std::size_t first_bad_position_scalar(const EntityId* entities, const float* xs, const float* zs,
                                      std::size_t count, const std::uint32_t* live_generation,
                                      std::size_t slots, float max_coordinate, bool* contiguous) noexcept {
  *contiguous = true;
  return check_from(0, entities, xs, zs, count, live_generation, slots, max_coordinate, *contiguous);
}

#ifdef SIGHTLINE_HAS_AVX2
namespace {

// Eight entries a step: indices and generations are the even and odd words of eight EntityIds;
// an index out of range is masked out of the gather (and fails). The rare failing step is handed
// to the scalar loop, which names the first entry.
SIGHTLINE_AVX2 std::size_t first_bad_avx2(const EntityId* entities, const float* xs, const float* zs,
                                          std::size_t count, const std::uint32_t* live_generation,
                                          std::size_t slots, float max_coordinate,
                                          bool* contiguous) noexcept {
  static_assert(sizeof(EntityId) == 8);
  // Unsigned compare as signed, both sides biased by 2^31. Slots above 2^31 (never, in practice)
  // clamp to 2^31: an index beyond it then fails here and the scalar loop decides.
  const auto bias = static_cast<int>(0x80000000u);
  const auto limit = static_cast<std::uint32_t>(slots < 0x80000000u ? slots : 0x80000000u);
  const __m256i vslots = _mm256_set1_epi32(static_cast<int>(limit ^ 0x80000000u));
  const __m256i vbias = _mm256_set1_epi32(bias);
  const __m256 vmax = _mm256_set1_ps(max_coordinate);
  const __m256 sign = _mm256_set1_ps(-0.0f);
  // The indices a contiguous batch has, in the lanes' order (see below); unsigned wrap-around
  // compares as the scalar loop's does.
  const std::uint32_t base = count == 0 ? 0 : entities[0].index;
  __m256i expected =
      _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(base)), _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7));
  __m256i runs_on = _mm256_set1_epi32(-1);
  std::size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const auto* at = reinterpret_cast<const __m256*>(entities + i);
    const __m256 lo = _mm256_loadu_ps(reinterpret_cast<const float*>(at));
    const __m256 hi = _mm256_loadu_ps(reinterpret_cast<const float*>(at) + 8);
    // Lanes 0 1 4 5 2 3 6 7 of the even (index) and odd (generation) words; the same lane order
    // for both, so each lane holds one entry (which lane does not matter to the verdict).
    const __m256i idx = _mm256_castps_si256(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)));
    const __m256i gen = _mm256_castps_si256(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1)));
    const __m256i in_range = _mm256_cmpgt_epi32(vslots, _mm256_xor_si256(idx, vbias));
    const __m256i live = _mm256_mask_i32gather_epi32(
        _mm256_setzero_si256(), reinterpret_cast<const int*>(live_generation), idx, in_range, 4);
    const __m256i handle_bad = _mm256_or_si256(
        _mm256_andnot_si256(in_range, _mm256_set1_epi32(-1)),
        _mm256_or_si256(_mm256_xor_si256(_mm256_cmpeq_epi32(live, gen), _mm256_set1_epi32(-1)),
                        _mm256_cmpeq_epi32(gen, _mm256_setzero_si256())));
    const __m256 x = _mm256_andnot_ps(sign, _mm256_loadu_ps(xs + i));
    const __m256 z = _mm256_andnot_ps(sign, _mm256_loadu_ps(zs + i));
    // Not (<=), unordered: NaN fails.
    const __m256 coordinate_bad =
        _mm256_or_ps(_mm256_cmp_ps(x, vmax, _CMP_NLE_UQ), _mm256_cmp_ps(z, vmax, _CMP_NLE_UQ));
    const __m256 bad = _mm256_or_ps(_mm256_castsi256_ps(handle_bad), coordinate_bad);
    if (_mm256_movemask_ps(bad) != 0) break;
    runs_on = _mm256_and_si256(runs_on, _mm256_cmpeq_epi32(idx, expected));
    expected = _mm256_add_epi32(expected, _mm256_set1_epi32(8));
  }
  *contiguous = _mm256_movemask_ps(_mm256_castsi256_ps(runs_on)) == 0xff;
  return check_from(i, entities, xs, zs, count, live_generation, slots, max_coordinate, *contiguous);
}

}  // namespace

const PositionBatchCheck first_bad_position_avx2 = &first_bad_avx2;
#else
const PositionBatchCheck first_bad_position_avx2 = nullptr;
#endif

PositionBatchCheck best_position_batch_check() noexcept {
  return simd::pick(&first_bad_position_scalar, first_bad_position_avx2);
}

}  // namespace sightline
