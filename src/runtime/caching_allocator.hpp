// A per-device caching allocator on top of a backend's alloc/free.
//
// Freed blocks go to a free list keyed by their rounded size and are handed
// out again without a backend call. All work of one device runs on its
// in-order default queue, so a block freed by the host can be reused by the
// next op enqueued: that op runs after every earlier user of the block.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include "vnn/memory.h"

namespace vnn::detail {

class CachingAllocator {
 public:
  using AllocFn = std::function<void*(size_t)>;     // throws on failure
  using FreeFn = std::function<void(void*)>;

  void set_backend(AllocFn alloc, FreeFn free) { alloc_ = std::move(alloc); free_ = std::move(free); }

  // Returns a handle for at least `bytes`; `*rounded` receives the block size.
  void* allocate(size_t bytes, size_t* rounded);
  void release(void* handle, size_t rounded);
  void empty_cache();
  MemoryStats stats() const;
  void reset_peak();

  static size_t round_size(size_t bytes);

 private:
  AllocFn alloc_;
  FreeFn free_;
  mutable std::mutex mutex_;
  std::multimap<size_t, void*> free_blocks_;
  MemoryStats stats_;
};

}  // namespace vnn::detail
