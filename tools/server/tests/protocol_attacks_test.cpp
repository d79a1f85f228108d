// sightline-server against clients that speak WebSocket byte by byte: what Beast alone let
// through (issue 19's attack run, B2-B4 and B9-B11), each refused or bounded, each case a test
// that failed before its fix.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "client_frames.h"
#include "frames.h"
#include "server_process.h"

namespace sightline::demo {
namespace {

using namespace std::chrono_literals;
using Bytes = std::vector<std::uint8_t>;
using test::client_frame;
using test::close_payload;
using Clock = std::chrono::steady_clock;

constexpr const char* kGoodKey = "dGhlIHNhbXBsZSBub25jZQ==";  // RFC 6455's example

// A server frame as read off the wire (server frames are not masked).
struct ServerFrame {
  std::uint8_t opcode = 0;
  bool fin = false;
  Bytes payload;
};

// A blocking TCP client that writes and reads raw bytes, each read with a deadline.
class RawClient {
 public:
  RawClient() = default;
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;
  ~RawClient() {
    if (fd_ >= 0) ::close(fd_);
  }

  bool connect(std::uint16_t port, int receive_buffer_bytes = 0) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) return false;
    if (receive_buffer_bytes > 0)
      setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer_bytes, sizeof receive_buffer_bytes);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return ::connect(fd_, reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0;
  }

  bool send(const Bytes& bytes) { return send(std::string(bytes.begin(), bytes.end())); }
  bool send(const std::string& bytes) {
    std::size_t at = 0;
    while (at < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
      if (n <= 0) return false;
      at += static_cast<std::size_t>(n);
    }
    return true;
  }

  static std::string upgrade_request(const std::string& key, const std::string& more_headers) {
    return fmt::format(
        "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: {}\r\nSec-WebSocket-Version: 13\r\n{}\r\n",
        key, more_headers);
  }

  // Sends the upgrade (and `behind`, in the same write); the response's status code, 0 if none
  // came within the limit.
  int upgrade(const Bytes& behind = {}, const std::string& key = kGoodKey,
              std::chrono::milliseconds limit = 5s, const std::string& more_headers = "") {
    std::string request = upgrade_request(key, more_headers);
    request.append(behind.begin(), behind.end());
    if (!send(request)) return 0;
    const auto deadline = Clock::now() + limit;
    std::size_t end = std::string::npos;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!fill(deadline)) return 0;
    }
    const std::string head = buffer_.substr(0, end + 4);
    buffer_.erase(0, end + 4);
    response_ = head;
    return head.size() > 12 ? std::stoi(head.substr(9, 3)) : 0;
  }
  const std::string& response() const { return response_; }

  // The next frame, or nullopt when the connection ended or the limit passed.
  std::optional<ServerFrame> read_frame(std::chrono::milliseconds limit = 5s) {
    const auto deadline = Clock::now() + limit;
    auto need = [&](std::size_t n) {
      while (buffer_.size() < n) {
        if (!fill(deadline)) return false;
      }
      return true;
    };
    if (!need(2)) return std::nullopt;
    const auto b0 = static_cast<std::uint8_t>(buffer_[0]);
    const auto b1 = static_cast<std::uint8_t>(buffer_[1]);
    std::size_t header = 2;
    std::uint64_t length = b1 & 0x7f;
    if (length == 126) header = 4;
    if (length == 127) header = 10;
    if (!need(header)) return std::nullopt;
    if (header > 2) {
      length = 0;
      for (std::size_t i = 2; i < header; ++i) length = length << 8 | static_cast<std::uint8_t>(buffer_[i]);
    }
    if (!need(header + length)) return std::nullopt;
    ServerFrame frame{static_cast<std::uint8_t>(b0 & 0x0f), (b0 & 0x80) != 0,
                      Bytes(buffer_.begin() + static_cast<std::ptrdiff_t>(header),
                            buffer_.begin() + static_cast<std::ptrdiff_t>(header + length))};
    buffer_.erase(0, header + length);
    return frame;
  }

  // Reads frames until a close frame (returned) or the end of the connection or the limit
  // (nullopt). `frames` counts what came before it.
  std::optional<ServerFrame> read_until_close(std::chrono::milliseconds limit,
                                              std::size_t* frames = nullptr) {
    const auto deadline = Clock::now() + limit;
    while (Clock::now() < deadline) {
      auto frame = read_frame(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
      if (!frame) return std::nullopt;
      if (frame->opcode == 0x8) return frame;
      if (frames == nullptr) continue;
      // The demo's frames, those of a bundle each counted.
      std::vector<std::span<const std::uint8_t>> bundled;
      if (frame_type(frame->payload) != kBundleFrame) {
        ++*frames;
      } else if (const Status s = read_bundle(frame->payload, bundled); s) {
        *frames += bundled.size();
      } else {
        ADD_FAILURE() << s.message();
      }
    }
    return std::nullopt;
  }

 private:
  bool fill(Clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) return false;
    char chunk[65536];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }

  int fd_ = -1;
  std::string buffer_;
  std::string response_;
};

