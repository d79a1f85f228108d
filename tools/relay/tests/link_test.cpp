// The impairment model alone, driven with chosen times: each refused field named, the rates within
// a few standard deviations, the same decisions from the same seed, reordering that really lands
// behind a later datagram, the heal, and the queue bound.
#include "link.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace sightline::relay {
namespace {

// Five standard deviations of a binomial count: a correct model fails about once in 1.7 million.
bool within_five_sigma(std::uint64_t count, double trials, double probability) {
  const double sigma = std::sqrt(trials * probability * (1 - probability));
  return std::abs(static_cast<double>(count) - trials * probability) <= 5 * sigma;
}

std::vector<std::uint8_t> payload_of(std::uint32_t id) {
  return {static_cast<std::uint8_t>(id), static_cast<std::uint8_t>(id >> 8),
          static_cast<std::uint8_t>(id >> 16), static_cast<std::uint8_t>(id >> 24)};
}

std::uint32_t id_of(const DueDatagram& datagram) {
  const std::vector<std::uint8_t>& b = datagram.bytes;
  return std::uint32_t{b[0]} | std::uint32_t{b[1]} << 8 | std::uint32_t{b[2]} << 16 |
         std::uint32_t{b[3]} << 24;
}

Link make_link(const LinkDef& def, std::uint64_t direction = 0) {
  Result<Link> link = Link::create(def, direction, 0);
  EXPECT_TRUE(link.ok()) << link.status().message();
  return std::move(*link);
}

struct LinkRun {
  std::vector<Decision> decisions;
  std::vector<std::uint32_t> delivered_ids;  // In delivery order, copies included.
};

// One datagram a millisecond, popping as time goes, then everything left.
LinkRun drive(Link& link, std::uint32_t count) {
  LinkRun run;
  std::vector<DueDatagram> due;
  for (std::uint32_t id = 0; id < count; ++id) {
    const double now = id * 0.001;
    run.decisions.push_back(link.submit(now, 0, payload_of(id)));
    link.pop_due(now, due);
  }
  link.pop_due(1e9, due);
  for (const DueDatagram& datagram : due) run.delivered_ids.push_back(id_of(datagram));
  return run;
}

void expect_balanced(const Link& link) {
  const LinkCounters& c = link.counters();
  EXPECT_EQ(link.queued(), 0u);
  EXPECT_EQ(c.delivered, c.received - c.dropped + c.duplicated - c.overflow);
}

TEST(LinkDef, DefaultsAreValid) { EXPECT_TRUE(validate(LinkDef{}).ok()); }

TEST(LinkDef, EachBadFieldIsRefusedByItsOption) {
  struct Case {
    std::function<void(LinkDef&)> spoil;
    std::string message_start;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<Case> cases = {
      {[](LinkDef& d) { d.drop = 1.5; }, "--drop is 1.5: "},
      {[](LinkDef& d) { d.drop = 1; }, "--drop is 1: "},
      {[&](LinkDef& d) { d.drop = nan; }, "--drop is nan: "},
      {[](LinkDef& d) { d.duplicate = -0.1; }, "--duplicate is -0.1: "},
      {[](LinkDef& d) { d.reorder = 1; }, "--reorder is 1: "},
      {[](LinkDef& d) { d.delay_ms = -1; }, "--delay-ms is -1: "},
      {[](LinkDef& d) { d.jitter_ms = 20000; }, "--jitter-ms is 20000: "},
      {[](LinkDef& d) { d.heal_after_seconds = -2; }, "--heal-after is -2: "},
      {[](LinkDef& d) { d.max_queued = 0; }, "--max-queued is 0: "},
      {[](LinkDef& d) { d.max_queued_bytes = 100; }, "--max-queued-bytes is 100: "},
  };
  for (const Case& c : cases) {
    LinkDef def;
    c.spoil(def);
    const Status status = validate(def);
    EXPECT_EQ(status.code(), ErrorCode::invalid_def) << c.message_start;
    EXPECT_EQ(status.message().rfind(c.message_start, 0), 0u) << status.message();
    EXPECT_FALSE(Link::create(def, 0, 0).ok()) << c.message_start;
  }
}

TEST(Link, DropRateIsWithinFiveSigma) {
  LinkDef def;
  def.drop = 0.2;
  Link link = make_link(def);
  const LinkRun run = drive(link, 20000);
  std::uint64_t dropped = 0;
  for (const Decision& decision : run.decisions) dropped += decision.dropped ? 1 : 0;
  EXPECT_TRUE(within_five_sigma(dropped, 20000, 0.2)) << dropped;
  EXPECT_EQ(link.counters().dropped, dropped);
  EXPECT_EQ(run.delivered_ids.size(), 20000 - dropped);
  expect_balanced(link);
}

TEST(Link, SameSeedGivesSameDecisionsAndOtherSeedsDoNot) {
  LinkDef def;
  def.drop = 0.1;
  def.duplicate = 0.1;
  def.reorder = 0.1;
  def.delay_ms = 5;
  def.jitter_ms = 5;
  def.seed = 42;
  Link first = make_link(def);
  Link second = make_link(def);
  const LinkRun a = drive(first, 3000);
  const LinkRun b = drive(second, 3000);
  EXPECT_EQ(a.decisions, b.decisions);
  EXPECT_EQ(a.delivered_ids, b.delivered_ids);

  def.seed = 43;
  Link other_seed = make_link(def);
  EXPECT_NE(drive(other_seed, 3000).decisions, a.decisions);
  def.seed = 42;
  Link other_direction = make_link(def, 1);
  EXPECT_NE(drive(other_direction, 3000).decisions, a.decisions);
}

TEST(Link, DuplicatesArriveTwiceAtTheirRate) {
  LinkDef def;
  def.duplicate = 0.1;
  def.jitter_ms = 3;
  Link link = make_link(def);
  const LinkRun run = drive(link, 20000);
  std::vector<int> copies(20000, 0);
  for (const std::uint32_t id : run.delivered_ids) ++copies[id];
  std::uint64_t duplicated = 0;
  for (std::uint32_t id = 0; id < 20000; ++id) {
    duplicated += run.decisions[id].duplicated ? 1 : 0;
    EXPECT_EQ(copies[id], run.decisions[id].duplicated ? 2 : 1) << id;
  }
  EXPECT_TRUE(within_five_sigma(duplicated, 20000, 0.1)) << duplicated;
  EXPECT_EQ(link.counters().duplicated, duplicated);
  expect_balanced(link);
}

TEST(Link, ReorderedDatagramsLandBehindALaterOne) {
  LinkDef def;
  def.reorder = 0.1;
  def.drop = 0.05;
  Link link = make_link(def);
  const LinkRun run = drive(link, 20000);
  std::uint64_t reordered = 0;
  std::uint32_t latest_delivered = 0;
  std::vector<bool> overtaken(20000, false);
  for (const std::uint32_t id : run.delivered_ids) {
    overtaken[id] = latest_delivered > id;
    latest_delivered = std::max(latest_delivered, id);
  }
  for (std::uint32_t id = 0; id < 20000; ++id) {
    if (!run.decisions[id].reordered) continue;
    ++reordered;
    // Without delay or jitter, only a hold puts a datagram behind a later one; the last ones may
    // have no later datagram and go out at their longest hold.
    EXPECT_TRUE(id >= 19990 || overtaken[id]) << id;
  }
  for (std::uint32_t id = 0; id < 20000; ++id) {
    EXPECT_TRUE(run.decisions[id].reordered || !overtaken[id]) << id;
  }
  const double kept = static_cast<double>(20000 - link.counters().dropped);
  EXPECT_TRUE(within_five_sigma(reordered, kept, 0.1)) << reordered;
  EXPECT_EQ(link.counters().reordered, reordered);
  expect_balanced(link);
}

TEST(Link, HeldDatagramWithNoLaterOneGoesOutAtItsLongestHold) {
  LinkDef def;
  def.reorder = 0.999;
  def.delay_ms = 10;
  Link link = make_link(def);
  ASSERT_TRUE(link.submit(1.0, 7, payload_of(1)).reordered);
  EXPECT_DOUBLE_EQ(link.next_due_seconds(), 1.0 + 0.01 + kMaxHoldSeconds);
  std::vector<DueDatagram> due;
  link.pop_due(1.0 + 0.01 + kMaxHoldSeconds / 2, due);
  EXPECT_TRUE(due.empty());
  link.pop_due(1.0 + 0.01 + kMaxHoldSeconds, due);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].peer, 7u);
  EXPECT_EQ(id_of(due[0]), 1u);
  EXPECT_LT(link.next_due_seconds(), 0);
}

