// The bots' network (the only Beast TU): one coroutine per bot connects, walks and closes, and
// one more reads its frames; the bots are shared out over threads, each running an io_context
// of its own.
#include <fmt/format.h>
#include <sys/resource.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "run.h"

namespace sightline::bots {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
constexpr auto nothrow = asio::as_tuple(asio::use_awaitable);

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// What one thread's bots share. Each bot writes its own BotRun alone.
struct Shared {
  const RunDef& def;
  std::vector<BotRun>& bots;
  tcp::resolver::results_type endpoints;
  Clock::time_point start;
  Clock::time_point end;
  DelayHistogram delays;  // this thread's bots' tick frames
  std::uint32_t running = 0;
};

struct Session {
  Session(asio::any_io_executor ex, const WalkDef& walk, bool check_sets)
      : ws(ex), wake(ex), bot(walk, check_sets) {}
  websocket::stream<beast::tcp_stream> ws;
  asio::steady_timer wake;  // the walk's timer, cancelled when the reader ends
  Bot bot;
  bool closing = false;
  bool reader_done = false;
  std::string reader_error;
};

asio::awaitable<void> read_frames(std::shared_ptr<Session> s, Shared& shared) {
  beast::flat_buffer buffer;
  for (;;) {
    auto [ec, size] = co_await s->ws.async_read(buffer, nothrow);
    if (ec) {
      // While our close runs, the read ends (closed, or aborted by the close): the close's own
      // result says whether the connection ended well.
      if (!s->closing) {
        const websocket::close_reason& why = s->ws.reason();
        s->reader_error =
            why.code != websocket::close_code::none
                ? fmt::format("closed by the server: code {} \"{}\"", static_cast<int>(why.code),
                              std::string(why.reason.data(), why.reason.size()))
                : "read: " + ec.message();
      }
      break;
    }
    const auto data = buffer.cdata();
    s->bot.on_message({static_cast<const std::uint8_t*>(data.data()), size}, epoch_ms(), shared.delays);
    buffer.consume(size);
  }
  s->reader_done = true;
  s->wake.cancel();
}

asio::awaitable<void> run_bot(Shared& shared, std::size_t i) {
  const RunDef& def = shared.def;
  BotRun& run = shared.bots[i];
  const auto ex = co_await asio::this_coro::executor;
  auto s = std::make_shared<Session>(ex, WalkDef{.seed = def.seed + i, .speed = def.speed}, def.check_sets);

  s->wake.expires_at(shared.start +
                     seconds(def.ramp_seconds * static_cast<double>(i) / static_cast<double>(def.bots)));
  co_await s->wake.async_wait(nothrow);

  auto& tcp_stream = beast::get_lowest_layer(s->ws);
  tcp_stream.expires_after(seconds(def.connect_timeout));
  if (auto [ec, ep] = co_await tcp_stream.async_connect(shared.endpoints, nothrow); ec) {
    run.outcome = Outcome::failed;
    run.error = "connect: " + ec.message();
    co_return;
  }
  tcp_stream.expires_never();  // the WebSocket's own timeouts from here
  s->ws.set_option(websocket::stream_base::timeout{seconds(def.connect_timeout), seconds(def.idle_timeout),
                                                   /*keep_alive_pings=*/false});
  s->ws.set_option(websocket::stream_base::decorator(
      [](websocket::request_type& req) { req.set(beast::http::field::user_agent, "sightline-bots"); }));
  s->ws.read_message_max(std::size_t{1} << 24);
  const std::string host = fmt::format("{}:{}", def.host, def.port);
  if (auto [ec] = co_await s->ws.async_handshake(host, "/ws", nothrow); ec) {
    run.outcome = Outcome::failed;
    run.error = "WebSocket handshake: " + ec.message();
    co_return;
  }
  s->ws.binary(true);
  const Clock::time_point connected = Clock::now();
  asio::co_spawn(ex, read_frames(s, shared), asio::detached);

  const Clock::duration period = seconds(1.0 / def.move_hz);
  Clock::time_point last_move = connected;
  std::string error;
  while (!s->reader_done && Clock::now() < shared.end) {
    s->wake.expires_at(std::min(last_move + period, shared.end));
    co_await s->wake.async_wait(nothrow);
    if (s->reader_done || Clock::now() >= shared.end) break;
    const Clock::time_point now = Clock::now();
    if (const auto options = s->bot.take_options()) {
      if (auto [ec, n] = co_await s->ws.async_write(asio::buffer(*options), nothrow); ec) {
        error = "write: " + ec.message();
        break;
      }
    }
    const auto move = s->bot.next_move(std::chrono::duration<double>(now - last_move).count());
    last_move = now;
    if (!move) continue;
    if (auto [ec, n] = co_await s->ws.async_write(asio::buffer(*move), nothrow); ec) {
      error = "write: " + ec.message();
      break;
    }
    if (!def.radius_churn) continue;
    const auto radius = s->bot.take_radius((static_cast<double>(i) + 0.5) / static_cast<double>(def.bots));
    if (!radius) continue;
    if (auto [ec, n] = co_await s->ws.async_write(asio::buffer(*radius), nothrow); ec) {
      error = "write: " + ec.message();
      break;
    }
  }
  if (!s->reader_done && error.empty()) {
    s->closing = true;
    if (auto [ec] = co_await s->ws.async_close(websocket::close_code::normal, nothrow); ec) {
      error = "close: " + ec.message();
    }
  }
  if (!error.empty()) beast::get_lowest_layer(s->ws).close();  // ends the reader
  while (!s->reader_done) {
    s->wake.expires_after(std::chrono::milliseconds(20));
    co_await s->wake.async_wait(nothrow);
  }
  run.connected_seconds = std::chrono::duration<double>(Clock::now() - connected).count();
  s->bot.finish();
  run.tick_rate = s->bot.tick_rate();
  run.totals = s->bot.totals();
  run.notes = s->bot.notes();
  if (error.empty()) error = s->reader_error;
  if (error.empty() && !s->bot.welcomed()) error = "no welcome frame came";
  run.outcome = error.empty() ? Outcome::finished : Outcome::closed;
  run.error = std::move(error);
}

// Thread `t` of `threads`: bots t, t + threads, ... on an io_context of its own, until they
// are done or the hard stop (the run, its ramp's slack and the grace time for closing handshakes).
void run_share(Shared& shared, std::uint32_t t, std::uint32_t threads) {
  asio::io_context io(1);
  for (std::size_t i = t; i < shared.bots.size(); i += threads) {
    ++shared.running;
    asio::co_spawn(io, run_bot(shared, i), [&shared, i](std::exception_ptr e) {
      --shared.running;
      if (e) {
        BotRun& run = shared.bots[i];
        run.outcome = Outcome::closed;
        try {
          std::rethrow_exception(e);
        } catch (const std::exception& x) {
          run.error = std::string("exception: ") + x.what();
        }
      }
    });
  }
  const RunDef& def = shared.def;
  asio::steady_timer deadline(io, seconds(def.seconds + def.connect_timeout + def.grace_seconds));
  deadline.async_wait([&io](boost::system::error_code) { io.stop(); });
  while (!io.stopped() && shared.running > 0) io.run_for(std::chrono::milliseconds(200));
}

}  // namespace

