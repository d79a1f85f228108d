#include "server_pages.h"

#include <exception>

namespace sightline::demo {

std::optional<ServerPage> server_page(std::string_view target, bool debug_http, const Game& game,
                                      const std::function<std::string()>& metrics) {
  // Nothing a request holds may end the server: a page that fails answers 500.
  try {
    if (target.starts_with("/debug/")) {
      const DebugAnswer answer =
          debug_http
              ? game.debug(target)
              : DebugAnswer{404,
                            R"({"error":"the debug console is off: start the server with --debug-http"})"};
      return ServerPage{answer.status, "application/json", answer.json};
    }
    if (target == "/metrics") return ServerPage{200, "text/plain; version=0.0.4; charset=utf-8", metrics()};
    return std::nullopt;
  } catch (const std::exception& e) {
    return ServerPage{500, "text/plain", std::string("internal error: ") + e.what() + "\n"};
  }
}

}  // namespace sightline::demo
