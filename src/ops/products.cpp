// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Tensor products and the statistics built on them (vnn/products.h):
// broadcast mul, sums and matmul, so every device runs them and autograd
// follows their parts. einsum is in einsum.cpp.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/shape_common.hpp"
#include "vnn/elementwise.h"
#include "vnn/indexing.h"
#include "vnn/linalg.h"
#include "vnn/products.h"
#include "vnn/reduction.h"
#include "vnn/shape_ops.h"

namespace vnn {

Tensor outer(const Tensor& a, const Tensor& b) {
  detail::require_arg(a, "outer", "input");
  detail::require_arg(b, "outer", "vec2");
  VNN_CHECK(ShapeError, a.dim() == 1 && b.dim() == 1, "outer: expects two 1-D vectors, got shapes ", a.sizes(),
            " and ", b.sizes());
  // The broadcast mul writes each output element once.
  return mul(a.unsqueeze(1), b.unsqueeze(0));
}

Tensor ger(const Tensor& a, const Tensor& b) { return outer(a, b); }

Tensor tensordot(const Tensor& a, const Tensor& b, const std::vector<int64_t>& dims_a,
                 const std::vector<int64_t>& dims_b) {
  detail::require_arg(a, "tensordot", "a");
  detail::require_arg(b, "tensordot", "b");
  VNN_CHECK(ValueError, dims_a.size() == dims_b.size(), "tensordot: both dim lists should have the same length, got ",
            Shape(dims_a).str(), " and ", Shape(dims_b).str());
  detail::check_same_device(a, b, "tensordot", "b");
  std::vector<int> da = detail::wrap_unique_dims(dims_a, a.dim(), "tensordot");
  std::vector<int> db = detail::wrap_unique_dims(dims_b, b.dim(), "tensordot");
  DType dt = promote_types(a.dtype(), b.dtype()), work = detail::product_dtype(dt);
  Tensor x = a.to(work), y = b.to(work);
  int64_t k = 1;
  for (size_t i = 0; i < da.size(); ++i) {
    int64_t sa = a.size(da[i]), sb = b.size(db[i]);
    // A size-1 dim against a longer one broadcasts: sum the longer one first, as PyTorch.
    if (sb == 1 && sa != 1) {
      x = sum(x, da[i], true);
    } else if (sa == 1 && sb != 1) {
      y = sum(y, db[i], true);
    } else {
      VNN_CHECK(ShapeError, sa == sb, "tensordot: contracted dimensions need to match, but a ", a.sizes(),
                " has size ", sa, " in dim ", da[i], " and b ", b.sizes(), " has size ", sb, " in dim ", db[i]);
      k *= sa;
    }
  }
  std::vector<int64_t> perm_a, perm_b;
  Shape out;
  int64_t fa = 1, fb = 1;
  for (int i = 0; i < a.dim(); ++i)
    if (std::find(da.begin(), da.end(), i) == da.end()) {
      perm_a.push_back(i);
      out.push_back(a.size(i));
      fa *= a.size(i);
    }
  for (int d : da) perm_a.push_back(d);
  for (int d : db) perm_b.push_back(d);
  for (int i = 0; i < b.dim(); ++i)
    if (std::find(db.begin(), db.end(), i) == db.end()) {
      perm_b.push_back(i);
      out.push_back(b.size(i));
      fb *= b.size(i);
    }
  if (k == 0) return zeros(out, TensorOptions(a.device()).with(dt));  // an empty sum
  // One matmul of the permuted operands: the reshape copies only operands
  // whose contracted dims are not already innermost (a) / outermost (b).
  Tensor ma = x.permute(Shape(perm_a)).reshape({fa, k});
  Tensor mb = y.permute(Shape(perm_b)).reshape({k, fb});
  return mm(ma, mb).reshape(out).to(dt);
}

Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims) {
  detail::require_arg(a, "tensordot", "a");
  detail::require_arg(b, "tensordot", "b");
  if (dims < 0) VNN_THROW(ValueError, "tensordot: expects dims >= 0, got ", dims);
  VNN_CHECK(ShapeError, dims <= a.dim() && dims <= b.dim(), "tensordot: expects dims <= the dims of a ", a.sizes(),
            " and of b ", b.sizes(), ", got ", dims);
  std::vector<int64_t> da, db;
  for (int64_t i = 0; i < dims; ++i) {
    da.push_back(a.dim() - dims + i);
    db.push_back(i);
  }
  return tensordot(a, b, da, db);
}

