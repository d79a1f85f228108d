// What an entity slot holds besides the columns the hot loops stream through.
#pragma once

#include <cstdint>

namespace sightline {

/// No entity: a root's parent, a leaf's first child, a last sibling's next.
inline constexpr std::uint32_t kNoEntity = 0xffffffffu;

/// One entity slot's cold data, read a member or a candidate at a time (the rules beyond
/// distance, attachments, spaces, the Replicator's priorities): one record per slot, so such a
/// read touches one cache line, and a slot is reset or appended as one value.
struct EntityCold {
  std::uint64_t key = 0;             // stored interest key; 0 is Global
  std::uint32_t owner = 0;           // owning client slot + 1; 0 is none
  std::uint32_t viewer_refs = 0;     // clients viewing from it
  std::uint32_t origin_refs = 0;     // clients with it as an extra origin
  std::uint32_t holders = 0;         // clients holding it after the last tick
  std::uint32_t parent = kNoEntity;  // attachments
  std::uint32_t first_child = kNoEntity;
  std::uint32_t next_sibling = kNoEntity;
  std::uint32_t space = 0;      // space slot
  std::uint32_t space_pos = 0;  // position in that space's entity list
  float vel_x = 0.0f;           // units per second, for look-ahead and priorities
  float vel_z = 0.0f;
  std::uint8_t depth = 0;   // 0 for a root
  std::uint8_t always = 0;  // always relevant
  std::uint8_t presenter = 0;
  std::uint8_t teleported = 0;       // since the last tick
  std::uint8_t created = 0;          // since the last tick
  std::uint8_t tree_teleported = 0;  // per tick: a root whose tree holds a teleported entity
  std::uint8_t tree_always = 0;      // per tick: a root whose tree holds an always-relevant one
  std::uint8_t withdrawn = 0;        // removed by withdraw_entity: its holders' despawns say `left`
};

}  // namespace sightline
