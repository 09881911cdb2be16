// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The dropout family beyond layers.h's Dropout: channel-wise Dropout1d/2d/3d,
// AlphaDropout and FeatureAlphaDropout (for SELU networks), with LibTorch's
// options and functional forms:
//   vnn::nn::Dropout2d d(vnn::nn::Dropout2dOptions(0.2));
//   auto y = F::alpha_dropout(x, F::AlphaDropoutFuncOptions().p(0.1).training(true));
// The masks are drawn from vnn's default generator (float32 uniforms for
// 16-bit inputs, as Dropout); each is one broadcast multiply (and add), so
// every device runs it and autograd sees ordinary ops.
#pragma once
#include <string>

#include "vnn/nn/functional.h"  // DropoutFuncOptions
#include "vnn/nn/layers.h"
#include "vnn/nn/module.h"
#include "vnn/nn/options.h"

namespace vnn::nn {

/// Options of Dropout1d (those of Dropout: p, inplace).
using Dropout1dOptions = DropoutOptions;
/// Options of Dropout2d.
using Dropout2dOptions = DropoutOptions;
/// Options of Dropout3d.
using Dropout3dOptions = DropoutOptions;
/// Options of AlphaDropout.
using AlphaDropoutOptions = DropoutOptions;
/// Options of FeatureAlphaDropout.
using FeatureAlphaDropoutOptions = DropoutOptions;

namespace functional {
/// Options of dropout1d (p, training true by default, inplace).
using Dropout1dFuncOptions = DropoutFuncOptions;
/// Options of dropout2d.
using Dropout2dFuncOptions = DropoutFuncOptions;
/// Options of dropout3d.
using Dropout3dFuncOptions = DropoutFuncOptions;
/// Options of alpha_dropout and feature_alpha_dropout: training is false by default, as LibTorch's.
struct AlphaDropoutFuncOptions {
  /// Probability of dropping an element (a channel for the feature form), in [0, 1].
  VNN_ARG(double, p) = 0.5;
  /// Whether to drop (false: the identity).
  VNN_ARG(bool, training) = false;
  /// Write the result into the input.
  VNN_ARG(bool, inplace) = false;
};
/// Options of feature_alpha_dropout.
using FeatureAlphaDropoutFuncOptions = AlphaDropoutFuncOptions;

/// Zeroes whole channels of [N, C, L] (or unbatched [C, L]) with probability p, scaling the rest by 1 / (1 - p).
Tensor dropout1d(Tensor input, const Dropout1dFuncOptions& options = {});
/// Zeroes whole channels of [N, C, H, W] (or unbatched [C, H, W]).
Tensor dropout2d(Tensor input, const Dropout2dFuncOptions& options = {});
/// Zeroes whole channels of [N, C, D, H, W] (or unbatched [C, D, H, W]).
Tensor dropout3d(Tensor input, const Dropout3dFuncOptions& options = {});
/// Sets elements to SELU's negative saturation with probability p, then an
/// affine map a x + b that keeps zero mean and unit variance (PyTorch's a, b).
Tensor alpha_dropout(Tensor input, const AlphaDropoutFuncOptions& options = {});
/// alpha_dropout with one draw per channel of [N, C, *] (at least 2 dims).
Tensor feature_alpha_dropout(Tensor input, const FeatureAlphaDropoutFuncOptions& options = {});
}  // namespace functional

/// The dropout modules of this header: one class template over the
/// functional form; `Kind` picks it (see the aliases below).
template <int Kind>
class DropoutFamilyImpl : public Cloneable<DropoutFamilyImpl<Kind>> {
 public:
  /// The layer from options (ValueError for p outside [0, 1]).
  explicit DropoutFamilyImpl(const DropoutOptions& options = {});
  /// The layer with drop probability p.
  explicit DropoutFamilyImpl(double p) : DropoutFamilyImpl(DropoutOptions(p)) {}
  void reset() override {}
  /// The functional form with training = is_training(); the identity in eval.
  Tensor forward(const Tensor& x);
  /// "Dropout2d(p=0.5, inplace=false)".
  std::string describe() const override;
  /// The options the layer was built with.
  DropoutOptions options;
};

/// Channel-wise dropout of [N, C, L] (torch.nn.Dropout1d).
using Dropout1dImpl = DropoutFamilyImpl<1>;
/// Channel-wise dropout of [N, C, H, W] (torch.nn.Dropout2d).
using Dropout2dImpl = DropoutFamilyImpl<2>;
/// Channel-wise dropout of [N, C, D, H, W] (torch.nn.Dropout3d).
using Dropout3dImpl = DropoutFamilyImpl<3>;
/// Alpha dropout (torch.nn.AlphaDropout).
using AlphaDropoutImpl = DropoutFamilyImpl<4>;
/// Channel-wise alpha dropout (torch.nn.FeatureAlphaDropout).
using FeatureAlphaDropoutImpl = DropoutFamilyImpl<5>;
/// The holder of Dropout1dImpl.
VNN_MODULE(Dropout1d);
/// The holder of Dropout2dImpl.
VNN_MODULE(Dropout2d);
/// The holder of Dropout3dImpl.
VNN_MODULE(Dropout3d);
/// The holder of AlphaDropoutImpl.
VNN_MODULE(AlphaDropout);
/// The holder of FeatureAlphaDropoutImpl.
VNN_MODULE(FeatureAlphaDropout);

}  // namespace vnn::nn
