// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn::nn: modules, containers, state dicts, moving, printing, gradients of
// every layer, on the device under test.
#include <catch2/catch.hpp>

#include "support/device_under_test.hpp"
#include "vnn/nn.h"

using namespace vnn;
using vnn::test::device_under_test;

namespace {

struct Net : nn::Module {
  nn::Linear fc1{nullptr}, fc2{nullptr};
  Net() : Module("Net") {
    Generator g(1);
    fc1 = register_module("fc1", nn::Linear(4, 8, true, &g));
    fc2 = register_module("fc2", nn::Linear(8, 3, true, &g));
  }
  Tensor forward(const Tensor& x) { return fc2->forward(relu(fc1->forward(x))); }
};

autograd::GradcheckResult module_gradcheck(const std::shared_ptr<nn::Module>& m, const Tensor& x) {
  m->to(kFloat64);
  std::vector<Tensor> inputs{x};
  for (auto& p : m->parameters()) inputs.push_back(p);
  return autograd::gradcheck([m](const std::vector<Tensor>& v) { return (*m)(v[0]); }, inputs);
}

}  // namespace

TEST_CASE("parameters, names, counts and printing") {
  auto net = std::make_shared<Net>();
  auto names = net->named_parameters();
  REQUIRE(names.size() == 4);
  CHECK(names[0].first == "fc1.weight");
  CHECK(names[3].first == "fc2.bias");
  CHECK(net->num_parameters() == 4 * 8 + 8 + 8 * 3 + 3);
  for (auto& p : net->parameters()) CHECK(p.requires_grad());
  std::string s = net->str();
  CHECK(s.find("(fc1): Linear(in_features=4, out_features=8, bias=true)") != std::string::npos);
  CHECK(s.find("[67 params]") != std::string::npos);
  CHECK(net->named_modules().size() == 3);
}

TEST_CASE("to(device) moves parameters in place and training works there") {
  Device dev = device_under_test();
  auto net = std::make_shared<Net>();
  Tensor w = net->fc1->weight;  // a handle taken before the move
  net->to(dev);
  CHECK(w.device() == dev);
  CHECK(net->fc1->weight.device() == dev);
  Tensor x = randn({5, 4}, dev);
  Tensor loss = sum(net->forward(x));
  loss.backward();
  CHECK(w.grad().defined());
  CHECK(w.grad().device() == dev);
  net->zero_grad();
  CHECK_FALSE(w.grad().defined());
  if (!dev.is_cpu()) CHECK_THROWS_AS(net->forward(randn({5, 4})), DeviceMismatch);
}

TEST_CASE("state_dict round trip and its errors") {
  Device dev = device_under_test();
  auto a = std::make_shared<Net>(), b = std::make_shared<Net>();
  { Generator g(99); auto p = b->parameters(); autograd::NoGradGuard ng; for (auto& t : p) uniform_(t, -1, 1, &g); }
  b->to(dev);
  a->load_state_dict(b->state_dict());  // copies across devices
  Tensor x = randn({2, 4});
  CHECK(test::max_abs_diff(a->forward(x), b->forward(x.to(dev)).to(Device("cpu"))) < 1e-5);
  auto sd = b->state_dict();
  sd.pop_back();
  CHECK_THROWS_AS(a->load_state_dict(sd), ValueError);  // missing key
  CHECK_NOTHROW(a->load_state_dict(sd, /*strict=*/false));
  auto wrong = b->state_dict();
  wrong[0].second = zeros({3, 3});
  CHECK_THROWS_AS(a->load_state_dict(wrong), ShapeError);
  auto extra = b->state_dict();
  extra.emplace_back("fc3.weight", zeros({1}));
  try {
    a->load_state_dict(extra);
    FAIL("no throw");
  } catch (const ValueError& e) {
    CHECK(std::string(e.what()).find("unexpected keys: fc3.weight") != std::string::npos);
  }
}

TEST_CASE("containers") {
  Generator g(3);
  auto seq = nn::Sequential(std::initializer_list<nn::ModulePtr>{
      nn::Linear(3, 4, true, &g), nn::ReLU(), nn::Linear(4, 2, true, &g)});
  CHECK(seq->forward(randn({6, 3})).sizes() == Shape{6, 2});
  CHECK(seq->named_parameters()[2].first == "2.weight");
  CHECK_THROWS_AS((*seq)[5], IndexError);
  nn::ModuleDict dict;
  dict->insert("head", nn::Identity());
  CHECK(dict->contains("head"));
  CHECK_THROWS_AS(dict["tail"], ValueError);
}

TEST_CASE("train/eval: dropout and batch norm") {
  Device dev = device_under_test();
  nn::Dropout drop(0.5);
  Tensor x = ones({1000}, dev);
  Tensor y = drop(x);
  double kept = sum(ne(y, 0.0).to(kFloat32)).item();
  CHECK(kept > 400);
  CHECK(kept < 600);
  CHECK(sum(y).item() == Approx(kept * 2.0));
  drop->eval();
  CHECK(test::max_abs_diff(drop(x), x) == 0);

  auto bn = nn::BatchNorm2d(3);
  bn->to(dev);
  Tensor in = add(mul(randn({4, 3, 5, 5}, dev), 2.0), 1.0);
  Tensor out = bn->forward(in);
  CHECK(std::abs(mean(out).item()) < 1e-4);
  CHECK(bn->running_mean.to_vector<float>()[0] == Approx(0.1 * mean(in.select(1, 0)).item()).epsilon(1e-3));
  CHECK(bn->num_batches_tracked.item() == 1);
  bn->eval();
  CHECK_NOTHROW(bn->forward(in));
}

