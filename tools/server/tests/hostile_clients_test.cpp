// sightline-server end to end, against the real binary: every kind of bad client frame closes
// that connection alone (1008, with a reason naming it) while a well-behaved client keeps
// receiving consecutive ticks; the connection limit answers 503; a silent client is closed as
// idle; the web root refuses traversal; one client's frames change nothing in another's stream.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "frames.h"
#include "server_process.h"
#include "sightline/client_mirror.h"
#include "sightline/serialize.h"

namespace sightline::demo {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;
using Bytes = std::vector<std::uint8_t>;

// --- A WebSocket client with a deadline on every step ------------------------------------------

class Client {
 public:
  // Connects and upgrades; on a refused upgrade, `response` holds the server's answer.
  beast::error_code connect(std::uint16_t port, websocket::response_type* response = nullptr,
                            int receive_buffer_bytes = 0) {
    if (receive_buffer_bytes > 0) {
      auto& socket = beast::get_lowest_layer(ws_).socket();
      socket.open(tcp::v4());
      socket.set_option(net::socket_base::receive_buffer_size(receive_buffer_bytes));
    }
    beast::error_code ec = run(5s, [&](auto done) {
      beast::get_lowest_layer(ws_).async_connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port),
                                                 done);
    });
    if (ec) return ec;
    websocket::response_type ignored;
    return run(5s, [&](auto done) {
      ws_.async_handshake(response != nullptr ? *response : ignored, fmt::format("127.0.0.1:{}", port), "/ws",
                          done);
    });
  }

  // The next server frame: of the bundle last read (which the server sends where several are
  // due), or the next message.
  beast::error_code read(Bytes& frame, std::chrono::milliseconds limit = 5s) {
    if (!bundled_.empty()) {
      frame = std::move(bundled_.front());
      bundled_.pop_front();
      return {};
    }
    beast::flat_buffer buffer;
    const beast::error_code ec = run(limit, [&](auto done) { ws_.async_read(buffer, done); });
    const auto* data = static_cast<const std::uint8_t*>(buffer.data().data());
    frame.assign(data, data + buffer.size());
    if (ec || frame_type(frame) != kBundleFrame) return ec;
    std::vector<std::span<const std::uint8_t>> frames;
    if (const Status s = read_bundle(frame, frames); !s) {
      ADD_FAILURE() << s.message();
      return ec;
    }
    for (const std::span<const std::uint8_t> f : frames) bundled_.emplace_back(f.begin(), f.end());
    ++bundles_;
    if (std::count_if(frames.begin(), frames.end(), [](auto f) { return frame_type(f) == kTickFrame; }) >=
        2) {
      ++tick_bundles_;
    }
    frame = std::move(bundled_.front());
    bundled_.pop_front();
    return ec;
  }

  // Bundles read so far, and those of them holding two tick frames or more (a backlog: a reset
  // comes with one tick frame).
  std::uint64_t bundles() const { return bundles_; }
  std::uint64_t tick_bundles() const { return tick_bundles_; }

  beast::error_code send(const Bytes& frame) {
    ws_.binary(true);
    return run(5s, [&](auto done) { ws_.async_write(net::buffer(frame), done); });
  }

  beast::error_code send_text(const std::string& text) {
    ws_.text(true);
    return run(5s, [&](auto done) { ws_.async_write(net::buffer(text), done); });
  }

  beast::error_code close() {
    return run(5s, [&](auto done) { ws_.async_close(websocket::close_code::normal, done); });
  }

  // Reads (the server keeps sending ticks) until the connection ends; the error and the
  // server's close frame.
  std::pair<beast::error_code, websocket::close_reason> read_until_closed(
      std::chrono::milliseconds limit = 5s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    Bytes frame;
    for (;;) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      const beast::error_code ec = read(frame, std::max(left, 1ms));
      if (ec) return {ec, ws_.reason()};
    }
  }

  net::io_context& io() { return io_; }
  // Only from the thread that runs io(): ends every pending operation.
  void cut() { beast::get_lowest_layer(ws_).close(); }

 private:
  template <class Start>
  beast::error_code run(std::chrono::milliseconds limit, Start start) {
    std::optional<beast::error_code> result;
    beast::get_lowest_layer(ws_).expires_after(limit);
    start([&result](beast::error_code ec, auto...) { result = ec; });
    io_.restart();
    while (!result && io_.run_one() > 0) {
    }
    return result.value_or(net::error::operation_aborted);
  }

  net::io_context io_;
  websocket::stream<beast::tcp_stream> ws_{io_};
  std::deque<Bytes> bundled_;
  std::uint64_t bundles_ = 0;
  std::uint64_t tick_bundles_ = 0;
};

