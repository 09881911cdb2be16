// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Normalization layers: BatchNorm1d/2d/3d, LayerNorm, GroupNorm, with
// LibTorch's options:
//   vnn::nn::BatchNorm2d bn(vnn::nn::BatchNorm2dOptions(64).momentum(0.3).eps(1e-3));   // or BatchNorm2d(64)
#pragma once
#include <string>

#include "vnn/nn/module.h"
#include "vnn/nn/options.h"
#include "vnn/nn_ops.h"

namespace vnn::nn {

/// Options of BatchNorm1d / BatchNorm2d (torch.nn.BatchNormOptions).
struct BatchNormOptions {
  /// Normalises `num_features` channels; implicit, as LibTorch's.
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT: implicit, as LibTorch's
  /// Number of channels (C).
  VNN_ARG(int64_t, num_features);
  /// Added to the variance for stability (default 1e-5).
  VNN_ARG(double, eps) = 1e-5;
  /// Weight of the new batch statistic in the running averages (default 0.1).
  VNN_ARG(double, momentum) = 0.1;
  /// Whether a learned per-channel scale and shift are applied (default true).
  VNN_ARG(bool, affine) = true;
  /// Whether running mean and variance are kept for eval (default true).
  VNN_ARG(bool, track_running_stats) = true;
};
/// Options of BatchNorm1d.
using BatchNorm1dOptions = BatchNormOptions;
/// Options of BatchNorm2d.
using BatchNorm2dOptions = BatchNormOptions;
/// Options of BatchNorm3d.
using BatchNorm3dOptions = BatchNormOptions;

/// Batch normalisation over [N, C] or [N, C, L] (1d), [N, C, H, W] (2d) or [N, C, D, H, W] (3d):
/// batch statistics in training (running statistics updated with
/// momentum), running statistics in eval. Derived: BatchNorm1dImpl,
/// BatchNorm2dImpl or BatchNorm3dImpl (instantiated in normalization.cpp).
template <class Derived>
class BatchNormImplBase : public Cloneable<Derived> {
 public:
  /// The layer named `type`, checking inputs of `expected_dim` dims (or one more for 1d), from options.
  BatchNormImplBase(const char* type, int expected_dim, const BatchNormOptions& options);
  /// Creates the scale, shift and running statistics for options.num_features().
  void reset() override;
  /// Normalises x with batch statistics in training (updating the running ones), with the running ones in eval.
  Tensor forward(const Tensor& x);
  /// "BatchNorm2d(64, eps=1e-05, momentum=0.1, ...)" style summary.
  std::string describe() const override;
  /// The options the layer was built with.
  BatchNormOptions options;
  /// Learned per-channel scale [C] (affine; undefined otherwise).
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;
  /// \var bias
  /// Learned per-channel shift [C] (affine; undefined otherwise).
  /// \var running_mean
  /// Running mean [C] used in eval (track_running_stats; undefined otherwise).
  /// \var running_var
  /// Running variance [C] used in eval (track_running_stats; undefined otherwise).
  /// \var num_batches_tracked
  /// Number of training batches seen, an int64 scalar (track_running_stats).

