// The client's side of the wire: applies state packets to a table of held entities and tells
// the game what entered, changed and left.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "sightline/export.h"
#include "sightline/handles.h"
#include "sightline/limits.h"
#include "sightline/protocol.h"
#include "sightline/serialize.h"
#include "sightline/status.h"
#include "sightline/stream.h"

namespace sightline {

/// Checks one payload the way the game will read it (typically its serialize function run on a
/// Stream::reader, with rest_is_zero()). Returning false rejects the whole packet as malformed.
using PayloadCheck = bool (*)(EntityId entity, StatePart part, std::span<const std::uint8_t> payload,
                              void* context);

/// Checks one event's payload the way the game will read it. Returning false rejects the whole
/// packet as malformed.
using EventPayloadCheck = bool (*)(std::uint32_t event_class, std::span<const std::uint8_t> payload,
                                   void* context);

/// How a ClientMirror holds what it receives. Obtain with default_mirror_def() and change fields;
/// ClientMirror::create validates it.
struct MirrorDef {
  /// Must match the server's Replicator for this client.
  Delivery delivery = Delivery::reliable;
  /// Snapshots kept per held entity for interpolation, 1..kMaxHistory. A spawn restarts the
  /// history with its full state.
  std::uint32_t history = 4;
  /// Most entities held at once, >= 1: a spawn beyond it is an anomaly (too_many) and not applied,
  /// so hostile bytes cannot grow the table without bound.
  std::uint32_t max_entities = 1u << 20;
  /// Optional payload check (null: payloads are not looked into).
  PayloadCheck check = nullptr;
  void* check_context = nullptr;
  /// Optional check of events' payloads (null: not looked into).
  EventPayloadCheck check_event = nullptr;
  void* check_event_context = nullptr;
};

/// The defaults above: reliable delivery, 4 snapshots per entity, at most 2^20 entities held,
/// no payload check.
[[nodiscard]] SIGHTLINE_API MirrorDef default_mirror_def();

/// How an entity left the mirror.
enum class ExitKind : std::uint8_t {
  leave = 0,    ///< It is still in the world, just no longer sent (do not play a death).
  destroy = 1,  ///< It was destroyed (despawn reason `destroyed`).
};

/// A well-formed packet that disagrees with what the mirror holds. The record it names is not
/// applied; the rest of the packet is.
enum class AnomalyKind : std::uint8_t {
  update_unknown = 0,       ///< An update for an id the mirror does not hold, where it should.
  spawn_held = 1,           ///< A spawn of an id already held.
  despawn_unknown = 2,      ///< A despawn of an id not held.
  generation_mismatch = 3,  ///< A record names a held index with another generation.
  bad_sequence = 4,         ///< Reliable delivery: a packet's sequence is not the one after the last.
  bad_reliable_id = 5,      ///< A reliable id out of order (reliable delivery) or beyond the window.
  delivery_mismatch = 6,    ///< The packet's delivery flag is not the mirror's (the packet is skipped).
  too_many = 7,             ///< A spawn beyond MirrorDef::max_entities.
  /// A delta update written against a state the mirror did not keep (or one shorter than the
  /// delta needs). The update is not applied, and its packet is left out of ack().received, so a
  /// server that kept it as a baseline drops that baseline and sends the next update whole.
  baseline_missing = 8,
  /// A refresh of an id the mirror does not hold.
  refresh_unknown = 9,
};

[[nodiscard]] SIGHTLINE_API const char* anomaly_kind_name(AnomalyKind kind) noexcept;

struct Anomaly {
  AnomalyKind kind = AnomalyKind::update_unknown;
  EntityId entity;             ///< Null for bad_sequence and delivery_mismatch.
  std::uint32_t sequence = 0;  ///< Of the packet.
  std::uint32_t tick = 0;      ///< Of the packet.
};

/// An event as a mirror hands it to the game (World::emit_event on the server).
struct ReceivedEvent {
  std::uint32_t event_class = 0;  ///< The index of its EventClassId on the server.
  float x = 0.0f;                 ///< Where it happened, world units.
  float z = 0.0f;
  /// Its subject, or null: none, or one the client does not hold and the class says null_subject.
  EntityId subject;
  /// Whether this mirror holds the subject as the event applies. The client's own viewer is
  /// never sent to it, so an event about the player reads false here. A class that sends
  /// subjects as they are may name one it does not hold; under unreliable delivery an
  /// unreliable event may also overtake its subject's spawn or trail its despawn.
  bool subject_held = false;
  bool reliable = false;                  ///< Sent reliably (its class's EventClassDef::reliable).
  std::span<const std::uint8_t> payload;  ///< The game's event payload; valid during the call.
  std::uint32_t tick = 0;                 ///< The tick it happened at (the server's, low 32 bits).
};

/// What the game hears while a packet is applied, in the packet's order for reliable delivery
/// (spawns, despawns, refreshes and reliable events in reliable-id order, then the other events, then
/// updates, for unreliable).
class SIGHTLINE_API MirrorListener {
 public:
  virtual ~MirrorListener() = default;
  /// The entity arrived with its full state: restart its interpolation. `created`: it was
  /// created at the tick it joined the client's set, so play its appearance (a spawn effect);
  /// false: it stood there all along and came into view, so play nothing.
  virtual void on_enter(EntityId entity, SpawnReason reason, bool created,
                        std::span<const std::uint8_t> full_state, std::uint32_t tick);
  virtual void on_update(EntityId entity, std::span<const std::uint8_t> update_state, std::uint32_t tick);
  /// The full state again of a held entity, sent because an entity its state refers to has
  /// just arrived (Stream::serialize_entity): read it as a spawn's state, without restarting
  /// interpolation or playing anything. Under unreliable delivery its tick may be older than the
  /// entity's last state (a late copy): the game hears it for its references, and the history
  /// (ClientMirror::history) keeps only states in tick order, so it is not added there.
  virtual void on_refresh(EntityId entity, std::span<const std::uint8_t> full_state, std::uint32_t tick);
  virtual void on_exit(EntityId entity, ExitKind kind, DespawnReason reason);
  /// An event the client receives: each once (a duplicate or a resend is not heard again).
  virtual void on_event(const ReceivedEvent& event);
  /// A message (Replicator::send_message and its kin): each once, in the order the server
  /// queued them for this client. `payload` is valid during the call; `tick` is the packet's.
  virtual void on_message(std::span<const std::uint8_t> payload, std::uint32_t tick);
};

/// One received state of a held entity (a spawn's or refresh's full part, or an update's).
struct Snapshot {
  std::uint32_t tick = 0;
  StatePart part = StatePart::full;
  std::span<const std::uint8_t> payload;  ///< Valid until the next receive().
};

/// Totals since the mirror was made.
struct MirrorStats {
  std::uint64_t packets = 0;     ///< Accepted (well-formed) packets.
  std::uint64_t rejected = 0;    ///< Malformed packets refused.
  std::uint64_t duplicates = 0;  ///< Unreliable: packets whose sequence was already received.
  std::uint64_t enters = 0;
  std::uint64_t updates = 0;
  std::uint64_t exits = 0;
  std::uint64_t events = 0;    ///< Events heard.
  std::uint64_t messages = 0;  ///< Messages received.
  /// Unreliable: events of a packet older than the last 1024 sequences, not heard (a copy of
  /// such a packet cannot be told from the first).
  std::uint64_t stale_events = 0;
  std::uint64_t stale_updates = 0;  ///< Unreliable: updates dropped (not held yet or any more, or older).
  std::uint64_t deltas = 0;         ///< Updates applied that were rebuilt from a delta.
  std::uint64_t refreshes = 0;      ///< Refreshes applied (full states sent again).
  std::uint64_t reliable_duplicates = 0;  ///< Unreliable: spawns and despawns received again.
  std::uint64_t reliable_buffered = 0;    ///< Unreliable: spawns and despawns that waited for a missing one.
  std::uint64_t anomalies = 0;
};

class MirrorImpl;

/// Applies one client's state packets (docs/protocol.md).
///
/// receive() decodes and checks the whole packet before it changes anything: bytes that do not
/// decode, a packet longer than kMaxPacketBytes (no Replicator writes one), or a payload
/// MirrorDef::check refuses, are rejected with malformed_packet naming the byte or entity and the
/// reason, and the mirror is exactly as it was. A well-formed packet is
/// then applied; records that contradict the table are skipped and reported as anomalies.
///
/// Under unreliable delivery, spawns and despawns are applied once each, in reliable-id order
/// (those ahead of a missing one wait, up to kReliableWindow); an update is applied only to an
/// entity held with that exact id and only when it is newer than the entity's last state;
/// otherwise it is dropped. An update for an id not held is an anomaly only when the mirror has
/// applied exactly the reliable records the packet says came before it (then it should hold it).
/// A packet whose sequence is among the last 1024 received is counted in stats().duplicates and
/// skipped; an older copy goes through again, which is harmless (applying a packet a second time
/// changes nothing: its reliable records dedupe by id, its updates by tick). Ticks are u32,
/// assumed not to wrap. Under reliable delivery records apply in packet order, with no tick test.
///
/// Delta updates (ReplicatorDef::delta_updates): the mirror keeps the two newest states each held
/// entity's updates asked it to keep, rebuilds a delta update from the one it names, and hands
/// the game (check, on_update, history) the rebuilt state, never the delta.
///
/// Memory is bounded by the def: at most max_entities held, each with at most `history` payload
/// copies and two kept states, and at most kReliableWindow waiting spawns and despawns. Not thread-safe: one
/// thread at a time, or const calls only while no receive() runs. Movable; a moved-from mirror may only be
/// assigned to or destroyed.
class SIGHTLINE_API ClientMirror {
 public:
  [[nodiscard]] static Result<ClientMirror> create(const MirrorDef& def);
  ClientMirror(ClientMirror&&) noexcept;
  ClientMirror& operator=(ClientMirror&&) noexcept;
  ClientMirror(const ClientMirror&) = delete;
  ClientMirror& operator=(const ClientMirror&) = delete;
  ~ClientMirror();

