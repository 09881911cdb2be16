// The per-device caching allocator's statistics (like torch.cuda.memory_*).
#pragma once
#include <cstdint>
#include <string>

#include "vnn/device.h"

namespace vnn {

struct MemoryStats {
  uint64_t allocated = 0;         // bytes in live tensors
  uint64_t reserved = 0;          // bytes held from the backend (live + cached)
  uint64_t peak_allocated = 0;
  uint64_t peak_reserved = 0;
  uint64_t allocations = 0;       // requests served
  uint64_t backend_allocations = 0;  // requests that reached the backend
  uint64_t cache_hits = 0;
};

MemoryStats memory_stats(const Device& d);
void reset_peak_memory_stats(const Device& d);
// Returns cached, unused blocks to the backend.
void empty_cache(const Device& d);
std::string memory_summary(const Device& d);

}  // namespace vnn
