// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The dropout family of include/vnn/nn/dropout.h: a keep mask (elementwise
// or one draw per channel, broadcast) times the input, PyTorch's formulas.
#include "vnn/nn/dropout.h"

#include <cmath>

#include "nn/inplace.hpp"
#include "vnn/detail/message.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/random.h"

namespace vnn::nn {

namespace functional {

namespace {

void dropout_check(const Tensor& input, double p, const char* op) {
  VNN_CHECK(ValueError, p >= 0.0 && p <= 1.0, op, ": p must be in [0, 1], got ", p);
  VNN_CHECK(ValueError, input.defined(), op, ": argument 'input' is an undefined tensor");
  VNN_CHECK(DTypeError, is_floating(input.dtype()), op, ": input must be floating, got ", input.dtype(),
            "; convert it with .to(vnn::kFloat)");
}

// 1 with probability 1 - p, else 0, in input's dtype; shape [N, C, 1, ...] when per_channel.
Tensor keep_mask(const Tensor& input, double p, bool per_channel) {
  Shape s = input.sizes();
  if (per_channel)
    for (int d = 2; d < input.dim(); ++d) s[d] = 1;
  // float32 uniforms for 16-bit inputs (rounded to 16 bits they would bias the keep probability).
  DType u = input.dtype() == kFloat64 ? kFloat64 : kFloat32;
  return lt(rand(s, TensorOptions(input.device()).dtype(u)), 1.0 - p).to(input.dtype());
}

// Channel dropout of a batched (`batched_dim` dims) or unbatched (one fewer) input.
Tensor channel_dropout(Tensor input, const DropoutFuncOptions& o, int batched_dim, const char* op) {
  dropout_check(input, o.p(), op);
  VNN_CHECK(ShapeError, input.dim() == batched_dim || input.dim() == batched_dim - 1, op, ": expected ",
            batched_dim - 1, "-D (unbatched) or ", batched_dim, "-D (batched) input, got ", input.dim(), "-D input ",
            input.sizes());
  if (!o.training() || o.p() == 0.0) return input;
  Tensor batched = input.dim() == batched_dim ? input : input.unsqueeze(0);
  Tensor y = o.p() == 1.0 ? mul(batched, 0.0) : mul(batched, mul(keep_mask(batched, o.p(), true), 1.0 / (1.0 - o.p())));
  return detail::write_into_input(input, y.reshape(input.sizes()), o.inplace());
}

Tensor alpha_dropout_impl(Tensor input, const AlphaDropoutFuncOptions& o, bool per_channel, const char* op) {
  const double p = o.p();
  VNN_CHECK(ValueError, p >= 0.0 && p <= 1.0, op, ": p must be in [0, 1], got ", p);
  // Out of training (or with nothing to drop) the identity, whatever the input, as PyTorch's.
  if (input.defined() && (!o.training() || p == 0.0 || input.numel() == 0)) return input;
  dropout_check(input, p, op);
  if (per_channel)
    VNN_CHECK(ShapeError, input.dim() >= 2, op, ": expected an input [N, C, *] of at least 2 dims, got ",
              input.sizes());
  if (p == 1.0) return detail::write_into_input(input, mul(input, 0.0), o.inplace());
  // PyTorch's constants: dropped elements go to SELU's negative saturation
  // -alpha, then a x + b restores zero mean and unit variance.
  constexpr double alpha = 1.7580993408473766;
  const double a = 1.0 / std::sqrt((alpha * alpha * p + 1) * (1 - p));
  Tensor keep = keep_mask(input, p, per_channel);
  Tensor b = add(mul(sub(keep, 1.0), alpha * a), alpha * a * p);
  return detail::write_into_input(input, add(mul(input, mul(keep, a)), b), o.inplace());
}

}  // namespace

Tensor dropout1d(Tensor input, const Dropout1dFuncOptions& o) { return channel_dropout(input, o, 3, "dropout1d"); }
Tensor dropout2d(Tensor input, const Dropout2dFuncOptions& o) { return channel_dropout(input, o, 4, "dropout2d"); }
Tensor dropout3d(Tensor input, const Dropout3dFuncOptions& o) { return channel_dropout(input, o, 5, "dropout3d"); }
Tensor alpha_dropout(Tensor input, const AlphaDropoutFuncOptions& o) {
  return alpha_dropout_impl(input, o, false, "alpha_dropout");
}
Tensor feature_alpha_dropout(Tensor input, const FeatureAlphaDropoutFuncOptions& o) {
  return alpha_dropout_impl(input, o, true, "feature_alpha_dropout");
}

}  // namespace functional

namespace {
constexpr const char* kDropoutNames[] = {"", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                                         "FeatureAlphaDropout"};
}  // namespace

template <int Kind>
DropoutFamilyImpl<Kind>::DropoutFamilyImpl(const DropoutOptions& o)
    : Cloneable<DropoutFamilyImpl<Kind>>(kDropoutNames[Kind]), options(o) {
  VNN_CHECK(ValueError, o.p() >= 0.0 && o.p() <= 1.0, kDropoutNames[Kind], ": p must be in [0, 1], got ", o.p());
}

template <int Kind>
Tensor DropoutFamilyImpl<Kind>::forward(const Tensor& x) {
  namespace F = functional;
  const bool t = this->is_training();
  if constexpr (Kind <= 3) {
    F::DropoutFuncOptions fo = F::DropoutFuncOptions().p(options.p()).training(t).inplace(options.inplace());
    return Kind == 1 ? F::dropout1d(x, fo) : Kind == 2 ? F::dropout2d(x, fo) : F::dropout3d(x, fo);
  } else {
    F::AlphaDropoutFuncOptions fo = F::AlphaDropoutFuncOptions().p(options.p()).training(t).inplace(options.inplace());
    return Kind == 4 ? F::alpha_dropout(x, fo) : F::feature_alpha_dropout(x, fo);
  }
}

template <int Kind>
std::string DropoutFamilyImpl<Kind>::describe() const {
  return ::vnn::detail::str_cat(kDropoutNames[Kind], "(p=", options.p(),
                                ", inplace=", options.inplace() ? "true" : "false", ")");
}

template class DropoutFamilyImpl<1>;
template class DropoutFamilyImpl<2>;
template class DropoutFamilyImpl<3>;
template class DropoutFamilyImpl<4>;
template class DropoutFamilyImpl<5>;

}  // namespace vnn::nn