// A well-behaved client on its own thread: welcome first, then tick frames numbered one apart.
class GoodClient {
 public:
  explicit GoodClient(std::uint16_t port) {
    if (const beast::error_code ec = client_.connect(port)) {
      ADD_FAILURE() << "good client: connect: " << ec.message();
      return;
    }
    thread_ = std::thread([this] { receive(); });
  }
  GoodClient(const GoodClient&) = delete;
  GoodClient& operator=(const GoodClient&) = delete;
  ~GoodClient() { stop(); }

  // Waits until `count` more tick frames arrived; false on a timeout.
  bool wait_for_ticks(std::uint64_t count, std::chrono::milliseconds limit = 3s) {
    const std::uint64_t target = ticks_.load() + count;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (ticks_.load() < target) {
      if (std::chrono::steady_clock::now() > deadline || ended_.load()) return false;
      std::this_thread::sleep_for(5ms);
    }
    return true;
  }

  std::uint64_t ticks() const { return ticks_.load(); }
  bool ended() const { return ended_.load(); }
  std::string problems() {
    std::lock_guard lock(mutex_);
    return problems_;
  }

  // Closes from the client side; the connection must still have been open.
  void stop() {
    if (!thread_.joinable()) return;
    stopping_ = true;
    net::post(client_.io(), [this] { client_.cut(); });
    thread_.join();
  }

 private:
  void receive() {
    Bytes frame;
    bool welcomed = false;
    std::optional<std::uint32_t> last_tick;
    for (;;) {
      if (const beast::error_code ec = client_.read(frame, 10s)) {
        if (!stopping_) problem(fmt::format("the connection ended: {}", ec.message()));
        break;
      }
      if (!welcomed) {
        welcomed = true;
        if (!read_welcome(frame)) problem("the first frame is not a welcome");
        continue;
      }
      const Result<TickFrame> tick = read_tick(frame);
      if (!tick) {
        problem(
            fmt::format("a frame of type {} is not a tick: {}", frame_type(frame), tick.status().message()));
        continue;
      }
      if (last_tick && tick->tick != *last_tick + 1)
        problem(fmt::format("tick {} after {}", tick->tick, *last_tick));
      last_tick = tick->tick;
      ++ticks_;
    }
    ended_ = true;
  }

  void problem(const std::string& text) {
    std::lock_guard lock(mutex_);
    problems_ += text + "\n";
  }

  Client client_;
  std::thread thread_;
  std::atomic<std::uint64_t> ticks_{0};
  std::atomic<bool> ended_{false};
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::string problems_;
};

// --- Bad frames --------------------------------------------------------------------------------

struct BadFrame {
  std::string name;
  Bytes bytes;
  std::string text;    // sent as a text message when not empty
  std::string reason;  // what the close reason must contain
  std::size_t repeat = 1;
};

TEST(HostileClients, EachBadFrameClosesOnlyItsConnection) {
  ServerProcess server({});
  ASSERT_NE(server.port(), 0);
  GoodClient good(server.port());
  ASSERT_TRUE(good.wait_for_ticks(3)) << good.problems();

  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<BadFrame> cases = {
      {"empty frame", {}, "", "empty frame"},
      {"unknown type", {9}, "", "frame type 9 is unknown"},
      {"wrong size", {kMoveFrame, 0, 0, 0}, "", "move frame is 4 bytes"},
      {"move outside the world", encode_move(13.0f, 1.0f), "", "move frame: x is 13"},
      {"move NaN", encode_move(1.0f, nan), "", "move frame: z is"},
      {"unknown option bits", encode_options(0x08), "", "unknown bits"},
      {"debug view not allowed", encode_options(kDefaultOptions | kOptionDebug), "", "--debug-view"},
      {"why without the debug view", encode_why({1, 1}), "", "why frame: asks the debug view"},
      {"radius below R/4", encode_radius(0.3f), "", "radius frame: enter radius is 0.3"},
      {"radius above max", encode_radius(7.0f), "", "radius frame: enter radius is 7"},
      {"65-byte message", Bytes(65, kMoveFrame), "", "frame too large"},
      {"text message", {}, "hello", "text frames are not accepted"},
      {"200 frames in a burst", encode_move(1.0f, 1.0f), "", "too many frames", 200},
  };
  for (const BadFrame& bad : cases) {
    SCOPED_TRACE(bad.name);
    Client client;
    ASSERT_FALSE(client.connect(server.port()));
    Bytes welcome;
    ASSERT_FALSE(client.read(welcome));
    ASSERT_TRUE(read_welcome(welcome));
    for (std::size_t i = 0; i < bad.repeat; ++i) {
      // Writes after the server's close may fail; the close frame is what is checked.
      if (bad.text.empty() ? client.send(bad.bytes) : client.send_text(bad.text)) break;
    }
    const auto [ec, reason] = client.read_until_closed();
    EXPECT_EQ(ec, websocket::error::closed) << ec.message();
    EXPECT_EQ(reason.code, websocket::close_code::policy_error);
    EXPECT_NE(std::string(reason.reason.c_str()).find(bad.reason), std::string::npos)
        << "reason: \"" << reason.reason.c_str() << "\"";
    EXPECT_LE(reason.reason.size(), 123u);
    EXPECT_TRUE(good.wait_for_ticks(2)) << "the good client stopped receiving: " << good.problems();
  }
  EXPECT_FALSE(good.ended()) << good.problems();
  good.stop();
  EXPECT_EQ(good.problems(), "");

  nlohmann::json stats;
  EXPECT_EQ(server.stop(&stats), 0);
  EXPECT_EQ(closes(stats, "refused frame"), 10u) << stats.dump();
  EXPECT_EQ(closes(stats, "frame too large"), 1u) << stats.dump();
  EXPECT_EQ(closes(stats, "text frame"), 1u) << stats.dump();
  EXPECT_EQ(closes(stats, "too many frames"), 1u) << stats.dump();
}

