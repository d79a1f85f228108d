// One-off events: who receives them (origins within the class's radius, in the event's space),
// what the subject policy sends, refused calls, and seeded runs against a brute-force loop.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "rng.h"
#include "small_world.h"

namespace sightline::testing {
namespace {

using Received = std::pair<std::uint32_t, EntityId>;

std::vector<Received> received(const World& world, ClientId c) {
  const ClientStream stream = *world.stream(c);
  std::vector<Received> out;
  for (const EventRecord& r : stream.events) out.emplace_back(r.event, r.subject);
  return out;
}

EventClassId make_class(World& world, float radius, AbsentSubject when_absent = AbsentSubject::drop) {
  const Result<EventClassId> id = world.create_event_class({radius, when_absent});
  EXPECT_TRUE(id.ok()) << id.status().message();
  return id.ok() ? *id : EventClassId{};
}

std::uint32_t emit(World& world, const EventDef& def) {
  const Result<std::uint32_t> index = world.emit_event(def);
  EXPECT_TRUE(index.ok()) << index.status().message();
  return index.ok() ? *index : std::numeric_limits<std::uint32_t>::max();
}

TEST(EventsTest, AGunshotIsHeardBeyondTheVisualRadius) {
  SmallWorld w(10, 12);
  const EntityId shooter = w.make(30, 0);
  const ClientId near = w.client(w.make(0, 0));        // hears it, does not see the shooter
  const ClientId bystander = w.client(w.make(25, 0));  // sees the shooter
  const ClientId far = w.client(w.make(100, 0));       // 70 away: hears nothing
  const EventClassId gunshot = make_class(w.world, 50.0f, AbsentSubject::null_subject);
  EXPECT_EQ(emit(w.world, {.event_class = gunshot, .x = 30, .z = 0, .subject = shooter, .user_data = 7}), 0u);
  const TickStats stats = w.world.tick();
  EXPECT_FALSE(w.holds(near, shooter));
  EXPECT_EQ(received(w.world, near), (std::vector<Received>{{0, EntityId{}}}));
  EXPECT_EQ(received(w.world, bystander), (std::vector<Received>{{0, shooter}}));
  EXPECT_TRUE(received(w.world, far).empty());
  EXPECT_EQ(stats.events, 1u);
  EXPECT_EQ(stats.event_records, 2u);
  ASSERT_EQ(w.world.events().size(), 1u);
  EXPECT_EQ(w.world.events()[0].user_data, 7u);
}

TEST(EventsTest, DistanceEqualToTheRadiusIsInsideAndJustBeyondIsOutside) {
  SmallWorld w(10, 12);
  const ClientId c = w.client(w.make(0, 0));
  const EventClassId five = make_class(w.world, 5.0f);
  const EventClassId tenth = make_class(w.world, 0.1f);  // not representable: the float rule decides
  emit(w.world, {.event_class = five, .x = 3, .z = 4});  // 9 + 16 == 25
  emit(w.world, {.event_class = five, .x = 5, .z = 0});  // d == radius
  emit(w.world, {.event_class = five, .x = std::nextafter(5.0f, 6.0f), .z = 0});  // just beyond
  emit(w.world, {.event_class = five, .x = 0, .z = -5});                          // d == radius
  emit(w.world, {.event_class = five, .x = 3, .z = std::nextafter(4.0f, 5.0f)});  // just beyond
  emit(w.world, {.event_class = tenth, .x = 0.1f, .z = 0});                       // 0.1f * 0.1f on both sides
  w.world.tick();
  EXPECT_EQ(received(w.world, c), (std::vector<Received>{{0, {}}, {1, {}}, {3, {}}, {5, {}}}));
}

TEST(EventsTest, ExtraOriginsHearAndSeveralOriginsInRangeGiveOneRecord) {
  SmallWorld w(10, 12);
  const SpaceId elsewhere = *w.world.create_space(culling_space(10, 12));
  const EntityId drone = w.make(100, 0);
  const EntityId scout = w.make(200, 0, elsewhere);  // an origin in another space does not count
  const ClientId c = w.client(w.make(0, 0));
  ASSERT_TRUE(w.world.add_origin(c, drone).ok());
  ASSERT_TRUE(w.world.add_origin(c, scout).ok());
  const EventClassId small = make_class(w.world, 10.0f);
  const EventClassId wide = make_class(w.world, 60.0f);
  emit(w.world, {.event_class = small, .x = 105, .z = 0});  // near the drone
  emit(w.world, {.event_class = small, .x = 200, .z = 0});  // where the scout is, but here
  emit(w.world, {.event_class = small, .x = 200, .z = 0, .space = elsewhere});  // the scout's space
  emit(w.world, {.event_class = wide, .x = 50, .z = 0});   // near the viewer and the drone
  emit(w.world, {.event_class = small, .x = 50, .z = 0});  // near neither
  w.world.tick();
  EXPECT_EQ(received(w.world, c), (std::vector<Received>{{0, {}}, {3, {}}}));
}

TEST(EventsTest, OtherSpacesNeverReceive) {
  SmallWorld w(10, 12);
  const SpaceId a = *w.world.create_space(culling_space(10, 12));
  const SpaceId b = *w.world.create_space({});
  const ClientId in_default = w.client(w.make(0, 0));
  const ClientId in_a = w.client(w.make(0, 0, a));
  const ClientId in_b = w.client(w.make(0, 0, b));
  const EventClassId boom = make_class(w.world, 1000.0f);
  emit(w.world, {.event_class = boom, .x = 1, .z = 1, .space = a});
  emit(w.world, {.event_class = boom, .x = 1, .z = 1});  // null: the default space
  emit(w.world, {.event_class = boom, .x = 1, .z = 1, .space = b});
  w.world.tick();
  EXPECT_EQ(received(w.world, in_a), (std::vector<Received>{{0, {}}}));
  EXPECT_EQ(received(w.world, in_default), (std::vector<Received>{{1, {}}}));
  EXPECT_EQ(received(w.world, in_b), (std::vector<Received>{{2, {}}}));
  ASSERT_EQ(w.world.events().size(), 3u);
  EXPECT_EQ(w.world.events()[1].space, w.world.default_space()) << "the space comes back resolved";
}

TEST(EventsTest, TheSpaceCullingSettingDoesNotWidenAnEvent) {
  SmallWorld w(10, 12);
  const SpaceId plaza = *w.world.create_space({});  // no culling: everything in it is held
  const EntityId far = w.make(500, 0, plaza);
  const ClientId c = w.client(w.make(0, 0, plaza));
  const EventClassId shout = make_class(w.world, 100.0f);
  emit(w.world, {.event_class = shout, .x = 500, .z = 0, .space = plaza, .subject = far});
  emit(w.world, {.event_class = shout, .x = 100, .z = 0, .space = plaza, .subject = far});
  w.world.tick();
  EXPECT_TRUE(w.holds(c, far));
  EXPECT_EQ(received(w.world, c), (std::vector<Received>{{1, far}}));
}

TEST(EventsTest, EachPolicyDecidesForARecipientThatDoesNotHoldTheSubject) {
  SmallWorld w(10, 12);
  const EntityId subject = w.make(50, 0);
  const ClientId blind = w.client(w.make(0, 0));
  const ClientId sees = w.client(w.make(55, 0));
  const EventClassId drop = make_class(w.world, 100.0f, AbsentSubject::drop);
  const EventClassId null = make_class(w.world, 100.0f, AbsentSubject::null_subject);
  const EventClassId as_is = make_class(w.world, 100.0f, AbsentSubject::send_as_is);
  for (const EventClassId k : {drop, null, as_is})
    emit(w.world, {.event_class = k, .x = 50, .z = 0, .subject = subject});
  for (const EventClassId k : {drop, null, as_is}) emit(w.world, {.event_class = k, .x = 50, .z = 0});
  w.world.tick();
  EXPECT_EQ(received(w.world, blind),
            (std::vector<Received>{{1, {}}, {2, subject}, {3, {}}, {4, {}}, {5, {}}}));
  EXPECT_EQ(received(w.world, sees),
            (std::vector<Received>{{0, subject}, {1, subject}, {2, subject}, {3, {}}, {4, {}}, {5, {}}}));
}

TEST(EventsTest, ASubjectDestroyedBeforeTheTickIsHeldByNobody) {
  SmallWorld w(10, 12);
  const EntityId subject = w.make(5, 0);
  const ClientId c = w.client(w.make(0, 0));
  w.world.tick();
  ASSERT_TRUE(w.holds(c, subject));
  const EventClassId drop = make_class(w.world, 100.0f, AbsentSubject::drop);
  const EventClassId null = make_class(w.world, 100.0f, AbsentSubject::null_subject);
  const EventClassId as_is = make_class(w.world, 100.0f, AbsentSubject::send_as_is);
  for (const EventClassId k : {drop, null, as_is})
    emit(w.world, {.event_class = k, .x = 5, .z = 0, .subject = subject});
  ASSERT_TRUE(w.world.destroy_entity(subject).ok());
  w.world.tick();
  EXPECT_EQ(w.despawns(c),
            (std::vector<std::pair<EntityId, DespawnReason>>{{subject, DespawnReason::destroyed}}));
  EXPECT_EQ(received(w.world, c), (std::vector<Received>{{1, {}}, {2, subject}}));
  // send_as_is passes the stale handle on: the World refuses it everywhere.
  EXPECT_FALSE(w.world.is_valid(subject));
  EXPECT_EQ(w.world.position(subject).status().code(), ErrorCode::stale_handle);
  EXPECT_EQ(w.world.events()[2].subject, subject);
}

TEST(EventsTest, TheClientsOwnViewerCountsAsHeld) {
  SmallWorld w(10, 12);
  const EntityId me = w.make(0, 0);
  const ClientId c = w.client(me);
  const ClientId other = w.client(w.make(40, 0));
  const EventClassId footstep = make_class(w.world, 50.0f, AbsentSubject::drop);
  emit(w.world, {.event_class = footstep, .x = 0, .z = 0, .subject = me});
  w.world.tick();
  EXPECT_FALSE(w.holds(c, me)) << "the viewer is never in its own client's set";
  EXPECT_EQ(received(w.world, c), (std::vector<Received>{{0, me}}));
  EXPECT_TRUE(received(w.world, other).empty());
}

TEST(EventsTest, HoldsMeansTheSetAfterThisTick) {
  SmallWorld w(10, 12);
  const EntityId arriving = w.make(50, 0);
  const EntityId leaving = w.make(5, 0);
  const ClientId c = w.client(w.make(0, 0));
  w.world.tick();
  ASSERT_FALSE(w.holds(c, arriving));
  ASSERT_TRUE(w.holds(c, leaving));
  const EventClassId drop = make_class(w.world, 100.0f, AbsentSubject::drop);
  emit(w.world, {.event_class = drop, .x = 0, .z = 0, .subject = arriving});
  emit(w.world, {.event_class = drop, .x = 0, .z = 0, .subject = leaving});
  ASSERT_TRUE(w.world.set_position(arriving, 8, 0).ok());
  ASSERT_TRUE(w.world.set_position(leaving, 50, 0).ok());
  w.world.tick();
  EXPECT_EQ(received(w.world, c), (std::vector<Received>{{0, arriving}}));
}

TEST(EventsTest, OriginsAndPositionsAreThoseOfTheTick) {
  SmallWorld w(10, 12);
  const EntityId viewer = w.make(0, 0);
  const EntityId drone = w.make(500, 0);
  const ClientId c = w.client(viewer);
  const EventClassId bang = make_class(w.world, 20.0f);
  emit(w.world, {.event_class = bang, .x = 100, .z = 0});
  emit(w.world, {.event_class = bang, .x = 500, .z = 0});
  // After the emit, before the tick: the viewer walks to the first, the drone becomes an origin.
  ASSERT_TRUE(w.world.set_position(viewer, 90, 0).ok());
  ASSERT_TRUE(w.world.add_origin(c, drone).ok());
  w.world.tick();
  EXPECT_EQ(received(w.world, c), (std::vector<Received>{{0, {}}, {1, {}}}));
}

TEST(EventsTest, RefusedClassCallsChangeNothing) {
  SmallWorld w;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (const float radius : {0.0f, -1.0f, nan, inf, 2e9f, 1e-7f}) {
    const Result<EventClassId> refused = w.world.create_event_class({radius, AbsentSubject::drop});
    ASSERT_FALSE(refused.ok()) << radius;
    EXPECT_EQ(refused.status().code(), ErrorCode::invalid_def);
    EXPECT_NE(refused.status().message().find("EventClassDef: radius is"), std::string::npos)
        << refused.status().message();
  }
  const Result<EventClassId> bad_policy = w.world.create_event_class({5.0f, static_cast<AbsentSubject>(7)});
  ASSERT_FALSE(bad_policy.ok());
  EXPECT_EQ(bad_policy.status().message(),
            "EventClassDef: when_absent is 7: must be drop, null_subject or send_as_is");
  EXPECT_EQ(w.world.create_event_class({0.0f, AbsentSubject::drop}).status().message(),
            "EventClassDef: radius is 0: must be in [1e-06, 1e+09]");

  const EventClassId k = make_class(w.world, 5.0f, AbsentSubject::null_subject);
  EXPECT_EQ(k, (EventClassId{0, 1})) << "refused creations took no slot";
  EXPECT_EQ(w.world.set_event_class(k, {nan, AbsentSubject::drop}).code(), ErrorCode::invalid_def);
  EXPECT_EQ(w.world.set_event_class({}, {5.0f, AbsentSubject::drop}).code(), ErrorCode::null_handle);
  EXPECT_EQ(w.world.set_event_class({1, 1}, {5.0f, AbsentSubject::drop}).code(), ErrorCode::stale_handle);
  EXPECT_EQ(w.world.set_event_class({0, 2}, {5.0f, AbsentSubject::drop}).code(), ErrorCode::stale_handle);
  EXPECT_EQ(w.world.event_class({}).status().code(), ErrorCode::null_handle);
  EXPECT_EQ(w.world.event_class(k)->radius, 5.0f);
  EXPECT_EQ(w.world.event_class(k)->when_absent, AbsentSubject::null_subject);
  ASSERT_TRUE(w.world.set_event_class(k, {kMaxRadius, AbsentSubject::send_as_is}).ok());
  EXPECT_EQ(w.world.event_class(k)->radius, kMaxRadius);
  ASSERT_TRUE(w.world.set_event_class(k, {kMinRadius, AbsentSubject::drop}).ok());
  EXPECT_EQ(w.world.event_class(k)->radius, kMinRadius);
}

TEST(EventsTest, RefusedEmitsChangeNothing) {
  SmallWorld w(10, 12);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const ClientId c = w.client(w.make(0, 0));
  const EventClassId k = make_class(w.world, 50.0f, AbsentSubject::send_as_is);
  const EntityId gone = w.make(1, 1);
  ASSERT_TRUE(w.world.destroy_entity(gone).ok());
  const SpaceId closed = *w.world.create_space({});
  ASSERT_TRUE(w.world.destroy_space(closed).ok());

  EXPECT_EQ(emit(w.world, {.event_class = k, .x = 1, .z = 0, .user_data = 1}), 0u);
  auto refused = [&](const EventDef& def, ErrorCode code, const char* words) {
    const Result<std::uint32_t> r = w.world.emit_event(def);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), code) << r.status().message();
    EXPECT_NE(r.status().message().find(words), std::string::npos) << r.status().message();
  };
  refused({.event_class = {}, .x = 1}, ErrorCode::null_handle,
          "EventDef::event_class: event class handle is null");
  refused({.event_class = {1, 1}}, ErrorCode::stale_handle,
          "EventDef::event_class: event class 1:1 is stale");
  refused({.event_class = {0, 2}}, ErrorCode::stale_handle, "event class 0:2");
  refused({.event_class = k, .x = nan}, ErrorCode::non_finite_position, "EventDef: position is (nan, 0)");
  refused({.event_class = k, .z = -inf}, ErrorCode::non_finite_position, "EventDef: position is (0, -inf)");
  refused({.event_class = k, .x = 2e15f}, ErrorCode::non_finite_position, "within +-1e+15");
  refused({.event_class = k, .space = closed}, ErrorCode::stale_handle, "EventDef::space: space");
  refused({.event_class = k, .subject = gone}, ErrorCode::stale_handle, "EventDef::subject: entity");
  EXPECT_EQ(emit(w.world, {.event_class = k, .x = kMaxCoordinate, .z = -kMaxCoordinate, .user_data = 2}), 1u)
      << "refused emits took no index";
  EXPECT_EQ(emit(w.world, {.event_class = k, .x = 2, .z = 0, .user_data = 3}), 2u);
  const TickStats stats = w.world.tick();
  EXPECT_EQ(stats.events, 3u);
  ASSERT_EQ(w.world.events().size(), 3u);
  EXPECT_EQ(w.world.events()[1].user_data, 2u);
  EXPECT_EQ(received(w.world, c), (std::vector<Received>{{0, {}}, {2, {}}}));
}

