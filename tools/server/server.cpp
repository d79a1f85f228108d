// The Beast layer of sightline-server. The Game, the HTTP connections, the acceptor and the
// timers run on the main io_context's thread; each WebSocket runs on one of --io-threads I/O
// threads, an io_context each, so its reads, writes and slowness rule never wait for a tick. The
// two sides talk by posting handlers: a connection's frames go to the Game on the main thread, and
// each tick's frames go into the connections' outboxes (under a lock), which one handler a tick
// per I/O thread flushes.
#include "server.h"

#include <fmt/format.h>
#include <linux/sockios.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <deque>
#include <filesystem>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "frame_guard.h"
#include "frames.h"
#include "guarded_stream.h"
#include "metrics.h"
#include "server_pages.h"
#include "server_stats.h"
#include "tick_schedule.h"
#include "web_files.h"

namespace sightline::demo {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr std::size_t kMaxMessageBytes = 64;
constexpr std::size_t kMaxCloseReasonBytes = 123;
// An HTTP request (an upgrade included) must arrive whole within this, counted from the moment
// the server starts reading it (a silent socket holds a descriptor no longer), and a response
// must be written within as long.
constexpr auto kHttpTimeout = 10s;
constexpr auto kHandshakeTimeout = 30s;
// A close handshake the peer has not finished by then is cut at the TCP level.
constexpr auto kCloseGrace = 5s;
// Upgrades beyond --max-connections accepted at once only to be closed as "server full"; more
// than this in flight are answered 503, so a flood costs a bounded number of sockets.
constexpr std::uint32_t kMaxFullClosing = 64;
constexpr auto kShutdownGrace = 2s;
constexpr auto kStatusPeriod = 5s;
constexpr auto kAcceptRetry = 100ms;
constexpr int kAcceptBatch = 64;
constexpr std::size_t kSpareBuffers = 4;
// A bundle of the frames due to a connection holds at most this much: a late connection's
// backlog goes out in writes of this size, not in one write of all of it (a close waits for the
// message on the wire), and a few of the largest tick frames still fit one.
constexpr std::size_t kMaxBundleBytes = 1024 * 1024;
constexpr std::uint32_t kHttpHeaderLimit = 16 * 1024;
constexpr std::uint64_t kHttpBodyLimit = 16 * 1024;

// Close kinds for the stats, by who or what ended a connection.
constexpr const char* kClosedByClient = "client";
constexpr const char* kClosedIdle = "idle";
constexpr const char* kClosedNetwork = "network error";
constexpr const char* kClosedShutdown = "shutdown";

std::string close_reason_text(std::string_view text) {
  return std::string(text.substr(0, kMaxCloseReasonBytes));
}

class Server;

// One WebSocket client: the Game's connection, its outbound queue and its read limits.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  /// `full`: the server has no place for it; the handshake completes only to close with 1013
  /// "server full", which a browser can show (a refused upgrade reads there as 1006).

  /// `early`: the bytes the client sent right behind the upgrade request (its first frames),
  /// read with the request. `socket` runs on I/O thread `io`, and so does everything below but
  /// stage(), io() and executor(), which the main thread calls.
  Connection(Server& server, tcp::socket socket, std::span<const std::uint8_t> early, bool full,
             std::size_t io);

  void accept(const http::request<http::string_body>& request);
  /// The Game connected it (main thread, posted here): its id and welcome frame; reading starts.
  void joined(std::uint32_t id, const std::vector<std::uint8_t>& welcome);
  /// The Game did not: it is closed (and read until its close frame answers).
  void turned_away(websocket::close_code code, std::string_view reason, std::string why);
  /// Appends one of the Game's frames to the outbox, from the main thread; true when the outbox
  /// was empty (the connection is then due a flush).
  bool stage(std::span<const std::uint8_t> frame);
  /// Queues what the outbox holds, in order.
  void flush();
  /// Starts the close handshake once the frame being written is out; queued frames are dropped.
  void close(websocket::close_code code, std::string_view reason, std::string why);
  [[nodiscard]] std::size_t io() const noexcept { return io_; }
  [[nodiscard]] net::any_io_executor executor() { return ws_.get_executor(); }

 private:
  void push(std::span<const std::uint8_t> frame);
  void gather_next_message();
  void on_accept(beast::error_code ec);
  void read();
  void on_read(beast::error_code ec, std::size_t bytes);
  void on_message();
  void write();
  void on_write(beast::error_code ec, std::size_t bytes);
  void drop_queued();
  bool kernel_keeps_up();
  void refuse_stream();
  void drain();
  void cut();
  void finish(const std::string& why);

  Server& server_;
  websocket::stream<GuardedStream> ws_;
  net::steady_timer close_deadline_;
  std::size_t io_ = 0;
  std::uint32_t id_ = 0;  // 0 until the Game has connected it
  // The frames the main thread staged since the last flush: their bytes, end to end, and sizes.
  std::mutex outbox_mutex_;
  std::vector<std::uint8_t> outbox_bytes_;
  std::vector<std::uint32_t> outbox_sizes_;
  std::size_t outbox_ticks_ = 0;
  bool outbox_overflow_ = false;              // more tick frames staged than a connection may have pending
  std::vector<std::uint8_t> flushing_bytes_;  // the outbox taken by flush(), its buffers kept
  std::vector<std::uint32_t> flushing_sizes_;
  std::array<std::uint8_t, kMaxMessageBytes + 1> message_{};
  std::size_t message_bytes_ = 0;
  std::deque<std::vector<std::uint8_t>> outbound_;  // the first in_flight_ are on the wire while writing_
  std::size_t in_flight_ = 0;
  // The next message, gathered from where its frames lie: one frame, or where several are due a
  // bundle of them, its type byte and length fields in bundle_fields_.
  std::vector<net::const_buffer> message_buffers_;
  std::vector<std::uint8_t> bundle_fields_;
  std::vector<std::vector<std::uint8_t>> spare_;
  std::size_t queued_ticks_ = 0;
  // Tick frames handed to the kernel that it may not have delivered yet: where each ends, in
  // bytes on the wire since the connection opened. Pruned by the socket's unacknowledged bytes.
  std::deque<std::uint64_t> unconfirmed_ticks_;
  std::uint64_t wire_bytes_ = 0;
  std::vector<std::uint8_t> raw_close_;  // a close frame written past Beast, once the guard refused
  std::array<std::uint8_t, 256> drain_{};
  bool writing_ = false;
  std::optional<websocket::close_reason> close_due_;
  std::string close_why_;  // set once the server decided to close
  bool finished_ = false;
  bool full_ = false;
};

