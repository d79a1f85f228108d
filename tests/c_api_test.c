/* The C API from C: a world ticked with moving entities, its packets written by a Replicator with
 * a C serializer and applied by one ClientMirror per client (unreliable delivery, acks sent
 * back), every mirror ending with its client's interest set; states read back; refusals with
 * their codes and messages. Exits non-zero on the first failed check. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sightline/sightline_c.h"

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

#define OK(call)                                                                                  \
  do {                                                                                            \
    sl_status status_ = (call);                                                                   \
    if (status_ != SL_OK) {                                                                       \
      fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call, sl_status_name(status_), \
              sl_last_error());                                                                   \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

enum { kEntities = 60, kClients = 3, kTicks = 40 };

/* A recording kept in memory: the sink appends each chunk. */
typedef struct Recording {
  uint8_t* bytes;
  size_t size;
} Recording;

static void append_recording(void* context, const uint8_t* bytes, size_t size) {
  Recording* r = (Recording*)context;
  uint8_t* grown = (uint8_t*)realloc(r->bytes, r->size + size);
  if (grown == NULL) exit(1);
  memcpy(grown + r->size, bytes, size);
  r->bytes = grown;
  r->size += size;
}

/* A world recorded as it walks an entity away from a client, then replayed: the replay's history
 * of the pair is the recorded world's, ending with the despawn. */
