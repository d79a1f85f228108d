#include "grid_refresh.h"

#include "simd.h"

namespace sightline {

namespace {

// Items [from, count) one at a time, `moved_count` having moved before `from`.
std::size_t refresh_from(std::size_t from, std::size_t moved_count, const CellBinning& binning,
                         const std::uint32_t* items, const float* x, const float* z, float* item_x,
                         float* item_z, const std::uint32_t* item_cell, std::size_t count, CellMove* moved,
                         std::size_t max_moved) noexcept {
  for (std::size_t k = from; k < count; ++k) {
    const std::uint32_t e = items[k];
    item_x[k] = x[e];
    item_z[k] = z[e];
    const std::uint32_t c = binning.cell(x[e], z[e]);
    if (c == item_cell[k]) continue;
    if (moved_count == max_moved) return kTooManyMoved;
    moved[moved_count++] = {static_cast<std::uint32_t>(k), c};
  }
  return moved_count;
}

}  // namespace

std::size_t grid_refresh_scalar(const CellBinning& binning, const std::uint32_t* items, const float* x,
                                const float* z, float* item_x, float* item_z, const std::uint32_t* item_cell,
                                std::size_t count, CellMove* moved, std::size_t max_moved) noexcept {
  return refresh_from(0, 0, binning, items, x, z, item_x, item_z, item_cell, count, moved, max_moved);
}

#ifdef SIGHTLINE_HAS_AVX2
namespace {

// Eight items a step: positions gathered by entity and stored in item order, cells computed as
// CellBinning::cell does (the same rounded operations; maxps and minps give the cell std::max
// and std::min give), compared with the items' cells. The last 0 to 7 go to the scalar loop.
SIGHTLINE_AVX2 std::size_t refresh_avx2(const CellBinning& binning, const std::uint32_t* items,
                                        const float* x, const float* z, float* item_x, float* item_z,
                                        const std::uint32_t* item_cell, std::size_t count, CellMove* moved,
                                        std::size_t max_moved) noexcept {
  const __m256 vox = _mm256_set1_ps(binning.origin_x);
  const __m256 voz = _mm256_set1_ps(binning.origin_z);
  const __m256 vinv = _mm256_set1_ps(binning.inv_cell_size);
  const __m256 vlast_x = _mm256_set1_ps(binning.last_x);
  const __m256 vlast_z = _mm256_set1_ps(binning.last_z);
  const __m256i vcx = _mm256_set1_epi32(static_cast<int>(binning.cells_x));
  const __m256 vzero = _mm256_setzero_ps();
  std::size_t moved_count = 0;
  std::size_t k = 0;
  for (; k + 8 <= count; k += 8) {
    const __m256i e = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(items + k));
    const __m256 px = _mm256_i32gather_ps(x, e, 4);
    const __m256 pz = _mm256_i32gather_ps(z, e, 4);
    _mm256_storeu_ps(item_x + k, px);
    _mm256_storeu_ps(item_z + k, pz);
    const __m256 tx =
        _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(_mm256_sub_ps(px, vox), vinv), vzero), vlast_x);
    const __m256 tz =
        _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(_mm256_sub_ps(pz, voz), vinv), vzero), vlast_z);
    const __m256i c =
        _mm256_add_epi32(_mm256_mullo_epi32(_mm256_cvttps_epi32(tz), vcx), _mm256_cvttps_epi32(tx));
    const __m256i old = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(item_cell + k));
    const auto same =
        static_cast<std::uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(c, old))));
    if (same != 0xffu) [[unlikely]] {
      alignas(32) std::uint32_t cells[8];
      _mm256_store_si256(reinterpret_cast<__m256i*>(cells), c);
      for (std::uint32_t m = ~same & 0xffu; m != 0; m &= m - 1) {
        if (moved_count == max_moved) return kTooManyMoved;
        const auto lane = static_cast<std::uint32_t>(__builtin_ctz(m));
        moved[moved_count++] = {static_cast<std::uint32_t>(k) + lane, cells[lane]};
      }
    }
  }
  return refresh_from(k, moved_count, binning, items, x, z, item_x, item_z, item_cell, count, moved,
                      max_moved);
}

}  // namespace

const GridRefresh grid_refresh_avx2 = &refresh_avx2;
#else
const GridRefresh grid_refresh_avx2 = nullptr;
#endif

GridRefresh best_grid_refresh() noexcept { return simd::pick(&grid_refresh_scalar, grid_refresh_avx2); }

}  // namespace sightline