// One HTTP connection: files of the web root, until it asks for a WebSocket.
class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(Server& server, tcp::socket socket) : server_(server), stream_(std::move(socket)) {}
  ~HttpSession() { leave_pending(); }
  HttpSession(const HttpSession&) = delete;
  HttpSession& operator=(const HttpSession&) = delete;
  void start();
  /// Closed to make room for a newer connection: whatever it was reading or writing ends.
  void evict();

 private:
  void leave_pending();
  void read();
  void on_read(beast::error_code ec, std::size_t bytes);
  void respond(const http::request<http::string_body>& request);
  void upgrade(http::request<http::string_body> request);
  http::response<http::string_body> text_response(http::status status, std::string_view text, bool head,
                                                  unsigned version, bool keep_alive) const;
  template <class Body>
  void send(http::response<Body>&& response);
  void shutdown();

  Server& server_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::optional<std::list<HttpSession*>::iterator> pending_;  // its place among the HTTP connections
};

class Server {
 public:
  ~Server() {
    if (!io_threads_.empty()) stop_io_threads();
  }
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  Server(const ServerDef& def, Game& game, std::filesystem::path web_root)
      : def_(def),
        game_(game),
        web_root_(std::move(web_root)),
        acceptor_(io_),
        signals_(io_, SIGINT, SIGTERM),
        tick_timer_(io_),
        status_timer_(io_),
        warmup_timer_(io_),
        run_timer_(io_),
        accept_retry_(io_),
        shutdown_timer_(io_),
        tick_frames_allowed_(std::size_t{2} * game.def().tick_rate) {}

  [[nodiscard]] Status listen();
  [[nodiscard]] Status run();
  const ServerStats& stats() const noexcept { return stats_; }

  // For the sessions, on the main thread.
  /// The /metrics page now.
  std::string metrics_text() {
    sync_counters();
    return prometheus_text(stats_, game_.stats(), tick_metrics_, connections_.size());
  }
  Game& game() noexcept { return game_; }
  ServerStats& counters() noexcept { return stats_; }
  const std::filesystem::path& web_root() const noexcept { return web_root_; }
  /// The I/O thread the next WebSocket runs on (round robin) and its io_context.
  std::size_t next_io() noexcept { return next_io_++ % io_pool_.size(); }
  net::io_context& io_context(std::size_t io) noexcept { return *io_pool_[io]; }

  // For the connections, from any thread.
  const ServerDef& def() const noexcept { return def_; }
  bool stopping() const noexcept { return stopping_.load(std::memory_order_relaxed); }
  /// Tick frames a connection may have queued before it is too slow: about 2 s of them.
  std::size_t tick_frames_allowed() const noexcept { return tick_frames_allowed_; }
  void count_frame_in() noexcept { frames_in_.fetch_add(1, std::memory_order_relaxed); }
  void count_frames_out(std::size_t frames, std::size_t bytes) noexcept {
    frames_out_.fetch_add(frames, std::memory_order_relaxed);
    bytes_out_.fetch_add(bytes, std::memory_order_relaxed);
  }
  /// Hands the handshaken connection to the Game (posted to the main thread), which answers with
  /// Connection::joined, or closes it.
  void join(std::shared_ptr<Connection> connection);
  /// A client frame for the Game (posted to the main thread); a refusal closes the connection.
  void receive(std::shared_ptr<Connection> connection, std::uint32_t id, std::span<const std::uint8_t> frame);
  /// Holds a place for a WebSocket; false at --max-connections.
  bool reserve_connection();
  /// Holds one of the few places for a WebSocket that is accepted only to be closed as "server
  /// full"; false when kMaxFullClosing are in flight (the upgrade is then answered 503).
  bool reserve_full_close();
  /// A "server full" connection ended (posted to the main thread).
  void full_closed();
  /// Lists a connection that is not (yet) a WebSocket; at --max-http-connections the oldest
  /// listed is closed first, so silent sockets cannot hold every descriptor (they would lock out
  /// every new client) and a new client always finds room.
  std::list<HttpSession*>::iterator admit_http(HttpSession& session);
  void forget_http(std::list<HttpSession*>::iterator place) { pending_http_.erase(place); }
  /// Every reserved place ends here once, connected or not (posted to the main thread).
  void closed(std::uint32_t id, std::string why);

 private:
  static void deliver(void* context, std::uint32_t connection, std::span<const std::uint8_t> frame);
  void sync_counters();
  void start_io_threads();
  void stop_io_threads();
  void accept();
  void schedule_tick();
  void tick();
  void schedule_status();
  void stop();

  // The HTTP connections, oldest first. Before io_: sessions that pending handlers hold leave it
  // as io_ is destroyed.
  std::list<HttpSession*> pending_http_;
  // The WebSockets' I/O threads, each with its io_context. Before io_: the main thread's handlers
  // may hold the last reference to a connection, whose socket and timers belong to one of these.
  std::vector<std::unique_ptr<net::io_context>> io_pool_;
  std::vector<net::executor_work_guard<net::io_context::executor_type>> io_work_;
  std::vector<std::thread> io_threads_;
  // Destroyed before the members above it: pending handlers hold sessions that refer to them.
  net::io_context io_{1};
  std::size_t next_io_ = 0;
  // The connections with frames staged this tick, by I/O thread: each thread flushes its list.
  std::vector<std::vector<std::shared_ptr<Connection>>> due_;
  ServerDef def_;
  Game& game_;
  std::filesystem::path web_root_;
  tcp::acceptor acceptor_;
  net::signal_set signals_;
  net::steady_timer tick_timer_;
  net::steady_timer status_timer_;
  net::steady_timer warmup_timer_;
  net::steady_timer run_timer_;
  net::steady_timer accept_retry_;
  net::steady_timer shutdown_timer_;
  std::map<std::uint32_t, std::shared_ptr<Connection>> connections_;
  // Connections whose frame the Game refused: the frames they sent after it, read before the
  // close reached them, are dropped.
  std::set<std::uint32_t> refused_;
  std::uint32_t reserved_ = 0;
  std::uint32_t full_closing_ = 0;
  ServerStats stats_;
  std::atomic<std::uint64_t> frames_in_{0};
  std::atomic<std::uint64_t> frames_out_{0};
  std::atomic<std::uint64_t> bytes_out_{0};
  std::size_t tick_frames_allowed_ = 0;
  TickMetrics tick_metrics_;
  Status failure_;
  std::atomic<bool> stopping_{false};
  Clock::time_point start_;
  std::optional<TickSchedule> schedule_;
  std::optional<StatusLine> status_line_;
  Clock::time_point last_accept_error_report_;
};

