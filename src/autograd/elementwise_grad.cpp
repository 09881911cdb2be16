// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "autograd/elementwise_grad.hpp"

#include <cmath>

#include "vnn/elementwise.h"

namespace vnn::detail {

namespace {
// Saved values without their autograd metadata: no reference cycles, and
// the storage version still tracks in-place changes.
Tensor saved(const Tensor& t) { return t.detach(); }
std::vector<Tensor> grads(Tensor a, Tensor b = Tensor()) { return {std::move(a), std::move(b)}; }
// Gradients flow only to floating operands.
Tensor if_float(const Tensor& like, const Tensor& g) { return is_floating(like.dtype()) ? g : Tensor(); }
}  // namespace

BackwardFn binary_backward(vnn_binary_fn fn, const Tensor& a_in, const Tensor& b_in, const Tensor& out_in,
                           double alpha) {
  Tensor a = saved(a_in), b = saved(b_in), out = saved(out_in);
  switch (fn) {
    case VNN_BINARY_ADD:
      return [alpha](const Tensor& g) { return grads(g, alpha == 1.0 ? g : mul(g, alpha)); };
    case VNN_BINARY_SUB:
      return [alpha](const Tensor& g) { return grads(g, mul(g, -alpha)); };
    case VNN_BINARY_MUL:
      return [a, b](const Tensor& g) { return grads(mul(g, b), mul(g, a)); };
    case VNN_BINARY_DIV:
      return [a, b](const Tensor& g) {
        Tensor ga = div(g, b);
        return grads(ga, neg(mul(ga, div(a, b))));
      };
    case VNN_BINARY_MAXIMUM:
    case VNN_BINARY_MINIMUM:
      // Ties split the gradient evenly, as PyTorch.
      return [a, b, fn](const Tensor& g) {
        Tensor wins = (fn == VNN_BINARY_MAXIMUM ? gt(a, b) : lt(a, b)).to(g.dtype());
        Tensor ties = mul(eq(a, b).to(g.dtype()), 0.5);
        Tensor wa = add(wins, ties);
        return grads(mul(g, wa), mul(g, rsub(wa, 1.0)));
      };
    case VNN_BINARY_POW:
      return [a, b, out](const Tensor& g) {
        // d/da = b a^(b-1); d/db = a^b log a (0 where a <= 0, as PyTorch for a == 0).
        Tensor ga = mul(g, mul(b, pow(a, sub(b, 1.0))));
        Tensor safe_log = where(gt(a, 0.0), log(where(gt(a, 0.0), a, ones_like(a))), zeros_like(a));
        return grads(if_float(a, ga), if_float(b, mul(g, mul(out, safe_log))));
      };
    case VNN_BINARY_GELU_BACKWARD:
      // out = a gelu'(b): d/da = gelu'(b), d/db = a gelu''(b) = a phi(b) (2 - b^2).
      return [a, b](const Tensor& g) {
        Tensor pdf = mul(exp(mul(mul(b, b), -0.5)), 0.5 * M_2_SQRTPI * M_SQRT1_2);
        return grads(gelu_backward(g, b), mul(mul(g, a), mul(pdf, rsub(mul(b, b), 2.0))));
      };
    default:
      return nullptr;
  }
}

BackwardFn unary_backward(vnn_unary_fn fn, const Tensor& in_t, const Tensor& out_t, double s0, double s1) {
  Tensor x = saved(in_t), y = saved(out_t);
  switch (fn) {
    case VNN_UNARY_NEG: return [](const Tensor& g) { return grads(neg(g)); };
    case VNN_UNARY_ABS: return [x](const Tensor& g) { return grads(mul(g, sign(x))); };
    case VNN_UNARY_EXP: return [y](const Tensor& g) { return grads(mul(g, y)); };
    case VNN_UNARY_LOG: return [x](const Tensor& g) { return grads(div(g, x)); };
    case VNN_UNARY_SQRT: return [y](const Tensor& g) { return grads(div(mul(g, 0.5), y)); };
    case VNN_UNARY_RELU: return [y](const Tensor& g) { return grads(mul(g, gt(y, 0.0).to(g.dtype()))); };
    case VNN_UNARY_SIGMOID: return [y](const Tensor& g) { return grads(mul(g, mul(y, rsub(y, 1.0)))); };
    case VNN_UNARY_TANH: return [y](const Tensor& g) { return grads(mul(g, rsub(mul(y, y), 1.0))); };
    case VNN_UNARY_LOG1P: return [x](const Tensor& g) { return grads(div(g, add(x, 1.0))); };
    case VNN_UNARY_RSQRT:
      return [y](const Tensor& g) { return grads(mul(g, mul(mul(y, mul(y, y)), -0.5))); };
    case VNN_UNARY_SIN: return [x](const Tensor& g) { return grads(mul(g, cos(x))); };
    case VNN_UNARY_COS: return [x](const Tensor& g) { return grads(neg(mul(g, sin(x)))); };
    case VNN_UNARY_RECIPROCAL: return [y](const Tensor& g) { return grads(neg(mul(g, mul(y, y)))); };
    case VNN_UNARY_LEAKY_RELU:
      return [x, s0](const Tensor& g) { return grads(mul(g, where(gt(x, 0.0), ones_like(x), full_like(x, s0)))); };
    case VNN_UNARY_GELU:  // g * (Phi(x) + x phi(x)), one fused op
      return [x](const Tensor& g) { return grads(gelu_backward(g, x)); };
    case VNN_UNARY_SILU:
      return [x](const Tensor& g) {
        Tensor s = sigmoid(x);
        return grads(mul(g, mul(s, add(mul(x, rsub(s, 1.0)), 1.0))));
      };
    case VNN_UNARY_ERF:
      return [x](const Tensor& g) { return grads(mul(g, mul(exp(neg(mul(x, x))), M_2_SQRTPI))); };
    case VNN_UNARY_CLAMP:
      return [x, s0, s1](const Tensor& g) {
        Tensor inside = ones_like(x).to(kBool);
        if (!std::isnan(s0)) inside = logical_and(inside, ge(x, s0));
        if (!std::isnan(s1)) inside = logical_and(inside, le(x, s1));
        return grads(mul(g, inside.to(g.dtype())));
      };
    case VNN_UNARY_FLOOR:
    case VNN_UNARY_CEIL:
    case VNN_UNARY_ROUND:
    case VNN_UNARY_SIGN:
      return [](const Tensor& g) { return grads(zeros_like(g)); };  // piecewise constant
    default:
      return nullptr;  // logical_not
  }
}

BackwardFn where_backward(const Tensor& cond_in) {
  Tensor cond = saved(cond_in);
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
