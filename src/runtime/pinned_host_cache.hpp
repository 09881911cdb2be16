// Page-locked host blocks kept for reuse, like PyTorch's CachingHostAllocator:
// a DataLoader with pin_memory pins every batch, and asking the driver for
// pinned memory each time costs far more than the copy it speeds up
// (cudaHostAlloc / a mapped OpenCL buffer: tens of microseconds to
// milliseconds). Blocks are rounded up to a power of two and reused for any
// request of that size class.
//
// Reuse is safe without events: a Storage is released only when its last
// owner goes, and a queued non-blocking copy owns its host buffer until the
// device is synchronised (DeviceContext::keep_alive).
#pragma once
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "vnn/backend_abi.h"

namespace vnn::detail {

struct DeviceContext;

struct PinnedHostStats {
  uint64_t allocations = 0;          // blocks handed out
  uint64_t backend_allocations = 0;  // of those, fresh from the backend
  uint64_t in_use = 0;               // bytes in live pinned tensors (size classes)
  uint64_t cached = 0;               // bytes kept for reuse
};

class PinnedHostCache {
 public:
  // Cached bytes above this are given back to the backend at release.
  static constexpr uint64_t kMaxCached = uint64_t(1) << 30;

  // A block of at least `bytes` from `pinner`'s backend (throws as the
  // backend's host_alloc does).
  void* acquire(DeviceContext& pinner, size_t bytes);
  void release(DeviceContext& pinner, void* block, size_t bytes);
  // Gives every cached block back.
  void empty(DeviceContext& pinner);
  PinnedHostStats stats() const;

  static size_t size_class(size_t bytes);

 private:
  mutable std::mutex mutex_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  PinnedHostStats stats_;
};

}  // namespace vnn::detail