TEST(HostileClients, WhyIsAnsweredThroughTheDebugViewOnly) {
  ServerProcess server({"--debug-view"});
  ASSERT_NE(server.port(), 0);
  Bytes frame;
  // Debug view off on this connection: the question closes it, naming why.
  Client off;
  ASSERT_FALSE(off.connect(server.port()));
  ASSERT_FALSE(off.read(frame));
  ASSERT_FALSE(off.send(encode_why({1, 0})));
  const auto [ec, reason] = off.read_until_closed();
  EXPECT_EQ(ec, websocket::error::closed) << ec.message();
  EXPECT_EQ(reason.code, websocket::close_code::policy_error);
  EXPECT_NE(std::string(reason.reason.c_str()).find("debug view is off"), std::string::npos)
      << reason.reason.c_str();

  // On: an entity the debug view lists, asked by its index, is answered after a tick frame.
  Client on;
  ASSERT_FALSE(on.connect(server.port()));
  ASSERT_FALSE(on.read(frame));
  ASSERT_FALSE(on.send(encode_options(kDefaultOptions | kOptionDebug)));
  std::optional<std::uint32_t> listed;
  for (int i = 0; i < 200 && !listed; ++i) {
    ASSERT_FALSE(on.read(frame));
    std::uint32_t tick = 0;
    if (frame_type(frame) != kDebugFrame) continue;
    const auto entries = read_debug(frame, &tick);
    ASSERT_TRUE(entries) << entries.status().message();
    if (!entries->empty()) listed = entries->front().index;
  }
  ASSERT_TRUE(listed.has_value());
  ASSERT_FALSE(on.send(encode_why({*listed, 0})));
  std::optional<WhyAnswer> answer;
  std::uint32_t last_tick = 0;
  for (int i = 0; i < 200 && !answer; ++i) {
    ASSERT_FALSE(on.read(frame));
    if (frame_type(frame) == kTickFrame) last_tick = read_tick(frame)->tick;
    if (frame_type(frame) != kWhyAnswerFrame) continue;
    const Result<WhyAnswer> read = read_why_answer(frame);
    ASSERT_TRUE(read) << read.status().message();
    answer = *read;
  }
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->tick, last_tick);
  EXPECT_EQ(answer->entity.index, *listed);
  EXPECT_EQ(answer->outcome, WhyOutcome::answered);
  EXPECT_NE(answer->entity.generation, 0u);
  EXPECT_EQ(answer->root, answer->entity);
  nlohmann::json stats;
  EXPECT_EQ(server.stop(&stats), 0);
  EXPECT_EQ(closes(stats, "refused frame"), 1u) << stats.dump();
}

// --- Limits ------------------------------------------------------------------------------------

