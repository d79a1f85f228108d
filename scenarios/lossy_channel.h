// A seeded bad network for one direction of one link: datagrams are dropped, duplicated, delayed
// and (through jitter) reordered. Shared by the convergence tests and the simulator.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "rng.h"

namespace sightline::scenarios {

struct LossyChannelDef {
  double loss = 0.0;                ///< Probability a datagram is dropped, [0, 1].
  double duplicate = 0.0;           ///< Probability a delivered datagram arrives twice, [0, 1].
  std::uint32_t latency_ticks = 0;  ///< Fixed delay, in ticks.
  std::uint32_t jitter_ticks = 0;   ///< Extra delay uniform in [0, jitter_ticks]: reorders.
  std::uint64_t seed = 1;
};

/// Datagrams in flight, each due at a tick. Deterministic for a seed and a sequence of calls.
class LossyChannel {
 public:
  explicit LossyChannel(const LossyChannelDef& def) : def_(def), rng_(def.seed) {}

  /// Replaces the network's behaviour from now on (datagrams in flight keep their due ticks).
  void set_def(const LossyChannelDef& def) {
    const std::uint64_t seed = def_.seed;
    def_ = def;
    def_.seed = seed;
  }

  /// Sends a datagram at tick `now`.
  void send(std::uint64_t now, std::span<const std::uint8_t> bytes) {
    ++sent_;
    if (rng_.uniform() < def_.loss) {
      ++dropped_;
      return;
    }
    const int copies = rng_.uniform() < def_.duplicate ? 2 : 1;
    for (int i = 0; i < copies; ++i) {
      const std::uint64_t jitter = def_.jitter_ticks == 0 ? 0 : rng_.below(def_.jitter_ticks + 1);
      flight_.push_back({now + def_.latency_ticks + jitter, order_++, {bytes.begin(), bytes.end()}});
    }
  }

  /// Calls f(bytes) for every datagram due at or before `now`, earliest due first (ties in send
  /// order), and forgets them.
  template <class F>
  void deliver(std::uint64_t now, F&& f) {
    due_.clear();
    for (std::size_t i = 0; i < flight_.size();) {
      if (flight_[i].due <= now) {
        due_.push_back(std::move(flight_[i]));
        flight_[i] = std::move(flight_.back());
        flight_.pop_back();
      } else {
        ++i;
      }
    }
    std::sort(due_.begin(), due_.end(), [](const Datagram& a, const Datagram& b) {
      return a.due != b.due ? a.due < b.due : a.order < b.order;
    });
    for (const Datagram& d : due_) f(std::span<const std::uint8_t>(d.bytes));
    delivered_ += due_.size();
  }

  [[nodiscard]] std::size_t in_flight() const noexcept { return flight_.size(); }
  [[nodiscard]] std::uint64_t sent() const noexcept { return sent_; }
  [[nodiscard]] std::uint64_t dropped() const noexcept { return dropped_; }
  [[nodiscard]] std::uint64_t delivered() const noexcept { return delivered_; }

 private:
  struct Datagram {
    std::uint64_t due = 0;
    std::uint64_t order = 0;
    std::vector<std::uint8_t> bytes;
  };
  LossyChannelDef def_;
  Rng rng_;
  std::vector<Datagram> flight_;
  std::vector<Datagram> due_;
  std::uint64_t order_ = 0;
  std::uint64_t sent_ = 0;
  std::uint64_t dropped_ = 0;
  std::uint64_t delivered_ = 0;
};

}  // namespace sightline::scenarios
