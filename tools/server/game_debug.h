// The demo server's debug console (docs/demo_protocol.md, "Debug console"): JSON answers about
// the game's last tick, read through the library's questions (World::why, World::history, ...).
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "game.h"
#include "sightline/replicator.h"
#include "sightline/world.h"

namespace sightline::demo {

/// One connection as the console sees it.
struct DebugConnection {
  std::uint32_t id = 0;
  const World* world = nullptr;  ///< The World of its setting, and its client there.
  const Replicator* replicator = nullptr;
  ClientId client;
  EntityId viewer;
  float x = 0.0f;  ///< Its viewer's position now.
  float z = 0.0f;
  bool interest = true;
  std::uint8_t options = 0;
  const void* group = nullptr;  ///< The game's own, for entity_at.
};

/// What the console answers from, made by the Game for each request.
struct DebugState {
  GameStats stats;
  std::uint32_t history_capacity = 0;
  std::vector<DebugConnection> connections;  ///< Ascending id.
  /// The entity of the connection's World at an index, whatever its generation; null for none.
  std::function<EntityId(const DebugConnection&, std::uint32_t)> entity_at;
};

/// Answers GET `target` (path and query), Game::debug's contract.
[[nodiscard]] DebugAnswer answer_debug(const DebugState& state, std::string_view target);

}  // namespace sightline::demo
