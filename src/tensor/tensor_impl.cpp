// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "tensor/tensor_impl.hpp"

#include <unistd.h>

#include <cstdio>

#include "profiler/hooks.hpp"
#include "runtime/stream_state.hpp"
#include "vnn/checked_size.h"
#include "vnn/detail/message.h"
#include "vnn/error.h"

namespace vnn::detail {

Storage::~Storage() {
  if (!handle) return;
  switch (kind) {
    case Kind::cached: ctx->allocator.release(handle, bytes); break;
    case Kind::pinned_host: pinned_by->pinned_cache.release(*pinned_by, handle, bytes); break;
    case Kind::external: break;
  }
}

bool TensorImpl::is_contiguous() const {
  int64_t expected = 1;
  for (int i = sizes.size() - 1; i >= 0; --i) {
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    if (!checked::mul(expected, sizes[i], &expected)) return false;
  }
  return true;
}

namespace {

std::string gib(int64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%lld bytes, %.3g GiB", static_cast<long long>(bytes), double(bytes) / (1 << 30));
  return buf;
}

}  // namespace

void check_shape(const Shape& sizes, const char* op) {
  for (int d = 0; d < sizes.size(); ++d)
    if (sizes[d] < 0)
      VNN_THROW(ValueError, op, ": size ", sizes[d], " of dimension ", d, " is negative (shape ", sizes.str(),
                "); sizes must be >= 0");
  int64_t n;
  VNN_CHECK(ValueError, checked::numel(sizes.data(), sizes.size(), &n), op, ": shape ", sizes.str(), " has ",
            sizes.approx_numel(), " elements, more than an int64 index can address");
}

Shape contiguous_strides(const Shape& sizes, const char* op) {
  Shape s;
  s.resize(sizes.size());
  if (!checked::contiguous_strides(sizes.data(), sizes.size(), &s[0])) {
    check_shape(sizes, op);  // names a negative size or an element count that overflows
    // An empty shape whose other sizes multiply past int64 ([0, 2^62, 2^62]):
    // its strides could not address it.
    Shape nonzero;
    for (auto d : sizes) nonzero.push_back(d > 0 ? d : 1);
    VNN_THROW(ValueError, op, ": shape ", sizes.str(),
              " has strides that do not fit int64 (its non-zero sizes multiply to ", nonzero.approx_numel(),
              "); use smaller sizes");
  }
  return s;
}

size_t checked_nbytes(const Shape& sizes, DType dtype, const char* op) {
  check_shape(sizes, op);
  int64_t bytes;
  VNN_CHECK(ValueError, checked::bytes(sizes.numel(), int64_t(itemsize(dtype)), &bytes), op, ": shape ", sizes.str(),
            " of ", name(dtype), " has ", sizes.numel(), " elements, whose ", itemsize(dtype),
            "-byte size does not fit int64 (no device can hold it)");
  return size_t(bytes);
}

namespace {
[[noreturn]] void overflow(const char* op, std::initializer_list<int64_t> values, const char* what, const char* sep) {
  std::string list;
  for (int64_t v : values) list += (list.empty() ? "" : sep) + std::to_string(v);
  VNN_THROW(ValueError, op, ": ", what, " (", list, ") overflows int64; use smaller sizes or arguments");
}
}  // namespace

int64_t checked_product(const char* op, std::initializer_list<int64_t> values, const char* what) {
  int64_t p = 1;
  for (int64_t v : values)
    if (!checked::mul(p, v, &p)) overflow(op, values, what, " * ");
  return p;
}

int64_t checked_sum(const char* op, std::initializer_list<int64_t> values, const char* what) {
  int64_t p = 0;
  for (int64_t v : values)
    if (!checked::add(p, v, &p)) overflow(op, values, what, " + ");
  return p;
}

void check_host_bytes(int64_t n, size_t elem_size, const char* op) {
  int64_t bytes;
  if (n < 0 || !checked::bytes(n, int64_t(elem_size), &bytes))
    VNN_THROW(ValueError, op, ": ", n, " elements of ", elem_size, " bytes do not fit int64");
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0 && double(bytes) > double(pages) * double(page))
    VNN_THROW(OutOfMemory, op, ": ", n, " elements need ", gib(bytes), " of host memory, more than this machine's ",
              gib(int64_t(pages) * page));
}

