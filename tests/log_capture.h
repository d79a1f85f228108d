// Collects what the library reports through a LogHook (log.h), for tests to read.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sightline/log.h"

namespace sightline {

struct LogCapture {
  std::vector<std::pair<LogLevel, std::string>> reports;

  LogHook hook() { return {&LogCapture::take, this}; }

  static void take(void* context, LogLevel level, std::string_view message) {
    static_cast<LogCapture*>(context)->reports.emplace_back(level, std::string(message));
  }
};

}  // namespace sightline
