#include "runtime/pinned_host_cache.hpp"

#include "runtime/device_context.hpp"

namespace vnn::detail {

size_t PinnedHostCache::size_class(size_t bytes) {
  size_t c = 4096;
  while (c < bytes) c <<= 1;
  return c;
}

void* PinnedHostCache::acquire(DeviceContext& pinner, size_t bytes) {
  const size_t c = size_class(bytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(c);
    if (it != free_.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      stats_.cached -= c;
      stats_.in_use += c;
      ++stats_.allocations;
      return p;
    }
  }
  void* p = nullptr;
  vnn_status s = pinner.backend->host_alloc(pinner.plugin_index, c, &p);
  if (s == VNN_STATUS_OUT_OF_MEMORY) {  // cached blocks of other sizes may be what is missing
    empty(pinner);
    s = pinner.backend->host_alloc(pinner.plugin_index, c, &p);
  }
  pinner.check(s, "pin_memory");
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.in_use += c;
  ++stats_.allocations;
  ++stats_.backend_allocations;
  return p;
}

void PinnedHostCache::release(DeviceContext& pinner, void* block, size_t bytes) {
  const size_t c = size_class(bytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.in_use -= c;
    if (stats_.cached + c <= kMaxCached) {
      free_[c].push_back(block);
      stats_.cached += c;
      return;
    }
  }
  pinner.backend->host_free(pinner.plugin_index, block);
}

void PinnedHostCache::empty(DeviceContext& pinner) {
  std::unordered_map<size_t, std::vector<void*>> blocks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    blocks.swap(free_);
    stats_.cached = 0;
  }
  for (auto& [size, list] : blocks)
    for (void* p : list) pinner.backend->host_free(pinner.plugin_index, p);
}

PinnedHostStats PinnedHostCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace vnn::detail
