// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A per-device caching allocator on top of a backend's alloc/free.
//
// Freed blocks go to a free list and are handed out again without a backend
// call. Streams: every block is tagged with the stream it was allocated on
// (0 = the device's default queue; src/runtime/stream.cpp numbers the
// others) and a freed block is reused only by an allocation on that same
// stream, as PyTorch's CUDA allocator does. Streams are in-order queues, so
// the next op of the block's stream runs after every earlier user of it on
// that stream, and no other stream can receive it while that work may still
// be queued. When a stream is destroyed its queue is synchronised first and
// its blocks are retagged to the default stream (retire_stream). Work of
// OTHER streams that used a block is the user's to order (as in PyTorch:
// keep the tensor alive until that stream is synchronised).
//
// A memory limit (set_memory_limit / VNN_MEMORY_LIMIT) caps `reserved`, the
// bytes held from the backend, as a device of that size would: an
// allocation that does not fit first gives every cached block back (the
// OOM path of a real device: empty the cache, retry), then throws
// OutOfMemory naming the device, the request, the limit and what is held.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "vnn/device.h"
#include "vnn/memory.h"

namespace vnn::detail {

// The limit VNN_MEMORY_LIMIT ("cpu:0=2G,opencl:0=512M"; a bare backend name
// covers each of its devices, an indexed entry wins) gives `d`: 0 = none.
// Throws ValueError naming the entry when the variable cannot be read.
uint64_t env_memory_limit(const Device& d);

// Listeners told the message of every OutOfMemory an allocation throws, just
// before it is thrown, on the allocating thread: a process group aborts
// there, so that its peers throw instead of waiting on this rank
// (src/distributed). add returns an id for remove.
int add_out_of_memory_listener(std::function<void(const std::string&)> listener);
void remove_out_of_memory_listener(int id);
// Tells the listeners (unless a QuietOutOfMemory is alive on this thread).
void notify_out_of_memory(const std::string& message);
// While alive, this thread's allocation failures are not reported: the
// caller turns them into something it can recover from (a plugin's
// scratch request answered with NULL may take a smaller path).
struct QuietOutOfMemory {
  QuietOutOfMemory();
  ~QuietOutOfMemory();
  QuietOutOfMemory(const QuietOutOfMemory&) = delete;
  QuietOutOfMemory& operator=(const QuietOutOfMemory&) = delete;
};

class CachingAllocator {
 public:
  using AllocFn = std::function<void*(size_t)>;     // throws on failure
  using FreeFn = std::function<void(void*)>;

  void set_backend(AllocFn alloc, FreeFn free) { alloc_ = std::move(alloc); free_ = std::move(free); }
  // The device the blocks live on (for the limit's env entry and messages).
  void set_device(const Device& d) { device_ = d; }

  // Returns a handle for at least `bytes`; `*rounded` receives the block size.
  // `stream` is the id of the stream the block is allocated on (0 = default).
  void* allocate(size_t bytes, size_t* rounded, uint64_t stream = 0);
  // The block goes back to the free list of the stream it was allocated on.
  void release(void* handle, size_t rounded);
  // Called once the stream's queue is synchronised and about to go away:
  // its cached blocks (and blocks still live that are freed later) belong
  // to the default stream from now on.
  void retire_stream(uint64_t stream);
  void empty_cache();
  MemoryStats stats() const;
  void reset_peak();
  // The limit on reserved bytes (0 = none). limit() reads VNN_MEMORY_LIMIT
  // on first use (ValueError when it is bad) unless set_limit came first;
  // set_limit gives the cached blocks back when reserved is over it.
  uint64_t limit();
  void set_limit(uint64_t bytes);

  static size_t round_size(size_t bytes);

 private:
  using Key = std::pair<uint64_t, size_t>;  // (stream, rounded size)
  void resolve_limit_locked();
  // Takes every cached block out of the free lists (the lock held), for
  // freeing once it is dropped; returns them and their bytes.
  std::vector<void*> take_cached_locked(uint64_t* bytes);
  Device device_;
  uint64_t limit_ = 0;
  bool limit_known_ = false;
  AllocFn alloc_;
  FreeFn free_;
  mutable std::mutex mutex_;
  std::multimap<Key, void*> free_blocks_;
  // Live blocks of non-default streams only: the default-stream path (all
  // a program without streams uses) stays a plain map lookup.
  std::unordered_map<void*, uint64_t> stream_of_;
  std::unordered_set<uint64_t> retired_;
  MemoryStats stats_;
};

}  // namespace vnn::detail
