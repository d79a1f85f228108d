/* Sightline's C API: the World, the Replicator and the ClientMirror behind opaque handles, for
 * C programs and for bindings (Python, C#, Go, WebAssembly) that call C.
 *
 * Conventions:
 * - Every call that can be refused returns an sl_status: SL_OK (0), or a code with a message
 *   naming the field, handle and value, read with sl_last_error() on the same thread. A refused
 *   call changes nothing, except sl_replicator_send, which reports a serializer's failure after
 *   the send (the other records went). No C++ exception crosses this API: one that would (memory
 *   exhausted) becomes SL_ERR_OUT_OF_MEMORY or SL_ERR_INTERNAL (the WebAssembly build, compiled
 *   without exceptions, aborts instead). Callbacks (a serializer, a listener) must not unwind
 *   (throw, panic, longjmp) through the library: a binding catches what its language raises.
 * - Entities and clients are 64-bit values: the slot index in the low 32 bits, the generation in
 *   the high 32. 0 is null; a destroyed handle stays refused (SL_ERR_STALE_HANDLE) after its slot
 *   is reused.
 * - Lists are copied into the caller's array: pass `capacity` elements at `out`; the call stores
 *   how many there are in `*count` and copies min(count, capacity). With capacity 0, out may be
 *   NULL: the call only counts. Packets are read in place: their bytes stay valid until the next
 *   send or until the Replicator is destroyed.
 * - Objects are used from one thread at a time. A Replicator keeps a pointer to its World: destroy
 *   it first.
 * - Units are world units (floats, finite, |x| <= 1e15, the C++ API's kMaxCoordinate) and
 *   bytes. Defaults and limits are the C++ API's (world_def.h, replicator.h, client_mirror.h).
 */
#ifndef SIGHTLINE_SIGHTLINE_C_H
#define SIGHTLINE_SIGHTLINE_C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define SL_API __declspec(dllexport)
#elif defined(__EMSCRIPTEN__)
#define SL_API __attribute__((used, visibility("default"))) /* exported from the WebAssembly module */
#elif defined(__GNUC__) || defined(__clang__)
#define SL_API __attribute__((visibility("default")))
#else
#define SL_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* --- Status ------------------------------------------------------------------------------ */

typedef int32_t sl_status;
enum {
  SL_OK = 0,
  SL_ERR_INVALID_DEF = 1,         /* a def field is out of range */
  SL_ERR_INVALID_ARGUMENT = 2,    /* an argument is out of range (a NULL pointer included) */
  SL_ERR_NULL_HANDLE = 3,         /* a handle with generation 0 */
  SL_ERR_STALE_HANDLE = 4,        /* the handle's slot was destroyed or reused */
  SL_ERR_NON_FINITE_POSITION = 5, /* NaN, infinite or beyond the largest coordinate */
  SL_ERR_ENTITY_IS_VIEWER = 6,    /* the entity is a client's viewer */
  SL_ERR_MALFORMED_PACKET = 7,    /* bytes from the network do not decode */
  SL_ERR_OUT_OF_MEMORY = 100,
  SL_ERR_INTERNAL = 101
};

/* The message of the last refused call on this thread ("" when none has been refused). Valid
 * until the next refused call on this thread. */
SL_API const char* sl_last_error(void);
/* A status code's stable name ("stale_handle"; "unknown" outside the list). */
SL_API const char* sl_status_name(sl_status status);
/* "MAJOR.MINOR.PATCH" of the library. */
SL_API const char* sl_version(void);

/* --- Handles ----------------------------------------------------------------------------- */

typedef uint64_t sl_entity;
typedef uint64_t sl_client;
#define SL_NULL_HANDLE ((uint64_t)0)
#define SL_HANDLE_INDEX(h) ((uint32_t)((h)&0xffffffffu))
#define SL_HANDLE_GENERATION(h) ((uint32_t)((h) >> 32))

/* --- World ------------------------------------------------------------------------------- */

typedef struct sl_world sl_world;