TEST(HostileClients, UpgradesBeyondMaxConnectionsAreClosedAsServerFull) {
  ServerProcess server({"--max-connections", "2"});
  ASSERT_NE(server.port(), 0);
  Client first;
  Client second;
  ASSERT_FALSE(first.connect(server.port()));
  ASSERT_FALSE(second.connect(server.port()));
  // The handshake completes only to close with 1013 and a reason a browser can show.
  Client third;
  ASSERT_FALSE(third.connect(server.port()));
  const auto [ec, reason] = third.read_until_closed(3s);
  EXPECT_EQ(ec, websocket::error::closed);
  EXPECT_EQ(reason.code, websocket::close_code::try_again_later);
  EXPECT_EQ(std::string(reason.reason.c_str()), "server full");

  // A closed connection frees its place (Beast's close completes once the server answered).
  ASSERT_FALSE(first.close());
  bool admitted = false;
  for (int attempt = 0; attempt < 50 && !admitted; ++attempt) {
    Client again;
    admitted = !again.connect(server.port());
    if (!admitted) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(admitted);
  nlohmann::json stats;
  EXPECT_EQ(server.stop(&stats), 0);
  EXPECT_GE(stats.value("upgrades_full", 0), 1) << stats.dump();
  EXPECT_EQ(stats.value("connections_peak", 0), 2) << stats.dump();
}

TEST(HostileClients, SilentClientIsClosedAsIdleWhileAReaderStays) {
  ServerProcess server({"--idle-seconds", "2"});
  ASSERT_NE(server.port(), 0);
  GoodClient reader(server.port());  // answers the server's pings while it reads
  Client silent;
  ASSERT_FALSE(silent.connect(server.port()));
  // Neither reads nor answers pings: the server pings after 1 s and gives up after 2 s.
  std::this_thread::sleep_for(5s);
  const auto [ec, reason] = silent.read_until_closed(3s);
  EXPECT_NE(ec, beast::error::timeout) << "the silent client was still open after 5 s";
  EXPECT_TRUE(reader.wait_for_ticks(2)) << reader.problems();
  EXPECT_FALSE(reader.ended()) << reader.problems();
  reader.stop();
  nlohmann::json stats;
  EXPECT_EQ(server.stop(&stats), 0);
  EXPECT_EQ(closes(stats, "idle"), 1u) << stats.dump();
}

// A reader that stops for 1.5 s, within the 2 s of ticks it may have pending: what the server
// queued meanwhile comes in bundles (several tick frames a write), every tick frame once and in
// order.
TEST(HostileClients, ALateReadersBacklogComesInBundlesInOrder) {
  // Interest off over 20,000 walkers: about 167 kB a tick once their spawns are through, 5 MB in
  // 1.5 s, more than the kernel holds for a socket (4 MB here), so the server's own queue holds
  // frames when the reader comes back.
  ServerProcess server({"--entities", "20000"});
  ASSERT_NE(server.port(), 0);
  Client late;
  ASSERT_FALSE(late.connect(server.port(), nullptr, 4096));
  ASSERT_FALSE(late.send(encode_options(kOptionHysteresis)));
  std::this_thread::sleep_for(1500ms);
  Bytes frame;
  std::optional<std::uint32_t> last;
  int ticks = 0;
  while (ticks < 40) {
    ASSERT_FALSE(late.read(frame));
    if (frame_type(frame) != kTickFrame) continue;
    const Result<TickFrame> tick = read_tick(frame);
    ASSERT_TRUE(tick) << tick.status().message();
    if (last) {
      ASSERT_EQ(tick->tick, *last + 1);
    }
    last = tick->tick;
    ++ticks;
  }
  EXPECT_GT(late.tick_bundles(), 0u) << late.bundles() << " bundles";
  nlohmann::json stats;
  EXPECT_EQ(server.stop(&stats), 0);
  EXPECT_EQ(closes(stats, "too slow"), 0u) << stats.dump();
}

TEST(HostileClients, ReaderTooSlowForItsStreamIsClosedWhileOthersStay) {
  // Interest off over 40,000 walkers: about 180 kB a tick, so the kernel's buffers (4 MB at most
  // on Linux) fill within seconds and the server's queue then grows past 2 s of ticks.
  ServerProcess server({"--entities", "40000"});
  ASSERT_NE(server.port(), 0);
  GoodClient good(server.port());
  Client slow;
  ASSERT_FALSE(slow.connect(server.port(), nullptr, 4096));
  ASSERT_FALSE(slow.send(encode_options(kOptionHysteresis)));
  std::this_thread::sleep_for(6s);
  // The close frame goes out once the frame on the wire is through, so read what is there.
  const auto [ec, reason] = slow.read_until_closed(4s);
  EXPECT_EQ(ec, websocket::error::closed) << ec.message();
  EXPECT_EQ(reason.code, websocket::close_code::policy_error);
  EXPECT_STREQ(reason.reason.c_str(), "too slow");
  EXPECT_TRUE(good.wait_for_ticks(2)) << good.problems();
  good.stop();
  EXPECT_EQ(good.problems(), "");
  nlohmann::json stats;
  EXPECT_EQ(server.stop(&stats), 0);
  EXPECT_EQ(closes(stats, "too slow"), 1u) << stats.dump();
}

// --- Files -------------------------------------------------------------------------------------

struct HttpAnswer {
  http::status status{};
  std::string content_type;
  std::string body;
  std::string content_length;
};

// Several requests on one keep-alive connection.
std::vector<HttpAnswer> http_requests(std::uint16_t port,
                                      const std::vector<std::pair<http::verb, std::string>>& requests) {
  net::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  beast::flat_buffer buffer;
  std::vector<HttpAnswer> answers;
  for (const auto& [verb, target] : requests) {
    http::request<http::empty_body> request{verb, target, 11};
    request.set(http::field::host, "127.0.0.1");
    request.keep_alive(true);
    http::write(socket, request);
    http::response_parser<http::string_body> parser;
    parser.skip(verb == http::verb::head);
    http::read(socket, buffer, parser);
    const auto& response = parser.get();
    answers.push_back({response.result(), std::string(response[http::field::content_type]), response.body(),
                       std::string(response[http::field::content_length])});
  }
  return answers;
}

// One /metrics page read as Prometheus would: every family with its HELP and TYPE first, every
// sample `name{labels} value`, histogram buckets cumulative up to +Inf = _count.
struct Scrape {
  std::map<std::string, double> samples;  // "name{labels}" -> value
  std::vector<std::string> problems;
};

Scrape parse_metrics(const std::string& text) {
  Scrape scrape;
  std::map<std::string, std::string> types;
  std::set<std::string> helped;
  std::istringstream lines(text);
  std::string line;
  std::map<std::string, double> last_bucket;  // by histogram series (labels without le)
  std::map<std::string, double> last_edge;
  while (std::getline(lines, line)) {
    if (line.rfind("# HELP ", 0) == 0) {
      helped.insert(line.substr(7, line.find(' ', 7) - 7));
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      const std::string name = line.substr(7, line.find(' ', 7) - 7);
      types[name] = line.substr(line.find(' ', 7) + 1);
      continue;
    }
    const std::size_t space = line.rfind(' ');
    const std::string series = line.substr(0, space);
    const double value = std::stod(line.substr(space + 1));
    std::string name = series.substr(0, series.find('{'));
    std::string family = name;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string base = name.substr(0, name.size() - std::strlen(suffix));
      if (name.size() > std::strlen(suffix) && name.ends_with(suffix) && types.count(base) != 0 &&
          types[base] == "histogram") {
        family = base;
      }
    }
    if (types.count(family) == 0 || helped.count(family) == 0) {
      scrape.problems.push_back("no HELP or TYPE before " + line);
    }
    if (name.ends_with("_bucket")) {
      const std::size_t le = series.find("le=\"");
      const std::string key = series.substr(0, le);
      const std::string bound = series.substr(le + 4, series.find('"', le + 4) - le - 4);
      const double edge = bound == "+Inf" ? std::numeric_limits<double>::infinity() : std::stod(bound);
      if (last_edge.count(key) != 0 && edge <= last_edge[key])
        scrape.problems.push_back("le out of order: " + line);
      if (value < last_bucket[key]) scrape.problems.push_back("bucket not cumulative: " + line);
      last_bucket[key] = value;
      last_edge[key] = edge;
    }
    if (!scrape.samples.emplace(series, value).second) scrape.problems.push_back("series twice: " + line);
  }
  for (const auto& [series, value] : scrape.samples) {
    if (series.find("_bucket{") == std::string::npos || series.find("le=\"+Inf\"") == std::string::npos)
      continue;
    std::string count = series;
    count.replace(count.find("_bucket"), 7, "_count");
    count.erase(count.find("le=\"+Inf\""), 9);
    if (count.ends_with(",}")) count.erase(count.size() - 2, 1);
    if (count.ends_with("{}")) count.erase(count.size() - 2);
    if (scrape.samples.count(count) == 0 || scrape.samples[count] != value) {
      scrape.problems.push_back("+Inf bucket differs from " + count);
    }
  }
  return scrape;
}

