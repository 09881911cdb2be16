// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "autograd/elementwise_grad.hpp"

#include <cmath>

#include "vnn/elementwise.h"

namespace vnn::detail {

namespace {
std::vector<Tensor> grads(Tensor a, Tensor b = Tensor()) { return {std::move(a), std::move(b)}; }
// Gradients flow only to floating operands.
}  // namespace

// maximum / minimum: ties split the gradient evenly, as PyTorch.
Tensor minmax_grad(const Tensor& g, const Tensor& a, const Tensor& b, bool is_max, bool for_a) {
  Tensor wins = (is_max ? gt(a, b) : lt(a, b)).to(g.dtype());
  Tensor wa = add(wins, mul(eq(a, b).to(g.dtype()), 0.5));
  return mul(g, for_a ? wa : rsub(wa, 1.0));
}

// fmax / fmin: a takes the gradient where it won or b is NaN (PyTorch's rule).
Tensor fminmax_grad(const Tensor& g, const Tensor& a, const Tensor& b, bool is_max, bool for_a) {
  Tensor wa = logical_or(is_max ? ge(a, b) : le(a, b), isnan(b)).to(g.dtype());
  return mul(g, for_a ? wa : rsub(wa, 1.0));
}

// d/db a^b = a^b log a (0 where a <= 0, as PyTorch for a == 0).
Tensor pow_grad_exponent(const Tensor& g, const Tensor& a, const Tensor& out) {
  Tensor safe_log = where(gt(a, 0.0), log(where(gt(a, 0.0), a, ones_like(a))), zeros_like(a));
  return mul(g, mul(out, safe_log));
}

// out = a gelu'(b): d/db = a gelu''(b) = a phi(b) (2 - b^2).
Tensor gelu_backward_grad_b(const Tensor& g, const Tensor& a, const Tensor& b) {
  Tensor pdf = mul(exp(mul(mul(b, b), -0.5)), 0.5 * M_2_SQRTPI * M_SQRT1_2);
  return mul(mul(g, a), mul(pdf, rsub(mul(b, b), 2.0)));
}

// The binary op table's GRAD columns (vnn/ops/binary.def): the gradients of
// a and b as vnn ops of g, the saved a, b and out, and alpha.
// The inputs are kept as they are (their history is not this node's, so no
// cycle) and the output through SavedOutput: under create_graph the
// formulas then differentiate through both (double backward).
BackwardFn binary_backward(vnn_binary_fn fn, const Tensor& a, const Tensor& b, const SavedOutput& saved_out,
                           double alpha) {
  switch (fn) {
#define VNN_NO_GRAD Tensor()
#define VNN_BINARY_OP(ID, NAME, SIG, RULE, DOMAIN, DOC, GA, GB, ...) \
  case VNN_BINARY_##ID:                                              \
    return [=](const Tensor& g) {                                    \
      const Tensor out = saved_out.get();                            \
      (void)g, (void)out;                                            \
      return grads(GA, GB);                                          \
    };
#include "vnn/ops/binary.def"
#undef VNN_BINARY_OP
#undef VNN_NO_GRAD
    default:
      return nullptr;
  }
}

// silu'(x) = s (1 + x (1 - s)), s = sigmoid(x).
Tensor silu_grad(const Tensor& g, const Tensor& x) {
  Tensor s = sigmoid(x);
  return mul(g, mul(s, add(mul(x, rsub(s, 1.0)), 1.0)));
}

// sinc'(x) = (cos(pi x) pi x - sin(pi x)) / (pi x^2), 0 at x = 0.
Tensor sinc_grad(const Tensor& g, const Tensor& x) {
  Tensor zero = eq(x, 0.0), safe = where(zero, ones_like(x), x), px = mul(safe, M_PI);
  Tensor d = div(sub(mul(cos(px), px), sin(px)), mul(mul(safe, safe), M_PI));
  return mul(g, where(zero, zeros_like(x), d));
}

// 1 inside [min, max] (a NaN bound is no bound), 0 outside.
Tensor clamp_grad(const Tensor& g, const Tensor& x, double lo, double hi) {
  Tensor inside = ones_like(x).to(kBool);
  if (!std::isnan(lo)) inside = logical_and(inside, ge(x, lo));
  if (!std::isnan(hi)) inside = logical_and(inside, le(x, hi));
  return mul(g, inside.to(g.dtype()));
}

// The op table's GRAD column (vnn/ops/unary.def): the input's gradient as
// vnn ops of g, the saved input x and output y and the scalars s0, s1.
BackwardFn unary_backward(vnn_unary_fn fn, const Tensor& x, const SavedOutput& saved_out, double s0, double s1) {
  switch (fn) {
#define VNN_NO_GRAD Tensor()
#define VNN_UNARY_OP(ID, NAME, SIG, RULE, DOMAIN, DOC, GRAD, ...) \
  case VNN_UNARY_##ID:                                            \
    return [=](const Tensor& g) {                                 \
      const Tensor y = saved_out.get();                           \
      (void)g, (void)y;                                           \
      return grads(GRAD);                                         \
    };
#include "vnn/ops/unary.def"
#undef VNN_UNARY_OP
#undef VNN_NO_GRAD
    default:
      return nullptr;
  }
}

BackwardFn where_backward(const Tensor& cond_in) {
  Tensor cond = cond_in.detach();  // a bool mask: no gradient through it
  return [cond](const Tensor& g) {
    Tensor zero = zeros_like(g);
    return std::vector<Tensor>{Tensor(), where(cond, g, zero), where(cond, zero, g)};
  };
}

Tensor& inplace_with_grad(Tensor& self, const char* op, const std::function<Tensor(const Tensor& old)>& compute) {
  mark_modified(self, op);  // refuses leaves that require grad
  Tensor old = self.clone();
  Tensor result = compute(old);
  {
    autograd::NoGradGuard no_grad;
    self.copy_(result);
  }
  AutogradMeta& m = autograd_meta(*self.impl());
  m.requires_grad = requires_grad(result);
  m.grad_fn = result.impl()->autograd ? result.impl()->autograd->grad_fn : nullptr;
  return self;
}

}  // namespace vnn::detail
