#include "game.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <utility>

#include "frames.h"
#include "game_debug.h"
#include "jitter_walk.h"
#include "rng.h"
#include "sightline/replicator.h"
#include "sightline/serialize.h"
#include "sightline/world.h"

namespace sightline::demo {
namespace {

constexpr float kMinEnterRadius = 1.0f / 16.0f;
constexpr std::uint32_t kNoSlot = 0xFFFFFFFFu;
// About ten spawns of the demo's entities a tick.
constexpr std::uint32_t kEntryBudgetBytes = 128;
constexpr std::uint32_t kViewersPlanned = 64;

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

// A refusal's message is a WebSocket close reason: at most 123 bytes.
std::string close_reason(std::string message) {
  constexpr std::size_t kMaxCloseReasonBytes = 123;
  if (message.size() > kMaxCloseReasonBytes) message.resize(kMaxCloseReasonBytes);
  return message;
}

Status bad_def(const std::string& field, double value, const std::string& rule) {
  return {ErrorCode::invalid_def, field + " is " + number(value) + ": " + rule};
}

// What a World of the game is built for: culling or not. Radii are each client's own
// (World::set_view_radius), so every connection with interest on shares one World.
struct Setting {
  bool interest = true;
  bool operator==(const Setting&) const = default;
};

struct Group;

struct Connection {
  std::uint32_t viewer_slot = kNoSlot;
  std::uint8_t options = kDefaultOptions;
  float enter = 0.0f;  // the connection's R; its L follows from the options and the server's L/R
  std::optional<std::pair<float, float>> move;
  Group* group = nullptr;
  ClientId client{};
  bool reset_due = false;
  std::uint32_t stream = 0;  // the tick of its stream's reset frame (0: its first stream)
  // The debug view's question, answered after the next tick.
  std::optional<EntityId> question;
};

// One World and its Replicator: the connections of one setting. Every Group holds every entity
// of the game, each under its own handle.
struct Group {
  Setting setting;
  std::optional<World> world;
  std::optional<Replicator> replicator;
  EventClassId shot;
  std::vector<EntityId> handle;        // by game slot; null for a free slot
  std::vector<std::uint32_t> slot_of;  // by World entity index
  const std::vector<std::uint32_t>* kinds = nullptr;
  // The payload's coordinates: [0, width] and [0, height] at 1/256.
  std::optional<QuantizedRange> x_range;
  std::optional<QuantizedRange> z_range;
  std::uint32_t connections = 0;
};

bool serialize_entity(Stream& s, EntityId e, StatePart part, void* context) {
  const Group& g = *static_cast<const Group*>(context);
  const Result<Position> p = g.world->position(e);
  if (!p) return false;
  float x = p->x;
  float z = p->z;
  if (!s.serialize_quantized(x, *g.x_range)) return false;
  if (!s.serialize_quantized(z, *g.z_range)) return false;
  if (part == StatePart::update) return true;
  std::uint32_t kind = (*g.kinds)[g.slot_of[e.index]];
  return s.serialize_uint(kind, 0, 3);
}

}  // namespace

Status validate(const GameDef& def) {
  if (def.scenario != "reference" && def.scenario != "crowd") {
    return {ErrorCode::invalid_def, "scenario is \"" + def.scenario + "\": must be reference or crowd"};
  }
  if (def.entities > 100000) return bad_def("entities", def.entities, "must be at most 100000");
  if (!(def.width > 0.0f && def.width <= 100000.0f))
    return bad_def("width", def.width, "must be in (0, 100000]");
  if (!(def.height > 0.0f && def.height <= 100000.0f)) {
    return bad_def("height", def.height, "must be in (0, 100000]");
  }
  const float side = std::min(def.width, def.height);
  if (!(def.enter_radius >= kMinEnterRadius && def.enter_radius <= side)) {
    return bad_def("enter_radius", def.enter_radius,
                   "must be in [1/16, min(width, height) = " + number(side) + "]");
  }
  if (!(def.leave_radius >= def.enter_radius && def.leave_radius <= 4.0f * def.enter_radius)) {
    return bad_def("leave_radius", def.leave_radius,
                   "must be in [enter_radius, 4 * enter_radius] = [" + number(def.enter_radius) + ", " +
                       number(4.0f * def.enter_radius) + "]");
  }
  if (def.tick_rate < 1 || def.tick_rate > 120)
    return bad_def("tick_rate", def.tick_rate, "must be in [1, 120]");
  if (def.max_radius != 0.0f && !(def.max_radius >= def.enter_radius && def.max_radius <= 100000.0f)) {
    return bad_def("max_radius", def.max_radius, "must be 0 (4 * enter_radius) or in [enter_radius, 100000]");
  }
  if (def.history_capacity > kMaxHistoryEntries) {
    return bad_def("history_capacity", def.history_capacity, "must be at most 65536");
  }
  if (def.threads < 1 || def.threads > kMaxThreads)
    return bad_def("threads", def.threads, "must be in [1, 64]");
  if (!(def.shots_per_second >= 0.0f && def.shots_per_second <= 1000.0f)) {
    return bad_def("shots_per_second", def.shots_per_second, "must be in [0, 1000]");
  }
  return {};
}

class GameImpl {
 public:
  explicit GameImpl(const GameDef& def)
      : def_(def), rng_(def.seed ^ 0x5eed5eedull), shot_rng_(def.seed ^ 0x5407ull) {
    scenarios::JitterWalkDef walk;
    walk.entities = def.entities;
    walk.width = def.width;
    walk.height = def.height;
    walk.hz = static_cast<float>(def.tick_rate);
    walk.seed = def.seed;
    if (def.scenario == "crowd") {
      walk.hotspots = 4;
      walk.hotspot_size = def.height / 5.0f;
    }
    walk_.emplace(walk);
    const float diagonal = std::hypot(def.width, def.height);
    max_radius_ = def.max_radius > 0.0f ? def.max_radius : std::min(4.0f * def.enter_radius, diagonal);
    limits_.width = def.width;
    limits_.height = def.height;
    limits_.min_radius = def.enter_radius / 4.0f;
    limits_.max_radius = max_radius_;
    limits_.debug_view_allowed = def.debug_view;
    for (std::uint32_t i = 0; i < def.entities; ++i) {
      xs_.push_back(walk_->xs()[i]);
      zs_.push_back(walk_->zs()[i]);
      kinds_.push_back(kKindWalker);
      live_.push_back(1);
    }
  }

