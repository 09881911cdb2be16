// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// InstanceNorm1d/2d/3d, LocalResponseNorm and CrossMapLRN2d, with LibTorch's
// options and functional forms:
//   vnn::nn::InstanceNorm2d in(vnn::nn::InstanceNorm2dOptions(64).affine(true));
//   auto y = F::instance_norm(x, F::InstanceNormFuncOptions().eps(1e-3));
//   auto z = F::local_response_norm(x, F::LocalResponseNormFuncOptions(5).alpha(1e-3));
// Instance norm runs vnn::batch_norm on the [1, N * C, *] view (one kernel
// pass per direction, as PyTorch does); the cross-channel norms are one
// channel-window GEMM on the squares, so both run on every device and
// backpropagate through existing ops.
#pragma once
#include <string>

#include "vnn/nn/module.h"
#include "vnn/nn/options.h"

namespace vnn::nn {

/// Options of InstanceNorm1d/2d/3d (torch.nn.InstanceNormOptions).
struct InstanceNormOptions {
  /// Normalises `num_features` channels; implicit, as LibTorch's.
  InstanceNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT: implicit, as LibTorch's
  /// Number of channels (C).
  VNN_ARG(int64_t, num_features);
  /// Added to the variance for stability (default 1e-5).
  VNN_ARG(double, eps) = 1e-5;
  /// Weight of the new statistic in the running averages (default 0.1).
  VNN_ARG(double, momentum) = 0.1;
  /// Whether a learned per-channel scale and shift are applied (default false, unlike BatchNorm).
  VNN_ARG(bool, affine) = false;
  /// Whether running mean and variance are kept and used in eval (default false).
  VNN_ARG(bool, track_running_stats) = false;
};
/// Options of InstanceNorm1d.
using InstanceNorm1dOptions = InstanceNormOptions;
/// Options of InstanceNorm2d.
using InstanceNorm2dOptions = InstanceNormOptions;
/// Options of InstanceNorm3d.
using InstanceNorm3dOptions = InstanceNormOptions;

/// Options of LocalResponseNorm: size, alpha, beta, k.
struct LocalResponseNormOptions {
  /// Sums over `size` neighbouring channels; implicit, as LibTorch's.
  LocalResponseNormOptions(int64_t size) : size_(size) {}  // NOLINT: implicit, as LibTorch's
  /// Number of neighbouring channels summed over (>= 1).
  VNN_ARG(int64_t, size);
  /// Multiplicative factor (default 1e-4).
  VNN_ARG(double, alpha) = 1e-4;
  /// Exponent (default 0.75).
  VNN_ARG(double, beta) = 0.75;
  /// Additive factor (default 1).
  VNN_ARG(double, k) = 1.0;
};

/// Options of CrossMapLRN2d: size, alpha, beta, k (an integer, as LibTorch's).
struct CrossMapLRN2dOptions {
  /// Sums over about `size` neighbouring channels; implicit, as LibTorch's.
  CrossMapLRN2dOptions(int64_t size) : size_(size) {}  // NOLINT: implicit, as LibTorch's
  /// Window size (>= 1).
  VNN_ARG(int64_t, size);
  /// Multiplicative factor (default 1e-4).
  VNN_ARG(double, alpha) = 1e-4;
  /// Exponent (default 0.75).
  VNN_ARG(double, beta) = 0.75;
  /// Additive factor (default 1).
  VNN_ARG(int64_t, k) = 1;
};

namespace functional {
/// Options of instance_norm: running stats, weight, bias, use_input_stats, momentum, eps.
struct InstanceNormFuncOptions {
  /// Running mean [C], updated in place while use_input_stats (may be undefined).
  VNN_ARG(Tensor, running_mean);
  /// Running variance [C], updated in place while use_input_stats (may be undefined).
  VNN_ARG(Tensor, running_var);
  /// Per-channel scale [C] (may be undefined).
  VNN_ARG(Tensor, weight);
  /// Per-channel shift [C] (may be undefined).
  VNN_ARG(Tensor, bias);
  /// Normalise with each instance's own statistics (false: with the running ones).
  VNN_ARG(bool, use_input_stats) = true;
  /// Weight of the new statistic in the running averages.
  VNN_ARG(double, momentum) = 0.1;
  /// Added to the variance for stability.
  VNN_ARG(double, eps) = 1e-5;
};
/// Options of local_response_norm.
using LocalResponseNormFuncOptions = LocalResponseNormOptions;

/// Normalises each (sample, channel) of [N, C, *] over its spatial dims;
/// with use_input_stats the running stats (if given) take the mean over N of
/// the per-instance statistics, as PyTorch's.
Tensor instance_norm(const Tensor& input, const InstanceNormFuncOptions& options = {});
/// x / (k + alpha / size * sum of x^2 over channels [c - size/2, c + (size-1)/2])^beta
/// for [N, C, *] (at least 3 dims), as torch.nn.functional.local_response_norm.
Tensor local_response_norm(const Tensor& input, const LocalResponseNormFuncOptions& options);
}  // namespace functional

/// Instance normalisation (torch.nn.InstanceNorm1d/2d/3d): each sample's
/// channels normalised over their spatial dims. Derived: the 1d/2d/3d class.
template <class Derived>
class InstanceNormImplBase : public Cloneable<Derived> {
 public:
  /// The layer named `type` for inputs of `spatial_dims` spatial dims (batched or not).
  InstanceNormImplBase(const char* type, int spatial_dims, const InstanceNormOptions& options);
  /// Creates weight / bias (affine) and running_mean / running_var / num_batches_tracked (track_running_stats).
  void reset() override;
  /// Instance statistics in training or without running stats; the running ones in eval.
  Tensor forward(const Tensor& x);
  /// "InstanceNorm2d(64, eps=1e-05, momentum=0.1, affine=false, track_running_stats=false)".
  std::string describe() const override;
  /// The options the layer was built with.
  InstanceNormOptions options;
  /// Learned per-channel scale [C] (affine; undefined otherwise).
  Tensor weight;
  /// Learned per-channel shift [C] (affine; undefined otherwise).
  Tensor bias;
  /// Running mean [C] (track_running_stats; undefined otherwise).
  Tensor running_mean;
  /// Running variance [C] (track_running_stats; undefined otherwise).
  Tensor running_var;
  /// Training batches seen, an int64 scalar (track_running_stats).
  Tensor num_batches_tracked;

