// sightline-server over ENet (UDP): one host, one channel, the Game ticked on the same thread
// between calls to enet_host_service. The stream is Delivery::unreliable: the Replicator sends
// spawns and despawns again until the client's ack frames cover them.
#include <enet/enet.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "frames.h"
#include "http_console.h"
#include "metrics.h"
#include "server.h"
#include "server_pages.h"
#include "server_stats.h"
#include "tick_schedule.h"
#include "token_bucket.h"

namespace sightline::demo {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr std::size_t kMaxMessageBytes = 64;
constexpr std::uint32_t kMaxFullClosing = 64;
// Incoming bytes ENet may hold for one peer (fragments, reliable frames out of order): a client
// cannot make the server buffer more, whatever it sends.
constexpr std::size_t kMaxWaitingBytes = 64 * 1024;
// ENet's packet limit is the host's, for both ways, and it allocates a fragmented packet's whole
// length at its first fragment: the limit stays at what a client may send (its frames are held
// to kMaxMessageBytes once assembled) and rises to kMaxSentBytes only while the server sends.
constexpr std::size_t kMaxReceivedBytes = 4096;
// The largest frame the server sends: a tick frame of the send-everything baseline at the Game's
// 100,000 entities.
constexpr std::size_t kMaxSentBytes = std::size_t{8} << 20;
// Bytes queued for one client (reliable frames not yet acknowledged, unreliable ones not yet
// sent) beyond which it is closed as too slow.
constexpr std::size_t kMaxQueuedBytes = std::size_t{4} << 20;
// A closing connection ENet has not finished disconnecting by then is dropped.
constexpr auto kCloseGrace = 5s;
constexpr auto kShutdownGrace = 2s;
constexpr auto kStatusPeriod = 5s;
constexpr auto kMaxWait = 50ms;  // the longest wait in enet_host_service: the stop flag's latency
constexpr int kSocketBufferBytes = 4 << 20;

constexpr const char* kClosedByClient = "client";
constexpr const char* kClosedTimeout = "idle";
constexpr const char* kClosedShutdown = "shutdown";

volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int) { g_stop_signal = 1; }

// Sets SIGINT and SIGTERM to raise the stop flag while it lives, then puts the old handlers back.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// Why the server ended a connection, as ENet's disconnect data (the close frame says it in words).
enum class CloseCode : enet_uint32 { none = 0, full = 1, refused = 2, too_slow = 3, shutdown = 4 };

// What the server keeps for each of ENet's peer slots.
struct Slot {
  std::uint32_t id = 0;  // the Game's connection; 0 while none
  std::optional<TokenBucket> bucket;
  std::optional<TokenBucket> ack_bucket;  // acks apart: one per tick frame is the protocol
  std::size_t queued_bytes = 0;           // sent to ENet and not yet freed by it
  bool live = false;                      // connected and counted, until finished
  bool full = false;                      // accepted only to be closed as "server full"
  std::string close_why;                  // set once the server decided to close
  Clock::time_point close_deadline{};
};

class EnetServer {
 public:
  EnetServer(const ServerDef& def, Game& game) : def_(def), game_(game) {}
  ~EnetServer() {
    // Destroying the host frees the packets still queued, whose callbacks read slots_.
    if (host_ != nullptr) enet_host_destroy(host_);
    if (initialized_) enet_deinitialize();
  }
  EnetServer(const EnetServer&) = delete;
  EnetServer& operator=(const EnetServer&) = delete;

  [[nodiscard]] Status listen();
  [[nodiscard]] Status run();
  [[nodiscard]] const ServerStats& stats() const noexcept { return stats_; }