std::uint16_t close_code(const ServerFrame& close) {
  return close.payload.size() >= 2 ? static_cast<std::uint16_t>(close.payload[0] << 8 | close.payload[1]) : 0;
}

std::string close_text(const ServerFrame& close) {
  return close.payload.size() > 2 ? std::string(close.payload.begin() + 2, close.payload.end())
                                  : std::string();
}

// Upgrades, reads the welcome, sends `attack`, and returns the server's close frame.
std::optional<ServerFrame> close_after(std::uint16_t port, const Bytes& attack,
                                       std::size_t* pongs = nullptr) {
  RawClient client;
  if (!client.connect(port) || client.upgrade() != 101) return std::nullopt;
  const auto welcome = client.read_frame();
  if (!welcome || welcome->payload.empty() || welcome->payload[0] != kWelcomeFrame) return std::nullopt;
  client.send(attack);
  const auto deadline = Clock::now() + 5s;
  while (Clock::now() < deadline) {
    auto frame = client.read_frame(1s);
    if (!frame) return std::nullopt;
    if (frame->opcode == 0x8) return frame;
    if (frame->opcode == 0xA && pongs != nullptr) ++*pongs;
  }
  return std::nullopt;
}

Bytes repeat(const Bytes& frame, std::size_t times) {
  Bytes out;
  for (std::size_t i = 0; i < times; ++i) out.insert(out.end(), frame.begin(), frame.end());
  return out;
}

// B2: a message of any size goes out as one frame. Beast's default cut each into 4 KB frames,
// each its own write, and a late tick loop advanced them one a turn.
TEST(ProtocolAttacks, EachMessageIsOneFrame) {
  ServerProcess server({"--entities", "3000"});
  ASSERT_NE(server.port(), 0);
  RawClient client;
  ASSERT_TRUE(client.connect(server.port()));
  ASSERT_EQ(client.upgrade(), 101);
  // Interest off: every walker in every tick frame, some 30 kB.
  ASSERT_TRUE(client.send(client_frame(0x2, encode_options(kOptionHysteresis))));
  std::size_t large = 0;
  for (int i = 0; i < 30; ++i) {
    const auto frame = client.read_frame();
    ASSERT_TRUE(frame) << i;
    EXPECT_TRUE(frame->fin) << "frame " << i << " of " << frame->payload.size() << " bytes is a fragment";
    EXPECT_EQ(frame->opcode, 0x2) << i;
    if (frame->payload.size() > 4096) ++large;
  }
  EXPECT_GE(large, 10u);
  EXPECT_EQ(server.stop(nullptr), 0);
}

// B9: frames sent in the same write as the upgrade request reach the WebSocket (they were
// dropped with the HTTP parser's buffer).
TEST(ProtocolAttacks, FramesRightBehindTheUpgradeAreRead) {
  ServerProcess server({});
  ASSERT_NE(server.port(), 0);
  RawClient client;
  ASSERT_TRUE(client.connect(server.port()));
  ASSERT_EQ(client.upgrade(client_frame(0x2, {9})), 101);
  const auto close = client.read_until_close(5s);
  ASSERT_TRUE(close) << "no close: the frame behind the upgrade was not read";
  EXPECT_EQ(close_code(*close), 1008);
  EXPECT_NE(close_text(*close).find("frame type 9 is unknown"), std::string::npos) << close_text(*close);

  // And a good frame so sent takes effect (interest off restarts the stream with a reset frame),
  // behind a request of any size the HTTP limit allows (a browser's cookies for the host).
  for (const std::size_t cookie : {0, 6000}) {
    SCOPED_TRACE(cookie);
    RawClient good;
    ASSERT_TRUE(good.connect(server.port()));
    ASSERT_EQ(good.upgrade(client_frame(0x2, encode_options(kOptionHysteresis)), kGoodKey, 5s,
                           cookie == 0 ? "" : "Cookie: a=" + std::string(cookie, 'x') + "\r\n"),
              101)
        << good.response();
    bool reset = false;
    for (int i = 0; i < 10 && !reset; ++i) {
      const auto frame = good.read_frame();
      ASSERT_TRUE(frame);
      // The reset and the tick frame behind it are due together: one bundle.
      std::vector<std::span<const std::uint8_t>> frames{frame->payload};
      if (frame_type(frame->payload) == kBundleFrame) {
        ASSERT_TRUE(read_bundle(frame->payload, frames));
      }
      for (const std::span<const std::uint8_t> f : frames) reset = reset || frame_type(f) == kResetFrame;
    }
    EXPECT_TRUE(reset);
  }
  EXPECT_EQ(server.stop(nullptr), 0);
}

