#include "distance_scan.h"

#include "simd.h"

namespace sightline {

std::uint32_t scan_within_scalar(const float* xs, const float* zs, const std::uint32_t* ids,
                                 const ScanRun* runs, std::uint32_t run_count, float ox, float oz, float r2,
                                 const std::uint32_t* stamp, std::uint32_t epoch,
                                 std::uint32_t* found) noexcept {
  // Branch-free: a hit rate near a third would defeat the branch predictor. The stamp is read
  // only for a hit (most candidates are not).
  std::uint32_t n = 0;
  for (std::uint32_t r = 0; r < run_count; ++r) {
    for (std::uint32_t i = runs[r].begin; i < runs[r].end; ++i) {
      const float dx = xs[i] - ox;
      const float dz = zs[i] - oz;
      found[n] = ids[i];
      n += dx * dx + dz * dz <= r2 && stamp[ids[i]] != epoch ? 1u : 0u;
    }
  }
  return n;
}

std::uint32_t count_within_scalar(const float* xs, const float* zs, const ScanRun* runs,
                                  std::uint32_t run_count, float ox, float oz, float r2) noexcept {
  std::uint32_t n = 0;
  for (std::uint32_t r = 0; r < run_count; ++r) {
    for (std::uint32_t i = runs[r].begin; i < runs[r].end; ++i) {
      const float dx = xs[i] - ox;
      const float dz = zs[i] - oz;
      n += dx * dx + dz * dz <= r2 ? 1u : 0u;
    }
  }
  return n;
}

std::uint32_t leave_test_scalar(const EntityId* members, std::uint32_t count, const float* xs,
                                const float* zs, float ox, float oz, float leave_r2, float enter_r2,
                                std::uint32_t viewer, std::uint32_t* gone, std::uint32_t& inside) noexcept {
  std::uint32_t n = 0;
  std::uint32_t near = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint32_t e = members[i].index;
    const float dx = xs[e] - ox;
    const float dz = zs[e] - oz;
    const float d2 = dx * dx + dz * dz;
    gone[n] = i;
    n += d2 > leave_r2 || e == viewer ? 1u : 0u;
    near += d2 <= enter_r2 && e != viewer ? 1u : 0u;
  }
  inside = near;
  return n;
}

#ifdef SIGHTLINE_HAS_AVX2
namespace {

// For each 8-bit hit mask, the set bits' lane numbers packed low byte first: one load turns a
// mask into the offsets to store, with no branch on how many lanes hit.
struct LanePack {
  std::uint64_t lanes[256] = {};
};
constexpr LanePack make_lane_pack() {
  LanePack pack;
  for (std::uint32_t mask = 0; mask < 256; ++mask) {
    std::uint32_t k = 0;
    for (std::uint32_t lane = 0; lane < 8; ++lane) {
      if (mask >> lane & 1u) pack.lanes[mask] |= static_cast<std::uint64_t>(lane) << (8 * k++);
    }
  }
  return pack;
}
alignas(64) constexpr LanePack kLanePack = make_lane_pack();

// The lanes of eight candidates within r2 of (ox, oz), of those in `lanes_in`.
SIGHTLINE_AVX2 SIGHTLINE_FORCE_INLINE inline __m256 within(__m256 x, __m256 z, __m256 ox, __m256 oz,
                                                           __m256 r2, __m256i lanes_in) noexcept {
  const __m256 dx = _mm256_sub_ps(x, ox);
  const __m256 dz = _mm256_sub_ps(z, oz);
  const __m256 d2 = _mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_mul_ps(dz, dz));
  return _mm256_and_ps(_mm256_cmp_ps(d2, r2, _CMP_LE_OQ), _mm256_castsi256_ps(lanes_in));
}

