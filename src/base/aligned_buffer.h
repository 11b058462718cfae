// AlignedBuffer: an owned, zero-initialised byte buffer with a chosen alignment (64 for
// SIMD, 4096 for O_DIRECT reads). Move-only; not thread-safe (callers share by pointer).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "base/check.h"

namespace sf {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t size, size_t alignment = 64) { allocate(size, alignment); }
  ~AlignedBuffer() { std::free(data_); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  AlignedBuffer(AlignedBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    if (this != &o) {
      std::free(data_);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }

  void allocate(size_t size, size_t alignment = 64) {
    // Two statements: within one call's arguments, data_ may be read before reallocate()
    // replaces it (the order is unspecified; GCC for Arm reads it first: a write to freed memory).
    const size_t bytes = reallocate(size, alignment);
    std::memset(data_, 0, bytes);
  }

  // allocate(), asking the kernel for transparent huge pages (2 MiB) where it has them
  // (Linux gives huge pages to anonymous memory only when asked, with the usual "madvise"
  // setting). For the resident weights, which decode streams through once per token, 4 KiB
  // pages cost a TLB miss every 4 KiB; for the streaming ring, O_DIRECT reads into 4 KiB
  // pages ran at 1.4-2.1 GB/s on this project's VM against 5.3 GB/s into huge pages
  // (presumably the kernel's per-page work for each destination page of a read; docs/auto.md).
  // A buffer of at least one huge page is 2 MiB-aligned and rounded up to whole huge pages;
  // a smaller one is a plain allocation at min_alignment (>= 64).
  static constexpr size_t kHugePageBytes = size_t{2} << 20;
  void allocate_huge(size_t size, size_t min_alignment = 64);
  // The bytes allocate_huge(size, min_alignment) really takes, so memory budgets can count them.
  static size_t huge_allocation_bytes(size_t size, size_t min_alignment = 64) {
    const size_t alignment = size < kHugePageBytes ? std::max<size_t>(64, min_alignment) : kHugePageBytes;
    return rounded_size(size, alignment);
  }

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  template <typename T>
  T* as() {
    return reinterpret_cast<T*>(data_);
  }
  template <typename T>
  const T* as() const {
    return reinterpret_cast<const T*>(data_);
  }
  size_t size() const { return size_; }

 private:
  // Replaces the buffer with an uninitialised one of size bytes at this alignment; returns
  // the bytes allocated (size rounded up to the alignment, at least one alignment).
  static size_t rounded_size(size_t size, size_t alignment) {
    return std::max(alignment, (size + alignment - 1) / alignment * alignment);
  }
  size_t reallocate(size_t size, size_t alignment) {
    std::free(data_);
    size_ = size;
    const size_t rounded = rounded_size(size, alignment);
    data_ = static_cast<uint8_t*>(std::aligned_alloc(alignment, rounded));
    SF_CHECK(data_ != nullptr, "out of memory allocating %zu bytes", size);
    return rounded;
  }

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace sf
