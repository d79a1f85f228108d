// Library version: the one place it is written (CMakeLists.txt reads it for the package, the
// shared library's SOVERSION and pkg-config). 0.2 speaks wire protocol version 2 (protocol.h).
#pragma once

namespace sightline {

inline constexpr int kVersionMajor = 0;
inline constexpr int kVersionMinor = 2;
inline constexpr int kVersionPatch = 0;

}  // namespace sightline