TEST(EventsTest, ATickDeliversAtMostkMaxEventsPerTick) {
  SmallWorld w(10, 12);
  const ClientId c = w.client(w.make(0, 0));
  const EventClassId k = make_class(w.world, 1.0f);
  for (std::uint32_t i = 0; i < kMaxEventsPerTick; ++i) {
    if (!w.world.emit_event({.event_class = k, .x = static_cast<float>(i % 1000), .z = 0}).ok()) FAIL() << i;
  }
  const Result<std::uint32_t> over = w.world.emit_event({.event_class = k});
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), ErrorCode::invalid_argument);
  EXPECT_NE(over.status().message().find("kMaxEventsPerTick"), std::string::npos);
  const TickStats stats = w.world.tick();
  EXPECT_EQ(stats.events, kMaxEventsPerTick);
  EXPECT_EQ(received(w.world, c).size(), 2098u) << "x = 0 and x = 1 (d == radius), 1049 times each";
  EXPECT_EQ(emit(w.world, {.event_class = k}), 0u) << "the next tick's queue is empty again";
}

TEST(EventsTest, EventsKeepEmitOrderAndIndicesForOneTick) {
  SmallWorld w(10, 12);
  const SpaceId b = *w.world.create_space(culling_space(10, 12));
  const ClientId here = w.client(w.make(0, 0));
  const ClientId there = w.client(w.make(0, 0, b));
  const EventClassId k = make_class(w.world, 20.0f);
  EXPECT_TRUE(w.world.events().empty()) << "before the first tick";
  EXPECT_TRUE(w.world.stream(here)->events.empty());
  // Interleaved spaces: each client still gets its events by ascending index.
  for (std::uint64_t i = 0; i < 6; ++i) {
    const SpaceId s = i % 2 == 0 ? w.world.default_space() : b;
    EXPECT_EQ(emit(w.world,
                   {.event_class = k, .x = static_cast<float>(i), .z = 0, .space = s, .user_data = 100 + i}),
              i);
  }
  EXPECT_TRUE(w.world.events().empty()) << "queued, not delivered";
  w.world.tick();
  ASSERT_EQ(w.world.events().size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(w.world.events()[i].user_data, 100 + i);
    EXPECT_EQ(w.world.events()[i].x, static_cast<float>(i));
  }
  EXPECT_EQ(received(w.world, here), (std::vector<Received>{{0, {}}, {2, {}}, {4, {}}}));
  EXPECT_EQ(received(w.world, there), (std::vector<Received>{{1, {}}, {3, {}}, {5, {}}}));
  // A tick without emits delivers nothing; indices start at 0 again for the next one.
  const TickStats quiet = w.world.tick();
  EXPECT_EQ(quiet.events, 0u);
  EXPECT_EQ(quiet.event_records, 0u);
  EXPECT_TRUE(w.world.events().empty());
  EXPECT_TRUE(received(w.world, here).empty());
  EXPECT_EQ(emit(w.world, {.event_class = k}), 0u);
  w.world.tick();
  EXPECT_EQ(received(w.world, here), (std::vector<Received>{{0, {}}}));
  EXPECT_TRUE(received(w.world, there).empty());
}

