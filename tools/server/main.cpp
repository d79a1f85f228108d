// sightline-server: the demo world over WebSocket, and its page over HTTP, on one port.
#include <fmt/format.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "game.h"
#include "server.h"

namespace {

constexpr int kBadOption = 2;
constexpr int kRunFailed = 1;
// Transitions each connection's flight recorder keeps for the debug console.
constexpr std::uint32_t kDebugHistory = 256;

// validate(GameDef) names GameDef's fields; the user typed options.
std::string option_of(std::string_view message) {
  static constexpr std::pair<std::string_view, std::string_view> kOptions[] = {
      {"scenario", "--scenario"},  {"entities", "--entities"},   {"enter_radius", "--radius"},
      {"leave_radius", "--leave"}, {"tick_rate", "--tick-rate"}, {"max_radius", "--max-radius"},
      {"threads", "--threads"},    {"width", "--width"},         {"height", "--height"}};
  const std::string_view field = message.substr(0, message.find(' '));
  for (const auto& [name, option] : kOptions) {
    if (name == field) return std::string(option);
  }
  return "options";
}

// The library's reports (log.h) go to the server's log.
void log_library(void*, sightline::LogLevel level, std::string_view message) {
  spdlog::log(level == sightline::LogLevel::warning ? spdlog::level::warn : spdlog::level::info, "{}",
              message);
}

// The page's files: where an install put them beside this binary (bin/../share/sightline/web
// by default), else this build's source tree.
std::string default_web_root() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path installed = (self.parent_path() / SIGHTLINE_WEB_FROM_BIN).lexically_normal();
    if (std::filesystem::is_regular_file(installed / "index.html", ec)) return installed.string();
  }
  return SIGHTLINE_WEB_ROOT;
}

}  // namespace

