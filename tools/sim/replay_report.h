// sightline-sim --replay FILE [--why CLIENT ENTITY]: a recording (sightline/recording.h) re-run,
// with a summary, or one (client, entity) pair's spawns and despawns tick by tick and why() at
// the end: a vanished entity explained after the fact.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sightline/sightline.h"

namespace sightline::sim {

/// A client or an entity as the command line names it: INDEX, or INDEX:GENERATION. Without a
/// generation it is whichever is at that index at each tick.
struct HandleName {
  std::uint32_t index = 0;
  std::optional<std::uint32_t> generation;
};

/// Parses INDEX or INDEX:GENERATION (decimal, generation >= 1); the error names `what` and `text`.
[[nodiscard]] Result<HandleName> parse_handle_name(std::string_view what, std::string_view text);

struct WhyPair {
  HandleName client;
  HandleName entity;
};

/// Replays `bytes` (the recording at `path`, named in what is printed) and prints to `out`: with
/// `why`, each tick's spawn or despawn of that entity for that client (tick, reason, distance,
/// rule) and, after the last tick, why(); without, a summary of the ticks and records. The
/// replay's error, if any, after printing what came before it.
[[nodiscard]] Status replay_report(std::span<const std::uint8_t> bytes, const std::string& path,
                                   const std::optional<WhyPair>& why, std::FILE* out);

}  // namespace sightline::sim
