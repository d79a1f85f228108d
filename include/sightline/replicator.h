// The path from interest sets to packets: priority accumulators, a byte budget per send, paced
// entry of new members, serialize-once payloads, and reliable spawns and despawns over either
// delivery mode (docs/bandwidth.md, docs/protocol.md).
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "sightline/export.h"
#include "sightline/handles.h"
#include "sightline/interest_keys.h"
#include "sightline/log.h"
#include "sightline/protocol.h"
#include "sightline/serialize.h"
#include "sightline/status.h"

namespace sightline {

class World;

/// How members are chosen for updates.
enum class UpdateMode : std::uint8_t {
  /// Priority accumulators under the byte budget: every member's accumulator grows by
  /// its base priority times tick_seconds each send it is not updated, and resets when it is.
  /// Tier and key send rates divide the base priority rather than gating sends.
  priority = 0,
  /// The World's schedule as it is (tiers and key rates as fixed periods): every due update of
  /// a member the client holds is sent, in as many packets as it takes; no update budget.
  fixed_rate = 1,
};

/// What a member's base priority is made of, for the hook.
struct PriorityInputs {
  ClientId client;
  EntityId entity;
  float distance = 0.0f;      ///< From the client's nearest origin to the root's bounding surface.
  float bound_radius = 0.0f;  ///< The root's.
  float speed = 0.0f;         ///< |velocity| of the entity (World::set_velocity), units per second.
  std::uint32_t period = 1;   ///< The slower of its tier's and key's periods (World's schedule).
  bool interacted = false;    ///< Within interaction_ticks of note_interaction.
  /// Replicator's value: priority / period / (1 + distance / distance_scale)
  /// * (1 + bound_radius / size_scale) * (1 + speed / speed_scale) * (interacted ? boost : 1).
  float base = 0.0f;
};

/// Returns the member's base priority per second (>= 0; NaN and negatives count as 0), given
/// the Replicator's own value in inputs.base.
/// Called from send()'s workers, several at once when the World has more than one
/// (WorldDef::threads, WorldDef::enqueue_task): it must only read what other calls share.
using PriorityHook = float (*)(const PriorityInputs& inputs, void* context);

/// Writes (or measures) one entity's state: the game's one serialize function for both parts
/// (serialize.h). Returning false, or leaving the stream failed, skips the record this send and
/// makes send() report the entity and the stream's error. Each entity's part is serialized at
/// most once a send (with ReplicatorDef::share_payloads), from send()'s workers: several calls
/// run at once, for different entities, when the World has more than one worker, so the
/// function must only read what other calls share. A part is serialized when a client's packet
/// first needs it, except where, with share_payloads, the last send wrote at least two update
/// records per entity slot in a world of 16,384 slots or more (and the members are at least the
/// entity slots): then the update part of every entity a client holds is serialized first, in
/// slot order (the reads of the game's state then stream instead of missing the caches),
/// whether or not a packet carries it, and a failure is reported for it all the same.
using EntitySerializer = bool (*)(Stream& stream, EntityId entity, StatePart part, void* context);

/// Where an entity's payload may come from instead of the serializer: bytes another process's
/// serializer wrote (the state of an entity that process owns and this one shows), sent
/// unchanged. Returns the part's payload for this send, or empty to have the serializer write it
/// as without a source. Called where the serializer would be (at most once a send for each
/// entity and part with share_payloads), from send()'s workers, so it must only read what other
/// calls share; the bytes need only last until it returns (they are copied). They may be at most
/// the payload limit of packet_bytes (a longer span fails the record as a failed serializer does,
/// reported by send()), and they name no entity (references are the serializer's alone).
using PayloadSource = std::span<const std::uint8_t> (*)(EntityId entity, StatePart part, void* context);

/// Writes an event's payload (events.h): what a recipient needs to play it, from the EventDef the
/// game emitted (its user_data, its subject). Called once a send for each event of the last tick,
/// on the thread that calls send(), before any client's packets; every recipient gets the same
/// bytes, so the payload may name no entity (a non-null Stream::serialize_entity fails the event:
/// name it as the event's subject, which its class's when_absent governs). Returning false, or
/// leaving the stream failed, drops the event for every client and makes send() report it.
using EventSerializer = bool (*)(Stream& stream, const EventDef& event, void* context);

/// A member whose spawn was sent while it already stood within the promise radius of a client
/// whose entry had caught up (ReplicatorDef::development).
struct PromiseViolation {
  ClientId client;
  EntityId entity;
  float distance = 0.0f;        ///< To the client's nearest origin, at the send.
  float promise_radius = 0.0f;  ///< The client's, at the send.
};

/// How a Replicator sends. Obtain with default_replicator_def(), set the serializer, and change
/// fields; Replicator::create validates it.
struct ReplicatorDef {
  /// Required: the game's state serializer (no default).
  EntitySerializer serialize = nullptr;
  void* serialize_context = nullptr;
  /// Optional: payloads written elsewhere, taken before the serializer (PayloadSource).
  PayloadSource payload_source = nullptr;
  void* payload_source_context = nullptr;
  /// Optional: the game's event payloads. Null writes each event's user_data as its payload (64
  /// bits, low word first: 8 bytes).
  EventSerializer serialize_event = nullptr;
  void* event_context = nullptr;

