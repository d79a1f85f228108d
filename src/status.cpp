#include "sightline/status.h"

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
  }
  return "unknown";
}

}  // namespace sightline