// --- Connection ------------------------------------------------------------------------------

Connection::Connection(Server& server, tcp::socket socket, std::span<const std::uint8_t> early, bool full,
                       std::size_t io)
    : server_(server),
      ws_(std::move(socket), server.def().max_frames_per_second, early),
      close_deadline_(ws_.get_executor()),
      io_(io) {
  full_ = full;
}

void Connection::accept(const http::request<http::string_body>& request) {
  beast::error_code ignored;
  beast::get_lowest_layer(ws_).socket().set_option(tcp::no_delay(true), ignored);
  beast::get_lowest_layer(ws_).expires_never();
  ws_.set_option(websocket::stream_base::timeout{
      kHandshakeTimeout, std::chrono::seconds(server_.def().idle_seconds), /*keep_alive_pings=*/true});
  ws_.set_option(websocket::stream_base::decorator(
      [](websocket::response_type& response) { response.set(http::field::server, "sightline-server"); }));
  // The 64-byte limit is checked in on_read, so that the close says 1008 "frame too large";
  // Beast's own limit would close with 1009 and no reason. read_some into message_ bounds memory.
  ws_.read_message_max(0);
  ws_.binary(true);
  // A message goes out as one frame in one write: Beast's default cuts it into 4 KB frames, each
  // its own write, which a late tick loop advances one a turn.
  ws_.auto_fragment(false);
  ws_.async_accept(request, beast::bind_front_handler(&Connection::on_accept, shared_from_this()));
}

void Connection::on_accept(beast::error_code ec) {
  if (ec) {
    finish("handshake failed");
    return;
  }

  if (full_) {
    close(websocket::close_code::try_again_later, "server full", "server full");
    read();
    return;
  }
  if (server_.stopping()) {
    close(websocket::close_code::going_away, "server shutting down", kClosedShutdown);
    read();
    return;
  }
  server_.join(shared_from_this());
}

void Connection::turned_away(websocket::close_code code, std::string_view reason, std::string why) {
  close(code, reason, std::move(why));
  read();
}

void Connection::joined(std::uint32_t id, const std::vector<std::uint8_t>& welcome) {
  id_ = id;
  push(welcome);
  write();
  read();
}

// The outbox counts as the server's queue: a connection whose I/O thread lags so far that more tick
// frames wait there than it may have pending is closed as too slow at the next flush, and the
// outbox stops growing.
bool Connection::stage(std::span<const std::uint8_t> frame) {
  const std::lock_guard lock(outbox_mutex_);
  const bool was_empty = outbox_sizes_.empty();
  if (outbox_overflow_) return false;
  if (!frame.empty() && frame[0] == kTickFrame && ++outbox_ticks_ > server_.tick_frames_allowed()) {
    outbox_overflow_ = true;
    return was_empty;
  }
  outbox_bytes_.insert(outbox_bytes_.end(), frame.begin(), frame.end());
  outbox_sizes_.push_back(static_cast<std::uint32_t>(frame.size()));
  return was_empty;
}

void Connection::flush() {
  bool overflow = false;
  {
    const std::lock_guard lock(outbox_mutex_);
    flushing_bytes_.swap(outbox_bytes_);
    flushing_sizes_.swap(outbox_sizes_);
    outbox_ticks_ = 0;
    overflow = outbox_overflow_;
  }
  if (overflow) {
    flushing_bytes_.clear();
    flushing_sizes_.clear();
    close(websocket::close_code::policy_error, "too slow", "too slow");
    return;
  }
  std::size_t at = 0;
  for (const std::uint32_t size : flushing_sizes_) {
    push(std::span(flushing_bytes_.data() + at, size));
    at += size;
  }
  flushing_bytes_.clear();
  flushing_sizes_.clear();
  write();
}

void Connection::read() {
  ws_.async_read_some(net::buffer(message_.data() + message_bytes_, message_.size() - message_bytes_),
                      beast::bind_front_handler(&Connection::on_read, shared_from_this()));
}

void Connection::on_read(beast::error_code ec, std::size_t bytes) {
  if (ec) {
    if (ws_.next_layer().guard().refusal()) {
      if (close_why_.empty()) {
        refuse_stream();
      } else {
        // Refused while the server's own close was under way: nothing more is read from it.
        cut();
        finish(close_why_);
      }
    } else if (ec == websocket::error::closed) {
      finish(kClosedByClient);
    } else if (ec == beast::error::timeout) {
      finish(kClosedIdle);
    } else {
      finish(kClosedNetwork);
    }
    return;
  }
  if (!close_why_.empty()) {
    // Draining what the peer sends until its close frame answers ours.
    message_bytes_ = 0;
    read();
    return;
  }
  message_bytes_ += bytes;
  if (ws_.got_text()) {
    close(websocket::close_code::policy_error, "text frames are not accepted", "text frame");
  } else if (message_bytes_ > kMaxMessageBytes) {
    close(websocket::close_code::policy_error, "frame too large", "frame too large");
  } else if (ws_.is_message_done()) {
    on_message();
  } else {
    read();
    return;
  }
  message_bytes_ = 0;
  read();
}

// The frame rate is the guard's: it meters every frame, control frames included.
void Connection::on_message() {
  server_.count_frame_in();
  server_.receive(shared_from_this(), id_, std::span<const std::uint8_t>(message_.data(), message_bytes_));
}