  Delivery delivery = Delivery::reliable;
  UpdateMode mode = UpdateMode::priority;

  /// Seconds between sends (one send per World tick): the dt of the accumulators. > 0.
  float tick_seconds = 1.0f / 20.0f;
  /// Largest packet, bytes, in [kMinPacketBytes, kMaxPacketBytes]. 1200 keeps a datagram under
  /// common path MTUs; a reliable stream may use more. A state payload may take up to
  /// packet_bytes - 52 bytes, an event's up to packet_bytes - 65.
  std::uint32_t packet_bytes = 1200;
  /// Priority mode: bytes per client per send for updates and despawns, packet headers included.
  /// Despawns always go (they shrink what the client holds); updates fill what is left, highest
  /// accumulator first, skipping one that does not fit for smaller ones. >= packet header size.
  std::uint32_t budget_bytes = 1200;
  /// Bytes of spawn records per client per send: new members enter nearest first within it, so
  /// a join or a long teleport never floods the link. What the client's origins need at once
  /// (the trees of its origins, and bounded entities an origin stands inside) goes regardless.
  /// >= 1.
  std::uint32_t entry_budget_bytes = 32 * 1024;

  /// Priority mode: the filler stops after this many candidates in a row whose update did not
  /// fit what is left of the budget (each costs a payload, serialized once per send and shared).
  /// >= 1.
  std::uint32_t filler_misfits = 16;

  /// Base priority factors (PriorityInputs::base). Each scale is in world units (per second for
  /// speed); 0 means a tenth of the client's space's enter radius.
  float distance_scale = 0.0f;
  float size_scale = 0.0f;
  float speed_scale = 0.0f;
  /// Multiplier for a member the client interacted with (note_interaction), >= 1, for this many
  /// sends.
  float interaction_boost = 4.0f;
  std::uint32_t interaction_sends = 20;
  /// Optional: the game's last word on each member's base priority.
  PriorityHook priority_hook = nullptr;
  void* priority_context = nullptr;

  /// Serialize each entity's payload once per send and share it among every client that sends
  /// it (Unreal's shared serialization). false serializes per client, to measure the saving.
  bool share_payloads = true;
  /// Unreliable delivery: a spawn or despawn not acknowledged this many sends after it was last
  /// sent is sent again, or after 1.25 times the round trip measured from the client's acks
  /// (smoothed, in sends) plus one, when that is longer. >= 1.
  std::uint32_t resend_sends = 4;

  /// Bytes of messages a client may have waiting (queued by send_message and its kin, not yet
  /// written because the budget or the reliable window was full), >= 1. A message that would take
  /// a client past it is dropped for that client and counted (SendStats::messages_dropped).
  std::uint32_t message_queue_bytes = 64 * 1024;

  /// Delta updates: an update may be written against a state of the same entity the client
  /// kept (docs/protocol.md's delta update), which costs a few bytes for a state that changed in
  /// a few places. Reliable delivery: the state kept is the last update sent. Unreliable: the
  /// last one the client confirmed keeping (AckPacket::received); one update at a time is asked
  /// to be kept, and one not confirmed within 3 packets of the client's acks is given up, the
  /// next update then going whole. The serializer is unchanged: deltas are of its bytes.
  bool delta_updates = false;
  /// Delta updates: the largest update state kept, bytes, in [1, packet_bytes - 52]; a larger
  /// one is sent whole (or as a delta) and not kept. Each client holds 2 x this for each member
  /// it was sent an update of.
  std::uint32_t delta_state_bytes = 64;