TEST(HostileClients, MetricsAreScrapedInThePrometheusFormat) {
  ServerProcess server({});
  ASSERT_NE(server.port(), 0);
  GoodClient good(server.port());
  ASSERT_TRUE(good.wait_for_ticks(5));
  {
    Client bad;
    ASSERT_FALSE(bad.connect(server.port()));
    ASSERT_FALSE(bad.send({9}));
    EXPECT_EQ(bad.read_until_closed().second.code, websocket::close_code::policy_error);
  }
  std::this_thread::sleep_for(200ms);
  const std::vector<HttpAnswer> answers = http_requests(server.port(), {{http::verb::get, "/metrics"}});
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].status, http::status::ok);
  EXPECT_EQ(answers[0].content_type, "text/plain; version=0.0.4; charset=utf-8");
  const Scrape scrape = parse_metrics(answers[0].body);
  for (const std::string& p : scrape.problems) ADD_FAILURE() << p;
  const auto at = [&](const std::string& series) {
    const auto it = scrape.samples.find(series);
    EXPECT_NE(it, scrape.samples.end()) << series << " missing from\n" << answers[0].body;
    return it == scrape.samples.end() ? -1.0 : it->second;
  };
  EXPECT_EQ(at("sightline_connections"), 1.0);
  EXPECT_EQ(at("sightline_entities"), 121.0);  // 120 walkers and the good client's viewer
  EXPECT_GE(at("sightline_ticks_total"), 5.0);
  EXPECT_EQ(at("sightline_tick_seconds_count"), at("sightline_ticks_total"));
  EXPECT_GT(at("sightline_spawns_total"), 0.0);
  EXPECT_GT(at("sightline_bytes_out_total"), 0.0);
  EXPECT_EQ(at("sightline_closes_total{reason=\"refused frame\"}"), 1.0);
  for (const char* phase : {"spaces", "index", "relevance", "events", "release", "send"}) {
    EXPECT_EQ(at(std::string("sightline_tick_phase_seconds_count{phase=\"") + phase + "\"}"),
              at("sightline_ticks_total"))
        << phase;
  }
  EXPECT_GT(at("process_resident_memory_bytes"), 0.0);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  EXPECT_GT(at("process_heap_in_use_bytes"), 0.0);  // mallinfo2: glibc 2.33 and later