  /// Applies one state packet; `listener` may be null and is called during the call only.
  /// `bytes` need not outlive the call. On malformed_packet the mirror is as it was, except that
  /// stats().rejected counts it and anomalies() is empty.
  [[nodiscard]] Status receive(std::span<const std::uint8_t> bytes, MirrorListener* listener = nullptr);

  [[nodiscard]] bool holds(EntityId entity) const noexcept;
  /// An entity reference read from a payload (Stream::serialize_entity), as the client should
  /// use it: the entity where the mirror holds it, else null. The server writes a reference only
  /// to an entity it has sent the client, and sends the referring state again once a null one can
  /// resolve; this answers null for one the client has let go since (or, unreliable delivery, not
  /// received yet). The client's own viewer, which the server names but never sends, reads null
  /// here: compare a reference with it first.
  [[nodiscard]] EntityId resolve(EntityId reference) const noexcept {
    return holds(reference) ? reference : EntityId{};
  }
  [[nodiscard]] std::size_t held_count() const noexcept;
  /// Every held entity, sorted by index. Allocates.
  [[nodiscard]] std::vector<EntityId> held() const;
  /// The i-th held entity, i < held_count(), for walking them every frame without allocating:
  /// in no particular order, which receive() changes. Null for i >= held_count().
  [[nodiscard]] EntityId held_at(std::size_t i) const noexcept;
  /// The entity's snapshots, oldest first (a spawn starts it), at most MirrorDef::history.
  /// Allocates. stale_handle when the entity is not held.
  [[nodiscard]] Result<std::vector<Snapshot>> history(EntityId entity) const;
  /// One of the entity's snapshots without allocating: `back` 0 is the latest, 1 the one before
  /// it, up to the number history() returns less one. Nothing when the entity is not held or
  /// has no snapshot that far back. Its payload is valid until the next receive().
  [[nodiscard]] std::optional<Snapshot> snapshot(EntityId entity, std::uint32_t back = 0) const noexcept;
  /// The latest tick applied to the entity. stale_handle when not held.
  [[nodiscard]] Result<std::uint32_t> state_tick(EntityId entity) const;

