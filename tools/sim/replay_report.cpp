#include "replay_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <vector>

namespace sightline::sim {

namespace {

std::string name(EntityId e) { return fmt::format("entity {}:{}", e.index, e.generation); }
std::string name(ClientId c) { return fmt::format("client {}:{}", c.index, c.generation); }

std::string named(const HandleName& h) {
  return h.generation ? fmt::format("{}:{}", h.index, *h.generation) : fmt::format("{}", h.index);
}

bool matches(const HandleName& h, std::uint32_t index, std::uint32_t generation) {
  return h.index == index && (!h.generation || *h.generation == generation);
}

// The pair's client at this tick: the live one the name matches.
std::optional<ClientId> client_named(const World& world, const HandleName& h) {
  for (const ClientId c : world.clients()) {
    if (matches(h, c.index, c.generation)) return c;
  }
  return std::nullopt;
}

std::string distance_text(float d) {
  return std::isinf(d) ? "no origin in its space" : fmt::format("{:.3f}", d);
}

void print_entry(std::FILE* out, ClientId c, const HistoryEntry& h) {
  const std::string rule =
      h.rule_known ? fmt::format("rule {}", rule_name(h.rule)) : std::string("rule unknown (destroyed)");
  if (h.spawned) {
    fmt::print(out, "tick {}: {} spawned {} ({}), distance {}, {}\n", h.tick, name(c), name(h.entity),
               spawn_reason_name(h.spawn_reason), distance_text(h.distance), rule);
  } else {
    fmt::print(out, "tick {}: {} despawned {} ({}), distance {}, {}\n", h.tick, name(c), name(h.entity),
               despawn_reason_name(h.despawn_reason), distance_text(h.distance), rule);
  }
}

}  // namespace

Result<HandleName> parse_handle_name(std::string_view what, std::string_view text) {
  const auto bad = [&] {
    return Status{ErrorCode::invalid_argument,
                  fmt::format("{} is '{}': expected INDEX or INDEX:GENERATION, e.g. 12 or 12:1", what, text)};
  };
  const auto number = [](std::string_view digits, std::uint32_t& value) {
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    return !digits.empty() && ec == std::errc{} && end == digits.data() + digits.size();
  };
  HandleName h;
  const std::size_t colon = text.find(':');
  if (!number(text.substr(0, colon), h.index)) return bad();
  if (colon != std::string_view::npos) {
    std::uint32_t generation = 0;
    if (!number(text.substr(colon + 1), generation) || generation == 0) return bad();
    h.generation = generation;
  }
  return h;
}

Status replay_report(std::span<const std::uint8_t> bytes, const std::string& path,
                     const std::optional<WhyPair>& why, std::FILE* out) {
  // The asked client keeps its history from its first tick.
  // A file from elsewhere may ask for a grid of 2^32 cells or 2 MiB of history a client.
  ReplayDef def{.max_grid_cells = 1u << 24, .max_history_capacity = 4096};
  if (why) {
    def.on_client = [](void* context, World& world, ClientId c) {
      if (matches(static_cast<const WhyPair*>(context)->client, c.index, c.generation)) {
        (void)world.set_history_capacity(c, kMaxHistoryEntries);
      }
    };
    def.on_client_context = const_cast<WhyPair*>(&*why);
  }
  Result<Replay> replay = Replay::open(bytes, def);
  if (!replay) return {replay.status().code(), path + ": " + replay.status().message()};
  if (why) {
    fmt::print(out, "replay of {}: client {}, entity {}\n", path, named(why->client), named(why->entity));
  }
  std::uint64_t spawns = 0;
  std::uint64_t updates = 0;
  std::uint64_t despawns = 0;
  std::uint64_t events = 0;
  Status failure;
  std::optional<EntityId> seen;  // the last entity the pair's transitions named
  while (!replay->done()) {
    const Result<TickStats> stats = replay->next_tick();
    if (!stats) {
      failure = {stats.status().code(), path + ": " + stats.status().message()};
      break;
    }
    spawns += stats->spawns;
    updates += stats->updates;
    despawns += stats->despawns;
    events += stats->event_records;
    if (!why) continue;
    const World& world = replay->world();
    const std::optional<ClientId> c = client_named(world, why->client);
    if (!c) continue;
    // The tick's records say whether the pair moved; only then is the history read (a copy).
    const ClientStream stream = *world.stream(*c);
    const auto named_entity = [&](EntityId e) { return matches(why->entity, e.index, e.generation); };
    const bool moved =
        std::ranges::any_of(stream.spawns, [&](const SpawnRecord& r) { return named_entity(r.entity); }) ||
        std::ranges::any_of(stream.despawns, [&](const DespawnRecord& r) { return named_entity(r.entity); });
    if (!moved) continue;
    const Result<std::vector<HistoryEntry>> history = world.history(*c);
    if (!history) continue;
    for (const HistoryEntry& h : *history) {
      if (h.tick != stats->tick || !named_entity(h.entity)) continue;
      print_entry(out, *c, h);
      seen = h.entity;
    }
  }
  const World& world = replay->world();
  if (replay->used_visibility_filter()) {
    fmt::print(
        out,
        "note: the recorded World used a visibility filter, which a recording cannot hold: this replay ran "
        "without it, so what sight hid may differ\n");
  }
  if (!why) {
    fmt::print(out, "replay of {}: {} ticks from {} bytes\n", path, replay->ticks(), bytes.size());
    fmt::print(out, "at the end: {} entities, {} clients\n", world.entity_count(), world.client_count());
    fmt::print(out, "records: {} spawns, {} updates, {} despawns, {} event records\n", spawns, updates,
               despawns, events);
    return failure;
  }
  const std::string after = world.tick_count() == 0 ? std::string("before any tick")
                                                    : fmt::format("after tick {}", world.tick_count() - 1);
  const std::optional<ClientId> c = client_named(world, why->client);
  if (!c) {
    fmt::print(out, "{}: no live client {}\n", after, named(why->client));
    return failure;
  }
  // The entity asked about, or the latest one at its index the pair's transitions named.
  std::optional<EntityId> e = seen;
  if (why->entity.generation) e = EntityId{why->entity.index, *why->entity.generation};
  if (!e) {
    fmt::print(
        out,
        "{}: {} never held an entity at index {}; name it INDEX:GENERATION to ask why (an index's first "
        "entity is generation 1)\n",
        after, name(*c), why->entity.index);
    return failure;
  }
  const Result<Why> answer = world.why(*c, *e);
  if (!answer) {
    fmt::print(out, "{}: {} and {}: {}\n", after, name(*c), name(*e), answer.status().message());
  } else {
    fmt::print(
        out, "{}: {} {} {}: rule {}{}\n", after, name(*c), answer->held ? "holds" : "does not hold", name(*e),
        rule_name(answer->rule),
        answer->root == *e ? std::string() : fmt::format(" (decided by its root, {})", name(answer->root)));
  }
  return failure;
}

}  // namespace sightline::sim