  const GameDef& def() const noexcept { return def_; }

  // Both Worlds from the start, ticked every tick whether or not a connection uses them, so each
  // World's tick (the state packets' tick) is the server's tick.
  Status start() {
    for (const bool interest : {true, false}) {
      if (Result<Group*> g = group_for({.interest = interest}); !g) return g.status();
    }
    return {};
  }

  Result<std::uint32_t> connect(std::vector<std::uint8_t>& welcome) {
    const std::uint32_t slot =
        free_slots_.empty() ? static_cast<std::uint32_t>(xs_.size()) : free_slots_.back();
    const float x = rng_.uniform(0.0f, def_.width);
    const float z = rng_.uniform(0.0f, def_.height);
    if (slot == xs_.size()) {
      xs_.push_back(x);
      zs_.push_back(z);
      kinds_.push_back(kKindViewer);
      live_.push_back(0);
    }
    xs_[slot] = x;
    zs_[slot] = z;
    kinds_[slot] = kKindViewer;
    // Every World gets the viewer before any is committed to, so a refusal leaves none behind.
    std::vector<EntityId> made;
    for (auto& g : groups_) {
      Result<EntityId> e = g->world->create_entity({.x = x, .z = z});
      if (!e) {
        for (std::size_t i = 0; i < made.size(); ++i) (void)groups_[i]->world->destroy_entity(made[i]);
        return e.status();
      }
      made.push_back(*e);
    }
    if (!free_slots_.empty()) free_slots_.pop_back();
    live_[slot] = 1;
    for (std::size_t i = 0; i < groups_.size(); ++i) place(*groups_[i], slot, made[i]);

    const std::uint32_t id = next_id_++;
    Connection c;
    c.viewer_slot = slot;
    c.enter = def_.enter_radius;
    connections_.emplace(id, c);
    if (Status s = join(connections_.at(id)); !s) {
      drop(id);
      return s;
    }
    connections_.at(id).reset_due = false;  // a first stream needs no reset
    ++presence_.joined;
    presence_.last_joined = id;

    Welcome w;
    w.connection = id;
    w.width = def_.width;
    w.height = def_.height;
    w.enter_radius = def_.enter_radius;
    w.leave_radius = def_.leave_radius;
    w.cell_size = def_.enter_radius;
    w.tick_rate = def_.tick_rate;
    w.server_flags =
        static_cast<std::uint8_t>((def_.debug_view ? kServerDebugViewAllowed : 0) |
                                  (def_.delivery == Delivery::unreliable ? kServerUnreliable : 0));
    w.max_radius = max_radius_;
    w.entity_count = live_count();
    welcome.clear();
    write_welcome(welcome, w);
    return id;
  }

