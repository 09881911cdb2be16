// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// LibTorch's composite ops (vnn/composite.h), each a few existing ops so
// that every device runs it and autograd follows its parts.
#include "vnn/composite.h"

#include <cmath>
#include <limits>

#include "ops/shape_common.hpp"
#include "vnn/creation.h"
#include "vnn/elementwise.h"
#include "vnn/indexing.h"
#include "vnn/linalg.h"
#include "vnn/products.h"
#include "vnn/reduction.h"
#include "vnn/scan.h"
#include "vnn/shape_ops.h"
#include "vnn/sorting.h"

namespace vnn {

namespace {

// x * s, skipping the pass for s == 1. An integer x stays integer: s is
// truncated to the integer type first, as PyTorch's addmv / baddbmm do with
// their beta and alpha on integer tensors (0.6 acts as 0).
Tensor scaled(const Tensor& x, double s) {
  if (!is_floating(x.dtype()) && x.dtype() != kBool) s = std::trunc(s);
  if (s == 1.0) return x;
  if (!is_floating(x.dtype()) && x.dtype() != kBool)
    return mul(x, scalar_tensor(s, TensorOptions(x.dtype()).device(x.device())));
  return mul(x, s);
}

// beta * self + prod, as PyTorch's addmm family: beta == 0 ignores self
// (NaN and inf in it do not propagate); self broadcasts to prod's shape.
Tensor beta_add(const Tensor& self, const Tensor& prod, double beta, const char* op) {
  detail::require_arg(self, op, "input");
  if (!is_floating(self.dtype()) && self.dtype() != kBool) beta = std::trunc(beta);
  if (beta != 0.0) return add(scaled(self, beta), prod);
  const Shape out = broadcast_shapes({self.sizes(), prod.sizes()});
  return out == prod.sizes() ? prod : prod.expand(out).contiguous();
}

// The largest finite value of a floating dtype.
double dtype_max(DType t) {
  switch (t) {
    case kFloat64: return std::numeric_limits<double>::max();
    case kFloat16: return 65504.0;
    case kBFloat16: return 3.3895313892515355e38;
    default: return double(std::numeric_limits<float>::max());
  }
}

// The dtype a floating-only op computes an integer input in.
Tensor as_floating(const Tensor& t) { return is_floating(t.dtype()) ? t : t.to(kFloat32); }

}  // namespace

// ---- pointwise -----------------------------------------------------------------------

Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, double value) {
  detail::require_arg(self, "addcmul", "input");
  detail::require_arg(t1, "addcmul", "tensor1");
  detail::require_arg(t2, "addcmul", "tensor2");
  return add(self, scaled(mul(t1, t2), value));
}

Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, double value) {
  detail::require_arg(self, "addcdiv", "input");
  detail::require_arg(t1, "addcdiv", "tensor1");
  detail::require_arg(t2, "addcdiv", "tensor2");
  VNN_CHECK(DTypeError, is_floating(t1.dtype()) || is_floating(t2.dtype()),
            "addcdiv: integer division of tensor1 (", name(t1.dtype()), ") by tensor2 (", name(t2.dtype()),
            ") is not supported, as in PyTorch; convert one of them to a floating dtype");
  return add(self, scaled(div(t1, t2), value));
}

Tensor lerp(const Tensor& start, const Tensor& end, double weight) {
  detail::require_arg(start, "lerp", "input");
  detail::require_arg(end, "lerp", "end");
  VNN_CHECK(DTypeError, is_floating(start.dtype()) && start.dtype() == end.dtype(), "lerp: expected start (",
            name(start.dtype()), ") and end (", name(end.dtype()), ") of one floating dtype");
  // PyTorch's two-sided form: exact at weight 0 and 1.
  const Tensor d = sub(end, start);
  if (std::fabs(weight) < 0.5) return add(start, mul(d, weight));
  return sub(end, mul(d, 1.0 - weight));
}

Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight) {
  detail::require_arg(weight, "lerp", "weight");
  VNN_CHECK(DTypeError, is_floating(start.dtype()) && start.dtype() == end.dtype() && weight.dtype() == start.dtype(),
            "lerp: expected start (", name(start.dtype()), "), end (", name(end.dtype()), ") and weight (",
            name(weight.dtype()), ") of one floating dtype");
  const Tensor d = sub(end, start);
  return where(lt(abs(weight), 0.5), add(start, mul(weight, d)), sub(end, mul(d, rsub(weight, 1.0))));
}

Tensor rsub(const Tensor& self, const Tensor& other, double alpha) {
  detail::require_arg(self, "rsub", "input");
  detail::require_arg(other, "rsub", "other");
  return sub(other, self, alpha);
}

