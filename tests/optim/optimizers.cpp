// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Optimizers on the device under test: several steps of every optimizer
// against a float64 host implementation of PyTorch's published update rules
// and against the CPU backend; parameter groups, state_dict round trips,
// state following a moved module, gradient clipping and the typed errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <memory>

#include "support/device_under_test.hpp"
#include "vnn/nn/layers.h"
#include "vnn/optim.h"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;
namespace opt = vnn::optim;

namespace {

constexpr int kSteps = 5;

std::vector<double> initial_param(int n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[size_t(i)] = std::cos(0.21 * i);
  return v;
}

// Gradients vary in sign and size from step to step, so that amsgrad's
// maximum and momentum buffers both matter.
std::vector<double> grad_at(int n, int step) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[size_t(i)] = std::sin(0.37 * i + 1.3 * step) * (1 + 0.5 * std::cos(0.11 * i * (step + 1)));
  return v;
}

// The reference: one state vector set per parameter, PyTorch's formulas.
struct RefState {
  int t = 0;
  std::vector<double> a, b, c, d;  // buffers, meaning per optimizer
};
using RefStep = std::function<void(std::vector<double>& p, std::vector<double> g, RefState& s)>;
using Map = std::map<std::string, double>;

RefStep ref_sgd(Map o) {
  return [o](std::vector<double>& p, std::vector<double> g, RefState& s) {
    const double lr = o.at("lr"), m = o.at("momentum"), damp = o.at("dampening"), wd = o.at("weight_decay");
    for (size_t i = 0; i < p.size(); ++i) {
      double d = o.at("maximize") ? -g[i] : g[i];
      d += wd * p[i];
      if (m != 0) {
        s.a[i] = s.t == 1 ? d : m * s.a[i] + (1 - damp) * d;
        d = o.at("nesterov") ? d + m * s.a[i] : s.a[i];
      }
      p[i] -= lr * d;
    }
  };
}

RefStep ref_adam(Map o, bool decoupled) {
  return [o, decoupled](std::vector<double>& p, std::vector<double> g, RefState& s) {
    const double lr = o.at("lr"), b1 = o.at("beta1"), b2 = o.at("beta2"), eps = o.at("eps"), wd = o.at("weight_decay");
    const double bc1 = 1 - std::pow(b1, s.t), bc2 = 1 - std::pow(b2, s.t);
    for (size_t i = 0; i < p.size(); ++i) {
      double gi = o.at("maximize") ? -g[i] : g[i];
      if (decoupled) p[i] *= 1 - lr * wd; else gi += wd * p[i];
      s.a[i] = b1 * s.a[i] + (1 - b1) * gi;
      s.b[i] = b2 * s.b[i] + (1 - b2) * gi * gi;
      double v = s.b[i];
      if (o.at("amsgrad")) v = s.c[i] = std::max(s.c[i], s.b[i]);
      p[i] -= lr / bc1 * s.a[i] / (std::sqrt(v) / std::sqrt(bc2) + eps);
    }
  };
}

RefStep ref_rmsprop(Map o) {
  return [o](std::vector<double>& p, std::vector<double> g, RefState& s) {
    const double lr = o.at("lr"), al = o.at("alpha"), eps = o.at("eps"), wd = o.at("weight_decay"), m = o.at("momentum");
    for (size_t i = 0; i < p.size(); ++i) {
      double gi = (o.at("maximize") ? -g[i] : g[i]) + wd * p[i];
      s.a[i] = al * s.a[i] + (1 - al) * gi * gi;
      double avg;
      if (o.at("centered")) {
        s.c[i] = al * s.c[i] + (1 - al) * gi;
        avg = std::sqrt(s.a[i] - s.c[i] * s.c[i]);
      } else {
        avg = std::sqrt(s.a[i]);
      }
      avg += eps;
      if (m > 0) {
        s.b[i] = m * s.b[i] + gi / avg;
        p[i] -= lr * s.b[i];
      } else {
        p[i] -= lr * gi / avg;
      }
    }
  };
}

