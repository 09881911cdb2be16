// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Optimizers on float16/bfloat16 parameters on the device under test: the
// fused kernels take 16-bit parameters and gradients with float32 state;
// master_weights keeps a float32 copy that takes the update. Each run is
// compared bit for bit with a float32 run fed the same (16-bit) values.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <memory>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;
namespace opt = vnn::optim;

namespace {

constexpr int kSteps = 4;
constexpr int64_t kN = 37;

Tensor values(int salt, const Device& dev) {
  std::vector<double> v(static_cast<size_t>(kN));
  for (int64_t i = 0; i < kN; ++i) v[size_t(i)] = std::sin(0.37 * double(i) + 1.3 * salt) * (1 + 0.5 * std::cos(0.1 * double(i)));
  return from_vector(v, Shape{kN}).to(dev);
}

using Factory = std::function<std::unique_ptr<opt::Optimizer>(std::vector<Tensor>, bool master)>;

std::vector<std::pair<const char*, Factory>> optimizers() {
  return {
      {"SGD", [](std::vector<Tensor> p, bool m) {
         return std::make_unique<opt::SGD>(p, opt::SGDOptions(0.1).momentum(0.9).weight_decay(0.01).master_weights(m));
       }},
      {"Adam", [](std::vector<Tensor> p, bool m) {
         return std::make_unique<opt::Adam>(p, opt::AdamOptions(0.05).amsgrad(true).master_weights(m));
       }},
      {"AdamW", [](std::vector<Tensor> p, bool m) {
         return std::make_unique<opt::AdamW>(p, opt::AdamWOptions(0.05).master_weights(m));
       }},
      {"RMSprop", [](std::vector<Tensor> p, bool m) {
         return std::make_unique<opt::RMSprop>(
             p, opt::RMSpropOptions(0.01).momentum(0.5).centered(true).master_weights(m));
       }},
      {"Adagrad", [](std::vector<Tensor> p, bool m) {
         return std::make_unique<opt::Adagrad>(p, opt::AdagradOptions(0.1).lr_decay(0.01).master_weights(m));
       }},
  };
}

}  // namespace

TEST_CASE("optimizers: 16-bit parameters with float32 state match a float32 run rounded each step") {
  Device dev = device_under_test();
  for (auto& [name_, make] : optimizers()) {
    for (DType low : {kBFloat16, kFloat16}) {
      INFO(name_ << " " << name(low));
      Tensor p = values(0, dev).to(low).requires_grad_();
      Tensor ref = p.detach().to(kFloat32).requires_grad_();
      auto o = make({p}, false);
      auto o_ref = make({ref}, false);
      for (int s = 1; s <= kSteps; ++s) {
        Tensor g = values(s, dev).to(low);
        p.set_grad(g);
        ref.set_grad(g.to(kFloat32));
        o->step();
        o_ref->step();
        autograd::NoGradGuard ng;
        ref.copy_(ref.to(low).to(kFloat32));  // the rounding the 16-bit parameter gets
      }
      CHECK(p.dtype() == low);
      CHECK(max_abs_diff(p, ref) == 0);
      const opt::ParamState* st = o->state(p);
      REQUIRE(st);
      for (auto& [k, b] : st->buffers) {
        INFO(k);
        CHECK(b.dtype() == kFloat32);
      }
    }
  }
}

TEST_CASE("optimizers: master_weights keeps a float32 copy that takes the update") {
  Device dev = device_under_test();
  for (auto& [name_, make] : optimizers()) {
    for (DType low : {kBFloat16, kFloat16}) {
      INFO(name_ << " " << name(low));
      Tensor p = values(0, dev).to(low).requires_grad_();
      Tensor ref = p.detach().to(kFloat32).requires_grad_();
      auto o = make({p}, true);
      auto o_ref = make({ref}, false);
      CHECK(o->master_weights());
      for (int s = 1; s <= kSteps; ++s) {
        Tensor g = values(s, dev).to(low);
        p.set_grad(g);
        ref.set_grad(g.to(kFloat32));
        o->step();
        o_ref->step();
      }
      const opt::ParamState* st = o->state(p);
      REQUIRE(st);
      REQUIRE(st->buffers.count("master"));
      const Tensor& master = st->buffers.at("master");
      CHECK(master.dtype() == kFloat32);
      CHECK(max_abs_diff(master, ref) == 0);             // the float32 trajectory, unrounded
      CHECK(max_abs_diff(p, master.to(low)) == 0);       // the parameter is its rounding
    }
  }
}

