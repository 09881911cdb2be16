// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Convolution and pooling layers over [N, C, H, W] images (or one unbatched
// [C, H, W]), with LibTorch's options:
//   vnn::nn::Conv2d conv(vnn::nn::Conv2dOptions(1, 32, 3).stride(1).padding(1).bias(false));
//   vnn::nn::MaxPool2d pool(vnn::nn::MaxPool2dOptions(2).stride(2));   // or MaxPool2d(2)
#pragma once
#include <tuple>
#include <string>

#include "vnn/nn/module.h"
#include "vnn/nn/options.h"
#include "vnn/nn_ops.h"
#include "vnn/random.h"

namespace vnn::nn {

namespace detail {
/// f(x) for batched [N, C, H, W] input; for an unbatched [C, H, W] one (PyTorch's
/// no-batch-dim form) f over a batch of one, the batch dim dropped again.
template <class F>
Tensor batch_of_one(const Tensor& x, F&& f) {
  return x.dim() == 3 ? f(x.unsqueeze(0)).squeeze(0) : f(x);
}
}  // namespace detail

/// Options of Conv2d (torch.nn.Conv2dOptions): channels, kernel, stride, padding, dilation, groups, bias.
struct Conv2dOptions {
  /// A convolution from `in_channels` to `out_channels` with a `kernel_size` kernel.
  Conv2dOptions(int64_t in_channels, int64_t out_channels, Size2 kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  /// Channels of the input (C of [N, C, H, W]).
  VNN_ARG(int64_t, in_channels);
  /// Channels of the output (filters).
  VNN_ARG(int64_t, out_channels);
  /// Kernel height and width.
  VNN_ARG(Size2, kernel_size);
  /// Step between kernel applications (default 1).
  VNN_ARG(Size2, stride) = 1;
  /// Zeros added on each side (default 0).
  VNN_ARG(Size2, padding) = 0;
  /// Spacing between kernel taps (default 1).
  VNN_ARG(Size2, dilation) = 1;
  /// Channel groups; in_channels and out_channels must be multiples (default 1).
  VNN_ARG(int64_t, groups) = 1;
  /// Whether a learned bias is added (default true).
  VNN_ARG(bool, bias) = true;
};

/// A 2-D convolution over [N, C, H, W] images (torch.nn.Conv2d), initialised as PyTorch does.
class Conv2dImpl : public Cloneable<Conv2dImpl> {
 public:
  /// A Conv2d from options; `gen` draws the initial values (the default generator when null).
  explicit Conv2dImpl(const Conv2dOptions& options, Generator* gen = nullptr);
  /// Conv2d(in_channels, out_channels, kernel_size) with the default options.
  Conv2dImpl(int64_t in_channels, int64_t out_channels, Size2 kernel_size, Generator* gen = nullptr)
      : Conv2dImpl(Conv2dOptions(in_channels, out_channels, kernel_size), gen) {}
  void reset() override { build(nullptr); }
  /// conv2d(x, weight, bias, stride, padding, dilation, groups).
  Tensor forward(const Tensor& x);
  std::string describe() const override;
  /// The options the layer was built with.
  Conv2dOptions options;
  /// The parameters: weight [out, in / groups, kH, kW] and bias [out] (undefined without bias).
  ///@{
  Tensor weight, bias;
  ///@}

