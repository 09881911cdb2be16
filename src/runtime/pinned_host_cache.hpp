// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Page-locked host blocks kept for reuse, like PyTorch's CachingHostAllocator:
// a DataLoader with pin_memory pins every batch, and asking the driver for
// pinned memory each time costs far more than the copy it speeds up
// (cudaHostAlloc / a mapped OpenCL buffer: tens of microseconds to
// milliseconds). Blocks are rounded up to a power of two and reused for any
// request of that size class.
//
// A queued non_blocking copy may still read (or write) a block after its
// last tensor is gone. Each such copy records an event on its queue
// (record_use); a released block with events is *pending* and becomes
// reusable only once they have completed. Pending blocks are queried,
// without blocking, oldest first at every acquire. Past the soft limit
// (pinned_memory_limit) acquire frees cached blocks of other sizes, then
// waits for the oldest pending block instead of asking the backend for more.
// Every member is safe to call from several threads (DataLoader workers pin
// their batches).
#pragma once
#include <cstddef>
#include <cstdint>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "vnn/backend_abi.h"

namespace vnn::detail {

struct DeviceContext;

struct PinnedHostStats {
  uint64_t allocations = 0;          // blocks handed out
  uint64_t backend_allocations = 0;  // of those, fresh from the backend
  uint64_t backend_frees = 0;        // blocks given back to the backend
  uint64_t limit_waits = 0;          // acquires that waited for a pending block (limit reached)
  uint64_t in_use = 0, pending = 0, cached = 0;  // bytes (size classes)
  uint64_t blocks_in_use = 0, blocks_pending = 0, blocks_cached = 0;
  uint64_t peak_reserved = 0, peak_blocks = 0;
};

class PinnedHostCache {
 public:
  // A block of at least `bytes` from `pinner`'s backend (throws as the
  // backend's host_alloc does, or ValueError for a bad VNN_PINNED_MEMORY_LIMIT).
  void* acquire(DeviceContext& pinner, size_t bytes);
  // The block's last tensor is gone (never throws: called by ~Storage).
  void release(DeviceContext& pinner, void* block, size_t bytes) noexcept;
  // A copy just enqueued on `queue` of `copier` reads or writes `block`:
  // records an event behind it (one per queue, re-recorded on later uses).
  void record_use(DeviceContext& copier, void* queue, void* block);
  // Gives every cached block (and every pending one whose events have
  // completed) back, and destroys the spare events.
  void empty(DeviceContext& pinner);
  // Gives cached blocks back until this cache's reserved bytes are <= limit.
  void trim(DeviceContext& pinner, uint64_t limit);
  PinnedHostStats stats() const;
  void reset_peak();

  static size_t size_class(size_t bytes);

 private:
  struct Use {
    DeviceContext* ctx;  // who recorded the event
    void* queue;
    void* event;
  };
  enum class State { in_use, pending, waited_on, cached };
  struct Block {
    size_t size = 0;  // size class
    State state = State::in_use;
    std::vector<Use> uses;  // events since the block was handed out
  };

  // Moves pending blocks whose events completed to the cache, oldest first,
  // up to the first one still running (later ones on an in-order queue are
  // too).
  void collect_completed();
  bool uses_done(const Block& b) const;
  void retire(void* p, Block& b);  // pending (or waited on) -> cached
  void* take_cached(size_t size_class);  // a cached block handed out, or null
  // Cached blocks out (into *to_free) while reserved + need > limit.
  void shed(uint64_t limit, uint64_t need, std::vector<void*>* to_free);
  void* hand_out(void* p, Block& b);
  void forget(void* p, Block& b);  // a cached block is about to go back to the backend
  void spare_events(std::vector<Use>& uses);
  void note_peak();
  void free_blocks(DeviceContext& pinner, const std::vector<void*>& blocks);
  uint64_t reserved() const { return stats_.in_use + stats_.pending + stats_.cached; }
  // What the limit is checked against: the reserved bytes plus those other
  // threads are allocating from the backend right now (outside the lock),
  // so that two threads just under the limit do not both grow past it.
  uint64_t committed() const { return reserved() + allocating_; }

  mutable std::mutex mutex_;
  // Blocks another thread is waiting on (State::waited_on) and the signal
  // that one of them was retired: a thread past the limit with no pending
  // block of its own to wait on waits for those instead of growing.
  int waited_on_ = 0;
  uint64_t allocating_ = 0;  // bytes between the decision to allocate and the block's arrival
  std::condition_variable retired_;
  std::unordered_map<void*, Block> blocks_;  // every block held from the backend
  std::unordered_map<size_t, std::vector<void*>> free_;  // cached, per size class
  std::deque<void*> pending_;                           // oldest first
  std::vector<Use> spare_;                              // completed events for reuse
  PinnedHostStats stats_;
};

// The soft limit on each pinning backend's pinned bytes (in use + pending +
// cached): VNN_PINNED_MEMORY_LIMIT when set, else min(1 GiB, RAM / 10).
// Throws ValueError when the variable cannot be read as a size.
uint64_t pinned_limit();
void set_pinned_limit(uint64_t bytes);
// Parses "1073741824", "512M", "1GiB", "64k"...; false when it is none.
bool parse_byte_size(const char* text, uint64_t* out);

}  // namespace vnn::detail
