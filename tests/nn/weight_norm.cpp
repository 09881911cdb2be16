// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// nn::nn::utils::weight_norm / spectral_norm (vnn/nn/weight_norm.h) and the
// forward pre-hooks under them (vnn/nn/module.h): PyTorch's parameter and
// buffer names and shapes, the weight recomputed at each call (holder,
// Sequential), gradients against closed forms, spectral_norm's power
// iteration against PyTorch 2.15 numbers, remove_*, clone, the errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"
#include "vnn/nn.h"
#include "vnn/optim.h"

using namespace vnn;
using namespace vnn::nn;
using vnn::test::device_under_test;

namespace {

std::vector<std::string> names(const StateDict& sd) { return sd.keys(); }

void check_values(const Tensor& t, const std::vector<double>& want, double tol = 1e-12) {
  std::vector<double> got = t.to_vector<double>();
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(tol));
}

// A float64 Linear(3, 2) on dev with rows of norms 3 and 5.
Linear linear_3_2(Device dev) {
  Linear fc(3, 2);
  fc->to(dev, kFloat64);
  NoGradGuard no_grad;
  fc->weight.copy_(from_vector(std::vector<double>{1, 2, 2, 0, 3, 4}, {2, 3}, dev));
  fc->bias.copy_(from_vector(std::vector<double>{0.5, -0.5}, {2}, dev));
  return fc;
}

// A user module whose child is split after construction: clone() must
// split the copy's child too (the hooks of submodules are installed again).
struct TwoLayerImpl : Cloneable<TwoLayerImpl> {
  TwoLayerImpl() : Cloneable("TwoLayer") { reset(); }
  void reset() override {
    fc1 = register_module("fc1", Linear(3, 4));
    fc2 = register_module("fc2", Linear(4, 2));
  }
  Tensor forward(const Tensor& x) { return fc2(relu(fc1(x))); }
  Linear fc1{nullptr}, fc2{nullptr};
};
VNN_MODULE(TwoLayer);

}  // namespace

TEST_CASE("weight_norm and spectral_norm inside a model: keys, calls through the parent, clone, SGD") {
  Device dev = device_under_test();
  TwoLayer net;
  nn::utils::weight_norm(net->fc1);
  nn::utils::spectral_norm(net->fc2);
  net->to(dev);
  CHECK(names(net->state_dict()) == std::vector<std::string>{"fc1.bias", "fc1.weight_g", "fc1.weight_v", "fc2.bias",
                                                             "fc2.weight_orig", "fc2.weight_u", "fc2.weight_v"});
  Tensor x = from_vector(test::lcg_values(6, 7, 1, -1, 1), {2, 3}, dev).to(kFloat32);
  net->eval();  // no power iteration: calls repeat exactly
  Tensor y = net(x);
  auto copy = std::dynamic_pointer_cast<TwoLayerImpl>(net->clone());
  REQUIRE(copy);
  CHECK(names(copy->state_dict()) == names(net->state_dict()));
  CHECK(test::max_abs_diff((*copy)(x), y) == 0.0);
  Sequential seq(net->fc1);  // a container's clone clones the child with its split
  auto seq_copy = std::dynamic_pointer_cast<SequentialImpl>(seq->clone());
  REQUIRE(seq_copy);
  CHECK(names(seq_copy->state_dict()) == std::vector<std::string>{"0.bias", "0.weight_g", "0.weight_v"});
  // Training moves weight_g and weight_v; the next call sees the new weight.
  net->train();
  optim::SGD sgd(net->parameters(), optim::SGDOptions(0.1));
  Tensor before = net->fc1->weight.clone();
  net(x).sum().backward();
  sgd.step();
  net(x);
  CHECK(test::max_abs_diff(net->fc1->weight, before) > 1e-4);
  CHECK(test::max_abs_diff((*copy)(x), y) == 0.0);  // the clone shares nothing
}

