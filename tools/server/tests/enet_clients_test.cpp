// sightline-server --transport enet end to end, against the real binary with ENet clients: the
// welcome says the stream is unreliable, a client that acks follows it with no anomaly and moves
// its viewer; each bad frame closes that client alone with a `close` frame naming it; the
// connection limit answers "server full"; a client that stops answering is closed as idle; a
// stop says "server shutting down" to whoever is left; the stats count each close.
#include <arpa/inet.h>
#include <enet/enet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "frames.h"
#include "server_process.h"
#include "sightline/client_mirror.h"
#include "sightline/protocol.h"

namespace sightline::demo {
namespace {

using namespace std::chrono_literals;
using Bytes = std::vector<std::uint8_t>;
using Clock = std::chrono::steady_clock;

class EnetLibrary : public ::testing::Environment {
 public:
  void SetUp() override { ASSERT_EQ(enet_initialize(), 0); }
  void TearDown() override { enet_deinitialize(); }
};
const auto* const kEnet = ::testing::AddGlobalTestEnvironment(new EnetLibrary);

// One ENet connection to the server, serviced only when the test asks.
class EnetClient {
 public:
  EnetClient() : host_(enet_host_create(nullptr, 1, kEnetChannels, 0, 0)) {}
  ~EnetClient() {
    if (peer_ != nullptr) enet_peer_reset(peer_);
    if (host_ != nullptr) enet_host_destroy(host_);
  }
  EnetClient(const EnetClient&) = delete;
  EnetClient& operator=(const EnetClient&) = delete;

  bool connect(std::uint16_t port) {
    if (host_ == nullptr) return false;
    ENetAddress address{};
    enet_address_set_host(&address, "127.0.0.1");
    address.port = port;
    peer_ = enet_host_connect(host_, &address, kEnetChannels, 0);
    return peer_ != nullptr && pump_until([this] { return connected_; }, 5s);
  }

  void send(const Bytes& frame, bool reliable = true) {
    ENetPacket* packet =
        enet_packet_create(frame.data(), frame.size(), reliable ? ENET_PACKET_FLAG_RELIABLE : 0);
    ASSERT_EQ(enet_peer_send(peer_, reliable ? kEnetStreamChannel : kEnetInputChannel, packet), 0);
    enet_host_flush(host_);
  }

  // Services the connection until `done` or the timeout; false on timeout.
  bool pump_until(const std::function<bool()>& done, Clock::duration timeout) {
    const auto deadline = Clock::now() + timeout;
    while (!done()) {
      if (Clock::now() >= deadline) return false;
      ENetEvent event{};
      if (enet_host_service(host_, &event, 5) <= 0) continue;
      switch (event.type) {
        case ENET_EVENT_TYPE_CONNECT: connected_ = true; break;
        case ENET_EVENT_TYPE_RECEIVE:
          on_frame(Bytes(event.packet->data, event.packet->data + event.packet->dataLength));
          enet_packet_destroy(event.packet);
          break;
        case ENET_EVENT_TYPE_DISCONNECT:
          disconnected_ = true;
          peer_ = nullptr;
          break;
        case ENET_EVENT_TYPE_NONE: break;
      }
    }
    return true;
  }

  bool wait_closed() {
    return pump_until([this] { return disconnected_; }, 10s);
  }

  const std::optional<Welcome>& welcome() const { return welcome_; }
  const std::vector<TickFrame>& ticks() const { return ticks_; }
  const std::optional<std::string>& close_reason() const { return close_reason_; }
  bool disconnected() const { return disconnected_; }
  std::size_t anomalies = 0;
  std::size_t held() const { return mirror_ ? mirror_->held_count() : 0; }
  // Under unreliable delivery, ack each tick frame as the bots do.
  bool ack = false;

 private:
  void on_frame(Bytes frame) {
    switch (frame_type(frame)) {
      case kWelcomeFrame: {
        Result<Welcome> w = read_welcome(frame);
        ASSERT_TRUE(w.ok()) << w.status().message();
        welcome_ = *w;
        MirrorDef def;
        def.delivery = (w->server_flags & kServerUnreliable) != 0 ? Delivery::unreliable : Delivery::reliable;
        mirror_.emplace(std::move(ClientMirror::create(def)).value());
        break;
      }
      case kTickFrame: {
        frames_.push_back(std::move(frame));  // the tick's packets view it
        Result<TickFrame> t = read_tick(frames_.back());
        ASSERT_TRUE(t.ok()) << t.status().message();
        for (const auto packet : t->packets) {
          ASSERT_TRUE(mirror_->receive(packet, nullptr).ok());
          anomalies += mirror_->anomalies().size();
        }
        ticks_.push_back(*t);
        if (ack) send(encode_ack(0, mirror_->ack()), false);
        break;
      }
      case kCloseFrame: {
        Result<std::string> reason = read_close(frame);
        ASSERT_TRUE(reason.ok()) << reason.status().message();
        close_reason_ = *reason;
        break;
      }
      default: break;
    }
  }