 private:
  int expected_dim_;
};

/// Batch normalisation over [N, C] or [N, C, L] (torch.nn.BatchNorm1d).
class BatchNorm1dImpl : public BatchNormImplBase<BatchNorm1dImpl> {
 public:
  /// A BatchNorm1d from options.
  explicit BatchNorm1dImpl(const BatchNormOptions& options) : BatchNormImplBase("BatchNorm1d", 2, options) {}
  /// BatchNorm1d(num_features, eps, momentum, affine, track_running_stats).
  explicit BatchNorm1dImpl(int64_t num_features, double eps = 1e-5, double momentum = 0.1, bool affine = true,
                           bool track_running_stats = true)
      : BatchNorm1dImpl(BatchNormOptions(num_features).eps(eps).momentum(momentum).affine(affine).track_running_stats(
            track_running_stats)) {}
};
/// The holder of BatchNorm1dImpl.
VNN_MODULE(BatchNorm1d);
/// Batch normalisation over [N, C, H, W] per channel (torch.nn.BatchNorm2d).
class BatchNorm2dImpl : public BatchNormImplBase<BatchNorm2dImpl> {
 public:
  /// A BatchNorm2d from options.
  explicit BatchNorm2dImpl(const BatchNormOptions& options) : BatchNormImplBase("BatchNorm2d", 4, options) {}
  /// BatchNorm2d(num_features, eps, momentum, affine, track_running_stats).
  explicit BatchNorm2dImpl(int64_t num_features, double eps = 1e-5, double momentum = 0.1, bool affine = true,
                           bool track_running_stats = true)
      : BatchNorm2dImpl(BatchNormOptions(num_features).eps(eps).momentum(momentum).affine(affine).track_running_stats(
            track_running_stats)) {}
};
/// The holder of BatchNorm2dImpl.
VNN_MODULE(BatchNorm2d);
/// Batch normalisation over [N, C, D, H, W] per channel (torch.nn.BatchNorm3d).
class BatchNorm3dImpl : public BatchNormImplBase<BatchNorm3dImpl> {
 public:
  /// A BatchNorm3d from options.
  explicit BatchNorm3dImpl(const BatchNormOptions& options) : BatchNormImplBase("BatchNorm3d", 5, options) {}
  /// BatchNorm3d(num_features, eps, momentum, affine, track_running_stats).
  explicit BatchNorm3dImpl(int64_t num_features, double eps = 1e-5, double momentum = 0.1, bool affine = true,
                           bool track_running_stats = true)
      : BatchNorm3dImpl(BatchNormOptions(num_features).eps(eps).momentum(momentum).affine(affine).track_running_stats(
            track_running_stats)) {}
};
/// The holder of BatchNorm3dImpl.
VNN_MODULE(BatchNorm3d);

/// Options of LayerNorm: the trailing shape normalised over, eps, affine.
struct LayerNormOptions {
  /// Normalises over the last dims, of sizes `normalized_shape`; implicit.
  LayerNormOptions(Shape normalized_shape) : normalized_shape_(normalized_shape) {}  // NOLINT: implicit
  /// Sizes of the trailing dims normalised over.
  VNN_ARG(Shape, normalized_shape);
  /// Added to the variance for stability (default 1e-5).
  VNN_ARG(double, eps) = 1e-5;
  /// Whether a learned elementwise scale and shift of normalized_shape are applied (default true).
  VNN_ARG(bool, elementwise_affine) = true;
};

/// Normalises each sample over its trailing normalized_shape dims (torch.nn.LayerNorm).
class LayerNormImpl : public Cloneable<LayerNormImpl> {
 public:
  /// A LayerNorm from options.
  explicit LayerNormImpl(const LayerNormOptions& options);
  /// LayerNorm(normalized_shape, eps, elementwise_affine).
  explicit LayerNormImpl(const Shape& normalized_shape, double eps = 1e-5, bool elementwise_affine = true)
      : LayerNormImpl(LayerNormOptions(normalized_shape).eps(eps).elementwise_affine(elementwise_affine)) {}
  void reset() override;
  /// LayerNorm applied to x (torch::nn::LayerNorm's forward).
  Tensor forward(const Tensor& x);
  std::string describe() const override;
  /// The options the layer was built with.
  LayerNormOptions options;
  /// Scale and shift of normalized_shape (undefined without elementwise_affine).
  ///@{
  Tensor weight, bias;
  ///@}
};
/// The holder of LayerNormImpl.
VNN_MODULE(LayerNorm);

/// Options of GroupNorm: groups, channels, eps, affine.
struct GroupNormOptions {
  /// `num_channels` channels split into `num_groups` groups (a divisor of num_channels).
  GroupNormOptions(int64_t num_groups, int64_t num_channels) : num_groups_(num_groups), num_channels_(num_channels) {}
  /// Number of groups the channels are split into.
  VNN_ARG(int64_t, num_groups);
  /// Number of channels (C).
  VNN_ARG(int64_t, num_channels);
  /// Added to the variance for stability (default 1e-5).
  VNN_ARG(double, eps) = 1e-5;
  /// Whether a learned per-channel scale and shift are applied (default true).
  VNN_ARG(bool, affine) = true;
};

/// Normalises each sample over groups of channels of [N, C, ...] (torch.nn.GroupNorm).
class GroupNormImpl : public Cloneable<GroupNormImpl> {
 public:
  /// A GroupNorm from options (ValueError when num_groups does not divide num_channels).
  explicit GroupNormImpl(const GroupNormOptions& options);
  /// GroupNorm(num_groups, num_channels, eps, affine).
  GroupNormImpl(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true)
      : GroupNormImpl(GroupNormOptions(num_groups, num_channels).eps(eps).affine(affine)) {}
  void reset() override;
  /// GroupNorm applied to x (torch::nn::GroupNorm's forward).
  Tensor forward(const Tensor& x);
  std::string describe() const override;
  /// The options the layer was built with.
  GroupNormOptions options;
  /// Per-channel scale and shift [C] (undefined without affine).
  ///@{
  Tensor weight, bias;
  ///@}
};
/// The holder of GroupNormImpl.
VNN_MODULE(GroupNorm);

}  // namespace vnn::nn
