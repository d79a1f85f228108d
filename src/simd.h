// The one place that knows about vector instructions: whether this build carries AVX2 code,
// whether this CPU runs it (detected once), how a kernel is chosen between its scalar and AVX2
// forms, and the attributes the kernels are written with. The library is built without -mavx2,
// so an AVX2 kernel is compiled per function (SIGHTLINE_AVX2) and only called where the CPU has it.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/// Defined where this build compiles AVX2 kernels (x86-64, GCC or Clang).
#define SIGHTLINE_HAS_AVX2 1
#include <immintrin.h>
/// Compiles one function for AVX2 (it may only run where simd::cpu_has_avx2()).
#define SIGHTLINE_AVX2 __attribute__((target("avx2")))
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(__GNUC__) || defined(__clang__)
/// Inlines a hot loop's helper whatever the optimiser's estimate (a call would cost more than the
/// body, and vector arguments would pass through memory): before `inline` on a function, after
/// the parameter list on a lambda.
#define SIGHTLINE_FORCE_INLINE __attribute__((always_inline))
#else
#define SIGHTLINE_FORCE_INLINE
#endif

namespace sightline::simd {

/// Whether this CPU runs this build's AVX2 kernels: false where the build has none. Detected on
/// the first call, then cached; safe from any thread.
[[nodiscard]] bool cpu_has_avx2() noexcept;

/// The AVX2 form of a kernel when it exists (not null) and this CPU runs it, else the scalar form:
/// how every kernel is chosen, once, by whoever calls it (the World, the grid), and what the
/// tests compare against each form named directly.
template <class Kernel>
[[nodiscard]] Kernel pick(Kernel scalar, Kernel avx2) noexcept {
  return avx2 != nullptr && cpu_has_avx2() ? avx2 : scalar;
}

}  // namespace sightline::simd