#endif
}

// Reads frames until `ticks` tick frames came; the last one's fields.
std::optional<TickFrame> read_ticks(Client& client, int ticks) {
  std::optional<TickFrame> last;
  Bytes frame;
  for (int seen = 0; seen < ticks;) {
    if (client.read(frame)) return std::nullopt;
    if (frame_type(frame) != kTickFrame) continue;
    Result<TickFrame> t = read_tick(frame);
    if (!t) return std::nullopt;
    last = *t;
    last->packets.clear();
    ++seen;
  }
  return last;
}

TEST(HostileClients, TheDebugConsoleExplainsADespawn) {
  ServerProcess server({"--debug-http"});
  ASSERT_NE(server.port(), 0);
  Client client;
  ASSERT_FALSE(client.connect(server.port()));
  const std::optional<TickFrame> before = read_ticks(client, 10);
  ASSERT_TRUE(before.has_value());
  const auto get = [&](const std::string& target) {
    const std::vector<HttpAnswer> answers = http_requests(server.port(), {{http::verb::get, target}});
    EXPECT_EQ(answers[0].content_type, "application/json") << target;
    return std::pair{answers[0].status, nlohmann::json::parse(answers[0].body, nullptr, false)};
  };
  const auto [clients_status, clients] = get("/debug/clients");
  ASSERT_EQ(clients_status, http::status::ok);
  ASSERT_EQ(clients["clients"].size(), 1u);
  EXPECT_EQ(clients["clients"][0]["connection"], 1);
  const auto [client_status, one] = get("/debug/client?connection=1");
  ASSERT_EQ(client_status, http::status::ok);
  ASSERT_FALSE(one["set"].empty()) << one.dump();
  const std::uint32_t index = one["set"][0]["index"];
  const std::uint32_t generation = one["set"][0]["generation"];

  // Six units away along x from where the viewer stood: the member is now beyond L = 2.
  const float x = before->viewer_x < 6.0f ? before->viewer_x + 6.0f : before->viewer_x - 6.0f;
  ASSERT_FALSE(client.send(encode_move(x, before->viewer_z)));
  ASSERT_TRUE(read_ticks(client, 10).has_value());
  const std::string why_target = fmt::format("/debug/why?connection=1&entity={}:{}", index, generation);
  const auto [why_status, why] = get(why_target);
  ASSERT_EQ(why_status, http::status::ok) << why.dump();
  EXPECT_EQ(why["why"]["held"], false) << why.dump();
  const nlohmann::json& history = why["history"];
  ASSERT_GE(history.size(), 2u) << why.dump();
  EXPECT_EQ(history[0]["spawned"], true) << why.dump();
  const nlohmann::json& gone = history.back();
  EXPECT_EQ(gone["spawned"], false) << why.dump();
  EXPECT_EQ(gone["reason"], "left") << why.dump();
  EXPECT_EQ(gone["rule"], "out_of_range") << why.dump();
  EXPECT_GT(gone["distance"].get<double>(), 2.0) << why.dump();

  // Refusals name what is wrong.
  const auto [bad_status, bad] = get("/debug/why?connection=1&entity=x");
  EXPECT_EQ(bad_status, http::status::bad_request);
  EXPECT_EQ(bad["error"], "entity is \"x\": must be a number in [0, 2^32)");
  const auto [gone_status, missing] = get("/debug/client?connection=9");
  EXPECT_EQ(gone_status, http::status::not_found);
  EXPECT_EQ(missing["error"], "connection 9 is not open");
  const auto [page_status, page] = get("/debug/everything");
  EXPECT_EQ(page_status, http::status::not_found);
  const auto [tick_status, tick] = get("/debug/tick");
  EXPECT_EQ(tick_status, http::status::ok);
  EXPECT_TRUE(tick["phases_ms"].contains("relevance")) << tick.dump();
}

TEST(HostileClients, TheDebugConsoleIsOffUnlessAskedFor) {
  ServerProcess server({});
  ASSERT_NE(server.port(), 0);
  const std::vector<HttpAnswer> answers = http_requests(server.port(), {{http::verb::get, "/debug/clients"}});
  EXPECT_EQ(answers[0].status, http::status::not_found);
  EXPECT_NE(answers[0].body.find("start the server with --debug-http"), std::string::npos) << answers[0].body;
}

