// Convolution and pooling layers over [N, C, H, W] images, with LibTorch's
// options:
//   vnn::nn::Conv2d conv(vnn::nn::Conv2dOptions(1, 32, 3).stride(1).padding(1).bias(false));
//   vnn::nn::MaxPool2d pool(vnn::nn::MaxPool2dOptions(2).stride(2));   // or MaxPool2d(2)
#pragma once
#include <string>

#include "vnn/nn/module.h"
#include "vnn/nn/options.h"
#include "vnn/nn_ops.h"
#include "vnn/random.h"

namespace vnn::nn {

struct Conv2dOptions {
  Conv2dOptions(int64_t in_channels, int64_t out_channels, Size2 kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  VNN_ARG(int64_t, in_channels);
  VNN_ARG(int64_t, out_channels);
  VNN_ARG(Size2, kernel_size);
  VNN_ARG(Size2, stride) = 1;
  VNN_ARG(Size2, padding) = 0;
  VNN_ARG(Size2, dilation) = 1;
  VNN_ARG(int64_t, groups) = 1;
  VNN_ARG(bool, bias) = true;
};

class Conv2dImpl : public Cloneable<Conv2dImpl> {
 public:
  explicit Conv2dImpl(const Conv2dOptions& options, Generator* gen = nullptr);
  Conv2dImpl(int64_t in_channels, int64_t out_channels, Size2 kernel_size, Generator* gen = nullptr)
      : Conv2dImpl(Conv2dOptions(in_channels, out_channels, kernel_size), gen) {}
  void reset() override { build(nullptr); }
  Tensor forward(const Tensor& x) override;
  std::string describe() const override;
  Conv2dOptions options;
  Tensor weight, bias;

 private:
  void build(Generator* gen);
};
VNN_MODULE(Conv2d);

// stride 0 (the default) means stride = kernel_size, as PyTorch's None.
struct MaxPool2dOptions {
  MaxPool2dOptions(Size2 kernel_size) : kernel_size_(kernel_size) {}  // NOLINT: implicit, as LibTorch's
  VNN_ARG(Size2, kernel_size);
  VNN_ARG(Size2, stride) = 0;
  VNN_ARG(Size2, padding) = 0;
  VNN_ARG(Size2, dilation) = 1;
};

class MaxPool2dImpl : public Cloneable<MaxPool2dImpl> {
 public:
  explicit MaxPool2dImpl(const MaxPool2dOptions& options) : Cloneable("MaxPool2d"), options(options) {}
  explicit MaxPool2dImpl(Size2 kernel_size, Size2 stride = 0, Size2 padding = 0, Size2 dilation = 1)
      : MaxPool2dImpl(MaxPool2dOptions(kernel_size).stride(stride).padding(padding).dilation(dilation)) {}
  void reset() override {}
  Tensor forward(const Tensor& x) override {
    return max_pool2d(x, options.kernel_size(), options.stride(), options.padding(), options.dilation());
  }
  std::string describe() const override;
  MaxPool2dOptions options;
};
VNN_MODULE(MaxPool2d);

struct AvgPool2dOptions {
  AvgPool2dOptions(Size2 kernel_size) : kernel_size_(kernel_size) {}  // NOLINT: implicit, as LibTorch's
  VNN_ARG(Size2, kernel_size);
  VNN_ARG(Size2, stride) = 0;
  VNN_ARG(Size2, padding) = 0;
  VNN_ARG(bool, count_include_pad) = true;
};

class AvgPool2dImpl : public Cloneable<AvgPool2dImpl> {
 public:
  explicit AvgPool2dImpl(const AvgPool2dOptions& options) : Cloneable("AvgPool2d"), options(options) {}
  explicit AvgPool2dImpl(Size2 kernel_size, Size2 stride = 0, Size2 padding = 0, bool count_include_pad = true)
      : AvgPool2dImpl(
            AvgPool2dOptions(kernel_size).stride(stride).padding(padding).count_include_pad(count_include_pad)) {}
  void reset() override {}
  Tensor forward(const Tensor& x) override {
    return avg_pool2d(x, options.kernel_size(), options.stride(), options.padding(), options.count_include_pad());
  }
  std::string describe() const override;
  AvgPool2dOptions options;
};
VNN_MODULE(AvgPool2d);

struct AdaptiveAvgPool2dOptions {
  AdaptiveAvgPool2dOptions(Size2 output_size) : output_size_(output_size) {}  // NOLINT: implicit, as LibTorch's
  VNN_ARG(Size2, output_size);
};

class AdaptiveAvgPool2dImpl : public Cloneable<AdaptiveAvgPool2dImpl> {
 public:
  explicit AdaptiveAvgPool2dImpl(const AdaptiveAvgPool2dOptions& options)
      : Cloneable("AdaptiveAvgPool2d"), options(options) {}
  explicit AdaptiveAvgPool2dImpl(Size2 output_size) : AdaptiveAvgPool2dImpl(AdaptiveAvgPool2dOptions(output_size)) {}
  void reset() override {}
  Tensor forward(const Tensor& x) override { return adaptive_avg_pool2d(x, options.output_size()); }
  AdaptiveAvgPool2dOptions options;
};
VNN_MODULE(AdaptiveAvgPool2d);

}  // namespace vnn::nn