RefStep ref_adagrad(Map o) {
  return [o](std::vector<double>& p, std::vector<double> g, RefState& s) {
    if (s.t == 1) std::fill(s.a.begin(), s.a.end(), o.at("initial_accumulator_value"));
    const double clr = o.at("lr") / (1 + (s.t - 1) * o.at("lr_decay"));
    for (size_t i = 0; i < p.size(); ++i) {
      double gi = (o.at("maximize") ? -g[i] : g[i]) + o.at("weight_decay") * p[i];
      s.a[i] += gi * gi;
      p[i] -= clr * gi / (std::sqrt(s.a[i]) + o.at("eps"));
    }
  };
}

using Factory = std::function<std::unique_ptr<opt::Optimizer>(std::vector<Tensor>)>;
struct Case {
  const char* name;
  Factory make;
  RefStep ref;
};

std::vector<Case> cases() {
  std::vector<Case> c;
  auto sgd = [&](const char* name, opt::SGDOptions o) {
    c.push_back({name, [o](std::vector<Tensor> p) { return std::make_unique<opt::SGD>(p, o); }, ref_sgd(o.values)});
  };
  sgd("sgd", opt::SGDOptions(0.1));
  sgd("sgd momentum dampening wd", opt::SGDOptions(0.1).momentum(0.9).dampening(0.1).weight_decay(0.01));
  sgd("sgd nesterov", opt::SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(1e-3));
  sgd("sgd maximize", opt::SGDOptions(0.05).momentum(0.5).maximize(true));
  auto adam = [&](const char* name, opt::AdamOptions o) {
    c.push_back({name, [o](std::vector<Tensor> p) { return std::make_unique<opt::Adam>(p, o); }, ref_adam(o.values, false)});
  };
  adam("adam", opt::AdamOptions(0.01));
  adam("adam wd amsgrad", opt::AdamOptions(0.01).weight_decay(0.1).amsgrad(true));
  auto adamw = [&](const char* name, opt::AdamWOptions o) {
    c.push_back({name, [o](std::vector<Tensor> p) { return std::make_unique<opt::AdamW>(p, o); }, ref_adam(o.values, true)});
  };
  adamw("adamw", opt::AdamWOptions(0.01));
  {
    opt::AdamWOptions o(0.02);
    o.betas(0.8, 0.99).weight_decay(0.1).amsgrad(true).maximize(true);
    adamw("adamw betas amsgrad maximize", o);
  }
  auto rms = [&](const char* name, opt::RMSpropOptions o) {
    c.push_back({name, [o](std::vector<Tensor> p) { return std::make_unique<opt::RMSprop>(p, o); }, ref_rmsprop(o.values)});
  };
  rms("rmsprop", opt::RMSpropOptions(0.01));
  rms("rmsprop centered momentum wd", opt::RMSpropOptions(0.01).centered(true).momentum(0.9).weight_decay(0.01));
  rms("rmsprop momentum maximize", opt::RMSpropOptions(0.01).momentum(0.5).alpha(0.9).maximize(true));
  auto ada = [&](const char* name, opt::AdagradOptions o) {
    c.push_back({name, [o](std::vector<Tensor> p) { return std::make_unique<opt::Adagrad>(p, o); }, ref_adagrad(o.values)});
  };
  ada("adagrad", opt::AdagradOptions(0.1));
  ada("adagrad decay wd init", opt::AdagradOptions(0.1).lr_decay(0.01).weight_decay(0.01).initial_accumulator_value(0.1));
  return c;
}

Tensor make_param(const std::vector<double>& v, const Shape& shape, const Device& dev, DType dt) {
  Tensor p = from_vector(v, shape, dev).to(dt);
  p.requires_grad_();
  return p;
}

