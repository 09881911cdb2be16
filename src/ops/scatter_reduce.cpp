// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// scatter_reduce and index_reduce (vnn/scatter_reduce.h): the combining
// scatter kernels (VNN_OP_SCATTER with a vnn_scatter_mode) for sum, prod,
// amax and amin, a count for mean, and PyTorch's gradient formulas
// (FunctionsManual.cpp's scatter_reduce_backward) in vnn ops.
#include "vnn/scatter_reduce.h"

#include <cmath>
#include <limits>

#include "autograd/elementwise_grad.hpp"
#include "vnn/backend_abi.h"
#include "vnn/creation.h"
#include "vnn/detail/message.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/indexing.h"

namespace vnn {

namespace detail {
// indexing.cpp: scatter's checks, then src combined into self in place by
// `mode` (a vnn_scatter_mode); no autograd.
void scatter_combine(Tensor& self, int dim, const Tensor& index, const Tensor& src, int mode, const char* op);
}  // namespace detail

namespace {

enum class Reduce { sum, prod, mean, amax, amin };

Reduce parse_reduce(const std::string& r, const char* op, bool allow_sum) {
  if (r == "sum" && allow_sum) return Reduce::sum;
  if (r == "prod") return Reduce::prod;
  if (r == "mean") return Reduce::mean;
  if (r == "amax") return Reduce::amax;
  if (r == "amin") return Reduce::amin;
  VNN_THROW(ValueError, op, "(): reduce argument must be ", allow_sum ? "\"sum\", " : "",
            "\"prod\", \"mean\", \"amax\" or \"amin\", got \"", r, "\"");
}

int mode_of(Reduce r) {
  switch (r) {
    case Reduce::prod: return VNN_SCATTER_MUL;
    case Reduce::amax: return VNN_SCATTER_MAX;
    case Reduce::amin: return VNN_SCATTER_MIN;
    default: return VNN_SCATTER_ADD;
  }
}

// The value that leaves an element unchanged under `r`, in dtype t.
double identity_of(Reduce r, DType t) {
  if (r == Reduce::sum || r == Reduce::mean) return 0.0;
  if (r == Reduce::prod) return 1.0;
  const bool high = r == Reduce::amin;
  if (is_floating(t)) return high ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  if (t == kBool) return high ? 1.0 : 0.0;
  if (t == kUInt8) return high ? 255.0 : 0.0;
  const int bits = int(itemsize(t)) * 8;  // the signed integer types
  return high ? std::ldexp(1.0, bits - 1) - 1.0 : -std::ldexp(1.0, bits - 1);
}

Tensor ones_shaped(const Shape& shape, const Tensor& like) {
  return ones(shape, TensorOptions(like.device()).with(like.dtype()));
}

// The forward, without autograd: a copy of self with src combined in.
Tensor combine(const Tensor& self, int dim, const Tensor& index, const Tensor& src, Reduce r, bool include_self,
               const char* op) {
  autograd::NoGradGuard no_grad;
  Tensor out = self.clone();
  if (!include_self)  // the positions src reaches start from the identity
    detail::scatter_combine(out, dim, index, full(index.sizes(), identity_of(r, out.dtype()), out.options()),
                            VNN_SCATTER_SET, op);
  detail::scatter_combine(out, dim, index, src, mode_of(r), op);
  if (r != Reduce::mean) return out;
  Tensor count = include_self ? ones_like(out) : zeros_like(out);
  detail::scatter_combine(count, dim, index, ones_shaped(index.sizes(), count), VNN_SCATTER_ADD, op);
  count = where(eq(count, 0.0), ones_like(count), count);
  return is_floating(out.dtype()) ? div(out, count) : floor_divide(out, count);
}

// src's part that index covers (src may be larger in any dim).
Tensor covered(const Tensor& src, const Tensor& index) {
  Tensor part = src;
  for (int k = 0; k < src.dim(); ++k)
    if (index.size(k) != src.size(k)) part = part.narrow(k, 0, index.size(k));
  return part;
}

// A gradient of index's shape placed into zeros of src's shape.
Tensor to_src_shape(const Tensor& g, const Shape& src_sizes) {
  if (g.sizes() == src_sizes) return g;
  Tensor full_grad = zeros(src_sizes, g.options());
  Tensor window = full_grad;
  for (int k = 0; k < g.dim(); ++k) window = window.narrow(k, 0, g.size(k));
  window.copy_(g);
  return full_grad;
}

// PyTorch's scatter_reduce_backward: gradients of self and src.
std::vector<Tensor> reduce_backward(const Tensor& g, const Tensor& self, const Tensor& src_all, const Tensor& index,
                                    const Tensor& result, int d, Reduce r, bool include_self) {
  const Tensor src = covered(src_all, index);
  Tensor g_self, g_src;
  if (r == Reduce::sum) {
    g_self = g;
    g_src = gather(g, d, index);
  } else if (r == Reduce::mean) {
    Tensor n = include_self ? ones_like(self) : zeros_like(self);
    n = scatter_add(n, d, index, ones_shaped(index.sizes(), n));
    n = where(eq(n, 0.0), ones_like(n), n);
    g_self = div(g, n);
    g_src = gather(g_self, d, index);
  } else if (r == Reduce::prod) {
    // Exclusive products where self or a single src element is 0.
    Tensor masked_self = where(eq(self, 0.0), ones_like(self), self);
    Tensor masked_self_result = combine(masked_self, d, index, src, r, include_self, "scatter_reduce");
    g_self = div(mul(g, masked_self_result), masked_self);
    Tensor src_zero = eq(src, 0.0);
    Tensor zeros_per_slot = gather(scatter_add(zeros_like(self), d, index, src_zero.to(self.dtype())), d, index);
    Tensor single_zero = logical_and(src_zero, eq(zeros_per_slot, 1.0));
    Tensor masked_src = where(single_zero, ones_like(src), src);
    Tensor masked_src_result = combine(self, d, index, masked_src, r, include_self, "scatter_reduce");
    Tensor safe_src = where(src_zero, ones_like(src), src);
    g_src = where(single_zero, gather(mul(g, masked_src_result), d, index),
                  div(gather(mul(g, result), d, index), safe_src));
  } else {  // amax / amin: the elements equal to the result share its gradient
    Tensor self_is = eq(self, result).to(g.dtype());
    Tensor src_is = eq(src, gather(result, d, index)).to(g.dtype());
    Tensor n = scatter_add(self_is, d, index, src_is);  // self counted even without include_self, as PyTorch
    Tensor share = div(g, n);
    g_self = mul(self_is, share);
    g_src = mul(src_is, gather(share, d, index));
  }
  if (!include_self) g_self = scatter(g_self, d, index, zeros(index.sizes(), g_self.options()));
  return {g_self, to_src_shape(g_src, src_all.sizes())};
}

Tensor reduce_impl(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, Reduce r,
                   bool include_self, const char* op) {
  VNN_CHECK(ValueError, self.defined() && index.defined() && src.defined(), op,
            "(): self, index and src must be defined tensors");
  const int d = detail::normalize_dim(int(dim), self.dim(), op);
  Tensor out = combine(self, d, index, src, r, include_self, op);
  if (!detail::needs_grad({&self, &src}) || !is_floating(self.dtype())) return out;
  Tensor idx = index.to(kInt64);
  detail::SavedOutput saved_out(out);
  detail::record(op, out, {&self, &src},
                 [self, src, idx, saved_out, d, r, include_self](const Tensor& g) {
                   return reduce_backward(g, self, src, idx, saved_out.get(), d, r, include_self);
                 },
                 {&self, &src});
  saved_out.bind(out);
  return out;
}

// index_reduce's 1-D index as a scatter index of source's shape.
Tensor spread_index(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const char* op) {
  VNN_CHECK(ValueError, self.defined() && index.defined() && source.defined(), op,
            "(): self, index and source must be defined tensors");
  const int d = detail::normalize_dim(int(dim), self.dim(), op);
  VNN_CHECK(ShapeError, index.dim() <= 1, op, "(): index must be 0-D or 1-D, got shape ", index.sizes());
  VNN_CHECK(ShapeError, source.dim() == self.dim(), op, "(): source of shape ", source.sizes(),
            " must have as many dimensions as self of shape ", self.sizes());
  bool ok = self.dim() == 0 || source.size(d) == index.numel();
  for (int k = 0; ok && k < self.dim(); ++k) ok = k == d || source.size(k) == self.size(k);
  VNN_CHECK(ShapeError, ok, op, "(): source of shape ", source.sizes(), " does not fit self of shape ", self.sizes(),
            " with ", index.numel(), " indices along dimension ", d,
            " (source must equal self except size ", index.numel(), " there)");
  if (self.dim() == 0) return index.reshape({});
  Shape view;
  for (int k = 0; k < self.dim(); ++k) view.push_back(k == d ? index.numel() : 1);
  return index.reshape(view).expand(source.sizes());
}

// torch.scatter's reduce= names, as scatter_reduce's (including self).
std::string scatter_reduce_name(const std::string& reduce) {
  if (reduce == "add") return "sum";
  if (reduce == "multiply") return "prod";
  VNN_THROW(ValueError, "scatter(): reduce argument must be \"add\" or \"multiply\", got \"", reduce,
            "\" (scatter_reduce has sum, prod, mean, amax and amin)");
}

Tensor value_like_index(const Tensor& self, const Tensor& index, double value) {
  return full(index.sizes(), value, self.options());
}

}  // namespace

Tensor scatter(const Tensor& self, int dim, const Tensor& index, double value) {
  VNN_CHECK(ValueError, self.defined() && index.defined(), "scatter(): self and index must be defined tensors");
  return scatter(self, dim, index, value_like_index(self, index, value));
}

Tensor& scatter_(Tensor& self, int dim, const Tensor& index, double value) {
  VNN_CHECK(ValueError, self.defined() && index.defined(), "scatter_(): self and index must be defined tensors");
  return scatter_(self, dim, index, value_like_index(self, index, value));
}

Tensor scatter(const Tensor& self, int dim, const Tensor& index, const Tensor& src, const std::string& reduce) {
  return scatter_reduce(self, dim, index, src, scatter_reduce_name(reduce), true);
}

Tensor scatter(const Tensor& self, int dim, const Tensor& index, double value, const std::string& reduce) {
  VNN_CHECK(ValueError, self.defined() && index.defined(), "scatter(): self and index must be defined tensors");
  return scatter(self, dim, index, value_like_index(self, index, value), reduce);
}

Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce, bool include_self) {
  return reduce_impl(self, dim, index, src, parse_reduce(reduce, "scatter_reduce", true), include_self,
                     "scatter_reduce");
}

Tensor& scatter_reduce_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
                        bool include_self) {
  Reduce r = parse_reduce(reduce, "scatter_reduce_", true);
  return detail::inplace_with_grad(self, "scatter_reduce_", [&](const Tensor& old) {
    return reduce_impl(old, dim, index, src, r, include_self, "scatter_reduce_");
  });
}

Tensor index_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                    const std::string& reduce, bool include_self) {
  Reduce r = parse_reduce(reduce, "index_reduce", false);
  return reduce_impl(self, dim, spread_index(self, dim, index, source, "index_reduce"), source, r, include_self,
                     "index_reduce");
}

Tensor& index_reduce_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const std::string& reduce,
                      bool include_self) {
  Reduce r = parse_reduce(reduce, "index_reduce_", false);
  Tensor spread = spread_index(self, dim, index, source, "index_reduce_");
  return detail::inplace_with_grad(self, "index_reduce_", [&](const Tensor& old) {
    return reduce_impl(old, dim, spread, source, r, include_self, "index_reduce_");
  });
}

}  // namespace vnn
