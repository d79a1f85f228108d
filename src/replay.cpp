#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "format_value.h"
#include "recording_format.h"
#include "sightline/recording.h"
#include "sightline/world.h"

namespace sightline {

namespace {

std::string describe(EventClassId id) {
  return "event class " + std::to_string(id.index) + ":" + std::to_string(id.generation);
}
std::string describe(std::uint32_t event) { return "event " + std::to_string(event); }

}  // namespace

class ReplayImpl {
 public:
  // The Io of recording_format.h over a recording's bytes.
  class Reader {
   public:
    explicit Reader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
    [[nodiscard]] static constexpr bool writing() noexcept { return false; }
    bool bytes(std::uint8_t* p, std::size_t n) {
      if (!error_.empty()) return false;
      if (n > remaining()) return fail("the bytes end inside the record");
      std::copy_n(bytes_.data() + at_, n, p);
      at_ += n;
      return true;
    }
    bool fail(const char* why) {
      if (error_.empty()) error_ = why;
      return false;
    }
    [[nodiscard]] std::size_t remaining() const noexcept { return bytes_.size() - at_; }
    [[nodiscard]] std::size_t offset() const noexcept { return at_; }
    [[nodiscard]] const std::string& error() const noexcept { return error_; }
    [[nodiscard]] std::uint32_t version() const noexcept { return version_; }
    void set_version(std::uint32_t version) noexcept { version_ = version; }
    // Back to `at` (a record's start), the error forgotten.
    void rewind(std::size_t at) noexcept {
      at_ = at;
      error_.clear();
    }

   private:
    std::span<const std::uint8_t> bytes_;
    std::size_t at_ = 0;
    std::string error_;
    std::uint32_t version_ = recording::kVersion;
  };

  ReplayImpl(std::vector<std::uint8_t> bytes, const ReplayDef& def) : bytes_(std::move(bytes)), def_(def) {}

  Status open();
  Result<TickStats> next_tick();

  std::vector<std::uint8_t> bytes_;
  ReplayDef def_;
  Reader reader_{{}};
  std::optional<World> world_;
  std::uint64_t ticks_ = 0;
  bool done_ = false;
  bool used_filter_ = false;

 private:
  // Sets done_ when no tick follows the reader: the records ahead are decoded without being
  // applied, up to a tick, an error (which the next next_tick() then reports) or the end.
  void look_ahead();
  // One record at the reader: the World's outcome; `stats` is set when it was a tick.
  Status apply(std::optional<TickStats>& stats);
  template <class... Fields>
  bool read(Fields&... fields) {
    return (recording::field(reader_, fields) && ...);
  }
  // What went wrong with the record that starts at `at_`.
  Status malformed() const {
    return {ErrorCode::malformed_packet,
            where() + (reader_.error().empty() ? "does not decode" : reader_.error())};
  }
  Status refused(const Status& s) const {
    return {s.code(), where() + "the World refused the recorded call: " + s.message()};
  }
  template <class Handle>
  Status diverged(const Handle& got, const Handle& recorded) const {
    return {ErrorCode::invalid_argument,
            where() + "the World returned " + describe(got) + " where the recording has " +
                describe(recorded) +
                ": the recording comes from another version of the library, or was changed"};
  }
  std::string where() const {
    return "recording byte " + std::to_string(at_) + " (" + recording::op_name(op_) + ", before tick " +
           std::to_string(ticks_) + "): ";
  }
  template <class Handle>
  Status created(const Result<Handle>& got, const Handle& recorded) const {
    if (!got) return refused(got.status());
    if (!(*got == recorded)) return diverged(*got, recorded);
    return {};
  }