// Runs kSteps of an optimizer on one parameter; returns its final values.
std::vector<double> run_device(const Case& c, const std::vector<double>& p0, const Device& dev, DType dt,
                               bool strided = false) {
  const int n = int(p0.size());
  Tensor p;
  if (strided) {
    // A transposed view: the optimizer updates a contiguous copy and writes back.
    Tensor base = from_vector(p0, {2, n / 2}, dev).to(dt).transpose(0, 1).contiguous().transpose(0, 1);
    p = base;
    REQUIRE_FALSE(p.is_contiguous());
  } else {
    p = make_param(p0, {n}, dev, dt);
  }
  auto o = c.make({p});
  for (int t = 0; t < kSteps; ++t) {
    Tensor g = from_vector(grad_at(n, t), p.sizes(), dev).to(dt);
    p.set_grad(strided ? g.transpose(0, 1).contiguous().transpose(0, 1) : g);  // strided grad too
    o->step();
  }
  return p.to(kFloat64).contiguous().to_vector<double>();
}

std::vector<double> run_reference(const Case& c, std::vector<double> p, DType dt) {
  const int n = int(p.size());
  auto round = [dt](std::vector<double> v) {
    if (dt == kFloat32)
      for (auto& x : v) x = double(float(x));
    return v;
  };
  p = round(p);
  RefState s;
  s.a.assign(size_t(n), 0.0); s.b = s.c = s.d = s.a;
  for (int t = 0; t < kSteps; ++t) {
    s.t = t + 1;
    c.ref(p, round(grad_at(n, t)), s);
  }
  return p;
}

double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return a.size() == b.size() ? m : INFINITY;
}

}  // namespace

TEST_CASE("every optimizer matches PyTorch's update rules in float64 and the CPU backend") {
  Device dev = device_under_test();
  for (const Case& c : cases())
    for (DType dt : {kFloat32, kFloat64})
      for (int n : {6, 40000, 40960}) {  // below and above the inline grain; 40960: whole host blocks
        INFO(c.name << " " << name(dt) << " n=" << n << " on " << dev);
        auto p0 = initial_param(n);
        auto got = run_device(c, p0, dev, dt);
        auto cpu = run_device(c, p0, Device("cpu", 0), dt);
        auto ref = run_reference(c, p0, dt);
        CHECK(max_diff(got, cpu) <= (dt == kFloat32 ? 1e-6 : 1e-12));
        CHECK(max_diff(got, ref) <= (dt == kFloat32 ? 2e-5 : 1e-11));
        CHECK(max_diff(got, p0) > 1e-3);  // it moved
      }
}

TEST_CASE("non-contiguous parameters and gradients are updated in place") {
  Device dev = device_under_test();
  for (const Case& c : cases()) {
    INFO(c.name << " on " << dev);
    auto p0 = initial_param(40);
    // The strided run sees the same element order (a transposed-back view).
    CHECK(max_diff(run_device(c, p0, dev, kFloat64, true), run_reference(c, p0, kFloat64)) <= 1e-11);
  }
}

TEST_CASE("parameter groups keep their own options") {
  Device dev = device_under_test();
  Tensor a = make_param({1, 1, 1}, {3}, dev, kFloat32);
  Tensor b = make_param({1, 1}, {2}, dev, kFloat32);
  Tensor c = make_param({1}, {1}, dev, kFloat64);
  opt::SGD o({opt::ParamGroup({a}), opt::ParamGroup({b}, {{"lr", 0.01}})}, opt::SGDOptions(0.1));
  o.add_param_group(opt::ParamGroup({c}, {{"lr", 0.5}, {"weight_decay", 1.0}}));
  REQUIRE(o.param_groups().size() == 3);
  CHECK(o.param_groups()[1].lr() == 0.01);
  CHECK(o.param_groups()[2].options.at("momentum") == 0.0);  // default filled in
  for (Tensor t : {a, b, c}) t.set_grad(ones_like(t));
  o.step();
  for (float v : a.to_vector<float>()) CHECK(v == Approx(0.9f));
  for (float v : b.to_vector<float>()) CHECK(v == Approx(0.99f));
  CHECK(c.to_vector<double>()[0] == Approx(1 - 0.5 * 2));
  CHECK(a.device() == dev);
}

