// Counts heap allocations made through the global operator new (replaced in alloc_counter.cpp).
#pragma once

#include <cstdint>

namespace sightline::support {

/// Allocations through any form of global operator new since the program started. Read it before
/// and after a region; the difference is what the region allocated. Thread-safe (relaxed atomic).
[[nodiscard]] std::uint64_t allocation_count() noexcept;

}  // namespace sightline::support
