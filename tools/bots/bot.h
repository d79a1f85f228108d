// One load-test bot without its network: it takes the server's frames (docs/demo_protocol.md),
// applies each tick frame's packets to a ClientMirror, checks every frame, packet and held entity,
// and chooses where its viewer walks. sightline-bots runs many of these over WebSockets.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "frames.h"
#include "sightline/client_mirror.h"

namespace sightline::bots {

/// What a bot can find wrong. The first eight are the mirror's AnomalyKind, in its order.
enum class Problem : std::uint8_t {
  update_unknown = 0,
  spawn_held,
  despawn_unknown,
  generation_mismatch,
  bad_sequence,
  bad_reliable_id,
  delivery_mismatch,
  too_many,
  malformed_frame,   ///< A server frame that does not parse (or of an unknown type).
  malformed_packet,  ///< A state packet, or an entity payload in it, the mirror refused.
  out_of_radius,     ///< A held entity's state of this tick lies beyond L (plus kPositionTolerance).
  out_of_order,      ///< A frame where the protocol has none: before or after `welcome`, an unasked `debug`.
  /// Checking sets: the mirror, complete by its own count (pending 0) after a tick's packets,
  /// differs from the server's set of that tick (the `debug` frame's members and hidden entities).
  set_mismatch,
  /// Checking sets: the mirror was not complete at any of the bot's last kConvergeSeconds of tick
  /// frames since its debug view began (the first `debug` frame).
  not_converged,
};
inline constexpr std::size_t kProblemKinds = 14;
[[nodiscard]] const char* problem_name(Problem problem) noexcept;

/// World units an entity's distance may exceed L by: positions travel quantized to 1/256 on each
/// axis (within 1/512 each, so within sqrt(2)/512 together), plus float rounding.
inline constexpr double kPositionTolerance = 2.0 / 256.0 + 1e-4;

/// Delivery delays in milliseconds, bounded memory: 0.01 ms buckets up to 100 ms, 1 ms buckets
/// up to 10 s, one bucket beyond. Quantiles are a bucket's upper edge (exact max kept aside).
class DelayHistogram {
 public:
  void add(double ms) noexcept;
  [[nodiscard]] std::uint64_t count() const noexcept { return count_; }
  /// The q-quantile (q in [0, 1]), 0 when empty.
  [[nodiscard]] double quantile(double q) const noexcept;
  [[nodiscard]] double max() const noexcept { return count_ == 0 ? 0.0 : max_; }
  /// Below 0 when the two clocks disagree (another machine); 0 when empty.
  [[nodiscard]] double min() const noexcept { return count_ == 0 ? 0.0 : min_; }
  /// Adds every sample of `other` (the histograms of several threads made one).
  void merge(const DelayHistogram& other) noexcept;

 private:
  static constexpr std::size_t kFine = 10000;   // 0.01 ms up to 100 ms
  static constexpr std::size_t kCoarse = 9900;  // 1 ms from 100 ms up to 10 s
  std::array<std::uint64_t, kFine + kCoarse + 1> buckets_{};
  std::uint64_t count_ = 0;
  double max_ = 0.0;
  double min_ = 0.0;
};

/// Totals of one bot since it connected.
struct BotTotals {
  std::uint64_t frames = 0;   ///< Server frames received, all types.
  std::uint64_t bytes = 0;    ///< Their bytes (a bundle's own length fields not counted).
  std::uint64_t ticks = 0;    ///< Tick frames.
  std::uint64_t packets = 0;  ///< State packets in them.
  std::uint64_t resets = 0;
  std::uint64_t moves = 0;  ///< Move frames the bot sent.
  std::uint64_t spawns = 0;
  std::uint64_t updates = 0;
  std::uint64_t despawns = 0;
  std::uint64_t checked = 0;         ///< Held entities whose distance to the viewer was checked.
  std::uint64_t acks = 0;            ///< Ack frames the bot sent (unreliable delivery).
  std::uint64_t radius_changes = 0;  ///< Radius frames the bot sent (RunDef::radius_churn).
  /// Checking sets: ticks at which the mirror was complete (pending 0) and was compared with the
  /// server's set, entity by entity.
  std::uint64_t set_checks = 0;
  std::array<std::uint64_t, kProblemKinds> problems{};
};

/// How a bot walks: a seeded random walk of its viewer, kept strictly inside the world.
struct WalkDef {
  std::uint64_t seed = 1;
  double speed = 1.5;  ///< World units per second.
  double turn = 0.6;   ///< Standard deviation of the heading change per move, radians.
};

/// Seconds at the end of a run within which a bot checking sets must have found its mirror
/// complete and equal to the server's set (Problem::not_converged otherwise).
inline constexpr double kConvergeSeconds = 2.0;

/// The ranges of a demo entity payload's coordinates in a world of `width` x `height` (the
/// welcome's); refused where the welcome's size makes no range.
struct PayloadRanges {
  QuantizedRange x;
  QuantizedRange z;
};
[[nodiscard]] Result<PayloadRanges> payload_ranges(float width, float height);

/// The bot's side of one connection. Not thread-safe; single-threaded use.
class Bot final : private MirrorListener {
 public:
  /// `check_sets`: ask for the debug view (the server must run with --debug-view) and compare
  /// the mirror with the server's set at every tick where the mirror says it is complete.
  explicit Bot(const WalkDef& walk, bool check_sets = false);
  Bot(const Bot&) = delete;
  Bot& operator=(const Bot&) = delete;