static void recording_and_replay(void) {
  Recording recording = {NULL, 0};
  sl_world_def def;
  sl_world_def_default(&def);
  sl_world* world = NULL;
  OK(sl_world_create_recording(&def, append_recording, &recording, &world));
  CHECK(recording.size > 8 && memcmp(recording.bytes, "SLRECORD", 8) == 0);
  sl_entity_def edef;
  sl_entity_def_default(&edef);
  sl_entity viewer = 0, walker = 0;
  OK(sl_world_create_entity(world, &edef, &viewer));
  edef.x = 1.0f;
  OK(sl_world_create_entity(world, &edef, &walker));
  sl_client client = 0;
  OK(sl_world_create_client(world, viewer, &client));
  OK(sl_world_set_history_capacity(world, client, 16));
  for (int t = 0; t < 6; ++t) {
    OK(sl_world_set_position(world, walker, 1.0f + 0.5f * (float)t, 0.0f));
    OK(sl_world_tick(world, NULL));
  }
  sl_history_entry recorded[16];
  size_t recorded_count = 0;
  OK(sl_world_history(world, client, walker, recorded, 16, &recorded_count));
  CHECK(recorded_count == 2 && recorded[0].spawned && !recorded[1].spawned);
  CHECK(strcmp(sl_despawn_reason_name(recorded[1].reason), "left") == 0 && recorded[1].distance > 1.6f);
  sl_world_destroy(world);

  sl_replay_def rdef;
  sl_replay_def_default(&rdef);
  rdef.history_capacity = 4; /* the recorded call (16) replaces it, as it did in the game */
  sl_replay* replay = NULL;
  OK(sl_replay_open(recording.bytes, recording.size, &rdef, &replay));
  int ticks = 0;
  while (!sl_replay_done(replay)) {
    sl_tick_stats stats;
    OK(sl_replay_next_tick(replay, &stats));
    CHECK(stats.tick == (uint64_t)ticks);
    ++ticks;
  }
  CHECK(ticks == 6);
  CHECK(sl_replay_next_tick(replay, NULL) == SL_ERR_INVALID_ARGUMENT);
  sl_history_entry replayed[16];
  size_t replayed_count = 0;
  OK(sl_world_history(sl_replay_world(replay), client, walker, replayed, 16, &replayed_count));
  CHECK(replayed_count == recorded_count);
  for (size_t i = 0; i < replayed_count && i < recorded_count; ++i) {
    CHECK(replayed[i].tick == recorded[i].tick && replayed[i].spawned == recorded[i].spawned &&
          replayed[i].reason == recorded[i].reason && replayed[i].distance == recorded[i].distance &&
          replayed[i].rule == recorded[i].rule);
  }
  /* The replay's world answers questions only. */
  sl_world* view = (sl_world*)sl_replay_world(replay);
  CHECK(sl_world_tick(view, NULL) == SL_ERR_INVALID_ARGUMENT && strstr(sl_last_error(), "read-only") != NULL);
  CHECK(sl_world_set_position(view, walker, 0.0f, 0.0f) == SL_ERR_INVALID_ARGUMENT);
  sl_world_destroy(view); /* ignored: the replay owns it */
  size_t all_count = 0;
  OK(sl_world_history(sl_replay_world(replay), client, SL_NULL_HANDLE, replayed, 16, &all_count));
  CHECK(all_count == replayed_count); /* the walker is the only entity it ever held */
  sl_replay_destroy(replay);
  CHECK(sl_replay_world(NULL) == NULL && sl_replay_done(NULL));

  /* A recording with no history of its own: sl_replay_def::history_capacity gives each client one
   * from its first tick; calls after the last tick are written when the world is destroyed, and
   * left out of the replay. */
  Recording plain = {NULL, 0};
  OK(sl_world_create_recording(&def, append_recording, &plain, &world));
  OK(sl_world_create_entity(world, &edef, &walker));
  edef.x = 0.0f;
  OK(sl_world_create_entity(world, &edef, &viewer));
  OK(sl_world_create_client(world, viewer, &client));
  OK(sl_world_tick(world, NULL));
  OK(sl_world_set_position(world, walker, 9.0f, 0.0f));
  OK(sl_world_tick(world, NULL));
  OK(sl_world_destroy_entity(world, walker));
  const size_t before_end = plain.size;
  sl_world_destroy(world);
  CHECK(plain.size > before_end);
  OK(sl_replay_open(plain.bytes, plain.size, &rdef, &replay));
  while (!sl_replay_done(replay)) OK(sl_replay_next_tick(replay, NULL));
  OK(sl_world_history(sl_replay_world(replay), client, walker, replayed, 16, &replayed_count));
  CHECK(replayed_count == 2 && replayed[0].spawned && !replayed[1].spawned && replayed[1].tick == 1);
  CHECK(
      sl_world_entity_valid(sl_replay_world(replay), walker)); /* its destruction came after the last tick */
  sl_replay_destroy(replay);
  free(plain.bytes);
  rdef.history_capacity = 70000;
  CHECK(sl_replay_open(recording.bytes, recording.size, &rdef, &replay) == SL_ERR_INVALID_DEF);
  CHECK(sl_replay_open(recording.bytes, recording.size, NULL, &replay) == SL_ERR_INVALID_ARGUMENT);
  rdef.history_capacity = 0;

  /* Bytes that are not a recording: refused, with a message. */
  sl_replay* none = NULL;
  CHECK(sl_replay_open(recording.bytes + 1, recording.size - 1, &rdef, &none) == SL_ERR_MALFORMED_PACKET);
  CHECK(none == NULL && strstr(sl_last_error(), "SLRECORD") != NULL);
  free(recording.bytes);
}
/* A withdrawn entity leaves its holders as `left`, a destroyed one as `destroyed`. */
static void withdrawal(void) {
  sl_world_def def;
  sl_world_def_default(&def);
  sl_world* world = NULL;
  OK(sl_world_create(&def, &world));
  sl_entity_def edef;
  sl_entity_def_default(&edef);
  sl_entity viewer = 0, handed = 0, killed = 0;
  OK(sl_world_create_entity(world, &edef, &viewer));
  edef.x = 0.5f;
  OK(sl_world_create_entity(world, &edef, &handed));
  edef.x = 0.7f;
  OK(sl_world_create_entity(world, &edef, &killed));
  sl_client client = 0;
  OK(sl_world_create_client(world, viewer, &client));
  OK(sl_world_tick(world, NULL));
  CHECK(sl_world_withdraw_entity(world, viewer) == SL_ERR_ENTITY_IS_VIEWER);
  CHECK(strstr(sl_last_error(), "viewer") != NULL);
  OK(sl_world_withdraw_entity(world, handed));
  OK(sl_world_destroy_entity(world, killed));
  CHECK(sl_world_withdraw_entity(world, handed) == SL_ERR_STALE_HANDLE);
  OK(sl_world_tick(world, NULL));
  sl_despawn despawns[4];
  size_t count = 0;
  OK(sl_world_despawns(world, client, despawns, 4, &count));
  CHECK(count == 2);
  for (size_t i = 0; i < count && i < 4; ++i) {
    const char* want = despawns[i].entity == handed ? "left" : "destroyed";
    CHECK(despawns[i].entity == handed || despawns[i].entity == killed);
    CHECK(strcmp(sl_despawn_reason_name(despawns[i].reason), want) == 0);
  }
  sl_world_destroy(world);
}