Tensor inner(const Tensor& a, const Tensor& b) {
  detail::require_arg(a, "inner", "input");
  detail::require_arg(b, "inner", "other");
  if (a.dim() == 0 || b.dim() == 0) return mul(a, b);
  VNN_CHECK(ShapeError, a.size(-1) == b.size(-1), "inner: the last dims of input ", a.sizes(), " and other ",
            b.sizes(), " must match");
  return tensordot(a, b, {-1}, {-1});
}

Tensor kron(const Tensor& a, const Tensor& b) {
  detail::require_arg(a, "kron", "input");
  detail::require_arg(b, "kron", "other");
  int n = std::max(a.dim(), b.dim());
  VNN_CHECK(ShapeError, 2 * n <= kMaxDims, "kron: operands of shapes ", a.sizes(), " and ", b.sizes(),
            " interleave into ", 2 * n, " dims, more than the ", kMaxDims, " a tensor can have (", kMaxDims / 2,
            " dims per operand at most)");
  Shape va, vb, out;
  for (int i = 0; i < n; ++i) {
    int64_t sa = i < n - a.dim() ? 1 : a.size(i - (n - a.dim()));
    int64_t sb = i < n - b.dim() ? 1 : b.size(i - (n - b.dim()));
    va.push_back(sa);
    va.push_back(1);
    vb.push_back(1);
    vb.push_back(sb);
    out.push_back(sa * sb);
  }
  // a [a0, 1, a1, 1, ...] * b [1, b0, 1, b1, ...]: the broadcast mul writes
  // the interleaved result once; its reshape is a view.
  return mul(a.reshape(va), b.reshape(vb)).reshape(out);
}

Tensor linalg_cross(const Tensor& a, const Tensor& b, int64_t dim) {
  detail::require_arg(a, "linalg_cross", "input");
  detail::require_arg(b, "linalg_cross", "other");
  VNN_CHECK(ShapeError, a.dim() == b.dim(), "linalg_cross: inputs must have the same number of dimensions, got ",
            a.sizes(), " and ", b.sizes());
  detail::check_same_device(a, b, "linalg_cross", "other");
  int d = detail::wrap_dim(dim, a.dim(), "linalg_cross");
  VNN_CHECK(ShapeError, a.dim() > 0 && a.size(d) == 3 && b.size(d) == 3, "linalg_cross: dimension ", dim,
            " must have length 3 in both inputs, got shapes ", a.sizes(), " and ", b.sizes());
  Shape common = broadcast_shapes(a.sizes(), b.sizes(), "linalg_cross");
  DType dt = promote_types(a.dtype(), b.dtype());
  Tensor x = a.to(dt).expand(common), y = b.to(dt).expand(common);
  // c_i = x_{i+1} y_{i+2} - x_{i+2} y_{i+1}: two index_selects rotate the
  // components, then three elementwise passes over the broadcast shape.
  Tensor next = detail::index_on({1, 2, 0}, a.device()), after = detail::index_on({2, 0, 1}, a.device());
  return sub(mul(index_select(x, d, next), index_select(y, d, after)),
             mul(index_select(x, d, after), index_select(y, d, next)));
}

Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim) {
  detail::require_arg(a, "cross", "input");
  if (!dim) {
    for (int i = 0; i < a.dim() && !dim; ++i)
      if (a.size(i) == 3) dim = i;
    VNN_CHECK(ShapeError, dim.has_value(), "cross: no dimension of size 3 in input of shape ", a.sizes(),
              "; pass dim");
  }
  return linalg_cross(a, b, *dim);
}

Tensor cdist(const Tensor& x1, const Tensor& x2, double p, std::optional<int64_t> compute_mode) {
  detail::require_arg(x1, "cdist", "x1");
  detail::require_arg(x2, "cdist", "x2");
  VNN_CHECK(ShapeError, x1.dim() >= 2 && x2.dim() >= 2, "cdist: x1 ", x1.sizes(), " and x2 ", x2.sizes(),
            " must have at least 2 dimensions");
  VNN_CHECK(ShapeError, x1.size(-1) == x2.size(-1), "cdist: x1 ", x1.sizes(), " and x2 ", x2.sizes(),
            " must have the same number of columns");
  VNN_CHECK(DTypeError, is_floating(x1.dtype()) && is_floating(x2.dtype()),
            "cdist: only supports floating-point dtypes, got ", name(x1.dtype()), " and ", name(x2.dtype()));
  if (!(p >= 0)) VNN_THROW(ValueError, "cdist: p value must be >= 0, got ", p);
  const int64_t mode = compute_mode.value_or(0);
  if (mode < 0 || mode > 2)
    VNN_THROW(ValueError, "cdist: compute_mode must be 0 (matmul past 25 rows), 1 (matmul) or 2 (no matmul), got ",
              mode);
  detail::check_same_device(x1, x2, "cdist", "x2");
  DType dt = promote_types(x1.dtype(), x2.dtype());
  Tensor a = x1.to(dt), b = x2.to(dt);
  if (p == 2.0 && (mode == 1 || (mode == 0 && (a.size(-2) > 25 || b.size(-2) > 25)))) {
    // |a|^2 - 2 a.b + |b|^2 through one matmul (PyTorch's default mode for
    // more than 25 rows); clamped away from 0 as PyTorch, so sqrt's gradient stays finite.
    Tensor an = sum(mul(a, a), -1, true), bn = sum(mul(b, b), -1, true);
    Tensor d2 = add(sub(an, mul(matmul(a, b.mT()), 2.0)), bn.mT());
    return sqrt(clamp_min(d2, 1e-30));
  }
  // Broadcast differences [..., P, R, M], then the p-norm over M.
  Tensor diff = sub(a.unsqueeze(-2), b.unsqueeze(-3));
  if (diff.size(-1) == 0) return sum(diff, -1);
  return norm(diff, p, -1);
}

