// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The activations of include/vnn/nn/activation.h, composed from
// differentiable core ops with PyTorch's formulas. Branches that may
// overflow (exp of a large x) are clamped before the op so that where()'s
// unused side never carries inf or NaN into the backward pass.
#include "vnn/nn/activation.h"

#include <string>

#include "nn/inplace.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/detail/message.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/indexing.h"
#include "vnn/reduction.h"

namespace vnn::nn {

namespace functional {

namespace {

void act_check_input(const Tensor& t, const char* op) {
  VNN_CHECK(ValueError, t.defined(), op, ": argument 'input' is an undefined tensor");
  VNN_CHECK(DTypeError, is_floating(t.dtype()), op, ": input must be floating, got ", t.dtype(),
            "; convert it with .to(vnn::kFloat)");
}

using ::vnn::nn::detail::write_into_input;

// log(1 + exp(z)) without overflow: max(z, 0) + log1p(exp(-|z|)).
Tensor act_softplus(const Tensor& z) { return add(vnn::relu(z), log1p(exp(neg(abs(z))))); }

// alpha * (exp(x / alpha) - 1) for x <= 0 (x clamped so exp never overflows).
Tensor act_expm1_neg(const Tensor& x, double alpha) {
  return mul(sub(exp(div(clamp_max(x, 0.0), alpha)), 1.0), alpha);
}

}  // namespace

Tensor elu(Tensor input, const ELUFuncOptions& o) {
  act_check_input(input, "elu");
  const double a = o.alpha();
  Tensor neg_part = mul(sub(exp(clamp_max(input, 0.0)), 1.0), a);
  return write_into_input(input, where(gt(input, 0.0), input, neg_part), o.inplace());
}

Tensor selu(Tensor input, const SELUFuncOptions& o) {
  act_check_input(input, "selu");
  constexpr double alpha = 1.6732632423543772848170429916717;
  constexpr double scale = 1.0507009873554804934193349852946;
  Tensor y = where(gt(input, 0.0), mul(input, scale), mul(sub(exp(clamp_max(input, 0.0)), 1.0), alpha * scale));
  return write_into_input(input, y, o.inplace());
}

Tensor celu(Tensor input, const CELUFuncOptions& o) {
  act_check_input(input, "celu");
  VNN_CHECK(ValueError, o.alpha() != 0.0, "celu: alpha must not be 0 (it divides x), got ", o.alpha());
  return write_into_input(input, where(gt(input, 0.0), input, act_expm1_neg(input, o.alpha())), o.inplace());
}

Tensor glu(const Tensor& input, const GLUFuncOptions& o) {
  act_check_input(input, "glu");
  VNN_CHECK(ShapeError, input.dim() > 0, "glu: input must have at least 1 dim, got a scalar");
  const int d = ::vnn::detail::normalize_dim(int(o.dim()), input.dim(), "glu");
  const int64_t n = input.size(d);
  VNN_CHECK(ShapeError, n % 2 == 0, "glu: dim ", o.dim(), " of input ", input.sizes(),
            " has odd size ", n, "; GLU splits it into two halves, so it must be even");
  return mul(input.narrow(d, 0, n / 2), sigmoid(input.narrow(d, n / 2, n / 2)));
}

Tensor hardtanh(Tensor input, const HardtanhFuncOptions& o) {
  act_check_input(input, "hardtanh");
  VNN_CHECK(ValueError, o.max_val() >= o.min_val(), "hardtanh: max_val (", o.max_val(),
            ") must be greater than or equal to min_val (", o.min_val(), ")");
  return write_into_input(input, clamp(input, o.min_val(), o.max_val()), o.inplace());
}

Tensor relu6(Tensor input, const ReLU6FuncOptions& o) {
  act_check_input(input, "relu6");
  return write_into_input(input, clamp(input, 0.0, 6.0), o.inplace());
}

Tensor hardswish(const Tensor& input) {
  act_check_input(input, "hardswish");
  return mul(input, div(clamp(add(input, 3.0), 0.0, 6.0), 6.0));
}

Tensor hardsigmoid(const Tensor& input) {
  act_check_input(input, "hardsigmoid");
  return div(clamp(add(input, 3.0), 0.0, 6.0), 6.0);
}

Tensor hardshrink(const Tensor& input, const HardshrinkFuncOptions& o) {
  act_check_input(input, "hardshrink");
  return where(gt(abs(input), o.lambda()), input, 0.0);
}

Tensor softshrink(const Tensor& input, const SoftshrinkFuncOptions& o) {
  act_check_input(input, "softshrink");
  const double l = o.lambda();
  VNN_CHECK(ValueError, l >= 0, "softshrink: lambda must be >= 0, got ", l);
  // x - clamp(x, -l, l): x - l above l, x + l below -l, 0 between.
  return sub(input, clamp(input, -l, l));
}

Tensor tanhshrink(const Tensor& input) {
  act_check_input(input, "tanhshrink");
  return sub(input, tanh(input));
}

Tensor threshold(Tensor input, const ThresholdFuncOptions& o) {
  act_check_input(input, "threshold");
  return write_into_input(input, where(gt(input, o.threshold()), input, o.value()), o.inplace());
}

Tensor logsigmoid(const Tensor& input) {
  act_check_input(input, "logsigmoid");
  return neg(act_softplus(neg(input)));
}

Tensor softplus(const Tensor& input, const SoftplusFuncOptions& o) {
  act_check_input(input, "softplus");
  const double beta = o.beta();
  VNN_CHECK(ValueError, beta != 0.0, "softplus: beta must not be 0 (it divides the result), got ", beta);
  Tensor bx = mul(input, beta);
  return where(gt(bx, o.threshold()), input, div(act_softplus(bx), beta));
}

Tensor softsign(const Tensor& input) {
  act_check_input(input, "softsign");
  return div(input, add(abs(input), 1.0));
}

Tensor softmin(const Tensor& input, const SoftminFuncOptions& o) {
  VNN_CHECK(ValueError, input.defined(), "softmin: argument 'input' is an undefined tensor");
  Tensor x = o.dtype() ? input.to(*o.dtype()) : input;
  return vnn::softmax(neg(x), int(o.dim()));
}

Tensor mish(const Tensor& input) {
  act_check_input(input, "mish");
  return mul(input, tanh(act_softplus(input)));
}

Tensor prelu(const Tensor& input, const Tensor& weight) {
  act_check_input(input, "prelu");
  VNN_CHECK(ValueError, weight.defined(), "prelu: argument 'weight' is an undefined tensor");
  VNN_CHECK(ShapeError, weight.dim() <= 1, "prelu: weight must be 1-D [1] or [channels], got shape ", weight.sizes());
  const int64_t k = weight.numel();
  // One slope broadcasts as a 0-D tensor, so a 0-D input stays 0-D.
  Tensor w = k == 1 ? weight.reshape({}) : weight.reshape({k});
  if (k != 1) {
    VNN_CHECK(ShapeError, input.dim() >= 1, "prelu: weight ", weight.sizes(), " has ", k,
              " slopes, but the input is a scalar; give one slope or an input with channels");
    const int c = input.dim() >= 2 ? 1 : 0;
    VNN_CHECK(ShapeError, input.size(c) == k, "prelu: weight has ", k, " slopes (num_parameters) but input ",
              input.sizes(), " has ", input.size(c), " channels in dim ", c,
              "; num_parameters must be 1 or the number of channels");
    Shape s(std::vector<int64_t>(size_t(input.dim() - c), 1));
    s[0] = k;
    w = w.reshape(s);
  }
  w = w.to(input.dtype());
  return where(gt(input, 0.0), input, mul(input, w));
}

Tensor rrelu(Tensor input, const RReLUFuncOptions& o, Generator* gen) {
  act_check_input(input, "rrelu");
  const double lo = o.lower(), hi = o.upper();
  VNN_CHECK(ValueError, lo >= 0 && lo <= hi, "rrelu: expected 0 <= lower <= upper, got lower = ", lo,
            ", upper = ", hi);
  Tensor slope;
  if (o.training()) {
    DType u = input.dtype() == kFloat64 ? kFloat64 : kFloat32;
    slope = add(mul(rand(input.sizes(), TensorOptions(input.device()).dtype(u), gen), hi - lo), lo).to(input.dtype());
  }
  Tensor neg_part = o.training() ? mul(input, slope) : mul(input, (lo + hi) / 2);
  return write_into_input(input, where(ge(input, 0.0), input, neg_part), o.inplace());
}

Tensor softmax2d(const Tensor& input) {
  VNN_CHECK(ValueError, input.defined(), "softmax2d: argument 'input' is an undefined tensor");
  VNN_CHECK(ShapeError, input.dim() == 3 || input.dim() == 4,
            "softmax2d: expected a 3-D [C, H, W] or 4-D [N, C, H, W] input, got ", input.sizes());
  return vnn::softmax(input, -3);
}

}  // namespace functional

RReLUImpl::RReLUImpl(const RReLUOptions& o) : Cloneable("RReLU"), options(o) {
  VNN_CHECK(ValueError, o.lower() >= 0 && o.lower() <= o.upper(), "RReLU: expected 0 <= lower <= upper, got lower = ",
            o.lower(), ", upper = ", o.upper());
}
Tensor RReLUImpl::forward(const Tensor& x) {
  return functional::rrelu(x, functional::RReLUFuncOptions()
                                  .lower(options.lower())
                                  .upper(options.upper())
                                  .training(is_training())
                                  .inplace(options.inplace()));
}
std::string RReLUImpl::describe() const {
  return ::vnn::detail::str_cat("RReLU(lower=", options.lower(), ", upper=", options.upper(), ")");
}

std::string ELUImpl::describe() const {
  return ::vnn::detail::str_cat("ELU(alpha=", options.alpha(), options.inplace() ? ", inplace=True)" : ")");
}
std::string CELUImpl::describe() const {
  return ::vnn::detail::str_cat("CELU(alpha=", options.alpha(), options.inplace() ? ", inplace=True)" : ")");
}
std::string GLUImpl::describe() const { return ::vnn::detail::str_cat("GLU(dim=", options.dim(), ")"); }

HardtanhImpl::HardtanhImpl(const HardtanhOptions& o) : Cloneable("Hardtanh"), options(o) {
  VNN_CHECK(ValueError, o.max_val() >= o.min_val(), "Hardtanh: max_val (", o.max_val(),
            ") must be greater than or equal to min_val (", o.min_val(), ")");
}
std::string HardtanhImpl::describe() const {
  return ::vnn::detail::str_cat("Hardtanh(min_val=", options.min_val(), ", max_val=", options.max_val(), ")");
}
std::string HardshrinkImpl::describe() const {
  return ::vnn::detail::str_cat("Hardshrink(", options.lambda(), ")");
}
SoftshrinkImpl::SoftshrinkImpl(const SoftshrinkOptions& o) : Cloneable("Softshrink"), options(o) {
  VNN_CHECK(ValueError, o.lambda() >= 0, "Softshrink: lambda must be >= 0, got ", o.lambda());
}
std::string SoftshrinkImpl::describe() const {
  return ::vnn::detail::str_cat("Softshrink(", options.lambda(), ")");
}
std::string ThresholdImpl::describe() const {
  return ::vnn::detail::str_cat("Threshold(threshold=", options.threshold(), ", value=", options.value(), ")");
}
std::string SoftplusImpl::describe() const {
  return ::vnn::detail::str_cat("Softplus(beta=", options.beta(), ", threshold=", options.threshold(), ")");
}

PReLUImpl::PReLUImpl(const PReLUOptions& o) : Cloneable("PReLU"), options(o) {
  VNN_CHECK(ValueError, o.num_parameters() >= 1, "PReLU: num_parameters must be >= 1, got ", o.num_parameters());
  reset();
}
void PReLUImpl::reset() { weight = register_parameter("weight", full({options.num_parameters()}, options.init())); }
std::string PReLUImpl::describe() const {
  return ::vnn::detail::str_cat("PReLU(num_parameters=", options.num_parameters(), ")");
}

}  // namespace vnn::nn