  /// Development mode: record PromiseViolation. Costs a distance test per spawn.
  bool development = false;
  /// The promise radius as a fraction of the client's enter radius (World::client_radii), in
  /// (0, 1]: 1 / 1.2,
  /// the space's radius (SpaceDef::radius) inside the 1.2x enter radius of its factor form.
  float promise_fraction = 1.0f / 1.2f;
  /// Where send() reports (log.h), after the send: at warning, messages dropped for a full queue
  /// (message_queue_bytes), reliable events dropped for a client that stopped acking, promise
  /// violations (development mode). Each kind is told at its first send, then at most once every
  /// 64 sends with the count since its last report (a stuck client does not flood the log). None
  /// by default.
  LogHook log;
};

/// The defaults above: reliable delivery, priority mode at 20 sends a second, 1200-byte packets
/// and update budget, 32 KiB of spawns a send, shared payloads. No serializer: set one.
[[nodiscard]] SIGHTLINE_API ReplicatorDef default_replicator_def();

/// Totals of one send over every client.
struct SendStats {
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;   ///< Packet bytes, headers included.
  std::uint64_t spawns = 0;  ///< Spawn records sent for the first time.
  std::uint64_t updates = 0;
  std::uint64_t delta_updates = 0;  ///< Updates written as a delta (ReplicatorDef::delta_updates).
  /// Full states sent again because an entity they refer to reached the client (refresh
  /// records, Stream::serialize_entity), for the first time.
  std::uint64_t refreshes = 0;
  std::uint64_t despawns = 0;     ///< Despawn records sent for the first time.
  std::uint64_t events = 0;       ///< Event records sent for the first time.
  std::uint64_t event_bytes = 0;  ///< Bytes of event records, resends included.
  /// Reliable events not sent because the client had kReliableWindow reliable records
  /// unacknowledged (unreliable delivery: a client that stopped acking).
  std::uint64_t events_dropped = 0;
  std::uint64_t messages = 0;          ///< Message records sent for the first time.
  std::uint64_t message_bytes = 0;     ///< Bytes of message records, resends included.
  std::uint64_t messages_waiting = 0;  ///< Messages left in clients' queues after the send.
  /// Messages not queued for a client whose queue was full (ReplicatorDef::message_queue_bytes).
  std::uint64_t messages_dropped = 0;
  std::uint64_t resends = 0;  ///< Unreliable: spawns, despawns, reliable events and messages sent again.
  std::uint64_t updates_skipped = 0;    ///< Priority mode: members left for a later send.
  std::uint64_t pending = 0;            ///< Members still waiting for their spawn, after the send.
  std::uint32_t max_pending = 0;        ///< The largest one client's pending count.
  std::uint64_t spawns_delayed = 0;     ///< Spawns sent at a later send than their entry.
  std::uint64_t spawn_delay_sends = 0;  ///< Sum of those delays, in sends.
  /// The longest any member of any client has gone without a spawn or update, in sends, after
  /// this send (0: every member was sent this send).
  std::uint32_t longest_wait = 0;
  std::uint64_t serialize_calls = 0;   ///< Calls of the serializer (writes and measures).
  std::uint64_t serialized_bytes = 0;  ///< Payload bytes those calls wrote or measured.
  std::uint64_t sourced_payloads = 0;  ///< Payloads taken from ReplicatorDef::payload_source.
  std::uint64_t serialize_errors = 0;
  std::uint64_t promise_violations = 0;
};

/// One client's replication state.
struct ClientSendStats {
  std::uint32_t pending = 0;  ///< Members waiting for their spawn.
  std::uint32_t held = 0;     ///< Members whose spawn was sent.
  bool catching_up = false;   ///< Since a join, a viewer or origin change, until pending is 0.
  std::uint64_t bytes = 0;    ///< Bytes sent to it, all sends.
  std::uint64_t packets = 0;
  std::uint32_t longest_wait = 0;    ///< Longest wait of any of its members after the last send.
  std::uint32_t reliable_next = 0;   ///< Next reliable id it will be given.
  std::uint32_t reliable_acked = 0;  ///< Reliable ids it has acknowledged (unreliable delivery).
  float round_trip_sends = 0.0f;     ///< Smoothed round trip from its acks, in sends (0 before any).
  /// Entity references its members' states named as null that wait for their entity to reach it
  /// (Stream::serialize_entity): a member's state goes again when one does. At most 2 x
  /// kMaxReferences a member and part.
  std::uint32_t references_waiting = 0;
};

class ReplicatorImpl;

/// Turns a World's interest sets into packets, one stream per client.
///
/// Call send() once after every World::tick(), then hand each client its packets(). (A tick
/// without a send loses nothing the client must know: the table follows the World's set, and a
/// member gone without a record of the tick at hand leaves as `left`, or `destroyed` when its
/// entity was destroyed, or was withdrawn and its slot reused by a later tick; only the reasons
/// of the skipped tick are lost.) Under
/// unreliable delivery, feed each client's ack packets to receive_ack(). The Replicator keeps,
/// per client, a table of its World members (sorted by index, so the membership diff is a linear
/// merge) with an accumulator, the send each was last sent at, and whether its spawn has gone:
/// memory proportional to the sets, not the world. A member the World lets go before its spawn
/// went is forgotten without a record.
///
/// Each send writes, per client: reliable records first (resends, then despawns, then spawns in
/// entry order, then refreshes: the full state again of a member whose state named, as null, an
/// entity the client now holds; Stream::serialize_entity), then the events it receives (World::emit_event;
/// after the spawns, so an event names a subject the client already holds), then the messages queued for it,
/// then updates; a member spawned this send gets no update (the spawn carries its full state). Spawns of an
/// attachment tree go parent first. An event whose subject the client's set holds but whose spawn has not
/// gone yet (paced entry) treats the subject as absent, as its class's when_absent says. Despawns and events
/// always go, their bytes counted in the budget before updates fill what is left.
///
/// Memory: after warm-up (stable counts and a steady send) send() performs no heap allocation.
/// The World must outlive the Replicator; one World may feed several Replicators. Thread
/// safety: call one Replicator from one thread at a time, between World ticks. send() spreads
/// its clients over the World's workers (its own threads or the game's task system) when the
/// tick would, and the packets, stats and errors are the same for any number of workers.
class SIGHTLINE_API Replicator {
 public:
  /// Validates `def` (invalid_def naming the field and its value).
  [[nodiscard]] static Result<Replicator> create(World& world, const ReplicatorDef& def);
  Replicator(Replicator&&) noexcept;
  Replicator& operator=(Replicator&&) noexcept;
  Replicator(const Replicator&) = delete;
  Replicator& operator=(const Replicator&) = delete;
  ~Replicator();