  void disconnect(std::uint32_t id) {
    if (connections_.count(id) == 0) return;
    drop(id);
    ++presence_.left;
    presence_.last_left = id;
  }

  Status receive(std::uint32_t id, std::span<const std::uint8_t> bytes) {
    auto it = connections_.find(id);
    if (it == connections_.end())
      return {ErrorCode::invalid_argument, "connection " + std::to_string(id) + " is not open"};
    Connection& c = it->second;
    if (frame_type(bytes) == kAckFrame) {
      const Result<AckFrame> ack = read_ack(bytes);
      if (!ack) return ack.status();
      // An ack still on its way from before a reset is of the old stream: its ids mean nothing now.
      if (ack->stream != c.stream) {
        ++stats_.frames_in;
        return {};
      }
      if (Status s = c.group->replicator->receive_ack(c.client, ack->packet); !s) {
        return {ErrorCode::invalid_argument, close_reason("ack frame: " + s.message())};
      }
      ++stats_.frames_in;
      return {};
    }
    if (frame_type(bytes) == kWhyFrame) {
      Result<EntityId> entity = read_why(bytes, limits_);
      if (!entity) return entity.status();
      if ((c.options & kOptionDebug) == 0) {
        return {ErrorCode::invalid_argument,
                "why frame: this connection's debug view is off (options bit 2): nothing to ask"};
      }
      c.question = *entity;
      ++stats_.frames_in;
      return {};
    }
    Result<ClientFrame> frame = read_client_frame(bytes, limits_);
    if (!frame) return frame.status();
    switch (frame->type) {
      case kMoveFrame: c.move = std::pair{frame->x, frame->z}; break;
      case kOptionsFrame: c.options = frame->options; break;
      case kRadiusFrame: c.enter = frame->enter_radius; break;
      default: break;
    }
    ++stats_.frames_in;
    return {};
  }