void Connection::push(std::span<const std::uint8_t> frame) {
  if (finished_ || !close_why_.empty() || frame.empty()) return;
  if (frame[0] == kTickFrame && ++queued_ticks_ + unconfirmed_ticks_.size() > server_.tick_frames_allowed() &&
      !kernel_keeps_up()) {
    close(websocket::close_code::policy_error, "too slow", "too slow");
    return;
  }
  std::vector<std::uint8_t> buffer;
  if (!spare_.empty()) {
    buffer = std::move(spare_.back());
    spare_.pop_back();
  }
  buffer.assign(frame.begin(), frame.end());
  outbound_.push_back(std::move(buffer));
}

// The message for the next write: the first frame queued, or, where several are, a bundle of as
// many as kMaxBundleBytes holds (in_flight_ says how many), gathered in place. A late connection
// catches up in one write rather than one a frame.
void Connection::gather_next_message() {
  message_buffers_.clear();
  std::size_t bytes = 1 + kBundleLengthBytes + outbound_.front().size();
  in_flight_ = 1;
  while (in_flight_ < outbound_.size() &&
         bytes + kBundleLengthBytes + outbound_[in_flight_].size() <= kMaxBundleBytes) {
    bytes += kBundleLengthBytes + outbound_[in_flight_].size();
    ++in_flight_;
  }
  if (in_flight_ == 1) {
    message_buffers_.emplace_back(outbound_.front().data(), outbound_.front().size());
    return;
  }
  begin_bundle(bundle_fields_);
  for (std::size_t i = 0; i < in_flight_; ++i) append_bundle_length(bundle_fields_, outbound_[i].size());
  const std::uint8_t* field = bundle_fields_.data();
  for (std::size_t i = 0; i < in_flight_; ++i) {
    const std::size_t field_bytes = (i == 0 ? 1 : 0) + kBundleLengthBytes;
    message_buffers_.emplace_back(field, field_bytes);
    field += field_bytes;
    message_buffers_.emplace_back(outbound_[i].data(), outbound_[i].size());
  }
}

void Connection::write() {
  if (writing_ || finished_) return;
  if (!raw_close_.empty()) {
    // Beast's stream failed on the refused read: the close frame goes on the socket itself, then
    // the peer's answer is drained until it closes or the close deadline cuts it.
    writing_ = true;
    net::async_write(beast::get_lowest_layer(ws_).socket(), net::buffer(raw_close_),
                     [self = shared_from_this()](beast::error_code, std::size_t) {
                       beast::error_code ignored;
                       beast::get_lowest_layer(self->ws_).socket().shutdown(tcp::socket::shutdown_send,
                                                                            ignored);
                       self->drain();
                     });
    return;
  }
  if (!outbound_.empty()) {
    writing_ = true;
    gather_next_message();
    // A span, so that the operation's copy of the buffer sequence does not allocate.
    ws_.async_write(std::span<const net::const_buffer>(message_buffers_),
                    beast::bind_front_handler(&Connection::on_write, shared_from_this()));
    return;
  }
  if (close_due_) {
    // Nothing may be written after the close frame, so writing_ stays set.
    writing_ = true;
    ws_.async_close(*close_due_, [self = shared_from_this()](beast::error_code) {});
    close_due_.reset();
  }
}

void Connection::on_write(beast::error_code ec, std::size_t bytes) {
  writing_ = false;
  // The message on the wire: its header (2 bytes, 4 with a 16-bit length, 10 with a 64-bit one)
  // and its payload, as the socket's unacknowledged byte count sees it; a tick frame in it is
  // delivered once the byte where it ends is.
  const std::uint64_t payload_at = wire_bytes_ + (bytes < 126 ? 2 : bytes < 65536 ? 4 : 10);
  const std::size_t sent = in_flight_;
  const bool bundled = sent > 1;
  std::uint64_t end = payload_at + (bundled ? 1 : 0);
  for (std::size_t i = 0; i < sent; ++i) {
    std::vector<std::uint8_t> frame = std::move(outbound_.front());
    outbound_.pop_front();
    end += (bundled ? kBundleLengthBytes : 0) + frame.size();
    if (frame[0] == kTickFrame) {
      if (queued_ticks_ > 0) --queued_ticks_;
      unconfirmed_ticks_.push_back(end);
    }
    if (spare_.size() < kSpareBuffers) spare_.push_back(std::move(frame));
  }
  in_flight_ = 0;
  wire_bytes_ = payload_at + bytes;
  // Refused while this frame was going out: Beast, failed, reports the write aborted once it is
  // through, and the close frame follows it.
  if (!raw_close_.empty()) {
    write();
    return;
  }
  if (ec) {
    cut();  // the pending read then fails and finishes the connection
    return;
  }
  server_.count_frames_out(sent, bytes);
  write();
}

void Connection::close(websocket::close_code code, std::string_view reason, std::string why) {
  if (finished_ || !close_why_.empty()) return;
  close_why_ = std::move(why);
  close_due_.emplace(code, close_reason_text(reason));
  drop_queued();
  close_deadline_.expires_after(kCloseGrace);
  close_deadline_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (!ec) self->cut();
  });
  write();
}

void Connection::drop_queued() {
  // What Beast is writing stays.
  const std::size_t keep = writing_ ? in_flight_ : 0;
  outbound_.erase(outbound_.begin() + static_cast<std::ptrdiff_t>(keep), outbound_.end());
  queued_ticks_ = static_cast<std::size_t>(
      std::count_if(outbound_.begin(), outbound_.end(),
                    [](const std::vector<std::uint8_t>& f) { return f[0] == kTickFrame; }));
}

// Whether the tick frames not yet delivered, in the server's queue and in the kernel's, are
// within what a connection may have pending: the kernel's are those past the bytes the peer
// acknowledged (SIOCOUTQ: bytes the socket has not had acknowledged). A client that does not
// read fills its receive window, and then the kernel's send queue, long before the server's
// queue grows: without this it would be kept until the idle timeout.
bool Connection::kernel_keeps_up() {
  int unacknowledged = 0;
  auto& socket = beast::get_lowest_layer(ws_).socket();
  if (ioctl(socket.native_handle(), SIOCOUTQ, &unacknowledged) == 0 && unacknowledged >= 0) {
    const std::uint64_t delivered = wire_bytes_ - std::min<std::uint64_t>(wire_bytes_, unacknowledged);
    while (!unconfirmed_ticks_.empty() && unconfirmed_ticks_.front() <= delivered)
      unconfirmed_ticks_.pop_front();
  }
  return queued_ticks_ + unconfirmed_ticks_.size() <= server_.tick_frames_allowed();
}