std::shared_ptr<Storage> allocate_storage(DeviceContext& ctx, size_t bytes) {
  // A block larger than the whole device can never be allocated; asking the
  // backend anyway would, on host memory with overcommit, succeed and get
  // the process killed at first touch.
  if (ctx.info.total_memory > 0 && bytes > ctx.info.total_memory)
    VNN_THROW(OutOfMemory, "alloc on ", ctx.info.device.str(), ": ", gib(int64_t(bytes)),
              " is more than the device's total memory (", gib(int64_t(ctx.info.total_memory)), ")");
  auto s = std::make_shared<Storage>();
  s->ctx = &ctx;
  // Tagged with the current stream: reused only on it (caching_allocator.hpp).
  s->handle = ctx.allocator.allocate(bytes, &s->bytes, current_stream_id(ctx));
  return s;
}

Tensor make_tensor(std::shared_ptr<Storage> storage, DType dtype, const Shape& sizes,
                   const Shape& strides, int64_t offset) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(storage);
  impl->dtype = dtype;
  impl->sizes = sizes;
  impl->strides = strides;
  impl->offset = offset;
  return Tensor(std::move(impl));
}

Tensor make_empty(DeviceContext& ctx, const Shape& sizes, DType dtype, const char* op) {
  // Every check before the allocator sees a byte count.
  const size_t bytes = checked_nbytes(sizes, dtype, op);
  Shape strides = contiguous_strides(sizes, op);
  std::shared_ptr<Storage> storage;
  try {
    storage = allocate_storage(ctx, bytes);
  } catch (const OutOfMemory& e) {
    VNN_THROW(OutOfMemory, op, ": cannot allocate a tensor of shape ", sizes.str(), " and dtype ", name(dtype), " (",
              gib(int64_t(bytes)), ") on ", ctx.info.device.str(), ": ", e.what());
  }
  return make_tensor(std::move(storage), dtype, sizes, strides, 0);
}

Tensor view_of(const Tensor& t, const Shape& sizes, const Shape& strides, int64_t offset, const char* op) {
  check_shape(sizes, op);
  const TensorImpl& base = *t.impl();
  const int64_t capacity = int64_t(base.storage->bytes / itemsize(base.dtype));
  int64_t lo, hi;
  bool ok = checked::extent(sizes.data(), strides.data(), sizes.size(), offset, &lo, &hi);
  // An empty view touches nothing, wherever its offset points.
  if (!ok || (hi >= lo && (lo < 0 || hi >= capacity)))
    VNN_THROW(ValueError, op, ": a view of sizes ", sizes.str(), ", strides ", strides.str(), " and offset ", offset,
              (ok ? " reaches elements [" + std::to_string(lo) + ", " + std::to_string(hi) + "]"
                  : std::string(" has an extent that overflows int64")),
              ", outside its storage of ", capacity, " ", name(base.dtype), " elements");
  return make_tensor(base.storage, t.dtype(), sizes, strides, offset);
}

vnn_tensor_desc describe(const TensorImpl& t) {
  vnn_tensor_desc d;
  d.data = t.storage->handle;
  d.offset = t.offset;
  d.dtype = static_cast<int32_t>(t.dtype);
  d.ndim = t.sizes.size();
  for (int i = 0; i < d.ndim; ++i) {
    d.sizes[i] = t.sizes[i];
    d.strides[i] = t.strides[i];
  }
  return d;
}

void run_op(DeviceContext& ctx, vnn_op& op, const char* name) {
  op.struct_size = sizeof(vnn_op);
  ctx.ensure_initialized();
  if (!op.queue) op.queue = current_queue(ctx);  // this thread's current stream (vnn/stream.h)
  // Off: one relaxed load and a branch the predictor always gets right.
  if (profiler::detail::hooks_on()) return profiler::detail::run_op_profiled(ctx, op, name);
  vnn_status s = ctx.backend->run(ctx.plugin_index, &op);
  if (s != VNN_STATUS_OK) ctx.throw_status(s, name);
}

