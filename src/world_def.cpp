#include "sightline/world_def.h"

namespace sightline {

std::vector<DistanceTier> default_distance_tiers() {
  return {DistanceTier{0.5f, 1}, DistanceTier{std::numeric_limits<float>::infinity(), 2}};
}

WorldDef default_world_def() { return WorldDef{}; }

}  // namespace sightline