 private:
  static void deliver(void* context, std::uint32_t connection, std::span<const std::uint8_t> frame);
  static void packet_freed(ENetPacket* packet);
  Slot& slot_of(const ENetPeer* peer) { return slots_[static_cast<std::size_t>(peer - host_->peers)]; }
  void service(Clock::duration wait);
  void on_connect(ENetPeer* peer);
  void on_receive(ENetPeer* peer, std::span<const std::uint8_t> frame);
  void on_disconnect(ENetPeer* peer, enet_uint32 data);
  void send(ENetPeer* peer, std::span<const std::uint8_t> frame, bool reliable);
  void close(ENetPeer* peer, CloseCode code, std::string_view reason, std::string why);
  void finish(ENetPeer* peer, const std::string& why);
  void cut_overdue(Clock::time_point now);
  // A slot made free: ENet's reset, and the round trip its next connection starts from.
  static void reset_peer(ENetPeer* peer) {
    enet_peer_reset(peer);
    peer->roundTripTime = kEnetFirstRoundTripMs;
  }
  void tick();
  void stop();

  const ServerDef& def_;
  Game& game_;
  bool initialized_ = false;
  ENetHost* host_ = nullptr;
  std::vector<Slot> slots_;
  std::unordered_map<std::uint32_t, ENetPeer*> peers_;  // by the Game's connection id
  std::uint32_t live_ = 0;
  std::uint32_t full_closing_ = 0;
  ServerStats stats_;
  TickMetrics tick_metrics_;
  std::optional<HttpConsole> console_;  // with --http-port
  Status failure_;
  bool stopping_ = false;
  Clock::time_point stop_deadline_{};
  std::vector<std::uint8_t> frame_;
};

Status EnetServer::listen() {
  if (enet_initialize() != 0) return {ErrorCode::invalid_argument, "cannot listen: enet_initialize failed"};
  initialized_ = true;
  ENetAddress address{};
  if (enet_address_set_host(&address, def_.host.c_str()) != 0) {
    return {ErrorCode::invalid_def, fmt::format("--host is \"{}\": no IPv4 address", def_.host)};
  }
  address.port = def_.port;
  const std::size_t peers = std::size_t{def_.max_connections} + kMaxFullClosing;
  host_ = enet_host_create(&address, peers, kEnetChannels, 0, 0);
  if (host_ == nullptr) {
    return {ErrorCode::invalid_argument,
            fmt::format("cannot listen on udp {}:{}: {}", def_.host, def_.port, std::strerror(errno))};
  }
  host_->maximumPacketSize = kMaxReceivedBytes;
  host_->maximumWaitingData = kMaxWaitingBytes;
  // Every client's tick frame leaves in one burst a tick, and their acks come back in one: ENet's
  // 256 KB buffers overflow from a few hundred clients, and the kernel drops what does not fit
  // (the kernel caps these at net.core.rmem_max and wmem_max).
  (void)enet_socket_set_option(host_->socket, ENET_SOCKOPT_RCVBUF, kSocketBufferBytes);
  (void)enet_socket_set_option(host_->socket, ENET_SOCKOPT_SNDBUF, kSocketBufferBytes);
  for (std::size_t i = 0; i < host_->peerCount; ++i) host_->peers[i].roundTripTime = kEnetFirstRoundTripMs;
  slots_.resize(host_->peerCount);
  ENetAddress bound{};
  if (enet_socket_get_address(host_->socket, &bound) != 0) bound = address;
  char ip[64] = "?";
  enet_address_get_host_ip(&address, ip, sizeof ip);
  std::printf("sightline-server: enet://%s:%u (Ctrl-C to stop)\n", ip, unsigned{bound.port});
  if (def_.http_port) {
    console_.emplace([this](std::string_view target) {
      ++stats_.http_requests;
      // Connections as over WebSocket: those in the game, not the ones being closed.
      return server_page(target, def_.debug_http, game_, [this] {
        return prometheus_text(stats_, game_.stats(), tick_metrics_, peers_.size());
      });
    });
    if (Status s = console_->listen(def_.host, *def_.http_port); !s) return s;
    std::printf("sightline-server: http://%s:%u/ (metrics and debug console)\n", ip,
                unsigned{console_->port()});
  }
  std::fflush(stdout);
  return {};
}