/* External ids under the external order key: required, unique, looked up; an entity that
 * existed elsewhere spawns as not created. */
static void external_ids(void) {
  sl_world_def def;
  sl_world_def_default(&def);
  CHECK(def.order_key == 0);
  def.order_key = 1;
  sl_world* world = NULL;
  OK(sl_world_create(&def, &world));
  sl_entity_def edef;
  sl_entity_def_default(&edef);
  CHECK(edef.external_id == 0 && edef.created);
  sl_entity none = 0;
  CHECK(sl_world_create_entity(world, &edef, &none) == SL_ERR_INVALID_ARGUMENT);
  CHECK(strstr(sl_last_error(), "external_id is 0") != NULL);
  sl_entity viewer = 0, copy = 0;
  edef.external_id = 0x100000000ull;
  OK(sl_world_create_entity(world, &edef, &viewer));
  CHECK(sl_world_create_entity(world, &edef, &none) == SL_ERR_INVALID_ARGUMENT);
  CHECK(strstr(sl_last_error(), "4294967296 is held") != NULL);
  edef.external_id = 7;
  edef.created = false;
  edef.x = 0.5f;
  OK(sl_world_create_entity(world, &edef, &copy));
  uint64_t id = 0;
  OK(sl_world_external_id(world, copy, &id));
  CHECK(id == 7);
  CHECK(sl_world_find_external(world, 7) == copy && sl_world_find_external(world, 8) == SL_NULL_HANDLE);
  sl_client client = 0;
  OK(sl_world_create_client(world, viewer, &client));
  OK(sl_world_tick(world, NULL));
  sl_spawn spawns[4];
  size_t count = 0;
  OK(sl_world_spawns(world, client, spawns, 4, &count));
  CHECK(count == 1 && spawns[0].entity == copy && !spawns[0].created);
  sl_world_destroy(world);
  def.order_key = 9;
  CHECK(sl_world_create(&def, &world) == SL_ERR_INVALID_DEF);
}

/* A payload source's bytes go out as given, and the serializer is not called for them. */
static const uint8_t kSourced[] = {0xab, 0xcd, 0xef, 0x42};
static const uint8_t* fixed_source(sl_entity entity, int part, void* context, size_t* size) {
  (void)entity;
  (void)part;
  ++*(int*)context;
  *size = sizeof kSourced;
  return kSourced;
}
static bool never_serialize(sl_stream* s, sl_entity entity, int part, void* context) {
  (void)s;
  (void)entity;
  (void)part;
  ++*(int*)context;
  return false;
}

