// The growable array behind the tick's outputs: sets, sightings, periods and records.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>

#include "sightline_assert.h"

namespace sightline {

/// Like std::vector, but growing leaves the new elements unwritten. A client pass sizes each
/// output for its worst case (a despawn per old member, say), writes what it finds and trims to
/// that: std::vector::resize would first store a value into every element it is about to
/// overwrite or drop, which measured 10% of a (b) tick. Only for records that are plain bytes.
template <class T>
class RecordBuffer {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  RecordBuffer() = default;
  RecordBuffer(const RecordBuffer&) = delete;
  RecordBuffer& operator=(const RecordBuffer&) = delete;
  RecordBuffer(RecordBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        capacity_(std::exchange(other.capacity_, 0)) {}
  RecordBuffer& operator=(RecordBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      capacity_ = std::exchange(other.capacity_, 0);
    }
    return *this;
  }
  ~RecordBuffer() { release(); }

  [[nodiscard]] T* data() noexcept { return data_; }
  [[nodiscard]] const T* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] T* begin() noexcept { return data_; }
  [[nodiscard]] T* end() noexcept { return data_ + size_; }
  [[nodiscard]] const T* begin() const noexcept { return data_; }
  [[nodiscard]] const T* end() const noexcept { return data_ + size_; }
  [[nodiscard]] T& operator[](std::size_t i) noexcept {
    SIGHTLINE_ASSERT(i < size_);
    return data_[i];
  }
  [[nodiscard]] const T& operator[](std::size_t i) const noexcept {
    SIGHTLINE_ASSERT(i < size_);
    return data_[i];
  }
  [[nodiscard]] std::span<const T> span() const noexcept { return {data_, size_}; }

  void clear() noexcept { size_ = 0; }

  /// Room for `n` elements; keeps the first size() of them.
  void reserve(std::size_t n) {
    if (n <= capacity_) return;
    T* const fresh = std::allocator<T>().allocate(n);
    if (size_ != 0) std::memcpy(fresh, data_, size_ * sizeof(T));
    release();
    data_ = fresh;
    capacity_ = n;
  }

  /// Sets the size to `n`. Elements from the old size on hold no value until written; the
  /// capacity at least doubles when it must grow.
  void resize_unwritten(std::size_t n) {
    if (n > capacity_) reserve(std::max(n, 2 * capacity_));
    size_ = n;
  }

  /// Appends `count` unwritten elements and returns the first.
  [[nodiscard]] T* extend(std::size_t count) {
    const std::size_t at = size_;
    resize_unwritten(size_ + count);
    return data_ + at;
  }

 private:
  void release() noexcept {
    if (data_ != nullptr) std::allocator<T>().deallocate(data_, capacity_);
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace sightline