typedef struct sl_world_def {
  float enter_radius;       /* world units, > 0; default 1.6 */
  float leave_radius;       /* >= enter_radius; default 1.6 */
  float cell_size;          /* the grid's cell; 0 (default) uses enter_radius */
  uint32_t threads;         /* worker threads for the tick and the send, calling thread included; 1 */
  uint32_t crowd_cap;       /* most entities held by distance per client; 0 (default) = no cap */
  uint32_t entity_capacity; /* room reserved up front; 0 (default) grows as needed */
  uint32_t client_capacity;
  uint8_t order_key; /* what ranks entities: 0 slot (default), 1 external (every entity then needs an
                        external_id); WorldDef::order_key */
} sl_world_def;

typedef struct sl_entity_def {
  float x; /* default 0 */
  float z;
  float bound_radius;   /* radius of its shape, >= 0; default 0 */
  float radius_scale;   /* factor on clients' radii for it, in [1/16, 16]; default 1 */
  bool always_relevant; /* held by every client; default false */
  bool presenter;       /* held by every client of its space; default false */
  uint64_t external_id; /* the game's id for it, unique among live entities; 0 (default) none */
  bool created;         /* its first spawns say created; false for one that existed elsewhere;
                           default true */
} sl_entity_def;

typedef struct sl_tick_stats {
  uint64_t tick; /* index of the tick just run; the first is 0 */
  uint64_t spawns;
  uint64_t updates;
  uint64_t despawns;
  uint64_t members; /* the sum of the interest sets' sizes after the tick */
} sl_tick_stats;

/* Spawn reasons (as the C++ SpawnReason): near 0, always 1, key 2, owner 3, origin 4,
 * attached 5, teleport 6, presenter 7, unculled 8. */
typedef struct sl_spawn {
  sl_entity entity;
  uint8_t reason;
  bool created; /* created since the previous tick: play its appearance */
} sl_spawn;

/* Despawn reasons (as the C++ DespawnReason): left 0, destroyed 1, key_removed 2,
 * space_changed 3, culling_switched 4, hidden 5. */
typedef struct sl_despawn {
  sl_entity entity;
  uint8_t reason;
} sl_despawn;

/* The answer to "why does this client hold (or not hold) this entity?": the rule is the C++
 * Rule's value, sl_rule_name() its name ("near", "within_leave", "out_of_range", ...). */
typedef struct sl_why {
  bool held;
  uint8_t rule;
  sl_entity root; /* the root of its attachment tree, whose rule decided */
} sl_why;

SL_API void sl_world_def_default(sl_world_def* def);
SL_API void sl_entity_def_default(sl_entity_def* def);
SL_API const char* sl_spawn_reason_name(uint8_t reason);
SL_API const char* sl_despawn_reason_name(uint8_t reason);
SL_API const char* sl_rule_name(uint8_t rule);

SL_API sl_status sl_world_create(const sl_world_def* def, sl_world** out);
SL_API void sl_world_destroy(sl_world* world); /* NULL and a replay's world are ignored */

SL_API sl_status sl_world_create_entity(sl_world* world, const sl_entity_def* def, sl_entity* out);
SL_API sl_status sl_world_destroy_entity(sl_world* world, sl_entity entity);
/* As destroy (refused with SL_ERR_ENTITY_IS_VIEWER, SL_ERR_STALE_HANDLE, SL_ERR_NULL_HANDLE the
 * same way), but holders despawn with reason left (World::withdraw_entity). */
SL_API sl_status sl_world_withdraw_entity(sl_world* world, sl_entity entity);
/* The entity's external id (0 for none) into *out. */
SL_API sl_status sl_world_external_id(const sl_world* world, sl_entity entity, uint64_t* out);
/* The live entity holding external id `external_id`; SL_NULL_HANDLE when none does (and for 0). */
SL_API sl_entity sl_world_find_external(const sl_world* world, uint64_t external_id);
SL_API sl_status sl_world_set_position(sl_world* world, sl_entity entity, float x, float z);
/* Many at once: entities[i] moves to (xs[i], zs[i]). All are checked first; one bad entry
 * refuses the whole call, naming its place. */
SL_API sl_status sl_world_set_positions(sl_world* world, const sl_entity* entities, const float* xs,
                                        const float* zs, size_t count);