static void payload_source(void) {
  sl_world_def def;
  sl_world_def_default(&def);
  sl_world* world = NULL;
  OK(sl_world_create(&def, &world));
  sl_entity_def edef;
  sl_entity_def_default(&edef);
  sl_entity viewer = 0, other = 0;
  OK(sl_world_create_entity(world, &edef, &viewer));
  edef.x = 0.5f;
  OK(sl_world_create_entity(world, &edef, &other));
  sl_client client = 0;
  OK(sl_world_create_client(world, viewer, &client));
  int sourced = 0, serialized = 0;
  sl_replicator_def rdef;
  sl_replicator_def_default(&rdef);
  rdef.serialize = never_serialize;
  rdef.serialize_context = &serialized;
  rdef.payload_source = fixed_source;
  rdef.payload_source_context = &sourced;
  sl_replicator* replicator = NULL;
  OK(sl_replicator_create(world, &rdef, &replicator));
  bool found = false;
  for (int t = 0; t < 2; ++t) { /* the spawn's full part, then an update */
    OK(sl_world_tick(world, NULL));
    OK(sl_replicator_send(replicator));
    size_t count = 0;
    OK(sl_replicator_packet_count(replicator, client, &count));
    for (size_t p = 0; p < count; ++p) {
      const uint8_t* bytes = NULL;
      size_t size = 0;
      OK(sl_replicator_packet(replicator, client, p, &bytes, &size));
      for (size_t i = 0; i + sizeof kSourced <= size; ++i) {
        found = found || memcmp(bytes + i, kSourced, sizeof kSourced) == 0;
      }
    }
  }
  sl_send_stats stats;
  sl_replicator_get_stats(replicator, &stats);
  CHECK(found);
  CHECK(serialized == 0 && stats.serialize_calls == 0 && stats.serialize_errors == 0);
  CHECK(sourced == 2 && stats.sourced_payloads == 1); /* the last send's: one update */
  sl_replicator_destroy(replicator);
  sl_world_destroy(world);
}

static const float kWorldSize = 100.0f;

/* The world's z range, made once (x is written with the per-call form: the reader below reads
 * both with it, so the two forms must write the same bits). */
static sl_quantized_range* z_range = NULL;

/* The game's state: the update part is the position, quantized to 1/64; the full part adds the
 * entity's index as its "kind". */
static bool serialize_entity_state(sl_stream* s, sl_entity entity, int part, void* context) {
  const sl_world* world = (const sl_world*)context;
  float x = 0.0f;
  float z = 0.0f;
  if (sl_world_position(world, entity, &x, &z) != SL_OK) return false;
  if (part == SL_PART_FULL) {
    uint32_t kind = SL_HANDLE_INDEX(entity);
    if (!sl_stream_bits(s, &kind, 16)) return false;
  }
  return sl_stream_quantized(s, &x, 0.0f, kWorldSize, 1.0f / 64.0f) &&
         sl_stream_quantized_range(s, &z, z_range);
}

/* A range made once reads what the per-call form reads, and is refused as that form fails. */
static void quantized_ranges(void) {
  sl_quantized_range* range = NULL;
  /* 255 steps: every 8 bits read is a value. */
  OK(sl_quantized_range_create(-8.0f, 7.9375f, 1.0f / 16.0f, &range));
  const uint8_t bytes[] = {0x5a, 0xc3, 0x17, 0xe8, 0x01};
  sl_stream* a = NULL;
  sl_stream* b = NULL;
  OK(sl_stream_reader_create(bytes, sizeof bytes, &a));
  OK(sl_stream_reader_create(bytes, sizeof bytes, &b));
  for (int i = 0; i < 4; ++i) {
    float per_call = 0.0f;
    float made = 0.0f;
    CHECK(sl_stream_quantized(a, &per_call, -8.0f, 7.9375f, 1.0f / 16.0f));
    CHECK(sl_stream_quantized_range(b, &made, range));
    CHECK(per_call == made && made >= -8.0f && made <= 7.9375f);
  }
  CHECK(!sl_stream_quantized_range(NULL, NULL, range) && !sl_stream_quantized_range(b, NULL, NULL));
  sl_stream_destroy(a);
  sl_stream_destroy(b);
  sl_quantized_range_destroy(range);
  sl_quantized_range_destroy(NULL);

  /* A refusal sets *out to NULL: each starts from a value that is not. */
  sl_quantized_range* const kNotNull = (sl_quantized_range*)&failures;
  sl_quantized_range* refused = kNotNull;
  CHECK(sl_quantized_range_create(1.0f, 1.0f, 0.5f, &refused) == SL_ERR_INVALID_ARGUMENT);
  CHECK(refused == NULL && strstr(sl_last_error(), "max") != NULL);
  refused = kNotNull;
  CHECK(sl_quantized_range_create(0.0f, 1.0f, 0.0f, &refused) == SL_ERR_INVALID_ARGUMENT);
  CHECK(refused == NULL && strstr(sl_last_error(), "resolution") != NULL);
  refused = kNotNull;
  CHECK(sl_quantized_range_create(0.0f, 1e30f, 1e-6f, &refused) == SL_ERR_INVALID_ARGUMENT);
  CHECK(refused == NULL);
  CHECK(sl_quantized_range_create(0.0f, 1.0f, 0.5f, NULL) == SL_ERR_INVALID_ARGUMENT);
}