Tensor cov(const Tensor& t, int64_t correction, const Tensor& fweights, const Tensor& aweights) {
  detail::require_arg(t, "cov", "input");
  VNN_CHECK(ShapeError, t.dim() <= 2, "cov: expected input to have two or fewer dimensions, got shape ", t.sizes());
  Tensor x = t.dim() < 2 ? t.reshape({1, -1}) : t;
  if (!is_floating(x.dtype())) x = x.to(kFloat32);
  int64_t n = x.size(1);
  Tensor w;
  auto check_weights = [&](const Tensor& wt, const char* arg) {
    VNN_CHECK(ShapeError, wt.dim() <= 1, "cov: expected ", arg, " to have one or fewer dimensions, got shape ",
              wt.sizes());
    VNN_CHECK(ShapeError, wt.numel() == n, "cov: expected ", arg, " to have the same numel as there are observations (",
              n, "), got shape ", wt.sizes());
    detail::check_same_device(t, wt, "cov", arg);
    VNN_CHECK(ValueError, wt.numel() == 0 || !(amin(wt).item() < 0), "cov: ", arg, " cannot have negative values");
  };
  if (fweights.defined()) {
    check_weights(fweights, "fweights");
    VNN_CHECK(DTypeError, is_integral(fweights.dtype()), "cov: expected fweights to have an integral dtype, got ",
              name(fweights.dtype()));
    w = fweights.reshape({-1}).to(x.dtype());
  }
  if (aweights.defined()) {
    check_weights(aweights, "aweights");
    VNN_CHECK(DTypeError, is_floating(aweights.dtype()), "cov: expected aweights to have a floating dtype, got ",
              name(aweights.dtype()));
    Tensor aw = aweights.reshape({-1}).to(x.dtype());
    w = w.defined() ? mul(w, aw) : aw;
  }
  Tensor w_sum = w.defined() ? sum(w) : full({}, double(n), TensorOptions(x.device()).with(x.dtype()));
  Tensor avg = w.defined() ? div(sum(mul(x, w), 1), w_sum) : mean(x, 1);
  Tensor norm_factor;
  if (w.defined() && correction != 0 && aweights.defined())
    norm_factor = sub(w_sum, div(mul(sum(mul(w, aweights.reshape({-1}).to(x.dtype()))), double(correction)), w_sum));
  else
    norm_factor = sub(w_sum, full({}, double(correction), TensorOptions(x.device()).with(x.dtype())));
  // N - correction <= 0 gives inf / nan, as PyTorch (which warns).
  norm_factor = clamp_min(norm_factor, 0.0);
  Tensor centred = sub(x, avg.unsqueeze(1));
  Tensor c = mm(centred, (w.defined() ? mul(centred, w) : centred).t());
  c = div(c, norm_factor);
  return c.squeeze();  // as PyTorch: one variable gives a 0-D result
}

Tensor corrcoef(const Tensor& t) {
  detail::require_arg(t, "corrcoef", "input");
  VNN_CHECK(ShapeError, t.dim() <= 2, "corrcoef: expected input to have two or fewer dimensions, got shape ",
            t.sizes());
  Tensor c = cov(t);
  if (c.dim() == 0) return div(c, c);  // one variable: 1, or nan for a constant
  Tensor sd = sqrt(diagonal(c, 0, 0, 1));
  c = div(div(c, sd.unsqueeze(1)), sd.unsqueeze(0));
  return clamp(c, -1.0, 1.0);
}

}  // namespace vnn