TEST_CASE("state_dict round trip continues identically") {
  Device dev = device_under_test();
  for (const Case& c : cases()) {
    INFO(c.name << " on " << dev);
    const int n = 50;
    Tensor p1 = make_param(initial_param(n), {n}, dev, kFloat32);
    auto o1 = c.make({p1});
    for (int t = 0; t < 3; ++t) {
      p1.set_grad(from_vector(grad_at(n, t), {n}, dev).to(kFloat32));
      o1->step();
    }
    opt::StateDict sd = o1->state_dict();
    bool has_lr = false, has_step = false;
    for (auto& [k, v] : sd) {
      if (k == "param_groups.0.lr") has_lr = v.dim() == 0 && v.dtype() == kFloat64;
      if (k == "state.0.step") has_step = v.item() == 3.0;
    }
    CHECK(has_lr);
    CHECK(has_step);
    // A fresh optimizer (other lr) on a copy of the parameter takes the state over.
    Tensor p2 = p1.detach().clone();
    p2.requires_grad_();
    auto o2 = c.make({p2});
    o2->param_groups()[0].set_lr(123.0);
    o2->load_state_dict(sd);
    CHECK(o2->param_groups()[0].lr() == o1->param_groups()[0].lr());
    for (int t = 3; t < 6; ++t) {
      for (Tensor p : {p1, p2}) p.set_grad(from_vector(grad_at(n, t), {n}, dev).to(kFloat32));
      o1->step();
      o2->step();
    }
    CHECK(max_abs_diff(p1, p2) == 0.0);
  }
}

TEST_CASE("load_state_dict names missing, unexpected and misshapen entries") {
  Device dev = device_under_test();
  Tensor p = make_param({1, 2, 3}, {3}, dev, kFloat32);
  opt::Adam o({p}, opt::AdamOptions(0.1));
  p.set_grad(ones_like(p));
  o.step();
  opt::StateDict sd = o.state_dict();
  auto without = [&](const std::string& key) {
    opt::StateDict d;
    for (auto& e : sd) if (e.first != key) d.push_back(e);
    return d;
  };
  CHECK_THROWS_WITH(o.load_state_dict(without("param_groups.0.beta2")), Catch::Contains("param_groups.0.beta2"));
  auto extra = sd;
  extra.emplace_back("state.0.bogus_buffer_shape", zeros({7}));
  CHECK_THROWS_AS(o.load_state_dict(extra), ShapeError);
  auto unexpected = sd;
  unexpected.emplace_back("param_groups.0.momentum", full(Shape{}, 0.9, TensorOptions(kFloat64)));
  CHECK_THROWS_WITH(o.load_state_dict(unexpected), Catch::Contains("param_groups.0.momentum"));
  auto bad_lr = sd;
  for (auto& e : bad_lr) if (e.first == "param_groups.0.lr") e.second = full(Shape{}, -1.0, TensorOptions(kFloat64));
  CHECK_THROWS_AS(o.load_state_dict(bad_lr), ValueError);
  CHECK_NOTHROW(o.load_state_dict(sd));
}

TEST_CASE("zero_grad drops or zeroes gradients") {
  Device dev = device_under_test();
  Tensor p = make_param({1, 2}, {2}, dev, kFloat32);
  opt::SGD o({p}, opt::SGDOptions(0.1));
  p.set_grad(ones_like(p));
  o.zero_grad(false);
  REQUIRE(p.grad().defined());
  CHECK(p.grad().to_vector<float>() == std::vector<float>{0, 0});
  o.zero_grad();
  CHECK_FALSE(p.grad().defined());
  o.step();  // no gradient: nothing happens
  CHECK(p.to_vector<float>() == std::vector<float>{1, 2});
  CHECK(o.state(p) == nullptr);
}

