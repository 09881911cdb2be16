// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Tensor basics: accessors, creation and views.
#include "vnn/detail/message.h"
#include "vnn/tensor.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <cstring>

#include "autograd/autograd.hpp"
#include "runtime/stream_state.hpp"
#include "tensor/registered_tensor.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/checked_size.h"
#include "vnn/error.h"
#include "vnn/indexing.h"

namespace vnn {

using detail::TensorImpl;

Tensor::Tensor() = default;
Tensor::Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

// ---- module registrations (see registered_tensor.hpp) ---------------------

void Tensor::take_registration(Tensor& other, bool keep_pending) noexcept {
  if (registration_) end_registration();  // this member leaves its former registration
  auto* entry = reinterpret_cast<detail::RegisteredTensor*>(other.registration_ & ~kPendingRegistration);
  other.registration_ = 0;
  registration_ = reinterpret_cast<std::uintptr_t>(entry) | (keep_pending ? kPendingRegistration : 0);
  entry->member_ = this;
}

void Tensor::end_registration() noexcept {
  auto* entry = reinterpret_cast<detail::RegisteredTensor*>(registration_ & ~kPendingRegistration);
  registration_ = 0;
  entry->member_ = nullptr;
  entry->value_.impl_ = impl_;  // the registration keeps the member's last tensor
}

namespace {
const TensorImpl& impl_of(const std::shared_ptr<TensorImpl>& p) {
  VNN_CHECK(ValueError, p, "use of an undefined Tensor (default-constructed); create it first, e.g. vnn::zeros");
  return *p;
}
}  // namespace

const Shape& Tensor::sizes() const { return impl_of(impl_).sizes; }
const Shape& Tensor::strides() const { return impl_of(impl_).strides; }
int Tensor::dim() const { return sizes().size(); }
int64_t Tensor::size(int d) const { return sizes()[detail::normalize_dim(d, dim(), "size")]; }
int64_t Tensor::stride(int d) const { return strides()[detail::normalize_dim(d, dim(), "stride")]; }
int64_t Tensor::numel() const { return sizes().numel(); }
int64_t Tensor::storage_offset() const { return impl_of(impl_).offset; }
DType Tensor::dtype() const { return impl_of(impl_).dtype; }
Device Tensor::device() const { return impl_of(impl_).ctx().info.device; }
bool Tensor::is_contiguous() const { return impl_of(impl_).is_contiguous(); }
bool Tensor::is_pinned() const { return impl_of(impl_).storage->kind == detail::Storage::Kind::pinned_host; }
void* Tensor::raw_data() const { return impl_of(impl_).storage->handle; }

// ---- creation -------------------------------------------------------------

namespace {
// `op` names the public function in size errors ("zeros: shape [...] has ...").
Tensor empty_as(const char* op, const Shape& shape, const TensorOptions& opt) {
  Tensor t = detail::make_empty(detail::context(opt.device()), shape, opt.dtype(), op);
  return detail::finish_creation(opt.pinned_memory() ? t.pin_memory() : t, opt);
}
Tensor full_as(const char* op, const Shape& shape, double value, const TensorOptions& opt) {
  Tensor t = empty_as(op, shape, opt.with_requires_grad(false));
  t.fill_(value);
  return detail::finish_creation(t, opt);
}
}  // namespace

Tensor empty(const Shape& shape, const TensorOptions& opt) { return empty_as("empty", shape, opt); }
Tensor full(const Shape& shape, double value, const TensorOptions& opt) { return full_as("full", shape, value, opt); }
Tensor scalar_tensor(double value, const TensorOptions& opt) { return full_as("scalar_tensor", {}, value, opt); }
Tensor zeros(const Shape& shape, const TensorOptions& opt) { return full_as("zeros", shape, 0.0, opt); }
Tensor ones(const Shape& shape, const TensorOptions& opt) { return full_as("ones", shape, 1.0, opt); }

static TensorOptions options_of(const Tensor& t) { return TensorOptions(t.device()).with(t.dtype()); }
Tensor empty_like(const Tensor& t) { return empty(t.sizes(), options_of(t)); }
Tensor zeros_like(const Tensor& t) { return zeros(t.sizes(), options_of(t)); }
Tensor ones_like(const Tensor& t) { return ones(t.sizes(), options_of(t)); }
Tensor full_like(const Tensor& t, double v) { return full(t.sizes(), v, options_of(t)); }

Tensor from_blob(const void* data, const Shape& shape, DType dtype, Device device) {
  auto& ctx = detail::context(device);
  Tensor t = detail::make_empty(ctx, shape, dtype, "from_blob");
  if (t.nbytes() == 0) return t;
  ctx.ensure_initialized();
  // On the current stream, like every copy: t's block may come from that
  // stream's cache, whose earlier users only that stream is ordered after.
  ctx.check(ctx.backend->copy_to_device(ctx.plugin_index, t.raw_data(), 0, data, t.nbytes(),
                                        detail::current_queue(ctx), 1),
            "from_blob (host to device copy)");
  detail::note_host_values(t, data, dtype, t.numel());
  return t;
}

template <class T>
Tensor from_vector(const std::vector<T>& values, const Shape& shape, Device device) {
  VNN_CHECK(ShapeError, int64_t(values.size()) == shape.numel(), "from_vector: ", values.size(),
            " values cannot fill shape ", shape.str(), " (", shape.numel(), " elements)");
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    return from_blob(bytes.data(), shape, kBool, device);
  } else {
    return from_blob(values.data(), shape, dtype_of<T>::value, device);
  }
}
template Tensor from_vector(const std::vector<float>&, const Shape&, Device);
template Tensor from_vector(const std::vector<double>&, const Shape&, Device);
template Tensor from_vector(const std::vector<int32_t>&, const Shape&, Device);
template Tensor from_vector(const std::vector<int64_t>&, const Shape&, Device);
template Tensor from_vector(const std::vector<uint8_t>&, const Shape&, Device);
template Tensor from_vector(const std::vector<int8_t>&, const Shape&, Device);
template Tensor from_vector(const std::vector<int16_t>&, const Shape&, Device);
template Tensor from_vector(const std::vector<bool>&, const Shape&, Device);

