#include "sightline/status.h"

#include <cstdio>
#include <cstdlib>

namespace sightline {

const char* error_code_name(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::ok: return "ok";
    case ErrorCode::invalid_def: return "invalid_def";
    case ErrorCode::invalid_argument: return "invalid_argument";
    case ErrorCode::null_handle: return "null_handle";
    case ErrorCode::stale_handle: return "stale_handle";
    case ErrorCode::non_finite_position: return "non_finite_position";
    case ErrorCode::entity_is_viewer: return "entity_is_viewer";
    case ErrorCode::malformed_packet: return "malformed_packet";
  }
  return "unknown";
}

namespace detail {

void fail_on_empty_result(const Status& status) noexcept {
  std::fprintf(stderr, "sightline: value of a failed Result read (%s: %s)\n", error_code_name(status.code()),
               status.message().c_str());
  std::abort();
}

}  // namespace detail

}  // namespace sightline
