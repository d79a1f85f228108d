#include "bandwidth.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lossy_channel.h"
#include "rng.h"
#include "sightline/client_mirror.h"
#include "sightline/protocol.h"
#include "sightline/replicator.h"
#include "sightline/world.h"
#include "walker_state.h"

namespace sightline::sim {
namespace {

struct Link {
  ClientId id;
  std::optional<ClientMirror> mirror;
  std::optional<scenarios::LossyChannel> down;
  std::optional<scenarios::LossyChannel> up;
  std::uint64_t last_catching_up = 0;
  std::set<std::uint32_t> violating;  // entities inside the promise radius it does not hold
};

}  // namespace

Result<BandwidthTotals> run_bandwidth(const BandwidthConfig& config, std::uint32_t entities,
                                      std::uint64_t ticks, const PositionSource& positions,
                                      const Progress& progress) {
  if (config.clients > entities) {
    return Status(ErrorCode::invalid_argument, "clients is " + std::to_string(config.clients) +
                                                   ": must be <= entities (" + std::to_string(entities) +
                                                   ")");
  }
  Result<World> created = World::create(
      sim_world_def(config.enter_radius, config.leave_radius, config.tiers, entities, config.clients));
  if (!created.ok()) return created.status();
  World& world = created.value();

  BandwidthTotals totals;
  totals.ticks = ticks;
  totals.entities = entities;
  totals.clients = config.clients;
  totals.unreliable = config.loss_percent > 0.0f;
  totals.latency_ticks = static_cast<std::uint32_t>(std::lround(config.latency_ms / 1000.0f * config.hz));

  ReplicatorDef rdef;
  rdef.serialize = config.whole_state ? scenarios::serialize_walker_whole : scenarios::serialize_walker;
  rdef.delta_updates = config.delta_updates;
  rdef.serialize_context = &world;
  rdef.delivery = totals.unreliable ? Delivery::unreliable : Delivery::reliable;
  rdef.tick_seconds = 1.0f / config.hz;
  rdef.budget_bytes = config.budget;
  rdef.entry_budget_bytes = config.entry_budget;
  rdef.packet_bytes = std::min<std::uint32_t>(1200, config.budget);
  rdef.development = true;
  Result<Replicator> made = Replicator::create(world, rdef);
  if (!made.ok()) return made.status();
  Replicator& replicator = made.value();
  Result<EventClassId> shot = world.create_event_class(
      {.radius = 2.0f * config.enter_radius, .when_absent = AbsentSubject::null_subject, .reliable = true});
  if (!shot.ok()) return shot.status();
  scenarios::Rng event_rng(config.seed * 31 + 7);
  double events_due = 0.0;
  totals.promise_radius = rdef.promise_fraction * config.enter_radius;
  const float promise2 = totals.promise_radius * totals.promise_radius;

  MirrorDef mdef;
  mdef.delivery = rdef.delivery;
  std::vector<Link> links(config.clients);
  std::vector<float> xs(entities);
  std::vector<float> zs(entities);
  std::vector<EntityId> ids;
  ids.reserve(entities);
  std::vector<std::uint64_t> client_bytes(config.clients, 0);
  for (std::uint64_t tick = 0; tick < ticks; ++tick) {
    positions(tick, xs, zs);
    if (tick == 0) {
      for (std::uint32_t i = 0; i < entities; ++i) {
        Result<EntityId> entity = world.create_entity({.x = xs[i], .z = zs[i]});
        if (!entity.ok()) return entity.status();
        ids.push_back(entity.value());
      }
      for (std::uint32_t i = 0; i < config.clients; ++i) {
        Result<ClientId> client = world.create_client(ids[i]);
        if (!client.ok()) return client.status();
        Result<ClientMirror> mirror = ClientMirror::create(mdef);
        if (!mirror.ok()) return mirror.status();
        links[i].id = client.value();
        links[i].mirror.emplace(std::move(mirror.value()));
        const scenarios::LossyChannelDef channel{.loss = config.loss_percent / 100.0,
                                                 .latency_ticks = totals.latency_ticks,
                                                 .seed = config.seed * 7919 + i};
        links[i].down.emplace(channel);
        scenarios::LossyChannelDef back = channel;
        back.seed = config.seed * 104729 + i;
        links[i].up.emplace(back);
      }
    } else {
      const Status moved = world.set_positions(ids, xs, zs);
      if (!moved.ok()) return moved;
    }
    for (events_due += config.events_per_second / config.hz; events_due >= 1.0; events_due -= 1.0) {
      const EntityId who = ids[event_rng.below(entities)];
      const Result<std::uint32_t> emitted =
          world.emit_event({.event_class = *shot, .x = xs[who.index], .z = zs[who.index], .subject = who});
      if (!emitted.ok()) return emitted.status();
      ++totals.events_emitted;
    }
    world.tick();
    if (Status sent = replicator.send(); !sent.ok()) return sent;
    const SendStats& s = replicator.stats();
    totals.bytes += s.bytes;
    totals.packets += s.packets;
    totals.spawns += s.spawns;
    totals.updates += s.updates;
    totals.delta_updates += s.delta_updates;
    totals.despawns += s.despawns;
    totals.events += s.events;
    totals.event_bytes += s.event_bytes;
    totals.resends += s.resends;
    totals.updates_skipped += s.updates_skipped;
    totals.spawns_delayed += s.spawns_delayed;
    totals.spawn_delay_sends += s.spawn_delay_sends;
    totals.longest_wait = std::max(totals.longest_wait, s.longest_wait);
    totals.max_pending = std::max(totals.max_pending, s.max_pending);
    totals.violations_at_send += s.promise_violations;

    for (std::size_t c = 0; c < links.size(); ++c) {
      Link& link = links[c];
      for (const std::span<const std::uint8_t> packet : *replicator.packets(link.id)) {
        client_bytes[c] += packet.size();
        link.down->send(tick, packet);
      }
      bool received = false;
      Status bad;
      link.down->deliver(tick, [&](std::span<const std::uint8_t> bytes) {
        const Status got = link.mirror->receive(bytes);
        if (!got.ok() && bad.ok()) bad = got;
        totals.anomalies += link.mirror->anomalies().size();
        received = true;
      });
      if (!bad.ok()) return bad;
      if (received && totals.unreliable) {
        std::array<std::uint8_t, kAckBytes> ack{};
        encode_ack(link.mirror->ack(), ack);
        link.up->send(tick, ack);
      }
      link.up->deliver(tick, [&](std::span<const std::uint8_t> bytes) {
        const Status acked = replicator.receive_ack(link.id, bytes);
        if (!acked.ok() && bad.ok()) bad = acked;
      });
      if (!bad.ok()) return bad;

      // The promise at the client: once its entry has caught up (and that news had time to
      // arrive), every entity within the promise radius of its viewer is held.
      if (replicator.client_stats(link.id)->catching_up) link.last_catching_up = tick;
      const bool settled = tick > link.last_catching_up + totals.latency_ticks + 1;
      const Position viewer = *world.position(*world.viewer(link.id));
      std::set<std::uint32_t> now;
      for (const EntityId e : *world.interest_set(link.id)) {
        const float dx = xs[e.index] - viewer.x;
        const float dz = zs[e.index] - viewer.z;
        const float d2 = dx * dx + dz * dz;
        if (d2 > promise2 || link.mirror->holds(e)) continue;
        now.insert(e.index);
        if (settled && link.violating.count(e.index) == 0) {
          ++totals.violations_at_client;
          const float d = std::sqrt(d2);
          if (totals.violations_at_client == 1 || d < totals.worst_violation_distance)
            totals.worst_violation_distance = d;
        }
      }
      link.violating.swap(now);
    }
    if (progress) progress(tick + 1);
  }
  for (const Link& link : links) {
    totals.stale_updates += link.mirror->stats().stale_updates;
    totals.events_heard += link.mirror->stats().events;
    totals.datagrams_dropped += link.down->dropped();
  }
  for (const std::uint64_t b : client_bytes) totals.max_client_bytes = std::max(totals.max_client_bytes, b);
  return totals;
}

}  // namespace sightline::sim