  /// Writes this tick's packets for every live client of the World. A serializer failure skips
  /// that record (a spawn stays pending, an update waits) and is reported, naming the failed
  /// entity of lowest index (its full part's failure before its update part's) and its stream's
  /// error, once the rest of the send is done: the same report whatever the thread count.
  Status send();

  /// The client's packets of the last send, in order. Valid until the next send().
  [[nodiscard]] Result<std::span<const std::span<const std::uint8_t>>> packets(ClientId client) const;

  /// Applies an ack packet from the client (protocol.h). Refused, changing nothing: bytes that
  /// do not decode (malformed_packet), an ack of reliable ids never sent (invalid_argument). An
  /// ack older than one already applied changes nothing and is not an error.
  [[nodiscard]] Status receive_ack(ClientId client, std::span<const std::uint8_t> bytes);

  /// Members of the client still waiting for their spawn.
  [[nodiscard]] Result<std::uint32_t> pending(ClientId client) const;
  [[nodiscard]] Result<ClientSendStats> client_stats(ClientId client) const;

  /// Queues a message for the client (a system message, a state change it must not miss): the
  /// game's bytes, reliable and in order with its spawns, despawns and reliable events. It is
  /// written at the next send() after the client's events, while the budget lasts (the first
  /// message of a send always goes), and waits in order otherwise. Refused, queuing nothing:
  /// a client that is not live (stale_handle), or a payload larger than one packet carries
  /// (packet_bytes - 36 bytes; invalid_argument naming both sizes).
  [[nodiscard]] Status send_message(ClientId client, std::span<const std::uint8_t> payload);
  /// Queues a message for every client live at the next send() whose subscriptions admit `key`
  /// (a team channel: a User or Area key; Global reaches every client). Refused as send_message
  /// for its size, and for a key above kMaxInterestKey (invalid_argument).
  [[nodiscard]] Status send_message_to_key(InterestKey key, std::span<const std::uint8_t> payload);
  /// Queues a message for every client whose viewer is in `space` at the next send(). Refused as
  /// send_message for its size, and for a space that is not live (stale_handle).
  [[nodiscard]] Status send_message_to_space(SpaceId space, std::span<const std::uint8_t> payload);

  /// The entity's priority (its class's: a player character higher than a prop), >= 0 and
  /// finite, 1 by default. A priority of 0 means the entity is only ever sent whole on entry.
  [[nodiscard]] Status set_priority(EntityId entity, float priority);
  [[nodiscard]] Result<float> priority(EntityId entity) const;
  /// The client interacted with the entity (shot it, talked to it): its base priority is raised
  /// by interaction_boost for interaction_sends sends. Not a member: nothing happens.
  [[nodiscard]] Status note_interaction(ClientId client, EntityId entity);

  /// Totals of the last send.
  [[nodiscard]] const SendStats& stats() const noexcept;
  /// Development mode: the violations of the last send. Valid until the next send().
  [[nodiscard]] std::span<const PromiseViolation> promise_violations() const noexcept;
  /// Sends made so far.
  [[nodiscard]] std::uint64_t send_count() const noexcept;

 private:
  explicit Replicator(std::unique_ptr<ReplicatorImpl> impl) noexcept;
  std::unique_ptr<ReplicatorImpl> impl_;
};

}  // namespace sightline