  Status tick(double server_time_ms, Game::FrameSink sink, void* context) {
    const auto started = std::chrono::steady_clock::now();
    stats_.last_phases = TickTimings{};
    stats_.last_send_ns = 0;
    stats_.pending = 0;
    walk_->step();
    std::copy(walk_->xs().begin(), walk_->xs().end(), xs_.begin());
    std::copy(walk_->zs().begin(), walk_->zs().end(), zs_.begin());
    choose_shooters();
    // A refused message (it cannot be: the text is far below a packet's room, to a space that
    // lives) costs the line, not the tick, as a refused announcement always did.
    (void)announce_presence();
    for (auto& [id, c] : connections_) {
      if (c.move) {
        xs_[c.viewer_slot] = c.move->first;
        zs_[c.viewer_slot] = c.move->second;
        c.move.reset();
      }
      if (!(c.group->setting == setting_of(c))) {
        leave(c);
        if (Status s = join(c); !s) return s;
      }
      // The client's own radii, from this tick; its stream goes on.
      if (c.group->setting.interest) {
        const bool hysteresis = (c.options & kOptionHysteresis) != 0;
        if (Status s = c.group->world->set_view_radius(c.client, c.enter, hysteresis ? 0.0f : c.enter); !s)
          return s;
      }
    }

    for (auto& g : groups_) {
      ids_.clear();
      px_.clear();
      pz_.clear();
      for (std::uint32_t slot = 0; slot < xs_.size(); ++slot) {
        if (live_[slot] == 0) continue;
        ids_.push_back(g->handle[slot]);
        px_.push_back(xs_[slot]);
        pz_.push_back(zs_[slot]);
      }
      if (Status s = g->world->set_positions(ids_, px_, pz_); !s) return s;
      for (const std::uint32_t slot : shooters_) {
        const EventDef shot{
            .event_class = g->shot, .x = xs_[slot], .z = zs_[slot], .subject = g->handle[slot]};
        if (Result<std::uint32_t> e = g->world->emit_event(shot); !e) return e.status();
      }
      const TickStats records = g->world->tick();
      stats_.spawns += records.spawns;
      stats_.updates += records.updates;
      stats_.despawns += records.despawns;
      const TickTimings& phases = g->world->last_tick_timings();
      stats_.last_phases.spaces_ns += phases.spaces_ns;
      stats_.last_phases.index_ns += phases.index_ns;
      stats_.last_phases.relevance_ns += phases.relevance_ns;
      stats_.last_phases.events_ns += phases.events_ns;
      stats_.last_phases.release_ns += phases.release_ns;
      const auto send_began = std::chrono::steady_clock::now();
      if (Status s = g->replicator->send(); !s) return s;
      stats_.last_send_ns += static_cast<std::uint64_t>(
          std::chrono::nanoseconds(std::chrono::steady_clock::now() - send_began).count());
      stats_.pending += g->replicator->stats().pending;
    }

    const auto tick_number = static_cast<std::uint32_t>(stats_.ticks);
    for (auto& [id, c] : connections_) {
      Group& g = *c.group;
      if (c.reset_due) {
        frame_.clear();
        write_reset(frame_, tick_number);
        emit(sink, context, id);
        c.reset_due = false;
        c.stream = tick_number;
      }
      const Result<std::span<const std::span<const std::uint8_t>>> packets = g.replicator->packets(c.client);
      if (!packets) return packets.status();
      TickFrame t;
      t.tick = tick_number;
      t.viewer_x = xs_[c.viewer_slot];
      t.viewer_z = zs_[c.viewer_slot];
      // What the library used at this tick; with interest off, what the connection asked for.
      const Result<ClientRadii> radii = g.world->client_radii(c.client);
      if (!radii) return radii.status();
      t.enter_radius = g.setting.interest ? radii->enter_radius : c.enter;
      t.leave_radius = g.setting.interest ? radii->leave_radius : leave_of(c);
      t.options = c.options;
      t.server_time_ms = server_time_ms;
      // The library's grid and the cells this connection's scan read, for the page to shade.
      const Result<GridScan> scan = g.world->grid_scan(c.client);
      if (!scan) return scan.status();
      t.grid_origin_x = scan->origin_x;
      t.grid_origin_z = scan->origin_z;
      t.cell_size = scan->cell_size;
      t.scanned = scan->culling ? 1 : 0;
      if (scan->culling) {
        t.scan_x0 = scan->ranges[0].x0;
        t.scan_x1 = scan->ranges[0].x1;
        t.scan_z0 = scan->ranges[0].z0;
        t.scan_z1 = scan->ranges[0].z1;
      }
      frame_.clear();
      if (Status s = write_tick_header(frame_, t, packets->size()); !s) return s;
      for (const auto packet : *packets) {
        if (Status s = append_tick_packet(frame_, packet); !s) return s;
      }
      emit(sink, context, id);
      if ((c.options & kOptionDebug) != 0) {
        if (Status s = write_debug(g, c, tick_number); !s) return s;
        emit(sink, context, id);
        if (c.question) {
          if (Status s = write_why(g, c, *c.question, tick_number); !s) return s;
          emit(sink, context, id);
          ++stats_.why_answers;
        }
      }
      c.question.reset();
    }
    ++stats_.ticks;
    stats_.last_tick_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    return {};
  }

  // The debug console's view of the game (game_debug.h): built on request, so it costs nothing
  // between requests.
  DebugAnswer debug(std::string_view target) const {
    DebugState state;
    state.stats = stats();
    state.history_capacity = def_.history_capacity;
    for (const auto& [id, c] : connections_) {
      state.connections.push_back({.id = id,
                                   .world = &*c.group->world,
                                   .replicator = &*c.group->replicator,
                                   .client = c.client,
                                   .viewer = c.group->handle[c.viewer_slot],
                                   .x = xs_[c.viewer_slot],
                                   .z = zs_[c.viewer_slot],
                                   .interest = c.group->setting.interest,
                                   .options = c.options,
                                   .group = c.group});
    }
    state.entity_at = [](const DebugConnection& c, std::uint32_t index) {
      return entity_at(*static_cast<const Group*>(c.group), index);
    };
    return answer_debug(state, target);
  }

