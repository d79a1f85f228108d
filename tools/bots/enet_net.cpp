// The bots over ENet (UDP): the bots shared out over threads, each thread serving one client host
// (a UDP socket of its own) with a peer per bot of its share. Each bot
// acks every tick frame (the stream is Delivery::unreliable) and sends its moves unreliably (a
// lost move is overtaken by the next), its options reliably; the server's `close` frame says why
// it ended a connection.
#include <enet/enet.h>
#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "run.h"

namespace sightline::bots {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto kServiceWait = 5ms;
// A handshake not done by then starts again with a fresh connect, as a game client would: ENet
// resends a lost connect after 0.5, 1, 2, 4... s, so under heavy loss a fresh one is sooner.
constexpr auto kConnectRetry = 3s;
// A connection ENet calls open but with no welcome by then starts again too: the server may never
// have seen the handshake finish (ENet gives up a handshake after six unanswered resends, 6.3 s
// from a 100 ms round trip, without a word to the client). --connect-timeout bounds the whole.
constexpr auto kWelcomeWait = 5s;
// A goodbye ENet has not seen acknowledged after this many milliseconds ends the connection
// anyway (the server's acknowledgement may be what was lost; it has the goodbye or will time out).
constexpr enet_uint32 kGoodbyeTimeoutMs = 3000;
// Bytes of a share's UDP receive buffer (the kernel caps it at net.core.rmem_max).
constexpr int kReceiveBuffer = 4 << 20;

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

enum class Phase : std::uint8_t { waiting, connecting, connected, closing, done };

struct EnetBot {
  EnetBot(std::size_t i, const WalkDef& walk, bool check_sets) : index(i), bot(walk, check_sets) {}
  std::size_t index;  // in RunResult::bots
  Bot bot;
  ENetPeer* peer = nullptr;
  Phase phase = Phase::waiting;
  Clock::time_point start_at{};
  Clock::time_point deadline{};   // of the connect, or of the close
  Clock::time_point retry_at{};   // of the connect's next fresh attempt
  Clock::time_point attempted{};  // the last attempt's start
  int attempts = 0;
  Clock::time_point connected{};
  Clock::time_point left{};  // when the bot's disconnect began
  Clock::time_point last_move{};
  Clock::time_point last_frame{};
  std::string server_reason;  // the server's close frame, when one came
};

// One thread's share: bots t, t + threads, ... of the run, on a host of their own.
class EnetRun {
 public:
  EnetRun(const RunDef& def, RunResult& result, std::uint32_t t, std::uint32_t threads,
          Clock::time_point start)
      : def_(def), result_(result), share_(t), threads_(threads), start_(start) {}
  ~EnetRun() {
    if (host_ != nullptr) enet_host_destroy(host_);
  }
  EnetRun(const EnetRun&) = delete;
  EnetRun& operator=(const EnetRun&) = delete;

  void run();
  /// Its bots' delivery delays.
  [[nodiscard]] const DelayHistogram& delays() const noexcept { return delays_; }

 private:
  bool open();
  void fail_all(const std::string& error);
  void step(Clock::time_point now);
  void connect(EnetBot& b, Clock::time_point now);
  void service();
  void on_receive(EnetBot& b, std::span<const std::uint8_t> frame);
  void on_disconnect(EnetBot& b);
  bool send(EnetBot& b, std::span<const std::uint8_t> frame, bool reliable);
  void end(EnetBot& b, Outcome outcome, std::string error);