void Connection::refuse_stream() {
  const FrameRefusal& refusal = *ws_.next_layer().guard().refusal();
  if (!close_why_.empty() || finished_) return;
  close_why_ = refusal.kind;
  const std::string reason = close_reason_text(refusal.reason);
  raw_close_ = {0x88, static_cast<std::uint8_t>(2 + reason.size()),
                static_cast<std::uint8_t>(refusal.code >> 8), static_cast<std::uint8_t>(refusal.code & 0xff)};
  raw_close_.insert(raw_close_.end(), reason.begin(), reason.end());
  close_due_.reset();
  drop_queued();
  close_deadline_.expires_after(kCloseGrace);
  close_deadline_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (ec) return;
    // No Beast operation is left to finish it: whatever the drain is waiting for, it ends here.
    self->cut();
    self->finish(self->close_why_);
  });
  write();
}

void Connection::drain() {
  beast::get_lowest_layer(ws_).socket().async_read_some(
      net::buffer(drain_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
        if (ec) {
          self->finish(self->close_why_);
          return;
        }
        self->drain();
      });
}

void Connection::cut() { beast::get_lowest_layer(ws_).close(); }

void Connection::finish(const std::string& why) {
  if (finished_) return;
  finished_ = true;
  close_deadline_.cancel();
  drop_queued();
  if (full_) {
    server_.full_closed();
    return;
  }
  server_.closed(id_, close_why_.empty() ? why : close_why_);
}

// --- HttpSession -----------------------------------------------------------------------------

void HttpSession::start() {
  pending_ = server_.admit_http(*this);
  read();
}

void HttpSession::evict() {
  leave_pending();
  beast::error_code ignored;
  stream_.socket().close(ignored);
}

void HttpSession::leave_pending() {
  if (pending_) server_.forget_http(*pending_);
  pending_.reset();
}

void HttpSession::read() {
  parser_.emplace();
  parser_->header_limit(kHttpHeaderLimit);
  parser_->body_limit(kHttpBodyLimit);
  stream_.expires_after(kHttpTimeout);
  http::async_read(stream_, buffer_, *parser_,
                   beast::bind_front_handler(&HttpSession::on_read, shared_from_this()));
}

void HttpSession::on_read(beast::error_code ec, std::size_t) {
  if (ec == http::error::end_of_stream) {
    shutdown();
    return;
  }
  if (ec) {
    if (ec.category() == http::make_error_code(http::error::bad_target).category()) {
      send(text_response(http::status::bad_request, "bad request\n", false, 11, false));
    }
    return;
  }
  ++server_.counters().http_requests;
  http::request<http::string_body> request = parser_->release();
  if (websocket::is_upgrade(request)) {
    upgrade(std::move(request));
    return;
  }
  respond(request);
}

http::response<http::string_body> HttpSession::text_response(http::status status, std::string_view text,
                                                             bool head, unsigned version,
                                                             bool keep_alive) const {
  http::response<http::string_body> response{status, version};
  response.set(http::field::server, "sightline-server");
  response.set(http::field::content_type, "text/plain");
  response.keep_alive(keep_alive);
  response.content_length(text.size());
  if (!head) response.body() = std::string(text);
  return response;
}

void HttpSession::respond(const http::request<http::string_body>& request) {
  const bool head = request.method() == http::verb::head;
  const unsigned version = request.version();
  const bool keep_alive = request.keep_alive();
  if (!head && request.method() != http::verb::get) {
    auto response =
        text_response(http::status::method_not_allowed, "method not allowed\n", false, version, keep_alive);
    response.set(http::field::allow, "GET, HEAD");
    send(std::move(response));
    return;
  }
  const std::string_view target(request.target().data(), request.target().size());
  if (std::optional<ServerPage> page = server_page(target, server_.def().debug_http, server_.game(),
                                                   [this] { return server_.metrics_text(); })) {
    auto response =
        text_response(static_cast<http::status>(page->status), page->body, head, version, keep_alive);
    response.set(http::field::content_type, page->content_type);
    response.set(http::field::cache_control, "no-cache");
    send(std::move(response));
    return;
  }
  const std::optional<std::filesystem::path> file = web_file(server_.web_root(), request.target());
  http::file_body::value_type body;
  beast::error_code ec;
  if (file) body.open(file->c_str(), beast::file_mode::scan, ec);
  if (!file || ec) {
    send(text_response(http::status::not_found, "not found\n", head, version, keep_alive));
    return;
  }
  const std::uint64_t size = body.size();
  auto fill = [&](auto& response) {
    response.set(http::field::server, "sightline-server");
    response.set(http::field::content_type, content_type(*file));
    response.set(http::field::cache_control, "no-cache");
    response.content_length(size);
    response.keep_alive(keep_alive);
  };
  if (head) {
    http::response<http::empty_body> response{http::status::ok, version};
    fill(response);
    send(std::move(response));
    return;
  }
  http::response<http::file_body> response{std::piecewise_construct, std::make_tuple(std::move(body)),
                                           std::make_tuple(http::status::ok, version)};
  fill(response);
  send(std::move(response));
}

