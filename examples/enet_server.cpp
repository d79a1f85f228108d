// A game server over ENet: every connected peer is a client of a World with moving NPCs, sent its
// Replicator's packets unreliably on channel 0 at 20 ticks a second, its acks read from channel 1.
// enet_client.cpp is its other half; examples/enet_pair.sh runs the two.
//   sightline-enet-server-example [--port N (0: any free port)] [--ticks N]
#include <enet/enet.h>
#include <enet/time.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "sightline/sightline.h"

namespace {

constexpr enet_uint8 kStateChannel = 0;
constexpr enet_uint8 kAckChannel = 1;
constexpr enet_uint32 kTickMs = 50;  // ReplicatorDef::tick_seconds' default: 20 sends a second
constexpr std::size_t kMaxPeers = 32;
constexpr int kNpcs = 100;

bool write_entity(sightline::Stream& s, sightline::EntityId e, sightline::StatePart, void* world) {
  auto p = static_cast<sightline::World*>(world)->position(e);
  return p && s.serialize_quantized(p->x, -128.0f, 128.0f, 1.0f / 64.0f) &&
         s.serialize_quantized(p->z, -128.0f, 128.0f, 1.0f / 64.0f);
}

struct Player {
  ENetPeer* peer = nullptr;
  sightline::EntityId viewer;
  sightline::ClientId client;
};

struct Server {
  sightline::World& world;
  sightline::Replicator& replicator;
  std::vector<Player> players;
  std::uint32_t joins = 0;
};

bool report(const sightline::Status& status, const char* what) {
  if (!status) std::fprintf(stderr, "enet-server-example: %s: %s\n", what, status.message().c_str());
  return status.ok();
}

bool join(Server& server, ENetPeer* peer) {
  // Viewers take turns at three places, each with NPCs circling through its view.
  const float slot = static_cast<float>(server.joins++ % 3);
  auto viewer = server.world.create_entity({.x = 35.0f * (slot - 1.0f), .z = slot == 1.0f ? 20.0f : 0.0f});
  if (!report(viewer.status(), "viewer")) return false;
  auto client = server.world.create_client(*viewer);
  if (!report(client.status(), "client")) return false;
  server.players.push_back({.peer = peer, .viewer = *viewer, .client = *client});
  std::printf("enet-server-example: client %u joined\n", client->index);
  return true;
}

// A peer we no longer know (dropped earlier for a bad ack) leaves nothing to clean up.
bool leave(Server& server, ENetPeer* peer) {
  const auto player = std::ranges::find(server.players, peer, &Player::peer);
  if (player == server.players.end()) return true;
  // The viewer outlives its client: a client's viewer cannot be destroyed.
  if (!report(server.world.destroy_client(player->client), "destroy client") ||
      !report(server.world.destroy_entity(player->viewer), "destroy viewer")) {
    return false;
  }
  std::printf("enet-server-example: client %u left\n", player->client.index);
  server.players.erase(player);
  return true;
}

// Acks are the only thing a client sends; one the Replicator refuses ends that client.
bool on_receive(Server& server, ENetPeer* peer, enet_uint8 channel, std::span<const std::uint8_t> bytes) {
  const auto player = std::ranges::find(server.players, peer, &Player::peer);
  if (player == server.players.end() || channel != kAckChannel) return true;
  if (auto status = server.replicator.receive_ack(player->client, bytes); !status) {
    std::printf("enet-server-example: dropping client %u: %s\n", player->client.index,
                status.message().c_str());
    enet_peer_disconnect(peer, 0);
    return leave(server, peer);
  }
  return true;
}

bool handle(Server& server, ENetEvent& event) {
  switch (event.type) {
    case ENET_EVENT_TYPE_CONNECT: return join(server, event.peer);
    case ENET_EVENT_TYPE_DISCONNECT: return leave(server, event.peer);
    case ENET_EVENT_TYPE_RECEIVE: {
      const bool ok = on_receive(server, event.peer, event.channelID,
                                 std::span<const std::uint8_t>(event.packet->data, event.packet->dataLength));
      enet_packet_destroy(event.packet);
      return ok;
    }
    case ENET_EVENT_TYPE_NONE: return true;
  }
  return true;
}

// Handles every event until `deadline` (enet_time_get's clock), or until no player is left when
// `until_empty`.
bool service(ENetHost* host, Server& server, enet_uint32 deadline, bool until_empty) {
  for (enet_uint32 now = enet_time_get(); ENET_TIME_LESS(now, deadline); now = enet_time_get()) {
    if (until_empty && server.players.empty()) return true;
    ENetEvent event;
    const int got = enet_host_service(host, &event, deadline - now);
    if (got < 0) {
      std::fprintf(stderr, "enet-server-example: enet_host_service failed\n");
      return false;
    }
    if (got > 0 && !handle(server, event)) return false;
  }
  return true;
}

bool send_tick(ENetHost* host, Server& server, std::span<const sightline::EntityId> npcs,
               std::uint32_t tick) {
  std::vector<float> xs(npcs.size()), zs(npcs.size());
  for (std::size_t i = 0; i < npcs.size(); ++i) {
    const float n = static_cast<float>(i), radius = 10.0f + 0.6f * n;
    const float angle = 0.7f * n + 0.01f * static_cast<float>((i % 7 + 1) * tick);
    xs[i] = radius * std::cos(angle);
    zs[i] = radius * std::sin(angle);
  }
  if (!report(server.world.set_positions(npcs, xs, zs), "move")) return false;
  server.world.tick();
  if (!report(server.replicator.send(), "send")) return false;
  for (const Player& player : server.players) {
    const auto packets = server.replicator.packets(player.client);
    if (!report(packets.status(), "packets")) return false;
    for (const auto bytes : *packets) {
      // Flag 0: unreliable and sequenced, so ENet drops a packet that arrives after a newer one.
      // One that cannot be queued is lost, which unreliable delivery makes good.
      ENetPacket* packet = enet_packet_create(bytes.data(), bytes.size(), 0);
      if (packet != nullptr && enet_peer_send(player.peer, kStateChannel, packet) != 0)
        enet_packet_destroy(packet);
    }
  }
  enet_host_flush(host);
  return true;
}

int run(std::uint16_t port, std::uint32_t ticks) {
  sightline::WorldDef def = sightline::default_world_def();
  def.enter_radius = 20.0f;
  def.leave_radius = 25.0f;
  auto world = sightline::World::create(def);
  if (!report(world.status(), "world")) return 1;
  std::vector<sightline::EntityId> npcs;
  for (int i = 0; i < kNpcs; ++i) {
    auto npc = world->create_entity({.x = 0.0f, .z = 0.0f});
    if (!report(npc.status(), "npc")) return 1;
    npcs.push_back(*npc);
  }
  sightline::ReplicatorDef rdef = sightline::default_replicator_def();
  rdef.delivery = sightline::Delivery::unreliable;
  rdef.serialize = write_entity;
  rdef.serialize_context = &*world;
  rdef.tick_seconds = static_cast<float>(kTickMs) / 1000.0f;
  auto replicator = sightline::Replicator::create(*world, rdef);
  if (!report(replicator.status(), "replicator")) return 1;

  ENetAddress address{.host = ENET_HOST_ANY, .port = port};
  const bool resolved = enet_address_set_host_ip(&address, "127.0.0.1") == 0;
  const std::unique_ptr<ENetHost, decltype(&enet_host_destroy)> host(
      resolved ? enet_host_create(&address, kMaxPeers, 2, 0, 0) : nullptr, enet_host_destroy);
  ENetAddress bound{};
  if (host == nullptr || enet_socket_get_address(host->socket, &bound) != 0) {
    std::fprintf(stderr, "enet-server-example: cannot listen on 127.0.0.1:%u\n", port);
    return 1;
  }
  std::printf("enet-server-example: port %u\n", bound.port);
  std::fflush(stdout);  // a script waits for this line

  Server server{.world = *world, .replicator = *replicator, .players = {}, .joins = 0};
  enet_uint32 next_tick = enet_time_get();
  for (std::uint32_t tick = 0; tick < ticks; ++tick) {
    next_tick += kTickMs;
    // Between ticks the host waits for events: joins, acks and leaves.
    if (!service(host.get(), server, next_tick, false)) return 1;
    if (!send_tick(host.get(), server, npcs, tick)) return 1;
  }
  // Goodbye: each client hears it as a disconnect, and the server waits up to a second for it.
  for (const Player& player : server.players) enet_peer_disconnect(player.peer, 0);
  if (!service(host.get(), server, enet_time_get() + 1000, true)) return 1;
  std::printf("enet-server-example: %u ticks; clients joined %u, still connected %zu\n", ticks, server.joins,
              server.players.size());
  return 0;
}

bool parse(std::string_view text, auto& value) {
  const auto end = text.data() + text.size();
  return std::from_chars(text.data(), end, value).ptr == end && !text.empty();
}

}  // namespace

int main(int argc, char** argv) {
  std::uint16_t port = 0;
  std::uint32_t ticks = 100;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    const bool ok = i + 1 < argc && ((flag == "--port" && parse(argv[i + 1], port)) ||
                                     (flag == "--ticks" && parse(argv[i + 1], ticks)));
    if (!ok) {
      std::fprintf(stderr, "usage: %s [--port N] [--ticks N]\n", argv[0]);
      return 2;
    }
    ++i;
  }
  if (enet_initialize() != 0) {
    std::fprintf(stderr, "enet-server-example: enet_initialize failed\n");
    return 1;
  }
  const int result = run(port, ticks);
  enet_deinitialize();
  return result;
}