 private:
  void build(Generator* gen);
};
/// The holder of Conv2dImpl.
VNN_MODULE(Conv2d);

// stride 0 (the default) means stride = kernel_size, as PyTorch's None.
/// Options of MaxPool2d; a stride of 0 (the default) means the kernel size, as PyTorch's None.
struct MaxPool2dOptions {
  /// A pool over `kernel_size` windows; implicit, as LibTorch's.
  MaxPool2dOptions(Size2 kernel_size) : kernel_size_(kernel_size) {}  // NOLINT: implicit, as LibTorch's
  /// Window height and width.
  VNN_ARG(Size2, kernel_size);
  /// Step between windows (0: the kernel size).
  VNN_ARG(Size2, stride) = 0;
  /// Implicit -inf padding on each side (default 0).
  VNN_ARG(Size2, padding) = 0;
  /// Spacing between window taps (default 1).
  VNN_ARG(Size2, dilation) = 1;
};

/// The maximum over each window of [N, C, H, W] images (torch.nn.MaxPool2d).
class MaxPool2dImpl : public Cloneable<MaxPool2dImpl> {
 public:
  /// A MaxPool2d from options.
  explicit MaxPool2dImpl(const MaxPool2dOptions& options) : Cloneable("MaxPool2d"), options(options) {}
  /// MaxPool2d(kernel_size, stride, padding, dilation).
  explicit MaxPool2dImpl(Size2 kernel_size, Size2 stride = 0, Size2 padding = 0, Size2 dilation = 1)
      : MaxPool2dImpl(MaxPool2dOptions(kernel_size).stride(stride).padding(padding).dilation(dilation)) {}
  void reset() override {}
  /// max_pool2d(x, kernel_size, stride, padding, dilation).
  Tensor forward(const Tensor& x) {
    return detail::batch_of_one(x, [&](const Tensor& b) {
      return max_pool2d(b, options.kernel_size(), options.stride(), options.padding(), options.dilation());
    });
  }
  std::string describe() const override;
  /// The options the layer was built with.
  MaxPool2dOptions options;
};
/// The holder of MaxPool2dImpl.
VNN_MODULE(MaxPool2d);

/// Options of AvgPool2d; a stride of 0 (the default) means the kernel size.
struct AvgPool2dOptions {
  /// A pool over `kernel_size` windows; implicit, as LibTorch's.
  AvgPool2dOptions(Size2 kernel_size) : kernel_size_(kernel_size) {}  // NOLINT: implicit, as LibTorch's
  /// Window height and width.
  VNN_ARG(Size2, kernel_size);
  /// Step between windows (0: the kernel size).
  VNN_ARG(Size2, stride) = 0;
  /// Zero padding on each side (default 0).
  VNN_ARG(Size2, padding) = 0;
  /// Whether padded zeros count in the divisor (default true, as PyTorch).
  VNN_ARG(bool, count_include_pad) = true;
};

/// The mean over each window of [N, C, H, W] images (torch.nn.AvgPool2d).
class AvgPool2dImpl : public Cloneable<AvgPool2dImpl> {
 public:
  /// An AvgPool2d from options.
  explicit AvgPool2dImpl(const AvgPool2dOptions& options) : Cloneable("AvgPool2d"), options(options) {}
  /// AvgPool2d(kernel_size, stride, padding, count_include_pad).
  explicit AvgPool2dImpl(Size2 kernel_size, Size2 stride = 0, Size2 padding = 0, bool count_include_pad = true)
      : AvgPool2dImpl(
            AvgPool2dOptions(kernel_size).stride(stride).padding(padding).count_include_pad(count_include_pad)) {}
  void reset() override {}
  /// avg_pool2d(x, kernel_size, stride, padding, count_include_pad).
  Tensor forward(const Tensor& x) {
    return detail::batch_of_one(x, [&](const Tensor& b) {
      return avg_pool2d(b, options.kernel_size(), options.stride(), options.padding(), options.count_include_pad());
    });
  }
  std::string describe() const override;
  /// The options the layer was built with.
  AvgPool2dOptions options;
};
/// The holder of AvgPool2dImpl.
VNN_MODULE(AvgPool2d);

/// Options of AdaptiveAvgPool2d: the output size.
struct AdaptiveAvgPool2dOptions {
  /// Pools to `output_size` whatever the input size; implicit, as LibTorch's.
  AdaptiveAvgPool2dOptions(Size2 output_size) : output_size_(output_size) {}  // NOLINT: implicit, as LibTorch's
  /// Output height and width.
  VNN_ARG(Size2, output_size);
};

/// Averages [N, C, H, W] images into output_size bins, PyTorch's bin edges (torch.nn.AdaptiveAvgPool2d).
class AdaptiveAvgPool2dImpl : public Cloneable<AdaptiveAvgPool2dImpl> {
 public:
  /// An AdaptiveAvgPool2d from options.
  explicit AdaptiveAvgPool2dImpl(const AdaptiveAvgPool2dOptions& options)
      : Cloneable("AdaptiveAvgPool2d"), options(options) {}
  /// AdaptiveAvgPool2d(output_size).
  explicit AdaptiveAvgPool2dImpl(Size2 output_size) : AdaptiveAvgPool2dImpl(AdaptiveAvgPool2dOptions(output_size)) {}
  void reset() override {}
  /// adaptive_avg_pool2d(x, output_size).
  Tensor forward(const Tensor& x) {
    return detail::batch_of_one(x, [&](const Tensor& b) { return adaptive_avg_pool2d(b, options.output_size()); });
  }
  /// The options the layer was built with.
  AdaptiveAvgPool2dOptions options;
};
/// The holder of AdaptiveAvgPool2dImpl.
VNN_MODULE(AdaptiveAvgPool2d);

/// Options of AdaptiveMaxPool2d: the output size (those of AdaptiveAvgPool2d).
using AdaptiveMaxPool2dOptions = AdaptiveAvgPool2dOptions;
/// The maximum of [N, C, H, W] (or unbatched [C, H, W]) images over
/// output_size bins, PyTorch's bin edges (torch.nn.AdaptiveMaxPool2d).
class AdaptiveMaxPool2dImpl : public Cloneable<AdaptiveMaxPool2dImpl> {
 public:
  /// An AdaptiveMaxPool2d from options.
  explicit AdaptiveMaxPool2dImpl(const AdaptiveMaxPool2dOptions& options)
      : Cloneable("AdaptiveMaxPool2d"), options(options) {}
  /// AdaptiveMaxPool2d(output_size).
  explicit AdaptiveMaxPool2dImpl(Size2 output_size) : AdaptiveMaxPool2dImpl(AdaptiveMaxPool2dOptions(output_size)) {}
  void reset() override {}
  /// The maxima (vnn::adaptive_max_pool2d's first output).
  Tensor forward(const Tensor& x) { return std::get<0>(forward_with_indices(x)); }
  /// The maxima and their flat indices h * W + w in each input plane
  /// (LibTorch's return_indices form).
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& x) {
    Tensor indices;
    Tensor values = detail::batch_of_one(x, [&](const Tensor& b) {
      auto [v, i] = adaptive_max_pool2d(b, options.output_size());
      indices = i;
      return v;
    });
    if (x.dim() == 3) indices = indices.squeeze(0);
    return {values, indices};
  }
  /// The options the layer was built with.
  AdaptiveMaxPool2dOptions options;
};
/// The holder of AdaptiveMaxPool2dImpl.
VNN_MODULE(AdaptiveMaxPool2d);

}  // namespace vnn::nn