// A stream refused while a frame is still going out to its client (one that does not read):
// the close follows that frame, and the connection's place is freed.
TEST(ProtocolAttacks, ARefusalWhileAWriteIsPendingFreesThePlace) {
  ServerProcess server({"--entities", "20000", "--max-connections", "1"});
  ASSERT_NE(server.port(), 0);
  RawClient stuck;
  ASSERT_TRUE(stuck.connect(server.port(), 2048));
  ASSERT_EQ(stuck.upgrade(client_frame(0x2, encode_options(kOptionHysteresis))), 101);
  std::this_thread::sleep_for(1500ms);  // 200 kB frames: the socket's buffers are full, a write waits
  ASSERT_TRUE(stuck.send(repeat(client_frame(0x9), 100)));
  // It never reads, and stays open: within the close grace (5 s) the server cuts it and frees
  // the one place.
  std::this_thread::sleep_for(7s);
  RawClient next;
  ASSERT_TRUE(next.connect(server.port()));
  ASSERT_EQ(next.upgrade(), 101);
  std::optional<ServerFrame> welcome = next.read_frame();
  ASSERT_TRUE(welcome);
  EXPECT_EQ(welcome->opcode, 0x2) << "closed: " << close_text(*welcome);
  nlohmann::json stats;
  EXPECT_EQ(server.stop(&stats), 0);
  EXPECT_EQ(closes(stats, "too many frames") + closes(stats, "too slow"), 1u) << stats.dump();
}

