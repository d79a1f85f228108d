#include "game_debug.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <utility>

namespace sightline::demo {
namespace {

// A request's bytes are echoed in refusals and need not be UTF-8 (nor whole characters once cut):
// what JSON cannot hold is replaced, never thrown.
std::string text_of(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The debug console's query string: a few name=value pairs of digits (and a colon).
struct Query {
  std::vector<std::pair<std::string, std::string>> pairs;

  Status parse(std::string_view text) {
    constexpr std::size_t kMaxPairs = 8;
    while (!text.empty()) {
      const std::size_t amp = text.find('&');
      const std::string_view pair = text.substr(0, amp);
      const std::size_t eq = pair.find('=');
      if (eq == std::string_view::npos || pairs.size() == kMaxPairs) {
        return {ErrorCode::invalid_argument,
                "query: \"" + std::string(pair.substr(0, 64)) + "\" is not name=value (at most 8 pairs)"};
      }
      pairs.emplace_back(std::string(pair.substr(0, eq)), std::string(pair.substr(eq + 1)));
      text = amp == std::string_view::npos ? std::string_view{} : text.substr(amp + 1);
    }
    return {};
  }

  const std::string* find(const char* name) const {
    for (const auto& [key, value] : pairs) {
      if (key == name) return &value;
    }
    return nullptr;
  }

  static Result<std::uint32_t> digits(const char* name, std::string_view text) {
    std::uint32_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) {
      return Status{ErrorCode::invalid_argument, std::string(name) + " is \"" +
                                                     std::string(text.substr(0, 32)) +
                                                     "\": must be a number in [0, 2^32)"};
    }
    return value;
  }

  Result<std::uint32_t> number(const char* name) const {
    const std::string* text = find(name);
    if (text == nullptr) return Status{ErrorCode::invalid_argument, std::string(name) + " is missing"};
    return digits(name, *text);
  }

  // INDEX or INDEX:GENERATION (generation 0, or none: whichever entity is at the index).
  Result<EntityId> entity(const char* name) const {
    const std::string* text = find(name);
    if (text == nullptr) return Status{ErrorCode::invalid_argument, std::string(name) + " is missing"};
    const std::size_t colon = text->find(':');
    Result<std::uint32_t> index = digits(name, std::string_view(*text).substr(0, colon));
    if (!index) return index.status();
    EntityId e{*index, 0};
    if (colon != std::string::npos) {
      Result<std::uint32_t> generation = digits(name, std::string_view(*text).substr(colon + 1));
      if (!generation) return generation.status();
      e.generation = *generation;
    }
    return e;
  }
};

DebugAnswer refusal(int status, const std::string& message) {
  return {status, text_of(nlohmann::json{{"error", message}})};
}

nlohmann::json handle_json(EntityId e) { return {{"index", e.index}, {"generation", e.generation}}; }

nlohmann::json client_json(const DebugConnection& c) {
  nlohmann::json j;
  j["connection"] = c.id;
  j["client"] = {{"index", c.client.index}, {"generation", c.client.generation}};
  j["viewer"] = handle_json(c.viewer);
  j["x"] = c.x;
  j["z"] = c.z;
  j["interest"] = c.interest;
  j["options"] = c.options;
  if (const Result<ClientRadii> r = c.world->client_radii(c.client)) {
    j["enter_radius"] = r->enter_radius;
    j["leave_radius"] = r->leave_radius;
  }
  if (const Result<std::span<const EntityId>> set = c.world->interest_set(c.client))
    j["members"] = set->size();
  if (const Result<std::uint32_t> pending = c.replicator->pending(c.client)) j["pending"] = *pending;
  return j;
}

}  // namespace

DebugAnswer answer_debug(const DebugState& state, std::string_view target) {
  const std::size_t question = target.find('?');
  const std::string_view path = target.substr(0, question);
  Query query;
  if (question != std::string_view::npos) {
    if (Status s = query.parse(target.substr(question + 1)); !s) return refusal(400, s.message());
  }
  nlohmann::json out;
  out["tick"] = state.stats.ticks == 0 ? 0 : state.stats.ticks - 1;
  if (path == "/debug/clients") {
    out["clients"] = nlohmann::json::array();
    for (const DebugConnection& c : state.connections) out["clients"].push_back(client_json(c));
  } else if (path == "/debug/tick") {
    const TickTimings& p = state.stats.last_phases;
    const auto ms = [](std::uint64_t ns) { return static_cast<double>(ns) / 1e6; };
    out["tick_ms"] = state.stats.last_tick_ms;
    out["phases_ms"] = {{"spaces", ms(p.spaces_ns)},       {"index", ms(p.index_ns)},
                        {"relevance", ms(p.relevance_ns)}, {"events", ms(p.events_ns)},
                        {"release", ms(p.release_ns)},     {"send", ms(state.stats.last_send_ns)}};
    out["pending"] = state.stats.pending;
  } else if (path == "/debug/client" || path == "/debug/why") {
    Result<std::uint32_t> id = query.number("connection");
    if (!id) return refusal(400, id.status().message());
    const auto it = std::find_if(state.connections.begin(), state.connections.end(),
                                 [&](const DebugConnection& c) { return c.id == *id; });
    if (it == state.connections.end())
      return refusal(404, "connection " + std::to_string(*id) + " is not open");
    const DebugConnection& c = *it;
    const World& world = *c.world;
    out["connection"] = *id;
    if (path == "/debug/client") {
      out["client"] = client_json(c);
      out["set"] = nlohmann::json::array();
      for (const EntityId e : *world.interest_set(c.client)) out["set"].push_back(handle_json(e));
      out["origins"] = nlohmann::json::array();
      for (const EntityId e : *world.origins(c.client)) out["origins"].push_back(handle_json(e));
      out["area_subscriptions"] = world.area_subscriptions(c.client)->size();
      out["user_subscriptions"] = world.user_subscriptions(c.client)->size();
    } else {
      Result<EntityId> asked = query.entity("entity");
      if (!asked) return refusal(400, asked.status().message());
      EntityId e = *asked;
      if (e.generation == 0) e = state.entity_at(c, e.index);
      if (e.is_null()) return refusal(404, "no entity at index " + std::to_string(asked->index));
      out["entity"] = handle_json(e);
      if (const Result<Why> why = world.why(c.client, e)) {
        out["why"] = {{"held", why->held}, {"rule", rule_name(why->rule)}, {"root", handle_json(why->root)}};
      } else {
        out["why"] = nullptr;  // no longer live: its history says what became of it
        out["why_refused"] = why.status().message();
      }
      out["history"] = nlohmann::json::array();
      for (const HistoryEntry& h : *world.history(c.client, e)) {
        nlohmann::json j = {
            {"tick", h.tick},
            {"spawned", h.spawned},
            {"reason", h.spawned ? spawn_reason_name(h.spawn_reason) : despawn_reason_name(h.despawn_reason)},
            {"distance", std::isfinite(h.distance) ? nlohmann::json(h.distance) : nullptr}};
        j["rule"] = h.rule_known ? nlohmann::json(rule_name(h.rule)) : nullptr;
        out["history"].push_back(j);
      }
      out["history_capacity"] = state.history_capacity;
    }
  } else {
    return refusal(404, "no debug page " + std::string(path) +
                            ": /debug/clients, /debug/client, /debug/why, /debug/tick");
  }
  return {200, text_of(out)};
}

}  // namespace sightline::demo
