// Normalization layers: BatchNorm1d/2d, LayerNorm, GroupNorm.
#pragma once
#include <string>

#include "vnn/nn/module.h"
#include "vnn/nn_ops.h"

namespace vnn::nn {

// Batch normalisation over [N, C] (1d) or [N, C, H, W] (2d): batch
// statistics in training (running statistics updated with momentum),
// running statistics in eval.
class BatchNorm : public Module {
 public:
  BatchNorm(const char* type, int expected_dim, int64_t num_features, double eps, double momentum, bool affine,
            bool track_running_stats);
  Tensor forward(const Tensor& x) override;
  std::string describe() const override;
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 private:
  int expected_dim_;
  int64_t num_features_;
  double eps_, momentum_;
};

class BatchNorm1d : public BatchNorm {
 public:
  explicit BatchNorm1d(int64_t num_features, double eps = 1e-5, double momentum = 0.1, bool affine = true,
                       bool track_running_stats = true)
      : BatchNorm("BatchNorm1d", 2, num_features, eps, momentum, affine, track_running_stats) {}
};
class BatchNorm2d : public BatchNorm {
 public:
  explicit BatchNorm2d(int64_t num_features, double eps = 1e-5, double momentum = 0.1, bool affine = true,
                       bool track_running_stats = true)
      : BatchNorm("BatchNorm2d", 4, num_features, eps, momentum, affine, track_running_stats) {}
};

class LayerNorm : public Module {
 public:
  explicit LayerNorm(const Shape& normalized_shape, double eps = 1e-5, bool elementwise_affine = true);
  Tensor forward(const Tensor& x) override;
  std::string describe() const override;
  Tensor weight, bias;

 private:
  Shape shape_;
  double eps_;
};

class GroupNorm : public Module {
 public:
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true);
  Tensor forward(const Tensor& x) override;
  std::string describe() const override;
  Tensor weight, bias;

 private:
  int64_t groups_, channels_;
  double eps_;
};

}  // namespace vnn::nn
