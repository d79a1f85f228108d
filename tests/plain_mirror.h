// The plain model of ClientMirror under reliable delivery: a std::map by entity index with each
// entity's snapshots in a deque, applying a decoded packet's spawns, refreshes, updates and
// despawns in packet order. The property test holds the mirror to it exactly; the mirror bench
// runs it beside the mirror as the baseline.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <vector>

#include "sightline/protocol.h"
#include "sightline/serialize.h"

namespace sightline::testing {

struct PlainSnapshot {
  std::uint32_t tick = 0;
  StatePart part = StatePart::full;
  std::vector<std::uint8_t> payload;

  friend bool operator==(const PlainSnapshot&, const PlainSnapshot&) = default;
};

struct PlainEntity {
  std::uint32_t generation = 0;
  std::deque<PlainSnapshot> history;  // oldest first
};

class PlainMirror {
 public:
  PlainMirror(std::uint32_t history, std::uint32_t max_entities) : history_(history), max_(max_entities) {}

  // Applies one packet's spawns, refreshes, updates and despawns (events and messages change
  // nothing held). Returns the anomalies the records make.
  std::uint32_t apply(const DecodedPacket& packet) {
    std::uint32_t anomalies = 0;
    const std::uint32_t tick = packet.header.tick;
    for (const WireRecord& r : packet.records) {
      const auto at = entities.find(r.entity.index);
      const bool held = at != entities.end() && at->second.generation == r.entity.generation;
      switch (r.type) {
        case RecordType::spawn:
          if (at != entities.end() || entities.size() >= max_) {
            ++anomalies;
          } else {
            PlainEntity& e = entities[r.entity.index];
            e.generation = r.entity.generation;
            push(e, tick - r.state_age, StatePart::full, r);
          }
          break;
        case RecordType::update:
          if (!held) {
            ++anomalies;
          } else {
            push(at->second, tick, StatePart::update, r);
          }
          break;
        case RecordType::refresh:
          if (!held) {
            ++anomalies;
          } else if (tick - r.state_age >= at->second.history.back().tick) {
            push(at->second, tick - r.state_age, StatePart::full, r);
          }
          break;
        case RecordType::despawn:
          if (!held) {
            ++anomalies;
          } else {
            entities.erase(at);
          }
          break;
        default: break;
      }
    }
    return anomalies;
  }

  std::map<std::uint32_t, PlainEntity> entities;  // by index

 private:
  void push(PlainEntity& e, std::uint32_t tick, StatePart part, const WireRecord& r) {
    e.history.push_back({tick, part, {r.payload.begin(), r.payload.end()}});
    if (e.history.size() > history_) e.history.pop_front();
  }

  std::uint32_t history_;
  std::uint32_t max_;
};

}  // namespace sightline::testing
