// One direction of an impaired link: seeded loss, duplication, reordering and delay, no sockets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "sightline/status.h"

namespace sightline::relay {

/// How a direction impairs its datagrams. Every probability is drawn per datagram from the
/// direction's own generator, so a run is reproduced by its seed and its traffic.
struct LinkDef {
  /// Probability that a datagram is lost, in [0, 1).
  double drop = 0;
  /// Probability that a delivered datagram is sent twice, in [0, 1]; the copy gets its own delay.
  double duplicate = 0;
  /// Probability that a delivered datagram is held back until the next delivered datagram of its
  /// direction has landed, in [0, 1); held at most kMaxHoldSeconds beyond its own due time.
  double reorder = 0;
  /// Fixed one-way delay in milliseconds, in [0, 10000].
  double delay_ms = 0;
  /// Extra delay drawn uniformly in [0, jitter_ms] per copy, in milliseconds, in [0, 10000].
  double jitter_ms = 0;
  /// Seed of both directions' generators (each direction derives its own from it).
  std::uint64_t seed = 1;
  /// Seconds after the link's start from which nothing is dropped, duplicated or reordered
  /// (delay and jitter stay), in [0, 1e6]; 0: never heals.
  double heal_after_seconds = 0;
  /// Datagrams queued or held at once, in [1, 1048576]; more are refused and counted as overflow.
  std::size_t max_queued = 65536;
  /// Payload bytes queued or held at once, in [65535, 1 GiB]; more are refused as overflow.
  std::size_t max_queued_bytes = std::size_t{64} << 20;
};

/// Longest a reordered datagram waits for a later one, beyond its own due time, in seconds.
inline constexpr double kMaxHoldSeconds = 0.2;

/// ok, or invalid_def with a message naming the command-line option and its value, e.g.
/// "--drop is 1.5: must be in [0, 1)".
[[nodiscard]] Status validate(const LinkDef& def);

/// What a direction did, in datagrams. Once everything is delivered:
/// delivered == received - dropped + duplicated - overflow.
struct LinkCounters {
  std::uint64_t received = 0;    ///< Datagrams submitted.
  std::uint64_t delivered = 0;   ///< Copies popped as due (duplicates included).
  std::uint64_t dropped = 0;     ///< Datagrams lost by the drop probability.
  std::uint64_t duplicated = 0;  ///< Extra copies scheduled by the duplicate probability.
  std::uint64_t reordered = 0;   ///< Datagrams held back behind a later one.
  std::uint64_t overflow = 0;    ///< Copies refused because the queue was full.
};

/// The fate of one submitted datagram. Times are seconds from the submission.
struct Decision {
  bool dropped = false;
  bool duplicated = false;
  bool reordered = false;
  double delay_seconds = 0;            ///< Of the first copy (before any hold for reordering).
  double duplicate_delay_seconds = 0;  ///< Of the second copy; meaningful when duplicated.
  int overflowed_copies = 0;           ///< Copies the full queue refused (0, 1 or 2).
  friend bool operator==(const Decision&, const Decision&) = default;
};

/// A copy whose time has come, handed to the caller by pop_due.
struct DueDatagram {
  std::uint32_t peer = 0;  ///< The caller's tag given to submit (the relay's peer index).
  std::vector<std::uint8_t> bytes;
};

/// One direction of the link. Time is passed in, never read: seconds on any steady clock, not
/// decreasing from call to call. Not thread-safe; allocates one buffer per queued copy.
class Link {
 public:
  /// `direction` tells the two directions' generators apart; `start_seconds` starts the heal clock.
  /// `def` must be valid (validate); an invalid one is refused with its status.
  [[nodiscard]] static Result<Link> create(const LinkDef& def, std::uint64_t direction, double start_seconds);

  /// Decides the datagram's fate at `now_seconds` and queues its copies (payload copied).
  Decision submit(double now_seconds, std::uint32_t peer, std::span<const std::uint8_t> bytes);

  /// Appends the copies due at `now_seconds` to `out`, earliest first (ties in submission order).
  void pop_due(double now_seconds, std::vector<DueDatagram>& out);

  /// When the earliest copy falls due (held ones at their longest hold), or a negative value
  /// when nothing is queued.
  [[nodiscard]] double next_due_seconds() const;

  [[nodiscard]] std::size_t queued() const noexcept { return queue_.size() + held_.size(); }
  [[nodiscard]] const LinkCounters& counters() const noexcept { return counters_; }

 private:
  struct Copy {
    double due_seconds = 0;
    std::uint64_t order = 0;
    std::uint32_t peer = 0;
    std::vector<std::uint8_t> bytes;
  };

  Link(const LinkDef& def, std::uint64_t direction, double start_seconds);
  double draw_unit();
  bool admit(std::size_t bytes);
  void enqueue(Copy copy);
  void release_held(double after_seconds);

  LinkDef def_;
  double heal_at_seconds_ = 0;  // Negative: never heals.
  std::mt19937_64 generator_;
  std::uint64_t next_order_ = 0;
  std::size_t queued_bytes_ = 0;
  std::vector<Copy> queue_;  // A min-heap on (due_seconds, order).
  std::vector<Copy> held_;   // Reordered copies waiting for a later one, in submission order.
  LinkCounters counters_;
};

}  // namespace sightline::relay
