// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The insides of a Tensor, shared by the core's op files.
#pragma once
#include <atomic>
#include <initializer_list>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/device_context.hpp"
#include "vnn/backend_abi.h"
#include "vnn/detail/message.h"
#include "vnn/error.h"
#include "vnn/tensor.h"

namespace vnn::detail {

struct AutogradMeta;

// A block of memory on one device. Cached blocks return to the device's
// caching allocator; pinned host blocks to the backend that pinned them;
// external memory is never freed.
struct Storage {
  enum class Kind { cached, pinned_host, external };
  DeviceContext* ctx = nullptr;      // the device the memory belongs to
  DeviceContext* pinned_by = nullptr;  // Kind::pinned_host: who frees it
  void* handle = nullptr;
  size_t bytes = 0;
  Kind kind = Kind::cached;
  // Bumped by every in-place op; autograd compares it with the version a
  // saved tensor had when it was saved.
  std::atomic<uint64_t> version{0};
  // Bounds of an integer storage's values known on the host, so an index
  // check needs no blocking read of the device (each one drained an
  // OpenCL queue, four times per training step). Set only on a fresh
  // storage, before any other tensor refers to it: by Tensor::to from host
  // memory, and by index_select/gather from a source whose bounds are
  // known. Valid while version == range_version; every view of the storage
  // lies within them. The kernels still check each index (a stale bound
  // can only cost an error message, never an out-of-bounds access).
  uint64_t range_version = UINT64_MAX;
  int64_t range_lo = 0, range_hi = 0;
  ~Storage();
};

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  DType dtype = kFloat32;
  Shape sizes;
  Shape strides;
  int64_t offset = 0;
  std::shared_ptr<AutogradMeta> autograd;  // null until grad is involved

  DeviceContext& ctx() const { return *storage->ctx; }
  int64_t numel() const { return sizes.numel(); }
  bool is_contiguous() const;
};

// Size checks every new tensor goes through (the arithmetic is
// vnn/checked_size.h). `op` names the caller in the message. A shape is
// valid when no size is negative (ValueError) and its element count and
// contiguous strides fit int64 (ValueError), so every product of its sizes
// fits too.
void check_shape(const Shape& sizes, const char* op);
// Bytes of a contiguous tensor of `sizes` and `dtype`; ValueError when the
// shape is invalid or the byte count does not fit int64.
size_t checked_nbytes(const Shape& sizes, DType dtype, const char* op);
Shape contiguous_strides(const Shape& sizes, const char* op = "contiguous_strides");
std::shared_ptr<Storage> allocate_storage(DeviceContext& ctx, size_t bytes);
Tensor make_tensor(std::shared_ptr<Storage> storage, DType dtype, const Shape& sizes,
                   const Shape& strides, int64_t offset);
Tensor make_empty(DeviceContext& ctx, const Shape& sizes, DType dtype, const char* op = "empty");
// Products and sums of sizes an op derives from its arguments (conv/pool
// windows, column buffers): ValueError naming op and what on int64 overflow.
int64_t checked_product(const char* op, std::initializer_list<int64_t> values, const char* what);
int64_t checked_sum(const char* op, std::initializer_list<int64_t> values, const char* what);
// Throws ValueError when n elements of elem_size bytes do not fit int64, and
// OutOfMemory when they are more than the host's physical memory (an
// allocation that can only fail, or with overcommit get the process killed).
void check_host_bytes(int64_t n, size_t elem_size, const char* op);
// A host staging vector of n values for creation ops, its failures typed.
template <class T>
std::vector<T> host_vector(int64_t n, const char* op) {
  check_host_bytes(n, sizeof(T), op);
  try {
    return std::vector<T>(static_cast<size_t>(n));
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
  VNN_THROW(OutOfMemory, op, ": the host staging buffer of ", n, " elements (", n * int64_t(sizeof(T)),
            " bytes) could not be allocated");
}
// A view of t's storage (no autograd: see record_view). ValueError when the
// view's shape is invalid or its extent passes either end of the storage.
Tensor view_of(const Tensor& t, const Shape& sizes, const Shape& strides, int64_t offset,
               const char* op = "view");
vnn_tensor_desc describe(const TensorImpl& t);
// Runs one op on a device; `name` is what errors call it.
void run_op(DeviceContext& ctx, vnn_op& op, const char* name);
// A pointer and count: an op's operands or arguments as an initializer
// list, a vector or an array (valid for the call it is passed to).
template <class T>
struct Span {
  const T* data = nullptr;
  size_t size = 0;
  Span() = default;
  // Set in the body: the list outlives the call it is passed to, which is
  // all a Span promises (a member initializer from begin() draws GCC's
  // -Winit-list-lifetime).
  Span(const std::initializer_list<T>& l) {
    data = l.begin();
    size = l.size();
  }
  Span(const std::vector<T>& v) : data(v.data()), size(v.size()) {}
  Span(const T* p, size_t n) : data(p), size(n) {}
};
// Describes the operands and runs one op on the first output's device
// (nothing when that output is empty). The one place a vnn_op is put
// together: every op passes the profiler's shape hook here.
void enqueue(vnn_op_kind kind, const char* name, Span<const Tensor*> inputs, Span<const Tensor*> outputs,
             Span<double> scalars = {}, Span<int64_t> ints = {});
// The common one-output form.
void enqueue(vnn_op_kind kind, const char* name, std::initializer_list<const Tensor*> inputs, const Tensor& out,
             std::initializer_list<double> scalars = {}, std::initializer_list<int64_t> ints = {});
// Throws DeviceMismatch unless b sits on a's device (PyTorch's wording).
void check_same_device(const Tensor& a, const Tensor& b, const char* op, const char* arg);
// Applies the options that only make sense once a new tensor is filled
// (requires_grad).
Tensor finish_creation(Tensor t, const TensorOptions& opt);
// Makes dst hold src's data (storage, dtype, sizes, strides) while keeping
// its identity and autograd metadata: every handle to dst sees the change.
void set_data(const Tensor& dst, const Tensor& src);
// The device whose backend pins host memory (the first, in ranking order,
// with memory of its own; initialised), or null when there is none.
DeviceContext* pinning_context();
// A new contiguous, uninitialised cpu tensor in a block of pinner's pinned
// host cache (pinned_host_cache.hpp). Safe on any thread.
Tensor pinned_empty(DeviceContext& pinner, const Shape& sizes, DType dtype);
// A host pointer to element 0 of a host-accessible tensor (after a sync).
void* host_pointer(const TensorImpl& t);
// The bounds above: true with *lo <= every element <= *hi when known
// (int32/int64 tensors only).
bool known_range(const Tensor& t, int64_t* lo, int64_t* hi);
// dst (fresh, on a device) holds a copy of host_src's values: their bounds
// are read from host memory (contiguous int32/int64 up to 2^22 elements;
// nothing is recorded otherwise).
void note_range_from_host(const Tensor& dst, const Tensor& host_src);
// The same from n raw host values of dtype dt (from_blob).
void note_host_values(const Tensor& dst, const void* host, DType dt, int64_t n);
// dst (fresh) holds values picked from src: it inherits src's bounds.
void inherit_range(const Tensor& dst, const Tensor& src);
// dst (fresh) holds values a kernel keeps within [lo, hi] (sort positions,
// searchsorted's insertion points): later index checks need no read.
void note_range(const Tensor& dst, int64_t lo, int64_t hi);
int normalize_dim(int dim, int ndim, const char* op);

}  // namespace vnn::detail