Status EnetServer::run() {
  const StopSignals signals;
  const Clock::time_point start = Clock::now();
  stats_.rss_kb_start = resident_kb();
  stats_.heap_kb_start = stats_.heap_kb_now = heap_in_use_kb();
  TickSchedule schedule(start, game_.def().tick_rate);
  StatusLine status_line(start);
  Clock::time_point next_status = start + kStatusPeriod;
  std::optional<Clock::time_point> warmup = start + warmup_after(def_);
  const std::optional<Clock::time_point> end =
      def_.seconds > 0.0 ? std::optional(start + std::chrono::duration_cast<Clock::duration>(
                                                     std::chrono::duration<double>(def_.seconds)))
                         : std::nullopt;
  for (;;) {
    const Clock::time_point now = Clock::now();
    if (!stopping_ && (g_stop_signal != 0 || (end && now >= *end))) stop();
    if (stopping_ && (live_ + full_closing_ == 0 || now >= stop_deadline_)) break;
    if (warmup && now >= *warmup) {
      stats_.rss_kb_after_warmup = resident_kb();
      stats_.heap_kb_after_warmup = heap_in_use_kb();
      warmup.reset();
    }
    if (!stopping_ && now >= next_status) {
      spdlog::info("{}", status_line.next(stats_, live_, now));
      next_status = now + kStatusPeriod;
    }
    cut_overdue(now);
    if (console_) console_->poll();
    if (!stopping_ && now >= schedule.next()) {
      tick();
      if (!failure_) {
        stop();
        continue;
      }
      stats_.ticks_skipped += schedule.advance(Clock::now());
      continue;
    }
    service(std::min<Clock::duration>(stopping_ ? kMaxWait : schedule.next() - now, kMaxWait));
  }
  // Whoever is left after the grace is dropped without a word.
  for (std::size_t i = 0; i < host_->peerCount; ++i) {
    ENetPeer* peer = &host_->peers[i];
    if (slots_[i].live || slots_[i].full) {
      finish(peer, slots_[i].close_why.empty() ? kClosedShutdown : slots_[i].close_why);
      reset_peer(peer);
    }
  }
  stats_.rss_kb_end = resident_kb();
  stats_.heap_kb_end = heap_in_use_kb();
  if (!stats_.rss_kb_after_warmup) stats_.rss_kb_after_warmup = stats_.rss_kb_end;
  if (!stats_.heap_kb_after_warmup) stats_.heap_kb_after_warmup = stats_.heap_kb_end;
  return failure_;
}

void EnetServer::service(Clock::duration wait) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::max<Clock::duration>(wait, 0ms));
  ENetEvent event{};
  int got = enet_host_service(host_, &event, static_cast<enet_uint32>(ms.count()));
  // Everything already waiting, not one event per pass: a pass may hold a tick.
  while (got > 0) {
    switch (event.type) {
      case ENET_EVENT_TYPE_CONNECT: on_connect(event.peer); break;
      case ENET_EVENT_TYPE_RECEIVE:
        on_receive(event.peer, {event.packet->data, event.packet->dataLength});
        enet_packet_destroy(event.packet);
        break;
      case ENET_EVENT_TYPE_DISCONNECT:
        on_disconnect(event.peer, event.data);
        event.peer->roundTripTime = kEnetFirstRoundTripMs;  // ENet reset it before the event
        break;
      case ENET_EVENT_TYPE_NONE: break;
    }
    got = enet_host_check_events(host_, &event);
  }
}