TEST_CASE("weight_norm: weight_g / weight_v, the weight recomputed each call, closed-form gradients") {
  Device dev = device_under_test();
  Linear fc = linear_3_2(dev);
  Tensor x = from_vector(std::vector<double>{1.0, -2.0, 0.5, 0.25, 1.0, -1.0}, {2, 3}, dev);
  Tensor before = fc(x);
  nn::utils::weight_norm(fc);
  CHECK(names(fc->state_dict()) == std::vector<std::string>{"bias", "weight_g", "weight_v"});
  CHECK(fc->parameters().size() == 3);
  check_values(fc->parameter("weight_g"), {3, 5});
  CHECK(fc->parameter("weight_g").sizes() == Shape{2, 1});
  check_values(fc->parameter("weight_v"), {1, 2, 2, 0, 3, 4});
  check_values(fc(x), before.to_vector<double>());
  // The magnitude doubles the weight at the next call, through the holder and a Sequential.
  {
    NoGradGuard no_grad;
    fc->parameter("weight_g").mul_(2.0);
  }
  std::vector<double> doubled = before.to_vector<double>();
  for (size_t i = 0; i < doubled.size(); ++i) doubled[i] = 2.0 * doubled[i] - (i % 2 ? -0.5 : 0.5);  // 2 (y - b) + b
  check_values(fc(x), doubled);
  check_values(fc->weight, {2, 4, 4, 0, 6, 8});
  Sequential seq(fc);
  {
    NoGradGuard no_grad;
    fc->parameter("weight_g").mul_(0.5);
  }
  check_values(seq(x), before.to_vector<double>());
  // d(sum y)/dw = G (each row: the column sums of x); then
  // dg = G.v / |v|, dv = g / |v| (G - (G.v) v / |v|^2).
  fc->zero_grad();
  fc(x).sum().backward();
  std::vector<double> xs = x.to_vector<double>(), G(3), v = {1, 2, 2, 0, 3, 4}, g = {3, 5};
  for (int j = 0; j < 3; ++j) G[size_t(j)] = xs[size_t(j)] + xs[size_t(3 + j)];
  std::vector<double> dg(2), dv(6);
  for (int r = 0; r < 2; ++r) {
    double n = 0, gv = 0;
    for (int j = 0; j < 3; ++j) n += v[size_t(r * 3 + j)] * v[size_t(r * 3 + j)], gv += G[size_t(j)] * v[size_t(r * 3 + j)];
    n = std::sqrt(n);
    dg[size_t(r)] = gv / n;
    for (int j = 0; j < 3; ++j)
      dv[size_t(r * 3 + j)] = g[size_t(r)] / n * (G[size_t(j)] - gv * v[size_t(r * 3 + j)] / (n * n));
  }
  check_values(fc->parameter("weight_g").grad(), dg, 1e-10);
  check_values(fc->parameter("weight_v").grad(), dv, 1e-10);

  // remove_weight_norm: a parameter "weight" again, last in the order (as PyTorch's), same values.
  nn::utils::remove_weight_norm(fc);
  CHECK(names(fc->state_dict()) == std::vector<std::string>{"bias", "weight"});
  check_values(fc->weight, {1, 2, 2, 0, 3, 4}, 1e-12);
  CHECK(fc->weight.is_leaf());
  CHECK(fc->weight.requires_grad());
  check_values(fc(x), before.to_vector<double>());
  CHECK_THROWS_AS(nn::utils::remove_weight_norm(fc), ValueError);
}