SL_API sl_status sl_world_position(const sl_world* world, sl_entity entity, float* x, float* z);
/* A jump: members holding it are updated at once, newcomers spawn with reason teleport. */
SL_API sl_status sl_world_teleport(sl_world* world, sl_entity entity, float x, float z);
SL_API sl_status sl_world_set_velocity(sl_world* world, sl_entity entity, float vx, float vz);
SL_API sl_status sl_world_set_always_relevant(sl_world* world, sl_entity entity, bool always_relevant);
SL_API sl_status sl_world_set_bound_radius(sl_world* world, sl_entity entity, float radius);
SL_API sl_status sl_world_attach(sl_world* world, sl_entity child, sl_entity parent);
SL_API sl_status sl_world_detach(sl_world* world, sl_entity child);
SL_API bool sl_world_entity_valid(const sl_world* world, sl_entity entity);
SL_API uint32_t sl_world_entity_count(const sl_world* world);

SL_API sl_status sl_world_create_client(sl_world* world, sl_entity viewer, sl_client* out);
SL_API sl_status sl_world_destroy_client(sl_world* world, sl_client client);
SL_API sl_status sl_world_set_viewer(sl_world* world, sl_client client, sl_entity viewer);
SL_API sl_status sl_world_add_origin(sl_world* world, sl_client client, sl_entity origin);
SL_API sl_status sl_world_remove_origin(sl_world* world, sl_client client, sl_entity origin);
SL_API sl_status sl_world_set_owner(sl_world* world, sl_entity entity, sl_client client);
SL_API sl_status sl_world_clear_owner(sl_world* world, sl_entity entity);
/* The client's own radii (0 for leave keeps its space's proportion), from the next tick. */
SL_API sl_status sl_world_set_view_radius(sl_world* world, sl_client client, float enter_radius,
                                          float leave_radius);
SL_API bool sl_world_client_valid(const sl_world* world, sl_client client);
SL_API uint32_t sl_world_client_count(const sl_world* world);

/* Runs one tick; `stats` may be NULL. */
SL_API sl_status sl_world_tick(sl_world* world, sl_tick_stats* stats);
SL_API uint64_t sl_world_tick_count(const sl_world* world);

/* The last tick's results for one client (see the conventions on lists). */
SL_API sl_status sl_world_interest_set(const sl_world* world, sl_client client, sl_entity* out,
                                       size_t capacity, size_t* count);
SL_API sl_status sl_world_spawns(const sl_world* world, sl_client client, sl_spawn* out, size_t capacity,
                                 size_t* count);
SL_API sl_status sl_world_updates(const sl_world* world, sl_client client, sl_entity* out, size_t capacity,
                                  size_t* count);
SL_API sl_status sl_world_despawns(const sl_world* world, sl_client client, sl_despawn* out, size_t capacity,
                                   size_t* count);
SL_API sl_status sl_world_why(const sl_world* world, sl_client client, sl_entity entity, sl_why* out);

/* --- History, recording and replay (recording.h, docs/recording.md) ---------------------- */

/* One transition a client's history keeps. */
typedef struct sl_history_entry {
  uint64_t tick; /* the tick of the record */
  sl_entity entity;
  bool spawned;    /* true: it entered the set; false: it left */
  uint8_t reason;  /* the spawn reason when spawned, else the despawn reason */
  float distance;  /* world units from the client's nearest origin; INFINITY when none in its space */
  bool rule_known; /* false for an entity destroyed or withdrawn at that tick */
  uint8_t rule;    /* why()'s rule right after that tick, when known */
} sl_history_entry;

/* The client keeps its last `capacity` transitions (0 switches it off; at most 65536); a new
 * capacity starts it afresh. */
SL_API sl_status sl_world_set_history_capacity(sl_world* world, sl_client client, uint32_t capacity);
/* The client's kept transitions, oldest first: of `entity`, or of every entity with
 * SL_NULL_HANDLE (see the conventions on lists). */
SL_API sl_status sl_world_history(const sl_world* world, sl_client client, sl_entity entity,
                                  sl_history_entry* out, size_t capacity, size_t* count);

/* Receives the next bytes of a recording, valid during the call; see WorldDef::recording. It
 * must not call back into the world. */