TEST_CASE("optimizers: master weights keep updates smaller than a bfloat16 step") {
  Device dev = device_under_test();
  for (bool m : {false, true}) {
    Tensor p = ones({4}, TensorOptions(kBFloat16).with(dev)).requires_grad_();
    opt::SGD sgd({p}, opt::SGDOptions(1e-4).master_weights(m));
    for (int i = 0; i < 100; ++i) {
      p.set_grad(ones({4}, TensorOptions(kBFloat16).with(dev)));
      sgd.step();
    }
    // 1 - 100 * 1e-4 = 0.99; bfloat16's spacing below 1 is 2^-8.
    if (m)
      CHECK(std::abs(p.to_vector<double>()[0] - 0.99) < 0.004);
    else
      CHECK(p.to_vector<double>()[0] == 1.0);  // each step rounded away
  }
}

TEST_CASE("optimizers: 16-bit state_dict round trip keeps float32 state and the master copy") {
  Device dev = device_under_test();
  Tensor p = values(0, dev).to(kBFloat16).requires_grad_();
  opt::Adam a({p}, opt::AdamOptions(0.01).master_weights(true));
  p.set_grad(values(1, dev).to(kBFloat16));
  a.step();
  Tensor q = p.detach().clone().requires_grad_();
  opt::Adam b({q}, opt::AdamOptions(0.01).master_weights(true));
  b.load_state_dict(a.state_dict());
  for (auto* o : {&a, &b}) {
    Tensor& t = o == &a ? p : q;
    t.set_grad(values(2, dev).to(kBFloat16));
    o->step();
  }
  CHECK(max_abs_diff(p, q) == 0);
  CHECK(b.state(q)->buffers.at("exp_avg").dtype() == kFloat32);
  CHECK(b.state(q)->buffers.at("master").dtype() == kFloat32);
}

TEST_CASE("optimizers: a bfloat16 model trains end to end") {
  Device dev = device_under_test();
  manual_seed(3);
  nn::Sequential model(nn::Linear(4, 16), nn::ReLU(), nn::Linear(16, 3));
  model->to(dev);
  model->to(kBFloat16);
  for (auto& p : model->parameters()) REQUIRE(p.dtype() == kBFloat16);
  // Three separable clusters.
  std::vector<double> xs, ys;
  for (int i = 0; i < 48; ++i) {
    int c = i % 3;
    for (int k = 0; k < 4; ++k) xs.push_back((k == c ? 2.0 : 0.0) + 0.3 * std::sin(1.7 * i + k));
    ys.push_back(c);
  }
  Tensor x = from_vector(xs, Shape{48, 4}).to(dev).to(kBFloat16);
  Tensor y = from_vector(ys, Shape{48}).to(dev).to(kInt64);
  opt::Adam adam(model->parameters(), opt::AdamOptions(0.02));
  double first = 0, last = 0;
  for (int it = 0; it < 60; ++it) {
    adam.zero_grad();
    Tensor loss = nn::cross_entropy(model(x), y);
    loss.backward();
    for (auto& p : model->parameters()) REQUIRE(p.grad().dtype() == kBFloat16);
    adam.step();
    (it == 0 ? first : last) = loss.item();
  }
  INFO("first loss " << first << ", last " << last);
  CHECK(last < 0.2 * first);
  CHECK(nn::accuracy(model(x), y) == 1.0);
}