// Eight lanes: the hit mask becomes lane numbers by one table load, the lanes' ids are packed by
// them, the hits first, all eight stored at found + n, and n moves on by the hits. No branch
// depends on how many lanes hit.
// The library is built with -ffp-contract=off, so the multiplies and the add below stay three
// rounded operations, as in the scalar loop, even where FMA is available.
// The lanes within reach then gather their stamps (the others are masked out, never read), and
// those already stamped drop out.
SIGHTLINE_AVX2 SIGHTLINE_FORCE_INLINE inline void pack_hits(__m256 x, __m256 z, __m256i ids, __m256 ox,
                                                            __m256 oz, __m256 r2, __m256i lanes_in,
                                                            const std::uint32_t* stamp, __m256i epoch,
                                                            std::uint32_t* found, std::uint32_t& n) noexcept {
  const __m256 near = within(x, z, ox, oz, r2, lanes_in);
  const __m256i stamps = _mm256_mask_i32gather_epi32(epoch, reinterpret_cast<const int*>(stamp), ids,
                                                     _mm256_castps_si256(near), 4);
  const __m256 fresh = _mm256_andnot_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(stamps, epoch)), near);
  const auto mask = static_cast<std::uint32_t>(_mm256_movemask_ps(fresh));
  const __m256i lanes =
      _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(kLanePack.lanes[mask])));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(found + n), _mm256_permutevar8x32_epi32(ids, lanes));
  n += static_cast<std::uint32_t>(__builtin_popcount(mask));
}

SIGHTLINE_AVX2 std::uint32_t scan_avx2(const float* xs, const float* zs, const std::uint32_t* ids,
                                       const ScanRun* runs, std::uint32_t run_count, float ox, float oz,
                                       float r2, const std::uint32_t* stamp, std::uint32_t epoch,
                                       std::uint32_t* found) noexcept {
  const __m256 vox = _mm256_set1_ps(ox);
  const __m256 voz = _mm256_set1_ps(oz);
  const __m256 vr2 = _mm256_set1_ps(r2);
  const __m256i vepoch = _mm256_set1_epi32(static_cast<int>(epoch));
  const __m256i all_lanes = _mm256_set1_epi32(-1);
  const __m256i lane_numbers = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  std::uint32_t n = 0;
  for (std::uint32_t r = 0; r < run_count; ++r) {
    std::uint32_t i = runs[r].begin;
    const std::uint32_t end = runs[r].end;
    for (; i + 8 <= end; i += 8) {
      pack_hits(_mm256_loadu_ps(xs + i), _mm256_loadu_ps(zs + i),
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ids + i)), vox, voz, vr2, all_lanes,
                stamp, vepoch, found, n);
    }
    // The last 1 to 7 in one masked step: a masked-off lane is never read, so nothing past the
    // run is touched, and a small run (a few entities per cell) costs one step, not a loop.
    if (i < end) {
      const std::uint32_t rest = end - i;
      const __m256i in = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(rest)), lane_numbers);
      pack_hits(_mm256_maskload_ps(xs + i, in), _mm256_maskload_ps(zs + i, in),
                _mm256_maskload_epi32(reinterpret_cast<const int*>(ids + i), in), vox, voz, vr2, in, stamp,
                vepoch, found, n);
    }
  }
  return n;
}

// Eight candidates: how many lie within r2, by the same float operations as pack_hits.
SIGHTLINE_AVX2 SIGHTLINE_FORCE_INLINE inline std::uint32_t count_hits(__m256 x, __m256 z, __m256 ox,
                                                                      __m256 oz, __m256 r2,
                                                                      __m256i lanes_in) noexcept {
  const __m256 near = within(x, z, ox, oz, r2, lanes_in);
  return static_cast<std::uint32_t>(__builtin_popcount(static_cast<unsigned>(_mm256_movemask_ps(near))));
}

SIGHTLINE_AVX2 std::uint32_t count_avx2(const float* xs, const float* zs, const ScanRun* runs,
                                        std::uint32_t run_count, float ox, float oz, float r2) noexcept {
  const __m256 vox = _mm256_set1_ps(ox);
  const __m256 voz = _mm256_set1_ps(oz);
  const __m256 vr2 = _mm256_set1_ps(r2);
  const __m256i all_lanes = _mm256_set1_epi32(-1);
  const __m256i lane_numbers = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  std::uint32_t n = 0;
  for (std::uint32_t r = 0; r < run_count; ++r) {
    std::uint32_t i = runs[r].begin;
    const std::uint32_t end = runs[r].end;
    for (; i + 8 <= end; i += 8) {
      n += count_hits(_mm256_loadu_ps(xs + i), _mm256_loadu_ps(zs + i), vox, voz, vr2, all_lanes);
    }
    if (i < end) {
      const __m256i in = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(end - i)), lane_numbers);
      n += count_hits(_mm256_maskload_ps(xs + i, in), _mm256_maskload_ps(zs + i, in), vox, voz, vr2, in);
    }
  }
  return n;
}