TEST_CASE("weight_norm: dim 1, dim -1 (the whole tensor), convolutions, clone, state dicts, errors") {
  Device dev = device_under_test();
  Linear fc = linear_3_2(dev);
  nn::utils::weight_norm(fc, "weight", 1);
  CHECK(fc->parameter("weight_g").sizes() == Shape{1, 3});
  check_values(fc->parameter("weight_g"), {1, std::sqrt(13.0), std::sqrt(20.0)});
  Linear whole = nn::utils::weight_norm(linear_3_2(dev), "weight", -1);
  CHECK(whole->parameter("weight_g").dim() == 0);
  CHECK(whole->parameter("weight_g").item() == Approx(std::sqrt(34.0)));
  Conv1d conv(Conv1dOptions(2, 4, 3));
  nn::utils::weight_norm(conv);
  CHECK(conv->parameter("weight_g").sizes() == Shape{4, 1, 1});

  // clone(): the copy is split the same way, with its own tensors.
  auto copy = std::dynamic_pointer_cast<LinearImpl>(fc->clone());
  REQUIRE(copy);
  CHECK(names(copy->state_dict()) == names(fc->state_dict()));
  Tensor x = from_vector(std::vector<double>{1.0, -2.0, 0.5}, {1, 3}, dev);
  check_values((*copy)(x), fc(x).to_vector<double>());
  {
    NoGradGuard no_grad;
    fc->parameter("weight_v").mul_(3.0).add_(1.0);
  }
  CHECK(test::max_abs_diff((*copy)(x), fc(x)) > 0.1);
  copy->load_state_dict(fc->state_dict());
  check_values((*copy)(x), fc(x).to_vector<double>());

  CHECK_THROWS_AS(nn::utils::weight_norm(fc), ValueError);  // twice on one parameter
  CHECK_THROWS_AS(nn::utils::weight_norm(linear_3_2(dev), "kernel"), ValueError);
  CHECK_THROWS_AS(nn::utils::weight_norm(linear_3_2(dev), "weight", 2), IndexError);
  CHECK_THROWS_AS(fc->set_attribute("bias", x), ValueError);
  CHECK_THROWS_AS(fc->unregister_parameter("weight"), ValueError);
}

TEST_CASE("spectral_norm: weight_orig / weight_u / weight_v, power iteration and gradient as PyTorch's") {
  Device dev = device_under_test();
  Linear fc(4, 3);
  fc->to(dev, kFloat64);
  {
    NoGradGuard no_grad;
    fc->weight.copy_(from_vector(std::vector<double>{0.5, -1.0, 0.25, 2.0, 1.5, 0.5, -0.75, 0.0, -0.5, 1.0, 1.0, 0.5},
                                 {3, 4}, dev));
    fc->bias.copy_(from_vector(std::vector<double>{0.1, -0.2, 0.3}, {3}, dev));
  }
  nn::utils::spectral_norm(fc, "weight", 2);
  CHECK(names(fc->state_dict()) == std::vector<std::string>{"bias", "weight_orig", "weight_u", "weight_v"});
  CHECK(fc->parameters().size() == 2);
  {
    NoGradGuard no_grad;
    fc->buffer("weight_u").copy_(from_vector(std::vector<double>{0.6, 0.0, 0.8}, {3}, dev));
    fc->buffer("weight_v").copy_(from_vector(std::vector<double>{0.5, 0.5, 0.5, 0.5}, {4}, dev));
  }
  Tensor x = from_vector(std::vector<double>{1.0, -2.0, 0.5, 0.25, 0.0, 1.0, -1.0, 2.0}, {2, 4}, dev);
  Tensor y = fc(x);
  // torch.nn.utils.spectral_norm(Linear(4, 3), n_power_iterations=2), PyTorch 2.15, float64.
  const std::vector<double> u1 = {0.9219620529122347, -0.22581970519651015, 0.31462904146759707};
  const std::vector<double> v1 = {-0.06645217975234906, -0.1895397399754501, 0.4070196009831379, 0.8910633194064984};
  const std::vector<double> y1 = {1.5121842021104426, -0.14351263191558233, -0.5473105212662654,
                                  1.3427220978571894, 0.364873680844177,    0.7518989446753416};
  check_values(fc->buffer("weight_u"), u1);
  check_values(fc->buffer("weight_v"), v1);
  check_values(y, y1);
  check_values(fc->weight.reshape({-1}).narrow(0, 0, 4),
               {0.2259494723376708, -0.4518989446753416, 0.1129747361688354, 0.9037978893506832});
  y.sum().backward();
  check_values(fc->parameter("weight_orig").grad(),
               {0.53165894017094, -0.22440168479585101, -0.7144794447482103, -0.052736404989640384,
                0.43236302276575994, -0.507620721940171, -0.1062919506414833, 1.2787315783979993,
                0.4791178642078452, -0.3742631628269506, -0.3926653544742554, 0.6517916590609474},
               1e-10);
  // Evaluation mode: no power iteration, u and v stay.
  fc->eval();
  check_values(fc(x), y1);
  check_values(fc->buffer("weight_u"), u1);
  nn::utils::remove_spectral_norm(fc);
  CHECK(names(fc->state_dict()) == std::vector<std::string>{"bias", "weight"});
  check_values(fc->weight.reshape({-1}).narrow(0, 0, 4),
               {0.2259494723376708, -0.4518989446753416, 0.1129747361688354, 0.9037978893506832});
  CHECK_THROWS_AS(nn::utils::remove_spectral_norm(fc), ValueError);
}