void HttpSession::upgrade(http::request<http::string_body> request) {
  // Beast takes any key of up to 24 characters; RFC 6455 asks for 16 bytes in base64.
  if (!is_websocket_key(request[http::field::sec_websocket_key])) {
    ++server_.counters().upgrades_refused;
    send(text_response(http::status::bad_request, "Sec-WebSocket-Key is not 16 bytes in base64\n", false,
                       request.version(), false));
    return;
  }
  const bool placed = !server_.stopping() && server_.reserve_connection();
  if (!placed && (server_.stopping() || !server_.reserve_full_close())) {
    ++server_.counters().upgrades_refused;
    send(text_response(http::status::service_unavailable, "too many connections\n", false, request.version(),
                       false));
    return;
  }
  if (!placed) ++server_.counters().upgrades_full;
  leave_pending();
  stream_.expires_never();
  const auto early = buffer_.cdata();
  // The WebSocket goes to an I/O thread: its socket moves to that thread's io_context.
  const std::size_t io = server_.next_io();
  tcp::socket here = stream_.release_socket();
  beast::error_code ec;
  const tcp::endpoint local = here.local_endpoint(ec);
  tcp::socket::native_handle_type handle = -1;
  if (!ec) handle = here.release(ec);
  tcp::socket there(server_.io_context(io));
  if (!ec && (there.assign(local.protocol(), handle, ec), ec)) ::close(handle);
  if (ec) {
    // Not moved: the socket is closed, and its place given back.
    if (placed) {
      server_.closed(0, "handshake failed");
    } else {
      server_.full_closed();
    }
    return;
  }
  auto connection = std::make_shared<Connection>(
      server_, std::move(there), std::span(static_cast<const std::uint8_t*>(early.data()), early.size()),
      !placed, io);
  net::post(connection->executor(),
            [connection, request = std::move(request)] { connection->accept(request); });
}

template <class Body>
void HttpSession::send(http::response<Body>&& response) {
  auto message = std::make_shared<http::response<Body>>(std::move(response));
  stream_.expires_after(kHttpTimeout);
  http::async_write(stream_, *message,
                    [self = shared_from_this(), message](beast::error_code ec, std::size_t) {
                      if (ec) return;
                      if (message->need_eof()) {
                        self->shutdown();
                      } else {
                        self->read();
                      }
                    });
}

void HttpSession::shutdown() {
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

// --- Server ----------------------------------------------------------------------------------

Status Server::listen() {
  beast::error_code ec;
  tcp::resolver resolver(io_);
  const auto endpoints = resolver.resolve(def_.host, std::to_string(def_.port), ec);
  if (ec || endpoints.empty()) {
    return {ErrorCode::invalid_def,
            fmt::format("--host is \"{}\": {}", def_.host, ec ? ec.message() : "no address")};
  }
  const tcp::endpoint endpoint = *endpoints.begin();
  const std::string where = fmt::format("{}:{}", endpoint.address().to_string(), def_.port);
  auto failed = [&](const char* step) {
    return Status{ErrorCode::invalid_argument,
                  fmt::format("cannot listen on {} ({}): {}", where, step, ec.message())};
  };
  if (acceptor_.open(endpoint.protocol(), ec); ec) return failed("open");
  if (acceptor_.set_option(net::socket_base::reuse_address(true), ec); ec) return failed("reuse_address");
  if (acceptor_.bind(endpoint, ec); ec) return failed("bind");
  if (acceptor_.listen(net::socket_base::max_listen_connections, ec); ec) return failed("listen");
  if (acceptor_.non_blocking(true, ec); ec) return failed("non_blocking");
  const tcp::endpoint local = acceptor_.local_endpoint(ec);
  if (ec) return failed("local_endpoint");
  const std::string address =
      local.address().is_v6() ? "[" + local.address().to_string() + "]" : local.address().to_string();
  std::printf("sightline-server: http://%s:%u/ (Ctrl-C to stop)\n", address.c_str(), unsigned{local.port()});
  std::fflush(stdout);
  return {};
}

Status Server::run() {
  signals_.async_wait([this](beast::error_code ec, int) {
    if (!ec) stop();
  });
  start_ = Clock::now();
  stats_.rss_kb_start = resident_kb();
  stats_.heap_kb_start = stats_.heap_kb_now = heap_in_use_kb();
  schedule_.emplace(start_, game_.def().tick_rate);
  status_line_.emplace(start_);
  accept();
  schedule_tick();
  schedule_status();
  warmup_timer_.expires_after(warmup_after(def_));
  warmup_timer_.async_wait([this](beast::error_code ec) {
    if (ec) return;
    stats_.rss_kb_after_warmup = resident_kb();
    stats_.heap_kb_after_warmup = heap_in_use_kb();
  });
  if (def_.seconds > 0.0) {
    run_timer_.expires_after(
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(def_.seconds)));
    run_timer_.async_wait([this](beast::error_code ec) {
      if (!ec) stop();
    });
  }
  start_io_threads();
  io_.run();
  stop_io_threads();
  sync_counters();
  stats_.rss_kb_end = resident_kb();
  stats_.heap_kb_end = heap_in_use_kb();
  // A run shorter than the warm-up has its only figures at the end.
  if (!stats_.rss_kb_after_warmup) stats_.rss_kb_after_warmup = stats_.rss_kb_end;
  if (!stats_.heap_kb_after_warmup) stats_.heap_kb_after_warmup = stats_.heap_kb_end;
  return failure_;
}

void Server::accept() {
  acceptor_.async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (stopping_) return;
    if (ec) {
      // Out of file descriptors: the oldest connection that is not yet a WebSocket makes room
      // (silent sockets would otherwise lock every new client out); with none, wait for some
      // to close rather than spin.
      if ((ec == net::error::no_descriptors || ec == boost::system::errc::too_many_files_open_in_system) &&
          !pending_http_.empty()) {
        ++stats_.http_evicted;
        pending_http_.front()->evict();
        accept();
        return;
      }
      const auto now = Clock::now();
      if (now - last_accept_error_report_ >= kStatusPeriod) {
        spdlog::warn("accept: {} (retrying)", ec.message());
        last_accept_error_report_ = now;
      }
      accept_retry_.expires_after(kAcceptRetry);
      accept_retry_.async_wait([this](beast::error_code wait_ec) {
        if (!wait_ec && !stopping_) accept();
      });
      return;
    }
    std::make_shared<HttpSession>(*this, std::move(socket))->start();
    // The loop runs the reactor once per pass over its queue, and a pass holds a tick: one accept
    // per pass would admit ~15 connections a second under load. Take what is already waiting.
    for (int taken = 0; taken < kAcceptBatch; ++taken) {
      beast::error_code more_ec;
      tcp::socket more = acceptor_.accept(more_ec);
      if (more_ec) break;
      std::make_shared<HttpSession>(*this, std::move(more))->start();
    }
    accept();
  });
}

