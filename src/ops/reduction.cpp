// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reductions and softmax: dims, dtypes and keepdim are settled here once;
// the backend receives the input permuted so that the reduced dims come
// last (VNN_OP_REDUCE) or the softmax dim last (VNN_OP_SOFTMAX).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "amp/autocast.hpp"
#include "autograd/autograd.hpp"
#include "ops/low_precision.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/detail/message.h"
#include "vnn/elementwise.h"
#include "vnn/checked_size.h"
#include "vnn/error.h"
#include "vnn/indexing.h"
#include "vnn/op_names.h"
#include "vnn/reduction.h"

namespace vnn {

namespace {

// The ABI's name table (vnn/op_names.h).
const char* reduce_name(vnn_reduce_fn fn) {
  const char* n = VNN_NAME(vnn_reduce_names, fn);
  return n ? n : "reduce";
}

bool is_arg(vnn_reduce_fn fn) { return fn == VNN_REDUCE_ARGMAX || fn == VNN_REDUCE_ARGMIN; }
bool is_extreme(vnn_reduce_fn fn) { return fn == VNN_REDUCE_MAX || fn == VNN_REDUCE_MIN || is_arg(fn); }

const Tensor& checked(const Tensor& t, const char* op) {
  VNN_CHECK(ValueError, t.defined(), op, ": argument 'input' is an undefined tensor");
  return t;
}

// The dtype the kernel reads (it knows float32/64, int32/64) and the dtype
// the user gets back.
void reduce_dtypes(vnn_reduce_fn fn, DType in, const char* op, DType* compute, DType* result) {
  if (fn == VNN_REDUCE_MEAN && !is_floating(in))
    VNN_THROW(DTypeError, op, "(): could not infer output dtype: input dtype ", name(in),
              " is not floating; convert first, e.g. t.to(vnn::kFloat32)");
  switch (in) {
    case kFloat16:
    case kBFloat16: *compute = kFloat32; *result = is_arg(fn) ? kInt64 : in; return;
    case kUInt8:
    case kInt8:
    case kInt16:
    case kBool:
      if (is_extreme(fn)) {
        *compute = kInt32;
        *result = is_arg(fn) ? kInt64 : in;
      } else {
        *compute = kInt64;
        *result = kInt64;
      }
      return;
    case kInt32:
      *compute = kInt32;
      *result = (fn == VNN_REDUCE_SUM || fn == VNN_REDUCE_PROD || is_arg(fn)) ? kInt64 : kInt32;
      return;
    default: *compute = in; *result = is_arg(fn) ? kInt64 : in; return;
  }
}

// d out / d in for a reduction of the last k dims of `in` into `out`.
// `in` kept with its history and the output through SavedOutput, so the
// formulas are differentiable again under create_graph.
detail::BackwardFn reduce_backward(vnn_reduce_fn fn, const Tensor& in, const detail::SavedOutput& saved_out, int k,
                                   int64_t inner) {
  Shape in_sizes = in.sizes(), kept = saved_out.get().sizes();
  for (int i = 0; i < k; ++i) kept.push_back(1);
  auto spread = [in_sizes, kept](const Tensor& t) { return t.reshape(kept).expand(in_sizes); };
  return [=](const Tensor& g) {
    const Tensor out = saved_out.get();
    Tensor gi;
    switch (fn) {
      case VNN_REDUCE_SUM: gi = spread(g); break;
      case VNN_REDUCE_MEAN: gi = spread(mul(g, 1.0 / double(inner > 0 ? inner : 1))); break;
      case VNN_REDUCE_PROD: gi = div(mul(spread(g), spread(out)), in); break;
      default: {  // MAX / MIN: ties share the gradient evenly
        Tensor hit = eq(in, spread(out)).to(g.dtype());
        std::vector<int64_t> last;
        for (int i = 0; i < k; ++i) last.push_back(in.dim() - 1 - i);
        Tensor count = sum(hit, last, false);
        gi = mul(hit, spread(div(g, count)));
      }
    }
    return std::vector<Tensor>{gi};
  };
}

// Reduces `t` over the dims flagged in `reduced` (all dims when none are).
Tensor reduce(const Tensor& t0, const bool* reduced_in, vnn_reduce_fn fn, bool keepdim) {
  const char* op = reduce_name(fn);
  const Tensor& t = checked(t0, op);
  int nd = t.dim();
  bool reduced[kMaxDims] = {};
  for (int i = 0; i < nd; ++i) reduced[i] = reduced_in[i];
  DType compute, result;
  reduce_dtypes(fn, t.dtype(), op, &compute, &result);

  Shape perm, out_sizes, keep_sizes;
  int64_t inner = 1;
  for (int i = 0; i < nd; ++i)
    if (!reduced[i]) {
      perm.push_back(i);
      out_sizes.push_back(t.sizes()[i]);
      keep_sizes.push_back(t.sizes()[i]);
    }
  int k = 0;
  for (int i = 0; i < nd; ++i)
    if (reduced[i]) {
      perm.push_back(i);
      keep_sizes.push_back(1);
      // Fits for a tensor's own sizes (check_shape); checked all the same.
      VNN_CHECK(ValueError, checked::mul(inner, t.sizes()[i], &inner), op, ": reduced sizes of ", t.sizes(),
                " overflow int64");
      ++k;
    }
  if (keepdim) {  // keep_sizes in the original order
    keep_sizes = t.sizes();
    for (int i = 0; i < nd; ++i)
      if (reduced[i]) keep_sizes[i] = 1;
  }
  if (is_extreme(fn) && inner == 0 && out_sizes.numel() > 0)
    VNN_THROW(IndexError, op, "(): expected a non-empty reduction, but input of shape ", t.sizes(),
              " has size 0 along a reduced dimension; pick a dim whose size is not 0");
  if (is_arg(fn) && k > 1) {  // several dims: reduce over their flattened product
    Tensor p = t.permute(perm).contiguous();
    Shape flat = out_sizes;
    flat.push_back(inner);
    bool last[kMaxDims] = {};
    last[flat.size() - 1] = true;
    Tensor r = reduce(p.view(flat), last, fn, false);
    return keepdim ? r.view(keep_sizes) : r;
  }

  Tensor in = t.permute(perm).to(compute);
  DType kernel_out = result;
  if (result == kFloat16 || result == kBFloat16) kernel_out = kFloat32;
  if ((result == kUInt8 || result == kInt8 || result == kInt16 || result == kBool) && !is_arg(fn))
    kernel_out = kInt32;
  Tensor out = detail::make_empty(t.impl()->ctx(), out_sizes, kernel_out);
  detail::enqueue(VNN_OP_REDUCE, op, {&in}, out, {}, {int64_t(fn), int64_t(k)});
  if (detail::needs_grad({&in}) && is_floating(kernel_out) && !is_arg(fn)) {
    detail::SavedOutput saved_out(out);
    detail::record(op, out, {&in}, reduce_backward(fn, in, saved_out, k, inner), {&in, &out},
                   /*twice_differentiable=*/true);
    saved_out.bind(out);
  }
  if (kernel_out != result) out = out.to(result);
  return keepdim ? out.view(keep_sizes) : out;
}

// Validates `dims` once and flags the reduced dims (all when dims is empty).
void reduced_mask(const Tensor& t, const std::vector<int64_t>& dims, const char* op, bool* reduced) {
  checked(t, op);
  int nd = t.dim();
  if (dims.empty()) {
    for (int i = 0; i < nd; ++i) reduced[i] = true;
  } else {
    for (int64_t d : dims) {
      if (d < -int64_t(kMaxDims) - 1 || d > int64_t(kMaxDims))
        VNN_THROW(IndexError, op, ": dimension ", d, " is out of range for a tensor of ", nd, " dimensions");
      int n = detail::normalize_dim(int(d), nd, op);
      if (nd == 0) continue;  // a 0-dim tensor accepts dim 0 / -1
      VNN_CHECK(ValueError, !reduced[n], op, ": dim ", n, " appears multiple times in the list of dims");
      reduced[n] = true;
    }
  }
}

Tensor reduce_dims(const Tensor& t, const std::vector<int64_t>& dims, vnn_reduce_fn fn, bool keepdim) {
  bool reduced[kMaxDims] = {};
  reduced_mask(t, dims, reduce_name(fn), reduced);
  return reduce(t, reduced, fn, keepdim);
}

Tensor reduce_all(const Tensor& t, vnn_reduce_fn fn) { return reduce_dims(t, {}, fn, false); }

Tensor reduce_one(const Tensor& t, int dim, vnn_reduce_fn fn, bool keepdim) {
  return reduce_dims(t, {int64_t(dim)}, fn, keepdim);
}

// softmax / log_softmax of t along d computed in dtype `compute` (t's own,
// or float32 for 16-bit t on a backend without a 16-bit SOFTMAX).
Tensor softmax_in(const Tensor& t, int d, bool log_out, DType compute, const char* op) {
  const int nd = t.dim();
  Tensor in = t.to(compute);
  Tensor out = detail::make_empty(t.impl()->ctx(), t.sizes(), compute);
  if (out.numel() > 0) {
    Tensor in_v = nd > 0 ? in.transpose(d, nd - 1) : in;
    Tensor out_v = nd > 0 ? out.transpose(d, nd - 1) : out;
    detail::enqueue(VNN_OP_SOFTMAX, op, {&in_v}, out_v, {}, {int64_t(log_out ? 1 : 0)});
  }
  if (detail::needs_grad({&in})) {
    detail::SavedOutput saved_out(out);
    detail::record(op, out, {&in}, [saved_out, d, log_out](const Tensor& g) {
      const Tensor y = saved_out.get();
      Tensor gi = log_out ? sub(g, mul(exp(y), sum(g, d, true))) : mul(y, sub(g, sum(mul(g, y), d, true)));
      return std::vector<Tensor>{gi};
    }, {&out}, /*twice_differentiable=*/true);
    saved_out.bind(out);
  }
  return compute == t.dtype() ? out : out.to(t.dtype());
}

Tensor softmax_impl(const Tensor& t0, int dim, bool log_out) {
  const char* op = log_out ? "log_softmax" : "softmax";
  const Tensor& t = checked(t0, op);
  VNN_CHECK(DTypeError, is_floating(t.dtype()), op, ": expected a floating dtype, got ", name(t.dtype()),
            "; convert first, e.g. t.to(vnn::kFloat32)");
  int d = detail::normalize_dim(dim, t.dim(), op);
  // 16-bit rows: the kernels accumulate in float32 (or wider) either way.
  return detail::native_or_float32(t.impl()->ctx(), t.dtype(), VNN_OP_SOFTMAX,
                                   [&] { return softmax_in(t, d, log_out, t.dtype(), op); },
                                   [&] { return softmax_in(t, d, log_out, kFloat32, op); });
}

}  // namespace

using autocast::detail::OpScope;
using autocast::detail::Policy;

Tensor sum(const Tensor& t) {
  if (OpScope s{Policy::fp32, {&t}}) return sum(s[0]);
  return reduce_all(t, VNN_REDUCE_SUM);
}
Tensor sum(const Tensor& t, const Dims& dims, bool keepdim) {
  if (OpScope s{Policy::fp32, {&t}}) return sum(s[0], dims, keepdim);
  return reduce_dims(t, dims.vec(), VNN_REDUCE_SUM, keepdim);
}
Tensor mean(const Tensor& t) {
  if (OpScope s{Policy::fp32, {&t}}) return mean(s[0]);
  return reduce_all(t, VNN_REDUCE_MEAN);
}
Tensor mean(const Tensor& t, const Dims& dims, bool keepdim) {
  if (OpScope s{Policy::fp32, {&t}}) return mean(s[0], dims, keepdim);
  return reduce_dims(t, dims.vec(), VNN_REDUCE_MEAN, keepdim);
}
Tensor prod(const Tensor& t) { return reduce_all(t, VNN_REDUCE_PROD); }
Tensor prod(const Tensor& t, int dim, bool keepdim) { return reduce_one(t, dim, VNN_REDUCE_PROD, keepdim); }

Tensor amax(const Tensor& t, const Dims& dims, bool keepdim) {
  return reduce_dims(t, dims.vec(), VNN_REDUCE_MAX, keepdim);
}
Tensor amin(const Tensor& t, const Dims& dims, bool keepdim) {
  return reduce_dims(t, dims.vec(), VNN_REDUCE_MIN, keepdim);
}
Tensor max(const Tensor& t) { return reduce_all(t, VNN_REDUCE_MAX); }
Tensor min(const Tensor& t) { return reduce_all(t, VNN_REDUCE_MIN); }
std::tuple<Tensor, Tensor> max(const Tensor& t, int dim, bool keepdim) {
  return {reduce_one(t, dim, VNN_REDUCE_MAX, keepdim), reduce_one(t, dim, VNN_REDUCE_ARGMAX, keepdim)};
}
std::tuple<Tensor, Tensor> min(const Tensor& t, int dim, bool keepdim) {
  return {reduce_one(t, dim, VNN_REDUCE_MIN, keepdim), reduce_one(t, dim, VNN_REDUCE_ARGMIN, keepdim)};
}
Tensor argmax(const Tensor& t) { return reduce_all(t, VNN_REDUCE_ARGMAX); }
Tensor argmax(const Tensor& t, int dim, bool keepdim) { return reduce_one(t, dim, VNN_REDUCE_ARGMAX, keepdim); }
Tensor argmin(const Tensor& t) { return reduce_all(t, VNN_REDUCE_ARGMIN); }
Tensor argmin(const Tensor& t, int dim, bool keepdim) { return reduce_one(t, dim, VNN_REDUCE_ARGMIN, keepdim); }

// ---- reductions composed from the ones above ------------------------------
// Each is a handful of kernels over the input (no extra backend op): the
// memory traffic is 2-3 reads of the input, which is the floor for the
// two-pass var and the max-shifted logsumexp anyway.

namespace {

// The result shape of a reduction over `reduced` and the number of elements
// each output reduces.
Shape reduced_shape(const Tensor& t, const bool* reduced, bool keepdim, int64_t* count) {
  Shape out;
  *count = 1;
  for (int i = 0; i < t.dim(); ++i) {
    if (reduced[i]) *count *= t.sizes()[i];
    if (!reduced[i]) out.push_back(t.sizes()[i]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

// The dtype a floating-only composed reduction computes in: float64 stays,
// everything else (float32 and the storage-only halves) is float32.
DType float_compute(const Tensor& t, const char* op, bool accept_int) {
  if (!is_floating(t.dtype()) && !(accept_int && t.dtype() != kBool))
    VNN_THROW(DTypeError, op, ": expected a floating ", (accept_int ? "or integer " : ""), "dtype, got ",
              name(t.dtype()), "; convert first, e.g. t.to(vnn::kFloat32)");
  return t.dtype() == kFloat64 ? kFloat64 : kFloat32;
}

DType float_result(DType in) { return is_floating(in) ? in : kFloat32; }

Tensor var_impl(const Tensor& t, const std::vector<int64_t>& dims, int64_t correction, bool keepdim,
                bool take_sqrt) {
  const char* op = take_sqrt ? "std" : "var";
  bool reduced[kMaxDims] = {};
  reduced_mask(t, dims, op, reduced);
  DType c = float_compute(t, op, false);
  if (correction < 0) VNN_THROW(ValueError, op, ": correction must be >= 0, got ", correction);
  int64_t n = 0;
  reduced_shape(t, reduced, keepdim, &n);
  // Two passes: the mean first, then the squared deviations from it, so a
  // large common offset does not cancel catastrophically (the textbook
  // sum(x^2) - sum(x)^2 / n loses every digit of a float32 variance of
  // values near 1e4). Sums accumulate in float64 inside the kernel.
  std::vector<int64_t> all_dims;
  for (int i = 0; i < t.dim(); ++i)
    if (reduced[i]) all_dims.push_back(i);
  Tensor x = t.to(c);
  Tensor d = x - mean(x, all_dims, true);
  // n - correction <= 0 gives inf (or nan for a zero sum), as PyTorch does.
  double denom = double(n - correction > 0 ? n - correction : 0);
  Tensor v = sum(d * d, all_dims, keepdim) * (1.0 / denom);
  if (take_sqrt) v = sqrt(v);
  return v.to(t.dtype());
}

Tensor norm_impl(const Tensor& t, double p, const std::vector<int64_t>& dims, bool keepdim) {
  const char* op = "norm";
  bool reduced[kMaxDims] = {};
  reduced_mask(t, dims, op, reduced);
  DType c = float_compute(t, op, false);
  VNN_CHECK(ValueError, !std::isnan(p), "norm: p must not be NaN");
  std::vector<int64_t> all_dims;
  for (int i = 0; i < t.dim(); ++i)
    if (reduced[i]) all_dims.push_back(i);
  int64_t n = 0;
  Shape out_shape = reduced_shape(t, reduced, keepdim, &n);
  Tensor x = t.to(c);
  Tensor r;
  if (std::isinf(p)) {
    // The largest (smallest) magnitude; an empty reduction has norm 0.
    if (n == 0) return zeros(out_shape, TensorOptions(t.device()).with(t.dtype()));
    r = p > 0 ? amax(abs(x), all_dims, keepdim) : amin(abs(x), all_dims, keepdim);
  } else if (p == 0) {
    r = sum(x.to(kBool), all_dims, keepdim).to(c);  // the number of non-zeros
  } else if (p == 1) {
    r = sum(abs(x), all_dims, keepdim);
  } else if (p == 2) {
    r = sqrt(sum(x * x, all_dims, keepdim));
  } else {
    // |x|^p as exp(p log|x|): log 0 = -inf gives exp(-inf) = 0 for p > 0.
    r = exp(log(sum(exp(log(abs(x)) * p), all_dims, keepdim)) * (1.0 / p));
  }
  return r.to(t.dtype());
}

Tensor logsumexp_impl(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim) {
  const char* op = "logsumexp";
  bool reduced[kMaxDims] = {};
  reduced_mask(t, dims, op, reduced);
  DType c = float_compute(t, op, true);
  int64_t n = 0;
  Shape out_shape = reduced_shape(t, reduced, keepdim, &n);
  TensorOptions o = TensorOptions(t.device()).with(c);
  if (n == 0) return full(out_shape, -std::numeric_limits<double>::infinity(), o.with(float_result(t.dtype())));
  std::vector<int64_t> all_dims;
  for (int i = 0; i < t.dim(); ++i)
    if (reduced[i]) all_dims.push_back(i);
  Tensor x = t.to(c);
  // Shift by the row maximum so exp never overflows; an infinite maximum is
  // clamped to the largest finite value so that inf - inf never appears
  // (all -inf rows give -inf, any +inf gives +inf, NaN stays NaN).
  double big = c == kFloat64 ? std::numeric_limits<double>::max() : double(std::numeric_limits<float>::max());
  Tensor m = minimum(maximum(amax(x, all_dims, true), full({}, -big, o)), full({}, big, o));
  Tensor s = sum(exp(x - m), all_dims, keepdim);
  Tensor r = log(s) + m.view(s.sizes());
  return r.to(float_result(t.dtype()));
}

Tensor any_all(const Tensor& t, const std::vector<int64_t>& dims, bool keepdim, bool is_any) {
  const char* op = is_any ? "any" : "all";
  bool reduced[kMaxDims] = {};
  reduced_mask(t, dims, op, reduced);
  int64_t n = 0;
  Shape out_shape = reduced_shape(t, reduced, keepdim, &n);
  // An empty reduction: any() is false, all() is true (max/min would throw).
  if (n == 0) return full(out_shape, is_any ? 0.0 : 1.0, TensorOptions(t.device()).with(kBool));
  std::vector<int64_t> all_dims;
  for (int i = 0; i < t.dim(); ++i)
    if (reduced[i]) all_dims.push_back(i);
  Tensor b = t.to(kBool);  // x != 0; NaN counts as true, like PyTorch
  return is_any ? amax(b, all_dims, keepdim) : amin(b, all_dims, keepdim);
}

}  // namespace

Tensor var(const Tensor& t, const Dims& dims, int64_t correction, bool keepdim) {
  if (OpScope s{Policy::fp32, {&t}}) return var(s[0], dims, correction, keepdim);
  return var_impl(t, dims.vec(), correction, keepdim, false);
}
Tensor std(const Tensor& t, const Dims& dims, int64_t correction, bool keepdim) {
  return var_impl(t, dims.vec(), correction, keepdim, true);
}
Tensor norm(const Tensor& t, double p, const Dims& dims, bool keepdim) { return norm_impl(t, p, dims.vec(), keepdim); }
Tensor norm(const Tensor& t, const std::string& p, const Dims& dims, bool keepdim) {
  VNN_CHECK(ValueError, p == "fro", "norm: p='", p,
            "' is not a known norm; use \"fro\" or a number (1, 2, INFINITY, ...)");
  return norm_impl(t, 2.0, dims.vec(), keepdim);
}
Tensor logsumexp(const Tensor& t, const Dims& dims, bool keepdim) { return logsumexp_impl(t, dims.vec(), keepdim); }
Tensor any(const Tensor& t, const Dims& dims, bool keepdim) { return any_all(t, dims.vec(), keepdim, true); }
Tensor all(const Tensor& t, const Dims& dims, bool keepdim) { return any_all(t, dims.vec(), keepdim, false); }

Tensor softmax(const Tensor& t, int dim) {
  if (OpScope s{Policy::fp32, {&t}}) return softmax(s[0], dim);
  return softmax_impl(t, dim, false);
}
Tensor log_softmax(const Tensor& t, int dim) {
  if (OpScope s{Policy::fp32, {&t}}) return log_softmax(s[0], dim);
  return softmax_impl(t, dim, true);
}

Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  VNN_CHECK(ValueError, a.defined() && b.defined(), "isclose: argument '", (a.defined() ? "other" : "input"),
            "' is an undefined tensor");
  VNN_CHECK(DTypeError, a.dtype() == b.dtype(), "isclose: expected both inputs to have the same dtype, got ",
            a.dtype(), " and ", b.dtype(), "; convert one with .to(dtype)");
  VNN_CHECK(ValueError, rtol >= 0 && atol >= 0, "isclose: rtol (", rtol, ") and atol (", atol,
            ") must be non-negative");
  detail::check_same_device(a, b, "isclose", "other");
  Tensor close = eq(a, b);  // equal values, infinities included
  if (!is_floating(a.dtype()) && a.dtype() != kBool && rtol == 0 && atol == 0) return close;
  if (equal_nan && is_floating(a.dtype())) close = logical_or(close, logical_and(ne(a, a), ne(b, b)));
  // The tolerance in float64 for integers and bools (float16 / bfloat16
  // compute in float32), so that |a - b| never wraps.
  const Tensor x = is_floating(a.dtype()) ? a : a.to(kFloat64);
  const Tensor y = is_floating(b.dtype()) ? b : b.to(kFloat64);
  // As PyTorch: only a finite difference can be within the tolerance (inf
  // against -inf is not close although the tolerance is inf too); NaN: false.
  Tensor diff = abs(sub(x, y));
  Tensor within = logical_and(le(diff, add(mul(abs(y), rtol), atol)), lt(diff, INFINITY));
  return logical_or(close, within);
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  return all(isclose(a, b, rtol, atol, equal_nan)).item() != 0.0;
}

bool equal(const Tensor& a, const Tensor& b) {
  VNN_CHECK(ValueError, a.defined() && b.defined(), "equal: argument '", (a.defined() ? "other" : "input"),
            "' is an undefined tensor");
  detail::check_same_device(a, b, "equal", "other");
  if (a.sizes() != b.sizes()) return false;
  return all(eq(a, b)).item() != 0.0;
}

}  // namespace vnn
