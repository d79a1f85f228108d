// Sightline over real UDP sockets, in one process: a server socket and three client sockets on
// 127.0.0.1. The server ticks a World and sends each client its Replicator's packets, one datagram
// each, under unreliable delivery; each client applies its datagrams with a ClientMirror and acks
// them. One server datagram in ten is dropped on purpose; after a few clean ticks every client must
// hold exactly the World's interest set for it, without a single anomaly.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "sightline/sightline.h"

namespace {

constexpr int kClients = 3;
constexpr int kNpcs = 100;
constexpr int kLossyTicks = 200;
constexpr int kCleanTicks = 10;  // more than a lost spawn takes to be resent (resend_sends is 4)

// The game's state: a position, quantized to 1/64 m. Written on the server, read by the client.
bool serialize_position(sightline::Stream& s, float& x, float& z) {
  return s.serialize_quantized(x, -128.0f, 128.0f, 1.0f / 64.0f) &&
         s.serialize_quantized(z, -128.0f, 128.0f, 1.0f / 64.0f);
}

bool write_entity(sightline::Stream& s, sightline::EntityId e, sightline::StatePart, void* world) {
  auto p = static_cast<sightline::World*>(world)->position(e);
  return p && serialize_position(s, p->x, p->z);
}

// Bytes from the network: the mirror refuses a packet whose payloads do not read back.
bool check_entity(sightline::EntityId, sightline::StatePart, std::span<const std::uint8_t> payload, void*) {
  float x = 0.0f, z = 0.0f;
  sightline::Stream s = sightline::Stream::reader(payload);
  return serialize_position(s, x, z) && s.rest_is_zero();
}

// A non-blocking UDP socket on 127.0.0.1, at a port the kernel picks (read back into `address`).
int open_socket(std::vector<int>& sockets, sockaddr_in& address) {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  sockets.push_back(fd);
  address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  auto* a = reinterpret_cast<sockaddr*>(&address);
  return bind(fd, a, size) == 0 && getsockname(fd, a, &size) == 0 ? fd : -1;
}

bool send_datagram(int fd, std::span<const std::uint8_t> bytes, const sockaddr_in& to) {
  return sendto(fd, bytes.data(), bytes.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to) ==
         static_cast<ssize_t>(bytes.size());
}

// The next datagram waiting on `fd`: its size, 0 when none is waiting, -1 on an error.
ssize_t receive_datagram(int fd, std::span<std::uint8_t> buffer, sockaddr_in& from) {
  socklen_t size = sizeof from;
  const ssize_t got =
      recvfrom(fd, buffer.data(), buffer.size(), 0, reinterpret_cast<sockaddr*>(&from), &size);
  return got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : got;
}

bool same_address(const sockaddr_in& a, const sockaddr_in& b) {
  return a.sin_port == b.sin_port && a.sin_addr.s_addr == b.sin_addr.s_addr;
}

std::string os_error(const char* call) { return std::string(call) + ": " + std::strerror(errno); }

struct Client {
  int socket = -1;
  sockaddr_in address{};
  sightline::ClientId id;
  sightline::ClientMirror mirror;
};

// The client's side of a tick: applies every datagram waiting, then acks them. "" or what failed.
std::string receive_and_ack(Client& client, const sockaddr_in& server, std::span<std::uint8_t> buffer) {
  sockaddr_in from{};
  ssize_t size = 0;
  int received = 0;
  while ((size = receive_datagram(client.socket, buffer, from)) > 0) {
    if (!same_address(from, server)) continue;  // not from our server
    if (auto status = client.mirror.receive(buffer.first(static_cast<std::size_t>(size))); !status) {
      return "receive: " + status.message();
    }
    if (!client.mirror.anomalies().empty()) {
      return std::string("anomaly: ") + sightline::anomaly_kind_name(client.mirror.anomalies()[0].kind);
    }
    ++received;
  }
  if (size < 0) return os_error("recvfrom");
  if (received == 0) return {};
  std::array<std::uint8_t, sightline::kAckBytes> ack{};
  sightline::encode_ack(client.mirror.ack(), ack);
  return send_datagram(client.socket, ack, server) ? "" : os_error("sendto");
}

int fail(const std::string& why) {
  std::fprintf(stderr, "udp-loop: %s\n", why.c_str());
  return 1;
}

int run(std::vector<int>& sockets) {
  sightline::WorldDef def = sightline::default_world_def();
  def.enter_radius = 20.0f;
  def.leave_radius = 25.0f;
  auto world = sightline::World::create(def);
  if (!world) return fail("world: " + world.status().message());
  std::vector<sightline::EntityId> npcs;
  for (int i = 0; i < kNpcs; ++i) {
    auto npc = world->create_entity({.x = 0.0f, .z = 0.0f});
    if (!npc) return fail("npc: " + npc.status().message());
    npcs.push_back(*npc);
  }
  sightline::ReplicatorDef rdef = sightline::default_replicator_def();
  rdef.delivery = sightline::Delivery::unreliable;
  rdef.serialize = write_entity;
  rdef.serialize_context = &*world;
  auto replicator = sightline::Replicator::create(*world, rdef);
  if (!replicator) return fail("replicator: " + replicator.status().message());

  sockaddr_in server_address{};
  const int server = open_socket(sockets, server_address);
  if (server < 0) return fail(os_error("socket"));
  sightline::MirrorDef mdef = sightline::default_mirror_def();
  mdef.delivery = sightline::Delivery::unreliable;
  mdef.check = check_entity;
  std::vector<Client> clients;
  for (int i = 0; i < kClients; ++i) {
    const float x = 35.0f * static_cast<float>(i - 1), z = 20.0f * static_cast<float>(i % 2);
    auto viewer = world->create_entity({.x = x, .z = z});
    if (!viewer) return fail("viewer: " + viewer.status().message());
    auto id = world->create_client(*viewer);
    auto mirror = sightline::ClientMirror::create(mdef);
    if (!id || !mirror) return fail("client: " + id.status().message() + mirror.status().message());
    clients.push_back({.socket = -1, .address = {}, .id = *id, .mirror = std::move(*mirror)});
    clients.back().socket = open_socket(sockets, clients.back().address);
    if (clients.back().socket < 0) return fail(os_error("socket"));
  }

  std::mt19937 network(21);  // a stand-in for a lossy network, seeded: every run drops the same
  std::array<std::uint8_t, sightline::kMaxPacketBytes> buffer{};
  std::vector<float> xs(npcs.size()), zs(npcs.size());
  long sent = 0, dropped = 0, acks = 0, resends = 0;
  for (int tick = 0; tick < kLossyTicks + kCleanTicks; ++tick) {
    // NPCs circle the origin at different radii and speeds, into and out of the clients' views.
    for (std::size_t i = 0; i < npcs.size(); ++i) {
      const float n = static_cast<float>(i), radius = 10.0f + 0.6f * n;
      const float angle = 0.7f * n + 0.01f * static_cast<float>((i % 7 + 1) * static_cast<std::size_t>(tick));
      xs[i] = radius * std::cos(angle);
      zs[i] = radius * std::sin(angle);
    }
    if (auto status = world->set_positions(npcs, xs, zs); !status) return fail("move: " + status.message());
    world->tick();
    if (auto status = replicator->send(); !status) return fail("send: " + status.message());
    resends += static_cast<long>(replicator->stats().resends);
    for (const Client& client : clients) {
      const auto packets = replicator->packets(client.id);
      if (!packets) return fail("packets: " + packets.status().message());
      for (const auto packet : *packets) {
        ++sent;
        if (tick < kLossyTicks && network() % 10 == 0) {
          ++dropped;
          continue;
        }
        if (!send_datagram(server, packet, client.address)) return fail(os_error("sendto"));
      }
    }
    for (Client& client : clients) {
      if (auto error = receive_and_ack(client, server_address, buffer); !error.empty()) return fail(error);
    }
    // The server knows a client by the address its datagrams come from.
    sockaddr_in from{};
    ssize_t size = 0;
    while ((size = receive_datagram(server, buffer, from)) > 0) {
      const auto client =
          std::ranges::find_if(clients, [&](const Client& c) { return same_address(c.address, from); });
      if (client == clients.end()) continue;  // not one of ours
      const auto bytes = std::span(buffer).first(static_cast<std::size_t>(size));
      if (auto status = replicator->receive_ack(client->id, bytes); !status) {
        return fail("ack: " + status.message());
      }
      ++acks;
    }
    if (size < 0) return fail(os_error("recvfrom"));
  }

  // Loopback may hand a datagram over a moment after sendto returns: wait for each client's last.
  for (Client& client : clients) {
    const auto server_side = replicator->client_stats(client.id);
    if (!server_side) return fail("client stats: " + server_side.status().message());
    while (client.mirror.ack().latest_sequence + 1 < server_side->packets) {
      pollfd wait{.fd = client.socket, .events = POLLIN, .revents = 0};
      if (poll(&wait, 1, 1000) <= 0) return fail("a client's last datagrams never came");
      if (auto error = receive_and_ack(client, server_address, buffer); !error.empty()) return fail(error);
    }
  }

  std::printf("udp-loop: %d ticks (%d lossy), %d npcs, %d clients\n", kLossyTicks + kCleanTicks, kLossyTicks,
              kNpcs, kClients);
  std::printf("udp-loop: server sent %ld datagrams, dropped %ld, resent %ld spawns and despawns; %ld acks\n",
              sent, dropped, resends, acks);
  for (const Client& client : clients) {
    // The World's set never holds the client's own viewer, and neither does the mirror.
    const auto interest = world->interest_set(client.id);
    if (!interest) return fail("interest set: " + interest.status().message());
    const auto held = client.mirror.held();
    const auto& stats = client.mirror.stats();
    std::printf("udp-loop: client %u holds %zu of %zu; %llu packets, %llu enters, %llu exits\n",
                client.id.index, held.size(), interest->size(),
                static_cast<unsigned long long>(stats.packets), static_cast<unsigned long long>(stats.enters),
                static_cast<unsigned long long>(stats.exits));
    if (client.mirror.interest().pending != 0) return fail("a client still waits for entities");
    if (!std::ranges::equal(held, *interest)) return fail("a client holds another set than the World's");
    if (stats.anomalies != 0 || stats.rejected != 0) return fail("a client saw anomalies or bad packets");
  }
  if (dropped == 0) return fail("no datagram was dropped: the loss was not exercised");
  std::printf("udp-loop: ok\n");
  return 0;
}

}  // namespace

int main() {
  std::vector<int> sockets;
  const int result = run(sockets);
  for (const int fd : sockets) close(fd);
  return result;
}
