// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The oneDNN runtime the plugin's oneDNN sources share (onednn_runtime.hpp),
// and the dispatch from HostOps to them (onednn_common.hpp).
#include "openmp/onednn_runtime.hpp"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "openmp/onednn_common.hpp"

namespace vnn::openmp_backend::onednn {
namespace {

struct Runtime {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
};
Runtime& runtime() {
  static Runtime* r = new Runtime();  // never destroyed: ops may run from atexit paths
  return *r;
}

class Arena {
 public:
  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena() { std::free(base_); }
  char* get(size_t bytes) {
    if (bytes > cap_ || !base_) {
      size_t want = (bytes + 4095) & ~size_t(4095);
      if (want == 0) want = 4096;
      void* p = std::aligned_alloc(64, want);
      if (!p) throw std::bad_alloc();
      std::free(base_);
      base_ = static_cast<char*>(p);
      cap_ = want;
    }
    return base_;
  }

 private:
  char* base_ = nullptr;
  size_t cap_ = 0;
};

}  // namespace

bool switched_on() {
  static const bool on = [] {
    const char* v = std::getenv("VNN_ONEDNN");
    return !(v && (std::strcmp(v, "0") == 0 || std::strcmp(v, "off") == 0 || std::strcmp(v, "false") == 0));
  }();
  return on;
}

dnnl::engine& engine() { return runtime().eng; }
dnnl::stream& stream() { return runtime().strm; }

namespace {
std::atomic<const vnn_core_allocator*> core_allocator{nullptr};
}  // namespace

void set_core_allocator(const vnn_core_allocator* a) {
  // A table too short for alloc / free (a future core shrinking it would be
  // a bug) is not used.
  const bool usable = a && a->struct_size >= offsetof(vnn_core_allocator, free) + sizeof(a->free) && a->alloc &&
                      a->free;
  core_allocator.store(usable ? a : nullptr, std::memory_order_release);
}

Scratch::Scratch(size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;  // nothing to hold (oneDNN then gets a null pointer for empty descriptors)
  core_ = core_allocator.load(std::memory_order_acquire);
  if (core_) {
    // The CPU plugin's block handles are host pointers (plugin.hpp's alloc).
    base_ = static_cast<char*>(core_->alloc(core_->ctx, bytes));
    if (!base_) throw std::bad_alloc();
    return;
  }
  thread_local Arena a;
  base_ = a.get(bytes);
}

Scratch::~Scratch() {
  if (core_ && base_) core_->free(core_->ctx, base_, bytes_);
}

std::string op_key(const vnn_op& op, int64_t tag) {
  std::vector<int64_t> k{tag, op.kind, op.num_inputs, op.num_outputs};
  auto add = [&](const vnn_tensor_desc& d) {
    k.push_back(d.dtype);
    k.push_back(d.ndim);
    k.insert(k.end(), d.sizes, d.sizes + d.ndim);
    k.insert(k.end(), d.strides, d.strides + d.ndim);
  };
  for (int i = 0; i < op.num_inputs; ++i) add(op.inputs[i]);
  for (int i = 0; i < op.num_outputs; ++i) add(op.outputs[i]);
  k.insert(k.end(), op.ints, op.ints + op.num_ints);
  return std::string(reinterpret_cast<const char*>(k.data()), k.size() * sizeof(int64_t));
}

bool wants(int32_t kind) {
  return kind == VNN_OP_CONV2D || kind == VNN_OP_CONV2D_BACKWARD_DATA || kind == VNN_OP_CONV2D_BACKWARD_WEIGHT ||
         kind == VNN_OP_POOL2D || kind == VNN_OP_POOL2D_BACKWARD;
}

Outcome run(const vnn_op& op, std::string* why) {
  if (op.kind == VNN_OP_POOL2D || op.kind == VNN_OP_POOL2D_BACKWARD) return run_pool(op);
  return run_conv(op, why);
}

}  // namespace vnn::openmp_backend::onednn
