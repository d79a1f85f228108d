// A game client over ENet, enet_server.cpp's other half: applies each state packet from channel 0
// with a ClientMirror and acks it on channel 1, until the server says goodbye. Exits 0 when it
// received packets, held an entity at some point, and saw no anomaly and no malformed packet.
//   sightline-enet-client-example --port N
#include <enet/enet.h>
#include <enet/time.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <memory>
#include <string_view>

#include "sightline/sightline.h"

namespace {

constexpr enet_uint8 kStateChannel = 0;
constexpr enet_uint8 kAckChannel = 1;
constexpr enet_uint32 kTimeoutMs = 30000;

// The server's serializer, read back: the mirror refuses a packet whose payloads do not read.
bool check_entity(sightline::EntityId, sightline::StatePart, std::span<const std::uint8_t> payload, void*) {
  float x = 0.0f, z = 0.0f;
  sightline::Stream s = sightline::Stream::reader(payload);
  return s.serialize_quantized(x, -128.0f, 128.0f, 1.0f / 64.0f) &&
         s.serialize_quantized(z, -128.0f, 128.0f, 1.0f / 64.0f) && s.rest_is_zero();
}

struct Tally {
  std::size_t most_held = 0;
  std::uint64_t anomalies = 0;
  std::uint64_t malformed = 0;
};

void apply(sightline::ClientMirror& mirror, ENetPeer* server, std::span<const std::uint8_t> bytes,
           Tally& tally) {
  if (auto status = mirror.receive(bytes); !status) {
    std::fprintf(stderr, "enet-client-example: refused a packet: %s\n", status.message().c_str());
    ++tally.malformed;
    return;
  }
  for (const sightline::Anomaly& anomaly : mirror.anomalies()) {
    std::fprintf(stderr, "enet-client-example: anomaly %s at entity %u\n",
                 sightline::anomaly_kind_name(anomaly.kind), anomaly.entity.index);
  }
  tally.anomalies += mirror.anomalies().size();
  tally.most_held = std::max(tally.most_held, mirror.held_count());
  // Unreliable, like the states: a lost ack is made good by the next one.
  std::array<std::uint8_t, sightline::kAckBytes> ack{};
  sightline::encode_ack(mirror.ack(), ack);
  ENetPacket* packet = enet_packet_create(ack.data(), ack.size(), 0);
  if (packet != nullptr && enet_peer_send(server, kAckChannel, packet) != 0) enet_packet_destroy(packet);
}

int run(std::uint16_t port) {
  sightline::MirrorDef mdef = sightline::default_mirror_def();
  mdef.delivery = sightline::Delivery::unreliable;
  mdef.check = check_entity;
  auto mirror = sightline::ClientMirror::create(mdef);
  if (!mirror) {
    std::fprintf(stderr, "enet-client-example: %s\n", mirror.status().message().c_str());
    return 1;
  }
  const std::unique_ptr<ENetHost, decltype(&enet_host_destroy)> host(enet_host_create(nullptr, 1, 2, 0, 0),
                                                                     enet_host_destroy);
  ENetAddress address{.host = ENET_HOST_ANY, .port = port};
  ENetPeer* server = nullptr;
  if (host == nullptr || enet_address_set_host_ip(&address, "127.0.0.1") != 0 ||
      (server = enet_host_connect(host.get(), &address, 2, 0)) == nullptr) {
    std::fprintf(stderr, "enet-client-example: cannot connect to 127.0.0.1:%u\n", port);
    return 1;
  }

  Tally tally;
  const enet_uint32 deadline = enet_time_get() + kTimeoutMs;
  for (bool open = true; open;) {
    const enet_uint32 now = enet_time_get();
    if (!ENET_TIME_LESS(now, deadline)) {
      std::fprintf(stderr, "enet-client-example: the server did not finish within %u ms\n", kTimeoutMs);
      return 1;
    }
    ENetEvent event;
    const int got = enet_host_service(host.get(), &event, deadline - now);
    if (got < 0) return 1;
    if (got == 0) continue;
    if (event.type == ENET_EVENT_TYPE_DISCONNECT) open = false;
    if (event.type == ENET_EVENT_TYPE_RECEIVE) {
      if (event.channelID == kStateChannel) {
        apply(*mirror, server, std::span<const std::uint8_t>(event.packet->data, event.packet->dataLength),
              tally);
      }
      enet_packet_destroy(event.packet);
    }
  }

  const auto& stats = mirror->stats();
  std::printf(
      "enet-client-example: held %zu entities at the end (%zu at most); %llu packets, %llu anomalies\n",
      mirror->held_count(), tally.most_held, static_cast<unsigned long long>(stats.packets),
      static_cast<unsigned long long>(tally.anomalies));
  return stats.packets > 0 && tally.most_held > 0 && tally.anomalies == 0 && tally.malformed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint16_t port = 0;
  const std::string_view value = argc == 3 ? argv[2] : "";
  if (argc != 3 || std::string_view(argv[1]) != "--port" ||
      std::from_chars(value.data(), value.data() + value.size(), port).ptr != value.data() + value.size() ||
      port == 0) {
    std::fprintf(stderr, "usage: %s --port N\n", argv[0]);
    return 2;
  }
  if (enet_initialize() != 0) {
    std::fprintf(stderr, "enet-client-example: enet_initialize failed\n");
    return 1;
  }
  const int result = run(port);
  enet_deinitialize();
  return result;
}