Tensor rsub(const Tensor& self, double other, double alpha) {
  detail::require_arg(self, "rsub", "input");
  return rsub(scaled(self, alpha), other);
}

Tensor float_power(const Tensor& self, const Tensor& exponent) {
  detail::require_arg(self, "float_power", "input");
  detail::require_arg(exponent, "float_power", "exponent");
  return pow(self.to(kFloat64), exponent.to(kFloat64));
}

Tensor float_power(const Tensor& self, double exponent) {
  detail::require_arg(self, "float_power", "input");
  return pow(self.to(kFloat64), exponent);
}

Tensor nan_to_num(const Tensor& t, double nan, std::optional<double> posinf, std::optional<double> neginf) {
  detail::require_arg(t, "nan_to_num", "input");
  if (!is_floating(t.dtype())) return t.clone();
  const double hi = posinf.value_or(dtype_max(t.dtype()));
  const double lo = neginf.value_or(-dtype_max(t.dtype()));
  return where(isnan(t), nan, where(isposinf(t), hi, where(isneginf(t), lo, t)));
}

Tensor isposinf(const Tensor& t) {
  detail::require_arg(t, "isposinf", "input");
  if (!is_floating(t.dtype())) return zeros(t.sizes(), TensorOptions(kBool).device(t.device()));
  return eq(t, std::numeric_limits<double>::infinity());
}

Tensor isneginf(const Tensor& t) {
  detail::require_arg(t, "isneginf", "input");
  if (!is_floating(t.dtype())) return zeros(t.sizes(), TensorOptions(kBool).device(t.device()));
  return eq(t, -std::numeric_limits<double>::infinity());
}

Tensor logit(const Tensor& t, std::optional<double> eps) {
  detail::require_arg(t, "logit", "input");
  Tensor x = as_floating(t);
  // PyTorch's clamp order: below eps -> eps first, then above 1 - eps -> 1 - eps
  // (so an eps above 0.5 gives eps where x < eps).
  if (eps) x = where(lt(x, *eps), full_like(x, *eps), where(gt(x, 1.0 - *eps), full_like(x, 1.0 - *eps), x));
  return log(div(x, rsub(x, 1.0)));
}

Tensor isin(const Tensor& elements, const Tensor& test_elements, bool /*assume_unique*/, bool invert) {
  detail::require_arg(elements, "isin", "elements");
  detail::require_arg(test_elements, "isin", "test_elements");
  detail::check_same_device(elements, test_elements, "isin", "test_elements");
  const DType common = promote_types(elements.dtype(), test_elements.dtype());
  Tensor found;
  if (test_elements.numel() == 0) {
    found = zeros(elements.sizes(), TensorOptions(kBool).device(elements.device()));
  } else {
    // One sort of the test set and one binary search per element: (n + m) log m.
    Tensor sorted = std::get<0>(sort(test_elements.detach().reshape({-1}).to(common)));
    Tensor x = elements.detach().to(common);
    Tensor pos = clamp_max(searchsorted(sorted, x.reshape({-1})), double(sorted.numel() - 1));
    found = eq(index_select(sorted, 0, pos).reshape(elements.sizes()), x);
  }
  return invert ? logical_not(found) : found;
}

Tensor isin(const Tensor& elements, double test_element, bool assume_unique, bool invert) {
  detail::require_arg(elements, "isin", "elements");
  return isin(elements, scalar_tensor(test_element, TensorOptions(elements.dtype()).device(elements.device())),
              assume_unique, invert);
}

// ---- products -------------------------------------------------------------------------

Tensor dot(const Tensor& a, const Tensor& b) {
  detail::require_arg(a, "dot", "input");
  detail::require_arg(b, "dot", "tensor");
  VNN_CHECK(ShapeError, a.dim() == 1 && b.dim() == 1 && a.size(0) == b.size(0),
            "dot: expected two 1-D tensors of one size, got shapes ", a.sizes(), " and ", b.sizes());
  VNN_CHECK(DTypeError, a.dtype() == b.dtype(), "dot: expected both vectors to have the same dtype, got ",
            name(a.dtype()), " and ", name(b.dtype()));
  if (!is_floating(a.dtype())) return sum(mul(a, b)).to(a.dtype());  // wraps, as PyTorch's integer dot
  return matmul(a, b);
}

Tensor vdot(const Tensor& a, const Tensor& b) { return dot(a, b); }

