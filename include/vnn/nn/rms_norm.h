// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RMSNorm (PyTorch 2.x's torch.nn.RMSNorm, which LibTorch 1.13 lacks) and
// functional::rms_norm:
//   vnn::nn::RMSNorm norm(vnn::nn::RMSNormOptions({4096}).eps(1e-6));   // state-dict key "weight"
// y = x / sqrt(mean(x^2 over the trailing normalized_shape) + eps) * weight,
// eps defaulting to the machine epsilon of the input's dtype as PyTorch's
// None; 16-bit inputs compute in float32. Composed of differentiable ops.
#pragma once
#include <optional>
#include <string>

#include "vnn/nn/module.h"
#include "vnn/nn/options.h"

namespace vnn::nn {

/// Options of RMSNorm: normalized_shape, eps, elementwise_affine.
struct RMSNormOptions {
  /// Normalises over the trailing dims of sizes `normalized_shape`; implicit.
  RMSNormOptions(Shape normalized_shape) : normalized_shape_(normalized_shape) {}  // NOLINT: implicit
  /// Sizes of the trailing dims normalised over.
  VNN_ARG(Shape, normalized_shape);
  /// Added to the mean square; unset: the machine epsilon of the input's dtype (PyTorch's None).
  VNN_ARG(std::optional<double>, eps);
  /// Whether a learned elementwise scale "weight" of normalized_shape is applied (default true).
  VNN_ARG(bool, elementwise_affine) = true;
};

namespace functional {
/// Options of rms_norm: normalized_shape, weight, eps.
struct RMSNormFuncOptions {
  /// Normalise over the trailing dims of sizes `normalized_shape`.
  RMSNormFuncOptions(Shape normalized_shape) : normalized_shape_(normalized_shape) {}  // NOLINT: implicit
  /// The trailing shape normalised over.
  VNN_ARG(Shape, normalized_shape);
  /// Scale of that shape, or undefined.
  VNN_ARG(Tensor, weight);
  /// Added to the mean square; unset: the machine epsilon of the input's dtype.
  VNN_ARG(std::optional<double>, eps);
};
/// x * rsqrt(mean(x^2 over normalized_shape) + eps) * weight (ShapeError when the trailing dims differ).
Tensor rms_norm(const Tensor& input, const RMSNormFuncOptions& options);
}  // namespace functional

/// Root-mean-square normalisation over the trailing normalized_shape dims (torch.nn.RMSNorm).
class RMSNormImpl : public Cloneable<RMSNormImpl> {
 public:
  /// An RMSNorm from options (ValueError for an empty or non-positive normalized_shape).
  explicit RMSNormImpl(const RMSNormOptions& options);
  /// RMSNorm(normalized_shape, eps, elementwise_affine).
  explicit RMSNormImpl(const Shape& normalized_shape, std::optional<double> eps = std::nullopt,
                       bool elementwise_affine = true)
      : RMSNormImpl(RMSNormOptions(normalized_shape).eps(eps).elementwise_affine(elementwise_affine)) {}
  /// Sets weight to ones (elementwise_affine).
  void reset() override;
  /// functional::rms_norm(x, normalized_shape, weight, eps).
  Tensor forward(const Tensor& x);
  std::string describe() const override;
  /// The options the layer was built with.
  RMSNormOptions options;
  /// The scale of normalized_shape (undefined without elementwise_affine).
  Tensor weight;
};
/// The holder of RMSNormImpl.
VNN_MODULE(RMSNorm);

}  // namespace vnn::nn
