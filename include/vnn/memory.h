// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The per-device caching allocator's statistics (like torch.cuda.memory_*).
#pragma once
#include <cstdint>
#include <string>

#include "vnn/device.h"

namespace vnn {

/// The caching allocator's counters for one device (torch.cuda.memory_stats' main figures).
struct MemoryStats {
  /// Bytes in live tensors.
  uint64_t allocated = 0;         // bytes in live tensors
  /// Bytes held from the backend: live plus cached.
  uint64_t reserved = 0;          // bytes held from the backend (live + cached)
  /// Highest `allocated` since start or the last reset_peak_memory_stats.
  uint64_t peak_allocated = 0;
  /// Highest `reserved` since start or the last reset_peak_memory_stats.
  uint64_t peak_reserved = 0;
  /// Allocation requests served.
  uint64_t allocations = 0;       // requests served
  /// Requests that reached the backend (not served from the cache).
  uint64_t backend_allocations = 0;  // requests that reached the backend
  /// Requests served from the cache.
  uint64_t cache_hits = 0;
  /// The memory limit in force on the device (memory_limit(); 0 = none).
  uint64_t limit = 0;
};

/// Page-locked host memory behind pin_memory() (torch.cuda.host_memory_stats):
/// blocks are cached by size class (powers of two from 4 KiB) and reused. A
/// block still read or written by a queued non_blocking copy is *pending*
/// until an event recorded behind that copy completes; then it is cached.
/// Byte figures count whole size classes; reserved = in_use + pending +
/// cached. Figures are summed over the backends that pin (in practice one).
/// docs/streams.md, "Pinned host memory".
struct HostMemoryStats {
  /// Pinned blocks handed out.
  uint64_t allocations = 0;          // pinned blocks handed out
  /// Of those, blocks newly allocated by a backend.
  uint64_t backend_allocations = 0;  // of those, newly allocated by a backend
  /// Blocks given back to a backend.
  uint64_t backend_frees = 0;        // blocks given back to a backend
  /// Allocations that waited for a pending block because the limit was reached.
  uint64_t limit_waits = 0;          // allocations that waited for a pending block (limit reached)
  /// Bytes held by live pinned tensors.
  uint64_t in_use = 0;               // bytes held by live pinned tensors
  /// Bytes whose tensors are gone but whose copies may still run.
  uint64_t pending = 0;              // bytes whose tensors are gone but whose copies may still run
  /// Bytes free for reuse.
  uint64_t cached = 0;               // bytes free for reuse
  /// All pinned bytes held: in_use + pending + cached.
  uint64_t reserved = 0;             // in_use + pending + cached: all pinned bytes held
  /// Block counts in use, pending and cached.
  ///@{
  uint64_t blocks_in_use = 0, blocks_pending = 0, blocks_cached = 0;
  ///@}
  /// All blocks: blocks_in_use + blocks_pending + blocks_cached.
  uint64_t blocks = 0;               // blocks_in_use + blocks_pending + blocks_cached
  /// Highest `reserved` since start or the last reset.
  uint64_t peak_reserved = 0;        // highest `reserved` since start / the last reset
  /// Highest `blocks`.
  uint64_t peak_blocks = 0;          // highest `blocks`
  /// The soft limit in force, pinned_memory_limit().
  uint64_t limit = 0;                // pinned_memory_limit()
};

/// The caching allocator's counters for device `d`.
MemoryStats memory_stats(const Device& d);
/// The pinned host memory counters, summed over pinning backends.
HostMemoryStats host_memory_stats();
/// Restarts the peak figures of device `d` at the current values.
void reset_peak_memory_stats(const Device& d);
/// Restarts the pinned memory peak figures at the current values.
void reset_peak_host_memory_stats();
/// Returns cached, unused blocks to the backend (device d's, and the pinned
/// host blocks d's backend made).
void empty_cache(const Device& d);

/// The soft limit on pinned host bytes (reserved, per pinning backend): past
/// it, an allocation first gives back cached blocks of other sizes, then
/// waits for the oldest pending block and reuses or frees it, instead of
/// pinning more; only when every block is in a live tensor does it grow past
/// the limit. Default: VNN_PINNED_MEMORY_LIMIT (bytes, or with a unit: 256M,
/// 1GiB) when set, else min(1 GiB, 10% of RAM). A bad VNN_PINNED_MEMORY_LIMIT
/// throws ValueError at the first pin. Setting it gives cached blocks above
/// the new limit back at once.
uint64_t pinned_memory_limit();
/// Sets the pinned soft limit in bytes; cached blocks above it are given back at once.
void set_pinned_memory_limit(uint64_t bytes);
/// Caps the bytes device `d`'s caching allocator holds (`reserved`: live
/// tensors plus cached blocks) at `bytes`, as a device of that size would;
/// 0 removes the cap. An allocation that does not fit first gives every
/// cached block back to the backend (a full GPU's path: empty the cache,
/// retry), then throws OutOfMemory naming the device, the request, the
/// limit, what is allocated and reserved, and what to do. Setting a limit
/// below what is reserved gives the cached blocks back at once; live
/// tensors stay (the next allocation that does not fit throws). Overrides
/// VNN_MEMORY_LIMIT for `d`. Lets a budget smaller than the machine be
/// shown anywhere: activation checkpointing, FSDP (docs/distributed.md).
void set_memory_limit(const Device& d, uint64_t bytes);
/// The memory limit in force on device `d` (0 = none): set_memory_limit's,
/// else what VNN_MEMORY_LIMIT gives `d`, read at the device's first use.
/// VNN_MEMORY_LIMIT is a comma-separated list of `device=size` entries,
/// e.g. `cpu:0=2G,opencl:0=512M`; sizes are bytes or take a unit (K, M, G,
/// T, KiB, ...; 1024-based), 0 is no limit; a bare backend name (`cuda=20G`)
/// covers each device of that backend and an indexed entry wins over it;
/// entries for devices that are not here are ignored. A value that cannot
/// be read throws ValueError naming the entry, here and at every allocation
/// on the device, until set_memory_limit sets one.
uint64_t memory_limit(const Device& d);
/// A human-readable table of device d's allocator figures.
std::string memory_summary(const Device& d);

}  // namespace vnn