RunResult run_bots(const RunDef& def) {
  RunResult result;
  result.bots.resize(def.bots);
  const Clock::time_point began = Clock::now();
  const double cpu_began = process_cpu_seconds();
  asio::io_context resolving(1);
  tcp::resolver resolver(resolving);
  boost::system::error_code ec;
  const tcp::resolver::results_type endpoints = resolver.resolve(def.host, std::to_string(def.port), ec);
  if (ec) {
    for (BotRun& run : result.bots) {
      run.outcome = Outcome::failed;
      run.error = fmt::format("resolve {}: {}", def.host, ec.message());
    }
  } else {
    const std::uint32_t threads = std::min(def.threads, def.bots);
    std::vector<Shared> shares;
    shares.reserve(threads);
    const Clock::time_point start = Clock::now();
    for (std::uint32_t t = 0; t < threads; ++t) {
      shares.push_back(Shared{.def = def,
                              .bots = result.bots,
                              .endpoints = endpoints,
                              .start = start,
                              .end = start + seconds(def.seconds),
                              .delays = {},
                              .running = 0});
    }
    std::vector<std::thread> workers;
    for (std::uint32_t t = 0; t < threads; ++t)
      workers.emplace_back(run_share, std::ref(shares[t]), t, threads);
    for (std::thread& w : workers) w.join();
    for (const Shared& share : shares) result.delays.merge(share.delays);
  }
  for (BotRun& run : result.bots) {
    if (run.outcome == Outcome::hung && run.error.empty())
      run.error = "still open when the grace time ran out";
  }
  result.wall_seconds = std::chrono::duration<double>(Clock::now() - began).count();
  result.cpu_seconds = process_cpu_seconds() - cpu_began;
  return result;
}

}  // namespace sightline::bots