typedef void (*sl_recording_fn)(void* context, const uint8_t* bytes, size_t size);
/* sl_world_create, and the world records every call that changed it and every tick through
 * `recording` (with `context`, which must outlive the world: destroying it writes the rest). */
SL_API sl_status sl_world_create_recording(const sl_world_def* def, sl_recording_fn recording, void* context,
                                           sl_world** out);

typedef struct sl_replay sl_replay;

typedef struct sl_replay_def {
  uint32_t threads;          /* 0 (default): as recorded */
  uint32_t history_capacity; /* each client the replay creates keeps this many transitions; 0 */
  uint32_t max_grid_cells;   /* for a file not trusted: bounds on recorded numbers; 0 keeps them */
  uint32_t max_history_capacity;
} sl_replay_def;

SL_API void sl_replay_def_default(sl_replay_def* def);
/* Reads a recording's header and makes its world (the bytes are copied). */
SL_API sl_status sl_replay_open(const uint8_t* bytes, size_t size, const sl_replay_def* def, sl_replay** out);
SL_API void sl_replay_destroy(sl_replay* replay); /* NULL is ignored */
/* Applies the recorded calls up to the next tick and runs it; `stats` may be NULL. An error names
 * the byte and the call; after one, or once done, every call is refused. */
SL_API sl_status sl_replay_next_tick(sl_replay* replay, sl_tick_stats* stats);
/* True when no tick is left (or after an error). */
SL_API bool sl_replay_done(const sl_replay* replay);
/* The replay's world, for the sl_world queries (interest set, records, why, history); valid
 * until sl_replay_destroy. It is read-only: a call that would change it is refused
 * (SL_ERR_INVALID_ARGUMENT), and sl_world_destroy ignores it. */
SL_API const sl_world* sl_replay_world(const sl_replay* replay);

/* --- Payloads: the game's state, written and read bit by bit ---------------------------- */

/* A stream writes (inside a serializer), measures, or reads (sl_stream_reader_create). Each
 * sl_stream_* call writes *value, or reads into it; false once the stream has failed (out of
 * room, a value out of its range), and every later call is false too. */
typedef struct sl_stream sl_stream;

SL_API bool sl_stream_bits(sl_stream* stream, uint32_t* value, int bits); /* bits in [1, 32] */
SL_API bool sl_stream_uint(sl_stream* stream, uint32_t* value, uint32_t min, uint32_t max);
SL_API bool sl_stream_int(sl_stream* stream, int32_t* value, int32_t min, int32_t max);
SL_API bool sl_stream_bool(sl_stream* stream, bool* value);
SL_API bool sl_stream_float(sl_stream* stream, float* value);
/* value in [min, max] to within `resolution`; the reader gets the quantized value. */
SL_API bool sl_stream_quantized(sl_stream* stream, float* value, float min, float max, float resolution);
/* A quantized range checked and divided once, for a range known only at run time (a level's
 * bounds): sl_stream_quantized_range writes and reads exactly the bits sl_stream_quantized does
 * with the same min, max and resolution, without its division per call. Refused
 * (SL_ERR_INVALID_ARGUMENT, naming the argument and its value) for what sl_stream_quantized
 * fails on: min or max not finite, min >= max, resolution not finite or <= 0, more than
 * 2^32 - 1 steps, with *out set to NULL. Immutable once made: any thread may use one. */
typedef struct sl_quantized_range sl_quantized_range;
SL_API sl_status sl_quantized_range_create(float min, float max, float resolution, sl_quantized_range** out);
SL_API void sl_quantized_range_destroy(sl_quantized_range* range); /* NULL is ignored */
SL_API bool sl_stream_quantized_range(sl_stream* stream, float* value, const sl_quantized_range* range);
SL_API bool sl_stream_bytes(sl_stream* stream, uint8_t* data, size_t count);
/* A reference to another entity: a client reads null for one it does not hold yet, and hears the
 * referrer's full state again (a refresh) once it does. */