TEST_CASE("every layer's gradients pass the gradient checker") {
  Device dev = device_under_test();
  Generator g(5);
  auto in = [&](const Shape& s) { return randn(s, TensorOptions(dev).with(kFloat64), &g).requires_grad_(); };
  std::vector<std::pair<std::string, std::pair<std::shared_ptr<nn::Module>, Tensor>>> cases = {
      {"Linear", {nn::Linear(3, 2, true, &g), in({4, 3})}},
      {"Conv2d", {nn::Conv2d(nn::Conv2dOptions(2, 3, 3).padding(1), &g), in({2, 2, 4, 4})}},
      {"MaxPool2d", {nn::MaxPool2d(2), in({1, 2, 4, 4})}},
      {"AvgPool2d", {nn::AvgPool2d(2), in({1, 2, 4, 4})}},
      {"AdaptiveAvgPool2d", {nn::AdaptiveAvgPool2d(1), in({2, 2, 3, 3})}},
      {"BatchNorm1d", {nn::BatchNorm1d(3), in({5, 3})}},
      {"LayerNorm", {nn::LayerNorm(Shape{4}), in({3, 4})}},
      {"GroupNorm", {nn::GroupNorm(2, 4), in({2, 4, 3})}},
      {"Flatten", {nn::Flatten(), in({2, 3, 2})}},
      {"GELU", {nn::GELU(), in({5})}},
      {"SiLU", {nn::SiLU(), in({5})}},
      {"LeakyReLU", {nn::LeakyReLU(0.2), in({5})}},
      {"Sigmoid", {nn::Sigmoid(), in({5})}},
      {"Tanh", {nn::Tanh(), in({5})}},
      {"Softmax", {nn::Softmax(1), in({2, 5})}},
      {"LogSoftmax", {nn::LogSoftmax(1), in({2, 5})}},
  };
  for (auto& [name, c] : cases) {
    INFO(name << " on " << dev);
    c.first->to(dev);
    auto r = module_gradcheck(c.first, c.second);
    INFO(r.message);
    CHECK(r.ok);
  }
  auto emb = nn::Embedding(5, 3, &g);
  emb->to(dev);
  emb->to(kFloat64);
  Tensor idx = from_vector<int64_t>({4, 0, 4}, {3}).to(dev);
  auto r = autograd::gradcheck([&](const std::vector<Tensor>& v) { return embedding(v[0], idx); }, {emb->weight});
  CHECK(r.ok);
}

TEST_CASE("the 2-D convolution and pools take an unbatched [C, H, W] input, as PyTorch's") {
  const Device dev = device_under_test();
  Tensor x = from_vector(test::lcg_values(2 * 5 * 6, 7, 1, -1.0, 1.0), {2, 5, 6}).to(kFloat32).to(dev);
  Generator g(3);
  nn::Conv2d conv(nn::Conv2dOptions(2, 3, 3).padding(1), &g);
  conv->to(dev);
  std::vector<std::shared_ptr<nn::Module>> layers{conv.ptr(), nn::MaxPool2d(nn::MaxPool2dOptions(2)).ptr(),
                                                  nn::AvgPool2d(nn::AvgPool2dOptions(2)).ptr(),
                                                  nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({2, 3})).ptr()};
  for (const auto& m : layers) {
    Tensor unbatched = (*m)(x), batched = (*m)(x.unsqueeze(0));
    CHECK(unbatched.sizes() == batched.squeeze(0).sizes());
    CHECK(test::max_abs_diff(unbatched, batched.squeeze(0)) == 0.0);
    CHECK_THROWS_AS((*m)(x.reshape({10, 6})), ShapeError);
  }
}

TEST_CASE("BatchNorm on an empty training batch: an empty result, running stats untouched, zero gradients") {
  const Device dev = device_under_test();
  nn::BatchNorm1d bn(nn::BatchNormOptions(5));
  bn->to(dev);
  bn->train();
  Tensor x = zeros({0, 5, 9}, TensorOptions(dev)).requires_grad_(true);
  Tensor y = bn(x);
  CHECK(y.sizes() == Shape{0, 5, 9});
  CHECK(bn->running_mean.to_vector<float>() == std::vector<float>(5, 0.0f));
  CHECK(bn->running_var.to_vector<float>() == std::vector<float>(5, 1.0f));
  auto g = autograd::grad({y}, {x, bn->weight, bn->bias}, {zeros({0, 5, 9}, TensorOptions(dev))});
  CHECK(g[0].sizes() == Shape{0, 5, 9});
  CHECK(g[1].to_vector<float>() == std::vector<float>(5, 0.0f));
  CHECK(g[2].to_vector<float>() == std::vector<float>(5, 0.0f));
  // One value per channel is still an error, as PyTorch's.
  CHECK_THROWS_AS(bn(zeros({1, 5}, TensorOptions(dev))), ValueError);
}
