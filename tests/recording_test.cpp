// Recording and replay (recording.h): random runs with every kind of input, recorded and
// replayed, give the same records and sets at every tick, whatever the thread count; events and
// the visibility filter replay; a despawn is explained after the fact; bad bytes are refused
// with the byte, the call and the reason, and leave the World as the last whole record left it.
#include "sightline/recording.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "random_run.h"
#include "sightline/world.h"
#include "tick_fingerprint.h"

namespace sightline {
namespace {

using testing::RandomRunDef;

void append(void* context, std::span<const std::uint8_t> bytes) {
  auto* out = static_cast<std::vector<std::uint8_t>*>(context);
  out->insert(out->end(), bytes.begin(), bytes.end());
}

RecordingSink sink_into(std::vector<std::uint8_t>& bytes) { return {&append, &bytes}; }

bool mentions(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

// Replays `bytes` and returns each tick's fingerprint; fails the test on any error.
std::vector<std::uint64_t> replayed(std::span<const std::uint8_t> bytes, const ReplayDef& def = {}) {
  std::vector<std::uint64_t> prints;
  Result<Replay> replay = Replay::open(bytes, def);
  EXPECT_TRUE(replay.ok()) << replay.status().message();
  if (!replay) return prints;
  while (!replay->done()) {
    const Result<TickStats> stats = replay->next_tick();
    EXPECT_TRUE(stats.ok()) << stats.status().message();
    if (!stats) break;
    prints.push_back(testing::tick_fingerprint(replay->world(), *stats));
  }
  EXPECT_EQ(replay->ticks(), prints.size());
  EXPECT_EQ(replay->offset(), bytes.size());
  return prints;
}

TEST(Recording, ARandomRunReplaysTickByTickWhateverTheThreads) {
  for (std::uint64_t seed = 1; seed <= testing::seeds_for_build(12); ++seed) {
    std::vector<std::uint8_t> bytes;
    RandomRunDef def;
    def.seed = seed;
    def.tiers = seed % 3 == 0 ? testing::TierMode::custom : testing::TierMode::preset;
    def.keys = def.relevance = def.structure = def.sight = def.crowd_cap = def.radii = true;
    def.visibility_filter = false;
    def.withdraw = seed % 2 == 0;
    def.external_ids = seed % 4 < 2;
    def.ticks = 30;
    def.recording = sink_into(bytes);
    std::vector<std::uint64_t> prints;
    testing::run_random(def, [&](testing::MirroredWorld& m, const TickStats& stats) {
      prints.push_back(testing::tick_fingerprint(m.world(), stats));
    });
    ASSERT_EQ(prints.size(), def.ticks) << "seed " << seed;
    EXPECT_EQ(replayed(bytes), prints) << "seed " << seed;
    EXPECT_EQ(replayed(bytes, ReplayDef{.threads = 3}), prints) << "seed " << seed << ", 3 threads";
  }
}

// Batches larger than the 64 KiB buffer (it is handed over mid-batch), a recorded history, and
// a replay that switches histories on or bounds them: the records and sets do not change.
TEST(Recording, LargeBatchesAndHistoriesReplay) {
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint64_t> prints;
  std::vector<HistoryEntry> kept;
  constexpr std::uint32_t kSide = 100;
  {
    WorldDef def = default_world_def();
    def.recording = sink_into(bytes);
    World world = *World::create(def);
    std::vector<EntityId> ids;
    std::vector<float> xs, zs;
    for (std::uint32_t i = 0; i < kSide * kSide; ++i) {
      xs.push_back(0.5f * static_cast<float>(i % kSide));
      zs.push_back(0.5f * static_cast<float>(i / kSide));
      ids.push_back(*world.create_entity({.x = xs.back(), .z = zs.back()}));
    }
    const ClientId c = *world.create_client(ids[0]);
    ASSERT_TRUE(world.set_history_capacity(c, 128).ok());
    for (int t = 0; t < 5; ++t) {
      for (float& x : xs) x += 0.3f;
      ASSERT_TRUE(world.set_positions(ids, xs, zs).ok());
      const TickStats stats = world.tick();
      prints.push_back(testing::tick_fingerprint(world, stats));
    }
    kept = *world.history(c);
    ASSERT_FALSE(kept.empty());
  }
  ASSERT_GT(bytes.size(), 5u * kSide * kSide * 16u);
  const ReplayClientFunction short_history = [](void*, World& world, ClientId c) {
    ASSERT_TRUE(world.set_history_capacity(c, 16).ok());
  };
  EXPECT_EQ(replayed(bytes, {.on_client = short_history}), prints);
  Result<Replay> again = Replay::open(bytes);
  while (!again->done()) ASSERT_TRUE(again->next_tick().ok());
  const std::vector<HistoryEntry> replayed_history = *again->world().history(ClientId{0, 1});
  ASSERT_EQ(replayed_history.size(), kept.size());
  for (std::size_t i = 0; i < kept.size(); ++i) {
    EXPECT_EQ(replayed_history[i].tick, kept[i].tick);
    EXPECT_EQ(replayed_history[i].entity, kept[i].entity);
    EXPECT_EQ(replayed_history[i].spawned, kept[i].spawned);
    EXPECT_EQ(replayed_history[i].distance, kept[i].distance);
  }
  Result<Replay> bounded = Replay::open(bytes, {.max_history_capacity = 8});
  std::vector<std::uint64_t> bounded_prints;
  while (!bounded->done()) {
    const Result<TickStats> stats = bounded->next_tick();
    ASSERT_TRUE(stats.ok());
    bounded_prints.push_back(testing::tick_fingerprint(bounded->world(), *stats));
  }
  EXPECT_EQ(bounded_prints, prints);
  EXPECT_EQ(bounded->world().history(ClientId{0, 1})->size(), 8u);
}

// A small world of one client walking away from a crate, with events and every call the random
// runs leave out.
struct Walk {
  World world;
  EntityId viewer, crate;
  ClientId client;
};

Walk record_walk(std::vector<std::uint8_t>& bytes, VisibilityFilter filter = nullptr, void* context = nullptr,
                 std::vector<std::uint64_t>* prints = nullptr) {
  WorldDef def = default_world_def();
  def.enter_radius = 2.0f;
  def.leave_radius = 2.5f;
  def.recording = sink_into(bytes);
  Walk w{*World::create(def), {}, {}, {}};
  w.viewer = *w.world.create_entity({.x = 0.0f, .z = 0.0f});
  w.crate = *w.world.create_entity({.x = 1.0f, .z = 0.0f, .bound_radius = 0.25f});
  w.client = *w.world.create_client(w.viewer);
  const EventClassId shot = *w.world.create_event_class({.radius = 3.0f});
  const EventClassId step = *w.world.create_event_class({.radius = 1.0f, .reliable = true});
  EXPECT_TRUE(w.world.set_event_class(step, {.radius = 1.5f, .reliable = true}).ok());
  w.world.set_visibility_filter(filter, context);
  for (int t = 0; t < 12; ++t) {
    EXPECT_TRUE(w.world.set_position(w.viewer, -0.5f * static_cast<float>(t), 0.0f).ok());
    EXPECT_TRUE(w.world.emit_event({.event_class = t % 2 == 0 ? shot : step, .x = 0.5f, .z = 0.0f}).ok());
    if (t == 3) {
      EXPECT_TRUE(w.world.teleport(w.crate, 1.5f, 0.5f).ok());
    }
    if (t == 5) w.world.set_crowd_cap(4);
    const TickStats stats = w.world.tick();
    if (prints != nullptr) prints->push_back(testing::tick_fingerprint(w.world, stats));
  }
  return w;
}

TEST(Recording, EventsAndEveryTickReplay) {
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint64_t> prints;
  {
    WorldDef def = default_world_def();
    def.recording = sink_into(bytes);
    World world = *World::create(def);
    const EntityId a = *world.create_entity({.x = 0.0f, .z = 0.0f});
    const EntityId b =
        *world.create_entity({.x = 0.5f, .z = 0.0f, .always_relevant = true, .presenter = true});
    const ClientId c = *world.create_client(a);
    const EventClassId gun =
        *world.create_event_class({.radius = 3.0f, .when_absent = AbsentSubject::null_subject});
    for (int t = 0; t < 6; ++t) {
      ASSERT_TRUE(world
                      .emit_event({.event_class = gun,
                                   .x = 0.1f * static_cast<float>(t),
                                   .z = 0.0f,
                                   .subject = t <= 4 ? b : EntityId{},
                                   .user_data = 7u})
                      .ok());
      if (t == 2) {
        ASSERT_TRUE(world.set_view_radius(c, 1.0f, 1.2f).ok());
      }
      if (t == 4) {
        ASSERT_TRUE(world.destroy_entity(b).ok());
      }
      const TickStats stats = world.tick();
      prints.push_back(testing::tick_fingerprint(world, stats));
      EXPECT_GT(stats.event_records, 0u);
    }
  }
  EXPECT_EQ(replayed(bytes), prints);
}

struct Hide {
  std::uint32_t hidden_index = 1;
};
bool hide(void* context, ClientId, EntityId entity) {
  return entity.index != static_cast<Hide*>(context)->hidden_index;
}

TEST(Recording, TheVisibilityFilterIsTheReplayers) {
  std::vector<std::uint8_t> bytes;
  Hide state;
  std::vector<std::uint64_t> prints;
  (void)record_walk(bytes, &hide, &state, &prints);
  EXPECT_EQ(replayed(bytes, {.visibility_filter = &hide, .visibility_context = &state}), prints);
  Result<Replay> without = Replay::open(bytes);
  ASSERT_TRUE(without.ok());
  std::vector<std::uint64_t> unfiltered;
  while (!without->done()) {
    const Result<TickStats> stats = without->next_tick();
    ASSERT_TRUE(stats.ok());
    unfiltered.push_back(testing::tick_fingerprint(without->world(), *stats));
  }
  EXPECT_TRUE(without->used_visibility_filter());
  EXPECT_NE(unfiltered, prints);  // the crate is seen where the recording's filter hid it
}

TEST(Recording, ExplainsADespawnAfterTheFact) {
  std::vector<std::uint8_t> bytes;
  std::vector<HistoryEntry> live;
  EntityId crate;
  ClientId client;
  {
    Walk w = record_walk(bytes);
    crate = w.crate;
    client = w.client;
  }
  const ReplayClientFunction keep_history = [](void*, World& world, ClientId c) {
    ASSERT_TRUE(world.set_history_capacity(c, 64).ok());
  };
  Result<Replay> replay = Replay::open(bytes, {.on_client = keep_history});
  ASSERT_TRUE(replay.ok()) << replay.status().message();
  std::uint64_t despawned_at = 0;
  while (!replay->done()) {
    ASSERT_TRUE(replay->next_tick().ok());
    const ClientStream s = *replay->world().stream(client);
    for (const DespawnRecord& r : s.despawns) {
      if (r.entity == crate) despawned_at = replay->world().tick_count() - 1;
    }
  }
  ASSERT_NE(despawned_at, 0u) << "the crate never left the client's set";
  const std::vector<HistoryEntry> history = *replay->world().history(client, crate);
  ASSERT_EQ(history.size(), 2u);
  EXPECT_TRUE(history[0].spawned);
  EXPECT_EQ(history[0].tick, 0u);
  EXPECT_FALSE(history[1].spawned);
  EXPECT_EQ(history[1].tick, despawned_at);
  EXPECT_EQ(history[1].despawn_reason, DespawnReason::left);
  // Beyond the leave radius plus the crate's bound: what a player's "it vanished" comes down to.
  EXPECT_GT(history[1].distance, 2.5f + 0.25f);
  EXPECT_TRUE(history[1].rule_known);
  EXPECT_EQ(history[1].rule, Rule::out_of_range);
}

// Byte offsets in a walk's recording: where each record starts, found by replaying record by
// record is not possible from outside, so the tests edit a small recording of known layout.
std::vector<std::uint8_t> tiny_recording() {
  std::vector<std::uint8_t> bytes;
  WorldDef def = default_world_def();
  def.recording = sink_into(bytes);
  World world = *World::create(def);
  const EntityId a = *world.create_entity({.x = 0.0f, .z = 0.0f});
  (void)world.tick();
  EXPECT_TRUE(world.set_position(a, 1.0f, 2.0f).ok());
  (void)world.tick();
  return bytes;
}

constexpr std::size_t kHeaderBytes = 8 + 4 + 4 * 4 + 4 + 4 * 0 + 4 + 4 + 1 + 4 + 4 + 4 + 1 + 8;  // no tiers
constexpr std::size_t kCreateEntityBytes = 1 + (4 + 4 + 1 + 4 + 4 + 8 + 1 + 8 + 1) + 8;
constexpr std::size_t kSetPositionBytes = 1 + 8 + 4 + 4;

TEST(Recording, TheLayoutIsTheDocumentedOne) {
  const std::vector<std::uint8_t> bytes = tiny_recording();
  ASSERT_EQ(bytes.size(), kHeaderBytes + kCreateEntityBytes + 1 + kSetPositionBytes + 1);
  EXPECT_EQ(std::memcmp(bytes.data(), "SLRECORD", 8), 0);
  EXPECT_EQ(bytes[8], 2u);                                      // version 2, little-endian
  EXPECT_EQ(bytes[kHeaderBytes], 2u);                           // create_entity
  EXPECT_EQ(bytes[kHeaderBytes + kCreateEntityBytes], 1u);      // tick
  EXPECT_EQ(bytes[kHeaderBytes + kCreateEntityBytes + 1], 4u);  // set_position
  EXPECT_EQ(bytes.back(), 1u);                                  // tick
}

// A client handed out and adopted back (export_client, adopt_client) replays: the image is in
// the recording.
TEST(Recording, AnAdoptedClientReplays) {
  std::vector<std::uint8_t> bytes;
  WorldDef def = default_world_def();
  def.enter_radius = def.leave_radius = 5.0f;
  def.order_key = OrderKey::external;
  def.first_tick = 40;
  def.recording = sink_into(bytes);
  World world = *World::create(def);
  std::vector<std::uint64_t> prints;
  for (std::uint64_t i = 1; i <= 8; ++i) {
    EntityDef e;
    e.x = static_cast<float>(i);
    e.external_id = i * 1000;
    (void)*world.create_entity(e);
  }
  const ClientId c = *world.create_client(world.find_external(1000));
  ASSERT_TRUE(world.add_origin(c, world.find_external(8000)).ok());
  prints.push_back(testing::tick_fingerprint(world, world.tick()));
  const ClientImage image = *world.export_client(c);
  ASSERT_TRUE(world.destroy_client(c).ok());
  ASSERT_TRUE(world.set_position(world.find_external(3000), 9.5f, 0.0f).ok());
  ASSERT_TRUE(world.adopt_client(image).ok());
  prints.push_back(testing::tick_fingerprint(world, world.tick()));
  prints.push_back(testing::tick_fingerprint(world, world.tick()));
  EXPECT_EQ(replayed(bytes), prints);
}

// Version 1 lacked WorldDef::order_key and first_tick and the EntityDef's external_id and created: its
// recordings replay with those at their defaults.
TEST(Recording, AVersionOneRecordingStillReplays) {
  const std::vector<std::uint8_t> now = tiny_recording();
  std::vector<std::uint8_t> old(now.begin(), now.begin() + kHeaderBytes - 9);  // no order_key, first_tick
  old[8] = 1;
  const auto create = now.begin() + kHeaderBytes;
  old.insert(old.end(), create, create + kCreateEntityBytes - 8 - 9);  // no external_id, created
  old.insert(old.end(), create + kCreateEntityBytes - 8, now.end());
  EXPECT_EQ(replayed(old), replayed(now));
  EXPECT_EQ(replayed(old).size(), 2u);
}

TEST(Recording, BadBytesAreRefusedWithTheByteTheCallAndTheReason) {
  const std::vector<std::uint8_t> good = tiny_recording();
  const std::size_t set_at = kHeaderBytes + kCreateEntityBytes + 1;
  {
    std::vector<std::uint8_t> b = good;
    b[0] = 'X';
    const Result<Replay> r = Replay::open(b);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), ErrorCode::malformed_packet);
    EXPECT_TRUE(mentions(r.status(), "not a Sightline recording")) << r.status().message();
  }
  {
    std::vector<std::uint8_t> b = good;
    b[8] = 9;
    const Result<Replay> r = Replay::open(b);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(mentions(r.status(), "recording version 9")) << r.status().message();
  }
  {
    const Result<Replay> r = Replay::open(std::span(good).first(20));
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(mentions(r.status(), "the WorldDef")) << r.status().message();
  }
  {
    std::vector<std::uint8_t> b = good;
    b[12] = 0xff;  // enter_radius's top byte: a NaN radius
    b[13] = 0xff;
    b[14] = 0xff;
    b[15] = 0xff;
    const Result<Replay> r = Replay::open(b);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), ErrorCode::invalid_def);
  }
  {
    // Cut inside the set_position record: the first tick replays, the second reports the cut,
    // and the World keeps the first tick's state.
    Result<Replay> r = Replay::open(std::span(good).first(set_at + 5));
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r->next_tick().ok());
    const Result<TickStats> cut = r->next_tick();
    ASSERT_FALSE(cut.ok());
    EXPECT_EQ(cut.status().code(), ErrorCode::malformed_packet);
    EXPECT_TRUE(
        mentions(cut.status(), "recording byte " + std::to_string(set_at) + " (set_position, before tick 1)"))
        << cut.status().message();
    EXPECT_TRUE(mentions(cut.status(), "the bytes end inside the record")) << cut.status().message();
    EXPECT_TRUE(r->done());
    EXPECT_EQ(r->world().position(EntityId{0, 1})->x, 0.0f);
    EXPECT_EQ(r->world().tick_count(), 1u);
    EXPECT_FALSE(r->next_tick().ok());
  }
  {
    std::vector<std::uint8_t> b = good;
    b[set_at] = 200;
    Result<Replay> r = Replay::open(b);
    ASSERT_TRUE(r->next_tick().ok());
    const Result<TickStats> bad = r->next_tick();
    ASSERT_FALSE(bad.ok());
    EXPECT_TRUE(mentions(bad.status(), "no call has the number 200")) << bad.status().message();
  }
  {
    // A NaN position: the World's own refusal, named.
    std::vector<std::uint8_t> b = good;
    b[set_at + 9 + 3] = 0x7f;
    b[set_at + 9 + 2] = 0xc0;
    Result<Replay> r = Replay::open(b);
    ASSERT_TRUE(r->next_tick().ok());
    const Result<TickStats> bad = r->next_tick();
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.status().code(), ErrorCode::non_finite_position);
    EXPECT_TRUE(mentions(bad.status(), "the World refused the recorded call")) << bad.status().message();
  }
  {
    // The created entity's recorded generation changed: the replay has diverged.
    std::vector<std::uint8_t> b = good;
    b[kHeaderBytes + kCreateEntityBytes - 4] = 5;
    Result<Replay> r = Replay::open(b);
    const Result<TickStats> bad = r->next_tick();
    ASSERT_FALSE(bad.ok());
    EXPECT_TRUE(mentions(bad.status(), "returned entity 0:1 where the recording has entity 0:5"))
        << bad.status().message();
  }
  {
    // A set_positions that claims four billion entries is refused before anything is sized.
    std::vector<std::uint8_t> b(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(set_at));
    b.push_back(5);
    for (int i = 0; i < 4; ++i) b.push_back(0xff);
    Result<Replay> r = Replay::open(b);
    ASSERT_TRUE(r->next_tick().ok());
    const Result<TickStats> bad = r->next_tick();
    ASSERT_FALSE(bad.ok());
    EXPECT_TRUE(mentions(bad.status(), "a list is longer than the bytes left")) << bad.status().message();
  }
  {
    // Calls after the last tick are left out: no tick saw them.
    std::vector<std::uint8_t> b(good.begin(), good.end() - 1);
    Result<Replay> r = Replay::open(b);
    ASSERT_FALSE(r->done());
    ASSERT_TRUE(r->next_tick().ok());
    EXPECT_TRUE(r->done());
    EXPECT_EQ(r->world().position(EntityId{0, 1})->x, 0.0f);
    const Result<TickStats> end = r->next_tick();
    ASSERT_FALSE(end.ok());
    EXPECT_TRUE(mentions(end.status(), "the replay has ended (1 ticks replayed")) << end.status().message();
  }
  {
    // A header cut before its version.
    const Result<Replay> r = Replay::open(std::span(good).first(10));
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(mentions(r.status(), "the bytes end after 10")) << r.status().message();
  }
  {
    // No tick at all: done at once.
    const Result<Replay> r = Replay::open(std::span(good).first(kHeaderBytes + kCreateEntityBytes));
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->done());
    EXPECT_EQ(r->world().entity_count(), 0u);
  }
  EXPECT_FALSE(Replay::open(good, {.threads = kMaxThreads + 1}).ok());
}

}  // namespace
}  // namespace sightline
