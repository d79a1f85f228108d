// bit_cast as the compilers' builtin (GCC 11+, Clang 9+): the same constexpr operation where
// the standard library lacks the function (Emscripten 3.1.6's libc++, the WebAssembly build).
#pragma once

#include <type_traits>

namespace sightline {

template <class To, class From>
[[nodiscard]] constexpr To bit_cast(const From& from) noexcept {
  static_assert(sizeof(To) == sizeof(From) && std::is_trivially_copyable_v<To> &&
                std::is_trivially_copyable_v<From>);
  return __builtin_bit_cast(To, from);
}

}  // namespace sightline