TEST_CASE("spectral_norm: sigma converges to the largest singular value; ConvTranspose's dim 1; errors") {
  Device dev = device_under_test();
  Linear fc(2, 3);
  fc->to(dev, kFloat64);
  {
    NoGradGuard no_grad;
    fc->weight.copy_(from_vector(std::vector<double>{3, 0, 0, 1, 0, 0}, {3, 2}, dev));  // singular values 3, 1
  }
  nn::utils::spectral_norm(fc, "weight", 30);
  Tensor x = zeros({1, 2}, TensorOptions(kFloat64).device(dev));
  fc(x);
  check_values(fc->weight, {1, 0, 0, 1.0 / 3.0, 0, 0}, 1e-9);
  // Before the first call the weight is the original (PyTorch's weight.data).
  Linear fresh(2, 3);
  Tensor original = fresh->weight.clone();
  nn::utils::spectral_norm(fresh);
  CHECK(test::max_abs_diff(fresh->weight, original) == 0.0);
  CHECK_FALSE(fresh->weight.requires_grad());

  ConvTranspose1d ct(ConvTranspose1dOptions(2, 3, 2));  // weight [2, 3, 2]: W [3, 4] by dim 1
  nn::utils::spectral_norm(ct);
  CHECK(ct->buffer("weight_u").sizes() == Shape{3});
  CHECK(ct->buffer("weight_v").sizes() == Shape{4});
  Conv2d conv(Conv2dOptions(2, 5, 3));
  nn::utils::spectral_norm(conv, "weight", 1, 1e-12, 1);
  CHECK(conv->buffer("weight_u").sizes() == Shape{2});
  CHECK(conv->buffer("weight_v").sizes() == Shape{45});
  auto copy = std::dynamic_pointer_cast<Conv2dImpl>(conv->clone());
  REQUIRE(copy);
  CHECK(names(copy->state_dict()) == std::vector<std::string>{"bias", "weight_orig", "weight_u", "weight_v"});
  CHECK(copy->buffer("weight_u").to_vector<double>() == conv->buffer("weight_u").to_vector<double>());

  CHECK_THROWS_AS(nn::utils::spectral_norm(conv), ValueError);  // already normalised
  CHECK_THROWS_AS(nn::utils::weight_norm(conv), ValueError);    // nor both on one weight
  CHECK_THROWS_AS(nn::utils::spectral_norm(Linear(2, 3), "weight", 0), ValueError);
  CHECK_THROWS_AS(nn::utils::spectral_norm(Linear(2, 3), "weight", 1, 0.0), ValueError);
  CHECK_THROWS_AS(nn::utils::spectral_norm(Linear(2, 3), "weight", 1, 1e-12, 2), IndexError);
}

TEST_CASE("forward pre-hooks: order, tags, removal, calls through holders, Sequential and operator()") {
  Linear fc(2, 2);
  std::vector<int> calls;
  int64_t a = fc->register_forward_pre_hook([&](Module&) { calls.push_back(1); });
  int64_t b = fc->register_forward_pre_hook([&](Module&) { calls.push_back(2); }, "second");
  CHECK(fc->find_forward_pre_hook("second") == b);
  CHECK(fc->find_forward_pre_hook("none") == -1);
  CHECK_THROWS_AS(fc->register_forward_pre_hook([](Module&) {}, "second"), ValueError);
  CHECK_THROWS_AS(fc->forward_pre_hook(99), ValueError);
  Tensor x = zeros({1, 2});
  fc(x);
  Sequential(fc)->forward(x);
  static_cast<Module&>(*fc)(x);
  fc->forward(x);  // a direct forward skips the hooks, as PyTorch's
  CHECK(calls == std::vector<int>{1, 2, 1, 2, 1, 2});
  CHECK(fc->remove_forward_pre_hook(a));
  CHECK_FALSE(fc->remove_forward_pre_hook(a));
  fc(x);
  CHECK(calls.back() == 2);
  CHECK(calls.size() == 7);
}
