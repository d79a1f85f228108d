// The pages sightline-server answers itself rather than from files: /metrics (Prometheus text)
// and the debug console's /debug/... (JSON), the same over either transport's HTTP.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "game.h"

namespace sightline::demo {

/// One answer: its HTTP status, content type and body.
struct ServerPage {
  int status = 200;
  std::string content_type;
  std::string body;
};

/// GET `target` (path and query) if it names /metrics or a /debug/ page; nullopt for any other
/// target. `metrics` makes the /metrics text; the debug pages are `game`'s (Game::debug), or 404
/// naming --debug-http when `debug_http` is off. Never throws: a page that fails is a 500.
[[nodiscard]] std::optional<ServerPage> server_page(std::string_view target, bool debug_http,
                                                    const Game& game,
                                                    const std::function<std::string()>& metrics);

}  // namespace sightline::demo