  ENetHost* host_;
  ENetPeer* peer_ = nullptr;
  bool connected_ = false;
  bool disconnected_ = false;
  std::optional<Welcome> welcome_;
  std::optional<ClientMirror> mirror_;
  std::vector<Bytes> frames_;
  std::vector<TickFrame> ticks_;
  std::optional<std::string> close_reason_;
};

TEST(EnetServer, AnAckingClientFollowsTheUnreliableStream) {
  ServerProcess server({"--transport", "enet", "--entities", "60"});
  ASSERT_NE(server.port(), 0);
  EnetClient client;
  client.ack = true;
  ASSERT_TRUE(client.connect(server.port()));
  ASSERT_TRUE(client.pump_until([&] { return client.ticks().size() >= 10; }, 10s));
  ASSERT_TRUE(client.welcome().has_value());
  EXPECT_NE(client.welcome()->server_flags & kServerUnreliable, 0);
  EXPECT_GT(client.held(), 0u);

  // A move shows in the tick frames' viewer position from the next tick.
  client.send(encode_move(1.25f, 2.5f), false);
  ASSERT_TRUE(client.pump_until(
      [&] { return client.ticks().back().viewer_x == 1.25f && client.ticks().back().viewer_z == 2.5f; }, 5s));
  EXPECT_EQ(client.anomalies, 0u);
  EXPECT_FALSE(client.disconnected());

  server.terminate();
  ASSERT_TRUE(client.wait_closed());
  EXPECT_EQ(client.close_reason(), "server shutting down");
  nlohmann::json stats;
  EXPECT_EQ(server.stop(&stats), 0);
  EXPECT_EQ(stats["closes"]["shutdown"], 1);
}

struct BadFrame {
  const char* name;
  Bytes frame;
  const char* reason;  // the start of the close frame's reason
};

// GET `target` from 127.0.0.1:port over plain HTTP/1.1: the status code and the body; {0, ""}
// when no answer came.
// A TCP connection to 127.0.0.1:port whose reads give up after 5 s (a console that never
// answers fails the test rather than hangs it); -1 when it cannot connect.
int connect_tcp(std::uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  const timeval limit{.tv_sec = 5, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) return fd;
  close(fd);
  return -1;
}

std::pair<int, std::string> http_get(std::uint16_t port, const std::string& target) {
  const int fd = connect_tcp(port);
  if (fd < 0) return {0, ""};
  std::string answer;
  const std::string request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
    char buffer[4096];
    for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;)
      answer.append(buffer, static_cast<std::size_t>(n));
  }
  close(fd);
  const std::size_t body = answer.find("\r\n\r\n");
  if (!answer.starts_with("HTTP/1.1 ") || body == std::string::npos) return {0, answer};
  return {std::stoi(answer.substr(9, 3)), answer.substr(body + 4)};
}