TEST(EventsTest, AClientDestroyedBeforeTheTickReceivesNothing) {
  SmallWorld w(10, 12);
  const EntityId v1 = w.make(0, 0);
  const EntityId v2 = w.make(1, 0);
  const ClientId leaving = w.client(v1);
  const ClientId staying = w.client(v2);
  const EventClassId k = make_class(w.world, 20.0f);
  emit(w.world, {.event_class = k, .x = 0, .z = 0});
  ASSERT_TRUE(w.world.destroy_client(leaving).ok());
  const ClientId joining = w.client(w.make(2, 0));  // reuses the slot, with a new generation
  EXPECT_EQ(joining.index, leaving.index);
  const TickStats stats = w.world.tick();
  EXPECT_EQ(w.world.stream(leaving).status().code(), ErrorCode::stale_handle);
  EXPECT_EQ(received(w.world, staying), (std::vector<Received>{{0, {}}}));
  EXPECT_EQ(received(w.world, joining), (std::vector<Received>{{0, {}}})) << "created before the tick";
  EXPECT_EQ(stats.event_records, 2u);
  // Destroyed after the tick: its stream is gone, the others' stay.
  ASSERT_TRUE(w.world.destroy_client(staying).ok());
  EXPECT_EQ(received(w.world, joining), (std::vector<Received>{{0, {}}}));
}

