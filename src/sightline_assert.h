// SIGHTLINE_ASSERT: invariants of the library's own state, checked in Debug builds and in the
// sanitizer builds of make test (any build without NDEBUG, or with SIGHTLINE_ASSERTS defined),
// and compiled out of release builds. A failure is a bug in Sightline, never bad input: inputs
// are refused with a Status before they reach any state an assertion reads.
#pragma once

#if !defined(NDEBUG) || defined(SIGHTLINE_ASSERTS)
#define SIGHTLINE_ASSERTS_ON 1
#else
#define SIGHTLINE_ASSERTS_ON 0
#endif

namespace sightline::detail {
/// Prints the failed condition with its place and aborts.
[[noreturn]] void assert_failed(const char* condition, const char* file, int line,
                                const char* detail) noexcept;
}  // namespace sightline::detail

#if SIGHTLINE_ASSERTS_ON
#define SIGHTLINE_ASSERT(condition)                                                \
  do {                                                                             \
    if (!(condition)) [[unlikely]]                                                 \
      ::sightline::detail::assert_failed(#condition, __FILE__, __LINE__, nullptr); \
  } while (false)
#define SIGHTLINE_ASSERT_MSG(condition, message)                                     \
  do {                                                                               \
    if (!(condition)) [[unlikely]]                                                   \
      ::sightline::detail::assert_failed(#condition, __FILE__, __LINE__, (message)); \
  } while (false)
#else
// Not evaluated, but still compiled: the condition stays well-formed and what it names, used.
#define SIGHTLINE_ASSERT(condition) ((void)sizeof(!(condition)))
#define SIGHTLINE_ASSERT_MSG(condition, message) ((void)sizeof(!(condition)))
#endif