  GameStats stats() const noexcept {
    GameStats s = stats_;
    s.connections = static_cast<std::uint32_t>(connections_.size());
    s.groups = static_cast<std::uint32_t>(groups_.size());
    s.entities = live_count();
    return s;
  }

 private:
  float leave_of(const Connection& c) const {
    if ((c.options & kOptionHysteresis) == 0) return c.enter;
    // The server's own R keeps its L exactly (the product of the ratio may round off it).
    if (c.enter == def_.enter_radius) return def_.leave_radius;
    return c.enter * (def_.leave_radius / def_.enter_radius);
  }

  static Setting setting_of(const Connection& c) { return {.interest = (c.options & kOptionInterest) != 0}; }

  // The walkers that fire this tick: floor(r) or floor(r) + 1 of them with r = shots_per_second /
  // tick_rate (the fraction by chance, so r on average), each a seeded walker: the same shots for
  // the same seed.
  void choose_shooters() {
    shooters_.clear();
    if (def_.entities == 0) return;
    const float rate = def_.shots_per_second / static_cast<float>(def_.tick_rate);
    auto count = static_cast<std::uint32_t>(rate);
    if (shot_rng_.uniform() < rate - static_cast<float>(count)) ++count;
    for (std::uint32_t i = 0; i < count; ++i) shooters_.push_back(shot_rng_.below(def_.entities));
    stats_.shots += shooters_.size();
  }

  // Who joined or left since the last tick, and how many are here, as one server message to
  // every connection (the library's messages: reliable, in order with the state). One message a
  // tick at most: a message for each of N connections arriving or leaving would cost every client
  // N messages (N^2 bytes in the Replicators' queues during a wave of connections).
  Status announce_presence() {
    const Presence p = std::exchange(presence_, Presence{});
    if (p.joined + p.left == 0) return {};
    std::string what;
    if (p.joined + p.left == 1) {
      what = p.joined == 1 ? "connection " + std::to_string(p.last_joined) + " joined"
                           : "connection " + std::to_string(p.last_left) + " left";
    } else {
      const auto count = [](std::uint64_t n, const char* verb) {
        return std::to_string(n) + (n == 1 ? " connection " : " connections ") + verb;
      };
      what = p.joined == 0 ? count(p.left, "left")
             : p.left == 0 ? count(p.joined, "joined")
                           : count(p.joined, "joined") + ", " + std::to_string(p.left) + " left";
    }
    return announce(what);
  }

  Status announce(const std::string& what) {
    const std::string text = what + " (" + std::to_string(connections_.size()) + " online)";
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(text.data());
    for (auto& g : groups_) {
      if (Status s = g->replicator->send_message_to_space(g->world->default_space(), {bytes, text.size()});
          !s)
        return s;
    }
    ++stats_.messages;
    return {};
  }

  std::uint32_t live_count() const {
    return static_cast<std::uint32_t>(std::count(live_.begin(), live_.end(), std::uint8_t{1}));
  }

  static void place(Group& g, std::uint32_t slot, EntityId e) {
    if (g.handle.size() <= slot) g.handle.resize(slot + 1);
    g.handle[slot] = e;
    if (g.slot_of.size() <= e.index) g.slot_of.resize(e.index + 1, kNoSlot);
    g.slot_of[e.index] = slot;
  }