// --http-port: /metrics and the debug console over HTTP beside the UDP port, the same pages as
// the WebSocket transport's; anything else 404.
TEST(EnetServer, MetricsAndTheDebugConsoleOnTheHttpPort) {
  ServerProcess server({"--transport", "enet", "--entities", "30", "--http-port", "0", "--debug-http"});
  ASSERT_NE(server.port(), 0);
  const std::uint16_t http_port = server.http_port();
  ASSERT_NE(http_port, 0);
  EnetClient client;
  client.ack = true;
  ASSERT_TRUE(client.connect(server.port()));
  ASSERT_TRUE(client.pump_until([&] { return client.ticks().size() >= 5; }, 10s));
  // The HTTP console is polled by the same loop: answers come while the client is served.
  std::pair<int, std::string> metrics;
  std::thread scrape([&] { metrics = http_get(http_port, "/metrics"); });
  ASSERT_TRUE(client.pump_until([&] { return client.ticks().size() >= 10; }, 10s));
  scrape.join();
  EXPECT_EQ(metrics.first, 200) << metrics.second;
  EXPECT_NE(metrics.second.find("\nsightline_connections 1\n"), std::string::npos) << metrics.second;
  EXPECT_NE(metrics.second.find("sightline_tick_seconds_count "), std::string::npos) << metrics.second;
  std::pair<int, std::string> clients;
  std::thread ask([&] { clients = http_get(http_port, "/debug/clients"); });
  ASSERT_TRUE(client.pump_until([&] { return client.ticks().size() >= 15; }, 10s));
  ask.join();
  EXPECT_EQ(clients.first, 200) << clients.second;
  const nlohmann::json j = nlohmann::json::parse(clients.second, nullptr, false);
  ASSERT_TRUE(j.contains("clients")) << clients.second;
  EXPECT_EQ(j["clients"].size(), 1u);
  std::pair<int, std::string> other;
  std::thread miss([&] { other = http_get(http_port, "/index.html"); });
  ASSERT_TRUE(client.pump_until([&] { return client.ticks().size() >= 20; }, 10s));
  miss.join();
  EXPECT_EQ(other.first, 404);
  // Bytes that are not UTF-8, echoed in the refusal, neither end the server nor break its JSON.
  std::pair<int, std::string> odd;
  std::thread ask_odd([&] { odd = http_get(http_port, "/debug/why?connection=1&entity=\xff\xfe"); });
  ASSERT_TRUE(client.pump_until([&] { return client.ticks().size() >= 25; }, 10s));
  ask_odd.join();
  EXPECT_EQ(odd.first, 400) << odd.second;
  EXPECT_TRUE(nlohmann::json::parse(odd.second, nullptr, false).contains("error")) << odd.second;
  EXPECT_EQ(client.anomalies, 0u);
  nlohmann::json stats;
  server.terminate();
  ASSERT_TRUE(client.wait_closed());
  EXPECT_EQ(server.stop(&stats), 0);
}

// The console serves 32 connections at once; one more waits in the backlog until a session ends
// (here the idle ones, cut 2 s after they sent nothing), and is then answered.
TEST(EnetServer, TheHttpConsoleServesBeyondItsBoundOnceASessionEnds) {
  ServerProcess server({"--transport", "enet", "--entities", "10", "--http-port", "0"});
  const std::uint16_t http_port = server.http_port();
  ASSERT_NE(http_port, 0);
  std::vector<int> idle;
  for (int i = 0; i < 32; ++i) {
    idle.push_back(connect_tcp(http_port));
    ASSERT_GE(idle.back(), 0);
  }
  const auto [status, body] = http_get(http_port, "/metrics");
  EXPECT_EQ(status, 200) << body;
  // The idle connections were closed by the server (their read deadline), not left open.
  char byte = 0;
  EXPECT_EQ(read(idle.front(), &byte, 1), 0);
  for (const int fd : idle) close(fd);
  EXPECT_EQ(server.stop(nullptr), 0);
}

TEST(EnetServer, EachBadFrameClosesItsClientAloneWithAReason) {
  ServerProcess server({"--transport", "enet", "--entities", "20"});
  ASSERT_NE(server.port(), 0);
  EnetClient good;
  good.ack = true;
  ASSERT_TRUE(good.connect(server.port()));
  Bytes bad_ack = encode_ack(0, {});
  bad_ack[5] = 0x7f;  // not the wire version
  const std::vector<BadFrame> cases = {
      {"large", Bytes(65, kMoveFrame), "frame too large"},
      {"fragmented", Bytes(3000, kMoveFrame), "frame too large"},
      {"unknown type", {9}, "frame type 9 is unknown"},
      {"short move", {kMoveFrame, 0, 0}, "move frame is 3 bytes"},
      {"bad ack", bad_ack, "ack frame: "},
      {"why without debug view", encode_why({1, 1}), "why frame"},
  };
  for (const BadFrame& c : cases) {
    SCOPED_TRACE(c.name);
    EnetClient bad;
    ASSERT_TRUE(bad.connect(server.port()));
    bad.send(c.frame);
    ASSERT_TRUE(bad.wait_closed());
    ASSERT_TRUE(bad.close_reason().has_value());
    EXPECT_EQ(bad.close_reason()->rfind(c.reason, 0), 0u) << *bad.close_reason();
  }
  // A flood: more frames than the bucket holds.
  EnetClient flood;
  ASSERT_TRUE(flood.connect(server.port()));
  for (int i = 0; i < 100; ++i) flood.send(encode_move(1.0f, 1.0f), false);
  ASSERT_TRUE(flood.wait_closed());
  EXPECT_EQ(flood.close_reason(), "too many frames");

  // The good client went on all along.
  const std::size_t before = good.ticks().size();
  ASSERT_TRUE(good.pump_until([&] { return good.ticks().size() >= before + 5; }, 5s));
  EXPECT_FALSE(good.disconnected());
  EXPECT_EQ(good.anomalies, 0u);

  nlohmann::json stats;
  EXPECT_EQ(server.stop(&stats), 0);
  EXPECT_EQ(stats["closes"]["frame too large"], 2);
  EXPECT_EQ(stats["closes"]["refused frame"], 4);
  EXPECT_EQ(stats["closes"]["too many frames"], 1);
}

