// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the oneDNN sources of the CPU plugin share (onednn_conv.cpp,
// onednn_pooling.cpp): one engine and stream, scratch memory (Scratch),
// the VNN_ONEDNN switch and the primitive-cache key. Internal to the
// onednn_*.cpp files (openmp_backend.cpp sees onednn_common.hpp only).
#pragma once
#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <new>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "vnn/backend_abi.h"

namespace vnn::openmp_backend::onednn {

// VNN_ONEDNN unset or anything but 0 / off / false (read once).
bool switched_on();

// The CPU engine and its stream; never destroyed (ops may run from atexit paths).
dnnl::engine& engine();
dnnl::stream& stream();

// Scratch memory for one primitive call (its scratchpad, blocked-layout
// temporaries, pooling workspace), held until destroyed, which the caller
// does after the stream wait. From the core's caching allocator where the
// core handed it over (set_core_allocator: memory_stats counts it), else a
// grow-only, 64-byte aligned arena of the calling thread (oneDNN runs only
// on the Kokkos pool's owner thread). Throws std::bad_alloc when the core
// has no memory left (the plugin answers VNN_STATUS_OUT_OF_MEMORY).
class Scratch {
 public:
  explicit Scratch(size_t bytes);
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  char* get() const { return base_; }

 private:
  const vnn_core_allocator* core_ = nullptr;
  char* base_ = nullptr;
  size_t bytes_ = 0;
};

// 64-byte rounding of offsets into a Scratch block.
inline size_t align64(size_t n) { return (n + 63) & ~size_t(63); }

// A primitive-cache key: tag, the op's kind, every operand's dtype, sizes
// and strides, and its ints.
std::string op_key(const vnn_op& op, int64_t tag);

// Built primitives by op_key, bounded: a shape-changing workload must not
// grow it forever, so a full cache starts again. The caller holds mutex()
// while it looks up and while it runs the entry.
template <class Entry, size_t MaxEntries>
class PrimitiveCache {
 public:
  std::mutex& mutex() { return mutex_; }
  template <class Build>
  const Entry& get(const std::string& key, Build&& build) {
    auto it = entries_.find(key);
    if (it == entries_.end()) {
      if (entries_.size() >= MaxEntries) entries_.clear();
      it = entries_.emplace(key, build()).first;
    }
    return it->second;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
};

// The first element of an operand.
inline void* element0(const vnn_tensor_desc& d) { return static_cast<float*>(d.data) + d.offset; }

}  // namespace vnn::openmp_backend::onednn