void EnetServer::on_connect(ENetPeer* peer) {
  Slot& slot = slot_of(peer);
  slot = Slot{};
  slot.bucket.emplace(def_.max_frames_per_second, def_.max_frames_per_second, Clock::now());
  const double acks = 2.0 * game_.def().tick_rate;
  slot.ack_bucket.emplace(acks, acks, Clock::now());
  const auto idle_ms = static_cast<enet_uint32>(def_.idle_seconds) * 1000u;
  // ENet drops a peer that acknowledges nothing for this long: --idle-seconds, not its 5 to 30 s.
  enet_peer_timeout(peer, 0, idle_ms, idle_ms);
  // The game's stream has its own budget: ENet's throttle would add loss of its own under jitter.
  enet_peer_throttle_configure(peer, ENET_PEER_PACKET_THROTTLE_INTERVAL,
                               ENET_PEER_PACKET_THROTTLE_ACCELERATION, 0);
  if (stopping_) {
    slot.full = true;
    ++full_closing_;
    close(peer, CloseCode::shutdown, "server shutting down", kClosedShutdown);
    return;
  }
  if (live_ >= def_.max_connections) {
    if (full_closing_ >= kMaxFullClosing) {
      ++stats_.upgrades_refused;
      reset_peer(peer);
      return;
    }
    ++stats_.upgrades_full;
    slot.full = true;
    ++full_closing_;
    close(peer, CloseCode::full, "server full", "server full");
    return;
  }
  std::vector<std::uint8_t> welcome;
  Result<std::uint32_t> id = game_.connect(welcome);
  slot.live = true;
  ++live_;
  if (!id) {
    close(peer, CloseCode::refused, id.status().message(), "game refused");
    return;
  }
  slot.id = *id;
  peers_.emplace(slot.id, peer);
  spdlog::debug("connection {} opened", slot.id);
  stats_.connections_peak = std::max(stats_.connections_peak, live_);
  send(peer, welcome, true);
}

void EnetServer::on_receive(ENetPeer* peer, std::span<const std::uint8_t> frame) {
  Slot& slot = slot_of(peer);
  ++stats_.frames_in;
  if (!slot.live || !slot.close_why.empty()) return;  // draining until ENet disconnects it
  if (frame.size() > kMaxMessageBytes) {
    close(peer, CloseCode::refused, "frame too large", "frame too large");
    return;
  }
  TokenBucket& bucket = frame_type(frame) == kAckFrame ? *slot.ack_bucket : *slot.bucket;
  if (!bucket.take(Clock::now())) {
    close(peer, CloseCode::refused, "too many frames", "too many frames");
    return;
  }
  if (const Status status = game_.receive(slot.id, frame); !status)
    close(peer, CloseCode::refused, status.message(), "refused frame");
}

void EnetServer::on_disconnect(ENetPeer* peer, enet_uint32 data) {
  const Slot& slot = slot_of(peer);
  // ENet reports a peer that stopped answering as a disconnect with data 0; a client leaving
  // says goodbye with kClientGoodbye.
  const char* why = data == kClientGoodbye ? kClosedByClient : kClosedTimeout;
  finish(peer, slot.close_why.empty() ? why : slot.close_why);
}

void EnetServer::finish(ENetPeer* peer, const std::string& why) {
  Slot& slot = slot_of(peer);
  if (slot.full) {
    slot.full = false;
    --full_closing_;
    return;
  }
  if (!slot.live) return;
  slot.live = false;
  spdlog::debug("connection {} closed: {}", slot.id, why);
  if (slot.id != 0) {
    game_.disconnect(slot.id);
    peers_.erase(slot.id);
    slot.id = 0;
  }
  --live_;
  ++stats_.closes[why];
}

void EnetServer::packet_freed(ENetPacket* packet) {
  Slot& slot = *static_cast<Slot*>(packet->userData);
  slot.queued_bytes -= std::min(slot.queued_bytes, packet->dataLength);
}

void EnetServer::send(ENetPeer* peer, std::span<const std::uint8_t> frame, bool reliable) {
  Slot& slot = slot_of(peer);
  if (frame.empty()) return;
  if (slot.queued_bytes + frame.size() > kMaxQueuedBytes) {
    close(peer, CloseCode::too_slow, "too slow", "too slow");
    return;
  }
  const enet_uint32 flags = reliable ? ENET_PACKET_FLAG_RELIABLE : ENET_PACKET_FLAG_UNRELIABLE_FRAGMENT;
  ENetPacket* packet = enet_packet_create(frame.data(), frame.size(), flags);
  if (packet == nullptr) {
    close(peer, CloseCode::too_slow, "server out of memory", "out of memory");
    return;
  }
  packet->userData = &slot;
  packet->freeCallback = &EnetServer::packet_freed;
  slot.queued_bytes += frame.size();
  host_->maximumPacketSize = kMaxSentBytes;
  const int sent = enet_peer_send(peer, kEnetStreamChannel, packet);
  host_->maximumPacketSize = kMaxReceivedBytes;
  if (sent != 0) {
    enet_packet_destroy(packet);  // its callback takes its bytes back
    close(peer, CloseCode::too_slow, "cannot queue a frame", "network error");
    return;
  }
  ++stats_.frames_out;
  stats_.bytes_out += frame.size();
}