Tensor wrap_external(void* handle, const Shape& shape, DType dtype, Device device) {
  auto s = std::make_shared<detail::Storage>();
  s->ctx = &detail::context(device);
  s->handle = handle;
  s->bytes = detail::checked_nbytes(shape, dtype, "wrap_external");
  s->kind = detail::Storage::Kind::external;
  return detail::make_tensor(std::move(s), dtype, shape, detail::contiguous_strides(shape, "wrap_external"), 0);
}

Tensor arange(double start, double end, double step, const TensorOptions& opt) {
  if (step == 0 || !std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step))
    VNN_THROW(ValueError, "arange: step must be non-zero and bounds finite (start=", start, ", end=", end,
              ", step=", step, ")");
  // The count is checked in double: casting a double past int64's range is
  // undefined (arange(0, 1e300) used to end in std::length_error).
  const double count = std::ceil((end - start) / step);
  if (!(count < 9223372036854775808.0))  // 2^63; also catches inf
    VNN_THROW(ValueError, "arange: [", start, ", ", end, ") in steps of ", step, " has ", count,
              " elements, more than an int64 index can address");
  const int64_t n = count > 0 ? int64_t(count) : 0;
  std::vector<double> v = detail::host_vector<double>(n, "arange");
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = start + double(i) * step;
  // Cast on the host, then one transfer: a device cast of a new length
  // each step (a GPT's positions while it generates) cost a kernel compile
  // per length on PoCL.
  return detail::finish_creation(from_vector(v, {n}).to(opt.dtype()).to(opt.device()), opt);
}

Tensor arange(double end, const TensorOptions& opt) { return arange(0.0, end, 1.0, opt); }