SL_API bool sl_stream_entity(sl_stream* stream, sl_entity* entity);
SL_API bool sl_stream_is_reading(const sl_stream* stream);
SL_API bool sl_stream_ok(const sl_stream* stream);
/* Why it failed, or "" while ok. */
SL_API const char* sl_stream_error(const sl_stream* stream);
/* A reader over a payload the mirror handed out (the bytes must stay valid while it is used). */
SL_API sl_status sl_stream_reader_create(const uint8_t* bytes, size_t size, sl_stream** out);
/* After reading: whether what is left of the payload is only zero padding. */
SL_API bool sl_stream_rest_is_zero(const sl_stream* stream);
SL_API void sl_stream_destroy(sl_stream* stream); /* readers only; NULL is ignored */

/* --- Replicator: interest sets to packets ------------------------------------------------- */

typedef struct sl_replicator sl_replicator;

/* State parts: SL_PART_FULL in a spawn (everything a client needs to show the entity),
 * SL_PART_UPDATE in an update (what changes). */
enum { SL_PART_FULL = 0, SL_PART_UPDATE = 1 };
/* Delivery: SL_DELIVERY_RELIABLE (an ordered, lossless channel: TCP, WebSocket) or
 * SL_DELIVERY_UNRELIABLE (datagrams: spawns and despawns resent until acknowledged). */
enum { SL_DELIVERY_RELIABLE = 0, SL_DELIVERY_UNRELIABLE = 1 };

/* Writes the entity's state part through the sl_stream_* calls; false refuses the record (the
 * send reports it, naming the entity). Called once per entity and part a send, whatever the
 * number of clients; from the World's worker threads when it has several. */
typedef bool (*sl_serialize_fn)(sl_stream* stream, sl_entity entity, int part, void* context);
/* Where an entity's payload may come from instead of the serializer (ReplicatorDef::payload_source):
 * bytes another process's serializer wrote, sent unchanged. Returns them with their count in *size,
 * valid until it returns (they are copied), or NULL (or *size 0) to have the serializer write the
 * part. At most the payload limit of packet_bytes (more fails the record as a failed serializer
 * does); they name no entity. Called from the World's worker threads when it has several. */
typedef const uint8_t* (*sl_payload_source_fn)(sl_entity entity, int part, void* context, size_t* size);

typedef struct sl_replicator_def {
  sl_serialize_fn serialize; /* required */
  void* serialize_context;
  int delivery;                        /* SL_DELIVERY_*; default reliable */
  float tick_seconds;                  /* > 0; default 1/20 */
  uint32_t packet_bytes;               /* largest packet, [80, 65535]; default 1200 */
  uint32_t budget_bytes;               /* bytes a client is sent per send, >= 41; default 1200 */
  uint32_t entry_budget_bytes;         /* spawn bytes a send, >= 1; default 32768 */
  bool delta_updates;                  /* updates as byte runs against a state the client kept; false */
  sl_payload_source_fn payload_source; /* optional, NULL by default */
  void* payload_source_context;
} sl_replicator_def;

typedef struct sl_send_stats {
  uint64_t packets;
  uint64_t bytes;
  uint64_t spawns;
  uint64_t updates;
  uint64_t despawns;
  uint64_t resends;
  uint64_t pending; /* members not yet spawned, over all clients */
  uint64_t serialize_calls;
  uint64_t serialize_errors;
  uint64_t sourced_payloads; /* payloads taken from the payload source */
} sl_send_stats;

SL_API void sl_replicator_def_default(sl_replicator_def* def);
SL_API sl_status sl_replicator_create(sl_world* world, const sl_replicator_def* def, sl_replicator** out);
SL_API void sl_replicator_destroy(sl_replicator* replicator); /* NULL is ignored */
/* Writes every live client's packets for the World's last tick. A serializer failure is
 * reported (the other records went). */
SL_API sl_status sl_replicator_send(sl_replicator* replicator);
/* The client's packets of the last send: their count, then each one's bytes in place. */
SL_API sl_status sl_replicator_packet_count(const sl_replicator* replicator, sl_client client, size_t* count);
SL_API sl_status sl_replicator_packet(const sl_replicator* replicator, sl_client client, size_t index,
                                      const uint8_t** bytes, size_t* size);
/* An ack the client's mirror wrote (sl_mirror_ack), as received from the network. */
SL_API sl_status sl_replicator_receive_ack(sl_replicator* replicator, sl_client client, const uint8_t* bytes,
                                           size_t size);
