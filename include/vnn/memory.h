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

// Page-locked host memory behind pin_memory() (torch.cuda.host_memory_stats):
// blocks are cached by size class (powers of two from 4 KiB) and reused, up
// to 1 GiB cached; empty_cache(d) frees those device d's backend made.
struct HostMemoryStats {
  uint64_t allocations = 0;          // pinned blocks handed out
  uint64_t backend_allocations = 0;  // of those, newly allocated by a backend
  uint64_t in_use = 0;               // bytes held by live pinned tensors
  uint64_t cached = 0;               // bytes kept for reuse
};

MemoryStats memory_stats(const Device& d);
HostMemoryStats host_memory_stats();
void reset_peak_memory_stats(const Device& d);
// Returns cached, unused blocks to the backend.
void empty_cache(const Device& d);
std::string memory_summary(const Device& d);

}  // namespace vnn