void Server::schedule_tick() {
  tick_timer_.expires_at(schedule_->next());
  tick_timer_.async_wait([this](beast::error_code ec) {
    if (!ec && !stopping_) tick();
  });
}

void Server::tick() {
  const auto began = Clock::now();
  const double now_ms =
      std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch()).count();
  Status status = game_.tick(now_ms, &Server::deliver, this);
  // One handler a tick per I/O thread queues the frames of its connections.
  for (std::size_t io = 0; io < due_.size(); ++io) {
    if (due_[io].empty()) continue;
    net::post(*io_pool_[io], [due = std::move(due_[io])] {
      for (const std::shared_ptr<Connection>& connection : due) connection->flush();
    });
    due_[io] = {};
  }
  const auto took = Clock::now() - began;
  stats_.tick_ms.add(std::chrono::duration<double, std::milli>(took).count());
  const GameStats game = game_.stats();
  const TickTimings& phases = game.last_phases;
  stats_.world_ms.add(1e-6 * static_cast<double>(phases.spaces_ns + phases.index_ns + phases.relevance_ns +
                                                 phases.events_ns + phases.release_ns));
  stats_.send_ms.add(1e-6 * static_cast<double>(game.last_send_ns));
  tick_metrics_.observe(std::chrono::duration<double>(took).count(), game_.stats());
  ++stats_.ticks;
  if (!status) {
    failure_ =
        Status{status.code(), "tick " + std::to_string(stats_.ticks - 1) + " failed: " + status.message()};
    stop();
    return;
  }
  stats_.ticks_skipped += schedule_->advance(Clock::now());
  schedule_tick();
}

void Server::deliver(void* context, std::uint32_t connection, std::span<const std::uint8_t> frame) {
  Server& server = *static_cast<Server*>(context);
  const auto it = server.connections_.find(connection);
  if (it == server.connections_.end()) return;
  if (it->second->stage(frame)) server.due_[it->second->io()].push_back(it->second);
}

void Server::sync_counters() {
  stats_.frames_in = frames_in_.load(std::memory_order_relaxed);
  stats_.frames_out = frames_out_.load(std::memory_order_relaxed);
  stats_.bytes_out = bytes_out_.load(std::memory_order_relaxed);
}

void Server::start_io_threads() {
  for (std::uint32_t t = 0; t < def_.io_threads; ++t) {
    io_pool_.push_back(std::make_unique<net::io_context>(1));
    io_work_.push_back(net::make_work_guard(*io_pool_.back()));
    // A socket opened once makes the io_context create its reactor now: made lazily, by the
    // first WebSocket, it could find the descriptors used up (and throw).
    tcp::socket probe(*io_pool_.back());
    beast::error_code ignored;
    probe.open(tcp::v4(), ignored);
  }
  due_.resize(io_pool_.size());
  for (auto& context : io_pool_) io_threads_.emplace_back([&context] { context->run(); });
}

// After the main loop ended: what the I/O threads still hold is dropped with their io_contexts.
void Server::stop_io_threads() {
  stats_.io_threads = static_cast<std::uint32_t>(io_threads_.size());
  // Read while the threads still run: one that has run out of work and ended has no clock.
  for (std::thread& thread : io_threads_) {
    clockid_t clock{};
    timespec used{};
    if (pthread_getcpuclockid(thread.native_handle(), &clock) == 0 && clock_gettime(clock, &used) == 0)
      stats_.io_cpu_seconds += static_cast<double>(used.tv_sec) + 1e-9 * static_cast<double>(used.tv_nsec);
  }
  io_work_.clear();
  for (auto& context : io_pool_) context->stop();
  for (std::thread& thread : io_threads_) thread.join();
  io_threads_.clear();
}

void Server::join(std::shared_ptr<Connection> connection) {
  net::post(io_, [this, connection = std::move(connection)] {
    const net::any_io_executor there = connection->executor();
    if (stopping()) {
      net::post(there, [connection] {
        connection->turned_away(websocket::close_code::going_away, "server shutting down", kClosedShutdown);
      });
      return;
    }
    std::vector<std::uint8_t> welcome;
    Result<std::uint32_t> id = game_.connect(welcome);
    if (!id) {
      net::post(there, [connection, why = id.status().message()] {
        connection->turned_away(websocket::close_code::try_again_later, why, "game refused");
      });
      return;
    }
    spdlog::debug("connection {} opened", *id);
    connections_.emplace(*id, connection);
    stats_.connections_peak =
        std::max(stats_.connections_peak, static_cast<std::uint32_t>(connections_.size()));
    net::post(there,
              [connection, id = *id, welcome = std::move(welcome)] { connection->joined(id, welcome); });
  });
}

void Server::receive(std::shared_ptr<Connection> connection, std::uint32_t id,
                     std::span<const std::uint8_t> frame) {
  std::array<std::uint8_t, kMaxMessageBytes> bytes{};
  std::copy(frame.begin(), frame.end(), bytes.begin());
  net::post(io_, [this, connection = std::move(connection), id, bytes, size = frame.size()]() mutable {
    if (refused_.count(id) != 0) return;
    const Status status = game_.receive(id, std::span<const std::uint8_t>(bytes.data(), size));
    if (status) return;
    refused_.insert(id);
    net::post(connection->executor(), [connection, why = status.message()] {
      connection->close(websocket::close_code::policy_error, why, "refused frame");
    });
  });
}

void Server::schedule_status() {
  status_timer_.expires_after(kStatusPeriod);
  status_timer_.async_wait([this](beast::error_code ec) {
    if (ec || stopping_) return;
    sync_counters();
    spdlog::info("{}", status_line_->next(stats_, connections_.size(), Clock::now()));
    schedule_status();
  });
}

std::list<HttpSession*>::iterator Server::admit_http(HttpSession& session) {
  if (pending_http_.size() >= def_.max_http_connections) {
    ++stats_.http_evicted;
    pending_http_.front()->evict();
  }
  return pending_http_.insert(pending_http_.end(), &session);
}

