// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// torchvision's ResNet (resnet.py: BasicBlock and Bottleneck, BatchNorm,
// 1x1 downsample, adaptive average pool, fc) in LibTorch's spelling. Its
// state-dict keys and shapes are torchvision's (conv1.weight, bn1.*,
// layer1.0.conv3.weight, layer2.0.downsample.0.weight, fc.weight, ...), so
// a torchvision checkpoint loads strictly. The stem is torchvision's (7x7
// stride-2 conv and 3x3 max pool) or, for small images, a CIFAR-style 3x3 conv.
//   resnet::resnet50()                                   // torchvision.models.resnet50()
//   ResNet(/*blocks per stage=*/{2, 2, 2, 2}, /*in_channels=*/1, /*classes=*/10, /*width=*/64)   // ResNet-18, 3x3 stem
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

// torchvision's Bottleneck (ResNet v1.5: the stride on the 3x3 conv): 1x1
// reduce to `planes`, 3x3, 1x1 expand to 4 * planes, plus the shortcut.
struct BottleneckImpl : nn::Cloneable<BottleneckImpl> {
  static constexpr int64_t expansion = 4;
  BottleneckImpl(int64_t in, int64_t planes, int64_t stride)
      : Cloneable("Bottleneck"), in_(in), planes_(planes), stride_(stride) {
    reset();
  }
  void reset() override {
    const int64_t out = planes_ * expansion;
    conv1 = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(in_, planes_, 1).bias(false)));
    bn1 = register_module("bn1", nn::BatchNorm2d(planes_));
    conv2 = register_module("conv2", conv3x3(planes_, planes_, stride_));
    bn2 = register_module("bn2", nn::BatchNorm2d(planes_));
    conv3 = register_module("conv3", nn::Conv2d(nn::Conv2dOptions(planes_, out, 1).bias(false)));
    bn3 = register_module("bn3", nn::BatchNorm2d(out));
    if (stride_ != 1 || in_ != out)
      downsample = register_module(
          "downsample", nn::Sequential(nn::Conv2d(nn::Conv2dOptions(in_, out, 1).stride(stride_).bias(false)),
                                       nn::BatchNorm2d(out)));
  }
  vnn::Tensor forward(const vnn::Tensor& x) {
    vnn::Tensor y = vnn::relu(bn1(conv1(x)));
    y = vnn::relu(bn2(conv2(y)));
    y = bn3(conv3(y));
    return vnn::relu(y + (downsample ? downsample(x) : x));
  }
  int64_t in_, planes_, stride_;
  nn::Conv2d conv1{nullptr}, conv2{nullptr}, conv3{nullptr};
  nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, bn3{nullptr};
  nn::Sequential downsample{nullptr};
};
VNN_MODULE(Bottleneck);

/// Which block, stem and sizes a ResNet has.
struct ResNetConfig {
  std::vector<int64_t> blocks;   // blocks per stage: {3, 4, 6, 3} is ResNet-50
  int64_t in_channels = 3;
  int64_t classes = 1000;
  int64_t width = 64;            // the stem's channels; stage s has width << s planes
  bool bottleneck = false;       // Bottleneck (ResNet-50 and deeper) or BasicBlock
  bool imagenet_stem = true;     // 7x7/2 conv + 3x3/2 max pool, or one 3x3 conv (small images)
};

struct ResNetImpl : nn::Cloneable<ResNetImpl> {
  explicit ResNetImpl(ResNetConfig config) : Cloneable("ResNet"), config_(std::move(config)) { reset(); }
  /// BasicBlocks behind a CIFAR-style 3x3 stem (the examples' small-image model).
  ResNetImpl(std::vector<int64_t> blocks, int64_t in_channels, int64_t classes, int64_t width)
      : ResNetImpl(ResNetConfig{std::move(blocks), in_channels, classes, width, false, false}) {}
  void reset() override {
    const ResNetConfig& c = config_;
    conv1 = register_module("conv1", c.imagenet_stem ? nn::Conv2d(nn::Conv2dOptions(c.in_channels, c.width, 7)
                                                                      .stride(2)
                                                                      .padding(3)
                                                                      .bias(false))
                                                     : conv3x3(c.in_channels, c.width, 1));
    bn1 = register_module("bn1", nn::BatchNorm2d(c.width));
    maxpool = c.imagenet_stem ? register_module("maxpool", nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).padding(1)))
                              : nn::MaxPool2d{nullptr};
    int64_t in = c.width;
    layers.clear();
    for (size_t s = 0; s < c.blocks.size(); ++s) {
      const int64_t planes = c.width << s, stride = s == 0 ? 1 : 2;
      nn::Sequential stage;
      for (int64_t b = 0; b < c.blocks[s]; ++b) {
        if (c.bottleneck) {
          stage->push_back(Bottleneck(in, planes, b == 0 ? stride : 1));
          in = planes * BottleneckImpl::expansion;
        } else {
          stage->push_back(BasicBlock(in, planes, b == 0 ? stride : 1));
          in = planes;
        }
      }
      layers.push_back(register_module("layer" + std::to_string(s + 1), stage));
    }
    avgpool = register_module("avgpool", nn::AdaptiveAvgPool2d(1));
    fc = register_module("fc", nn::Linear(in, c.classes));
    // torchvision's init: Kaiming normal (fan_out, relu) for convs.
    for (auto& [name, p] : named_parameters()) {
      vnn::NoGradGuard no_grad;
      if (p.dim() == 4) nn::init::kaiming_normal_(p, 0.0, "fan_out", "relu");
    }
  }
  vnn::Tensor forward(const vnn::Tensor& x) {
    vnn::Tensor y = vnn::relu(bn1(conv1(x)));
    if (maxpool) y = maxpool(y);
    for (auto& stage : layers) y = stage(y);
    return fc(vnn::flatten(avgpool(y), 1));
  }
  ResNetConfig config_;
  nn::Conv2d conv1{nullptr};
  nn::BatchNorm2d bn1{nullptr};
  nn::MaxPool2d maxpool{nullptr};
  std::vector<nn::Sequential> layers;
  nn::AdaptiveAvgPool2d avgpool{nullptr};
  nn::Linear fc{nullptr};
};
VNN_MODULE(ResNet);

// torchvision.models.resnet18 ... resnet152 (ImageNet stem, 1000 classes by default).
inline ResNet resnet18(int64_t classes = 1000) { return ResNet(ResNetConfig{{2, 2, 2, 2}, 3, classes, 64, false, true}); }
inline ResNet resnet34(int64_t classes = 1000) { return ResNet(ResNetConfig{{3, 4, 6, 3}, 3, classes, 64, false, true}); }
inline ResNet resnet50(int64_t classes = 1000) { return ResNet(ResNetConfig{{3, 4, 6, 3}, 3, classes, 64, true, true}); }
inline ResNet resnet101(int64_t classes = 1000) { return ResNet(ResNetConfig{{3, 4, 23, 3}, 3, classes, 64, true, true}); }
inline ResNet resnet152(int64_t classes = 1000) { return ResNet(ResNetConfig{{3, 8, 36, 3}, 3, classes, 64, true, true}); }

}  // namespace resnet
