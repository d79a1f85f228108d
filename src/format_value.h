// Formatting of values for error messages.
#pragma once

#include <string>

#include "sightline/handles.h"

namespace sightline {

/// Shortest round-trip text of a float: "1.6", "nan", "inf", "-1e+20".
[[nodiscard]] std::string format_value(float value);
/// "entity 12:3" (index:generation).
[[nodiscard]] std::string describe(EntityId id);
/// "client 4:1".
[[nodiscard]] std::string describe(ClientId id);
/// "space 2:1".
[[nodiscard]] std::string describe(SpaceId id);

}  // namespace sightline
