#include "vnn/nn/normalization.h"

#include "vnn/autograd.h"
#include "vnn/error.h"

namespace vnn::nn {

BatchNorm::BatchNorm(const char* type, int expected_dim, int64_t n, double eps, double momentum, bool affine,
                     bool track)
    : Module(type), expected_dim_(expected_dim), num_features_(n), eps_(eps), momentum_(momentum) {
  if (n <= 0) throw ValueError(std::string(type) + ": num_features must be positive");
  if (affine) {
    weight = register_parameter("weight", ones({n}));
    bias = register_parameter("bias", zeros({n}));
  }
  if (track) {
    running_mean = register_buffer("running_mean", zeros({n}));
    running_var = register_buffer("running_var", ones({n}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, kInt64));
  }
}

Tensor BatchNorm::forward(const Tensor& x) {
  bool ok_dim = expected_dim_ == 2 ? (x.dim() == 2 || x.dim() == 3) : x.dim() == expected_dim_;
  if (!ok_dim || x.size(1) != num_features_)
    throw ShapeError(type_name() + ": expected input [N, " + std::to_string(num_features_) +
                     (expected_dim_ == 4 ? ", H, W]" : "] or [N, C, L]") + ", got " + x.sizes().str());
  bool use_batch = is_training() || !running_mean.defined();
  if (is_training() && num_batches_tracked.defined()) {
    autograd::NoGradGuard g;
    num_batches_tracked.add_(1.0);
  }
  return std::get<0>(batch_norm(x, weight, bias, running_mean, running_var, use_batch, momentum_, eps_));
}

std::string BatchNorm::describe() const {
  return type_name() + "(" + std::to_string(num_features_) + ", eps=" + std::to_string(eps_) +
         ", momentum=" + std::to_string(momentum_) + ")";
}

LayerNorm::LayerNorm(const Shape& shape, double eps, bool affine) : Module("LayerNorm"), shape_(shape), eps_(eps) {
  if (affine) {
    weight = register_parameter("weight", ones(shape));
    bias = register_parameter("bias", zeros(shape));
  }
}

Tensor LayerNorm::forward(const Tensor& x) { return std::get<0>(layer_norm(x, shape_, weight, bias, eps_)); }

std::string LayerNorm::describe() const { return "LayerNorm(" + shape_.str() + ", eps=" + std::to_string(eps_) + ")"; }

GroupNorm::GroupNorm(int64_t groups, int64_t channels, double eps, bool affine)
    : Module("GroupNorm"), groups_(groups), channels_(channels), eps_(eps) {
  if (groups <= 0 || channels % groups)
    throw ValueError("GroupNorm: num_channels (" + std::to_string(channels) + ") must be divisible by num_groups (" +
                     std::to_string(groups) + ")");
  if (affine) {
    weight = register_parameter("weight", ones({channels}));
    bias = register_parameter("bias", zeros({channels}));
  }
}

Tensor GroupNorm::forward(const Tensor& x) { return std::get<0>(group_norm(x, groups_, weight, bias, eps_)); }

std::string GroupNorm::describe() const {
  return "GroupNorm(" + std::to_string(groups_) + ", " + std::to_string(channels_) + ")";
}

}  // namespace vnn::nn
