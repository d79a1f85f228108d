// The ClientMirror against its plain model (plain_mirror.h) on seeded random streams of spawns,
// updates, refreshes and despawns: right ones and wrong ones (unknown ids, other generations,
// spawns of held ids, beyond max_entities), payloads of every size from empty to one that
// outgrows what an entity's snapshots had room for, entities leaving and others taking their
// places. After every packet the held set, each entity's history and the anomaly count are
// exactly the model's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "plain_mirror.h"
#include "sightline/client_mirror.h"
#include "sightline/protocol.h"

namespace sightline {
namespace {

void expect_same(const ClientMirror& mirror, const testing::PlainMirror& model, const std::string& where) {
  const std::vector<EntityId> held = mirror.held();
  ASSERT_EQ(held.size(), model.entities.size()) << where;
  ASSERT_EQ(mirror.held_count(), model.entities.size()) << where;
  std::size_t i = 0;
  for (const auto& [index, e] : model.entities) {
    ASSERT_EQ(held[i].index, index) << where;
    ASSERT_EQ(held[i].generation, e.generation) << where;
    ++i;
    const EntityId id{index, e.generation};
    ASSERT_TRUE(mirror.holds(id)) << where;
    const Result<std::vector<Snapshot>> history = mirror.history(id);
    ASSERT_TRUE(history.ok()) << where;
    ASSERT_EQ(history->size(), e.history.size()) << where << " entity " << index;
    for (std::size_t s = 0; s < e.history.size(); ++s) {
      const Snapshot& got = (*history)[s];
      const testing::PlainSnapshot& want = e.history[s];
      ASSERT_EQ(got.tick, want.tick) << where << " entity " << index << " snapshot " << s;
      ASSERT_EQ(got.part, want.part) << where << " entity " << index << " snapshot " << s;
      ASSERT_EQ(std::vector<std::uint8_t>(got.payload.begin(), got.payload.end()), want.payload)
          << where << " entity " << index << " snapshot " << s;
    }
    ASSERT_EQ(mirror.state_tick(id).value(), e.history.back().tick) << where;
    ASSERT_FALSE(mirror.holds({index, e.generation + 1})) << where;
    // The same snapshots one at a time, newest first, without allocating.
    for (std::uint32_t back = 0; back < e.history.size(); ++back) {
      const std::optional<Snapshot> got = mirror.snapshot(id, back);
      ASSERT_TRUE(got.has_value()) << where;
      const testing::PlainSnapshot& want = e.history[e.history.size() - 1 - back];
      ASSERT_EQ(got->tick, want.tick) << where;
      ASSERT_EQ(got->part, want.part) << where;
      ASSERT_EQ(std::vector<std::uint8_t>(got->payload.begin(), got->payload.end()), want.payload) << where;
    }
    ASSERT_FALSE(mirror.snapshot(id, static_cast<std::uint32_t>(e.history.size())).has_value()) << where;
    ASSERT_FALSE(mirror.snapshot({index, e.generation + 1}).has_value()) << where;
  }
  // held_at walks the same set.
  std::vector<EntityId> walked;
  for (std::size_t at = 0; at < mirror.held_count(); ++at) walked.push_back(mirror.held_at(at));
  ASSERT_TRUE(mirror.held_at(mirror.held_count()).is_null()) << where;
  std::sort(walked.begin(), walked.end(), [](EntityId a, EntityId b) { return a.index < b.index; });
  ASSERT_EQ(walked, held) << where;
}

TEST(ClientMirrorModelTest, MatchesThePlainModelOnRandomStreams) {
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {
    std::mt19937_64 rng(seed);
    const std::uint32_t history = 1 + static_cast<std::uint32_t>(rng() % kMaxHistory);
    const std::uint32_t max_entities = seed % 3 == 0 ? 12 : 1000;
    MirrorDef def = default_mirror_def();
    def.history = history;
    def.max_entities = max_entities;
    ClientMirror mirror = std::move(ClientMirror::create(def).value());
    testing::PlainMirror model(history, max_entities);
    DecodedPacket decoded;
    std::vector<std::uint8_t> buffer(kMaxPacketBytes);
    std::uint32_t reliable = 0;
    std::uint32_t tick = 10;
    std::uint64_t anomalies = 0;
    // Indices from a small range so that entities leave and come back, some at other generations.
    const auto entity = [&] {
      return EntityId{static_cast<std::uint32_t>(rng() % 40), 1 + static_cast<std::uint32_t>(rng() % 3)};
    };
    const auto held_entity = [&]() -> EntityId {
      if (model.entities.empty() || rng() % 8 == 0) return entity();
      auto at = model.entities.begin();
      std::advance(at, static_cast<std::ptrdiff_t>(rng() % model.entities.size()));
      return {at->first, at->second.generation};
    };
    const auto payload = [&] {
      // Mostly small, now and then long enough that a held entity's snapshots must make room, and
      // rarely thousands of bytes.
      const std::size_t size = rng() % 400 == 0  ? 2000 + rng() % 20000
                               : rng() % 16 == 0 ? rng() % 300
                                                 : rng() % 9;
      std::vector<std::uint8_t> p(size);
      for (std::uint8_t& b : p) b = static_cast<std::uint8_t>(rng());
      return p;
    };
    for (std::uint32_t sequence = 0; sequence < 300; ++sequence) {
      ++tick;
      PacketWriter w(buffer, PacketHeader{Delivery::reliable, sequence, tick, reliable, {}});
      const std::uint32_t records = static_cast<std::uint32_t>(rng() % 40);
      for (std::uint32_t r = 0; r < records; ++r) {
        const std::uint32_t op = static_cast<std::uint32_t>(rng() % 10);
        bool added = false;
        if (op < 3) {
          added = w.add_spawn(reliable, entity(), SpawnReason::near, false, payload(),
                              static_cast<std::uint32_t>(rng() % 3));
        } else if (op < 7) {
          added = w.add_update(held_entity(), payload());
        } else if (op < 8) {
          added = w.add_refresh(reliable, held_entity(), payload(), static_cast<std::uint32_t>(rng() % 3));
        } else {
          added = w.add_despawn(reliable, held_entity(), DespawnReason::left);
        }
        // A record that does not fit the packet is left out (nothing written).
        if (added && (op < 3 || op >= 7)) ++reliable;
      }
      const auto bytes = w.finish();
      ASSERT_TRUE(decode_packet(bytes, decoded).ok());
      anomalies += model.apply(decoded);
      ASSERT_TRUE(mirror.receive(bytes).ok());
      ASSERT_EQ(mirror.stats().anomalies, anomalies) << "seed " << seed << " packet " << sequence;
      expect_same(mirror, model, "seed " + std::to_string(seed) + " packet " + std::to_string(sequence));
    }
  }
}

}  // namespace
}  // namespace sightline
