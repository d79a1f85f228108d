// Hands one report to the game's LogHook, formatted into a buffer on the stack: a report costs
// no allocation, so a warning in a steady tick keeps it allocation-free.
#pragma once

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <string_view>

#include "sightline/log.h"

namespace sightline {

[[gnu::format(printf, 3, 4)]] inline void report(const LogHook& hook, LogLevel level, const char* format,
                                                 ...) {
  if (hook.function == nullptr) return;
  char text[320];
  va_list args;
  va_start(args, format);
  const int length = std::vsnprintf(text, sizeof text, format, args);
  va_end(args);
  if (length < 0) return;
  hook.function(hook.context, level,
                std::string_view(text, std::min(static_cast<std::size_t>(length), sizeof text - 1)));
}

}  // namespace sightline