TEST(EnetServer, AcksHaveAnAllowanceOfTheirOwn) {
  // 60 ticks a second: an ack for each, and 20 moves, are 80 frames a second, above the 60 the
  // other frames may use; the acks' own allowance is twice the tick rate.
  ServerProcess server({"--transport", "enet", "--tick-rate", "60", "--entities", "20"});
  ASSERT_NE(server.port(), 0);
  EnetClient client;
  client.ack = true;
  ASSERT_TRUE(client.connect(server.port()));
  const auto end = Clock::now() + 4s;
  while (Clock::now() < end && !client.disconnected()) {
    client.send(encode_move(2.0f, 2.0f), false);
    (void)client.pump_until([] { return false; }, 50ms);
  }
  EXPECT_FALSE(client.disconnected()) << client.close_reason().value_or("");
  EXPECT_GT(client.ticks().size(), 150u);
}

TEST(EnetServer, APacketLargerThanAFrameIsRefusedBeforeItIsAssembled) {
  ServerProcess server({"--transport", "enet", "--entities", "20"});
  ASSERT_NE(server.port(), 0);
  EnetClient good;
  ASSERT_TRUE(good.connect(server.port()));
  EnetClient huge;
  ASSERT_TRUE(huge.connect(server.port()));
  huge.send(Bytes(1 << 20, kMoveFrame));  // 1 MiB in some 760 fragments
  (void)huge.pump_until([] { return false; }, 1s);
  // Never assembled, so never refused as a frame: ENet dropped its fragments on arrival.
  EXPECT_FALSE(huge.close_reason().has_value());
  const std::size_t before = good.ticks().size();
  ASSERT_TRUE(good.pump_until([&] { return good.ticks().size() >= before + 10; }, 5s));
  nlohmann::json stats;
  EXPECT_EQ(server.stop(&stats), 0);
  EXPECT_EQ(stats["closes"].count("frame too large"), 0u);
}

TEST(EnetServer, BeyondTheLimitAClientIsToldTheServerIsFull) {
  ServerProcess server({"--transport", "enet", "--max-connections", "1"});
  ASSERT_NE(server.port(), 0);
  EnetClient first;
  ASSERT_TRUE(first.connect(server.port()));
  ASSERT_TRUE(first.pump_until([&] { return first.welcome().has_value(); }, 5s));
  EnetClient second;
  ASSERT_TRUE(second.connect(server.port()));
  ASSERT_TRUE(second.wait_closed());
  EXPECT_EQ(second.close_reason(), "server full");
  EXPECT_FALSE(second.welcome().has_value());
  ASSERT_TRUE(first.pump_until([&] { return first.ticks().size() >= 3; }, 5s));
  nlohmann::json stats;
  EXPECT_EQ(server.stop(&stats), 0);
  EXPECT_EQ(stats["upgrades_full"], 1);
  EXPECT_EQ(stats["connections_peak"], 1);
}

TEST(EnetServer, AClientThatStopsAnsweringIsClosedAsIdle) {
  ServerProcess server({"--transport", "enet", "--idle-seconds", "1"});
  ASSERT_NE(server.port(), 0);
  {
    EnetClient silent;
    ASSERT_TRUE(silent.connect(server.port()));
    ASSERT_TRUE(silent.pump_until([&] { return silent.welcome().has_value(); }, 5s));
    // Not serviced from here: no acknowledgement of the server's reliable pings.
    std::this_thread::sleep_for(4s);
  }
  nlohmann::json stats;
  EXPECT_EQ(server.stop(&stats), 0);
  EXPECT_EQ(stats["closes"]["idle"], 1);
}

}  // namespace
}  // namespace sightline::demo