int main(int argc, char** argv) {
  sightline::demo::GameDef game_def;
  sightline::demo::ServerDef server_def;
  server_def.web_root = default_web_root();

  CLI::App app{
      "sightline-server: seed 000's world streamed to each WebSocket client with interest management, "
      "and the demo page served over HTTP on the same port"};
  app.add_option(
         "--transport", server_def.transport,
         "websocket (TCP: the page and WebSocket clients) or enet (UDP: unreliable delivery with acks, "
         "no page)")
      ->capture_default_str();
  app.add_option("--host", server_def.host, "Address to listen on")->capture_default_str();
  app.add_option("--port", server_def.port, "Port to listen on (0: any free port, printed at start)")
      ->capture_default_str();
  app.add_option("--scenario", game_def.scenario, "reference (walkers spread out) or crowd (4 hotspots)")
      ->capture_default_str();
  app.add_option("--entities", game_def.entities, "Walkers, viewers not counted")->capture_default_str();
  app.add_option("--width", game_def.width, "World width (world units): walkers and viewers in [0, width]")
      ->capture_default_str();
  app.add_option("--height", game_def.height, "World height (world units)")->capture_default_str();
  app.add_option("--radius", game_def.enter_radius, "Enter radius R (world units)")->capture_default_str();
  app.add_option("--leave", game_def.leave_radius, "Leave radius L, in [R, 4R]")->capture_default_str();
  app.add_option("--tick-rate", game_def.tick_rate, "Ticks per second")->capture_default_str();
  app.add_option("--seed", game_def.seed, "Seed of the walk and of the viewers' spots")
      ->capture_default_str();
  app.add_flag("--debug-view", game_def.debug_view,
               "Let clients ask for what they do not hold (debug frames)");
  app.add_flag("--debug-http", server_def.debug_http,
               "Answer GET /debug/clients, /debug/client, /debug/why and /debug/tick with JSON (the debug "
               "console), each connection keeping its last 256 transitions; over ENet on --http-port");
  app.add_option(
      "--http-port", server_def.http_port,
      "ENet only: answer /metrics and /debug/ (with --debug-http) over HTTP on this TCP port (0: any "
      "free one)");
  game_def.threads = std::clamp(std::thread::hardware_concurrency(), 1u, 64u);
  app.add_option(
         "--threads", game_def.threads,
         "Threads for the library's tick and send (default: the machine's cores); frames are the same for "
         "any count")
      ->capture_default_str();
  app.add_option("--max-radius", game_def.max_radius, "Largest R a client may ask for (0: 4R)")
      ->capture_default_str();
  app.add_option("--shots-per-second", game_def.shots_per_second,
                 "Walkers' shots a second: events heard at 2R, drawn as rings")
      ->capture_default_str();
  app.add_option("--max-connections", server_def.max_connections,
                 "Live connections; more are closed as server full (1013 over WebSocket)")
      ->capture_default_str();
  server_def.io_threads = std::clamp(std::thread::hardware_concurrency(), 1u, 64u);
  app.add_option(
         "--io-threads", server_def.io_threads,
         "Threads for the WebSockets' reads and writes (default: the machine's cores), beside the one "
         "that ticks")
      ->capture_default_str();
  app.add_option("--max-http-connections", server_def.max_http_connections,
                 "Connections not yet WebSockets (HTTP requests, upgrades being read, 10 s each at most); "
                 "beyond, the oldest is closed")
      ->capture_default_str();
  app.add_option("--max-frames-per-second", server_def.max_frames_per_second,
                 "Frames a client may send per second, pings, pongs and continuations included (token bucket "
                 "of as many)")
      ->capture_default_str();
  app.add_option("--idle-seconds", server_def.idle_seconds,
                 "Close a client that sends nothing, not even a pong to the server's pings, for this long")
      ->capture_default_str();
  app.add_option("--web-root", server_def.web_root,
                 "Directory of the page's files (default: share/sightline/web beside an installed binary, "
                 "else the source tree's)")
      ->capture_default_str();
  app.add_option("--seconds", server_def.seconds, "Stop after this many seconds (0: at SIGINT or SIGTERM)")
      ->capture_default_str();
  app.add_option("--warmup-seconds", server_def.warmup_seconds,
                 "When the stats' memory after warm-up is read, seconds from the start (0: a tenth of "
                 "--seconds, at least 5)")
      ->capture_default_str();
  app.add_option("--stats-json", server_def.stats_json,
                 "Write tick times, connections, frames and memory here at exit");
  std::string log_level = "info";
  app.add_option(
         "--log-level", log_level,
         "Least level logged on stderr: trace, debug (each connection), info (a status line every 5 s), "
         "warn, error, critical or off")
      ->capture_default_str()
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kBadOption;
  }

  // Timestamped, levelled lines on stderr; the library's reports among them.
  auto logger = spdlog::stderr_logger_mt("sightline-server");
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %n %l: %v");
  logger->set_level(spdlog::level::from_str(log_level));
  spdlog::set_default_logger(logger);
  game_def.log = {&log_library, nullptr};
  if (server_def.transport == "enet") game_def.delivery = sightline::Delivery::unreliable;
  if (server_def.debug_http) game_def.history_capacity = kDebugHistory;
  if (sightline::Status s = sightline::demo::validate(game_def); !s) {
    fmt::print(stderr, "sightline-server: {}: {}\n", option_of(s.message()), s.message());
    return kBadOption;
  }
  if (sightline::Status s = sightline::demo::validate(server_def); !s) {
    fmt::print(stderr, "sightline-server: {}\n", s.message());
    return kBadOption;
  }
  sightline::Result<std::unique_ptr<sightline::demo::Game>> game = sightline::demo::Game::create(game_def);
  if (!game) {
    fmt::print(stderr, "sightline-server: {}\n", game.status().message());
    return kRunFailed;
  }
  const bool enet = server_def.transport == "enet";
  if (sightline::Status s = enet ? sightline::demo::run_enet_server(server_def, **game)
                                 : sightline::demo::run_server(server_def, **game);
      !s) {
    fmt::print(stderr, "sightline-server: {}\n", s.message());
    return s.code() == sightline::ErrorCode::invalid_def ? kBadOption : kRunFailed;
  }
  return 0;
}
