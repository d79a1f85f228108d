// How the library reports what a game's operator should hear about (a buffer that had to grow, a
// message or event it had to drop, a broken promise): through a hook the game sets in its defs.
// The library prints nothing of its own.
#pragma once

#include <cstdint>
#include <string_view>

namespace sightline {

enum class LogLevel : std::uint8_t {
  info = 0,     ///< Worth knowing, nothing lost (a buffer grew past its capacity hint).
  warning = 1,  ///< Something was dropped or a promise broken: the game should look.
};

/// Receives one report. `message` names the object, the figure and the def field that governs
/// it; it is valid during the call only. The hook is called on the thread that called the
/// reporting function (never one of the library's workers), at most once per kind of report and
/// call, and never while the library holds a lock; it must not call back into the object that
/// reports. Formatting a report allocates nothing.
using LogFunction = void (*)(void* context, LogLevel level, std::string_view message);

/// A function and its context; a null function (the default) drops every report.
struct LogHook {
  LogFunction function = nullptr;
  void* context = nullptr;
};

}  // namespace sightline