struct Heard {
  int enters;
  int exits;
  int updates;
};

static void on_enter(void* context, sl_entity entity, uint8_t reason, bool created, const uint8_t* state,
                     size_t size, uint32_t tick) {
  (void)entity;
  (void)reason;
  (void)created;
  (void)tick;
  struct Heard* heard = (struct Heard*)context;
  ++heard->enters;
  CHECK(state != NULL && size > 0);
}

static void on_exit(void* context, sl_entity entity, uint8_t kind, uint8_t reason) {
  (void)entity;
  (void)kind;
  (void)reason;
  ++((struct Heard*)context)->exits;
}

static void on_update(void* context, sl_entity entity, const uint8_t* state, size_t size, uint32_t tick) {
  (void)entity;
  (void)state;
  (void)size;
  (void)tick;
  ++((struct Heard*)context)->updates;
}

static int compare_handles(const void* a, const void* b) {
  const sl_entity x = *(const sl_entity*)a;
  const sl_entity y = *(const sl_entity*)b;
  return x < y ? -1 : x > y ? 1 : 0;
}

/* Entity i walks a circle about its own centre. */
static void place(int i, int tick, float* x, float* z) {
  const float cx = 10.0f + (float)((i * 37) % 80);
  const float cz = 10.0f + (float)((i * 53) % 80);
  const float angle = 0.05f * (float)tick + (float)i;
  *x = cx + 8.0f * cosf(angle);
  *z = cz + 8.0f * sinf(angle);
}

