// A client's interest state, carried from one World to another (World::export_client and
// World::adopt_client): a client served by another process from the next tick on.
#pragma once

#include <cstdint>
#include <vector>

#include "sightline/interest_keys.h"

namespace sightline {

/// What a World knows of a client between two ticks, with every entity named by its external id
/// (EntityDef::external_id), so that another World holding the same entities in other slots can
/// go on serving the client: its next tick there gives what the next tick here would have given
/// (the same set and records, up to the handles), provided that World holds the same entities at
/// the same tick number (WorldDef::first_tick). World::export_client makes one;
/// World::adopt_client turns it into a client. The flight recorder (set_history_capacity) stays
/// behind.
struct ClientImage {
  /// A member of the client's interest set after the last tick.
  struct Member {
    std::uint64_t entity = 0;  ///< Its external id.
    /// With `sighted`: how many ticks before the last tick it was last in sight (0: at the last
    /// tick), which the visibility hold counts from. 0 otherwise.
    std::uint64_t unseen_ticks = 0;
    friend bool operator==(const Member&, const Member&) = default;
  };

  std::uint64_t viewer = 0;     ///< The viewer's external id.
  std::vector<Member> members;  ///< The interest set after the last tick, by external id ascending.
  bool sighted = false;         ///< Sight applied to the client at the last tick.
  std::vector<KeySubscription> area_subscriptions;  ///< By key ascending (World::area_subscriptions).
  std::vector<KeySubscription> user_subscriptions;  ///< By key ascending (World::user_subscriptions).
  std::uint64_t subscription_revision = 0;          ///< World::subscription_revision.
  std::vector<std::uint64_t> extra_origins;         ///< External ids, ascending (World::origins).
  std::vector<std::uint64_t> owned;                 ///< The entities it owns, external ids, ascending.
  /// Its origins changed since the last tick (set_viewer, add_origin, ...): every member is due
  /// at the next tick.
  bool origins_changed = false;
  /// Its origins had changed before the last tick: a Replicator over the World reads this.
  bool origins_changed_at_last_tick = false;
  float look_ahead = 0.0f;         ///< Seconds (World::look_ahead).
  float view_enter_radius = 0.0f;  ///< World::view_radius.
  float view_leave_radius = 0.0f;
  float last_enter_radius = 0.0f;  ///< World::client_radii: the radii of the last tick.
  float last_leave_radius = 0.0f;

  friend bool operator==(const ClientImage&, const ClientImage&) = default;
};

}  // namespace sightline
