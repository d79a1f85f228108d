// A World and a BruteForceOracle driven in lockstep: every input goes to both, every tick's
// records are compared. The first inconsistency is kept for the test to report.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "brute_force_oracle.h"
#include "sightline/world.h"

namespace sightline::testing {

class MirroredWorld {
 public:
  /// `def` must be valid (the constructor aborts through Result otherwise).
  explicit MirroredWorld(const WorldDef& def);

  // Each forwards to the World; when the World accepts, the oracle gets the same input.
  // destroy_entity of a viewer must be refused with entity_is_viewer, anything else on a live
  // handle must be accepted (create_entity: a bad bound radius gives invalid_argument, a dead
  // EntityDef::space stale_handle); a mismatch is recorded in error().
  Result<EntityId> create_entity(const EntityDef& def);
  /// create_entity of each def in order, with the structure readers compared once at the end, not
  /// after each entity (each comparison reads every entity: for worlds of 100,000 and more). The
  /// created handles; a refused def is left out.
  std::vector<EntityId> create_entities(std::span<const EntityDef> defs);
  Status destroy_entity(EntityId entity);
  Status withdraw_entity(EntityId entity);  ///< As destroy_entity.
  Status set_position(EntityId entity, float x, float z);
  Status set_positions(std::span<const EntityId> entities, std::span<const float> xs,
                       std::span<const float> zs);
  Status set_always_relevant(EntityId entity, bool always_relevant);
  Result<ClientId> create_client(EntityId viewer);
  Status destroy_client(ClientId client);
  Status set_viewer(ClientId client, EntityId viewer);
  Status set_radii(float enter_radius, float leave_radius);
  void set_crowd_cap(std::uint32_t cap);

  // Interest keys. Each call must be accepted exactly when its handle is live and its keys and
  // rates are valid (null_handle / stale_handle / invalid_argument otherwise; an entity key setter
  // on an attached entity gives invalid_argument); after every call, accepted or refused, the
  // World's readers (interest_key, area_subscriptions, user_subscriptions, subscription_revision)
  // must equal the oracle's.
  Status set_area_interest_key(EntityId entity, std::uint64_t key);
  Status set_user_interest_key(EntityId entity, std::uint64_t key);
  Status set_global_interest_key(EntityId entity);
  Status set_area_subscriptions(ClientId client, std::span<const KeySubscription> keys);
  Status add_user_subscription(ClientId client, KeySubscription subscription);
  Status remove_user_subscription(ClientId client, std::uint64_t key);
  Status clear_area_subscriptions(ClientId client);
  Status clear_user_subscriptions(ClientId client);
  Status clear_subscriptions(ClientId client);

  // Bounds, owners and origins. Each call must be accepted exactly when its handles are live and
  // its arguments valid: a bound radius in [0, kMaxRadius] (create_entity's too); add_origin not
  // of the viewer, not twice, not beyond kMaxOrigins; remove_origin of an extra origin only;
  // clear_owner of an unowned entity may be accepted (a no-op) or refused with invalid_argument.
  // Refused by handle: null_handle or stale_handle (only one bad handle per call is expected).
  // After every call, accepted or refused, the World's readers (bound_radius, owner, origins)
  // of the handles involved must equal the oracle's.
  Status set_bound_radius(EntityId entity, float radius);
  /// Accepted in [kMinRadiusScale, kMaxRadiusScale], else invalid_argument; radius_scale then
  /// equals the oracle's.
  Status set_radius_scale(EntityId entity, float scale);
  /// Accepted for enter 0 with leave 0, or enter in [kMinRadius, kMaxRadius] with leave 0 or in
  /// [enter, kMaxRadius]; else invalid_argument. view_radius then equals the oracle's.
  Status set_view_radius(ClientId client, float enter_radius, float leave_radius = 0.0f);
  Status set_owner(EntityId entity, ClientId client);
  Status clear_owner(EntityId entity);
  Status add_origin(ClientId client, EntityId origin);
  Status remove_origin(ClientId client, EntityId origin);

  // Spaces, attachments, presenters and teleports. Each call must be accepted exactly when its
  // handles are live and none of world.h's refusals applies: a bad handle gives null_handle or
  // stale_handle (one bad handle per call is expected); a refused SpaceDef gives invalid_argument
  // or invalid_def; every other refusal (attach's, key setters, set_presenter and set_space on an
  // attached entity, destroy_space of the default or a non-empty space, drill radii) gives
  // invalid_argument; a teleport to a bad position gives non_finite_position. After every call,
  // accepted or refused, the structure readers (parent, root, space, presenter, always_relevant
  // and interest_key of every live entity, client_space of every live client, space_def and
  // space_state of every live space) must equal the oracle's.
  Result<SpaceId> create_space(const SpaceDef& def);
  Status destroy_space(SpaceId space);
  Status set_space_def(SpaceId space, const SpaceDef& def);
  Status set_space(EntityId entity, SpaceId space);
  Status set_culling_drill(SpaceId space, float enter_radius, float leave_radius);
  Status clear_culling_drill(SpaceId space);
  Status attach(EntityId child, EntityId parent);
  Status detach(EntityId child);
  Status set_presenter(EntityId entity, bool presenter);
  Status teleport(EntityId entity, float x, float z);

