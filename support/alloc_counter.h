// Counts heap allocations made through the global operator new (replaced in alloc_counter.cpp).
#pragma once

#include <cstdint>

namespace sightline::support {

/// Allocations through any form of global operator new since the program started. Read it before
/// and after a region; the difference is what the region allocated. Thread-safe (relaxed atomic).
[[nodiscard]] std::uint64_t allocation_count() noexcept;

/// Bytes of every block allocated through the global operator new and not yet deleted (as
/// malloc_usable_size gives them: the request rounded up to the allocator's size class). The
/// difference across a region is what it kept on the heap. Thread-safe (relaxed atomic).
[[nodiscard]] std::int64_t live_heap_bytes() noexcept;

}  // namespace sightline::support
