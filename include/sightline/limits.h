// Every limit of Sightline in one place: the largest and smallest values its calls and defs
// accept, and the fixed capacities of its formats. A call or def outside one is refused with a
// Status naming the field and the value; none of them is a target or a default.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sightline {

// --- World (world_def.h, world.h) -------------------------------------------------------

/// Smallest accepted enter radius, world units. Its square stays a normal float.
inline constexpr float kMinRadius = 1.0e-6f;
/// Largest accepted radius or cell size, world units. Squares of it stay finite in float.
inline constexpr float kMaxRadius = 1.0e9f;
/// Largest accepted |x| or |z| of a position, and |v| of a velocity (world units per second).
inline constexpr float kMaxCoordinate = 1.0e15f;
/// Most threads a World may use (WorldDef::threads), the calling thread included.
inline constexpr std::uint32_t kMaxThreads = 64;
/// Most origins a client may have besides its viewer (World::add_origin).
inline constexpr std::uint32_t kMaxOrigins = 15;
/// Deepest attachment tree: a root is depth 0, its children depth 1 (World::attach).
inline constexpr std::uint32_t kMaxAttachmentDepth = 15;
/// Longest update period, in ticks: of a distance tier (DistanceTier::period) and of an interest
/// key's send rate (KeySubscription::send_rate).
inline constexpr std::uint32_t kMaxPeriod = 65535;
/// Bounds of an entity's radius scale (EntityDef::radius_scale, World::set_radius_scale).
inline constexpr float kMinRadiusScale = 0.0625f;
inline constexpr float kMaxRadiusScale = 16.0f;

// --- Spaces (space_def.h) ---------------------------------------------------------------

/// Bounds of SpaceDef::radius, the radius of the factor form, world units (metres in a world
/// measured in metres).
inline constexpr float kLeastInterestRadius = 8.0f;
inline constexpr float kMostInterestRadius = 1000.0f;
/// Largest accepted SpaceDef::enter_factor and leave_factor.
inline constexpr float kMaxRadiusFactor = 16.0f;

// --- Sight (occlusion.h) ----------------------------------------------------------------

/// Longest accepted look-ahead, seconds (World::set_look_ahead).
inline constexpr float kMaxLookAhead = 10.0f;
/// Most accepted SpaceDef::visibility_hold_ticks, ticks.
inline constexpr std::uint32_t kMaxVisibilityHoldTicks = 1u << 20;

// --- Interest keys (interest_keys.h) ----------------------------------------------------

/// Largest application key value: 63 bits.
inline constexpr std::uint64_t kMaxInterestKey = (std::uint64_t{1} << 63) - 1;

// --- Events (events.h) ------------------------------------------------------------------

/// Most events one tick delivers: World::emit_event refuses the next one until tick() runs.
/// A bound against a runaway emitter, not a target; each queued event costs sizeof(EventDef).
inline constexpr std::uint32_t kMaxEventsPerTick = 1u << 20;

// --- The wire (protocol.h, replicator.h, client_mirror.h) -------------------------------

/// Largest packet a Replicator writes, bytes (ReplicatorDef::packet_bytes).
inline constexpr std::uint32_t kMaxPacketBytes = 65535;
/// The smallest ReplicatorDef::packet_bytes: a header, the largest framing and a few bytes of
/// state (28) or of an event (15).
inline constexpr std::uint32_t kMinPacketBytes = 80;
/// Most records in one state packet (the count is a u16).
inline constexpr std::size_t kMaxRecordsPerPacket = 65535;
/// Unreliable delivery: a client buffers spawns and despawns that arrive ahead of a missing one
/// when their reliable id is below next_expected + kReliableWindow, and the server never has
/// more than this many of them unacknowledged.
inline constexpr std::uint32_t kReliableWindow = 1024;
/// Most entity references one state payload may carry (Stream::serialize_entity): a bound on
/// what a Replicator tracks per member for references to resolve.
inline constexpr std::uint32_t kMaxReferences = 16;
/// Most snapshots a mirror keeps per held entity (MirrorDef::history).
inline constexpr std::uint32_t kMaxHistory = 16;

}  // namespace sightline
