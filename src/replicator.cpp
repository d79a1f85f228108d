// The Replicator's public face: its def validated, its state made and grown, and the calls a
// game makes between sends. A send itself is in client_send.cpp.
#include "sightline/replicator.h"

#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "format_value.h"
#include "replicator_impl.h"
#include "sightline/world.h"

namespace sightline {
namespace {

Status invalid_def(const std::string& field, const std::string& value, const std::string& rule) {
  return {ErrorCode::invalid_def, "ReplicatorDef::" + field + " is " + value + ": " + rule};
}

Status validate(const ReplicatorDef& d) {
  auto finite_nonneg = [](float v) { return std::isfinite(v) && v >= 0.0f; };
  if (d.serialize == nullptr) return invalid_def("serialize", "null", "a serializer is required");
  if (d.delivery != Delivery::reliable && d.delivery != Delivery::unreliable) {
    return invalid_def("delivery", std::to_string(static_cast<int>(d.delivery)),
                       "must be reliable or unreliable");
  }
  if (d.mode != UpdateMode::priority && d.mode != UpdateMode::fixed_rate) {
    return invalid_def("mode", std::to_string(static_cast<int>(d.mode)), "must be priority or fixed_rate");
  }
  if (!(std::isfinite(d.tick_seconds) && d.tick_seconds > 0.0f)) {
    return invalid_def("tick_seconds", format_value(d.tick_seconds), "must be finite and > 0");
  }
  if (d.packet_bytes < kMinPacketBytes || d.packet_bytes > kMaxPacketBytes) {
    return invalid_def(
        "packet_bytes", std::to_string(d.packet_bytes),
        "must be in [" + std::to_string(kMinPacketBytes) + ", " + std::to_string(kMaxPacketBytes) + "]");
  }
  if (d.budget_bytes < kStateHeaderBytes + 16) {
    return invalid_def("budget_bytes", std::to_string(d.budget_bytes),
                       "must be >= " + std::to_string(kStateHeaderBytes + 16));
  }
  if (d.entry_budget_bytes < 1) return invalid_def("entry_budget_bytes", "0", "must be >= 1");
  if (d.message_queue_bytes < 1) return invalid_def("message_queue_bytes", "0", "must be >= 1");
  if (!finite_nonneg(d.distance_scale))
    return invalid_def("distance_scale", format_value(d.distance_scale), "must be finite and >= 0");
  if (!finite_nonneg(d.size_scale))
    return invalid_def("size_scale", format_value(d.size_scale), "must be finite and >= 0");
  if (!finite_nonneg(d.speed_scale))
    return invalid_def("speed_scale", format_value(d.speed_scale), "must be finite and >= 0");
  if (!(std::isfinite(d.interaction_boost) && d.interaction_boost >= 1.0f)) {
    return invalid_def("interaction_boost", format_value(d.interaction_boost), "must be finite and >= 1");
  }
  if (d.resend_sends < 1) return invalid_def("resend_sends", "0", "must be >= 1");
  if (d.filler_misfits < 1) return invalid_def("filler_misfits", "0", "must be >= 1");
  const std::size_t largest_state = d.packet_bytes - kStateHeaderBytes - kMaxRecordFraming;
  if (d.delta_updates && (d.delta_state_bytes < 1 || d.delta_state_bytes > largest_state)) {
    return invalid_def("delta_state_bytes", std::to_string(d.delta_state_bytes),
                       "must be in [1, " + std::to_string(largest_state) + "] (packet_bytes - 52)");
  }
  if (!(d.promise_fraction > 0.0f && d.promise_fraction <= 1.0f)) {
    return invalid_def("promise_fraction", format_value(d.promise_fraction), "must be in (0, 1]");
  }
  return {};
}

}  // namespace

ReplicatorImpl::ReplicatorImpl(World& w, const ReplicatorDef& settings) : world(w), def(settings) {
  if (def.mode == UpdateMode::priority) world.request_periods();
  max_payload = def.packet_bytes - kStateHeaderBytes - kMaxRecordFraming;
  max_event_payload = def.packet_bytes - kStateHeaderBytes - kMaxEventFraming;
  max_message_payload = def.packet_bytes - kStateHeaderBytes - kMaxMessageFraming;
}

ReplicatorImpl::~ReplicatorImpl() {
  if (def.mode == UpdateMode::priority) world.release_periods();
}

void ReplicatorImpl::grow_entities() {
  const std::size_t n = world.entity_slots();
  if (priority.size() >= n) return;
  priority.resize(n, 1.0f);
  priority_generation.resize(n, 0);
  teleport_send.resize(n, 0);
  born_generation.resize(n, 0);
  born_send.resize(n, 0);
  for (int p = 0; p < 2; ++p) {
    cache[p].resize(n);
  }
}

// --- Public API -------------------------------------------------------------------------------

Replicator::Replicator(std::unique_ptr<ReplicatorImpl> impl) noexcept : impl_(std::move(impl)) {}
Replicator::Replicator(Replicator&&) noexcept = default;
Replicator& Replicator::operator=(Replicator&&) noexcept = default;
Replicator::~Replicator() = default;

ReplicatorDef default_replicator_def() { return ReplicatorDef{}; }

Result<Replicator> Replicator::create(World& world, const ReplicatorDef& def) {
  if (Status s = validate(def); !s) return s;
  return Replicator(std::make_unique<ReplicatorImpl>(world, def));
}

Status Replicator::send() { return impl_->send(); }

Result<std::span<const std::span<const std::uint8_t>>> Replicator::packets(ClientId client) const {
  const ReplicatorImpl& r = *impl_;
  if (Status s = r.world.check(client); !s) return s;
  if (client.index >= r.clients.size() || !r.clients[client.index].known ||
      r.clients[client.index].id != client) {
    return std::span<const std::span<const std::uint8_t>>{};
  }
  const ClientState& c = r.clients[client.index];
  return std::span<const std::span<const std::uint8_t>>(c.packets);
}

Status Replicator::receive_ack(ClientId client, std::span<const std::uint8_t> bytes) {
  ReplicatorImpl& r = *impl_;
  if (Status s = r.world.check(client); !s) return s;
  Result<AckPacket> ack = decode_ack(bytes);
  if (!ack) return ack.status();
  if (client.index >= r.clients.size() || r.clients[client.index].id != client) {
    return {ErrorCode::invalid_argument,
            "ack from " + describe(client) + ", which has been sent nothing yet"};
  }
  return r.receive_ack(r.clients[client.index], *ack);
}

Result<std::uint32_t> Replicator::pending(ClientId client) const {
  Result<ClientSendStats> s = client_stats(client);
  if (!s) return s.status();
  return s->pending;
}

Result<ClientSendStats> Replicator::client_stats(ClientId client) const {
  const ReplicatorImpl& r = *impl_;
  if (Status s = r.world.check(client); !s) return s;
  ClientSendStats out;
  if (client.index >= r.clients.size() || r.clients[client.index].id != client ||
      !r.clients[client.index].known) {
    // Not sent to yet: everything the World holds for it waits.
    out.pending = static_cast<std::uint32_t>(r.world.client(client.index).members.size());
    out.catching_up = true;
    return out;
  }
  const ClientState& c = r.clients[client.index];
  out.pending = c.pending;
  out.held = static_cast<std::uint32_t>(c.members.size()) - c.pending;
  out.catching_up = c.catching_up;
  out.bytes = c.bytes;
  out.packets = c.packets_sent;
  out.longest_wait = c.longest_wait;
  out.reliable_next = c.next_reliable;
  out.reliable_acked = c.acked;
  out.round_trip_sends = c.round_trip;
  out.references_waiting = static_cast<std::uint32_t>(c.unresolved.size());
  return out;
}

Status Replicator::set_priority(EntityId entity, float priority) {
  ReplicatorImpl& r = *impl_;
  if (Status s = r.world.check(entity); !s) return s;
  if (!(std::isfinite(priority) && priority >= 0.0f)) {
    return {ErrorCode::invalid_argument, "priority of " + describe(entity) + " is " + format_value(priority) +
                                             ": must be finite and >= 0"};
  }
  r.grow_entities();
  r.priority[entity.index] = priority;
  r.priority_generation[entity.index] = entity.generation;
  r.priorities_set = true;
  return {};
}

Result<float> Replicator::priority(EntityId entity) const {
  const ReplicatorImpl& r = *impl_;
  if (Status s = r.world.check(entity); !s) return s;
  if (entity.index < r.priority.size() && r.priority_generation[entity.index] == entity.generation) {
    return r.priority[entity.index];
  }
  return 1.0f;
}

Status Replicator::send_message(ClientId client, std::span<const std::uint8_t> payload) {
  ReplicatorImpl& r = *impl_;
  if (Status s = r.world.check(client); !s) return s;
  return r.queue_message(
      {.to = ReplicatorImpl::MessageTo::client, .slot = client.index, .generation = client.generation},
      payload);
}

Status Replicator::send_message_to_key(InterestKey key, std::span<const std::uint8_t> payload) {
  if (key.value > kMaxInterestKey || (key.type == InterestKeyType::user && key.value == 0)) {
    return {ErrorCode::invalid_argument, "message key " + std::to_string(key.value) +
                                             " is not a key: Area keys are <= 2^63 - 1, User keys also > 0"};
  }
  const std::uint64_t stored = key.type == InterestKeyType::global ? 0
                               : key.type == InterestKeyType::area ? encode_area_key(key.value)
                                                                   : encode_user_key(key.value);
  return impl_->queue_message({.to = ReplicatorImpl::MessageTo::key, .key = stored}, payload);
}

Status Replicator::send_message_to_space(SpaceId space, std::span<const std::uint8_t> payload) {
  ReplicatorImpl& r = *impl_;
  if (Status s = r.world.check(space); !s) return s;
  return r.queue_message({.to = ReplicatorImpl::MessageTo::space, .slot = space.index}, payload);
}

Status Replicator::note_interaction(ClientId client, EntityId entity) {
  ReplicatorImpl& r = *impl_;
  if (Status s = r.world.check(client); !s) return s;
  if (Status s = r.world.check(entity); !s) return s;
  if (client.index >= r.clients.size() || r.clients[client.index].id != client) return {};
  if (Member* m = find(r.clients[client.index].members, entity))
    m->interacted_until = r.sends + r.def.interaction_sends;
  return {};
}

const SendStats& Replicator::stats() const noexcept { return impl_->stats; }

std::span<const PromiseViolation> Replicator::promise_violations() const noexcept {
  return impl_->violations;
}

std::uint64_t Replicator::send_count() const noexcept { return impl_->sends; }

}  // namespace sightline