  Result<Group*> group_for(const Setting& setting) {
    for (auto& g : groups_) {
      if (g->setting == setting) return g.get();
    }
    WorldDef wdef = default_world_def();
    wdef.log = def_.log;
    wdef.threads = def_.threads;
    wdef.enter_radius = def_.enter_radius;
    wdef.leave_radius = def_.leave_radius;
    // Room for the walkers and a first few dozen viewers before storage grows (and says so).
    wdef.entity_capacity = static_cast<std::uint32_t>(xs_.size()) + kViewersPlanned;
    wdef.client_capacity = kViewersPlanned;
    Result<World> world = World::create(wdef);
    if (!world) return world.status();
    auto g = std::make_unique<Group>();
    g->setting = setting;
    g->world.emplace(std::move(world).value());
    Result<EventClassId> shot = g->world->create_event_class(
        {.radius = 2.0f * def_.enter_radius, .when_absent = AbsentSubject::null_subject});
    if (!shot) return shot.status();
    g->shot = *shot;
    g->kinds = &kinds_;
    Result<QuantizedRange> x_range = QuantizedRange::make(0.0f, def_.width, kPositionStep);
    if (!x_range) return x_range.status();
    Result<QuantizedRange> z_range = QuantizedRange::make(0.0f, def_.height, kPositionStep);
    if (!z_range) return z_range.status();
    g->x_range = *x_range;
    g->z_range = *z_range;
    SpaceDef space = *g->world->space_def(g->world->default_space());
    if (setting.interest) {
      // Each connection's radius frame sets its own radii, within what the welcome offers.
      space.min_view_radius = limits_.min_radius;
      space.max_view_radius = max_radius_;
    } else {
      space = SpaceDef{};
    }
    if (Status s = g->world->set_space_def(g->world->default_space(), space); !s) return s;
    for (std::uint32_t slot = 0; slot < xs_.size(); ++slot) {
      if (live_[slot] == 0) continue;
      Result<EntityId> e = g->world->create_entity({.x = xs_[slot], .z = zs_[slot]});
      if (!e) return e.status();
      place(*g, slot, *e);
    }
    ReplicatorDef rdef;
    rdef.serialize = serialize_entity;
    rdef.serialize_context = g.get();
    rdef.delivery = def_.delivery;
    rdef.log = def_.log;
    // Paced entry where interest is on: a connection that widens its radius (or a crowd walking
    // in) gets its new entities over a few ticks, nearest first, and the page says how many are
    // still to come. The send-everything baseline keeps the default budget.
    if (setting.interest) rdef.entry_budget_bytes = kEntryBudgetBytes;
    // The visual shows every member moving every tick: the World's schedule as it is.
    rdef.mode = UpdateMode::fixed_rate;
    rdef.tick_seconds = 1.0f / static_cast<float>(def_.tick_rate);
    Result<Replicator> replicator = Replicator::create(*g->world, rdef);
    if (!replicator) return replicator.status();
    g->replicator.emplace(std::move(replicator).value());
    groups_.push_back(std::move(g));
    return groups_.back().get();
  }

  // Puts the connection's client into the World of its setting.
  Status join(Connection& c) {
    Result<Group*> g = group_for(setting_of(c));
    if (!g) return g.status();
    Result<ClientId> client = (*g)->world->create_client((*g)->handle[c.viewer_slot]);
    if (!client) return client.status();
    if (def_.history_capacity > 0) {
      if (Status s = (*g)->world->set_history_capacity(*client, def_.history_capacity); !s) return s;
    }
    c.group = *g;
    c.client = *client;
    c.reset_due = true;
    ++(*g)->connections;
    return {};
  }

  void leave(Connection& c) {
    c.question.reset();
    if (c.group == nullptr) return;
    (void)c.group->world->destroy_client(c.client);
    --c.group->connections;
    c.group = nullptr;
  }

  void drop(std::uint32_t id) {
    Connection& c = connections_.at(id);
    leave(c);
    const std::uint32_t slot = c.viewer_slot;
    for (auto& g : groups_) {
      (void)g->world->destroy_entity(g->handle[slot]);
      g->handle[slot] = EntityId{};
    }
    live_[slot] = 0;
    free_slots_.push_back(slot);
    connections_.erase(id);
  }

  Status write_debug(const Group& g, const Connection& c, std::uint32_t tick_number) {
    debug_.clear();
    std::uint32_t members = 0;
    for (std::uint32_t slot = 0; slot < xs_.size(); ++slot) {
      if (live_[slot] == 0 || slot == c.viewer_slot) continue;
      const EntityId e = g.handle[slot];
      Result<bool> held = g.world->is_relevant_to(c.client, e);
      if (!held) return held.status();
      if (*held) {
        ++members;
      } else {
        debug_.push_back({e.index, xs_[slot], zs_[slot]});
      }
    }
    frame_.clear();
    write_debug_header(frame_, tick_number, members, static_cast<std::uint32_t>(debug_.size()));
    for (const DebugEntry& entry : debug_) append_debug_entry(frame_, entry);
    return {};
  }