// ---- views ------------------------------------------------------------------

// A view's gradient maps back onto its input: `back` turns d view into
// d input.
static Tensor differentiable_view(Tensor view, const Tensor& in, const char* name,
                                  std::function<Tensor(const Tensor&)> back) {
  detail::record_view(name, view, in, std::move(back));
  return view;
}

namespace detail {
// The gradient of a strided part of an input (narrow, select, slice): g
// placed at positions start, start + step, ... of dimension d of zeros of
// the input's shape. Under create_graph it is an index_add, which records;
// otherwise a copy into the zeros' window, which is cheaper.
Tensor place_along(const Tensor& g, const Shape& in_sizes, int d, int64_t start, int64_t step, bool keep_dim) {
  Tensor full = zeros(in_sizes, TensorOptions(g.device()).with(g.dtype()));
  Tensor part = keep_dim ? g : g.unsqueeze(d);
  const int64_t count = part.size(d);
  if (count == 0) return full;
  if (!autograd::grad_enabled()) {
    full.slice(d, start, start + (count - 1) * step + 1, step).copy_(part);
    return full;
  }
  Tensor positions = arange(double(start), double(start + count * step), double(step),
                            TensorOptions(g.device()).with(kInt64));
  return index_add(full, d, positions, part);
}
}  // namespace detail

static Shape infer_size(const Shape& shape, int64_t numel, const char* op) {
  Shape out = shape;
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) VNN_THROW(ShapeError, op, ": only one dimension can be -1 in ", shape.str());
      infer = i;
    } else if (shape[i] < 0) {
      VNN_THROW(ShapeError, op, ": invalid size ", shape[i], " in ", shape.str());
    } else if (!checked::mul(known, shape[i], &known)) {
      VNN_THROW(ValueError, op, ": shape ", shape.str(), " has ", shape.approx_numel(),
                " elements, more than an int64 index can address (the input has ", numel, ")");
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel % known != 0)
      VNN_THROW(ShapeError, op, ": shape ", shape.str(), " is invalid for input of size ", numel);
    out[infer] = numel / known;
  } else if (known != numel) {
    VNN_THROW(ShapeError, op, ": shape ", shape.str(), " is invalid for input of size ", numel);
  }
  return out;
}