// Eight members: their indices are the even 32-bit words of eight EntityIds, gathered into
// positions; a partial step masks its loads and gathers, so nothing past the set is read. The
// few that go are found by the mask's bits.
SIGHTLINE_AVX2 std::uint32_t leave_avx2(const EntityId* members, std::uint32_t count, const float* xs,
                                        const float* zs, float ox, float oz, float leave_r2, float enter_r2,
                                        std::uint32_t viewer, std::uint32_t* gone,
                                        std::uint32_t& inside) noexcept {
  static_assert(sizeof(EntityId) == 8);
  const __m256 vox = _mm256_set1_ps(ox);
  const __m256 voz = _mm256_set1_ps(oz);
  const __m256 vr2 = _mm256_set1_ps(leave_r2);
  const __m256 venter2 = _mm256_set1_ps(enter_r2);
  const __m256i vviewer = _mm256_set1_epi32(static_cast<int>(viewer));
  const __m256i lane_numbers = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i low_pairs = _mm256_setr_epi64x(0, 1, 2, 3);
  const __m256i high_pairs = _mm256_setr_epi64x(4, 5, 6, 7);
  std::uint32_t n = 0;
  std::uint32_t near = 0;
  for (std::uint32_t i = 0; i < count; i += 8) {
    const std::uint32_t rest = count - i < 8 ? count - i : 8;
    const auto* at = reinterpret_cast<const long long*>(members + i);
    __m256i lo;
    __m256i hi;
    __m256i in;
    if (rest == 8) {
      lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at));
      hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at + 4));
      in = _mm256_set1_epi32(-1);
    } else {
      const __m256i left = _mm256_set1_epi64x(rest);
      lo = _mm256_maskload_epi64(at, _mm256_cmpgt_epi64(left, low_pairs));
      hi = _mm256_maskload_epi64(at + 4, _mm256_cmpgt_epi64(left, high_pairs));
      in = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(rest)), lane_numbers);
    }
    // Even words of lo and hi: lanes 0 1 4 5 2 3 6 7, then put in member order.
    const __m256i mixed = _mm256_castps_si256(
        _mm256_shuffle_ps(_mm256_castsi256_ps(lo), _mm256_castsi256_ps(hi), _MM_SHUFFLE(2, 0, 2, 0)));
    const __m256i idx = _mm256_permute4x64_epi64(mixed, _MM_SHUFFLE(3, 1, 2, 0));
    const __m256 x = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), xs, idx, _mm256_castsi256_ps(in), 4);
    const __m256 z = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), zs, idx, _mm256_castsi256_ps(in), 4);
    const __m256 dx = _mm256_sub_ps(x, vox);
    const __m256 dz = _mm256_sub_ps(z, voz);
    const __m256 d2 = _mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_mul_ps(dz, dz));
    const __m256 own = _mm256_castsi256_ps(_mm256_cmpeq_epi32(idx, vviewer));
    const __m256 goes = _mm256_or_ps(_mm256_cmp_ps(d2, vr2, _CMP_GT_OQ), own);
    const __m256 close = _mm256_andnot_ps(own, _mm256_cmp_ps(d2, venter2, _CMP_LE_OQ));
    auto mask = static_cast<std::uint32_t>(_mm256_movemask_ps(_mm256_and_ps(goes, _mm256_castsi256_ps(in))));
    near += static_cast<std::uint32_t>(__builtin_popcount(
        static_cast<unsigned>(_mm256_movemask_ps(_mm256_and_ps(close, _mm256_castsi256_ps(in))))));
    while (mask != 0) {
      gone[n++] = i + static_cast<std::uint32_t>(__builtin_ctz(mask));
      mask &= mask - 1;
    }
  }
  inside = near;
  return n;
}

}  // namespace
#endif

#ifdef SIGHTLINE_HAS_AVX2
const DistanceScan scan_within_avx2 = &scan_avx2;
const DistanceCount count_within_avx2 = &count_avx2;
const LeaveTest leave_test_avx2 = &leave_avx2;
#else
const DistanceScan scan_within_avx2 = nullptr;
const DistanceCount count_within_avx2 = nullptr;
const LeaveTest leave_test_avx2 = nullptr;
#endif

DistanceCount best_distance_count() noexcept { return simd::pick(&count_within_scalar, count_within_avx2); }

LeaveTest best_leave_test() noexcept { return simd::pick(&leave_test_scalar, leave_test_avx2); }

DistanceScan best_distance_scan() noexcept { return simd::pick(&scan_within_scalar, scan_within_avx2); }

}  // namespace sightline
