// A map from an integer key (32 or 64 bits) to a 32-bit value in one flat array: open addressing with linear
// probing, and erase by shifting the entries that follow back (no tombstones), so a lookup reads
// one cache line in the usual case and the table never fills up with the dead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sightline_assert.h"

namespace sightline {

template <class Key>
class KeyedIndexMap {
 public:
  /// What find() returns for a key that is not in the map; not a value the map can hold.
  static constexpr std::uint32_t kNone = 0xffffffffu;

  [[nodiscard]] std::uint32_t find(Key key) const noexcept {
    if (entries_.empty()) return kNone;
    for (std::size_t i = home(key);; i = (i + 1) & mask()) {
      const Entry& e = entries_[i];
      if (e.value == kNone) return kNone;
      if (e.key == key) return e.value;
    }
  }

  /// Asks the cache for the line where a lookup of `key` starts, so that lookups of many keys
  /// wait for their memory together rather than one after another.
  void prefetch(Key key) const noexcept {
    if (!entries_.empty()) __builtin_prefetch(&entries_[home(key)]);
  }

  /// Adds a key that is not in the map. Allocates only when the map grows (it doubles once it is
  /// three quarters full, and never shrinks).
  void insert(Key key, std::uint32_t value) {
    SIGHTLINE_ASSERT(value != kNone && find(key) == kNone);
    if (4 * (size_ + 1) > 3 * entries_.size()) grow();
    place(key, value);
    ++size_;
  }

  /// Changes the value of a key in the map.
  void assign(Key key, std::uint32_t value) noexcept {
    SIGHTLINE_ASSERT(value != kNone);
    entries_[slot_of(key)].value = value;
  }

  /// Removes a key in the map.
  void erase(Key key) noexcept {
    std::size_t hole = slot_of(key);
    // Move back every entry of the run after the hole that may live there: one whose home is not
    // cyclically within (hole, i].
    for (std::size_t i = (hole + 1) & mask(); entries_[i].value != kNone; i = (i + 1) & mask()) {
      const std::size_t h = home(entries_[i].key);
      const bool stays = hole < i ? (hole < h && h <= i) : (hole < h || h <= i);
      if (!stays) {
        entries_[hole] = entries_[i];
        hole = i;
      }
    }
    entries_[hole].value = kNone;
    --size_;
  }

  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  struct Entry {
    Key key = 0;
    std::uint32_t value = kNone;
  };

  [[nodiscard]] std::size_t mask() const noexcept { return entries_.size() - 1; }
  // Fibonacci hashing: the top bits of the key times 2^64 / phi, so that runs of neighbouring
  // keys (entity indices usually are) spread over the table.
  [[nodiscard]] std::size_t home(Key key) const noexcept {
    return static_cast<std::size_t>((std::uint64_t{key} * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  [[nodiscard]] std::size_t slot_of(Key key) const noexcept {
    std::size_t i = home(key);
    while (entries_[i].key != key || entries_[i].value == kNone) {
      SIGHTLINE_ASSERT(entries_[i].value != kNone);
      i = (i + 1) & mask();
    }
    return i;
  }
  void place(Key key, std::uint32_t value) noexcept {
    std::size_t i = home(key);
    while (entries_[i].value != kNone) i = (i + 1) & mask();
    entries_[i] = {key, value};
  }
  void grow() {
    std::vector<Entry> old = std::move(entries_);
    const std::size_t capacity = old.empty() ? 16 : 2 * old.size();
    entries_.assign(capacity, Entry{});
    shift_ = 64;
    for (std::size_t c = capacity; c > 1; c >>= 1) --shift_;
    for (const Entry& e : old) {
      if (e.value != kNone) place(e.key, e.value);
    }
  }

  std::vector<Entry> entries_;  // a power of two of them, or none
  unsigned shift_ = 64;         // 64 - log2(entries_.size())
  std::size_t size_ = 0;
};

using IndexMap = KeyedIndexMap<std::uint32_t>;       // entity indices
using ExternalIdMap = KeyedIndexMap<std::uint64_t>;  // EntityDef::external_id to slot

}  // namespace sightline
