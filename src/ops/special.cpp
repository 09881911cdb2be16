// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The composed special functions: polygamma over zeta, mvlgamma over lgamma.
#include "vnn/special.h"

#include <cmath>

#include "ops/shape_common.hpp"
#include "vnn/error.h"

namespace vnn {
namespace {

Tensor floating(const Tensor& t) { return is_floating(t.dtype()) ? t : t.to(kFloat32); }

// torch.special's polynomials at a scalar x: x as PyTorch wraps it, a 0-dim
// tensor in n's floating dtype (float32 for an integer n), which does not
// widen the result.
Tensor scalar_x(double x, const Tensor& n, const char* op) {
  detail::require_arg(n, op, "n");
  return full({}, x, TensorOptions(n.device()).with(is_floating(n.dtype()) ? n.dtype() : kFloat32));
}

}  // namespace

Tensor polygamma(int64_t n, const Tensor& x) {
  detail::require_arg(x, "polygamma", "input");
  VNN_CHECK(ValueError, n >= 0, "polygamma(n, x): n must be non-negative, got ", n);
  Tensor xf = floating(x);
  if (n == 0) return digamma(xf);
  // psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x); its gradient follows from zeta's.
  const double factor = (n % 2 == 1 ? 1.0 : -1.0) * std::tgamma(double(n) + 1.0);
  return mul(zeta(full_like(xf, double(n) + 1.0), xf), factor);
}

Tensor mvlgamma(const Tensor& x, int64_t p) {
  detail::require_arg(x, "mvlgamma", "input");
  VNN_CHECK(ValueError, p >= 1, "mvlgamma: p has to be greater than or equal to 1, got ", p);
  Tensor xf = floating(x);
  const double bound = double(p - 1) / 2;
  VNN_CHECK(ValueError, xf.numel() == 0 || all(gt(xf, bound)).item() != 0,
            "mvlgamma: all elements must be greater than (p-1)/2 = ", bound, " (p = ", p, ")");
  Tensor acc = lgamma(xf);
  for (int64_t j = 1; j < p; ++j) acc = add(acc, lgamma(sub(xf, double(j) / 2)));
  return add(acc, double(p) * double(p - 1) / 4 * std::log(M_PI));
}

#define VNN_SPECIAL_POLYNOMIAL_AT_SCALAR(NAME) \
  Tensor special::NAME(double x, const Tensor& n) { return vnn::NAME(scalar_x(x, n, #NAME), n); }
VNN_SPECIAL_POLYNOMIAL_AT_SCALAR(chebyshev_polynomial_t)
VNN_SPECIAL_POLYNOMIAL_AT_SCALAR(chebyshev_polynomial_u)
VNN_SPECIAL_POLYNOMIAL_AT_SCALAR(chebyshev_polynomial_v)
VNN_SPECIAL_POLYNOMIAL_AT_SCALAR(chebyshev_polynomial_w)
VNN_SPECIAL_POLYNOMIAL_AT_SCALAR(shifted_chebyshev_polynomial_t)
VNN_SPECIAL_POLYNOMIAL_AT_SCALAR(shifted_chebyshev_polynomial_u)
VNN_SPECIAL_POLYNOMIAL_AT_SCALAR(shifted_chebyshev_polynomial_v)
VNN_SPECIAL_POLYNOMIAL_AT_SCALAR(shifted_chebyshev_polynomial_w)
VNN_SPECIAL_POLYNOMIAL_AT_SCALAR(hermite_polynomial_h)
VNN_SPECIAL_POLYNOMIAL_AT_SCALAR(hermite_polynomial_he)
VNN_SPECIAL_POLYNOMIAL_AT_SCALAR(laguerre_polynomial_l)
VNN_SPECIAL_POLYNOMIAL_AT_SCALAR(legendre_polynomial_p)
#undef VNN_SPECIAL_POLYNOMIAL_AT_SCALAR

}  // namespace vnn
