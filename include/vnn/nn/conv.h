// Convolution and pooling layers over [N, C, H, W] images.
#pragma once
#include <string>

#include "vnn/nn/module.h"
#include "vnn/nn_ops.h"
#include "vnn/random.h"

namespace vnn::nn {

struct Conv2dOptions {
  Size2 stride = 1, padding = 0, dilation = 1;
  int64_t groups = 1;
  bool bias = true;
};

class Conv2d : public Module {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, Size2 kernel_size, Conv2dOptions options = {},
         Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override;
  std::string describe() const override;
  Tensor weight, bias;

 private:
  int64_t in_, out_;
  Size2 kernel_;
  Conv2dOptions opt_;
};

class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(Size2 kernel_size, Size2 stride = 0, Size2 padding = 0, Size2 dilation = 1)
      : Module("MaxPool2d"), k_(kernel_size), s_(stride), p_(padding), d_(dilation) {}
  Tensor forward(const Tensor& x) override { return max_pool2d(x, k_, s_, p_, d_); }
  std::string describe() const override;

 private:
  Size2 k_, s_, p_, d_;
};

class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(Size2 kernel_size, Size2 stride = 0, Size2 padding = 0, bool count_include_pad = true)
      : Module("AvgPool2d"), k_(kernel_size), s_(stride), p_(padding), include_pad_(count_include_pad) {}
  Tensor forward(const Tensor& x) override { return avg_pool2d(x, k_, s_, p_, include_pad_); }
  std::string describe() const override;

 private:
  Size2 k_, s_, p_;
  bool include_pad_;
};

class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(Size2 output_size) : Module("AdaptiveAvgPool2d"), out_(output_size) {}
  Tensor forward(const Tensor& x) override { return adaptive_avg_pool2d(x, out_); }

 private:
  Size2 out_;
};

}  // namespace vnn::nn
