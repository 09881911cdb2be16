// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// InstanceNorm1d/2d/3d, LocalResponseNorm and CrossMapLRN2d of
// include/vnn/nn/instance_norm.h, composed from existing ops.
#include "vnn/nn/instance_norm.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "vnn/autograd.h"
#include "vnn/detail/message.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/linalg.h"
#include "vnn/nn_ops.h"
#include "vnn/reduction.h"

namespace vnn::nn {

namespace functional {

namespace {

void norm_check_floating(const Tensor& t, const char* op) {
  VNN_CHECK(ValueError, t.defined(), op, ": argument 'input' is an undefined tensor");
  VNN_CHECK(DTypeError, is_floating(t.dtype()), op, ": input must be floating, got ", t.dtype(),
            "; convert it with .to(vnn::kFloat)");
}

// [C] repeated n times into [n * C] (a copy: batch_norm may update it in place).
Tensor repeat_channels(const Tensor& t, int64_t n) {
  if (!t.defined()) return t;
  return t.reshape({1, t.numel()}).expand({n, t.numel()}).reshape({n * t.numel()});
}

// scale = k + alpha / size * (window @ x^2) over dim 1 of x [N, C, *], where
// window[c][j] counts how often channel j enters channel c's sum; returns x * scale^-beta.
Tensor channel_window_norm(const Tensor& x, const std::vector<double>& window, int64_t size, double alpha,
                           double beta, double k) {
  const int64_t n = x.size(0), c = x.size(1), rest = x.numel() / std::max<int64_t>(n * c, 1);
  Tensor w = from_vector(window, {c, c}, x.device()).to(x.dtype());
  Tensor sq = mul(x, x).reshape({n, c, rest});
  Tensor scale = add(mul(matmul(w, sq), alpha / double(size)), k).reshape(x.sizes());
  return mul(x, pow(scale, -beta));
}

}  // namespace

Tensor instance_norm(const Tensor& input, const InstanceNormFuncOptions& o) {
  norm_check_floating(input, "instance_norm");
  VNN_CHECK(ShapeError, input.dim() >= 3, "instance_norm: input must be [N, C, *] with at least one spatial dim, got ",
            input.sizes());
  const int64_t n = input.size(0), c = input.size(1);
  for (const Tensor* t : {&o.weight(), &o.bias(), &o.running_mean(), &o.running_var()})
    VNN_CHECK(ShapeError, !t->defined() || t->numel() == c, "instance_norm: weight, bias and running stats must have ",
              c, " elements (the channels of input ", input.sizes(), "), got ", t->sizes());
  if (!o.use_input_stats()) {
    VNN_CHECK(ValueError, o.running_mean().defined() && o.running_var().defined(),
              "instance_norm: use_input_stats(false) needs running_mean and running_var");
    return std::get<0>(vnn::batch_norm(input, o.weight(), o.bias(), o.running_mean(), o.running_var(), false,
                                       o.momentum(), o.eps()));
  }
  VNN_CHECK(ValueError, input.numel() == 0 || input.numel() / (n * c) > 1, "instance_norm: expected more than 1 ",
            "spatial element per channel when using input statistics, got input ", input.sizes());
  // PyTorch's formulation: batch norm of the [1, N * C, *] view, with the
  // running stats repeated per sample and averaged back over the samples.
  Shape view = input.sizes();
  view[0] = 1;
  view[1] = n * c;
  Tensor rm = repeat_channels(o.running_mean(), n), rv = repeat_channels(o.running_var(), n);
  Tensor out = std::get<0>(vnn::batch_norm(input.reshape(view), repeat_channels(o.weight(), n),
                                           repeat_channels(o.bias(), n), rm, rv, true, o.momentum(), o.eps()));
  {
    autograd::NoGradGuard g;
    for (auto [repeated, running] : {std::pair{rm, o.running_mean()}, std::pair{rv, o.running_var()}})
      if (repeated.defined()) running.copy_(mean(repeated.reshape({n, c}), {0}));
  }
  return out.reshape(input.sizes());
}

Tensor local_response_norm(const Tensor& input, const LocalResponseNormFuncOptions& o) {
  norm_check_floating(input, "local_response_norm");
  VNN_CHECK(ShapeError, input.dim() >= 3, "local_response_norm: expected input of 3 or more dims [N, C, *], got ",
            input.sizes());
  VNN_CHECK(ValueError, o.size() >= 1, "local_response_norm: size must be >= 1, got ", o.size());
  // PyTorch pads size/2 channels before and (size-1)/2 after, then averages over size.
  const int64_t c = input.size(1), before = o.size() / 2, after = (o.size() - 1) / 2;
  std::vector<double> window(size_t(c * c), 0.0);
  for (int64_t i = 0; i < c; ++i)
    for (int64_t j = std::max<int64_t>(0, i - before); j <= std::min(c - 1, i + after); ++j) window[size_t(i * c + j)] = 1;
  return channel_window_norm(input, window, o.size(), o.alpha(), o.beta(), o.k());
}

}  // namespace functional

// ---- InstanceNorm ----------------------------------------------------------------

template <class D>
InstanceNormImplBase<D>::InstanceNormImplBase(const char* type, int spatial_dims, const InstanceNormOptions& opt)
    : Cloneable<D>(type), options(opt), spatial_dims_(spatial_dims) {
  VNN_CHECK(ValueError, opt.num_features() > 0, type, ": num_features must be positive, got ", opt.num_features());
  reset();
}

template <class D>
void InstanceNormImplBase<D>::reset() {
  const int64_t c = options.num_features();
  weight = bias = running_mean = running_var = num_batches_tracked = Tensor();
  if (options.affine()) {
    weight = this->register_parameter("weight", ones({c}));
    bias = this->register_parameter("bias", zeros({c}));
  }
  if (options.track_running_stats()) {
    running_mean = this->register_buffer("running_mean", zeros({c}));
    running_var = this->register_buffer("running_var", ones({c}));
    num_batches_tracked = this->register_buffer("num_batches_tracked", zeros({}, kInt64));
  }
}

template <class D>
Tensor InstanceNormImplBase<D>::forward(const Tensor& x) {
  VNN_CHECK(ValueError, x.defined(), this->type_name(), ": argument 'input' is an undefined tensor");
  const int batched = spatial_dims_ + 2;
  VNN_CHECK(ShapeError, x.dim() == batched || x.dim() == batched - 1, this->type_name(), ": expected ", batched - 1,
            "-D (unbatched) or ", batched, "-D (batched) input, got ", x.dim(), "-D input ", x.sizes());
  Tensor in = x.dim() == batched ? x : x.unsqueeze(0);
  const bool per_channel = options.affine() || options.track_running_stats();
  VNN_CHECK(ShapeError, !per_channel || in.size(1) == options.num_features(), this->type_name(),
            ": expected input's size at the channel dim to match num_features (", options.num_features(), "), got ",
            x.sizes());
  const bool use_input_stats = this->is_training() || !options.track_running_stats();
  if (this->is_training() && num_batches_tracked.defined()) {
    autograd::NoGradGuard g;
    num_batches_tracked.add_(1.0);
  }
  Tensor out = functional::instance_norm(in, functional::InstanceNormFuncOptions()
                                                 .running_mean(running_mean)
                                                 .running_var(running_var)
                                                 .weight(weight)
                                                 .bias(bias)
                                                 .use_input_stats(use_input_stats)
                                                 .momentum(options.momentum())
                                                 .eps(options.eps()));
  return x.dim() == batched ? out : out.squeeze(0);
}

template <class D>
std::string InstanceNormImplBase<D>::describe() const {
  return ::vnn::detail::str_cat(this->type_name(), "(", options.num_features(), ", eps=", options.eps(),
                                ", momentum=", options.momentum(), ", affine=", options.affine() ? "true" : "false",
                                ", track_running_stats=", options.track_running_stats() ? "true" : "false", ")");
}

template class InstanceNormImplBase<InstanceNorm1dImpl>;
template class InstanceNormImplBase<InstanceNorm2dImpl>;
template class InstanceNormImplBase<InstanceNorm3dImpl>;

// ---- cross-channel norms -------------------------------------------------------

LocalResponseNormImpl::LocalResponseNormImpl(const LocalResponseNormOptions& o)
    : Cloneable("LocalResponseNorm"), options(o) {
  VNN_CHECK(ValueError, o.size() >= 1, "LocalResponseNorm: size must be >= 1, got ", o.size());
}

Tensor LocalResponseNormImpl::forward(const Tensor& x) { return functional::local_response_norm(x, options); }

std::string LocalResponseNormImpl::describe() const {
  return ::vnn::detail::str_cat("LocalResponseNorm(", options.size(), ", alpha=", options.alpha(),
                                ", beta=", options.beta(), ", k=", options.k(), ")");
}

CrossMapLRN2dImpl::CrossMapLRN2dImpl(const CrossMapLRN2dOptions& o) : Cloneable("CrossMapLRN2d"), options(o) {
  VNN_CHECK(ValueError, o.size() >= 1, "CrossMapLRN2d: size must be >= 1, got ", o.size());
}

Tensor CrossMapLRN2dImpl::forward(const Tensor& x) {
  functional::norm_check_floating(x, "CrossMapLRN2d");
  VNN_CHECK(ShapeError, x.dim() == 4, "CrossMapLRN2d: expected a 4-D input [N, C, H, W], got ", x.sizes());
  // LibTorch's running sum over channels, replayed on counts: channel 0 sums
  // the first pre_pad squares; channel c adds square c + pre_pad - 1 (while
  // in range) and drops square c - pre_pad once c > pre_pad.
  const int64_t c = x.size(1), pre_pad = (options.size() - 1) / 2 + 1;
  std::vector<double> window(size_t(c * c), 0.0);
  for (int64_t j = 0; j < std::min(pre_pad, c); ++j) window[size_t(j)] = 1;
  for (int64_t i = 1; i < c; ++i) {
    std::copy_n(window.begin() + (i - 1) * c, c, window.begin() + i * c);
    if (i < c - pre_pad + 1) window[size_t(i * c + i + pre_pad - 1)] += 1;
    if (i > pre_pad) window[size_t(i * c + i - pre_pad)] -= 1;
  }
  return functional::channel_window_norm(x, window, options.size(), options.alpha(), options.beta(),
                                         double(options.k()));
}

std::string CrossMapLRN2dImpl::describe() const {
  return ::vnn::detail::str_cat("CrossMapLRN2d(", options.size(), ", alpha=", options.alpha(),
                                ", beta=", options.beta(), ", k=", options.k(), ")");
}

}  // namespace vnn::nn