  /// One server frame, received at `receive_ms` (milliseconds since the Unix epoch, the clock
  /// the server stamps tick frames with); a tick frame's delay goes to `delays`.
  void on_frame(std::span<const std::uint8_t> frame, double receive_ms, DelayHistogram& delays);
  /// One WebSocket message: a frame, or a bundle of them (demo::kBundleFrame), each then taken
  /// as on_frame takes it.
  void on_message(std::span<const std::uint8_t> message, double receive_ms, DelayHistogram& delays);

  /// The next move frame after `seconds` of walking since the last one, or nothing before the
  /// first tick frame (the bot does not know where its viewer stands yet).
  [[nodiscard]] std::optional<std::vector<std::uint8_t>> next_move(double seconds);

  /// The `options` frame turning the debug view on, once, after the welcome, when checking sets.
  [[nodiscard]] std::optional<std::vector<std::uint8_t>> take_options();
  /// A `radius` frame for the churn of RunDef::radius_churn, once welcomed: the enter radius at
  /// `share` (in [0, 1), each bot its own) of the way from R/4 to the lesser of 2R and the largest
  /// radius offered, and a sixteenth of R more every other call.
  [[nodiscard]] std::optional<std::vector<std::uint8_t>> take_radius(double share);
  /// Under unreliable delivery (the welcome's server flag), an `ack` frame after each tick frame
  /// received since the last one; nothing otherwise.
  [[nodiscard]] std::optional<std::vector<std::uint8_t>> take_ack();
  /// The connection ended: checking sets, a bot whose last kConvergeSeconds of tick frames (at
  /// the welcome's tick rate) since its first `debug` frame brought no complete mirror records
  /// Problem::not_converged. One that never got a debug frame is not judged (set_checks stays 0).
  void finish();

  [[nodiscard]] bool welcomed() const noexcept { return welcome_.has_value(); }
  /// The server's tick rate as its welcome said (Hz); 0 before the welcome.
  [[nodiscard]] std::uint32_t tick_rate() const noexcept { return welcome_ ? welcome_->tick_rate : 0; }
  [[nodiscard]] const BotTotals& totals() const noexcept { return totals_; }
  [[nodiscard]] std::uint64_t problem_count() const noexcept;
  /// The first few problems, each described (at most kMaxNotes).
  [[nodiscard]] const std::vector<std::string>& notes() const noexcept { return notes_; }
  static constexpr std::size_t kMaxNotes = 4;
  /// Entities the mirror holds now.
  [[nodiscard]] std::size_t held_count() const noexcept { return mirror_ ? mirror_->held_count() : 0; }

 private:
  // A state the tick frame being applied brought: where its entity stood at `tick` (older than
  // the packet's for a spawn sent again).
  struct FrameState {
    EntityId entity;
    float x = 0.0f;
    float z = 0.0f;
    std::uint32_t tick = 0;
  };

  void on_welcome(std::span<const std::uint8_t> frame);
  void on_tick(std::span<const std::uint8_t> frame, double receive_ms, DelayHistogram& delays);
  void on_reset(std::span<const std::uint8_t> frame);
  void on_debug(std::span<const std::uint8_t> frame);
  void restart_mirror();
  void problem(Problem kind, const std::string& note);
  void record(EntityId entity, std::span<const std::uint8_t> payload, StatePart part, std::uint32_t tick);
  static bool check_payload(EntityId entity, StatePart part, std::span<const std::uint8_t> payload,
                            void* context);

  void on_enter(EntityId entity, SpawnReason reason, bool created, std::span<const std::uint8_t> full_state,
                std::uint32_t tick) override;
  void on_update(EntityId entity, std::span<const std::uint8_t> update_state, std::uint32_t tick) override;
  void on_exit(EntityId entity, ExitKind kind, DespawnReason reason) override;

  WalkDef walk_;
  std::mt19937_64 rng_;
  std::optional<demo::Welcome> welcome_;
  std::optional<PayloadRanges> ranges_;  // the welcome's
  std::optional<ClientMirror> mirror_;
  std::vector<std::span<const std::uint8_t>> bundled_;  // the frames of the bundle being taken
  std::vector<FrameState> frame_states_;  // of the tick frame being applied, checked against L after it
  std::uint64_t tick_frames_ = 0;
  std::optional<std::uint32_t> last_tick_;  // the latest tick frame's tick
  bool check_sets_ = false;
  bool options_sent_ = false;
  bool radius_flip_ = false;
  bool ack_due_ = false;
  std::uint32_t stream_ = 0;  // the tick of the last reset frame: what acks name
  // The tick frame (counted from 1) last compared, or of the first debug frame before any.
  std::uint64_t last_set_check_frame_ = 0;
  std::uint64_t debug_frames_ = 0;
  std::uint64_t debug_after_tick_ = 0;  // debug frames right after the tick frame of their tick
  bool placed_ = false;                 // whether a tick frame said where the viewer is
  double x_ = 0.0;
  double z_ = 0.0;
  double heading_ = 0.0;
  BotTotals totals_;
  std::vector<std::string> notes_;
};

/// Reads a demo entity payload (docs/demo_protocol.md, "Entity payload") of `part`: x, z and,
/// for a full state, the kind. False when it does not read exactly (too short, out of range,
/// non-zero padding).
[[nodiscard]] bool read_entity_payload(std::span<const std::uint8_t> payload, StatePart part,
                                       const PayloadRanges& ranges, float& x, float& z, std::uint32_t& kind);

}  // namespace sightline::bots