namespace {

// Elementwise kinds address every operand with the same element number, so
// their dims may be rewritten jointly: size-1 dims dropped and neighbours
// merged where every operand is contiguous across them. A [64,32,28,28] +
// [1,32,1,1] add then arrives as 3 dims with a 784-long last one, and a
// contiguous operand set as 1 dim. Element order and storage offsets stay
// the same; operands of differing shapes (a reshaping COPY) are left alone.
bool coalescible(vnn_op_kind kind) {
  return kind == VNN_OP_FILL || kind == VNN_OP_COPY || kind == VNN_OP_BINARY || kind == VNN_OP_UNARY ||
         kind == VNN_OP_WHERE;
}

void coalesce(vnn_tensor_desc* const* d, size_t n) {
  const int32_t nd = d[0]->ndim;
  if (nd == 0) return;
  for (size_t k = 1; k < n; ++k) {
    if (d[k]->ndim != nd) return;
    for (int32_t i = 0; i < nd; ++i)
      if (d[k]->sizes[i] != d[0]->sizes[i]) return;
  }
  int32_t m = 0;  // dims written so far, outermost first
  for (int32_t i = 0; i < nd; ++i) {
    const int64_t size = d[0]->sizes[i];
    if (size == 1) continue;
    bool merge = m > 0;
    int64_t span;
    for (size_t k = 0; merge && k < n; ++k)
      merge = checked::mul(d[k]->strides[i], size, &span) && d[k]->strides[m - 1] == span;
    if (merge) {
      for (size_t k = 0; k < n; ++k) {
        d[k]->sizes[m - 1] *= size;
        d[k]->strides[m - 1] = d[k]->strides[i];
      }
    } else {
      for (size_t k = 0; k < n; ++k) {
        d[k]->sizes[m] = size;
        d[k]->strides[m] = d[k]->strides[i];
      }
      ++m;
    }
  }
  if (m == 0) {  // all sizes 1: one element
    for (size_t k = 0; k < n; ++k) d[k]->sizes[0] = 1, d[k]->strides[0] = 1;
    m = 1;
  }
  for (size_t k = 0; k < n; ++k) d[k]->ndim = m;
}

}  // namespace

void enqueue(vnn_op_kind kind, const char* name, Span<const Tensor*> inputs, Span<const Tensor*> outputs,
             Span<double> scalars, Span<int64_t> ints) {
  VNN_CHECK(ValueError, outputs.size != 0, name, ": an op needs an output");
  if (outputs.data[0]->numel() == 0) return;
  // Inputs are at most 8 (SDPA_BACKWARD); outputs usually few (UNSCALE_CHECK: up to 64).
  constexpr size_t kMaxInputs = 8, kStackOutputs = 4;
  VNN_CHECK(ValueError, inputs.size <= kMaxInputs, name, ": too many operands");
  vnn_tensor_desc in[kMaxInputs];
  for (size_t k = 0; k < inputs.size; ++k) in[k] = describe(*inputs.data[k]->impl());
  vnn_tensor_desc out_stack[kStackOutputs];
  std::vector<vnn_tensor_desc> out_heap;
  vnn_tensor_desc* out = out_stack;
  if (outputs.size > kStackOutputs) {
    out_heap.resize(outputs.size);
    out = out_heap.data();
  }
  for (size_t k = 0; k < outputs.size; ++k) out[k] = describe(*outputs.data[k]->impl());
  if (profiler::detail::hooks_on()) profiler::detail::note_shapes(in, inputs.size);  // before coalescing
  if (outputs.size == 1 && coalescible(kind)) {
    vnn_tensor_desc* all[kMaxInputs + 1] = {out};
    for (size_t k = 0; k < inputs.size; ++k) all[k + 1] = &in[k];
    coalesce(all, inputs.size + 1);
  }
  vnn_op op{};
  op.kind = kind;
  op.num_inputs = int32_t(inputs.size);
  op.num_outputs = int32_t(outputs.size);
  op.num_scalars = int32_t(scalars.size);
  op.num_ints = int32_t(ints.size);
  op.inputs = in;
  op.outputs = out;
  op.scalars = scalars.data;
  op.ints = ints.data;
  run_op(outputs.data[0]->impl()->ctx(), op, name);
}

void enqueue(vnn_op_kind kind, const char* name, std::initializer_list<const Tensor*> inputs, const Tensor& out,
             std::initializer_list<double> scalars, std::initializer_list<int64_t> ints) {
  const Tensor* o = &out;
  enqueue(kind, name, Span<const Tensor*>(inputs), Span<const Tensor*>(&o, 1), Span<double>(scalars),
          Span<int64_t>(ints));
}

void check_same_device(const Tensor& a, const Tensor& b, const char* op, const char* arg) {
  if (a.impl()->storage->ctx == b.impl()->storage->ctx) return;
  VNN_THROW(DeviceMismatch,
            "Expected all tensors to be on the same device, but found at "
            "least two devices, ",
            a.device(), " and ", b.device(), "! (when checking argument ", arg, " in method ", op,
            "); move one with .to(device)");
}

