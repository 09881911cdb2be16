// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Public memory statistics over the per-device caching allocators.
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/device_context.hpp"
#include "vnn/detail/message.h"
#include "vnn/error.h"
#include "vnn/memory.h"

namespace vnn {

namespace detail {

namespace {

struct LimitEntry {
  std::string backend;
  int index = -1;  // -1: every device of the backend
  uint64_t bytes = 0;
};

std::string trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

[[noreturn]] void bad_limit(const std::string& text, const std::string& entry, const std::string& why) {
  VNN_THROW(ValueError, "VNN_MEMORY_LIMIT=\"", text, "\": entry \"", entry, "\" ", why,
            "; write a comma-separated list of device=size, e.g. VNN_MEMORY_LIMIT=cpu:0=2G,opencl:0=512M "
            "(sizes in bytes or with a unit: 512M, 2G, 1GiB; 0 = no limit; a bare backend name such as cuda=20G "
            "covers each of its devices), or unset it");
}

std::vector<LimitEntry> parse_limits(const std::string& text) {
  std::vector<LimitEntry> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string entry = trim(text.substr(start, comma - start));
    start = comma + 1;
    if (entry.empty()) {
      if (comma == text.size()) break;  // a trailing comma
      bad_limit(text, entry, "is empty");
    }
    const size_t eq = entry.find('=');
    if (eq == std::string::npos) bad_limit(text, entry, "has no '=' between the device and the size");
    const std::string dev = trim(entry.substr(0, eq)), size = trim(entry.substr(eq + 1));
    LimitEntry e;
    const size_t colon = dev.find(':');
    e.backend = dev.substr(0, colon);
    if (e.backend.empty()) bad_limit(text, entry, "names no device");
    for (char c : e.backend)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
        bad_limit(text, entry, "does not name a device as backend[:index] (cpu:0, opencl:0, cuda)");
    if (colon != std::string::npos) {
      const std::string idx = dev.substr(colon + 1);
      if (idx.empty() || idx.size() > 6) bad_limit(text, entry, "has no device index after ':'");
      for (char c : idx)
        if (!std::isdigit(static_cast<unsigned char>(c))) bad_limit(text, entry, "has a device index that is not a number");
      e.index = std::atoi(idx.c_str());
    }
    if (size.empty() || !parse_byte_size(size.c_str(), &e.bytes))
      bad_limit(text, entry, "does not give a size (bytes, or with a unit: 512M, 2G, 1GiB)");
    for (const LimitEntry& o : out)
      if (o.backend == e.backend && o.index == e.index) bad_limit(text, entry, "names a device a second time");
    out.push_back(e);
  }
  return out;
}

}  // namespace

uint64_t env_memory_limit(const Device& d) {
  const char* env = std::getenv("VNN_MEMORY_LIMIT");
  if (!env || !*env) return 0;
  uint64_t bytes = 0;
  bool found = false;
  for (const LimitEntry& e : parse_limits(env)) {
    if (e.backend != d.backend()) continue;
    if (e.index == d.index()) return e.bytes;  // an indexed entry wins
    if (e.index < 0) {
      bytes = e.bytes;
      found = true;
    }
  }
  return found ? bytes : 0;
}

}  // namespace detail

MemoryStats memory_stats(const Device& d) {
  auto& a = detail::context(d).allocator;
  a.limit();  // resolves VNN_MEMORY_LIMIT if this is the device's first use
  return a.stats();
}

void set_memory_limit(const Device& d, uint64_t bytes) {
  auto& c = detail::context(d);
  if (bytes != 0) c.synchronize();  // cached blocks may still be in use by queued work
  c.allocator.set_limit(bytes);
}

uint64_t memory_limit(const Device& d) { return detail::context(d).allocator.limit(); }
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
  out += "  memory limit     " + (s.limit ? mib(s.limit) : std::string("      none")) + "\n";
  return out;
}

}  // namespace vnn
