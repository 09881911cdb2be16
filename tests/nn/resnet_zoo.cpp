// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// examples/resnet.hpp's torchvision models: ResNet-50/101/152 have exactly
// torchvision's state-dict keys and shapes (tests/nn/data, written by
// export_torchvision_resnet_keys.py), so a torchvision checkpoint loads
// strictly; a Bottleneck block computes its formula; a small Bottleneck
// ResNet trains on the device under test as on the CPU.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "../examples/resnet.hpp"
#include "support/device_under_test.hpp"
#include "vnn/vnn.h"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;

namespace {

// key -> "64x3x7x7" ("" for a scalar), as the fixture writes them.
std::map<std::string, std::string> torchvision_keys(const std::string& name) {
  std::ifstream in(std::string(VNN_TEST_NN_DATA) + "/torchvision_" + name + "_keys.txt");
  REQUIRE(in.good());
  std::map<std::string, std::string> keys;
  std::string line;
  while (std::getline(in, line)) {
    const auto space = line.find(' ');
    REQUIRE(space != std::string::npos);
    keys[line.substr(0, space)] = line.substr(space + 1);
  }
  return keys;
}

std::map<std::string, std::string> vnn_keys(const nn::Module& m) {
  std::map<std::string, std::string> keys;
  for (const auto& [key, t] : m.state_dict()) {
    std::ostringstream shape;
    for (int64_t d = 0; d < t.dim(); ++d) shape << (d ? "x" : "") << t.size(d);
    keys[key] = shape.str();
  }
  return keys;
}

}  // namespace

TEST_CASE("ResNet-50/101/152 have torchvision's state-dict keys and shapes, and load one strictly") {
  const std::pair<const char*, resnet::ResNet (*)(int64_t)> models[] = {
      {"resnet50", &resnet::resnet50}, {"resnet101", &resnet::resnet101}, {"resnet152", &resnet::resnet152}};
  for (const auto& [name, make] : models) {
    INFO(name);
    resnet::ResNet model = make(1000);
    const auto expected = torchvision_keys(name);
    const auto got = vnn_keys(*model);
    CHECK(got.size() == expected.size());
    for (const auto& [key, shape] : expected) {
      INFO(key);
      auto it = got.find(key);
      REQUIRE(it != got.end());
      CHECK(it->second == shape);
    }
  }
  // A state dict of torchvision's keys and shapes (the model's own values
  // stand in for a checkpoint's) loads strictly into a fresh ResNet-50, and
  // a key more or less is refused.
  resnet::ResNet source = resnet::resnet50(), target = resnet::resnet50();
  nn::StateDict sd = source->state_dict();
  target->load_state_dict(sd, /*strict=*/true);
  CHECK(max_abs_diff(target->fc->weight, source->fc->weight) == 0);
  CHECK(max_abs_diff(target->layers[3][2]->as<resnet::Bottleneck>()->conv3->weight,
                     source->layers[3][2]->as<resnet::Bottleneck>()->conv3->weight) == 0);
}

TEST_CASE("A Bottleneck block is relu(bn3(conv3(relu(bn2(conv2(relu(bn1(conv1(x))))))) + downsample(x))") {
  Device dev = device_under_test();
  resnet::Bottleneck block(8, 4, 2);  // 8 -> 16 channels, stride 2: a projection shortcut
  block->to(dev);
  block->eval();
  for (auto& p : block->parameters()) {
    NoGradGuard no_grad;
    p.copy_(mul(randn(p.sizes()), 0.2).to(dev));
  }
  Tensor x = randn({2, 8, 6, 6}).to(dev);
  Tensor y = block(x);
  CHECK(y.sizes() == Shape{2, 16, 3, 3});
  Tensor h = relu(block->bn1(block->conv1(x)));
  h = relu(block->bn2(block->conv2(h)));
  h = block->bn3(block->conv3(h));
  Tensor expect = relu(add(h, block->downsample(x)));
  CHECK(max_abs_diff(y, expect) < 1e-5);
}

TEST_CASE("A small Bottleneck ResNet with torchvision's stem trains on the device as on the CPU") {
  Device dev = device_under_test();
  resnet::ResNetConfig config{{1, 1}, 3, 5, 8, /*bottleneck=*/true, /*imagenet_stem=*/true};
  manual_seed(7);
  resnet::ResNet cpu_model(config);
  auto dev_model = std::dynamic_pointer_cast<resnet::ResNetImpl>(cpu_model->clone(dev));
  REQUIRE(dev_model);
  Tensor x = randn({4, 3, 32, 32}), target = from_vector<int64_t>({0, 1, 2, 3}, {4});
  auto step = [&](nn::Module& m, const Device& d) {
    optim::SGD opt(m.parameters(), optim::SGDOptions(0.05).momentum(0.9));
    double first = 0, last = 0;
    for (int i = 0; i < 4; ++i) {
      opt.zero_grad();
      Tensor loss = nn::functional::cross_entropy(m(x.to(d)), target.to(d));
      loss.backward();
      opt.step();
      (i == 0 ? first : last) = loss.item<double>();
    }
    return std::make_pair(first, last);
  };
  auto [cpu_first, cpu_last] = step(*cpu_model, Device("cpu"));
  auto [dev_first, dev_last] = step(*dev_model, dev);
  CHECK(cpu_last < cpu_first);
  CHECK(std::abs(dev_first - cpu_first) < 1e-4);
  CHECK(std::abs(dev_last - cpu_last) < 1e-3);
}