TEST_CASE("optimizer state follows a module moved to another device and dtype") {
  Device dev = device_under_test();
  nn::Linear lin(4, 3);
  std::vector<Tensor> params = lin->parameters();
  opt::Adam o(params, opt::AdamOptions(0.01));
  auto set_grads = [&](int t) {
    for (Tensor& p : params) p.set_grad(full(p.sizes(), 0.1 * (t + 1), TensorOptions(p.dtype()).with(p.device())));
  };
  // The same schedule, all on the CPU, as the reference.
  nn::Linear ref(4, 3);
  ref->load_state_dict(lin->state_dict());
  std::vector<Tensor> rparams = ref->parameters();
  opt::Adam ro(rparams, opt::AdamOptions(0.01));
  auto set_rgrads = [&](int t) {
    for (Tensor& p : rparams) p.set_grad(full(p.sizes(), 0.1 * (t + 1), TensorOptions(p.dtype())));
  };
  set_grads(0); o.step();
  set_rgrads(0); ro.step();
  lin->to(dev);
  lin->to(kFloat64);
  for (int t = 1; t < 3; ++t) {
    set_grads(t); o.step();
    set_rgrads(t); ro.step();
  }
  const opt::ParamState* st = o.state(params[0]);
  REQUIRE(st != nullptr);
  CHECK(st->step == 3);
  CHECK(st->buffers.at("exp_avg").device() == dev);
  CHECK(st->buffers.at("exp_avg").dtype() == kFloat64);
  for (size_t i = 0; i < params.size(); ++i) CHECK(max_abs_diff(params[i], rparams[i]) <= 1e-6);
}

TEST_CASE("clip_grad_norm_ returns the total norm and scales the gradients") {
  Device dev = device_under_test();
  const int n = 40000;
  std::vector<double> g1 = grad_at(n, 1), g2 = grad_at(7, 2);
  for (double norm_type : {2.0, 1.0, 3.0, double(INFINITY)}) {
    INFO("norm_type " << norm_type << " on " << dev);
    Tensor a = make_param(initial_param(n), {n}, dev, kFloat32);
    Tensor b = make_param(initial_param(7), {7}, dev, kFloat64);
    a.set_grad(from_vector(g1, {n}, dev).to(kFloat32));
    b.set_grad(from_vector(g2, {7}, dev));
    double expect = 0;
    for (const auto* g : {&g1, &g2})
      for (double v : *g) {
        double f = g == &g1 ? double(float(v)) : v;
        expect = std::isinf(norm_type) ? std::max(expect, std::abs(f)) : expect + std::pow(std::abs(f), norm_type);
      }
    if (!std::isinf(norm_type)) expect = std::pow(expect, 1 / norm_type);
    const double max_norm = 0.5;
    Tensor total = opt::clip_grad_norm_({a, b}, max_norm, norm_type);
    CHECK(total.device() == dev);
    CHECK(total.dim() == 0);
    CHECK(total.item() == Approx(expect).epsilon(1e-5));
    const double coef = std::min(1.0, max_norm / (expect + 1e-6));
    auto ga = a.grad().to_vector<float>();
    auto gb = b.grad().to_vector<double>();
    for (int i = 0; i < n; i += 997) CHECK(ga[size_t(i)] == Approx(float(g1[size_t(i)]) * coef).margin(1e-6));
    // The total mixes a float32 gradient, so coef carries float32 rounding.
    for (int i = 0; i < 7; ++i) CHECK(gb[size_t(i)] == Approx(g2[size_t(i)] * coef).epsilon(1e-5));
    // Now below max_norm: nothing changes.
    Tensor again = opt::clip_grad_norm_({a, b}, 10.0, norm_type);
    CHECK(again.item() == Approx(max_norm).epsilon(1e-4));
    CHECK(max_abs_diff(b.grad(), from_vector(gb, {7})) == 0.0);
  }
  Tensor none = make_param({1}, {1}, dev, kFloat32);
  CHECK(opt::clip_grad_norm_({none}, 1.0).item() == 0.0);
  CHECK_THROWS_AS(opt::clip_grad_norm_({none}, 1.0, -1.0), ValueError);
  none.set_grad(from_vector(std::vector<float>{NAN}, {1}, dev));
  CHECK_THROWS_WITH(opt::clip_grad_norm_({none}, 1.0, 2.0, true), Catch::Contains("non-finite"));
}