/* Members of the client's set not yet sent. */
SL_API sl_status sl_replicator_pending(const sl_replicator* replicator, sl_client client, uint32_t* pending);
/* The entity's weight in the priority formula, >= 0 (default 1). */
SL_API sl_status sl_replicator_set_priority(sl_replicator* replicator, sl_entity entity, float priority);
/* A message of the game's bytes, reliable and in order with the state, at the next send. */
SL_API sl_status sl_replicator_send_message(sl_replicator* replicator, sl_client client, const uint8_t* bytes,
                                            size_t size);
SL_API void sl_replicator_get_stats(const sl_replicator* replicator, sl_send_stats* stats);

/* --- ClientMirror: the client's side ------------------------------------------------------ */

typedef struct sl_mirror sl_mirror;

typedef struct sl_mirror_def {
  int delivery;          /* as the server's Replicator; default reliable */
  uint32_t history;      /* states kept per entity, [1, 16]; default 4 */
  uint32_t max_entities; /* most held at once (hostile bytes cannot grow it); default 2^20 */
} sl_mirror_def;

/* What a packet tells the game as it is applied; any may be NULL. Payload bytes are valid
 * during the call. Exit kinds: 0 it left (still in the world), 1 it was destroyed. */
typedef struct sl_mirror_listener {
  void* context;
  void (*on_enter)(void* context, sl_entity entity, uint8_t reason, bool created, const uint8_t* state,
                   size_t size, uint32_t tick);
  void (*on_update)(void* context, sl_entity entity, const uint8_t* state, size_t size, uint32_t tick);
  void (*on_refresh)(void* context, sl_entity entity, const uint8_t* state, size_t size, uint32_t tick);
  void (*on_exit)(void* context, sl_entity entity, uint8_t exit_kind, uint8_t reason);
  void (*on_message)(void* context, const uint8_t* payload, size_t size, uint32_t tick);
} sl_mirror_listener;

typedef struct sl_mirror_stats {
  uint64_t packets;  /* accepted */
  uint64_t rejected; /* malformed, refused whole */
  uint64_t enters;
  uint64_t updates;
  uint64_t exits;
  uint64_t messages;
  uint64_t anomalies; /* well-formed records that disagreed with what it held */
} sl_mirror_stats;

/* Interest status: whether the server culls by distance for this client, the radius within
 * which everything is already held, and how many entities are still on their way. */
typedef struct sl_interest {
  bool culling;
  float radius;
  uint32_t pending;
} sl_interest;

SL_API void sl_mirror_def_default(sl_mirror_def* def);
SL_API sl_status sl_mirror_create(const sl_mirror_def* def, sl_mirror** out);
SL_API void sl_mirror_destroy(sl_mirror* mirror); /* NULL is ignored */
/* Applies one packet; bytes that do not decode are refused whole (SL_ERR_MALFORMED_PACKET,
 * naming the byte) and the mirror is as it was. `listener` may be NULL. */
SL_API sl_status sl_mirror_receive(sl_mirror* mirror, const uint8_t* bytes, size_t size,
                                   const sl_mirror_listener* listener);
SL_API bool sl_mirror_holds(const sl_mirror* mirror, sl_entity entity);
/* The held entities, by index (see the conventions on lists). */
SL_API sl_status sl_mirror_held(const sl_mirror* mirror, sl_entity* out, size_t capacity, size_t* count);
/* The entity's latest state (full or update part) and its tick, in place until the next receive. */
SL_API sl_status sl_mirror_state(const sl_mirror* mirror, sl_entity entity, const uint8_t** bytes,
                                 size_t* size, int* part, uint32_t* tick);
/* The ack to send back (unreliable delivery): writes SL_ACK_BYTES bytes at `out`. */
#define SL_ACK_BYTES 14
SL_API sl_status sl_mirror_ack(const sl_mirror* mirror, uint8_t* out, size_t capacity);
SL_API void sl_mirror_interest(const sl_mirror* mirror, sl_interest* interest);
SL_API void sl_mirror_get_stats(const sl_mirror* mirror, sl_mirror_stats* stats);

#ifdef __cplusplus
}
#endif

#endif /* SIGHTLINE_SIGHTLINE_C_H */