  // Sight. set_walls must be refused (non_finite_position, changing nothing) when a coordinate is
  // NaN, infinite or beyond kMaxCoordinate; set_velocity (invalid_argument) for a NaN, infinite
  // or out-of-range component; set_look_ahead (invalid_argument) outside [0, kMaxLookAhead]; a
  // bad handle gives null_handle or stale_handle. After every call, accepted or refused, the
  // reader (walls, velocity, look_ahead) must equal the oracle's; after every tick, those of
  // every live space, entity and client. `context` must outlive this object's last tick.
  Status set_walls(SpaceId space, std::span<const WallSegment> walls);
  Status set_velocity(EntityId entity, float vx, float vz);
  Status set_look_ahead(ClientId client, float seconds);
  void set_visibility_filter(VisibilityFilter filter, void* context);

  /// Ticks both, then compares the TickStats (all but distance_tests), clients(), every stream and
  /// every interest set; then is_relevant_to, why and holder_count for every live client and live
  /// entity; then every live entity's key, bound, owner and structure readers, every live client's
  /// subscriptions, origins and space, and every live space's def and state.
  TickStats tick();

  [[nodiscard]] World& world() noexcept { return world_; }
  [[nodiscard]] const BruteForceOracle& oracle() const noexcept { return oracle_; }
  /// Empty while everything matched; else the first difference.
  [[nodiscard]] const std::string& error() const noexcept { return error_; }
  /// Refused calls of the structure API so far, by kind ("attach: cycle", "destroy_space:
  /// default space", ...), counted when the World refused as expected: what a random run reached.
  [[nodiscard]] const std::map<std::string, std::uint64_t>& refusals() const noexcept { return refusals_; }
  /// The first subscription_revision() that differed from the oracle's count, kept apart from
  /// error() so that a revision miscount does not stop the comparison of records (the oracle
  /// takes the world's value after a mismatch and goes on counting from it).
  [[nodiscard]] const std::string& revision_error() const noexcept { return revision_error_; }
  /// The first answer of is_relevant_to, why or holder_count after a tick that differed from the
  /// oracle's, kept apart from error() so that a wrong answer does not stop the comparison of
  /// records.
  [[nodiscard]] const std::string& question_error() const noexcept { return question_error_; }
  /// The first space_state() read between ticks (after an input call) that differed from the
  /// oracle's: the state of the last tick, with the entity count now. Kept apart from error() for
  /// the same reason; after a tick a difference goes to error().
  [[nodiscard]] const std::string& state_error() const noexcept { return state_error_; }

 private:
  void note(std::string message);

  enum class Expect : std::uint8_t { accept, refuse, either };
  /// How an input call must come out. Refused by handle when `live` is false (null_handle when the
  /// bad handle is null, else stale_handle); otherwise as `expect` says, a refusal giving `refusal`
  /// (or `alternative`, where either code is right).
  struct Outcome {
    std::string call;  ///< The call as error() names it.
    Expect expect = Expect::accept;
    bool live = true;
    bool null = false;
    ErrorCode refusal = ErrorCode::invalid_argument;
    std::optional<ErrorCode> alternative = std::nullopt;
  };
  /// The Outcome of a call on `handles`: refused by handle unless the oracle holds each live (the
  /// first that is not names the code), else as `expect` says.
  template <typename... Handles>
  [[nodiscard]] Outcome on_handles(std::string call, Expect expect, Handles... handles) const;
  void check_outcome(const Outcome& outcome, const Status& status);

  /// Every input wrapper's core: calls `world_call` (a World member) with `args` and checks its
  /// answer against `outcome`; when the World accepted, gives the oracle the same input through
  /// `oracle_call` (a BruteForceOracle member, or a callable taking the oracle first; a handle the
  /// World created comes before `args`) and notes the inconsistency it reports. Returns the
  /// World's answer (a Status or a Result).
  template <typename WorldCall, typename OracleCall, typename... Args>
  auto mirror(const Outcome& outcome, WorldCall world_call, OracleCall oracle_call, const Args&... args);
  /// destroy_entity and withdraw_entity: refused for a viewer, then the origins and structure compared.
  template <typename WorldCall, typename OracleCall>
  Status remove_entity(const char* name, WorldCall world_call, OracleCall oracle_call, EntityId entity);

  void compare_key(EntityId entity);
  void compare_subscriptions(ClientId client);
  void compare_entity(EntityId entity);  ///< bound_radius and owner
  void compare_origins(ClientId client);
  void compare_walls(SpaceId space);
  void compare_velocity(EntityId entity);
  void compare_look_ahead(ClientId client);
  /// The structure readers of every live entity, client and space (see above); a space_state()
  /// read between ticks that differs goes to state_error().
  void compare_structure(bool after_tick = false);

  void count_refusal(const Status& status, const std::string& kind);

  World world_;
  BruteForceOracle oracle_;
  std::map<std::string, std::uint64_t> refusals_;
  std::string error_;
  std::string revision_error_;
  std::string question_error_;
  std::string state_error_;
  std::string last_call_;  ///< The last subscription call, for revision_error().
  bool in_bulk_ = false;   ///< create_entities is running: compare_structure waits for its end.
};

}  // namespace sightline::testing
