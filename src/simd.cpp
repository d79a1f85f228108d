#include "simd.h"

namespace sightline::simd {

bool cpu_has_avx2() noexcept {
#ifdef SIGHTLINE_HAS_AVX2
  // __builtin_cpu_init first: a World made by a static initializer may ask before libgcc's own
  // constructor has read the CPU.
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return has;
#else
  return false;
#endif
}

}  // namespace sightline::simd