int main(void) {
  CHECK(strlen(sl_version()) >= 5);
  quantized_ranges();
  withdrawal();
  external_ids();
  payload_source();
  OK(sl_quantized_range_create(0.0f, kWorldSize, 1.0f / 64.0f, &z_range));

  /* A def out of range is refused, naming the field and its value. */
  sl_world_def def;
  sl_world_def_default(&def);
  /* The documented defaults. */
  CHECK(def.threads == 1 && def.enter_radius == 1.6f && def.leave_radius == 1.6f && def.cell_size == 0.0f);
  CHECK(def.crowd_cap == 0 && def.entity_capacity == 0 && def.client_capacity == 0);
  def.enter_radius = 20.0f;
  def.leave_radius = 10.0f;
  sl_world* world = NULL;
  CHECK(sl_world_create(&def, &world) == SL_ERR_INVALID_DEF);
  CHECK(world == NULL);
  CHECK(strstr(sl_last_error(), "leave_radius") != NULL);
  CHECK(strcmp(sl_status_name(SL_ERR_INVALID_DEF), "invalid_def") == 0);
  def.leave_radius = 24.0f;
  def.threads = 2;
  OK(sl_world_create(&def, &world));

  sl_entity entities[kEntities];
  float xs[kEntities];
  float zs[kEntities];
  for (int i = 0; i < kEntities; ++i) {
    sl_entity_def e;
    sl_entity_def_default(&e);
    place(i, 0, &e.x, &e.z);
    OK(sl_world_create_entity(world, &e, &entities[i]));
  }
  sl_client clients[kClients];
  for (int c = 0; c < kClients; ++c) OK(sl_world_create_client(world, entities[c], &clients[c]));
  CHECK(sl_world_client_count(world) == kClients);

  sl_replicator_def rdef;
  sl_replicator_def_default(&rdef);
  CHECK(rdef.serialize == NULL && rdef.delivery == SL_DELIVERY_RELIABLE && rdef.tick_seconds == 1.0f / 20.0f);
  CHECK(rdef.packet_bytes == 1200 && rdef.budget_bytes == 1200 && rdef.entry_budget_bytes == 32 * 1024);
  CHECK(!rdef.delta_updates && rdef.payload_source == NULL && rdef.payload_source_context == NULL);
  CHECK(sl_replicator_create(world, &rdef, &(sl_replicator*){NULL}) == SL_ERR_INVALID_DEF);
  CHECK(strstr(sl_last_error(), "serialize") != NULL);
  rdef.serialize = serialize_entity_state;
  rdef.serialize_context = world;
  rdef.delivery = SL_DELIVERY_UNRELIABLE;
  sl_replicator* replicator = NULL;
  OK(sl_replicator_create(world, &rdef, &replicator));

  sl_mirror* mirrors[kClients];
  struct Heard heard[kClients];
  memset(heard, 0, sizeof heard);
  sl_mirror_def mdef;
  sl_mirror_def_default(&mdef);
  CHECK(mdef.delivery == SL_DELIVERY_RELIABLE && mdef.history == 4 && mdef.max_entities == 1u << 20);
  mdef.delivery = SL_DELIVERY_UNRELIABLE;
  for (int c = 0; c < kClients; ++c) OK(sl_mirror_create(&mdef, &mirrors[c]));

  for (int tick = 1; tick <= kTicks; ++tick) {
    for (int i = 0; i < kEntities; ++i) place(i, tick, &xs[i], &zs[i]);
    OK(sl_world_set_positions(world, entities, xs, zs, kEntities));
    sl_tick_stats stats;
    OK(sl_world_tick(world, &stats));
    CHECK(stats.tick == (uint64_t)(tick - 1));
    OK(sl_replicator_send(replicator));
    for (int c = 0; c < kClients; ++c) {
      size_t packets = 0;
      OK(sl_replicator_packet_count(replicator, clients[c], &packets));
      sl_mirror_listener listener = {
          .context = &heard[c], .on_enter = on_enter, .on_update = on_update, .on_exit = on_exit};
      for (size_t p = 0; p < packets; ++p) {
        const uint8_t* bytes = NULL;
        size_t size = 0;
        OK(sl_replicator_packet(replicator, clients[c], p, &bytes, &size));
        OK(sl_mirror_receive(mirrors[c], bytes, size, &listener));
      }
      uint8_t ack[SL_ACK_BYTES];
      OK(sl_mirror_ack(mirrors[c], ack, sizeof ack));
      OK(sl_replicator_receive_ack(replicator, clients[c], ack, sizeof ack));
    }
  }

  /* Every mirror holds its client's interest set, sorted alike, with states near the positions. */
  for (int c = 0; c < kClients; ++c) {
    size_t count = 0;
    OK(sl_world_interest_set(world, clients[c], NULL, 0, &count));
    CHECK(count > 0 && count < kEntities);
    sl_entity set[kEntities];
    sl_entity held[kEntities];
    size_t held_count = 0;
    OK(sl_world_interest_set(world, clients[c], set, kEntities, &count));
    OK(sl_mirror_held(mirrors[c], held, kEntities, &held_count));
    qsort(set, count, sizeof set[0], compare_handles);
    qsort(held, held_count, sizeof held[0], compare_handles);
    CHECK(held_count == count);
    CHECK(memcmp(set, held, count * sizeof set[0]) == 0);
    uint32_t pending = 99;
    OK(sl_replicator_pending(replicator, clients[c], &pending));
    CHECK(pending == 0);
    sl_interest interest;
    sl_mirror_interest(mirrors[c], &interest);
    CHECK(interest.culling && interest.pending == 0 && interest.radius > 0.0f);
    sl_mirror_stats mstats;
    sl_mirror_get_stats(mirrors[c], &mstats);
    CHECK(mstats.anomalies == 0 && mstats.rejected == 0);
    CHECK(mstats.enters == (uint64_t)heard[c].enters && heard[c].enters >= (int)count);
    CHECK(mstats.exits == (uint64_t)heard[c].exits);
    CHECK(heard[c].updates > 0);
    for (size_t k = 0; k < count; ++k) {
      const uint8_t* bytes = NULL;
      size_t size = 0;
      int part = -1;
      uint32_t tick = 0;
      OK(sl_mirror_state(mirrors[c], set[k], &bytes, &size, &part, &tick));
      sl_stream* reader = NULL;
      OK(sl_stream_reader_create(bytes, size, &reader));
      uint32_t kind = 0;
      if (part == SL_PART_FULL) CHECK(sl_stream_bits(reader, &kind, 16) && kind == SL_HANDLE_INDEX(set[k]));
      float x = 0.0f;
      float z = 0.0f;
      CHECK(sl_stream_quantized(reader, &x, 0.0f, kWorldSize, 1.0f / 64.0f));
      CHECK(sl_stream_quantized(reader, &z, 0.0f, kWorldSize, 1.0f / 64.0f));
      CHECK(sl_stream_ok(reader) && sl_stream_rest_is_zero(reader));
      sl_stream_destroy(reader);
      /* The state's tick is the World's tick it was sent for: its position then. */
      float at_x = 0.0f;
      float at_z = 0.0f;
      place((int)SL_HANDLE_INDEX(set[k]), (int)tick + 1, &at_x, &at_z);
      CHECK(fabsf(x - at_x) <= 1.0f / 128.0f + 1e-4f && fabsf(z - at_z) <= 1.0f / 128.0f + 1e-4f);
    }
    sl_why why;
    OK(sl_world_why(world, clients[c], set[0], &why));
    CHECK(why.held && why.root == set[0]);
    CHECK(strcmp(sl_rule_name(why.rule), "near") == 0 || strcmp(sl_rule_name(why.rule), "within_leave") == 0);
  }
  sl_send_stats sstats;
  sl_replicator_get_stats(replicator, &sstats);
  CHECK(sstats.packets >= kClients && sstats.serialize_errors == 0);

  /* Refusals: each names what it refused and changes nothing. */
  sl_entity gone = entities[kEntities - 1];
  OK(sl_world_destroy_entity(world, gone));
  CHECK(sl_world_set_position(world, gone, 1.0f, 1.0f) == SL_ERR_STALE_HANDLE);
  CHECK(strlen(sl_last_error()) > 0);
  CHECK(!sl_world_entity_valid(world, gone));
  CHECK(sl_world_set_position(world, entities[3], NAN, 0.0f) == SL_ERR_NON_FINITE_POSITION);
  float x = 0.0f;
  float z = 0.0f;
  OK(sl_world_position(world, entities[3], &x, &z));
  CHECK(x == xs[3] && z == zs[3]);
  CHECK(sl_world_destroy_entity(world, entities[0]) == SL_ERR_ENTITY_IS_VIEWER);
  CHECK(sl_world_tick(NULL, NULL) == SL_ERR_INVALID_ARGUMENT);
  CHECK(strstr(sl_last_error(), "world") != NULL);
  CHECK(sl_world_interest_set(world, clients[0], NULL, 4, &(size_t){0}) == SL_ERR_INVALID_ARGUMENT);
  const uint8_t garbage[] = {0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03};
  CHECK(sl_mirror_receive(mirrors[0], garbage, sizeof garbage, NULL) == SL_ERR_MALFORMED_PACKET);
  CHECK(strlen(sl_last_error()) > 0);
  sl_mirror_stats after;
  sl_mirror_get_stats(mirrors[0], &after);
  CHECK(after.rejected == 1);
  CHECK(sl_replicator_receive_ack(replicator, clients[0], garbage, sizeof garbage) ==
        SL_ERR_MALFORMED_PACKET);
  CHECK(sl_replicator_packet(replicator, clients[0], 1000, &(const uint8_t*){NULL}, &(size_t){0}) ==
        SL_ERR_INVALID_ARGUMENT);
  CHECK(strstr(sl_last_error(), "1000") != NULL);

  for (int c = 0; c < kClients; ++c) sl_mirror_destroy(mirrors[c]);
  sl_replicator_destroy(replicator);
  sl_world_destroy(world);
  sl_quantized_range_destroy(z_range);
  recording_and_replay();
  if (failures != 0) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("c_api_test: %d clients, %d entities, %d ticks: every mirror holds its interest set\n", kClients,
         kEntities, kTicks);
  return 0;
}