 private:
  int spatial_dims_;
};

/// InstanceNorm over [N, C, L] or unbatched [C, L] (torch.nn.InstanceNorm1d).
class InstanceNorm1dImpl : public InstanceNormImplBase<InstanceNorm1dImpl> {
 public:
  /// An InstanceNorm1d from options.
  explicit InstanceNorm1dImpl(const InstanceNormOptions& options) : InstanceNormImplBase("InstanceNorm1d", 1, options) {}
};
/// The holder of InstanceNorm1dImpl.
VNN_MODULE(InstanceNorm1d);
/// InstanceNorm over [N, C, H, W] or unbatched [C, H, W] (torch.nn.InstanceNorm2d).
class InstanceNorm2dImpl : public InstanceNormImplBase<InstanceNorm2dImpl> {
 public:
  /// An InstanceNorm2d from options.
  explicit InstanceNorm2dImpl(const InstanceNormOptions& options) : InstanceNormImplBase("InstanceNorm2d", 2, options) {}
};
/// The holder of InstanceNorm2dImpl.
VNN_MODULE(InstanceNorm2d);
/// InstanceNorm over [N, C, D, H, W] or unbatched [C, D, H, W] (torch.nn.InstanceNorm3d).
class InstanceNorm3dImpl : public InstanceNormImplBase<InstanceNorm3dImpl> {
 public:
  /// An InstanceNorm3d from options.
  explicit InstanceNorm3dImpl(const InstanceNormOptions& options) : InstanceNormImplBase("InstanceNorm3d", 3, options) {}
};
/// The holder of InstanceNorm3dImpl.
VNN_MODULE(InstanceNorm3d);

/// Local response normalisation across channels (torch.nn.LocalResponseNorm).
class LocalResponseNormImpl : public Cloneable<LocalResponseNormImpl> {
 public:
  /// A LocalResponseNorm from options (ValueError for size < 1).
  explicit LocalResponseNormImpl(const LocalResponseNormOptions& options);
  void reset() override {}
  /// functional::local_response_norm(x, options).
  Tensor forward(const Tensor& x);
  std::string describe() const override;
  /// The options the layer was built with.
  LocalResponseNormOptions options;
};
/// The holder of LocalResponseNormImpl.
VNN_MODULE(LocalResponseNorm);

/// Lua Torch's SpatialCrossMapLRN on [N, C, H, W] (torch.nn.CrossMapLRN2d):
/// x * (k + alpha / size * window sum of x^2)^-beta with LibTorch's exact
/// channel windows (its running-sum recurrence, edge quirks included).
class CrossMapLRN2dImpl : public Cloneable<CrossMapLRN2dImpl> {
 public:
  /// A CrossMapLRN2d from options (ValueError for size < 1).
  explicit CrossMapLRN2dImpl(const CrossMapLRN2dOptions& options);
  void reset() override {}
  /// The normalised x (ShapeError unless x is 4-D).
  Tensor forward(const Tensor& x);
  std::string describe() const override;
  /// The options the layer was built with.
  CrossMapLRN2dOptions options;
};
/// The holder of CrossMapLRN2dImpl.
VNN_MODULE(CrossMapLRN2d);

}  // namespace vnn::nn
