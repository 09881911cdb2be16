// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// torchvision's ResNet (resnet.py: BasicBlock, BatchNorm, 1x1 downsample,
// adaptive average pool, fc) in LibTorch's spelling, with a CIFAR-style
// 3x3 stem for small images (no 7x7 conv, no max pool). Its state-dict keys
// are torchvision's: conv1.weight, bn1.*, layer1.0.conv1.weight,
// layer2.0.downsample.0.weight, fc.weight, ...
//   ResNet(/*blocks per stage=*/{2, 2, 2, 2}, /*in_channels=*/1, /*classes=*/10, /*width=*/64)   // ResNet-18
#pragma once
#include <vnn/vnn.h>

#include <string>
#include <vector>

namespace resnet {

namespace nn = vnn::nn;

inline nn::Conv2d conv3x3(int64_t in, int64_t out, int64_t stride) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false));
}

struct BasicBlockImpl : nn::Cloneable<BasicBlockImpl> {
  BasicBlockImpl(int64_t in, int64_t out, int64_t stride) : Cloneable("BasicBlock"), in_(in), out_(out), stride_(stride) {
    reset();
  }
  void reset() override {
    conv1 = register_module("conv1", conv3x3(in_, out_, stride_));
    bn1 = register_module("bn1", nn::BatchNorm2d(out_));
    conv2 = register_module("conv2", conv3x3(out_, out_, 1));
    bn2 = register_module("bn2", nn::BatchNorm2d(out_));
    if (stride_ != 1 || in_ != out_)  // the 1x1 projection of torchvision's downsample
      downsample = register_module(
          "downsample", nn::Sequential(nn::Conv2d(nn::Conv2dOptions(in_, out_, 1).stride(stride_).bias(false)),
                                       nn::BatchNorm2d(out_)));
  }
  vnn::Tensor forward(const vnn::Tensor& x) {
    vnn::Tensor y = bn2(conv2(vnn::relu(bn1(conv1(x)))));
    return vnn::relu(y + (downsample ? downsample(x) : x));
  }
  int64_t in_, out_, stride_;
  nn::Conv2d conv1{nullptr}, conv2{nullptr};
  nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  nn::Sequential downsample{nullptr};
};
VNN_MODULE(BasicBlock);

struct ResNetImpl : nn::Cloneable<ResNetImpl> {
  ResNetImpl(std::vector<int64_t> blocks, int64_t in_channels, int64_t classes, int64_t width)
      : Cloneable("ResNet"), blocks_(std::move(blocks)), in_channels_(in_channels), classes_(classes), width_(width) {
    reset();
  }
  void reset() override {
    conv1 = register_module("conv1", conv3x3(in_channels_, width_, 1));
    bn1 = register_module("bn1", nn::BatchNorm2d(width_));
    int64_t in = width_;
    layers.clear();
    for (size_t s = 0; s < blocks_.size(); ++s) {
      const int64_t out = width_ << s, stride = s == 0 ? 1 : 2;
      nn::Sequential stage;
      for (int64_t b = 0; b < blocks_[s]; ++b) {
        stage->push_back(BasicBlock(in, out, b == 0 ? stride : 1));
        in = out;
      }
      layers.push_back(register_module("layer" + std::to_string(s + 1), stage));
    }
    avgpool = register_module("avgpool", nn::AdaptiveAvgPool2d(1));
    fc = register_module("fc", nn::Linear(in, classes_));
    // torchvision's init: Kaiming normal (fan_out, relu) for convs.
    for (auto& [name, p] : named_parameters()) {
      vnn::NoGradGuard no_grad;
      if (p.dim() == 4) nn::init::kaiming_normal_(p, 0.0, "fan_out", "relu");
    }
  }
  vnn::Tensor forward(const vnn::Tensor& x) {
    vnn::Tensor y = vnn::relu(bn1(conv1(x)));
    for (auto& stage : layers) y = stage(y);
    return fc(vnn::flatten(avgpool(y), 1));
  }
  std::vector<int64_t> blocks_;
  int64_t in_channels_, classes_, width_;
  nn::Conv2d conv1{nullptr};
  nn::BatchNorm2d bn1{nullptr};
  std::vector<nn::Sequential> layers;
  nn::AdaptiveAvgPool2d avgpool{nullptr};
  nn::Linear fc{nullptr};
};
VNN_MODULE(ResNet);

}  // namespace resnet
