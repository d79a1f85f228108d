#include "format_value.h"

#include <charconv>
#include <cmath>

namespace sightline {

std::string format_value(float value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
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