bool Server::reserve_connection() {
  if (reserved_ >= def_.max_connections) return false;
  ++reserved_;
  return true;
}

bool Server::reserve_full_close() {
  if (full_closing_ >= kMaxFullClosing) return false;
  ++full_closing_;
  return true;
}

void Server::closed(std::uint32_t id, std::string why) {
  net::post(io_, [this, id, why = std::move(why)] {
    if (id != 0) {
      spdlog::debug("connection {} closed: {}", id, why);
      game_.disconnect(id);
      connections_.erase(id);
      refused_.erase(id);
    }
    --reserved_;
    ++stats_.closes[why];
    if (stopping() && reserved_ == 0) io_.stop();
  });
}

void Server::full_closed() {
  net::post(io_, [this] { --full_closing_; });
}

void Server::stop() {
  if (stopping()) return;
  stopping_ = true;
  beast::error_code ignored;
  acceptor_.close(ignored);
  signals_.cancel(ignored);
  tick_timer_.cancel();
  status_timer_.cancel();
  warmup_timer_.cancel();
  run_timer_.cancel();
  accept_retry_.cancel();
  std::vector<std::shared_ptr<Connection>> open;
  for (const auto& [id, connection] : connections_) open.push_back(connection);
  for (const auto& connection : open) {
    net::post(connection->executor(), [connection] {
      connection->close(websocket::close_code::going_away, "server shutting down", kClosedShutdown);
    });
  }
  if (reserved_ == 0) {
    io_.stop();
    return;
  }
  // Clients that do not finish the close handshake in time are left behind.
  shutdown_timer_.expires_after(kShutdownGrace);
  shutdown_timer_.async_wait([this](beast::error_code ec) {
    if (!ec) io_.stop();
  });
}

// Room for --max-connections sockets: the soft descriptor limit (often 1024) raised to the hard one.
void raise_descriptor_limit(std::uint32_t connections) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &limit);
  }
  const rlim_t needed = rlim_t{connections} + 64;
  if (limit.rlim_cur < needed) {
    spdlog::warn(
        "the file descriptor limit is {}, below --max-connections + --max-http-connections + 64 = {}",
        static_cast<std::uint64_t>(limit.rlim_cur), static_cast<std::uint64_t>(needed));
  }
}

Status bad(const std::string& option, const std::string& value, const std::string& rule) {
  return {ErrorCode::invalid_def, option + " is " + value + ": " + rule};
}

}  // namespace

std::chrono::steady_clock::duration warmup_after(const ServerDef& def) {
  using std::chrono::duration;
  const double seconds = def.warmup_seconds > 0.0 ? def.warmup_seconds : std::max(5.0, def.seconds / 10.0);
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(duration<double>(seconds));
}

Status validate(const ServerDef& def) {
  const bool enet = def.transport == "enet";
  if (!enet && def.transport != "websocket") {
    return bad("--transport", "\"" + def.transport + "\"", "must be websocket or enet");
  }
  if (def.host.empty()) return bad("--host", "\"\"", "must name an address");
  if (enet && def.debug_http && !def.http_port) {
    return bad("--debug-http", "on", "needs an HTTP port: over ENet, give --http-port");
  }
  if (!enet && def.http_port) {
    return bad("--http-port", std::to_string(*def.http_port),
               "is the ENet transport's (WebSocket serves HTTP on --port)");
  }
  if (enet && def.max_connections > kMaxEnetConnections) {
    return bad("--max-connections", std::to_string(def.max_connections),
               "must be in [1, " + std::to_string(kMaxEnetConnections) + "] over ENet");
  }
  if (def.max_connections < 1 || def.max_connections > 100000) {
    return bad("--max-connections", std::to_string(def.max_connections), "must be in [1, 100000]");
  }
  if (def.max_http_connections < 1 || def.max_http_connections > 100000) {
    return bad("--max-http-connections", std::to_string(def.max_http_connections), "must be in [1, 100000]");
  }
  if (def.io_threads < 1 || def.io_threads > 64) {
    return bad("--io-threads", std::to_string(def.io_threads), "must be in [1, 64]");
  }
  if (def.max_frames_per_second < 1 || def.max_frames_per_second > 10000) {
    return bad("--max-frames-per-second", std::to_string(def.max_frames_per_second), "must be in [1, 10000]");
  }
  if (def.idle_seconds < 1 || def.idle_seconds > 86400) {
    return bad("--idle-seconds", std::to_string(def.idle_seconds), "must be in [1, 86400]");
  }
  if (!(def.warmup_seconds >= 0.0 && def.warmup_seconds <= 1e7)) {
    return bad("--warmup-seconds", fmt::format("{}", def.warmup_seconds), "must be in [0, 1e7]");
  }
  if (!(def.seconds >= 0.0 && def.seconds <= 1e7)) {
    return bad("--seconds", fmt::format("{}", def.seconds),
               "must be in [0, 1e7] (0: until SIGINT or SIGTERM)");
  }
  std::error_code ec;
  if (!enet && !std::filesystem::is_directory(def.web_root, ec)) {
    return bad("--web-root", "\"" + def.web_root + "\"", "not a directory");
  }
  return {};
}

Status run_server(const ServerDef& def, Game& game) {
  if (Status s = validate(def); !s) return s;
  std::error_code ec;
  std::filesystem::path web_root = std::filesystem::canonical(def.web_root, ec);
  if (ec) return bad("--web-root", "\"" + def.web_root + "\"", ec.message());
  // Each I/O thread's io_context holds 3 (epoll, eventfd, timerfd).
  raise_descriptor_limit(def.max_connections + def.max_http_connections + 3 * def.io_threads);
  Server server(def, game, std::move(web_root));
  if (Status s = server.listen(); !s) return s;
  Status outcome;
  try {
    outcome = server.run();
  } catch (const std::exception& e) {
    // Out of descriptors or threads as the I/O threads start, say: the run ends with the reason.
    return {ErrorCode::invalid_argument, std::string("the server stopped: ") + e.what()};
  }
  if (!def.stats_json.empty()) {
    if (Status s = write_stats_json(def.stats_json, server.stats()); !s && outcome) outcome = s;
  }
  return outcome;
}

}  // namespace sightline::demo
