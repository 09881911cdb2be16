// Normalization layers: BatchNorm1d/2d, LayerNorm, GroupNorm, with
// LibTorch's options:
//   vnn::nn::BatchNorm2d bn(vnn::nn::BatchNorm2dOptions(64).momentum(0.3).eps(1e-3));   // or BatchNorm2d(64)
#pragma once
#include <string>

#include "vnn/nn/module.h"
#include "vnn/nn/options.h"
#include "vnn/nn_ops.h"

namespace vnn::nn {

struct BatchNormOptions {
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT: implicit, as LibTorch's
  VNN_ARG(int64_t, num_features);
  VNN_ARG(double, eps) = 1e-5;
  VNN_ARG(double, momentum) = 0.1;
  VNN_ARG(bool, affine) = true;
  VNN_ARG(bool, track_running_stats) = true;
};
using BatchNorm1dOptions = BatchNormOptions;
using BatchNorm2dOptions = BatchNormOptions;

// Batch normalisation over [N, C] or [N, C, L] (1d) or [N, C, H, W] (2d):
// batch statistics in training (running statistics updated with
// momentum), running statistics in eval. Derived: BatchNorm1dImpl or
// BatchNorm2dImpl (instantiated in normalization.cpp).
template <class Derived>
class BatchNormImplBase : public Cloneable<Derived> {
 public:
  BatchNormImplBase(const char* type, int expected_dim, const BatchNormOptions& options);
  void reset() override;
  Tensor forward(const Tensor& x) override;
  std::string describe() const override;
  BatchNormOptions options;
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 private:
  int expected_dim_;
};

class BatchNorm1dImpl : public BatchNormImplBase<BatchNorm1dImpl> {
 public:
  explicit BatchNorm1dImpl(const BatchNormOptions& options) : BatchNormImplBase("BatchNorm1d", 2, options) {}
  explicit BatchNorm1dImpl(int64_t num_features, double eps = 1e-5, double momentum = 0.1, bool affine = true,
                           bool track_running_stats = true)
      : BatchNorm1dImpl(BatchNormOptions(num_features).eps(eps).momentum(momentum).affine(affine).track_running_stats(
            track_running_stats)) {}
};
VNN_MODULE(BatchNorm1d);
class BatchNorm2dImpl : public BatchNormImplBase<BatchNorm2dImpl> {
 public:
  explicit BatchNorm2dImpl(const BatchNormOptions& options) : BatchNormImplBase("BatchNorm2d", 4, options) {}
  explicit BatchNorm2dImpl(int64_t num_features, double eps = 1e-5, double momentum = 0.1, bool affine = true,
                           bool track_running_stats = true)
      : BatchNorm2dImpl(BatchNormOptions(num_features).eps(eps).momentum(momentum).affine(affine).track_running_stats(
            track_running_stats)) {}
};
VNN_MODULE(BatchNorm2d);

struct LayerNormOptions {
  LayerNormOptions(Shape normalized_shape) : normalized_shape_(normalized_shape) {}  // NOLINT: implicit
  VNN_ARG(Shape, normalized_shape);
  VNN_ARG(double, eps) = 1e-5;
  VNN_ARG(bool, elementwise_affine) = true;
};

class LayerNormImpl : public Cloneable<LayerNormImpl> {
 public:
  explicit LayerNormImpl(const LayerNormOptions& options);
  explicit LayerNormImpl(const Shape& normalized_shape, double eps = 1e-5, bool elementwise_affine = true)
      : LayerNormImpl(LayerNormOptions(normalized_shape).eps(eps).elementwise_affine(elementwise_affine)) {}
  void reset() override;
  Tensor forward(const Tensor& x) override;
  std::string describe() const override;
  LayerNormOptions options;
  Tensor weight, bias;
};
VNN_MODULE(LayerNorm);

struct GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels) : num_groups_(num_groups), num_channels_(num_channels) {}
  VNN_ARG(int64_t, num_groups);
  VNN_ARG(int64_t, num_channels);
  VNN_ARG(double, eps) = 1e-5;
  VNN_ARG(bool, affine) = true;
};

class GroupNormImpl : public Cloneable<GroupNormImpl> {
 public:
  explicit GroupNormImpl(const GroupNormOptions& options);
  GroupNormImpl(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true)
      : GroupNormImpl(GroupNormOptions(num_groups, num_channels).eps(eps).affine(affine)) {}
  void reset() override;
  Tensor forward(const Tensor& x) override;
  std::string describe() const override;
  GroupNormOptions options;
  Tensor weight, bias;
};
VNN_MODULE(GroupNorm);

}  // namespace vnn::nn