TEST(EventsTest, AnEventInASpaceDestroyedBeforeTheTickReachesNobody) {
  SmallWorld w(10, 12);
  const SpaceId closing = *w.world.create_space({});
  const EventClassId k = make_class(w.world, 1000.0f);
  emit(w.world, {.event_class = k, .x = 0, .z = 0, .space = closing});
  ASSERT_TRUE(w.world.destroy_space(closing).ok());
  const SpaceId opening = *w.world.create_space({});  // the same slot, a new generation
  ASSERT_EQ(opening.index, closing.index);
  const ClientId c = w.client(w.make(0, 0, opening));
  const TickStats stats = w.world.tick();
  EXPECT_EQ(stats.events, 1u);
  EXPECT_EQ(stats.event_records, 0u);
  EXPECT_TRUE(received(w.world, c).empty());
  EXPECT_EQ(w.world.events()[0].space, closing);
}

TEST(EventsTest, SetEventClassAppliesToEventsAlreadyEmitted) {
  SmallWorld w(10, 12);
  const EntityId subject = w.make(60, 0);
  const ClientId c = w.client(w.make(0, 0));
  const EventClassId k = make_class(w.world, 5.0f, AbsentSubject::drop);
  emit(w.world, {.event_class = k, .x = 8, .z = 0, .subject = subject});
  ASSERT_TRUE(w.world.set_event_class(k, {10.0f, AbsentSubject::null_subject}).ok());
  w.world.tick();
  EXPECT_EQ(received(w.world, c), (std::vector<Received>{{0, {}}}));
}