TEST_CASE("clip_grad_value_ clamps every gradient") {
  Device dev = device_under_test();
  Tensor a = make_param({0, 0, 0, 0}, {4}, dev, kFloat32);
  a.set_grad(from_vector(std::vector<float>{-3, -0.5f, 0.25f, 7}, {4}, dev));
  opt::clip_grad_value_({a}, 1.0);
  CHECK(a.grad().to_vector<float>() == std::vector<float>{-1, -0.5f, 0.25f, 1});
  CHECK_THROWS_AS(opt::clip_grad_value_({a}, -1.0), ValueError);
}

TEST_CASE("invalid options and gradients raise typed errors naming them") {
  Device dev = device_under_test();
  Tensor p = make_param({1, 2}, {2}, dev, kFloat32);
  CHECK_THROWS_WITH(opt::SGD({p}, opt::SGDOptions(-1.0)), Catch::Contains("lr"));
  CHECK_THROWS_AS(opt::SGD({p}, opt::SGDOptions(-1.0)), ValueError);
  CHECK_THROWS_WITH(opt::SGD({p}, opt::SGDOptions(0.1).nesterov(true)), Catch::Contains("nesterov"));
  CHECK_THROWS_WITH(opt::SGD({p}, opt::SGDOptions(0.1).momentum(-0.5)), Catch::Contains("momentum"));
  CHECK_THROWS_WITH(opt::Adam({p}, opt::AdamOptions().betas(1.0, 0.999)), Catch::Contains("beta1"));
  CHECK_THROWS_WITH(opt::AdamW({p}, opt::AdamWOptions().betas(0.9, -0.1)), Catch::Contains("beta2"));
  CHECK_THROWS_WITH(opt::Adam({p}, opt::AdamOptions().eps(-1)), Catch::Contains("eps"));
  CHECK_THROWS_WITH(opt::RMSprop({p}, opt::RMSpropOptions().alpha(-1)), Catch::Contains("alpha"));
  CHECK_THROWS_WITH(opt::Adagrad({p}, opt::AdagradOptions().lr_decay(-1)), Catch::Contains("lr_decay"));
  CHECK_THROWS_WITH(opt::SGD({p}, opt::SGDOptions(NAN)), Catch::Contains("lr"));
  opt::SGD o({p}, opt::SGDOptions(0.1));
  CHECK_THROWS_WITH(o.add_param_group(opt::ParamGroup({make_param({1}, {1}, dev, kFloat32)}, {{"betas", 0.9}})),
                    Catch::Contains("betas"));
  CHECK_THROWS_AS(o.add_param_group(opt::ParamGroup({p})), ValueError);  // already optimized
  CHECK_THROWS_AS(opt::SGD({from_vector(std::vector<int32_t>{1}, {1}, dev)}), DTypeError);
  CHECK_THROWS_AS(opt::SGD(std::vector<Tensor>{}), ValueError);
  // A gradient of another dtype or device.
  p.set_grad(ones({2}, TensorOptions(kFloat64).with(dev)));
  CHECK_THROWS_WITH(o.step(), Catch::Contains("float64"));
  CHECK_THROWS_AS(o.step(), DTypeError);
  if (!(dev == Device("cpu", 0))) {
    p.set_grad(ones({2}));
    CHECK_THROWS_AS(o.step(), DeviceMismatch);
  }
  // A gradient of another shape is refused where it is attached.
  CHECK_THROWS_AS(p.set_grad(ones({3}, TensorOptions(dev))), ShapeError);
  CHECK(p.to_vector<float>() == std::vector<float>{1, 2});  // nothing was updated
}
