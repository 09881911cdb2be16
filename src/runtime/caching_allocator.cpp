// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/caching_allocator.hpp"

#include <cstdio>
#include <map>

#include "profiler/hooks.hpp"
#include "vnn/detail/message.h"
#include "vnn/error.h"

namespace vnn::detail {

namespace {

// "4.00 MiB (4194304 bytes)": readable, and exact for whoever compares.
std::string size_text(uint64_t bytes) {
  char buf[64];
  if (bytes >= (uint64_t(1) << 30))
    std::snprintf(buf, sizeof(buf), "%.2f GiB", double(bytes) / double(uint64_t(1) << 30));
  else if (bytes >= (uint64_t(1) << 20))
    std::snprintf(buf, sizeof(buf), "%.2f MiB", double(bytes) / double(uint64_t(1) << 20));
  else
    std::snprintf(buf, sizeof(buf), "%.2f KiB", double(bytes) / 1024.0);
  return std::string(buf) + " (" + std::to_string(bytes) + " bytes)";
}

struct OomListeners {
  std::mutex m;
  int next = 0;
  std::map<int, std::function<void(const std::string&)>> fns;
};
OomListeners& oom_listeners() {
  static OomListeners* l = new OomListeners;  // never destroyed: groups may outlive static teardown
  return *l;
}

thread_local int quiet_depth = 0;

}  // namespace

QuietOutOfMemory::QuietOutOfMemory() { ++quiet_depth; }
QuietOutOfMemory::~QuietOutOfMemory() { --quiet_depth; }

void notify_out_of_memory(const std::string& message) {
  if (quiet_depth > 0) return;
  std::lock_guard<std::mutex> lock(oom_listeners().m);  // held: a listener is not removed while it runs
  for (auto& [id, fn] : oom_listeners().fns) fn(message);
}

int add_out_of_memory_listener(std::function<void(const std::string&)> listener) {
  std::lock_guard<std::mutex> lock(oom_listeners().m);
  int id = ++oom_listeners().next;
  oom_listeners().fns[id] = std::move(listener);
  return id;
}
void remove_out_of_memory_listener(int id) {
  std::lock_guard<std::mutex> lock(oom_listeners().m);
  oom_listeners().fns.erase(id);
}

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
  std::unique_lock<std::mutex> lock(mutex_);
  if (!limit_known_) resolve_limit_locked();  // VNN_MEMORY_LIMIT, read at the device's first allocation
  auto it = free_blocks_.find(Key{stream, size});
  if (it != free_blocks_.end()) {  // reserved stays: a cached block always fits the limit
    void* h = it->second;
    free_blocks_.erase(it);
    if (stream != 0) stream_of_[h] = stream;
    ++stats_.allocations;
    ++stats_.cache_hits;
    stats_.allocated += size;
    if (stats_.allocated > stats_.peak_allocated) stats_.peak_allocated = stats_.allocated;
    *rounded = size;
    return h;
  }
  if (limit_ != 0 && stats_.reserved + size > limit_) {
    // A full device: give every cached block back, then retry.
    const uint64_t reserved_before = stats_.reserved;
    uint64_t freed = 0;
    std::vector<void*> blocks = take_cached_locked(&freed);
    lock.unlock();
    for (void* b : blocks) free_(b);
    lock.lock();
    if (stats_.reserved + size > limit_) {
      const uint64_t allocated = stats_.allocated, reserved = stats_.reserved, limit = limit_;
      lock.unlock();
      std::string message = str_cat("out of memory on ", device_.str(), ": tried to allocate ", size_text(bytes),
                (size != bytes ? " (a block of " + size_text(size) + ")" : std::string()),
                ", but the device's memory limit is ", size_text(limit), ", of which ", size_text(allocated),
                " is allocated by live tensors and ", size_text(reserved), " is reserved by vnn's caching allocator",
                (freed ? " (" + size_text(freed) + " of cached blocks, out of " + size_text(reserved_before) +
                             " reserved, were given back first)"
                       : std::string(" (no cached blocks to give back)")),
                ". Free what is no longer needed (drop tensors; backward() frees saved activations), use a smaller "
                "batch, recompute activations in backward (vnn::utils::checkpoint), or shard parameters, gradients "
                "and optimizer state over ranks (FSDP); or raise the limit: vnn::set_memory_limit(",
                device_.str(), ", bytes) or VNN_MEMORY_LIMIT (0 = no limit)");
      notify_out_of_memory(message);
      throw OutOfMemory(message);
    }
  }
  // Claimed before the backend call, so that a concurrent allocation sees it.
  stats_.reserved += size;
  lock.unlock();
  void* h = nullptr;
  try {
    try {
      h = alloc_(size);
    } catch (const OutOfMemory&) {
      empty_cache();  // give cached blocks back and try once more
      h = alloc_(size);
    }
  } catch (const OutOfMemory& e) {
    lock.lock();
    stats_.reserved -= size;
    lock.unlock();
    notify_out_of_memory(e.what());
    throw;
  } catch (...) {
    lock.lock();
    stats_.reserved -= size;
    throw;
  }
  lock.lock();
  if (stream != 0) stream_of_[h] = stream;
  ++stats_.allocations;
  ++stats_.backend_allocations;
  stats_.allocated += size;
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

std::vector<void*> CachingAllocator::take_cached_locked(uint64_t* bytes) {
  std::vector<void*> blocks;
  blocks.reserve(free_blocks_.size());
  uint64_t total = 0;
  for (auto& b : free_blocks_) {
    total += b.first.second;
    blocks.push_back(b.second);
  }
  free_blocks_.clear();
  stats_.reserved -= total;
  if (bytes) *bytes = total;
  return blocks;
}

void CachingAllocator::empty_cache() {
  std::vector<void*> blocks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    blocks = take_cached_locked(nullptr);
  }
  for (void* b : blocks) free_(b);
}

void CachingAllocator::resolve_limit_locked() {
  limit_ = env_memory_limit(device_);  // throws ValueError for a bad VNN_MEMORY_LIMIT (then asked again)
  limit_known_ = true;
}

uint64_t CachingAllocator::limit() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!limit_known_) resolve_limit_locked();
  return limit_;
}

void CachingAllocator::set_limit(uint64_t bytes) {
  std::vector<void*> blocks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    limit_ = bytes;
    limit_known_ = true;
    if (bytes != 0 && stats_.reserved > bytes) blocks = take_cached_locked(nullptr);
  }
  for (void* b : blocks) free_(b);
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  MemoryStats s = stats_;
  s.limit = limit_known_ ? limit_ : 0;
  return s;
}

void CachingAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak_allocated = stats_.allocated;
  stats_.peak_reserved = stats_.reserved;
}

}  // namespace vnn::detail