// --- Seeded runs against a brute-force loop ------------------------------------------------

struct RunShape {
  int ticks = 0;
  std::uint32_t entities = 0;
  std::uint32_t max_clients = 0;
  std::uint32_t max_events = 0;  // per tick
  float extent = 0.0f;           // most positions in [-extent, extent]^2
};

// The rule of World::emit_event, written out: every client, every event, every origin.
std::vector<Received> brute_force(const World& world, ClientId c) {
  const EntityId viewer = *world.viewer(c);
  const SpaceId space = *world.client_space(c);
  std::vector<Position> origins{*world.position(viewer)};
  for (const EntityId o : *world.origins(c)) {
    if (*world.space(o) == space) origins.push_back(*world.position(o));
  }
  std::vector<Received> out;
  const std::span<const EventDef> events = world.events();
  for (std::uint32_t i = 0; i < events.size(); ++i) {
    const EventDef& e = events[i];
    if (e.space != space) continue;
    const EventClassDef k = *world.event_class(e.event_class);
    bool heard = false;
    for (const Position& o : origins) {
      const float dx = e.x - o.x;
      const float dz = e.z - o.z;
      heard = heard || dx * dx + dz * dz <= k.radius * k.radius;
    }
    if (!heard) continue;
    const bool held = e.subject.is_null() || (world.is_valid(e.subject) &&
                                              (*world.is_relevant_to(c, e.subject) || viewer == e.subject));
    if (held) {
      out.emplace_back(i, e.subject);
    } else if (k.when_absent == AbsentSubject::null_subject) {
      out.emplace_back(i, EntityId{});
    } else if (k.when_absent == AbsentSubject::send_as_is) {
      out.emplace_back(i, e.subject);
    }
  }
  return out;
}