  const RunDef& def_;
  RunResult& result_;  // each share writes only its own bots' entries
  std::uint32_t share_;
  std::uint32_t threads_;
  Clock::time_point start_;
  DelayHistogram delays_;
  ENetHost* host_ = nullptr;
  ENetAddress address_{};
  std::vector<std::unique_ptr<EnetBot>> bots_;
  std::size_t open_ = 0;  // bots not done
  Clock::time_point end_{};
};

void EnetRun::fail_all(const std::string& error) {
  for (std::size_t i = share_; i < result_.bots.size(); i += threads_) {
    result_.bots[i].outcome = Outcome::failed;
    result_.bots[i].error = error;
  }
}

bool EnetRun::open() {
  if (enet_address_set_host(&address_, def_.host.c_str()) != 0) {
    fail_all(fmt::format("resolve {}: no IPv4 address", def_.host));
    return false;
  }
  address_.port = def_.port;
  const std::size_t peers = (def_.bots - share_ + threads_ - 1) / threads_;
  host_ = enet_host_create(nullptr, peers, demo::kEnetChannels, 0, 0);
  if (host_ == nullptr) {
    fail_all("enet_host_create failed (no UDP socket)");
    return false;
  }
  // A tick's frames for every bot of the share arrive in one burst: ENet's 256 KB receive buffer
  // overflows from about 250 bots a socket, and the kernel drops what does not fit.
  (void)enet_socket_set_option(host_->socket, ENET_SOCKOPT_RCVBUF, kReceiveBuffer);
  return true;
}

void EnetRun::run() {
  if (!open()) return;
  end_ = start_ + seconds(def_.seconds);
  const Clock::time_point hard_stop = end_ + seconds(def_.connect_timeout + def_.grace_seconds);
  for (std::uint32_t i = share_; i < def_.bots; i += threads_) {
    auto b =
        std::make_unique<EnetBot>(i, WalkDef{.seed = def_.seed + i, .speed = def_.speed}, def_.check_sets);
    b->start_at =
        start_ + seconds(def_.ramp_seconds * static_cast<double>(i) / static_cast<double>(def_.bots));
    bots_.push_back(std::move(b));
  }
  open_ = bots_.size();
  while (open_ > 0 && Clock::now() < hard_stop) {
    step(Clock::now());
    service();
  }
  for (const auto& b : bots_) {
    if (b->phase != Phase::done) end(*b, Outcome::hung, "still open when the grace time ran out");
  }
}

// Starts connections as the ramp says, sends what is due, and gives up on what timed out.
void EnetRun::step(Clock::time_point now) {
  const Clock::duration move_period = seconds(1.0 / def_.move_hz);
  for (const auto& bot : bots_) {
    EnetBot& b = *bot;
    switch (b.phase) {
      case Phase::waiting:
        if (now < b.start_at) break;
        b.deadline = now + seconds(def_.connect_timeout);
        connect(b, now);
        break;
      case Phase::connecting:
        if (now >= b.deadline) {
          enet_peer_reset(b.peer);
          end(b, Outcome::failed, "connect: timed out");
        } else if (now >= b.retry_at) {
          b.peer->data = nullptr;
          enet_peer_reset(b.peer);
          connect(b, now);
        }
        break;
      case Phase::connected: {
        // A bot still without its welcome waits on for it, to its connect deadline: a handshake
        // ENet resent under loss may finish only near the run's end.
        if (now >= end_ && (b.bot.welcomed() || now >= b.deadline)) {
          enet_peer_timeout(b.peer, 0, kGoodbyeTimeoutMs, kGoodbyeTimeoutMs);
          enet_peer_disconnect(b.peer, demo::kClientGoodbye);
          b.phase = Phase::closing;
          b.left = now;
          b.deadline = now + seconds(def_.grace_seconds);
          break;
        }
        if (!b.bot.welcomed() && now - b.connected >= kWelcomeWait && now < b.deadline) {
          b.peer->data = nullptr;
          // Tell the server, which may hold the connection, before starting again.
          enet_peer_disconnect_now(b.peer, demo::kClientGoodbye);
          connect(b, now);
          break;
        }
        if (now - b.last_frame > seconds(def_.idle_timeout)) {
          enet_peer_reset(b.peer);
          end(b, Outcome::closed, fmt::format("no server frame for {} s", def_.idle_timeout));
          break;
        }
        if (const auto options = b.bot.take_options(); options && !send(b, *options, true)) {
          end(b, Outcome::closed, "send: cannot queue the options frame");
          break;
        }
        if (now - b.last_move >= move_period) {
          const auto move = b.bot.next_move(std::chrono::duration<double>(now - b.last_move).count());
          b.last_move = now;
          if (move && !send(b, *move, false)) end(b, Outcome::closed, "send: cannot queue a move frame");
        }
        break;
      }
      case Phase::closing:
        if (now >= b.deadline) {
          enet_peer_reset(b.peer);
          end(b, Outcome::hung, "the disconnect was not acknowledged in the grace time");
        }
        break;
      case Phase::done: break;
    }
  }
}

void EnetRun::connect(EnetBot& b, Clock::time_point now) {
  b.peer = enet_host_connect(host_, &address_, demo::kEnetChannels, 0);
  if (b.peer == nullptr) {
    end(b, Outcome::failed, "connect: no free ENet peer");
    return;
  }
  b.peer->data = &b;
  b.peer->roundTripTime = demo::kEnetFirstRoundTripMs;  // before the connect goes out
  // ENet's own rule gives up after six unanswered resends once 5 s have passed, which a 20% loss
  // each way reaches every few hundred reliable frames: only --idle-timeout of silence ends it.
  const auto idle_ms = static_cast<enet_uint32>(def_.idle_timeout * 1000.0);
  enet_peer_timeout(b.peer, 0, idle_ms, idle_ms);
  b.phase = Phase::connecting;
  b.retry_at = now + kConnectRetry;
  ++b.attempts;
  b.attempted = now;
}

void EnetRun::service() {
  ENetEvent event{};
  const auto wait = static_cast<enet_uint32>(std::chrono::milliseconds(kServiceWait).count());
  int got = enet_host_service(host_, &event, wait);
  while (got > 0) {
    // A peer the run has ended (reset) has no bot any more.
    if (auto* bot = static_cast<EnetBot*>(event.peer->data); bot != nullptr) {
      EnetBot& b = *bot;
      switch (event.type) {
        case ENET_EVENT_TYPE_CONNECT:
          b.phase = Phase::connected;
          b.connected = b.last_move = b.last_frame = Clock::now();
          break;
        case ENET_EVENT_TYPE_RECEIVE: on_receive(b, {event.packet->data, event.packet->dataLength}); break;
        case ENET_EVENT_TYPE_DISCONNECT: on_disconnect(b); break;
        case ENET_EVENT_TYPE_NONE: break;
      }
    }
    if (event.type == ENET_EVENT_TYPE_RECEIVE) enet_packet_destroy(event.packet);
    got = enet_host_check_events(host_, &event);
  }
}

void EnetRun::on_receive(EnetBot& b, std::span<const std::uint8_t> frame) {
  if (b.phase != Phase::connected && b.phase != Phase::closing) return;
  b.last_frame = Clock::now();
  if (demo::frame_type(frame) == demo::kCloseFrame) {
    const Result<std::string> reason = demo::read_close(frame);
    b.server_reason = reason ? *reason : reason.status().message();
    return;
  }
  b.bot.on_frame(frame, epoch_ms(), delays_);
  if (const auto ack = b.bot.take_ack(); ack && b.phase == Phase::connected) (void)send(b, *ack, false);
}

void EnetRun::on_disconnect(EnetBot& b) {
  switch (b.phase) {
    case Phase::connecting:
      // ENet gave this attempt up: another, while the connect's time lasts.
      b.peer->data = nullptr;
      if (const Clock::time_point now = Clock::now(); now < b.deadline) {
        connect(b, now);
      } else {
        end(b, Outcome::failed, "connect: refused or timed out");
      }
      break;
    case Phase::closing:
      if (b.server_reason.empty()) {
        end(b, Outcome::finished, {});
      } else {
        end(b, Outcome::closed, fmt::format("closed by the server: \"{}\"", b.server_reason));
      }
      break;
    case Phase::connected:
      end(b, Outcome::closed,
          b.server_reason.empty() ? "disconnected: the server timed out or left"
                                  : fmt::format("closed by the server: \"{}\"", b.server_reason));
      break;
    case Phase::waiting:
    case Phase::done: break;
  }
}

bool EnetRun::send(EnetBot& b, std::span<const std::uint8_t> frame, bool reliable) {
  ENetPacket* packet =
      enet_packet_create(frame.data(), frame.size(), reliable ? ENET_PACKET_FLAG_RELIABLE : 0);
  if (packet == nullptr) return false;
  if (enet_peer_send(b.peer, reliable ? demo::kEnetStreamChannel : demo::kEnetInputChannel, packet) != 0) {
    enet_packet_destroy(packet);
    return false;
  }
  return true;
}

void EnetRun::end(EnetBot& b, Outcome outcome, std::string error) {
  if (b.phase == Phase::done) return;
  BotRun& run = result_.bots[b.index];
  if (outcome == Outcome::finished && !b.bot.welcomed()) {
    outcome = Outcome::failed;
    error = fmt::format(
        "connected, but no welcome came from the server ({} connection attempts, the last {:.1f} s "
        "before the end)",
        b.attempts, std::chrono::duration<double>(Clock::now() - b.attempted).count());
  }
  if (b.phase == Phase::connected || b.phase == Phase::closing) {
    // Up to the bot's goodbye: its rates are over the time it was in the game.
    const Clock::time_point until = b.phase == Phase::closing ? b.left : Clock::now();
    run.connected_seconds = std::chrono::duration<double>(until - b.connected).count();
    b.bot.finish();
  }
  if (b.peer != nullptr) b.peer->data = nullptr;
  b.peer = nullptr;
  b.phase = Phase::done;
  --open_;
  run.outcome = outcome;
  run.error = std::move(error);
  run.totals = b.bot.totals();
  run.notes = b.bot.notes();
  run.tick_rate = b.bot.tick_rate();
}

}  // namespace

RunResult run_enet_bots(const RunDef& def) {
  RunResult result;
  result.bots.resize(def.bots);
  const Clock::time_point began = Clock::now();
  const double cpu_began = process_cpu_seconds();
  if (enet_initialize() != 0) {
    for (BotRun& run : result.bots) {
      run.outcome = Outcome::failed;
      run.error = "enet_initialize failed";
    }
  } else {
    const std::uint32_t threads = std::min(def.threads, def.bots);
    const Clock::time_point start = Clock::now();
    std::vector<std::unique_ptr<EnetRun>> shares;
    for (std::uint32_t t = 0; t < threads; ++t)
      shares.push_back(std::make_unique<EnetRun>(def, result, t, threads, start));
    std::vector<std::thread> workers;
    for (const auto& share : shares) workers.emplace_back([&share] { share->run(); });
    for (std::thread& w : workers) w.join();
    for (const auto& share : shares) result.delays.merge(share->delays());
    shares.clear();
    enet_deinitialize();
  }
  result.wall_seconds = std::chrono::duration<double>(Clock::now() - began).count();
  result.cpu_seconds = process_cpu_seconds() - cpu_began;
  return result;
}

}  // namespace sightline::bots