  // The entity of the group at a World index, whatever its generation; null when none is there.
  static EntityId entity_at(const Group& g, std::uint32_t index) {
    if (index >= g.slot_of.size() || g.slot_of[index] == kNoSlot) return {};
    const EntityId e = g.handle[g.slot_of[index]];
    return e.index == index ? e : EntityId{};
  }

  // World::why, right after the tick it explains. A handle that names no live entity (destroyed,
  // reused, never there) is a stale answer, not an error: the client's view may lag the World.
  Status write_why(const Group& g, const Connection& c, EntityId asked, std::uint32_t tick_number) {
    WhyAnswer answer;
    answer.tick = tick_number;
    answer.entity = asked.generation == 0 ? entity_at(g, asked.index) : asked;
    answer.entity.index = asked.index;
    answer.outcome = WhyOutcome::stale;
    if (!answer.entity.is_null()) {
      const Result<Why> why = g.world->why(c.client, answer.entity);
      if (why) {
        answer.outcome = WhyOutcome::answered;
        answer.held = why->held ? 1 : 0;
        answer.rule = why->rule;
        answer.root = why->root;
      } else if (why.status().code() != ErrorCode::stale_handle) {
        return why.status();
      }
    }
    frame_.clear();
    write_why_answer(frame_, answer);
    return {};
  }

  void emit(Game::FrameSink sink, void* context, std::uint32_t id) {
    stats_.bytes_out += frame_.size();
    sink(context, id, frame_);
  }

  GameDef def_;
  scenarios::Rng rng_;
  scenarios::Rng shot_rng_;
  std::vector<std::uint32_t> shooters_;  // walker slots firing this tick
  std::optional<scenarios::JitterWalk> walk_;
  ClientLimits limits_;
  float max_radius_ = 0.0f;
  // The game's entities by slot: walkers first, then viewers.
  std::vector<float> xs_, zs_;
  std::vector<std::uint32_t> kinds_;
  std::vector<std::uint8_t> live_;
  std::vector<std::uint32_t> free_slots_;
  std::vector<std::unique_ptr<Group>> groups_;
  std::map<std::uint32_t, Connection> connections_;
  std::uint32_t next_id_ = 1;
  // Joins and leaves since the last tick's message (announce_presence).
  struct Presence {
    std::uint64_t joined = 0;
    std::uint64_t left = 0;
    std::uint32_t last_joined = 0;
    std::uint32_t last_left = 0;
  };
  Presence presence_;
  GameStats stats_;
  // Reused between ticks.
  std::vector<EntityId> ids_;
  std::vector<float> px_, pz_;
  std::vector<std::uint8_t> frame_;
  std::vector<DebugEntry> debug_;
};

Result<std::unique_ptr<Game>> Game::create(const GameDef& def) {
  if (Status s = validate(def); !s) return s;
  auto impl = std::make_unique<GameImpl>(def);
  if (Status s = impl->start(); !s) return s;
  return std::unique_ptr<Game>(new Game(std::move(impl)));
}

Game::Game(std::unique_ptr<GameImpl> impl) noexcept : impl_(std::move(impl)) {}
Game::~Game() = default;

const GameDef& Game::def() const noexcept { return impl_->def(); }
Result<std::uint32_t> Game::connect(std::vector<std::uint8_t>& welcome) { return impl_->connect(welcome); }
void Game::disconnect(std::uint32_t connection) { impl_->disconnect(connection); }
Status Game::receive(std::uint32_t connection, std::span<const std::uint8_t> frame) {
  return impl_->receive(connection, frame);
}
Status Game::tick(double server_time_ms, FrameSink sink, void* context) {
  return impl_->tick(server_time_ms, sink, context);
}
GameStats Game::stats() const noexcept { return impl_->stats(); }
DebugAnswer Game::debug(std::string_view target) const { return impl_->debug(target); }

}  // namespace sightline::demo
