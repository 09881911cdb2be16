// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RMSNorm and functional::rms_norm (include/vnn/nn/rms_norm.h), composed of
// mul / mean / rsqrt, as PyTorch 2.x's composite implementation.
#include "vnn/nn/rms_norm.h"

#include <limits>
#include <string>
#include <vector>

#include "vnn/detail/message.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/reduction.h"

namespace vnn::nn {

namespace functional {

Tensor rms_norm(const Tensor& input, const RMSNormFuncOptions& o) {
  VNN_CHECK(ValueError, input.defined(), "rms_norm: argument 'input' is an undefined tensor");
  VNN_CHECK(DTypeError, is_floating(input.dtype()), "rms_norm: input must be floating, got ", input.dtype(),
            "; convert it with .to(vnn::kFloat)");
  const Shape& ns = o.normalized_shape();
  const int k = ns.size(), n = input.dim();
  bool match = k >= 1 && k <= n;
  for (int i = 0; match && i < k; ++i) match = input.size(n - k + i) == ns[i];
  VNN_CHECK(ShapeError, match, "rms_norm: input ", input.sizes(), " must end in normalized_shape ", ns,
            " (the trailing dims normalised over)");
  if (o.weight().defined())
    VNN_CHECK(ShapeError, o.weight().sizes() == ns, "rms_norm: weight ", o.weight().sizes(),
              " must have normalized_shape ", ns);
  double eps;
  if (o.eps()) {
    eps = *o.eps();
  } else {
    switch (input.dtype()) {
      case kFloat64: eps = std::numeric_limits<double>::epsilon(); break;
      case kFloat16: eps = 0.0009765625; break;   // torch.finfo(torch.float16).eps
      case kBFloat16: eps = 0.0078125; break;     // torch.finfo(torch.bfloat16).eps
      default: eps = std::numeric_limits<float>::epsilon(); break;
    }
  }
  VNN_CHECK(ValueError, eps >= 0, "rms_norm: eps must be >= 0, got ", eps);
  const bool half = input.dtype() == kFloat16 || input.dtype() == kBFloat16;
  Tensor x = half ? input.to(kFloat32) : input;
  std::vector<int64_t> dims;
  for (int i = n - k; i < n; ++i) dims.push_back(i);
  Tensor y = mul(x, rsqrt(add(mean(mul(x, x), Dims(dims), true), eps)));
  if (o.weight().defined()) y = mul(y, o.weight().to(y.dtype()));
  return half ? y.to(input.dtype()) : y;
}

}  // namespace functional

RMSNormImpl::RMSNormImpl(const RMSNormOptions& o) : Cloneable("RMSNorm"), options(o) {
  bool ok = o.normalized_shape().size() >= 1;
  for (int64_t d : o.normalized_shape()) ok = ok && d > 0;
  VNN_CHECK(ValueError, ok, "RMSNorm: normalized_shape must be a non-empty list of positive sizes, got ",
            o.normalized_shape());
  reset();
}

void RMSNormImpl::reset() {
  weight = Tensor();
  if (options.elementwise_affine()) weight = register_parameter("weight", ones(options.normalized_shape()));
}

Tensor RMSNormImpl::forward(const Tensor& x) {
  return functional::rms_norm(x, functional::RMSNormFuncOptions(options.normalized_shape()).weight(weight).eps(
                                     options.eps()));
}

std::string RMSNormImpl::describe() const {
  std::string eps = options.eps() ? ::vnn::detail::str_cat(*options.eps()) : "None";
  return ::vnn::detail::str_cat("RMSNorm(", options.normalized_shape(), ", eps=", eps,
                                ", elementwise_affine=", options.elementwise_affine() ? "True" : "False", ")");
}

}  // namespace vnn::nn