  /// What the client's interest promises it, from the newest packet received: whether its space
  /// culls, the radius within which every entity is held once `pending` is 0 (a game's search for
  /// the nearest enemy is complete within it), and `pending`, the entities still on their way
  /// (a "loading the area: 12 to go" line): the server's count after
  /// that packet's send plus the spawns and despawns the server had assigned by then that this
  /// mirror has not applied yet. Under reliable delivery it equals the server's
  /// Replicator::pending(client) once the send's last packet is applied; under unreliable
  /// delivery it reaches 0 once that is 0 and every reliable record has arrived. Before any
  /// packet: not culling, radius 0, pending 0 (stats().packets is 0).
  [[nodiscard]] InterestStatus interest() const noexcept;
  /// What to send back to the server (required under unreliable delivery): the highest sequence
  /// received (0 before any), the next reliable id expected, and which of the 32 packets up to
  /// the highest arrived with every state the server asked it to keep kept.
  [[nodiscard]] AckPacket ack() const noexcept;
  /// The anomalies of the last receive(). Valid until the next one.
  [[nodiscard]] std::span<const Anomaly> anomalies() const noexcept;
  [[nodiscard]] const MirrorStats& stats() const noexcept;

 private:
  explicit ClientMirror(std::unique_ptr<MirrorImpl> impl) noexcept;
  std::unique_ptr<MirrorImpl> impl_;
};

}  // namespace sightline