namespace {
// Where a view cannot be made: new dim `new_dim` would span input dims
// `old_dim` and `old_dim + 1`, which are not laid out one after the other.
struct ViewBlock {
  int new_dim = -1, old_dim = -1;
};

// PyTorch's rule (at::detail::computeStride): the strides of a view of
// (sizes, strides) as new_sizes (same numel), or nothing when none exists.
// The input's dims fall into chunks, each contiguous within itself (a dim
// steps over the next one exactly, size-1 dims ignored); a view exists when
// the new dims can be grouped into the same chunks, each group with the same
// numel as its chunk, so no new dim spans two chunks.
std::optional<Shape> view_strides(const Shape& sizes, const Shape& strides, const Shape& new_sizes,
                                  ViewBlock* block) {
  const int old_n = sizes.size(), new_n = new_sizes.size();
  if (old_n == 0) {
    Shape out;
    for (int i = 0; i < new_n; ++i) out.push_back(1);
    return out;
  }
  const int64_t n = sizes.numel();
  if (n == 0 && sizes == new_sizes) return strides;
  Shape out = new_sizes;
  if (n == 0) {  // any strides do; these are the ones of a fresh tensor (size-0 dims counted as 1)
    for (int d = new_n - 1; d >= 0; --d)
      out[d] = d == new_n - 1 ? 1 : std::max<int64_t>(new_sizes[d + 1], 1) * out[d + 1];
    return out;
  }
  int view_d = new_n - 1;
  int64_t chunk_base_stride = strides[old_n - 1], tensor_numel = 1, view_numel = 1;
  for (int tensor_d = old_n - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= sizes[tensor_d];
    int64_t next = 0;  // the stride dim tensor_d - 1 has when it continues this chunk
    bool chunk_ends = tensor_d == 0;
    if (!chunk_ends && sizes[tensor_d - 1] != 1)
      chunk_ends = !checked::mul(tensor_numel, chunk_base_stride, &next) || strides[tensor_d - 1] != next;
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
      if (!checked::mul(view_numel, chunk_base_stride, &out[view_d])) out[view_d] = 0;  // never read: fails below
      view_numel *= new_sizes[view_d];
      --view_d;
    }
    if (view_numel != tensor_numel) {
      if (block) *block = ViewBlock{view_d + 1, tensor_d - 1};
      return std::nullopt;
    }
    if (tensor_d > 0) {
      chunk_base_stride = strides[tensor_d - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}
}  // namespace

Tensor Tensor::view(const Shape& shape) const {
  Shape sizes = infer_size(shape, numel(), "view");
  ViewBlock block;
  std::optional<Shape> strides = view_strides(this->sizes(), this->strides(), sizes, &block);
  if (!strides) {
    const int a = block.old_dim;
    if (a >= 0)
      VNN_THROW(ShapeError, "view: cannot view a tensor of shape ", this->sizes(), " and strides ", this->strides(),
                " as ", sizes, ": dim ", block.new_dim, " of the view (size ", sizes[block.new_dim],
                ") would span dims ", a, " and ", a + 1, " of the input, which are not contiguous with each other (dim ",
                a, " has stride ", this->strides()[a], "); use reshape(), which copies when no view exists, or "
                "contiguous().view()");
    VNN_THROW(ShapeError, "view: cannot view a tensor of shape ", this->sizes(), " and strides ", this->strides(),
              " as ", sizes, "; use reshape(), which copies when no view exists, or contiguous().view()");
  }
  Shape in_sizes = this->sizes();
  return differentiable_view(detail::view_of(*this, sizes, *strides, storage_offset(), "view"), *this, "ViewBackward",
                             [in_sizes](const Tensor& g) { return g.reshape(in_sizes); });
}

Tensor Tensor::reshape(const Shape& shape) const {
  Shape sizes = infer_size(shape, numel(), "reshape");
  if (view_strides(this->sizes(), this->strides(), sizes, nullptr)) return view(sizes);
  return contiguous().view(sizes);  // no view of these strides exists: a copy
}

Tensor Tensor::flatten() const { return reshape({-1}); }

Tensor Tensor::transpose(int d0, int d1) const {
  int n = dim();
  d0 = detail::normalize_dim(d0, n, "transpose");
  d1 = detail::normalize_dim(d1, n, "transpose");
  Shape sz = sizes(), st = strides();
  if (n == 0) return *this;
  std::swap(sz[d0], sz[d1]);
  std::swap(st[d0], st[d1]);
  return differentiable_view(detail::view_of(*this, sz, st, storage_offset()), *this, "TransposeBackward",
                             [d0, d1](const Tensor& g) { return g.transpose(d0, d1); });
}

Tensor Tensor::permute(const Shape& dims) const {
  int n = dim();
  VNN_CHECK(ShapeError, dims.size() == n, "permute: got ", dims.size(), " dims ", dims.str(), " for a tensor of ", n,
            " dimensions");
  Shape sz, st;
  bool seen[kMaxDims] = {};
  for (int i = 0; i < n; ++i) {
    int d = detail::normalize_dim(int(dims[i]), n, "permute");
    VNN_CHECK(ShapeError, !seen[d], "permute: dimension ", d, " repeats in ", dims.str());
    seen[d] = true;
    sz.push_back(sizes()[d]);
    st.push_back(strides()[d]);
  }
  Shape inverse;
  inverse.resize(n);
  for (int i = 0; i < n; ++i) inverse[detail::normalize_dim(int(dims[i]), n, "permute")] = i;
  return differentiable_view(detail::view_of(*this, sz, st, storage_offset()), *this, "PermuteBackward",
                             [inverse](const Tensor& g) { return g.permute(inverse); });
}

Tensor Tensor::expand(const Shape& shape) const {
  int n = shape.size(), m = dim();
  if (n < m)
    VNN_THROW(ShapeError, "expand: target shape ", shape.str(), " has fewer dimensions than tensor shape ", sizes());
  Shape sz, st;
  sz.resize(n);
  st.resize(n);
  for (int i = n - 1; i >= 0; --i) {
    int j = i - (n - m);
    int64_t want = shape[i];
    if (j < 0) {
      if (want < 0) VNN_THROW(ShapeError, "expand: -1 is not allowed for a new leading dimension in ", shape.str());
      sz[i] = want;
      st[i] = 0;
      continue;
    }
    int64_t have = sizes()[j];
    if (want == -1) want = have;
    if (have == want) {
      sz[i] = have;
      st[i] = strides()[j];
    } else if (have == 1) {
      sz[i] = want;
      st[i] = 0;
    } else {
      VNN_THROW(ShapeError, "expand: the expanded size ", want, " must match the existing size ", have,
                " at dimension ", i, " (tensor ", sizes(), ", target ", shape.str(), ")");
    }
  }
  Shape in_sizes = sizes();
  return differentiable_view(detail::view_of(*this, sz, st, storage_offset(), "expand"), *this, "ExpandBackward",
                             [in_sizes](const Tensor& g) { return detail::sum_to(g, in_sizes); });
}

Tensor Tensor::narrow(int d, int64_t start, int64_t length) const {
  d = detail::normalize_dim(d, dim(), "narrow");
  int64_t n = sizes()[d];
  if (start < 0) start += n;
  // length > n - start, not start + length > n: that sum may overflow.
  if (start < 0 || start > n || length < 0 || length > n - start)
    VNN_THROW(IndexError, "narrow: range [", start, ", ", start, " + ", length, ") is out of bounds for dimension ", d,
              " of size ", n);
  Shape sz = sizes();
  sz[d] = length;
  Shape in_sizes = sizes();
  return differentiable_view(detail::view_of(*this, sz, strides(), storage_offset() + start * strides()[d], "narrow"), *this,
                             "NarrowBackward", [in_sizes, d, start](const Tensor& g) {
                               return detail::place_along(g, in_sizes, d, start, 1, true);
                             });
}

Tensor Tensor::select(int d, int64_t index) const {
  d = detail::normalize_dim(d, dim(), "select");
  int64_t n = sizes()[d];
  if (index < -n || index >= n)
    VNN_THROW(IndexError, "select: index ", index, " is out of bounds for dimension ", d, " of size ", n);
  if (index < 0) index += n;
  Shape sz, st;
  for (int i = 0; i < dim(); ++i)
    if (i != d) {
      sz.push_back(sizes()[i]);
      st.push_back(strides()[i]);
    }
  Shape in_sizes = sizes();
  return differentiable_view(detail::view_of(*this, sz, st, storage_offset() + index * strides()[d], "select"), *this,
                             "SelectBackward", [in_sizes, d, index](const Tensor& g) {
                               return detail::place_along(g, in_sizes, d, index, 1, false);
                             });
}

Tensor Tensor::as_strided(const Shape& sizes, const Shape& strides, int64_t offset) const {
  VNN_CHECK(ShapeError, sizes.size() == strides.size(), "as_strided: sizes ", sizes.str(), " and strides ",
            strides.str(), " must have the same number of dimensions");
  if (offset < 0) VNN_THROW(ValueError, "as_strided: storage_offset must be >= 0, got ", offset);
  VNN_CHECK(Unsupported, !requires_grad(),
            "as_strided: not differentiable in vnn; call detach() first, or use view/narrow/select/expand");
  return detail::view_of(*this, sizes, strides, offset, "as_strided");
}

}  // namespace vnn