TEST(Link, HealStopsDropDuplicateAndReorderButKeepsDelay) {
  LinkDef def;
  def.drop = 0.3;
  def.duplicate = 0.3;
  def.reorder = 0.3;
  def.delay_ms = 2;
  def.jitter_ms = 1;
  def.heal_after_seconds = 1;
  Link link = make_link(def);
  const LinkRun run = drive(link, 2000);  // One a millisecond: the second half after the heal.
  for (std::uint32_t id = 0; id < 2000; ++id) {
    const Decision& decision = run.decisions[id];
    EXPECT_GE(decision.delay_seconds, 0.002);
    EXPECT_LE(decision.delay_seconds, 0.003);
    const bool impaired = decision.dropped || decision.duplicated || decision.reordered;
    EXPECT_TRUE(id <= 1000 || !impaired) << id;
  }
  std::uint64_t impaired = 0;
  for (std::uint32_t id = 0; id < 1000; ++id) impaired += run.decisions[id].dropped ? 1 : 0;
  EXPECT_GT(impaired, 200u);
  expect_balanced(link);
}

TEST(Link, QueueBoundRefusesAndCountsOverflow) {
  LinkDef def;
  def.delay_ms = 1000;
  def.max_queued = 100;
  Link link = make_link(def);
  for (std::uint32_t id = 0; id < 150; ++id) {
    EXPECT_EQ(link.submit(0, 0, payload_of(id)).overflowed_copies, id < 100 ? 0 : 1);
  }
  EXPECT_EQ(link.queued(), 100u);
  EXPECT_EQ(link.counters().overflow, 50u);
  std::vector<DueDatagram> due;
  link.pop_due(0.999, due);
  EXPECT_TRUE(due.empty());
  link.pop_due(1.0, due);
  EXPECT_EQ(due.size(), 100u);
  expect_balanced(link);

  LinkDef bytes_def;
  bytes_def.delay_ms = 1000;
  bytes_def.max_queued_bytes = 65535;
  Link bytes_link = make_link(bytes_def);
  const std::vector<std::uint8_t> big(30000, 0xAB);
  EXPECT_EQ(bytes_link.submit(0, 0, big).overflowed_copies, 0);
  EXPECT_EQ(bytes_link.submit(0, 0, big).overflowed_copies, 0);
  EXPECT_EQ(bytes_link.submit(0, 0, big).overflowed_copies, 1);
  EXPECT_EQ(bytes_link.counters().overflow, 1u);
  due.clear();
  bytes_link.pop_due(1.0, due);
  ASSERT_EQ(due.size(), 2u);
  EXPECT_EQ(due[1].bytes, big);
  // Delivered bytes leave room again.
  EXPECT_EQ(bytes_link.submit(1.0, 0, big).overflowed_copies, 0);
}

}  // namespace
}  // namespace sightline::relay
