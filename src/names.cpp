// Stable names of the enums a user prints: the enumerator's own spelling, "unknown" for any
// other value.
#include "sightline/relevance.h"
#include "sightline/stream.h"

namespace sightline {

const char* rule_name(Rule rule) noexcept {
  switch (rule) {
    case Rule::viewer: return "viewer";
    case Rule::other_space: return "other_space";
    case Rule::always: return "always";
    case Rule::owner: return "owner";
    case Rule::origin: return "origin";
    case Rule::key_excluded: return "key_excluded";
    case Rule::presenter: return "presenter";
    case Rule::key_bypass: return "key_bypass";
    case Rule::unculled: return "unculled";
    case Rule::near: return "near";
    case Rule::within_leave: return "within_leave";
    case Rule::out_of_range: return "out_of_range";
    case Rule::hidden: return "hidden";
    case Rule::crowded: return "crowded";
  }
  return "unknown";
}

const char* spawn_reason_name(SpawnReason reason) noexcept {
  switch (reason) {
    case SpawnReason::near: return "near";
    case SpawnReason::always: return "always";
    case SpawnReason::key: return "key";
    case SpawnReason::owner: return "owner";
    case SpawnReason::origin: return "origin";
    case SpawnReason::attached: return "attached";
    case SpawnReason::teleport: return "teleport";
    case SpawnReason::presenter: return "presenter";
    case SpawnReason::unculled: return "unculled";
  }
  return "unknown";
}

const char* despawn_reason_name(DespawnReason reason) noexcept {
  switch (reason) {
    case DespawnReason::left: return "left";
    case DespawnReason::destroyed: return "destroyed";
    case DespawnReason::key_removed: return "key_removed";
    case DespawnReason::space_changed: return "space_changed";
    case DespawnReason::culling_switched: return "culling_switched";
    case DespawnReason::hidden: return "hidden";
  }
  return "unknown";
}

}  // namespace sightline