Tensor finish_creation(Tensor t, const TensorOptions& opt) {
  if (opt.requires_grad()) t.requires_grad_(true);
  return t;
}

void set_data(const Tensor& dst, const Tensor& src) {
  TensorImpl& d = *dst.impl();
  const TensorImpl& s = *src.impl();
  d.storage = s.storage;
  d.dtype = s.dtype;
  d.sizes = s.sizes;
  d.strides = s.strides;
  d.offset = s.offset;
}

void* host_pointer(const TensorImpl& t) {
  VNN_CHECK(ValueError, t.ctx().host_accessible, "data(): tensor lives on ", t.ctx().info.device.str(),
            ", whose memory the host cannot read; copy it first with .to(\"cpu\")");
  return static_cast<char*>(t.storage->handle) + t.offset * int64_t(itemsize(t.dtype));
}

bool known_range(const Tensor& t, int64_t* lo, int64_t* hi) {
  if (!t.defined() || (t.dtype() != kInt64 && t.dtype() != kInt32)) return false;
  const Storage& s = *t.impl()->storage;
  if (s.range_version != s.version.load(std::memory_order_acquire)) return false;
  *lo = s.range_lo;
  *hi = s.range_hi;
  return true;
}

namespace {
void set_range(const Tensor& dst, int64_t lo, int64_t hi) {
  Storage& s = *dst.impl()->storage;
  s.range_lo = lo, s.range_hi = hi;
  s.range_version = s.version.load(std::memory_order_acquire);
}

template <class T>
void host_bounds(const T* p, int64_t n, int64_t* lo, int64_t* hi) {
  T l = p[0], h = p[0];
  for (int64_t i = 1; i < n; ++i) l = p[i] < l ? p[i] : l, h = p[i] > h ? p[i] : h;
  *lo = int64_t(l), *hi = int64_t(h);
}
}  // namespace

void note_host_values(const Tensor& dst, const void* host, DType dt, int64_t n) {
  // A scan of at most 32 MB on the host, against a transfer of as many
  // bytes: index-sized tensors (labels, batch orders) pay next to nothing.
  constexpr int64_t kMaxScanned = int64_t(1) << 22;
  if (n == 0 || n > kMaxScanned || (dt != kInt64 && dt != kInt32) || (dst.dtype() != kInt64 && dst.dtype() != kInt32))
    return;
  if (dst.impl()->ctx().host_accessible) return;  // reading it back costs no queue drain
  int64_t lo = 0, hi = 0;
  if (dt == kInt64) host_bounds(static_cast<const int64_t*>(host), n, &lo, &hi);
  else host_bounds(static_cast<const int32_t*>(host), n, &lo, &hi);
  if (dst.dtype() == kInt32 && (lo < INT32_MIN || hi > INT32_MAX)) return;  // narrowed values wrapped
  set_range(dst, lo, hi);
}

void note_range_from_host(const Tensor& dst, const Tensor& host_src) {
  const DType dt = host_src.dtype();
  if ((dt != kInt64 && dt != kInt32) || dst.impl()->ctx().host_accessible) return;
  if (!host_src.impl()->ctx().host_accessible || !host_src.is_contiguous() || host_src.numel() == 0) return;
  host_src.impl()->ctx().synchronize();
  note_host_values(dst, host_pointer(*host_src.impl()), dt, host_src.numel());
}

void inherit_range(const Tensor& dst, const Tensor& src) {
  int64_t lo = 0, hi = 0;
  if (!known_range(src, &lo, &hi) || (dst.dtype() != kInt64 && dst.dtype() != kInt32)) return;
  if (dst.dtype() == kInt32 && (lo < INT32_MIN || hi > INT32_MAX)) return;
  set_range(dst, lo, hi);
}

void note_range(const Tensor& dst, int64_t lo, int64_t hi) {
  if (dst.dtype() != kInt64 && dst.dtype() != kInt32) return;
  set_range(dst, lo, hi);
}

int normalize_dim(int dim, int ndim, const char* op) {
  int n = ndim == 0 ? 1 : ndim;
  if (dim < -n || dim >= n)
    VNN_THROW(IndexError, op, ": dimension ", dim, " is out of range for a tensor of ", ndim,
              " dimensions (expected in [", -n, ", ", n - 1, "])");
  return dim < 0 ? dim + n : dim;
}

}  // namespace vnn::detail