TEST(HostileClients, WebRootServesFilesAndRefusesTraversal) {
  ServerProcess server({});
  ASSERT_NE(server.port(), 0);
  const std::vector<std::string> outside = {"/../CMakeLists.txt",
                                            "/js/../../game.h",
                                            "/%2e%2e/game.h",
                                            "/..%2fgame.h",
                                            "/js/..\\..\\game.h",
                                            "/%5c..%5cgame.h",
                                            "//etc/passwd",
                                            "/index.html%00.js",
                                            "/%zz",
                                            "/no-such-file.html",
                                            "http://127.0.0.1/index.html",
                                            "/./index.html"};
  std::vector<std::pair<http::verb, std::string>> requests;
  for (const std::string& target : outside) requests.emplace_back(http::verb::get, target);
  requests.emplace_back(http::verb::get, "/");
  requests.emplace_back(http::verb::get, "/js/main.js?ws=ws://x");
  requests.emplace_back(http::verb::get, "/style.css");
  requests.emplace_back(http::verb::head, "/");
  requests.emplace_back(http::verb::post, "/");
  const std::vector<HttpAnswer> answers = http_requests(server.port(), requests);
  ASSERT_EQ(answers.size(), requests.size());
  for (std::size_t i = 0; i < outside.size(); ++i) {
    EXPECT_EQ(answers[i].status, http::status::not_found) << outside[i];
  }
  std::ifstream index_file(std::filesystem::path(SIGHTLINE_WEB_ROOT) / "index.html", std::ios::binary);
  const std::string index((std::istreambuf_iterator<char>(index_file)), std::istreambuf_iterator<char>());
  const HttpAnswer* answer = &answers[outside.size()];
  EXPECT_EQ(answer[0].status, http::status::ok);
  EXPECT_EQ(answer[0].content_type, "text/html");
  EXPECT_EQ(answer[0].body, index);
  EXPECT_EQ(answer[1].status, http::status::ok);
  EXPECT_EQ(answer[1].content_type, "text/javascript");
  EXPECT_EQ(answer[2].content_type, "text/css");
  EXPECT_EQ(answer[3].status, http::status::ok);
  EXPECT_EQ(answer[3].content_length, std::to_string(index.size()));
  EXPECT_EQ(answer[3].body, "");
  EXPECT_EQ(answer[4].status, http::status::method_not_allowed);
  EXPECT_EQ(server.stop(nullptr), 0);
}

// --- What a good client sees -------------------------------------------------------------------

TEST(HostileClients, GoodClientSeesWelcomeThenTicksOneApart) {
  ServerProcess server({});
  ASSERT_NE(server.port(), 0);
  Client client;
  ASSERT_FALSE(client.connect(server.port()));
  Bytes frame;
  ASSERT_FALSE(client.read(frame));
  const Result<Welcome> welcome = read_welcome(frame);
  ASSERT_TRUE(welcome) << welcome.status().message();
  EXPECT_EQ(welcome->version, kFrameVersion);
  EXPECT_NE(welcome->connection, 0u);
  EXPECT_EQ(welcome->tick_rate, 20);
  EXPECT_EQ(welcome->server_flags, 0);

  Result<ClientMirror> mirror = ClientMirror::create(MirrorDef{});
  ASSERT_TRUE(mirror);
  std::optional<std::uint32_t> last;
  for (int i = 0; i < 20; ++i) {
    ASSERT_FALSE(client.read(frame));
    const Result<TickFrame> tick = read_tick(frame);
    ASSERT_TRUE(tick) << tick.status().message();
    if (last) {
      EXPECT_EQ(tick->tick, *last + 1);
    }
    last = tick->tick;
    for (const auto packet : tick->packets) {
      ASSERT_TRUE(mirror->receive(packet)) << "tick " << tick->tick;
      EXPECT_TRUE(mirror->anomalies().empty());
    }
  }
  EXPECT_GT(mirror->held_count(), 0u);

  // SIGTERM closes every WebSocket with 1001.
  server.terminate();
  const auto [ec, reason] = client.read_until_closed();
  EXPECT_EQ(ec, websocket::error::closed) << ec.message();
  EXPECT_EQ(reason.code, websocket::close_code::going_away);
  nlohmann::json stats;
  EXPECT_EQ(server.stop(&stats), 0);
  EXPECT_EQ(closes(stats, "shutdown"), 1u) << stats.dump();
  EXPECT_GE(stats.value("ticks", 0), 20) << stats.dump();
}

// --- One client cannot reach another's stream --------------------------------------------------

struct Entered {
  float x = 0.0f;
  float z = 0.0f;
  std::uint32_t kind = 0;
};

// Follows one connection's stream: tick headers, the entities it holds and what they are.
struct Follower : MirrorListener {
  explicit Follower(const Welcome& w)
      : welcome(w), mirror(std::move(ClientMirror::create(MirrorDef{})).value()) {}

