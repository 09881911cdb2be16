// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The scans (cumsum, cumprod, cummax, cummin, logcumsumexp): dims, dtypes
// and autograd are settled here; the backend gets VNN_OP_SCAN with the
// scanned dim moved last as a view (no copy: the kernels take any strides),
// and writes a contiguous result through the same permutation.
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/autograd.hpp"
#include "autograd/elementwise_grad.hpp"
#include "ops/scan_kernel.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/autograd.h"
#include "vnn/detail/message.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/indexing.h"
#include "vnn/op_names.h"
#include "vnn/scan.h"
#include "vnn/shape_ops.h"

namespace vnn {

namespace detail {

namespace {

bool scan_indexed(vnn_scan_fn fn) { return fn == VNN_SCAN_MAX || fn == VNN_SCAN_MIN; }

// The dtype the kernel writes for a result of dtype r (it knows float32,
// float64, int32 and int64).
DType scan_kernel_dtype(DType r, vnn_scan_fn fn) {
  switch (r) {
    case kFloat16:
    case kBFloat16: return kFloat32;
    case kBool:
    case kUInt8:
    case kInt8:
    case kInt16: return scan_indexed(fn) ? kInt32 : kInt64;
    default: return r;
  }
}

}  // namespace

std::pair<Tensor, Tensor> run_scan(const Tensor& t, int d, vnn_scan_fn fn, DType result) {
  const char* op = VNN_NAME(vnn_scan_names, fn);
  autograd::NoGradGuard no_grad;
  Tensor x = t.dim() == 0 ? t.reshape({1}) : t;
  const DType k = scan_kernel_dtype(result, fn);
  // cumsum / cumprod of bool, uint8 and int32 read them as they are and
  // write int64 (one pass instead of a conversion first).
  const DType in_dt = x.dtype();
  const bool widen = (fn == VNN_SCAN_SUM || fn == VNN_SCAN_PROD) && k == kInt64 &&
                     (in_dt == kBool || in_dt == kUInt8 || in_dt == kInt32);
  Tensor in = in_dt == k || widen ? x : x.to(k);
  Tensor out = make_empty(x.impl()->ctx(), x.sizes(), k, op);
  Tensor idx = scan_indexed(fn) ? make_empty(x.impl()->ctx(), x.sizes(), kInt64, op) : Tensor();
  const int last = x.dim() - 1;
  Tensor in_v = in.transpose(d, last), out_v = out.transpose(d, last);
  std::vector<const Tensor*> outputs{&out_v};
  Tensor idx_v;
  if (idx.defined()) {
    idx_v = idx.transpose(d, last);
    outputs.push_back(&idx_v);
  }
  enqueue(VNN_OP_SCAN, op, {&in_v}, outputs, {}, {int64_t(fn)});
  // Positions along d: the gradient's scatter through them needs no read.
  if (idx.defined() && idx.numel() > 0) note_range(idx, 0, x.size(d) - 1);
  if (k != result) out = out.to(result);
  if (t.dim() == 0) {
    out = out.reshape({});
    if (idx.defined()) idx = idx.reshape({});
  }
  return {out, idx};
}

}  // namespace detail

namespace {

const Tensor& scan_checked(const Tensor& t, const char* op) {
  VNN_CHECK(ValueError, t.defined(), op, ": argument 'input' is an undefined tensor");
  return t;
}

int scan_dim(const Tensor& t, int64_t dim, const char* op) {
  const int64_t n = t.dim() == 0 ? 1 : t.dim();
  if (dim < -n || dim >= n)
    VNN_THROW(IndexError, op, ": dimension ", dim, " is out of range for a tensor of ", t.dim(),
              " dimensions (expected in [", -n, ", ", n - 1, "])");
  return t.dim() == 0 ? 0 : detail::normalize_dim(int(dim), t.dim(), op);
}

// sum over j >= i along d, in differentiable ops (a 0-D g is its own).
Tensor reverse_cumsum(const Tensor& g, int d) { return g.dim() == 0 ? g : flip(cumsum(flip(g, d), d), d); }
Tensor reverse_logcumsumexp(const Tensor& g, int d) {
  return g.dim() == 0 ? g : flip(logcumsumexp(flip(g, d), d), d);
}

// PyTorch's cumprod gradient, exact when x holds zeros. Before the first
// zero of a row: sum_{j >= k} g_j out_j / x_k. At the first zero z: out_{z-1}
// times sum_{j >= z} g_j x_{z+1} ... x_j, which is the reverse cumsum of g
// times the cumprod of x with that zero replaced by 1. After it: 0.
Tensor cumprod_backward(const Tensor& g, const Tensor& x, int d) {
  if (x.dim() == 0) return g;
  Tensor zero = eq(x, 0.0);
  Tensor zeros_so_far = cumsum(zero, d);
  Tensor before = eq(zeros_so_far, 0.0), first = logical_and(zero, eq(zeros_so_far, 1.0));
  Tensor head = div(reverse_cumsum(mul(g, cumprod(x, d)), d), where(before, x, 1.0));
  Tensor at_zero = reverse_cumsum(mul(g, cumprod(where(first, 1.0, x), d)), d);
  return where(before, head, where(first, at_zero, 0.0));
}

// d logcumsumexp: exp(x_k) * sum_{j >= k} g_j exp(-out_j), computed in log
// space for the positive and the negative part of g (PyTorch's formula).
Tensor logcumsumexp_backward(const Tensor& g, const Tensor& x, int d) {
  Tensor out = logcumsumexp(x, d);
  const double ninf = -std::numeric_limits<double>::infinity();
  Tensor log_g = log(abs(g));
  Tensor pos = where(gt(g, 0.0), log_g, ninf), neg = where(lt(g, 0.0), log_g, ninf);
  return sub(exp(add(reverse_logcumsumexp(sub(pos, out), d), x)),
             exp(add(reverse_logcumsumexp(sub(neg, out), d), x)));
}

DType cum_result(const Tensor& t, std::optional<DType> dtype) {
  if (dtype) return *dtype;
  return is_floating(t.dtype()) ? t.dtype() : kInt64;
}

// cumsum / cumprod: the input converted to `dtype` first (as PyTorch).
Tensor cum_sum_prod(const Tensor& t0, int64_t dim, std::optional<DType> dtype, vnn_scan_fn fn) {
  const char* op = VNN_NAME(vnn_scan_names, fn);
  const Tensor& t = scan_checked(t0, op);
  const int d = scan_dim(t, dim, op);
  const DType r = cum_result(t, dtype);
  Tensor in = dtype ? t.to(*dtype) : t;
  Tensor out = detail::run_scan(in, d, fn, r).first;
  if (is_floating(r) && detail::needs_grad({&in})) {
    if (fn == VNN_SCAN_SUM)
      detail::record(op, out, {&in}, [d](const Tensor& g) { return std::vector<Tensor>{reverse_cumsum(g, d)}; }, {},
                     /*twice_differentiable=*/true);
    else
      detail::record(op, out, {&in}, [d, in](const Tensor& g) {
        return std::vector<Tensor>{cumprod_backward(g, in, d)};
      }, {&in}, /*twice_differentiable=*/true);
  }
  return out;
}

std::tuple<Tensor, Tensor> cum_extreme(const Tensor& t0, int64_t dim, vnn_scan_fn fn) {
  const char* op = VNN_NAME(vnn_scan_names, fn);
  const Tensor& t = scan_checked(t0, op);
  const int d = scan_dim(t, dim, op);
  auto [values, indices] = detail::run_scan(t, d, fn, t.dtype());
  if (is_floating(t.dtype()) && detail::needs_grad({&t})) {
    const Shape sizes = t.sizes();
    Tensor idx = indices;
    detail::record(op, values, {&t}, [d, idx, sizes](const Tensor& g) {
      Tensor z = zeros(sizes, TensorOptions(g.device()).with(g.dtype()));
      if (sizes.size() == 0) return std::vector<Tensor>{g};
      return std::vector<Tensor>{scatter_add(z, d, idx, g)};
    });
  }
  return {values, indices};
}

Tensor& cum_inplace(Tensor& t, int64_t dim, std::optional<DType> dtype, vnn_scan_fn fn) {
  const char* op = fn == VNN_SCAN_SUM ? "cumsum_" : "cumprod_";
  scan_checked(t, op);
  if (dtype)
    VNN_CHECK(DTypeError, *dtype == t.dtype(), op, ": dtype ", name(*dtype), " must be self's dtype ", name(t.dtype()),
              " in place; use the out-of-place ", VNN_NAME(vnn_scan_names, fn));
  auto compute = [&](const Tensor& old) { return cum_sum_prod(old, dim, std::nullopt, fn).to(old.dtype()); };
  if (detail::needs_grad({&t}) && is_floating(t.dtype())) return detail::inplace_with_grad(t, op, compute);
  Tensor r = compute(t);
  t.copy_(r);
  return t;
}

}  // namespace

Tensor cumsum(const Tensor& t, int64_t dim, std::optional<DType> dtype) {
  return cum_sum_prod(t, dim, dtype, VNN_SCAN_SUM);
}
Tensor& cumsum_(Tensor& t, int64_t dim, std::optional<DType> dtype) { return cum_inplace(t, dim, dtype, VNN_SCAN_SUM); }
Tensor cumprod(const Tensor& t, int64_t dim, std::optional<DType> dtype) {
  return cum_sum_prod(t, dim, dtype, VNN_SCAN_PROD);
}
Tensor& cumprod_(Tensor& t, int64_t dim, std::optional<DType> dtype) {
  return cum_inplace(t, dim, dtype, VNN_SCAN_PROD);
}
std::tuple<Tensor, Tensor> cummax(const Tensor& t, int64_t dim) { return cum_extreme(t, dim, VNN_SCAN_MAX); }
std::tuple<Tensor, Tensor> cummin(const Tensor& t, int64_t dim) { return cum_extreme(t, dim, VNN_SCAN_MIN); }

Tensor logcumsumexp(const Tensor& t0, int64_t dim) {
  const char* op = "logcumsumexp";
  const Tensor& t = scan_checked(t0, op);
  VNN_CHECK(DTypeError, is_floating(t.dtype()), op, ": expected a floating dtype, got ", name(t.dtype()),
            "; convert first, e.g. t.to(vnn::kFloat32)");
  const int d = scan_dim(t, dim, op);
  Tensor out = detail::run_scan(t, d, VNN_SCAN_LOGSUMEXP, t.dtype()).first;
  if (detail::needs_grad({&t}))
    detail::record(op, out, {&t}, [d, t](const Tensor& g) {
      return std::vector<Tensor>{logcumsumexp_backward(g, t, d)};
    }, {&t});
  return out;
}

}  // namespace vnn
