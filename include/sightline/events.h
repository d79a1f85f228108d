// One-off events (a gunshot, an explosion, a footstep): not entities, but messages a tick delivers
// to the clients within the radius of the event's class. See World::emit_event and docs/events.md.
#pragma once

#include <cstdint>

#include "sightline/handles.h"
#include "sightline/limits.h"

namespace sightline {

/// What a recipient gets when the event's subject is an entity it does not hold after the tick
/// (not in its interest set and not its viewer), or an entity destroyed since the emit.
enum class AbsentSubject : std::uint8_t {
  /// The recipient gets nothing: nothing about an entity it does not hold reaches it.
  drop = 0,
  /// The recipient gets the event with a null subject: it hears the shot, not who fired it.
  null_subject = 1,
  /// The recipient gets the event with the subject's handle. The client has no state for that
  /// entity; a handle destroyed since the emit is stale, and every World call refuses it.
  send_as_is = 2,
};

/// A kind of event (a gunshot, a footstep), created once with World::create_event_class.
struct EventClassDef {
  /// Hearing radius, world units, in [kMinRadius, kMaxRadius]; no default: 0 is refused. A client
  /// receives an event of this class when one of its origins is within it, by the float test
  /// dx*dx + dz*dz <= radius*radius (d == radius is inside). Usually larger than the enter
  /// radius: a gunshot is heard farther away than the shooter is seen. The space's culling
  /// setting and radii play no part. Cost: recipients grow with radius squared.
  float radius = 0.0f;
  /// The policy for a recipient that does not hold the subject. The default, drop, leaks
  /// nothing; a sound heard beyond sight wants null_subject.
  AbsentSubject when_absent = AbsentSubject::drop;
  /// How a Replicator sends it: true resends it until the client acknowledges it and applies it
  /// in order with spawns and despawns (a death, a pickup: what must not be lost); false (the
  /// default) sends it once (a footstep: late is worse than never). Under reliable delivery
  /// both arrive, in order.
  bool reliable = false;
};

/// An event class of a World. Classes live as long as their World (there is no destroy), so a
/// handle the World made is never stale; a null handle, or one it did not make, is refused.
/// A value-initialised EventClassId is null.
struct EventClassId {
  std::uint32_t index = 0;       ///< Slot in the world's class table, 0-based.
  std::uint32_t generation = 0;  ///< 0 means null.

  [[nodiscard]] constexpr bool is_null() const noexcept { return generation == 0; }
  friend constexpr bool operator==(EventClassId, EventClassId) noexcept = default;
};

/// One event, as passed to World::emit_event and as World::events() returns it.
struct EventDef {
  EventClassId event_class;  ///< Required.
  float x = 0.0f;            ///< World units; finite, |x| <= kMaxCoordinate.
  float z = 0.0f;            ///< World units; finite, |z| <= kMaxCoordinate.
  /// The space it happens in: only clients of this space may receive it. Null means the default
  /// space; World::events() returns the space resolved.
  SpaceId space{};
  /// The entity it is about (the shooter, the thing hit), or null. A recipient that does not hold
  /// it gets what the class's when_absent says.
  EntityId subject{};
  /// The game's own payload (a sound id, an index into its own table), passed through untouched.
  std::uint64_t user_data = 0;
};

/// One event delivered to one client (ClientStream::events).
struct EventRecord {
  std::uint32_t event = 0;  ///< Index into World::events() of the same tick.
  /// The event's subject, or null: null when the event has none, or when the client does not
  /// hold it and the class says null_subject.
  EntityId subject{};
};

}  // namespace sightline
