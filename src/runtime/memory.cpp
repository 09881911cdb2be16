// Public memory statistics over the per-device caching allocators.
#include <cstdio>
#include <string>

#include "runtime/device_context.hpp"
#include "vnn/memory.h"

namespace vnn {

MemoryStats memory_stats(const Device& d) { return detail::context(d).allocator.stats(); }
void reset_peak_memory_stats(const Device& d) { detail::context(d).allocator.reset_peak(); }
void empty_cache(const Device& d) {
  auto& c = detail::context(d);
  c.synchronize();  // cached blocks may still be in use by queued work
  c.allocator.empty_cache();
  c.pinned_cache.empty(c);  // the pinned host blocks this device's backend made
}

HostMemoryStats host_memory_stats() {
  HostMemoryStats out;
  for (const DeviceInfo& d : devices()) {
    detail::PinnedHostStats s = detail::context(d.device).pinned_cache.stats();
    out.allocations += s.allocations;
    out.backend_allocations += s.backend_allocations;
    out.backend_frees += s.backend_frees;
    out.limit_waits += s.limit_waits;
    out.in_use += s.in_use;
    out.pending += s.pending;
    out.cached += s.cached;
    out.blocks_in_use += s.blocks_in_use;
    out.blocks_pending += s.blocks_pending;
    out.blocks_cached += s.blocks_cached;
    out.peak_reserved += s.peak_reserved;
    out.peak_blocks += s.peak_blocks;
  }
  out.reserved = out.in_use + out.pending + out.cached;
  out.blocks = out.blocks_in_use + out.blocks_pending + out.blocks_cached;
  out.limit = pinned_memory_limit();
  return out;
}

void reset_peak_host_memory_stats() {
  for (const DeviceInfo& d : devices()) detail::context(d.device).pinned_cache.reset_peak();
}

uint64_t pinned_memory_limit() { return detail::pinned_limit(); }

void set_pinned_memory_limit(uint64_t bytes) {
  detail::set_pinned_limit(bytes);
  for (const DeviceInfo& d : devices()) {
    auto& c = detail::context(d.device);
    c.pinned_cache.trim(c, bytes);
  }
}

std::string memory_summary(const Device& d) {
  MemoryStats s = memory_stats(d);
  auto mib = [](uint64_t b) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%10.2f MiB", double(b) / (1024.0 * 1024.0));
    return std::string(buf);
  };
  std::string out = "vnn memory summary for " + d.str() + "\n";
  out += "  allocated        " + mib(s.allocated) + "   (peak " + mib(s.peak_allocated) + ")\n";
  out += "  reserved         " + mib(s.reserved) + "   (peak " + mib(s.peak_reserved) + ")\n";
  out += "  requests         " + std::to_string(s.allocations) + "\n";
  out += "  backend allocs   " + std::to_string(s.backend_allocations) + "\n";
  out += "  cache hits       " + std::to_string(s.cache_hits) + "\n";
  return out;
}

}  // namespace vnn