  std::size_t at_ = 0;
  std::uint8_t op_ = 0;
  bool scanning_ = false;  // decode only: make no World call
  Status ahead_error_;     // bytes look_ahead() could not decode before the next tick
  std::vector<EntityId> entities_;
  std::vector<float> xs_;
  std::vector<float> zs_;
  std::vector<KeySubscription> subscriptions_;
  ClientImage image_;
  std::vector<WallSegment> walls_;
};

Status ReplayImpl::open() {
  reader_ = Reader(bytes_);
  std::array<std::uint8_t, recording::kMagic.size()> magic{};
  std::uint32_t version = 0;
  if (!reader_.bytes(magic.data(), magic.size()) || magic != recording::kMagic) {
    return {ErrorCode::malformed_packet, "not a Sightline recording: the first 8 bytes are not \"SLRECORD\""};
  }
  if (!read(version)) {
    return {ErrorCode::malformed_packet,
            "recording header: the bytes end after " + std::to_string(bytes_.size())};
  }
  if (version < recording::kOldestVersion || version > recording::kVersion) {
    return {ErrorCode::malformed_packet,
            "recording version " + std::to_string(version) + ": this library reads " +
                std::to_string(recording::kOldestVersion) + " to " + std::to_string(recording::kVersion)};
  }
  reader_.set_version(version);
  WorldDef def = default_world_def();
  if (!read(def)) {
    return {ErrorCode::malformed_packet, "recording header (the WorldDef): " + reader_.error()};
  }
  if (def_.threads != 0) def.threads = def_.threads;
  if (def_.max_grid_cells != 0) def.max_grid_cells = std::min(def.max_grid_cells, def_.max_grid_cells);
  def.entity_capacity = 0;
  def.client_capacity = 0;
  Result<World> world = World::create(def);
  if (!world) return {world.status().code(), "recording header (the WorldDef): " + world.status().message()};
  world_.emplace(std::move(*world));
  look_ahead();
  return {};
}

void ReplayImpl::look_ahead() {
  const std::size_t from = reader_.offset();
  scanning_ = true;
  for (;;) {
    if (reader_.remaining() == 0) {
      done_ = true;
      break;
    }
    std::optional<TickStats> tick;
    if (Status s = apply(tick); !s) {
      // Bytes that do not decode before the next tick: the replay ends on them, with the World
      // as the last tick left it (none of the calls before them applied, as after a clean end).
      ahead_error_ = std::move(s);
      break;
    }
    if (tick) break;
  }
  scanning_ = false;
  reader_.rewind(from);
}

Result<TickStats> ReplayImpl::next_tick() {
  if (done_) {
    return Status{ErrorCode::invalid_argument,
                  "the replay has ended (" + std::to_string(ticks_) + " ticks replayed, at byte " +
                      std::to_string(reader_.offset()) + " of " + std::to_string(bytes_.size()) + ")"};
  }
  if (!ahead_error_) {
    done_ = true;
    return ahead_error_;
  }
  // look_ahead() found a tick ahead; a call the World refuses may still come first.
  for (;;) {
    std::optional<TickStats> stats;
    if (Status s = apply(stats); !s) {
      done_ = true;
      reader_.rewind(at_);
      return s;
    }
    if (stats) {
      ++ticks_;
      look_ahead();
      return *stats;
    }
  }
}

Status ReplayImpl::apply(std::optional<TickStats>& stats) {
  World& w = *world_;
  at_ = reader_.offset();
  op_ = 0;
  if (!read(op_)) return malformed();
  using recording::Op;
  if (op_ == 0 || op_ > recording::kLastOp) {
    return {ErrorCode::malformed_packet, where() + "no call has the number " + std::to_string(op_)};
  }
  // Each case reads the call's fields as the Recorder wrote them, then makes the call.
  EntityId e, e2;
  ClientId c;
  SpaceId sp;
  EventClassId ec;
  float a = 0.0f, b = 0.0f;
  bool flag = false;
  std::uint32_t n = 0;
  std::uint64_t key = 0;
  Status s;
  switch (static_cast<Op>(op_)) {
    case Op::tick: stats = scanning_ ? TickStats{} : w.tick(); return {};
    case Op::create_entity: {
      EntityDef def;
      if (!read(def, e)) return malformed();
      if (scanning_) return {};
      return created(w.create_entity(def), e);
    }
    case Op::destroy_entity:
      if (!read(e)) return malformed();
      if (scanning_) return {};
      s = w.destroy_entity(e);
      break;
    case Op::withdraw_entity:
      if (!read(e)) return malformed();
      if (scanning_) return {};
      s = w.withdraw_entity(e);
      break;
    case Op::set_position:
      if (!read(e, a, b)) return malformed();
      if (scanning_) return {};
      s = w.set_position(e, a, b);
      break;
    case Op::set_positions: {
      if (!read(n)) return malformed();
      constexpr std::size_t kEntryBytes = 16;  // the entity, x and z
      if (n > reader_.remaining() / kEntryBytes) {
        (void)reader_.fail("a list is longer than the bytes left");
        return malformed();
      }
      entities_.resize(n);
      xs_.resize(n);
      zs_.resize(n);
      for (std::uint32_t i = 0; i < n; ++i) {
        if (!read(entities_[i], xs_[i], zs_[i])) return malformed();
      }
      if (scanning_) return {};
      s = w.set_positions(entities_, xs_, zs_);
      break;
    }
    case Op::set_bound_radius:
      if (!read(e, a)) return malformed();
      if (scanning_) return {};
      s = w.set_bound_radius(e, a);
      break;
    case Op::set_radius_scale:
      if (!read(e, a)) return malformed();
      if (scanning_) return {};
      s = w.set_radius_scale(e, a);
      break;
    case Op::set_always_relevant:
      if (!read(e, flag)) return malformed();
      if (scanning_) return {};
      s = w.set_always_relevant(e, flag);
      break;
    case Op::set_presenter:
      if (!read(e, flag)) return malformed();
      if (scanning_) return {};
      s = w.set_presenter(e, flag);
      break;
    case Op::teleport:
      if (!read(e, a, b)) return malformed();
      if (scanning_) return {};
      s = w.teleport(e, a, b);
      break;
    case Op::attach:
      if (!read(e, e2)) return malformed();
      if (scanning_) return {};
      s = w.attach(e, e2);
      break;
    case Op::detach:
      if (!read(e)) return malformed();
      if (scanning_) return {};
      s = w.detach(e);
      break;
    case Op::create_client: {
      if (!read(e, c)) return malformed();
      if (scanning_) return {};
      if (Status created_as = created(w.create_client(e), c); !created_as) return created_as;
      if (def_.on_client != nullptr) def_.on_client(def_.on_client_context, w, c);
      return {};
    }
    case Op::adopt_client: {
      if (!read(image_, c)) return malformed();
      if (scanning_) return {};
      if (Status adopted_as = created(w.adopt_client(image_), c); !adopted_as) return adopted_as;
      if (def_.on_client != nullptr) def_.on_client(def_.on_client_context, w, c);
      return {};
    }
    case Op::destroy_client:
      if (!read(c)) return malformed();
      if (scanning_) return {};
      s = w.destroy_client(c);
      break;
    case Op::set_viewer:
      if (!read(c, e)) return malformed();
      if (scanning_) return {};
      s = w.set_viewer(c, e);
      break;
    case Op::add_origin:
      if (!read(c, e)) return malformed();
      if (scanning_) return {};
      s = w.add_origin(c, e);
      break;
    case Op::remove_origin:
      if (!read(c, e)) return malformed();
      if (scanning_) return {};
      s = w.remove_origin(c, e);
      break;
    case Op::set_owner:
      if (!read(e, c)) return malformed();
      if (scanning_) return {};
      s = w.set_owner(e, c);
      break;
    case Op::clear_owner:
      if (!read(e)) return malformed();
      if (scanning_) return {};
      s = w.clear_owner(e);
      break;
    case Op::set_area_interest_key:
      if (!read(e, key)) return malformed();
      if (scanning_) return {};
      s = w.set_area_interest_key(e, key);
      break;
    case Op::set_user_interest_key:
      if (!read(e, key)) return malformed();
      if (scanning_) return {};
      s = w.set_user_interest_key(e, key);
      break;
    case Op::set_global_interest_key:
      if (!read(e)) return malformed();
      if (scanning_) return {};
      s = w.set_global_interest_key(e);
      break;
    case Op::set_area_subscriptions:
      if (!read(c, subscriptions_)) return malformed();
      if (scanning_) return {};
      s = w.set_area_subscriptions(c, subscriptions_);
      break;
    case Op::add_user_subscription: {
      KeySubscription sub;
      if (!read(c, sub)) return malformed();
      if (scanning_) return {};
      s = w.add_user_subscription(c, sub);
      break;
    }
    case Op::remove_user_subscription:
      if (!read(c, key)) return malformed();
      if (scanning_) return {};
      s = w.remove_user_subscription(c, key);
      break;
    case Op::clear_area_subscriptions:
      if (!read(c)) return malformed();
      if (scanning_) return {};
      s = w.clear_area_subscriptions(c);
      break;
    case Op::clear_user_subscriptions:
      if (!read(c)) return malformed();
      if (scanning_) return {};
      s = w.clear_user_subscriptions(c);
      break;
    case Op::clear_subscriptions:
      if (!read(c)) return malformed();
      if (scanning_) return {};
      s = w.clear_subscriptions(c);
      break;
    case Op::create_space: {
      SpaceDef def;
      if (!read(def, sp)) return malformed();
      if (scanning_) return {};
      return created(w.create_space(def), sp);
    }
    case Op::destroy_space:
      if (!read(sp)) return malformed();
      if (scanning_) return {};
      s = w.destroy_space(sp);
      break;
    case Op::set_space_def: {
      SpaceDef def;
      if (!read(sp, def)) return malformed();
      if (scanning_) return {};
      s = w.set_space_def(sp, def);
      break;
    }
    case Op::set_space:
      if (!read(e, sp)) return malformed();
      if (scanning_) return {};
      s = w.set_space(e, sp);
      break;
    case Op::set_culling_drill:
      if (!read(sp, a, b)) return malformed();
      if (scanning_) return {};
      s = w.set_culling_drill(sp, a, b);
      break;
    case Op::clear_culling_drill:
      if (!read(sp)) return malformed();
      if (scanning_) return {};
      s = w.clear_culling_drill(sp);
      break;
    case Op::set_walls:
      if (!read(sp, walls_)) return malformed();
      if (scanning_) return {};
      s = w.set_walls(sp, walls_);
      break;
    case Op::set_velocity:
      if (!read(e, a, b)) return malformed();
      if (scanning_) return {};
      s = w.set_velocity(e, a, b);
      break;
    case Op::set_look_ahead:
      if (!read(c, a)) return malformed();
      if (scanning_) return {};
      s = w.set_look_ahead(c, a);
      break;
    case Op::set_visibility_filter:
      if (!read(flag)) return malformed();
      if (scanning_) return {};
      if (flag && def_.visibility_filter == nullptr) used_filter_ = true;
      w.set_visibility_filter(flag ? def_.visibility_filter : nullptr, def_.visibility_context);
      return {};
    case Op::set_view_radius:
      if (!read(c, a, b)) return malformed();
      if (scanning_) return {};
      s = w.set_view_radius(c, a, b);
      break;
    case Op::set_history_capacity:
      if (!read(c, n)) return malformed();
      if (scanning_) return {};
      if (def_.max_history_capacity != 0) n = std::min(n, def_.max_history_capacity);
      s = w.set_history_capacity(c, n);
      break;
    case Op::set_radii:
      if (!read(a, b)) return malformed();
      if (scanning_) return {};
      s = w.set_radii(a, b);
      break;
    case Op::set_crowd_cap:
      if (!read(n)) return malformed();
      if (scanning_) return {};
      w.set_crowd_cap(n);
      return {};
    case Op::create_event_class: {
      EventClassDef def;
      if (!read(def, ec)) return malformed();
      if (scanning_) return {};
      return created(w.create_event_class(def), ec);
    }
    case Op::set_event_class: {
      EventClassDef def;
      if (!read(ec, def)) return malformed();
      if (scanning_) return {};
      s = w.set_event_class(ec, def);
      break;
    }
    case Op::emit_event: {
      EventDef def;
      if (!read(def, n)) return malformed();
      if (scanning_) return {};
      return created(w.emit_event(def), n);
    }
  }
  return s ? Status{} : refused(s);
}

Replay::Replay(std::unique_ptr<ReplayImpl> impl) noexcept : impl_(std::move(impl)) {}
Replay::Replay(Replay&&) noexcept = default;
Replay& Replay::operator=(Replay&&) noexcept = default;
Replay::~Replay() = default;

Result<Replay> Replay::open(std::span<const std::uint8_t> bytes, const ReplayDef& def) {
  if (def.threads > kMaxThreads) {
    return Status{ErrorCode::invalid_def, "ReplayDef::threads is " + std::to_string(def.threads) +
                                              ": must be 0 (as recorded) or in [1, " +
                                              std::to_string(kMaxThreads) + "]"};
  }
  auto impl = std::make_unique<ReplayImpl>(std::vector<std::uint8_t>(bytes.begin(), bytes.end()), def);
  if (Status s = impl->open(); !s) return s;
  return Replay(std::move(impl));
}

Result<TickStats> Replay::next_tick() { return impl_->next_tick(); }
bool Replay::done() const noexcept { return impl_->done_; }
std::uint64_t Replay::ticks() const noexcept { return impl_->ticks_; }
std::size_t Replay::offset() const noexcept { return impl_->reader_.offset(); }
bool Replay::used_visibility_filter() const noexcept { return impl_->used_filter_; }
World& Replay::world() noexcept { return *impl_->world_; }
const World& Replay::world() const noexcept { return *impl_->world_; }

}  // namespace sightline
