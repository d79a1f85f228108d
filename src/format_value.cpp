#include "format_value.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace sightline {

std::string format_value(float value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[32];
#if defined(__cpp_lib_to_chars)
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
#else
  // A standard library without float to_chars (Emscripten 3.1.6's): the fewest significant
  // digits that read back as the same float.
  for (int digits = 1;; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, static_cast<double>(value));
    if (digits == 9 || std::strtof(buffer, nullptr) == value) return buffer;
  }
#endif
}

std::string describe(EntityId id) {
  return "entity " + std::to_string(id.index) + ":" + std::to_string(id.generation);
}

std::string describe(ClientId id) {
  return "client " + std::to_string(id.index) + ":" + std::to_string(id.generation);
}

std::string describe(SpaceId id) {
  return "space " + std::to_string(id.index) + ":" + std::to_string(id.generation);
}

}  // namespace sightline