Tensor mv(const Tensor& mat, const Tensor& vec) {
  detail::require_arg(mat, "mv", "input");
  detail::require_arg(vec, "mv", "vec");
  VNN_CHECK(ShapeError, mat.dim() == 2 && vec.dim() == 1 && mat.size(1) == vec.size(0),
            "mv: expected a matrix [n, m] and a vector [m], got shapes ", mat.sizes(), " and ", vec.sizes());
  return matmul(mat, vec);
}

Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec, double beta, double alpha) {
  return beta_add(self, scaled(mv(mat, vec), alpha), beta, "addmv");
}

Tensor addr(const Tensor& self, const Tensor& vec1, const Tensor& vec2, double beta, double alpha) {
  detail::require_arg(self, "addr", "input");
  if (self.dtype() == kBool && vec1.dtype() == kBool && vec2.dtype() == kBool) {
    // PyTorch's bool addr: (beta and self) or (alpha and vec1 vec2^T).
    VNN_CHECK(ShapeError, vec1.dim() == 1 && vec2.dim() == 1, "addr: expects two 1-D vectors, got shapes ",
              vec1.sizes(), " and ", vec2.sizes());
    Tensor prod = logical_and(vec1.unsqueeze(1), vec2.unsqueeze(0));
    if (alpha == 0.0) prod = zeros_like(prod);
    return beta == 0.0 ? beta_add(self, prod, 0.0, "addr") : logical_or(self, prod);
  }
  return beta_add(self, scaled(outer(vec1, vec2), alpha), beta, "addr");
}

Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, double beta, double alpha) {
  return beta_add(self, scaled(bmm(batch1, batch2), alpha), beta, "baddbmm");
}

Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, double beta, double alpha) {
  detail::require_arg(batch1, "addbmm", "batch1");
  VNN_CHECK(ShapeError, batch1.dim() == 3, "addbmm: batch1 must be 3-D [b, n, m], got shape ", batch1.sizes());
  Tensor prods = bmm(batch1, batch2);
  // The sum keeps the products' dtype (an integer sum would widen to int64).
  return beta_add(self, scaled(sum(prods, Dims{0}).to(prods.dtype()), alpha), beta, "addbmm");
}

Tensor dist(const Tensor& a, const Tensor& b, double p) {
  detail::require_arg(a, "dist", "input");
  detail::require_arg(b, "dist", "other");
  return norm(sub(a, b), p);
}

// ---- calculus and reshaping sums --------------------------------------------------------

Tensor diff(const Tensor& t, int64_t n, int64_t dim, const Tensor& prepend, const Tensor& append) {
  detail::require_arg(t, "diff", "input");
  VNN_CHECK(ShapeError, t.dim() >= 1, "diff: expected a tensor with at least 1 dim, got shape ", t.sizes());
  VNN_CHECK(ValueError, n >= 0, "diff: order n must be non-negative, got ", n);
  const int d = detail::normalize_dim(int(dim), t.dim(), "diff");
  Tensor x = t;
  if (prepend.defined() || append.defined()) {
    std::vector<Tensor> parts;
    if (prepend.defined()) parts.push_back(prepend);
    parts.push_back(t);
    if (append.defined()) parts.push_back(append);
    x = cat(parts, d);
  }
  for (int64_t k = 0; k < n && x.size(d) > 0; ++k) {
    const int64_t len = x.size(d) - 1;
    Tensor hi = x.narrow(d, 1, len), lo = x.narrow(d, 0, len);
    x = x.dtype() == kBool ? logical_xor(hi, lo) : sub(hi, lo);
  }
  return x;
}

namespace {
// The trapezoid terms dx[i] * (y[i+1] + y[i]) along d (halved by the
// caller after the sum, as PyTorch does: integer y and x stay integer, and
// wrap, until that division); dx broadcasts.
Tensor trapezoid_terms(const Tensor& y, const Tensor& dx, int d) {
  const int64_t len = std::max<int64_t>(y.size(d) - 1, 0);
  return mul(dx, add(y.narrow(d, 1, len), y.narrow(d, 0, len)));
}
// The spacing from sample points x: 1-D x spans dim d of y, else x has y's shape.
Tensor spacing(const Tensor& y, const Tensor& x, int d, const char* op) {
  detail::require_arg(x, op, "x");
  if (x.dim() == 1) {
    VNN_CHECK(ShapeError, x.size(0) == y.size(d), op, ": x of shape ", x.sizes(), " must have y's size ", y.size(d),
              " along dim ", d);
    Shape s(std::vector<int64_t>(size_t(y.dim()), 1));
    s[d] = std::max<int64_t>(x.size(0) - 1, 0);
    return diff(x).reshape(s);
  }
  return diff(x, 1, d);
}
// A scalar spacing dx as the 0-D tensor the terms multiply by.
Tensor scalar_spacing(const Tensor& y, double dx) {
  return scalar_tensor(dx, TensorOptions(as_floating(y).dtype()).device(y.device()));
}
}  // namespace