void EnetServer::close(ENetPeer* peer, CloseCode code, std::string_view reason, std::string why) {
  Slot& slot = slot_of(peer);
  if (!slot.close_why.empty()) return;
  slot.close_why = std::move(why);
  slot.close_deadline = Clock::now() + kCloseGrace;
  frame_.clear();
  write_close(frame_, reason);
  ENetPacket* packet = enet_packet_create(frame_.data(), frame_.size(), ENET_PACKET_FLAG_RELIABLE);
  if (packet != nullptr && enet_peer_send(peer, kEnetStreamChannel, packet) != 0) enet_packet_destroy(packet);
  enet_peer_disconnect_later(peer, static_cast<enet_uint32>(code));
}

// A closing peer that has not let go in time, whatever its queues hold, is dropped.
void EnetServer::cut_overdue(Clock::time_point now) {
  for (std::size_t i = 0; i < host_->peerCount; ++i) {
    Slot& slot = slots_[i];
    if ((slot.live || slot.full) && !slot.close_why.empty() && now >= slot.close_deadline) {
      ENetPeer* peer = &host_->peers[i];
      finish(peer, slot.close_why);
      reset_peer(peer);
    }
  }
}

void EnetServer::tick() {
  const auto began = Clock::now();
  const double now_ms =
      std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch()).count();
  const Status status = game_.tick(now_ms, &EnetServer::deliver, this);
  const auto took = Clock::now() - began;
  stats_.tick_ms.add(std::chrono::duration<double, std::milli>(took).count());
  tick_metrics_.observe(std::chrono::duration<double>(took).count(), game_.stats());
  ++stats_.ticks;
  if (!status) {
    failure_ =
        Status{status.code(), "tick " + std::to_string(stats_.ticks - 1) + " failed: " + status.message()};
    return;
  }
  enet_host_flush(host_);
}

void EnetServer::deliver(void* context, std::uint32_t connection, std::span<const std::uint8_t> frame) {
  auto& server = *static_cast<EnetServer*>(context);
  const auto it = server.peers_.find(connection);
  if (it == server.peers_.end() || !server.slot_of(it->second).close_why.empty()) return;
  const std::uint8_t type = frame_type(frame);
  server.send(it->second, frame, type != kTickFrame && type != kDebugFrame);
}

void EnetServer::stop() {
  if (stopping_) return;
  stopping_ = true;
  stop_deadline_ = Clock::now() + kShutdownGrace;
  for (std::size_t i = 0; i < host_->peerCount; ++i) {
    if (slots_[i].live) close(&host_->peers[i], CloseCode::shutdown, "server shutting down", kClosedShutdown);
  }
  enet_host_flush(host_);
}

}  // namespace

Status run_enet_server(const ServerDef& def, Game& game) {
  if (Status s = validate(def); !s) return s;
  if (def.transport != "enet") {
    return {ErrorCode::invalid_def, "--transport is \"" + def.transport + "\": run_enet_server needs enet"};
  }
  if (game.def().delivery != Delivery::unreliable) {
    return {ErrorCode::invalid_def, "the game's delivery is reliable: ENet carries an unreliable stream"};
  }
  EnetServer server(def, game);
  if (Status s = server.listen(); !s) return s;
  Status outcome = server.run();
  if (!def.stats_json.empty()) {
    if (Status s = write_stats_json(def.stats_json, server.stats()); !s && outcome) outcome = s;
  }
  return outcome;
}

}  // namespace sightline::demo
