#include "client_pass.h"

#include <algorithm>
#include <cmath>

#include "bit_cast.h"
#include "pass_steps.h"
#include "sightline_assert.h"

namespace sightline {

void WorldImpl::client_pass(ClientSlot& client, PassScratch& pass, PassOutputs& out, TickStats& stats) {
  ClientPass(*this, client, pass, out, stats).run();
}

ClientPass::ClientPass(const WorldImpl& world, ClientSlot& client, PassScratch& scratch, PassOutputs& out,
                       TickStats& stats)
    : w_(world),
      client_(client),
      pass_(scratch),
      out_(out.to),
      stats_(stats),
      epoch_(begin_pass(scratch)),
      stamp_(scratch.stamp.data()),
      forced_(scratch.forced.data()),
      viewer_(client.viewer),
      client_space_(world.cold[client.viewer].space),
      room_(world.space_slots[client_space_]),
      culls_(room_.culls),
      enter_r_(pass_radii(client, room_).enter),
      leave_r_(pass_radii(client, room_).leave),
      enter2_(enter_r_ * enter_r_),
      leave2_(leave_r_ * leave_r_),
      out_of_range_(room_.switched_on ? DespawnReason::culling_switched : DespawnReason::left),
      uniform_(room_.entities.size() == world.live_entities),
      attachments_(world.attached_entities != 0 || world.deep_destroyed != 0),
      cap_(room_.culls ? world.def.crowd_cap : 0),
      origins_(world.origins_of(client, origin_x_.data(), origin_z_.data())),
      old_seen_(nullptr),
      last_tick_(world.ticks == 0 ? 0 : world.ticks - 1),
      old_members_(out.old_members(client)),
      old_count_(client.members.count),
      kept_(scratch.kept.data()),
      gaps_(scratch.gaps.data()) {
  const auto client_slot = static_cast<std::uint32_t>(&client - w_.client_slots.data());
  stamp_[viewer_] = epoch_;
  refresh_ = client.refresh || w_.cold[viewer_].teleported;
  for (const std::uint32_t o : client.extra_origins) refresh_ = refresh_ || w_.cold[o].teleported;
  sight_ = w_.sight_of(client, client_slot, origins_, origin_x_.data(), origin_z_.data());
  // The distance test alone decides a member with no trait where the space culls, holds every
  // live entity and needs no sight test.
  const bool plain_rule = culls_ && uniform_ && !sight_.needed;
  plain_members_ = plain_rule && w_.def.fast_paths;
  note_gaps_ = plain_rule && cap_ == 0 && !attachments_;
  // Last sightings of the old members; where sight did not apply, the last tick counts as one.
  if (client.sighted) old_seen_ = out.old_seen(client);
}

void ClientPass::run() {
  force_trees();
  leave_members();
  enter_forced();
  enter_by_distance();
  apply_crowd_cap();
  follow_attachments();
  write_new_set();
  schedule_updates();
  finish();
}

// Trees with something the client owns, then those with one of its origins (the viewer's own
// tree included), in its space.
void ClientPass::force_trees() {
  pass_.forced_roots.clear();
  auto force = [&](std::uint32_t e, SpawnReason reason) {
    const std::uint32_t r = w_.root_of(e);
    if (forced_[r] == epoch_) return;
    forced_[r] = epoch_;
    pass_.forced_reason[r] = static_cast<std::uint8_t>(reason);
    pass_.forced_roots.push_back(r);
  };
  for (const std::uint32_t e : client_.owned) {
    if (w_.cold[e].space == client_space_) force(e, SpawnReason::owner);
  }
  for (const std::uint32_t e : client_.extra_origins) {
    if (w_.cold[e].space == client_space_) force(e, SpawnReason::origin);
  }
  force(viewer_, SpawnReason::origin);
}

// Members are sorted, so the despawns and the kept members stay sorted. Attached members wait
// until their roots are decided. Despawns are sized for the worst case first and trimmed after
// (no capacity test per record); with this client's old set they stay within the old total.
void ClientPass::leave_members() {
  despawns_begin_ = size32(out_.despawns);
  out_.despawns.resize_unwritten(despawns_begin_ + old_count_);
  despawned_ = out_.despawns.data() + despawns_begin_;
  pass_.child_members.clear();
  pass_.crowd.clear();
  if (note_gaps_) {
    // A member only stays or goes: the kept members are not copied out, the positions that went
    // are noted and write_new_set copies the runs between them.
    if (origins_ == 1) {
      leave_each<true, true>();
    } else {
      leave_each<true, false>();
    }
    kept_count_ = old_count_ - gap_count_;
  } else {
    leave_each<false, false>();
  }
}

template <bool kNoteGaps, bool kOneOrigin>
void ClientPass::leave_each() {
  const std::uint8_t* const traits = w_.traits.data();
  const float* const xs = w_.xs.data();
  const float* const zs = w_.zs.data();
  const bool plain_members = plain_members_;
  const std::uint32_t viewer = viewer_;
  const std::uint32_t epoch = epoch_;
  const float ox = origin_x_[0];
  const float oz = origin_z_[0];
  const float leave2 = leave2_;
  const bool capped = cap_ != 0;
  std::uint32_t plain_tests = 0;
  for (std::uint32_t i = 0; i < old_count_; ++i) {
    const EntityId member = old_members_[i];
    const std::uint32_t e = member.index;
    Fate fate;
    if (plain_members && traits[e] == 0 && e != viewer) [[likely]] {
      ++plain_tests;
      const float d2 = kOneOrigin ? distance2(xs[e], zs[e], ox, oz) : nearest2(xs[e], zs[e]);
      if (d2 > leave2) {
        despawn(member, out_of_range_);
        fate = Fate::goes;
      } else {
        if (capped) pass_.crowd.push_back(crowd_rank(d2, leave_r_, e));
        fate = Fate::stays;
      }
    } else {
      fate = leave_by_every_rule(i, member);
    }
    if (fate == Fate::stays) {
      stamp_[e] = epoch;
      if constexpr (!kNoteGaps) kept_[kept_count_++] = member;
    } else if (kNoteGaps) {
      SIGHTLINE_ASSERT(fate == Fate::goes);
      gaps_[gap_count_++] = i;
    }
  }
  stats_.distance_tests += plain_tests;
}

// Every rule of the leave test; writes the despawn of a member let go.
ClientPass::Fate ClientPass::leave_by_every_rule(std::uint32_t i, EntityId member) {
  const std::uint32_t e = member.index;
  if (!w_.alive[e]) {
    despawn(member, w_.cold[e].withdrawn ? DespawnReason::left : DespawnReason::destroyed);
    return Fate::goes;
  }
  if (e == viewer_) {
    despawn(member, DespawnReason::left);
    return Fate::goes;
  }
  if (w_.traits[e] & WorldImpl::kChild) {
    pass_.child_members.push_back(member);
    return Fate::deferred;
  }
  if (w_.cold[e].space != client_space_) {
    despawn(member, DespawnReason::space_changed);
    return Fate::goes;
  }
  if (w_.cold[e].tree_always || forced_[e] == epoch_) return Fate::stays;
  const std::uint64_t k = w_.cold[e].key;
  const Subscription* subscription = k == 0 ? nullptr : find_subscription(client_, k);
  if (k != 0 && subscription == nullptr) {
    despawn(member, DespawnReason::key_removed);
    return Fate::goes;
  }
  const bool anywhere =
      w_.cold[e].presenter || (subscription != nullptr && subscription->bypass_distance) || !culls_;
  if (anywhere) return Fate::stays;
  ++stats_.distance_tests;
  const float reach = w_.scale[e] * leave_r_ + w_.bound[e];
  const float d2 = nearest2(w_.xs[e], w_.zs[e]);
  if (d2 > reach * reach) {
    despawn(member, out_of_range_);
    return Fate::goes;
  }
  if (sight_.needed && !w_.sees(sight_, e, pass_.occluders)) {
    const std::uint64_t last = old_seen_ != nullptr ? old_seen_[i] : last_tick_;
    if (w_.ticks - last > sight_.hold_ticks) {
      despawn(member, DespawnReason::hidden);
      return Fate::goes;
    }
    pass_.unseen[e] = epoch_;
    pass_.last_seen[e] = last;
  }
  if (cap_ != 0) pass_.crowd.push_back(crowd_rank(d2, reach, e));
  return Fate::stays;
}

// In rule order, so the first rule that admits a root names its reason.
void ClientPass::enter_forced() {
  pass_.entering.clear();
  for (const std::uint32_t r : w_.always_roots) {
    if (stamp_[r] == epoch_ || w_.cold[r].space != client_space_) continue;
    stamp_[r] = epoch_;
    enter(r, SpawnReason::always);
  }
  for (const std::uint32_t r : pass_.forced_roots) {
    if (stamp_[r] == epoch_) continue;
    stamp_[r] = epoch_;
    enter(r, static_cast<SpawnReason>(pass_.forced_reason[r]));
  }
  for (const std::uint32_t r : w_.presenter_list) {
    if (stamp_[r] == epoch_ || w_.cold[r].space != client_space_ || !admits(r)) continue;
    stamp_[r] = epoch_;
    enter(r, SpawnReason::presenter);
  }
  if (client_.bypass_subscriptions == 0) return;
  for (const Subscription& subscription : client_.subscriptions) {
    if (!subscription.bypass_distance) continue;
    auto at = std::lower_bound(w_.keyed_index.begin(), w_.keyed_index.end(),
                               std::pair<std::uint64_t, std::uint32_t>{subscription.stored_key, 0});
    for (; at != w_.keyed_index.end() && at->first == subscription.stored_key; ++at) {
      const std::uint32_t e = at->second;
      if (stamp_[e] == epoch_ || w_.cold[e].space != client_space_) continue;
      stamp_[e] = epoch_;
      enter(e, SpawnReason::key);
    }
  }
}

void ClientPass::enter_by_distance() {
  if (!culls_) {
    for (const std::uint32_t e : room_.entities) {
      if (stamp_[e] == epoch_ || (w_.traits[e] & WorldImpl::kChild) || !admits(e)) continue;
      stamp_[e] = epoch_;
      enter(e, SpawnReason::unculled);
    }
    return;
  }
  // Entities that may be held beyond R (a bound, a scale above 1) are not in the grid: each is
  // tested here against its own reach.
  for (const std::uint32_t e : w_.wide_list) {
    if (stamp_[e] == epoch_ || w_.cold[e].space != client_space_ || !admits(e)) continue;
    ++stats_.distance_tests;
    const float reach = w_.scale[e] * enter_r_ + w_.bound[e];
    const float d2 = nearest2(w_.xs[e], w_.zs[e]);
    if (d2 <= reach * reach) {
      if (sight_.needed && !w_.sees(sight_, e, pass_.occluders)) continue;
      if (cap_ != 0) pass_.crowd.push_back(crowd_rank(d2, reach, e));
      stamp_[e] = epoch_;
      enter(e, near_reason(e));
    }
  }
  enter_by_grid();
}

// Each origin scans its own cells; an entity near one origin is found by that origin's scan.
// Once the cap is full, one ranked after the cap-th candidate cannot get in: the scan looks no
// farther than such a newcomer could stand (a hair farther, for the rounding of the rank). Where
// a crowd has dense cells (CrowdIndex), they are read by sub-cells, and a client whose cap is not
// yet full scans discs that double from the finest sub-cell until the cap is full and its cap-th
// rank lies within what was scanned: the candidates read grow with the cap, not the crowd.
void ClientPass::enter_by_grid() {
  const CrowdIndex* const dense = cap_ != 0 && !w_.crowd_index.empty() ? &w_.crowd_index : nullptr;
  float reach = enter_r_;
  if (dense != nullptr && pass_.crowd.size() < cap_) {
    for (std::size_t o = 0; o < origins_; ++o) {
      // Twelve doublings at most, however close together the crowd stands.
      if (dense->touches(w_.grid, origin_x_[o], origin_z_[o], enter_r_))
        reach = std::max(dense->finest_side(), enter_r_ * 0x1.0p-12f);
    }
  }
  float scanned2 = -1.0f;  // every entity with d2 <= scanned2 from each origin was scanned
  for (;;) {
    float scan_radius = enter_r_;
    float scan2 = enter2_;
    if (cap_ != 0 && pass_.crowd.size() >= cap_) {
      const auto nth = pass_.crowd.begin() + (cap_ - 1);
      std::nth_element(pass_.crowd.begin(), nth, pass_.crowd.end(), w_.crowd_order());
      const float worst = bit_cast<float>(static_cast<std::uint32_t>(*nth >> 32));
      const float bound2 = worst * enter2_ * (1.0f + 0x1.0p-20f);
      if (bound2 < enter2_) {
        scan2 = bound2;
        scan_radius = std::sqrt(bound2) * (1.0f + 0x1.0p-20f);
      }
    }
    if (scan2 <= scanned2) return;
    const bool last = reach >= scan_radius;
    if (!last) {
      scan_radius = reach;
      scan2 = reach * reach;
    }
    scan_origins(dense, scan_radius, scan2);
    if (last) return;
    scanned2 = scan2;
    reach *= 2.0f;
  }
}

// A scan reaches R; an entity scaled below 1 in it is held only within its own reach. (A
// newcomer's crowd rank only grows with a smaller reach, so the capped scan's limit holds.)
void ClientPass::scan_origins(const CrowdIndex* dense, float scan_radius, float scan2) {
  const bool any_keys = w_.keyed_entities != 0;
  const bool any_scaled = w_.scaled_entities != 0;
  const std::uint32_t* const hits = pass_.hits.data();
  for (std::size_t o = 0; o < origins_; ++o) {
    const float ox = origin_x_[o];
    const float oz = origin_z_[o];
    const std::uint32_t found = dense != nullptr
                                    ? dense->scan(w_.grid, w_.scan, ox, oz, scan_radius, scan2,
                                                  pass_.stamp.data(), epoch_, pass_.hits.data(), stats_)
                                    : scan_near(w_.grid, w_.scan, pass_, ox, oz, scan_radius, scan2, stats_);
    for (std::uint32_t h = 0; h < found; ++h) {
      const std::uint32_t e = hits[h];
      if (!uniform_ && w_.cold[e].space != client_space_) continue;
      if (any_keys && w_.cold[e].key != 0 && find_subscription(client_, w_.cold[e].key) == nullptr) continue;
      float reach = enter_r_;
      if (any_scaled && w_.scale[e] != 1.0f) {
        reach = w_.scale[e] * enter_r_;
        if (nearest2(w_.xs[e], w_.zs[e]) > reach * reach) continue;
      }
      if (sight_.needed && !w_.sees(sight_, e, pass_.occluders)) continue;
      if (cap_ != 0) pass_.crowd.push_back(crowd_rank(nearest2(w_.xs[e], w_.zs[e]), reach, e));
      stamp_[e] = epoch_;
      enter(e, near_reason(e));
    }
  }
}

// The roots held by distance beyond the cap nearest are let go (members `left`).
void ClientPass::apply_crowd_cap() {
  if (cap_ == 0 || pass_.crowd.size() <= cap_) return;
  const auto cut = pass_.crowd.begin() + cap_;
  std::nth_element(pass_.crowd.begin(), cut, pass_.crowd.end(), w_.crowd_order());
  for (auto at = cut; at != pass_.crowd.end(); ++at) {
    const auto e = static_cast<std::uint32_t>(*at);
    stamp_[e] = epoch_ - 1;
    pass_.crowded[e] = epoch_;
  }
  std::uint32_t still_kept = 0;
  bool dropped_member = false;
  for (std::uint32_t i = 0; i < kept_count_; ++i) {
    if (stamp_[kept_[i].index] == epoch_) {
      kept_[still_kept++] = kept_[i];
    } else {
      despawn(kept_[i], DespawnReason::left);
      dropped_member = true;
    }
  }
  kept_count_ = still_kept;
  std::erase_if(pass_.entering, [&](std::uint64_t x) { return stamp_[x >> 8] != epoch_; });
  if (dropped_member && !attachments_) {
    std::sort(despawned_, despawned_ + despawn_count_,
              [](const DespawnRecord& x, const DespawnRecord& y) { return x.entity.index < y.entity.index; });
  }
}

void ClientPass::bring_attached(std::uint32_t e) {
  for (std::uint32_t c = w_.cold[e].first_child; c != WorldImpl::kNone; c = w_.cold[c].next_sibling) {
    if (stamp_[c] != epoch_) {
      stamp_[c] = epoch_;
      enter(c, SpawnReason::attached);
    }
    bring_attached(c);
  }
}

void ClientPass::follow_attachments() {
  if (!attachments_) {
    out_.despawns.resize_unwritten(despawns_begin_ + despawn_count_);
    return;
  }
  std::uint32_t kept_children = 0;
  for (const EntityId member : pass_.child_members) {
    const std::uint32_t e = member.index;
    const std::uint32_t r = w_.root_of(e);
    if (stamp_[r] == epoch_) {
      stamp_[e] = epoch_;
      pass_.child_members[kept_children++] = member;
      continue;
    }
    DespawnReason reason = out_of_range_;
    if (cap_ != 0 && pass_.crowded[r] == epoch_) {
      reason = DespawnReason::left;
    } else if (w_.cold[r].space != client_space_) {
      reason = DespawnReason::space_changed;
    } else if (!admits(r)) {
      reason = DespawnReason::key_removed;
    } else if (sight_.needed || cap_ != 0) {
      // Not held although in its space and admitted: in range, it is out of sight, or the cap
      // left it out without ranking it (the capped scan stops before what cannot rank ahead).
      const EntityId* const old_end = old_members_ + old_count_;
      const EntityId* const at =
          std::lower_bound(old_members_, old_end, r, [](EntityId m, std::uint32_t x) { return m.index < x; });
      const float reach = w_.scale[r] * (at != old_end && at->index == r ? leave_r_ : enter_r_) + w_.bound[r];
      if (nearest2(w_.xs[r], w_.zs[r]) <= reach * reach) {
        reason = sight_.needed && !w_.sees(sight_, r, pass_.occluders) ? DespawnReason::hidden
                                                                       : DespawnReason::left;
      }
    }
    despawn(member, reason);
  }
  for (std::uint32_t i = 0; i < kept_count_; ++i) {
    if (w_.cold[kept_[i].index].first_child != WorldImpl::kNone) bring_attached(kept_[i].index);
  }
  const std::size_t entered_roots = pass_.entering.size();
  for (std::size_t i = 0; i < entered_roots; ++i) {
    const auto e = static_cast<std::uint32_t>(pass_.entering[i] >> 8);
    if (w_.cold[e].first_child != WorldImpl::kNone) bring_attached(e);
  }
  if (w_.cold[viewer_].parent == WorldImpl::kNone && w_.cold[viewer_].first_child != WorldImpl::kNone) {
    bring_attached(viewer_);
  }
  if (kept_children != 0) {
    // Both lists are sorted by index and disjoint.
    EntityId* const joined = pass_.merge.data();
    const EntityId* const children = pass_.child_members.data();
    std::uint32_t a = 0;
    std::uint32_t b = 0;
    std::uint32_t n = 0;
    while (a < kept_count_ && b < kept_children) {
      SIGHTLINE_ASSERT(kept_[a].index != children[b].index);
      joined[n++] = kept_[a].index < children[b].index ? kept_[a++] : children[b++];
    }
    for (; a < kept_count_; ++a) joined[n++] = kept_[a];
    for (; b < kept_children; ++b) joined[n++] = children[b];
    kept_ = joined;
    kept_count_ = n;
  }
  out_.despawns.resize_unwritten(despawns_begin_ + despawn_count_);
}

// Entering entities sorted by index, merged into the kept members. An entering entity was not
// stamped before, so it is never a kept member: indices never tie.
void ClientPass::write_new_set() {
  spawns_begin_ = write_spawns(pass_, out_.spawns, w_.generation.data());
  spawn_count_ = size32(pass_.entering);
  SpawnRecord* const spawned = out_.spawns.data() + spawns_begin_;
  RecordBuffer<EntityId>& next = out_.members;
  members_begin_ = size32(next);
  member_count_ = kept_count_ + spawn_count_;
  next.resize_unwritten(members_begin_ + member_count_);
  EntityId* const merged = next.data() + members_begin_;
  merged_ = merged;
  if (note_gaps_) {
    merge_set(old_members_, old_count_, gaps_, gap_count_, spawned, spawn_count_, merged);
  } else {
    std::uint32_t a = 0;
    std::uint32_t b = 0;
    std::uint32_t n = 0;
    while (a < kept_count_ && b < spawn_count_) {
      SIGHTLINE_ASSERT(kept_[a].index != spawned[b].entity.index);
      merged[n++] = kept_[a].index < spawned[b].entity.index ? kept_[a++] : spawned[b++].entity;
    }
    for (; a < kept_count_; ++a) merged[n++] = kept_[a];
    for (; b < spawn_count_; ++b) merged[n++] = spawned[b].entity;
  }
  if (sight_.needed) {
    RecordBuffer<std::uint64_t>& next_seen = out_.seen;
    const std::uint32_t seen_begin = size32(next_seen);
    next_seen.resize_unwritten(seen_begin + member_count_);
    std::uint64_t* const sightings = next_seen.data() + seen_begin;
    for (std::uint32_t i = 0; i < member_count_; ++i) {
      const std::uint32_t e = merged[i].index;
      sightings[i] = pass_.unseen[e] == epoch_ ? pass_.last_seen[e] : w_.ticks;
    }
    client_.seen = {seen_begin, member_count_};
  }
  client_.sighted = sight_.needed;
  if (attachments_) {
    // Parents spawn before what is attached to them, and despawn after it.
    const EntityCold* const d = w_.cold.data();
    std::sort(spawned, spawned + spawn_count_, [d](const SpawnRecord& x, const SpawnRecord& y) {
      return d[x.entity.index].depth != d[y.entity.index].depth
                 ? d[x.entity.index].depth < d[y.entity.index].depth
                 : x.entity.index < y.entity.index;
    });
    std::sort(despawned_, despawned_ + despawn_count_, [d](const DespawnRecord& x, const DespawnRecord& y) {
      return d[x.entity.index].depth != d[y.entity.index].depth
                 ? d[x.entity.index].depth > d[y.entity.index].depth
                 : x.entity.index < y.entity.index;
    });
  }
}

void ClientPass::finish() {
  const bool updates_in_set = update_count_ == member_count_;
  out_.updates.resize_unwritten(updates_in_set ? updates_begin_ : updates_begin_ + update_count_);
  client_.refresh = false;
  client_.origins_changed = refresh_;
  client_.enter = culls_ ? enter_r_ : 0.0f;
  client_.leave = culls_ ? leave_r_ : 0.0f;
  client_.members = {members_begin_, member_count_};
  client_.spawns = {spawns_begin_, spawn_count_};
  client_.updates = {updates_in_set ? members_begin_ : updates_begin_, update_count_};
  client_.updates_in_set = updates_in_set;
  client_.despawns = {despawns_begin_, despawn_count_};
  stats_.spawns += client_.spawns.count;
  stats_.updates += client_.updates.count;
  stats_.despawns += client_.despawns.count;
  stats_.members += client_.members.count;
}

}  // namespace sightline