void random_run(std::uint64_t seed, const RunShape& shape) {
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  scenarios::Rng rng(seed);
  WorldDef def = default_world_def();
  def.enter_radius = 10.0f;
  def.leave_radius = 12.0f;
  World world = std::move(World::create(def).value());
  std::vector<SpaceId> spaces{world.default_space(), *world.create_space(culling_space(6, 8)),
                              *world.create_space({})};
  const float radii[] = {0.5f, 4.0f, 15.0f, 40.0f, 120.0f, 2000.0f};
  const AbsentSubject policies[] = {AbsentSubject::drop, AbsentSubject::null_subject,
                                    AbsentSubject::send_as_is};
  std::vector<EventClassId> classes;
  for (std::size_t i = 0; i < std::size(radii); ++i) {
    classes.push_back(*world.create_event_class({radii[i], policies[i % 3]}));
  }
  std::vector<EntityId> entities;

  auto coordinate = [&] {
    if (rng.below(100) == 0) return rng.uniform(-1e6f, 1e6f);
    return rng.uniform(-shape.extent, shape.extent);
  };
  auto some_space = [&] { return spaces[rng.below(5) % 3]; };  // the default space most often
  auto some_entity = [&] { return entities[rng.below(static_cast<std::uint32_t>(entities.size()))]; };
  auto make_entity = [&] {
    entities.push_back(*world.create_entity({.x = coordinate(), .z = coordinate(), .space = some_space()}));
  };
  auto some_client = [&] {
    const std::span<const ClientId> clients = world.clients();
    return clients[rng.below(static_cast<std::uint32_t>(clients.size()))];
  };
  auto destroy_entity = [&](EntityId e) {
    if (!world.destroy_entity(e).ok()) return;  // a viewer
    entities.erase(std::find(entities.begin(), entities.end(), e));
  };
  // Positions, spaces, entities, clients, viewers and origins change.
  auto mutate = [&] {
    const std::uint32_t n = rng.below(10);
    for (std::uint32_t i = 0; i < n; ++i) {
      const EntityId e = some_entity();
      switch (rng.below(11)) {
        case 0:
        case 1: (void)world.set_position(e, coordinate(), coordinate()); break;
        case 2: {  // a small step, so sets change at the edges
          const Position p = *world.position(e);
          (void)world.set_position(e, p.x + rng.uniform(-8, 8), p.z + rng.uniform(-8, 8));
          break;
        }
        case 3: (void)world.teleport(e, coordinate(), coordinate()); break;
        case 4: (void)world.set_space(e, some_space()); break;
        case 5:
          if (entities.size() < 2 * shape.entities) make_entity();
          break;
        case 6:
          if (entities.size() > shape.entities / 2) destroy_entity(e);
          break;
        case 7:
          if (world.client_count() < shape.max_clients) (void)world.create_client(e);
          break;
        case 8:
          if (world.client_count() > 1) (void)world.destroy_client(some_client());
          break;
        case 9:
          if (world.client_count() > 0) (void)world.set_viewer(some_client(), e);
          break;
        default:
          if (world.client_count() == 0) break;
          if (rng.below(3) == 0) {
            (void)world.remove_origin(some_client(), e);
          } else {
            (void)world.add_origin(some_client(), e);
          }
          break;
      }
    }
  };

  for (std::uint32_t i = 0; i < shape.entities; ++i) make_entity();
  for (std::uint32_t i = 0; i < shape.max_clients / 2; ++i) (void)world.create_client(some_entity());
  std::uint64_t total_records = 0;
  for (int tick = 0; tick < shape.ticks; ++tick) {
    SCOPED_TRACE(::testing::Message() << "tick " << tick);
    mutate();
    std::vector<EventDef> emitted;
    const std::uint32_t count = rng.below(shape.max_events + 1);
    for (std::uint32_t i = 0; i < count; ++i) {
      EventDef e;
      e.event_class = classes[rng.below(static_cast<std::uint32_t>(classes.size()))];
      const float radius = world.event_class(e.event_class)->radius;
      const EntityId near = some_entity();
      const Position p = *world.position(near);
      switch (rng.below(4)) {
        case 0:  // on the circle's edge around an entity, by float addition
          e.x = p.x + (rng.below(2) == 0 ? radius : -radius);
          e.z = p.z;
          break;
        case 1:
          e.x = p.x + rng.uniform(-2 * radius, 2 * radius);
          e.z = p.z + rng.uniform(-2 * radius, 2 * radius);
          break;
        default:
          e.x = coordinate();
          e.z = coordinate();
          break;
      }
      const std::uint32_t space_pick = rng.below(6);
      e.space = space_pick == 0 ? SpaceId{} : space_pick == 1 ? some_space() : *world.space(near);
      const std::uint32_t subject_pick = rng.below(4);
      e.subject = subject_pick == 0 ? EntityId{} : subject_pick == 1 ? some_entity() : near;
      e.user_data = rng.next();
      const Result<std::uint32_t> index = world.emit_event(e);
      ASSERT_TRUE(index.ok()) << index.status().message();
      ASSERT_EQ(*index, emitted.size());
      if (e.space.is_null()) e.space = world.default_space();
      emitted.push_back(e);
    }
    // Between the emit and the tick: subjects destroyed, classes changed, more of everything.
    if (!emitted.empty() && rng.below(3) == 0) {
      const EntityId subject = emitted[rng.below(static_cast<std::uint32_t>(emitted.size()))].subject;
      if (!subject.is_null() && world.is_valid(subject)) destroy_entity(subject);
    }
    if (rng.below(10) == 0) {
      const EventClassId k = classes[rng.below(static_cast<std::uint32_t>(classes.size()))];
      ASSERT_TRUE(world.set_event_class(k, {radii[rng.below(6)], policies[rng.below(3)]}).ok());
    }
    mutate();

    const TickStats stats = world.tick();
    const std::span<const EventDef> events = world.events();
    ASSERT_EQ(events.size(), emitted.size());
    ASSERT_EQ(stats.events, emitted.size());
    for (std::size_t i = 0; i < events.size(); ++i) {
      EXPECT_EQ(events[i].event_class, emitted[i].event_class);
      EXPECT_EQ(events[i].x, emitted[i].x);
      EXPECT_EQ(events[i].z, emitted[i].z);
      EXPECT_EQ(events[i].space, emitted[i].space);
      EXPECT_EQ(events[i].subject, emitted[i].subject);
      EXPECT_EQ(events[i].user_data, emitted[i].user_data);
    }
    std::uint64_t records = 0;
    for (const ClientId c : world.clients()) {
      const std::vector<Received> expected = brute_force(world, c);
      ASSERT_EQ(received(world, c), expected) << "client " << c.index << ":" << c.generation;
      records += expected.size();
    }
    ASSERT_EQ(stats.event_records, records);
    total_records += records;
  }
  EXPECT_GT(total_records, static_cast<std::uint64_t>(shape.ticks)) << "the run must deliver events";
}

TEST(EventsTest, SeededRunsMatchABruteForceLoop) {
  const RunShape shape{.ticks = 300, .entities = 60, .max_clients = 16, .max_events = 12, .extent = 60.0f};
  for (std::uint64_t seed = 1; seed <= 6; ++seed) random_run(seed, shape);
}

TEST(EventsTest, SeededRunsWithManyClientsAndEventsMatchABruteForceLoop) {
  const RunShape shape{.ticks = 40, .entities = 600, .max_clients = 250, .max_events = 150, .extent = 300.0f};
  for (std::uint64_t seed = 11; seed <= 13; ++seed) random_run(seed, shape);
}

}  // namespace
}  // namespace sightline::testing
