// The general client pass: one client's set for this tick under every rule of the relevance model
// (keys, owners, origins, bounds, always-relevant, presenters, spaces, sight, the crowd cap,
// attachments, tiers). Its steps run in the order of ClientPass::run and each writes what the next
// reads; the plain pass (plain_pass.cpp) gives the same records for a client none of whose rules
// apply beyond distance.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "pass_steps.h"
#include "simd.h"
#include "world_impl.h"

namespace sightline {

class ClientPass {
 public:
  ClientPass(const WorldImpl& world, ClientSlot& client, PassScratch& scratch, PassOutputs& out,
             TickStats& stats);

  /// Every step, in order; the client's slices and the stats written last.
  void run();

 private:
  enum class Fate : std::uint8_t { stays, goes, deferred };

  void force_trees();         // roots it holds by owner or origin, whatever their key and distance
  void leave_members();       // old members that stay, or go with their despawn reason
  void enter_forced();        // always-relevant, owned and origin trees, presenters, bypass keys
  void enter_by_distance();   // everything in the space (no culling), or bounded and grid entities
  void apply_crowd_cap();     // roots held by distance beyond the cap nearest let go
  void follow_attachments();  // attached members follow their roots; held trees bring theirs
  void write_new_set();       // spawns, the merged set, sightings, parents before children
  void schedule_updates();    // each member's period; the members due this tick
  void finish();              // the client's slices and the pass's counts

  template <bool kNoteGaps, bool kOneOrigin>
  void leave_each();
  /// The leave rule of one old member (at position i of the old set). A plain member (a live
  /// unattached point with a Global key, no owner, not always relevant, nobody's origin) needs
  /// only the distance test.
  Fate leave_rule(std::uint32_t i, EntityId member);
  Fate leave_by_every_rule(std::uint32_t i, EntityId member);
  void enter_by_grid();
  /// Each origin's grid scan of `scan_radius` (r2 `scan2`), through the crowd index when given;
  /// the hits the client's rules admit enter.
  void scan_origins(const CrowdIndex* dense, float scan_radius, float scan2);
  void bring_attached(std::uint32_t e);
  /// The smallest squared distance from (x, z) to an origin.
  [[nodiscard]] SIGHTLINE_FORCE_INLINE float nearest2(float x, float z) const noexcept {
    float best = distance2(x, z, origin_x_[0], origin_z_[0]);
    for (std::size_t o = 1; o < origins_; ++o)
      best = std::min(best, distance2(x, z, origin_x_[o], origin_z_[o]));
    return best;
  }
  /// Whether e's key admits the client.
  [[nodiscard]] bool admits(std::uint32_t e) const noexcept {
    return w_.cold[e].key == 0 || find_subscription(client_, w_.cold[e].key) != nullptr;
  }
  [[nodiscard]] SpawnReason near_reason(std::uint32_t e) const noexcept {
    return w_.cold[e].tree_teleported ? SpawnReason::teleport : SpawnReason::near;
  }
  void enter(std::uint32_t e, SpawnReason reason) {
    pass_.entering.push_back(static_cast<std::uint64_t>(e) << 8 | static_cast<std::uint64_t>(reason));
  }
  void despawn(EntityId member, DespawnReason reason) noexcept {
    despawned_[despawn_count_++] = {member, reason};
  }

  const WorldImpl& w_;
  ClientSlot& client_;
  PassScratch& pass_;
  TickOutputs& out_;
  TickStats& stats_;

  // The client and its space.
  std::uint32_t epoch_;
  std::uint32_t* stamp_;
  std::uint32_t* forced_;
  std::uint32_t viewer_;
  std::uint32_t client_space_;
  const SpaceSlot& room_;
  bool culls_;
  float enter_r_;
  float leave_r_;
  float enter2_;
  float leave2_;
  DespawnReason out_of_range_;
  bool uniform_;        // every live entity is in this space: no space test per entity
  bool plain_members_;  // members with no trait take the distance test alone
  bool attachments_;    // something is attached, or was when destroyed since the last tick
  std::uint32_t cap_;   // the crowd cap where the space culls, else 0
  bool note_gaps_;      // no cap and nothing attached: the leave step notes who went
  std::array<float, kMaxOrigins + 1> origin_x_;
  std::array<float, kMaxOrigins + 1> origin_z_;
  std::size_t origins_;
  bool refresh_;  // origins changed or teleported: every member is due
  Sight sight_;
  const std::uint64_t* old_seen_;  // last sightings of the old members, or null
  std::uint64_t last_tick_;

  // The old set, and what the leave step keeps of it.
  const EntityId* old_members_;
  std::uint32_t old_count_;
  std::uint32_t despawns_begin_ = 0;
  DespawnRecord* despawned_ = nullptr;
  std::uint32_t despawn_count_ = 0;
  EntityId* kept_;
  std::uint32_t kept_count_ = 0;
  std::uint32_t* gaps_;
  std::uint32_t gap_count_ = 0;

  // The new set.
  std::uint32_t spawns_begin_ = 0;
  std::uint32_t spawn_count_ = 0;
  std::uint32_t members_begin_ = 0;
  std::uint32_t member_count_ = 0;
  const EntityId* merged_ = nullptr;
  std::uint32_t updates_begin_ = 0;
  std::uint32_t update_count_ = 0;
};

}  // namespace sightline
