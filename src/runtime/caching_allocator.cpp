#include "runtime/caching_allocator.hpp"

#include "profiler/hooks.hpp"
#include "vnn/error.h"

namespace vnn::detail {

size_t CachingAllocator::round_size(size_t bytes) {
  // Small blocks in 512-byte steps; large ones in 2 MiB steps so that
  // slightly different batch sizes share blocks.
  constexpr size_t kSmall = 512, kLarge = size_t(2) << 20, kLargeFrom = size_t(1) << 20;
  if (bytes == 0) return kSmall;
  if (bytes < kLargeFrom) return (bytes + kSmall - 1) / kSmall * kSmall;
  return (bytes + kLarge - 1) / kLarge * kLarge;
}

void* CachingAllocator::allocate(size_t bytes, size_t* rounded, uint64_t stream) {
  size_t size = round_size(bytes);
  if (profiler::detail::hooks_on()) profiler::detail::note_alloc(size);  // per-op bytes while profiling
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.allocations;
    auto it = free_blocks_.find(Key{stream, size});
    if (it != free_blocks_.end()) {
      void* h = it->second;
      free_blocks_.erase(it);
      if (stream != 0) stream_of_[h] = stream;
      ++stats_.cache_hits;
      stats_.allocated += size;
      if (stats_.allocated > stats_.peak_allocated) stats_.peak_allocated = stats_.allocated;
      *rounded = size;
      return h;
    }
  }
  void* h = nullptr;
  try {
    h = alloc_(size);
  } catch (const OutOfMemory&) {
    empty_cache();  // give cached blocks back and try once more
    h = alloc_(size);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (stream != 0) stream_of_[h] = stream;
  ++stats_.backend_allocations;
  stats_.allocated += size;
  stats_.reserved += size;
  if (stats_.allocated > stats_.peak_allocated) stats_.peak_allocated = stats_.allocated;
  if (stats_.reserved > stats_.peak_reserved) stats_.peak_reserved = stats_.reserved;
  *rounded = size;
  return h;
}

void CachingAllocator::release(void* handle, size_t rounded) {
  if (profiler::detail::hooks_on()) profiler::detail::note_free(rounded);
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.allocated -= rounded;
  uint64_t stream = 0;
  if (!stream_of_.empty()) {
    auto it = stream_of_.find(handle);
    if (it != stream_of_.end()) {
      if (!retired_.count(it->second)) stream = it->second;
      stream_of_.erase(it);
    }
  }
  free_blocks_.emplace(Key{stream, rounded}, handle);
}

void CachingAllocator::retire_stream(uint64_t stream) {
  if (stream == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  retired_.insert(stream);
  for (auto it = free_blocks_.lower_bound(Key{stream, 0}); it != free_blocks_.end() && it->first.first == stream;) {
    free_blocks_.emplace(Key{0, it->first.second}, it->second);
    it = free_blocks_.erase(it);
  }
}

void CachingAllocator::empty_cache() {
  std::multimap<Key, void*> blocks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    blocks.swap(free_blocks_);
    for (auto& b : blocks) stats_.reserved -= b.first.second;
  }
  for (auto& b : blocks) free_(b.second);
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void CachingAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak_allocated = stats_.allocated;
  stats_.peak_reserved = stats_.reserved;
}

}  // namespace vnn::detail