  void on_enter(EntityId e, SpawnReason, bool, std::span<const std::uint8_t> state, std::uint32_t) override {
    Entered entered;
    Stream s = Stream::reader(state);
    EXPECT_TRUE(s.serialize_quantized(entered.x, 0.0f, welcome.width, 1.0f / 256.0f));
    EXPECT_TRUE(s.serialize_quantized(entered.z, 0.0f, welcome.height, 1.0f / 256.0f));
    EXPECT_TRUE(s.serialize_uint(entered.kind, 0, 3));
    entities[e.index] = entered;
  }
  void on_exit(EntityId e, ExitKind, DespawnReason) override { entities.erase(e.index); }

  // Applies one frame; the tick frame with its tick number and server time zeroed.
  Bytes apply(const Bytes& frame) {
    const Result<TickFrame> tick = read_tick(frame);
    EXPECT_TRUE(tick) << "frame type " << int{frame_type(frame)};
    if (!tick) return {};
    header = *tick;
    for (const auto packet : tick->packets) EXPECT_TRUE(mirror.receive(packet, this));
    Bytes masked = frame;
    std::fill(masked.begin() + 1, masked.begin() + 5, std::uint8_t{0});    // tick
    std::fill(masked.begin() + 22, masked.begin() + 30, std::uint8_t{0});  // server time
    return masked;
  }

  Welcome welcome;
  ClientMirror mirror;
  TickFrame header;
  std::map<std::uint32_t, Entered> entities;
};

TEST(HostileClients, AnotherClientsFramesDoNotReachThisStream) {
  // No walkers: A's stream can only change through B's viewer.
  ServerProcess server({"--entities", "0"});
  ASSERT_NE(server.port(), 0);
  Client a;
  Client b;
  ASSERT_FALSE(a.connect(server.port()));
  ASSERT_FALSE(b.connect(server.port()));
  Bytes frame;
  ASSERT_FALSE(a.read(frame));
  const Result<Welcome> welcome_a = read_welcome(frame);
  ASSERT_TRUE(welcome_a);
  ASSERT_FALSE(b.read(frame));
  const Result<Welcome> welcome_b = read_welcome(frame);
  ASSERT_TRUE(welcome_b);
  ASSERT_NE(welcome_a->connection, welcome_b->connection);
  Follower follower(*welcome_a);

  // B never reads: its frames wait in its socket (a few hundred bytes a second, far from the
  // server's too-slow limit).
  ASSERT_FALSE(a.send(encode_move(1.0f, 1.0f)));
  ASSERT_FALSE(b.send(encode_move(10.0f, 6.0f)));
  // Settled: A at its spot, B beyond L, so A holds nothing.
  Bytes baseline;
  for (int i = 0; i < 200; ++i) {
    ASSERT_FALSE(a.read(frame));
    baseline = follower.apply(frame);
    if (follower.header.viewer_x == 1.0f && follower.header.viewer_z == 1.0f && follower.entities.empty() &&
        i > 5)
      break;
  }
  ASSERT_EQ(follower.header.viewer_x, 1.0f);
  ASSERT_TRUE(follower.entities.empty());

  const std::vector<Bytes> b_frames = {encode_options(0),
                                       encode_radius(6.4f),
                                       encode_options(kOptionInterest),
                                       encode_radius(0.5f),
                                       encode_options(kDefaultOptions),
                                       encode_move(11.0f, 7.0f),
                                       encode_radius(3.0f),
                                       encode_move(10.0f, 6.0f)};
  for (const Bytes& sent : b_frames) {
    ASSERT_FALSE(b.send(sent));
    for (int i = 0; i < 3; ++i) {
      ASSERT_FALSE(a.read(frame));
      EXPECT_EQ(follower.apply(frame), baseline) << "A's tick " << follower.header.tick << " changed";
    }
  }
  EXPECT_EQ(follower.header.enter_radius, welcome_a->enter_radius);
  EXPECT_EQ(follower.header.leave_radius, welcome_a->leave_radius);
  EXPECT_EQ(follower.header.options, kDefaultOptions);

  // B's viewer next to A: A sees it as an ordinary viewer entity, and nothing else changes.
  ASSERT_FALSE(b.send(encode_move(1.5f, 1.25f)));
  for (int i = 0; i < 40 && follower.entities.empty(); ++i) {
    ASSERT_FALSE(a.read(frame));
    follower.apply(frame);
  }
  ASSERT_EQ(follower.entities.size(), 1u);
  const Entered& seen = follower.entities.begin()->second;
  EXPECT_EQ(seen.kind, kKindViewer);
  EXPECT_NEAR(seen.x, 1.5f, 1.0f / 256.0f);
  EXPECT_NEAR(seen.z, 1.25f, 1.0f / 256.0f);
  EXPECT_EQ(follower.header.viewer_x, 1.0f);
  EXPECT_EQ(follower.header.viewer_z, 1.0f);
  EXPECT_TRUE(follower.mirror.anomalies().empty());
  EXPECT_EQ(server.stop(nullptr), 0);
}

}  // namespace
}  // namespace sightline::demo
