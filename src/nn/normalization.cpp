// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "vnn/detail/message.h"
#include "vnn/nn/normalization.h"

#include "vnn/autograd.h"
#include "vnn/error.h"

namespace vnn::nn {

template <class D>
BatchNormImplBase<D>::BatchNormImplBase(const char* type, int expected_dim, const BatchNormOptions& opt)
    : Cloneable<D>(type), options(opt), expected_dim_(expected_dim) {
  if (opt.num_features() <= 0) VNN_THROW(ValueError, type, ": num_features must be positive, got ", opt.num_features());
  reset();
}

template <class D>
void BatchNormImplBase<D>::reset() {
  int64_t n = options.num_features();
  weight = bias = running_mean = running_var = num_batches_tracked = Tensor();
  if (options.affine()) {
    weight = this->register_parameter("weight", ones({n}));
    bias = this->register_parameter("bias", zeros({n}));
  }
  if (options.track_running_stats()) {
    running_mean = this->register_buffer("running_mean", zeros({n}));
    running_var = this->register_buffer("running_var", ones({n}));
    num_batches_tracked = this->register_buffer("num_batches_tracked", zeros({}, kInt64));
  }
}

template <class D>
Tensor BatchNormImplBase<D>::forward(const Tensor& x) {
  int64_t n = options.num_features();
  bool ok_dim = expected_dim_ == 2 ? (x.dim() == 2 || x.dim() == 3) : x.dim() == expected_dim_;
  if (!ok_dim || x.size(1) != n)
    VNN_THROW(ShapeError, this->type_name(), ": expected input [N, ", n,
              (expected_dim_ == 5 ? ", D, H, W]" : expected_dim_ == 4 ? ", H, W]" : "] or [N, C, L]"), ", got ", x.sizes());
  bool use_batch = this->is_training() || !running_mean.defined();
  if (this->is_training() && num_batches_tracked.defined()) {
    autograd::NoGradGuard g;
    num_batches_tracked.add_(1.0);
  }
  return std::get<0>(
      batch_norm(x, weight, bias, running_mean, running_var, use_batch, options.momentum(), options.eps()));
}

template <class D>
std::string BatchNormImplBase<D>::describe() const {
  return this->type_name() + "(" + std::to_string(options.num_features()) + ", eps=" + std::to_string(options.eps()) +
         ", momentum=" + std::to_string(options.momentum()) + ")";
}

template class BatchNormImplBase<BatchNorm1dImpl>;
template class BatchNormImplBase<BatchNorm2dImpl>;
template class BatchNormImplBase<BatchNorm3dImpl>;

LayerNormImpl::LayerNormImpl(const LayerNormOptions& opt) : Cloneable("LayerNorm"), options(opt) { reset(); }

void LayerNormImpl::reset() {
  weight = bias = Tensor();
  if (options.elementwise_affine()) {
    weight = register_parameter("weight", ones(options.normalized_shape()));
    bias = register_parameter("bias", zeros(options.normalized_shape()));
  }
}

Tensor LayerNormImpl::forward(const Tensor& x) {
  return std::get<0>(layer_norm(x, options.normalized_shape(), weight, bias, options.eps()));
}

std::string LayerNormImpl::describe() const {
  return "LayerNorm(" + options.normalized_shape().str() + ", eps=" + std::to_string(options.eps()) + ")";
}

GroupNormImpl::GroupNormImpl(const GroupNormOptions& opt) : Cloneable("GroupNorm"), options(opt) {
  int64_t groups = opt.num_groups(), channels = opt.num_channels();
  if (groups <= 0 || channels % groups)
    VNN_THROW(ValueError, "GroupNorm: num_channels (", channels, ") must be divisible by num_groups (", groups, ")");
  reset();
}

void GroupNormImpl::reset() {
  weight = bias = Tensor();
  if (options.affine()) {
    weight = register_parameter("weight", ones({options.num_channels()}));
    bias = register_parameter("bias", zeros({options.num_channels()}));
  }
}

Tensor GroupNormImpl::forward(const Tensor& x) {
  return std::get<0>(group_norm(x, options.num_groups(), weight, bias, options.eps()));
}

std::string GroupNormImpl::describe() const {
  return "GroupNorm(" + std::to_string(options.num_groups()) + ", " + std::to_string(options.num_channels()) + ")";
}

}  // namespace vnn::nn
