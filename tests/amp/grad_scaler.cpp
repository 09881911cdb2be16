// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// GradScaler on the device under test: PyTorch's defaults and rules, steps
// skipped on injected inf/NaN gradients (parameters unchanged, scale
// halved), growth, the typed errors, state_dict and the training checkpoint.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <limits>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;
namespace opt = vnn::optim;

namespace {

Tensor param(std::vector<double> v, const Device& dev, DType dt = kFloat32) {
  int64_t n = int64_t(v.size());
  return from_vector(v, Shape{n}).to(dev).to(dt).requires_grad_();
}

// loss = sum(p * c): its gradient is c (times the scale).
Tensor loss_of(const Tensor& p, const std::vector<double>& c) {
  Tensor k = from_vector(c, Shape{int64_t(c.size())}).to(p.device()).to(p.dtype());
  return sum(mul(p, k));
}

void set_grad_element(Tensor p, int64_t i, double v) {
  autograd::NoGradGuard g;
  std::vector<double> host = p.grad().to_vector<double>();
  host[size_t(i)] = v;
  p.set_grad(from_vector(host, p.sizes()).to(p.device()).to(p.grad().dtype()));
}

}  // namespace

TEST_CASE("GradScaler: PyTorch's defaults") {
  amp::GradScaler s;
  CHECK(s.get_scale() == 65536.0);
  amp::GradScalerOptions o;
  CHECK(o.growth_factor == 2.0);
  CHECK(o.backoff_factor == 0.5);
  CHECK(o.growth_interval == 2000);
  amp::GradScalerOptions off;
  off.enabled = false;
  CHECK(amp::GradScaler(off).get_scale() == 1.0);
}

TEST_CASE("GradScaler: a finite step equals the unscaled step; inf/NaN gradients skip it and halve the scale") {
  Device dev = device_under_test();
  for (DType dt : {kFloat32, kFloat16, kBFloat16}) {
    INFO(name(dt));
    const std::vector<double> init = {0.5, -1.0, 2.0, 0.25}, c = {1.0, -2.0, 0.5, 4.0};
    Tensor p = param(init, dev, dt), ref = param(init, dev, dt);
    opt::SGD sgd({p}, opt::SGDOptions(0.1).momentum(0.9));
    opt::SGD sgd_ref({ref}, opt::SGDOptions(0.1).momentum(0.9));
    amp::GradScalerOptions o;
    o.init_scale = 1024.0;  // exact in float16 gradients of these sizes
    amp::GradScaler scaler(o);

    scaler.scale(loss_of(p, c)).backward();
    CHECK(max_abs_diff(p.grad(), mul(from_vector(c, Shape{4}).to(dev), 1024.0)) == 0);
    CHECK(scaler.step(sgd));
    scaler.update();
    loss_of(ref, c).backward();
    sgd_ref.step();
    CHECK(max_abs_diff(p, ref) == 0);
    CHECK(scaler.get_scale() == 1024.0);

    for (double bad : {std::numeric_limits<double>::infinity(), std::nan("")}) {
      Tensor before = p.detach().clone();
      sgd.zero_grad();
      scaler.scale(loss_of(p, c)).backward();
      set_grad_element(p, 2, bad);
      const double s0 = scaler.get_scale();
      CHECK_FALSE(scaler.step(sgd));
      scaler.update();
      CHECK(max_abs_diff(p, before) == 0);  // parameters unchanged
      CHECK(scaler.get_scale() == s0 / 2);  // scale halved
      CHECK(scaler.growth_tracker() == 0);
    }
  }
}

TEST_CASE("GradScaler: growth after growth_interval clean steps") {
  Device dev = device_under_test();
  Tensor p = param({1.0, 2.0}, dev);
  opt::SGD sgd({p}, opt::SGDOptions(0.01));
  amp::GradScalerOptions o;
  o.init_scale = 8.0;
  o.growth_interval = 3;
  amp::GradScaler scaler(o);
  for (int i = 0; i < 3; ++i) {
    sgd.zero_grad();
    scaler.scale(loss_of(p, {1.0, 1.0})).backward();
    scaler.step(sgd);
    scaler.update();
    CHECK(scaler.get_scale() == (i < 2 ? 8.0 : 16.0));
  }
  CHECK(scaler.growth_tracker() == 0);
}

