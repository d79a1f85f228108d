// SIGHTLINE_API marks what the library exports: the public classes and functions. A shared build
// (BUILD_SHARED_LIBS) hides everything else, so its ABI is exactly the public headers.
#pragma once

#if defined(_WIN32) && defined(SIGHTLINE_SHARED)
#if defined(SIGHTLINE_BUILDING)
#define SIGHTLINE_API __declspec(dllexport)
#else
#define SIGHTLINE_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define SIGHTLINE_API __attribute__((visibility("default")))
#else
#define SIGHTLINE_API
#endif