Tensor trapezoid(const Tensor& y, double dx, int64_t dim) {
  detail::require_arg(y, "trapezoid", "y");
  const int d = detail::normalize_dim(int(dim), y.dim(), "trapezoid");
  if (y.size(d) == 0) return sum(as_floating(y), Dims{int64_t(d)});
  return div(sum(trapezoid_terms(y, scalar_spacing(y, dx), d), Dims{int64_t(d)}), 2.0);
}

Tensor trapezoid(const Tensor& y, const Tensor& x, int64_t dim) {
  detail::require_arg(y, "trapezoid", "y");
  const int d = detail::normalize_dim(int(dim), y.dim(), "trapezoid");
  if (y.size(d) == 0) return sum(as_floating(y), Dims{int64_t(d)});
  return div(sum(trapezoid_terms(y, spacing(y, x, d, "trapezoid"), d), Dims{int64_t(d)}), 2.0);
}

Tensor trapz(const Tensor& y, double dx, int64_t dim) { return trapezoid(y, dx, dim); }
Tensor trapz(const Tensor& y, const Tensor& x, int64_t dim) { return trapezoid(y, x, dim); }

Tensor cumulative_trapezoid(const Tensor& y, double dx, int64_t dim) {
  detail::require_arg(y, "cumulative_trapezoid", "y");
  const int d = detail::normalize_dim(int(dim), y.dim(), "cumulative_trapezoid");
  return div(cumsum(trapezoid_terms(y, scalar_spacing(y, dx), d), d), 2.0);
}

Tensor cumulative_trapezoid(const Tensor& y, const Tensor& x, int64_t dim) {
  detail::require_arg(y, "cumulative_trapezoid", "y");
  const int d = detail::normalize_dim(int(dim), y.dim(), "cumulative_trapezoid");
  return div(cumsum(trapezoid_terms(y, spacing(y, x, d, "cumulative_trapezoid"), d), d), 2.0);
}

Tensor sum_to_size(const Tensor& t, const Shape& size) {
  detail::require_arg(t, "sum_to_size", "input");
  const int lead = t.dim() - int(size.size());
  VNN_CHECK(ShapeError, lead >= 0, "sum_to_size: size ", size, " is not expandable to the input's shape ", t.sizes());
  std::vector<int64_t> dims;
  for (int i = 0; i < t.dim(); ++i) {
    if (i < lead) {
      dims.push_back(i);
      continue;
    }
    const int64_t want = size[size_t(i - lead)];
    VNN_CHECK(ShapeError, want == t.size(i) || want == 1, "sum_to_size: size ", size,
              " is not expandable to the input's shape ", t.sizes());
    if (want == 1 && t.size(i) != 1) dims.push_back(i);
  }
  if (dims.empty()) return t;
  Tensor s = sum(t, Dims(dims), true);
  return lead > 0 ? s.reshape(size) : s;
}

Tensor renorm(const Tensor& t, double p, int64_t dim, double maxnorm) {
  detail::require_arg(t, "renorm", "input");
  VNN_CHECK(ValueError, p > 0, "renorm: p must be positive, got ", p);
  VNN_CHECK(ValueError, maxnorm >= 0, "renorm: maxnorm must be non-negative, got ", maxnorm);
  VNN_CHECK(DTypeError, is_floating(t.dtype()), "renorm: expected a floating input, got ", name(t.dtype()));
  const int d = detail::normalize_dim(int(dim), t.dim(), "renorm");
  std::vector<int64_t> others;
  for (int i = 0; i < t.dim(); ++i)
    if (i != d) others.push_back(i);
  Tensor norms = others.empty() ? abs(t) : norm(t, p, Dims(others), true);
  // PyTorch's factor: maxnorm / (norm + 1e-7) where the norm exceeds maxnorm.
  Tensor factor = where(gt(norms, maxnorm), div(full_like(norms, maxnorm), add(norms, 1e-7)), ones_like(norms));
  return mul(t, factor);
}

Tensor logspace(double start, double end, int64_t steps, double base, const TensorOptions& opt) {
  Tensor exps = linspace(start, end, steps, TensorOptions(kFloat64).device(opt.device()));
  Tensor out = pow(full_like(exps, base), exps).to(opt.dtype_or(kFloat32));
  return opt.requires_grad() ? out.requires_grad_(true) : out;
}

}  // namespace vnn
