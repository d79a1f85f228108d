// The update schedule of a client pass: each member's period, from its root's distance tier and
// its key's send rate, and the members due this tick, staggered by the root's order.
#include <algorithm>

#include "client_pass.h"
#include "pass_steps.h"

namespace sightline {

// When every member is due the updates are the set's own slice, not a copy of it.
void ClientPass::schedule_updates() {
  updates_begin_ = static_cast<std::uint32_t>(out_.updates.size());
  update_count_ = 0;
  const std::size_t tiers = culls_ ? w_.tier_period.size() : 0;
  const bool any_keys = w_.keyed_entities != 0;
  // The squared tier bounds of a point, precomputed for the world's radius (the same float steps).
  const float* const point_limits = enter_r_ == w_.enter_radius ? w_.tier_limit2.data() : nullptr;
  // Without tiers and keys every period is 1: every member is due.
  const bool all_due = tiers == 0 && !any_keys;
  std::uint32_t* const period_of = w_.record_periods ? out_.periods.extend(member_count_) : nullptr;
  if (all_due) {
    update_count_ = member_count_;
    if (period_of != nullptr) std::fill(period_of, period_of + member_count_, 1u);
    return;
  }
  out_.updates.resize_unwritten(updates_begin_ + member_count_);
  EntityId* const updated = out_.updates.data() + updates_begin_;
  std::uint32_t update_count = 0;
  for (std::uint32_t i = 0; i < member_count_; ++i) {
    const EntityId member = merged_[i];
    const std::uint32_t r = attachments_ ? w_.root_of(member.index) : member.index;
    std::uint32_t period = 1;
    if (tiers != 0) {
      const float d2 = origins_ == 1 ? distance2(w_.xs[r], w_.zs[r], origin_x_[0], origin_z_[0])
                                     : nearest2(w_.xs[r], w_.zs[r]);
      std::size_t tier = 0;
      if (point_limits != nullptr && w_.bound[r] == 0.0f && w_.scale[r] == 1.0f) {
        while (tier + 1 < tiers && d2 > point_limits[tier]) ++tier;
      } else {
        const float enter = w_.scale[r] * enter_r_;
        auto beyond = [&](std::size_t t) {
          const float reach = w_.tier_fraction[t] * enter + w_.bound[r];
          return d2 > reach * reach;
        };
        while (tier + 1 < tiers && beyond(tier)) ++tier;
      }
      period = w_.tier_period[tier];
    }
    if (any_keys && w_.cold[r].key != 0 && !w_.cold[r].tree_always && forced_[r] != epoch_) {
      const Subscription* subscription = find_subscription(client_, w_.cold[r].key);
      if (subscription != nullptr) period = std::max(period, subscription->send_rate);
    }
    if (period_of != nullptr) period_of[i] = period;
    if (period != 1 && !refresh_ && !w_.cold[r].tree_teleported && (w_.ticks + w_.order_of(r)) % period != 0)
      continue;
    updated[update_count++] = member;
  }
  update_count_ = update_count;
}

}  // namespace sightline