TEST_CASE("GradScaler: one check per group covers many tensors and several groups") {
  Device dev = device_under_test();
  // 70 parameters: more than one op holds (63 gradients each).
  std::vector<Tensor> a, b;
  for (int i = 0; i < 70; ++i) a.push_back(param({double(i), 1.0}, dev));
  for (int i = 0; i < 3; ++i) b.push_back(param({1.0, double(i)}, dev));
  opt::Adam adam(std::vector<opt::ParamGroup>{opt::ParamGroup(a), opt::ParamGroup(b)}, opt::AdamOptions(1e-2));
  amp::GradScaler scaler;
  Tensor loss = zeros({});
  loss = loss.to(dev);
  for (auto& t : a) loss = add(loss, sum(t));
  for (auto& t : b) loss = add(loss, sum(t));
  scaler.scale(loss).backward();
  set_grad_element(a[69], 1, std::numeric_limits<double>::infinity());  // in the second op of group 0
  std::vector<Tensor> before;
  for (auto& t : a) before.push_back(t.detach().clone());
  CHECK_FALSE(scaler.step(adam));
  scaler.update();
  for (size_t i = 0; i < a.size(); ++i) CHECK(max_abs_diff(a[i], before[i]) == 0);
  CHECK(scaler.get_scale() == 32768.0);
  // Unscaled: the finite gradients came back to 1.
  CHECK(max_abs_diff(b[2].grad(), ones({2})) == 0);
  CHECK(max_abs_diff(a[0].grad(), ones({2})) == 0);
}

TEST_CASE("GradScaler: unscale_ then clipping then step") {
  Device dev = device_under_test();
  Tensor p = param({3.0, 4.0}, dev);
  opt::SGD sgd({p}, opt::SGDOptions(1.0));
  amp::GradScaler scaler;
  scaler.scale(loss_of(p, {3.0, 4.0})).backward();
  scaler.unscale_(sgd);
  CHECK(max_abs_diff(p.grad(), from_vector(std::vector<double>{3.0, 4.0}, Shape{2})) == 0);
  opt::clip_grad_norm_({p}, 1.0);
  CHECK(scaler.step(sgd));  // does not unscale a second time
  scaler.update();
  CHECK(max_abs_diff(p, from_vector(std::vector<double>{3.0 - 0.6, 4.0 - 0.8}, Shape{2})) < 1e-6);
}

TEST_CASE("GradScaler: misuse throws ValueError naming the optimizer") {
  Device dev = device_under_test();
  Tensor p = param({1.0}, dev);
  opt::Adam adam({p});
  amp::GradScaler scaler;
  sum(p).backward();  // not scaled
  try {
    scaler.step(adam);
    FAIL("no throw");
  } catch (const ValueError& e) {
    CHECK(std::string(e.what()).find("Adam") != std::string::npos);
    CHECK(std::string(e.what()).find("never scaled") != std::string::npos);
  }
  CHECK_THROWS_AS(scaler.unscale_(adam), ValueError);
  adam.zero_grad();
  scaler.scale(sum(p)).backward();
  scaler.unscale_(adam);
  CHECK_THROWS_AS(scaler.unscale_(adam), ValueError);
  scaler.step(adam);
  CHECK_THROWS_AS(scaler.step(adam), ValueError);
  scaler.update();
  // Bad options and bad values.
  amp::GradScalerOptions o;
  o.backoff_factor = 1.5;
  CHECK_THROWS_AS(amp::GradScaler(o), ValueError);
  o = {};
  o.init_scale = -1;
  CHECK_THROWS_AS(amp::GradScaler(o), ValueError);
  CHECK_THROWS_AS(scaler.update(0.0), ValueError);
  CHECK_THROWS_AS(scaler.scale(from_vector(std::vector<int64_t>{1}, Shape{1})), DTypeError);
}

TEST_CASE("GradScaler: state_dict round trip and the training checkpoint") {
  Device dev = device_under_test();
  amp::GradScalerOptions o;
  o.growth_interval = 7;
  amp::GradScaler a(o);
  a.update(1234.5);
  amp::GradScaler b;
  b.load_state_dict(a.state_dict());
  CHECK(b.get_scale() == 1234.5);
  auto sd = b.state_dict();
  bool saw_interval = false;
  for (auto& [k, v] : sd)
    if (k == "growth_interval") saw_interval = v.item() == 7.0;
  CHECK(saw_interval);
  opt::StateDict missing(sd.begin() + 1, sd.end());
  CHECK_THROWS_AS(b.load_state_dict(missing), ValueError);
  opt::StateDict bad = sd;
  bad[0].second = full(Shape{}, -1.0, TensorOptions(kFloat64));
  CHECK_THROWS_AS(b.load_state_dict(bad), ValueError);
  CHECK(b.get_scale() == 1234.5);  // a failed load changes nothing

  nn::Linear model(2, 2);
  model->to(dev);
  opt::SGD sgd(model->parameters(), opt::SGDOptions(0.1));
  std::string path = "grad_scaler_ckpt_" + dev.backend() + ".safetensors";
  io::save_training_checkpoint(path, *model, &sgd, nullptr, {}, &default_generator(), &a);
  amp::GradScaler c;
  io::load_training_checkpoint(path, *model, &sgd, nullptr, &default_generator(), &c);
  CHECK(c.get_scale() == 1234.5);
  // A checkpoint without a scaler leaves the scaler as it was.
  io::save_training_checkpoint(path, *model, &sgd);
  amp::GradScaler d;
  io::load_training_checkpoint(path, *model, &sgd, nullptr, &default_generator(), &d);
  CHECK(d.get_scale() == 65536.0);
  std::remove(path.c_str());
}
