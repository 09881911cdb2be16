// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Indexing ops: every check (dtypes, ranks, shapes, devices and each index
// value, on the host) happens here once; the backend gets int64 indices
// that are known to be in range (see docs/ops.md, INDEX_SELECT..INDEX_ADD).
#include <algorithm>
#include <cmath>
#include <string>

#include "autograd/elementwise_grad.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/detail/message.h"
#include "vnn/error.h"
#include "vnn/indexing.h"

namespace vnn {

namespace {

void require_defined(const Tensor& t, const char* op, const char* arg) {
  VNN_CHECK(ValueError, t.defined(), op, ": argument '", arg, "' is an undefined tensor");
}

// The index as int64 on data's device, every value checked to lie in
// [0, bound). The copy to the host is the price of never launching a kernel
// with a bad index.
Tensor checked_index(const Tensor& index, const Tensor& data, const char* op, int dim, int64_t bound) {
  require_defined(index, op, "index");
  if (index.dtype() != kInt64 && index.dtype() != kInt32)
    VNN_THROW(DTypeError, op, "(): expected an int64 or int32 index, got ", name(index.dtype()),
              "; convert it with .to(vnn::kInt64)");
  detail::check_same_device(data, index, op, "index");
  Tensor idx = index.to(kInt64);
  if (idx.numel() == 0) return idx;
  // Bounds known on the host (indices that came from host memory) spare
  // the blocking read below; outside them, the read finds the culprit.
  int64_t known_lo = 0, known_hi = 0;
  if (detail::known_range(index, &known_lo, &known_hi) && known_lo >= 0 && known_hi < bound) return idx;
  std::vector<int64_t> v = idx.to_vector<int64_t>();
  auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  if (*lo < 0 || *hi >= bound)
    VNN_THROW(IndexError, op, "(): index ", *lo < 0 ? *lo : *hi, " is out of bounds for dimension ", dim, " with size ",
              bound);
  return idx;
}

void check_src_dtype(const Tensor& self, const Tensor& src, const char* op) {
  VNN_CHECK(DTypeError, src.dtype() == self.dtype(), op,
            "(): expected self and src to have the same dtype, but self is ", name(self.dtype()), " and src is ",
            name(src.dtype()), "; convert src with .to()");
}

// Writing through a broadcast dim would hit one element many times.
void check_writable(const Tensor& self, const char* op) {
  for (int k = 0; k < self.dim(); ++k)
    if (self.strides()[k] == 0 && self.sizes()[k] > 1)
      VNN_THROW(ValueError, op, "(): self of shape ", self.sizes(), " has a broadcast dimension ", k,
                " (stride 0); more than one element refers to one memory location; clone() it first");
}

// The dtype the adding kernels compute in (they know float32/64, int32/64).
DType add_dtype(DType t) {
  switch (t) {
    case kFloat32: case kFloat64: case kInt32: case kInt64: return t;
    case kFloat16: case kBFloat16: return kFloat32;
    default: return kInt64;
  }
}

// 0-D operands take part as shape [1]; callers reshape results back.
Tensor as_1d(const Tensor& t) { return t.dim() == 0 ? t.reshape({1}) : t; }

Tensor run_index_select(const Tensor& t, int d, const Tensor& idx1) {
  Shape shape = t.sizes();
  shape[d] = idx1.numel();
  Tensor out = detail::make_empty(t.impl()->ctx(), shape, t.dtype(), "index_select");
  detail::enqueue(VNN_OP_INDEX_SELECT, "index_select", {&t, &idx1}, out, {}, {int64_t(d)});
  if (detail::needs_grad({&t}) && is_floating(t.dtype())) {
    Shape in_sizes = t.sizes();
    detail::record("index_select", out, {&t}, [in_sizes, d, idx1](const Tensor& g) {
      Tensor z = zeros(in_sizes, TensorOptions(g.device()).with(g.dtype()));
      return std::vector<Tensor>{index_add_(z, d, idx1, g)};
    }, {}, /*twice_differentiable=*/true);
  }
  return out;
}

// The gradient of the source of a scatter: the gathered part of g, placed
// into a zero tensor of src's shape (index may cover only part of src).
Tensor scattered_source_grad(const Tensor& g, int d, const Tensor& idx, const Shape& src_sizes) {
  Tensor part = gather(g, d, idx);
  if (part.sizes() == src_sizes) return part;
  Tensor full = zeros(src_sizes, TensorOptions(g.device()).with(g.dtype()));
  Tensor window = full;
  for (int k = 0; k < part.dim(); ++k) window = window.narrow(k, 0, part.size(k));
  window.copy_(part);
  return full;
}

// self (.|+)= src at idx along d; idx is int64 and in range, shapes agree.
// mode: a vnn_scatter_mode; every mode but SET computes in add_dtype.
void run_scatter_mode(Tensor& self, int d, const Tensor& idx, const Tensor& src, int mode, const char* op) {
  if (idx.numel() == 0) return;
  DType ct = mode != VNN_SCATTER_SET ? add_dtype(self.dtype()) : self.dtype();
  if (ct != self.dtype()) {
    Tensor work = self.to(ct), wsrc = src.to(ct);
    run_scatter_mode(work, d, idx, wsrc, mode, op);
    self.copy_(work);
    return;
  }
  detail::enqueue(VNN_OP_SCATTER, op, {&self, &idx, &src}, self, {}, {int64_t(d), int64_t(mode)});
}

void run_scatter(Tensor& self, int d, const Tensor& idx, const Tensor& src, bool add, const char* op) {
  run_scatter_mode(self, d, idx, src, add ? VNN_SCATTER_ADD : VNN_SCATTER_SET, op);
}

void run_index_add(Tensor& self, int d, const Tensor& idx1, const Tensor& src, double alpha, const char* op) {
  if (idx1.numel() == 0) return;
  DType ct = add_dtype(self.dtype());
  if (ct != self.dtype()) {
    Tensor work = self.to(ct), wsrc = src.to(ct);
    run_index_add(work, d, idx1, wsrc, alpha, op);
    self.copy_(work);
    return;
  }
  detail::enqueue(VNN_OP_INDEX_ADD, op, {&src, &idx1}, self, {alpha}, {int64_t(d)});
}

// scatter's checks: dtypes, devices, ranks, shapes, writability and every
// index value; returns the normalised dim and the checked int64 index.
std::pair<int, Tensor> checked_scatter(const Tensor& self, int dim, const Tensor& index, const Tensor& src,
                                       const char* op) {
  require_defined(self, op, "self");
  require_defined(index, op, "index");
  require_defined(src, op, "src");
  detail::check_same_device(self, src, op, "src");
  check_src_dtype(self, src, op);
  int d = detail::normalize_dim(dim, self.dim(), op);
  if (index.dim() != self.dim() || src.dim() != self.dim())
    VNN_THROW(ShapeError, op, "(): index ", index.sizes(), ", self ", self.sizes(), " and src ", src.sizes(),
              " must have the same number of dimensions");
  for (int k = 0; k < self.dim(); ++k)
    if (index.sizes()[k] > src.sizes()[k] || (k != d && index.sizes()[k] > self.sizes()[k]))
      VNN_THROW(ShapeError, op, "(): index of shape ", index.sizes(), " is larger than ",
                (index.sizes()[k] > src.sizes()[k] ? "src of shape " + src.sizes().str()
                                                   : "self of shape " + self.sizes().str()),
                " at dimension ", k, " (self ", self.sizes(), ", dim ", d, ")");
  check_writable(self, op);
  Tensor s1 = as_1d(self);
  Tensor idx = checked_index(as_1d(index), s1, op, d, s1.sizes()[d]);
  return {d, idx};
}

Tensor& scatter_impl(Tensor& self, int dim, const Tensor& index, const Tensor& src, bool add, const char* op) {
  const std::pair<int, Tensor> checked = checked_scatter(self, dim, index, src, op);
  const int d = checked.first;
  const Tensor idx = checked.second;
  Tensor s1 = as_1d(self);
  if (detail::needs_grad({&self, &src}) && is_floating(self.dtype())) {
    Shape src_sizes = as_1d(src).sizes();
    return detail::inplace_with_grad(self, op, [&](const Tensor& old) {
      Tensor out = as_1d(old).clone();
      {
        autograd::NoGradGuard no_grad;
        run_scatter(out, d, idx, as_1d(src), add, op);
      }
      Tensor src1 = as_1d(src), old1 = as_1d(old);
      detail::record(op, out, {&old1, &src1}, [d, idx, add, src_sizes](const Tensor& g) {
        Tensor g_self = g;
        if (!add) {  // overwritten positions take no gradient back to self
          g_self = g.clone();
          run_scatter(g_self, d, idx, zeros(idx.sizes(), TensorOptions(g.device()).with(g.dtype())), false, "scatter");
        }
        return std::vector<Tensor>{g_self, scattered_source_grad(g, d, idx, src_sizes)};
      });
      return old.dim() == 0 ? out.reshape({}) : out;
    });
  }
  detail::mark_modified(self, op);
  run_scatter(s1, d, idx, as_1d(src), add, op);
  return self;
}

Tensor& index_add_impl(Tensor& self, int dim, const Tensor& index, const Tensor& src, double alpha,
                       const char* op) {
  require_defined(self, op, "self");
  require_defined(src, op, "source");
  detail::check_same_device(self, src, op, "source");
  check_src_dtype(self, src, op);
  int d = detail::normalize_dim(dim, self.dim(), op);
  require_defined(index, op, "index");
  if (index.dim() > 1) VNN_THROW(ShapeError, op, "(): index must be 0-D or 1-D, got shape ", index.sizes());
  Tensor s1 = as_1d(self), src1 = as_1d(src);
  bool ok = src1.dim() == s1.dim() && src1.sizes()[d] == index.numel();
  for (int k = 0; ok && k < s1.dim(); ++k) ok = k == d || src1.sizes()[k] == s1.sizes()[k];
  VNN_CHECK(ShapeError, ok, op, "(): source of shape ", src.sizes(), " does not fit self of shape ", self.sizes(),
            " with ", index.numel(), " indices along dimension ", d, " (source must equal self except size ",
            index.numel(), " there)");
  if (!is_floating(self.dtype()) && alpha != std::floor(alpha))
    VNN_THROW(ValueError, op, "(): for integral self (", name(self.dtype()), "), alpha must be a whole number, got ",
              alpha);
  check_writable(self, op);
  Tensor idx = checked_index(index, s1, op, d, s1.sizes()[d]).reshape({-1});
  if (detail::needs_grad({&self, &src}) && is_floating(self.dtype())) {
    return detail::inplace_with_grad(self, op, [&](const Tensor& old) {
      Tensor old1 = as_1d(old);
      Tensor out = old1.clone();
      {
        autograd::NoGradGuard no_grad;
        run_index_add(out, d, idx, src1, alpha, op);
      }
      detail::record(op, out, {&old1, &src1}, [d, idx, alpha](const Tensor& g) {
        Tensor g_src = run_index_select(g, d, idx);
        return std::vector<Tensor>{g, alpha == 1.0 ? g_src : mul(g_src, alpha)};
      }, {}, /*twice_differentiable=*/true);
      return old.dim() == 0 ? out.reshape({}) : out;
    });
  }
  detail::mark_modified(self, op);
  run_index_add(s1, d, idx, src1, alpha, op);
  return self;
}

}  // namespace

Tensor index_select(const Tensor& t, int dim, const Tensor& index) {
  require_defined(t, "index_select", "self");
  require_defined(index, "index_select", "index");
  if (index.dim() > 1) VNN_THROW(ShapeError, "index_select(): index must be 0-D or 1-D, got shape ", index.sizes());
  VNN_CHECK(IndexError, t.dim() > 0 || index.numel() == 1, "index_select(): index to a 0-D tensor can have only 1 value, got ",
            index.numel(), " (index shape ", index.sizes(), ")");
  Tensor t1 = as_1d(t);
  int d = detail::normalize_dim(dim, t.dim(), "index_select");
  Tensor idx = checked_index(index, t1, "index_select", d, t1.sizes()[d]).reshape({-1});
  Tensor out = run_index_select(t1, d, idx);
  detail::inherit_range(out, t1);  // picked values keep the source's bounds
  return t.dim() == 0 ? out.reshape({}) : out;  // a 0-D self gives a 0-D result, as PyTorch's
}

Tensor gather(const Tensor& t, int dim, const Tensor& index) {
  require_defined(t, "gather", "self");
  require_defined(index, "gather", "index");
  int d = detail::normalize_dim(dim, t.dim(), "gather");
  VNN_CHECK(ShapeError, index.dim() == t.dim(), "gather(): index of shape ", index.sizes(),
            " must have the same number of dimensions as input of shape ", t.sizes());
  for (int k = 0; k < t.dim(); ++k)
    if (k != d && index.sizes()[k] > t.sizes()[k])
      VNN_THROW(ShapeError, "gather(): index of shape ", index.sizes(), " is larger than input of shape ", t.sizes(),
                " at dimension ", k, " (only dimension ", d, " may differ)");
  Tensor t1 = as_1d(t);
  Tensor idx = checked_index(as_1d(index), t1, "gather", d, t1.sizes()[d]);
  Tensor out = detail::make_empty(t.impl()->ctx(), idx.sizes(), t.dtype());
  detail::enqueue(VNN_OP_GATHER, "gather", {&t1, &idx}, out, {}, {int64_t(d)});
  detail::inherit_range(out, t1);
  if (detail::needs_grad({&t1}) && is_floating(t.dtype())) {
    Shape in_sizes = t1.sizes();
    detail::record("gather", out, {&t1}, [in_sizes, d, idx](const Tensor& g) {
      Tensor z = zeros(in_sizes, TensorOptions(g.device()).with(g.dtype()));
      return std::vector<Tensor>{scatter_add_(z, d, idx, g)};
    }, {}, /*twice_differentiable=*/true);
  }
  return t.dim() == 0 ? out.reshape({}) : out;
}

namespace detail {
void scatter_combine(Tensor& self, int dim, const Tensor& index, const Tensor& src, int mode, const char* op) {
  const std::pair<int, Tensor> checked = checked_scatter(self, dim, index, src, op);
  Tensor s1 = as_1d(self);
  detail::mark_modified(self, op);
  run_scatter_mode(s1, checked.first, checked.second, as_1d(src), mode, op);
}
}  // namespace detail

Tensor& scatter_(Tensor& self, int dim, const Tensor& index, const Tensor& src) {
  return scatter_impl(self, dim, index, src, false, "scatter_");
}
Tensor scatter(const Tensor& self, int dim, const Tensor& index, const Tensor& src) {
  require_defined(self, "scatter", "self");
  Tensor out = self.clone();
  scatter_impl(out, dim, index, src, false, "scatter");
  return out;
}
Tensor& scatter_add_(Tensor& self, int dim, const Tensor& index, const Tensor& src) {
  return scatter_impl(self, dim, index, src, true, "scatter_add_");
}
Tensor scatter_add(const Tensor& self, int dim, const Tensor& index, const Tensor& src) {
  require_defined(self, "scatter_add", "self");
  Tensor out = self.clone();
  scatter_impl(out, dim, index, src, true, "scatter_add");
  return out;
}
Tensor& index_add_(Tensor& self, int dim, const Tensor& index, const Tensor& src, double alpha) {
  return index_add_impl(self, dim, index, src, alpha, "index_add_");
}
Tensor index_add(const Tensor& self, int dim, const Tensor& index, const Tensor& src, double alpha) {
  require_defined(self, "index_add", "self");
  Tensor out = self.clone();
  index_add_impl(out, dim, index, src, alpha, "index_add");
  return out;
}

Tensor one_hot(const Tensor& labels, int64_t num_classes) {
  require_defined(labels, "one_hot", "labels");
  if (labels.dtype() != kInt64 && labels.dtype() != kInt32)
    VNN_THROW(DTypeError, "one_hot(): labels must be int64 or int32, got ", name(labels.dtype()));
  if (labels.dim() >= kMaxDims)
    VNN_THROW(ShapeError, "one_hot(): labels of shape ", labels.sizes(), " leave no room for the class dimension");
  if (num_classes < -1)
    VNN_THROW(ValueError, "one_hot(): num_classes must be -1 (infer) or non-negative, got ", num_classes);
  Tensor idx = labels.to(kInt64);
  std::vector<int64_t> v = idx.to_vector<int64_t>();
  if (v.empty() && num_classes == -1)
    VNN_THROW(ValueError, "one_hot(): can not infer the number of classes from an empty tensor; pass num_classes");
  if (!v.empty()) {
    auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    if (*lo < 0) VNN_THROW(IndexError, "one_hot(): class value ", *lo, " is negative");
    if (num_classes == -1) num_classes = *hi + 1;
    if (*hi >= num_classes)
      VNN_THROW(IndexError, "one_hot(): class value ", *hi, " is out of bounds for num_classes ", num_classes);
  }
  Shape shape = labels.sizes();
  shape.push_back(num_classes);
  Tensor out = zeros(shape, TensorOptions(labels.device()).with(kInt64));
  Tensor col = idx.unsqueeze(-1);
  Tensor one = ones({}, TensorOptions(labels.device()).with(kInt64)).expand(col.sizes());
  run_scatter(out, out.dim() - 1, col, one, false, "one_hot");
  return out;
}

Tensor embedding(const Tensor& weight, const Tensor& indices) {
  require_defined(weight, "embedding", "weight");
  VNN_CHECK(ShapeError, weight.dim() == 2,
            "embedding(): weight must be 2-D [num_embeddings, embedding_dim], got shape ", weight.sizes());
  require_defined(indices, "embedding", "indices");
  if (indices.dim() >= kMaxDims)
    VNN_THROW(ShapeError, "embedding(): indices of shape ", indices.sizes(), " leave no room for the embedding dim");
  Tensor idx = checked_index(indices, weight, "embedding", 0, weight.size(0)).reshape({-1});
  Shape shape = indices.sizes();
  shape.push_back(weight.size(1));
  return run_index_select(weight, 0, idx).view(shape);
}

Tensor embedding_backward(const Tensor& grad, const Tensor& indices, int64_t num_weights) {
  const char* op = "embedding_backward";
  require_defined(grad, op, "grad");
  require_defined(indices, op, "indices");
  if (num_weights < 0)
    VNN_THROW(ValueError, "embedding_backward(): num_weights must be non-negative, got ", num_weights);
  bool ok = grad.dim() == indices.dim() + 1;
  for (int k = 0; ok && k < indices.dim(); ++k) ok = grad.sizes()[k] == indices.sizes()[k];
  VNN_CHECK(ShapeError, ok, "embedding_backward(): grad of shape ", grad.sizes(), " must be indices' shape ",
            indices.sizes(), " plus the embedding dim");
  int64_t width = grad.size(-1);
  Tensor out = zeros({num_weights, width}, TensorOptions(grad.device()).with(grad.dtype()));
  Tensor idx = checked_index(indices, out, op, 0, num_weights).reshape({-1});
  run_index_add(out, 0, idx, grad.reshape({idx.numel(), width}), 1.0, op);
  return out;
}

}  // namespace vnn