// B10: pings, pongs and continuations cost a token each from the frame bucket, as data frames
// do (four ping floods took 78% of the server's core); a message never ends in continuations.
TEST(ProtocolAttacks, ControlFramesAndContinuationsAreMetered) {
  ServerProcess server({});
  ASSERT_NE(server.port(), 0);
  struct Case {
    const char* name;
    Bytes attack;
    std::string reason;
  };
  Bytes endless = client_frame(0x2, {kMoveFrame}, false);
  const Bytes empty_continuation = client_frame(0x0, {}, false);
  for (int i = 0; i < 40; ++i)
    endless.insert(endless.end(), empty_continuation.begin(), empty_continuation.end());
  const std::vector<Case> cases = {
      {"200 pings", repeat(client_frame(0x9, {1, 2, 3}), 200), "too many frames"},
      {"200 pongs", repeat(client_frame(0xA), 200), "too many frames"},
      {"a message of endless empty continuations", endless, "message in more than 8 frames"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::size_t pongs = 0;
    const auto close = close_after(server.port(), c.attack, &pongs);
    ASSERT_TRUE(close) << "not closed";
    EXPECT_EQ(close_code(*close), 1008);
    EXPECT_EQ(close_text(*close), c.reason);
    // The server answers no ping beyond the frame rate (60 a second here).
    EXPECT_LE(pongs, 60u);
  }
  nlohmann::json stats;
  EXPECT_EQ(server.stop(&stats), 0);
  EXPECT_EQ(closes(stats, "too many frames"), 2u) << stats.dump();
  EXPECT_EQ(closes(stats, "message too long"), 1u) << stats.dump();
}

// B11: what RFC 6455 forbids and Beast let through.
TEST(ProtocolAttacks, WhatTheRfcForbidsIsRefused) {
  ServerProcess server({});
  ASSERT_NE(server.port(), 0);
  test::ClientFrame top = test::odd_frame(0x2, {kMoveFrame});
  top.length_form = 127;
  top.length_top = 0x80;
  const auto too_long = close_after(server.port(), client_frame(top));
  ASSERT_TRUE(too_long) << "a 64-bit length with its top bit set was not refused";
  EXPECT_EQ(close_code(*too_long), 1002);
  EXPECT_NE(close_text(*too_long).find("top bit"), std::string::npos) << close_text(*too_long);

  const auto bad_code = close_after(server.port(), client_frame(0x8, close_payload(5000)));
  ASSERT_TRUE(bad_code) << "close code 5000 was not answered";
  EXPECT_EQ(close_code(*bad_code), 1002) << "Beast echoes the code it was sent";
  EXPECT_NE(close_text(*bad_code).find("close code 5000"), std::string::npos) << close_text(*bad_code);

  for (const std::string key :
       {"abc", "dGhlIHNhbXBsZSBub25jZQ=", "dGhlIHNhbXBsZSBub25jZR==", "!GhlIHNhbXBsZSBub25jZQ=="}) {
    SCOPED_TRACE(key);
    RawClient client;
    ASSERT_TRUE(client.connect(server.port()));
    EXPECT_EQ(client.upgrade({}, key), 400) << client.response();
  }
  nlohmann::json stats;
  EXPECT_EQ(server.stop(&stats), 0);
  EXPECT_EQ(closes(stats, "bad frame"), 2u) << stats.dump();
  EXPECT_EQ(stats.value("upgrades_refused", 0), 4) << stats.dump();
}

// B4: a client that never reads is cut once 2 s of tick frames are undelivered, counting those
// the kernel holds for it: its receive window and then the server's socket buffer take minutes of
// small frames, so the server's own queue never grew and only the idle timeout (60 s here) cut it.
TEST(ProtocolAttacks, AReaderThatNeverReadsIsCutByWhatTheKernelHolds) {
  ServerProcess server({"--idle-seconds", "60"});
  ASSERT_NE(server.port(), 0);
  RawClient silent;
  ASSERT_TRUE(silent.connect(server.port(), 2048));
  ASSERT_EQ(silent.upgrade(), 101);
  const auto start = Clock::now();
  std::this_thread::sleep_for(8s);
  std::size_t frames = 0;
  const auto close = silent.read_until_close(5s, &frames);
  ASSERT_TRUE(close) << "not closed after " << frames << " frames";
  EXPECT_EQ(close_code(*close), 1008);
  EXPECT_EQ(close_text(*close), "too slow");
  // It got about 2 s of ticks beyond what its receive buffer held, not 8 s.
  EXPECT_LT(frames, 8u * 20u) << std::chrono::duration<double>(Clock::now() - start).count();
  nlohmann::json stats;
  EXPECT_EQ(server.stop(&stats), 0);
  EXPECT_EQ(closes(stats, "too slow"), 1u) << stats.dump();
}

// B3: connections that never finish their HTTP request cannot hold every descriptor: out of
// descriptors, or at --max-http-connections, the oldest is closed, so a new client always gets in.
TEST(ProtocolAttacks, SilentSocketsCannotLockClientsOut) {
  struct Case {
    const char* name;
    std::vector<std::string> args;
    rlim_t descriptors;
  };
  // Two I/O threads, whose reactors take 6 of the 128 descriptors whatever the machine's cores.
  const std::vector<Case> cases = {{"out of descriptors", {"--io-threads", "2"}, 128},
                                   {"at --max-http-connections", {"--max-http-connections", "32"}, 0}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ServerProcess server(c.args, c.descriptors);
    ASSERT_NE(server.port(), 0);
    std::vector<RawClient> silent(200);
    for (RawClient& s : silent) ASSERT_TRUE(s.connect(server.port()));
    std::this_thread::sleep_for(300ms);
    RawClient client;
    ASSERT_TRUE(client.connect(server.port()));
    EXPECT_EQ(client.upgrade({}, kGoodKey, 3s), 101) << "locked out";
    const auto welcome = client.read_frame(3s);
    ASSERT_TRUE(welcome);
    EXPECT_EQ(welcome->payload.at(0), kWelcomeFrame);
    nlohmann::json stats;
    EXPECT_EQ(server.stop(&stats), 0);
    EXPECT_GE(stats.value("http_evicted", 0), c.descriptors != 0 ? 1 : 200 - 32) << stats.dump();
  }
}

}  // namespace
}  // namespace sightline::demo
