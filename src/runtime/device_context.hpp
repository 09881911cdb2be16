// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One usable device: its backend table, lazy runtime start-up, default
// queue and caching allocator. Owned by the registry, never destroyed.
#pragma once
#include <atomic>
#include <mutex>
#include <memory>
#include <string>
#include <vector>

#include "runtime/caching_allocator.hpp"
#include "runtime/pinned_host_cache.hpp"
#include "vnn/backend_abi.h"
#include "vnn/device.h"

namespace vnn::detail {

struct DeviceContext {
  DeviceInfo info;
  const vnn_backend* backend = nullptr;
  int32_t plugin_index = 0;  // the device's index inside its plugin
  bool host_accessible = false;
  CachingAllocator allocator;
  // Page-locked host memory this device's backend allocated (pin_memory).
  PinnedHostCache pinned_cache;
  // Whether the backend runs float16/bfloat16 MATMUL itself (cuBLAS):
  // -1 not yet known, 0 no (matmul converts to float32), 1 yes.
  std::atomic<int> native_half_matmul{-1};
  // The same per op kind for the other ops that try 16-bit storage first
  // (softmax, pooling; ops/low_precision.hpp): 0 not yet known, 1 yes, 2 no
  // (0 is what the zero-initialised array starts as).
  std::atomic<int> native_half_op[VNN_OP_COUNT_] = {};
  // Queues of the live vnn::Stream objects of this device (added and
  // removed by src/runtime/stream.cpp): synchronize() waits for each of
  // them too, as torch.cuda.synchronize() waits for every stream.
  std::mutex streams_mutex;
  std::vector<void*> stream_queues;

  // Starts the backend runtime for this device on first use.
  void ensure_initialized() {
    if (!initialized_.load(std::memory_order_acquire)) initialize();
  }
  // Turns a failing vnn_status into the matching typed exception whose text
  // names the op and the device.
  void check(vnn_status s, const char* what) const {
    if (s != VNN_STATUS_OK) throw_status(s, what);
  }
  [[noreturn]] void throw_status(vnn_status s, const char* what) const;

  void synchronize();

 private:
  void initialize();
  // What set_core_allocator hands the plugin: `allocator` behind C callbacks.
  vnn_core_allocator core_allocator_{};
  std::atomic<bool> initialized_{false};
  std::mutex init_mutex_;
};

// Lookup; throws DeviceNotFound listing every available device.
DeviceContext& context(const Device& d);
// The contexts of initialised devices (for synchronize()).
void for_each_initialized(void (*fn)(DeviceContext&));

}  // namespace vnn::detail
