// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// LambdaLR, MultiplicativeLR, ConstantLR, PolynomialLR,
// CosineAnnealingWarmRestarts, CyclicLR, SequentialLR and ChainedScheduler:
// lr sequences against PyTorch's, state_dict round trips of the composites
// and the typed errors. The optimizer's parameter lives on the device under
// test; schedulers only touch host-side options.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <map>
#include <memory>

#include "support/device_under_test.hpp"
#include "vnn/optim.h"

using namespace vnn;
using vnn::test::device_under_test;
namespace opt = vnn::optim;

namespace {

// Group 0's lr after construction and each of 14 steps, from PyTorch 2.15 on
// SGD(lr=0.1, momentum=0.9) (CyclicLR_momentum: the momentum), printed by
//   ~/.cache/vnn/torch2-venv/bin/python tests/optim/schedulers_more_torch.py
const std::map<std::string, std::vector<double>>& torch_reference() {
  static const std::map<std::string, std::vector<double>> ref = {
    {"LambdaLR", {0.10000000000000001, 0.096000000000000002, 0.092249999999999999, 0.088737499999999997, 0.085450625000000002, 0.082378093749999992, 0.079509189062499985, 0.076833729609374984, 0.074342043128906229, 0.072024940972460913, 0.069873693923837868, 0.067880009227645963, 0.066036008766263671, 0.06433420832795049, 0.062767497911552964}},
    {"MultiplicativeLR", {0.10000000000000001, 0.090000000000000011, 0.072000000000000008, 0.06480000000000001, 0.051840000000000011, 0.04665600000000001, 0.037324800000000012, 0.033592320000000009, 0.026873856000000008, 0.024186470400000007, 0.019349176320000008, 0.01741425868800001, 0.013931406950400009, 0.012538266255360008, 0.010030613004288008}},
    {"ConstantLR", {0.050000000000000003, 0.050000000000000003, 0.050000000000000003, 0.050000000000000003, 0.10000000000000001, 0.10000000000000001, 0.10000000000000001, 0.10000000000000001, 0.10000000000000001, 0.10000000000000001, 0.10000000000000001, 0.10000000000000001, 0.10000000000000001, 0.10000000000000001, 0.10000000000000001}},
    {"PolynomialLR", {0.10000000000000001, 0.069444444444444461, 0.044444444444444467, 0.025000000000000008, 0.011111111111111117, 0.0027777777777777775, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
    {"CosineAnnealingWarmRestarts", {0.10000000000000001, 0.077499999999999999, 0.032500000000000015, 0.10000000000000001, 0.093971143170299753, 0.077499999999999999, 0.055000000000000007, 0.032500000000000015, 0.016028856829700261, 0.10000000000000001, 0.098466662183008077, 0.093971143170299753, 0.086819805153394644, 0.077499999999999999, 0.06664685702961344}},
    {"CosineAnnealingWarmRestarts_epoch", {0.10000000000000001, 0.069442829902071956, 0.0154982143312659, 0.099576520638003624, 0.093368257487329728, 0.080633690735931671, 0.063311542732574777, 0.044038953485107453, 0.025750000000000012, 0.011229009655583867, 0.0026866715986911243, 0.099952886968301971, 0.099247983774104306, 0.097708989062037233, 0.095362235458314182}},
    {"CyclicLR", {0.01, 0.039999999999999994, 0.069999999999999993, 0.099999999999999992, 0.055, 0.01, 0.040000000000000029, 0.069999999999999993, 0.099999999999999992, 0.055000000000000049, 0.01, 0.040000000000000029, 0.069999999999999993, 0.099999999999999992, 0.055000000000000049}},
    {"CyclicLR_momentum", {0.90000000000000002, 0.8666666666666667, 0.83333333333333337, 0.80000000000000004, 0.85000000000000009, 0.90000000000000002, 0.8666666666666667, 0.83333333333333337, 0.80000000000000004, 0.84999999999999998, 0.90000000000000002, 0.8666666666666667, 0.83333333333333337, 0.80000000000000004, 0.84999999999999998}},
    {"CyclicLR_triangular2", {0.01, 0.055000000000000007, 0.10000000000000001, 0.055000000000000007, 0.01, 0.032500000000000001, 0.055000000000000007, 0.032500000000000001, 0.01, 0.021250000000000002, 0.032500000000000001, 0.021250000000000002, 0.01, 0.015625, 0.021250000000000002}},
    {"CyclicLR_exp_range", {0.01, 0.037000000000000012, 0.058599999999999999, 0.075610000000000011, 0.049366000000000021, 0.027714699999999988, 0.01, 0.024348907000000031, 0.03582803259999999, 0.044867844010000012, 0.03092070640599999, 0.019414317882700018, 0.01, 0.017625597484986995, 0.023726075472976615}},
    {"SequentialLR_warmup_cosine", {0.010000000000000002, 0.040000000000000001, 0.070000000000000007, 0.10000000000000001, 0.090546341221559898, 0.06579634122155989, 0.035203658778440096, 0.010453658778440105, 0.001, 0.010453658778440102, 0.035203658778440117, 0.065796341221559931, 0.090546341221559953, 0.10000000000000005, 0.090546341221559981}},
    {"SequentialLR_three", {0.050000000000000003, 0.050000000000000003, 0.10000000000000001, 0.080000000000000016, 0.064000000000000015, 0.051200000000000016, 0.10000000000000001, 0.10000000000000001, 0.050000000000000003, 0.050000000000000003, 0.025000000000000001, 0.025000000000000001, 0.012500000000000001, 0.012500000000000001, 0.0062500000000000003}},
    {"ChainedScheduler", {0.010000000000000002, 0.0090000000000000028, 0.008100000000000003, 0.072900000000000034, 0.065610000000000029, 0.059049000000000025, 0.05314410000000002, 0.047829690000000022, 0.043046721000000024, 0.03874204890000002, 0.034867844010000017, 0.031381059609000013, 0.028242953648100012, 0.025418658283290013, 0.022876792454961013}},
  };
  return ref;
}

constexpr int kSteps = 14;

struct Fixture {
  Tensor p;
  opt::SGD sgd;
  Fixture() : p(param()), sgd({p}, opt::SGDOptions(0.1).momentum(0.9)) {}
  static Tensor param() {
    Tensor t = zeros({3}, TensorOptions(device_under_test()));
    t.requires_grad_();
    return t;
  }
};

using Stepper = std::function<void(int)>;

// Group 0's `key` after construction and each step, against the reference.
void check_sequence(opt::Optimizer& o, const std::string& name, const Stepper& step, const char* key = "lr") {
  const std::vector<double>& want = torch_reference().at(name);
  REQUIRE(want.size() == kSteps + 1);
  for (int i = 0; i <= kSteps; ++i) {
    if (i > 0) step(i - 1);
    INFO(name << " after " << i << " steps");
    CHECK(o.param_groups()[0].options.at(key) == Approx(want[size_t(i)]).epsilon(1e-12).margin(1e-15));
  }
}

template <class S>
Stepper stepper(S& s) {
  return [&s](int) { s.step(); };
}

}  // namespace

TEST_CASE("LambdaLR, MultiplicativeLR, ConstantLR and PolynomialLR follow PyTorch") {
  {
    Fixture f;
    opt::LambdaLR s(f.sgd, [](int64_t e) { return std::pow(0.95, double(e)) + 0.01 * double(e); });
    check_sequence(f.sgd, "LambdaLR", stepper(s));
  }
  {
    Fixture f;
    opt::MultiplicativeLR s(f.sgd, [](int64_t e) { return e % 2 ? 0.9 : 0.8; });
    check_sequence(f.sgd, "MultiplicativeLR", stepper(s));
  }
  {
    Fixture f;
    opt::ConstantLR s(f.sgd, 0.5, 4);
    check_sequence(f.sgd, "ConstantLR", stepper(s));
  }
  {
    Fixture f;
    opt::PolynomialLR s(f.sgd, 6, 2.0);
    check_sequence(f.sgd, "PolynomialLR", stepper(s));
  }
}

TEST_CASE("CosineAnnealingWarmRestarts restarts as PyTorch's, by step() and step(epoch)") {
  {
    Fixture f;
    opt::CosineAnnealingWarmRestarts s(f.sgd, 3, 2, 0.01);
    check_sequence(f.sgd, "CosineAnnealingWarmRestarts", stepper(s));
  }
  Fixture f;
  opt::CosineAnnealingWarmRestarts s(f.sgd, 2, 3, 0.001);
  check_sequence(f.sgd, "CosineAnnealingWarmRestarts_epoch", [&](int i) { s.step(0.75 * (i + 1)); });
  CHECK_THROWS_AS(s.step(-1.0), ValueError);
}

TEST_CASE("CyclicLR cycles the lr and, inversely, the momentum as PyTorch's") {
  opt::CyclicLROptions o;
  o.step_size_up = 3;
  o.step_size_down = 2;
  for (const char* key : {"lr", "momentum"}) {
    Fixture f;
    opt::CyclicLR s(f.sgd, 0.01, 0.1, o);
    check_sequence(f.sgd, key == std::string("lr") ? "CyclicLR" : "CyclicLR_momentum", stepper(s), key);
  }
  {
    Fixture f;
    opt::CyclicLROptions t2;
    t2.step_size_up = 2;
    t2.mode = "triangular2";
    opt::CyclicLR s(f.sgd, 0.01, 0.1, t2);
    check_sequence(f.sgd, "CyclicLR_triangular2", stepper(s));
  }
  {
    Fixture f;
    opt::CyclicLROptions ex;
    ex.step_size_up = 3;
    ex.mode = "exp_range";
    ex.gamma = 0.9;
    opt::CyclicLR s(f.sgd, 0.01, 0.1, ex);
    check_sequence(f.sgd, "CyclicLR_exp_range", stepper(s));
  }
  // Adam-like optimizers cycle beta1; one without either needs cycle_momentum = false.
  Tensor p = Fixture::param();
  opt::Adam adam({p}, opt::AdamOptions(0.1));
  opt::CyclicLR s(adam, 0.01, 0.1, o);
  s.step();
  CHECK(adam.param_groups()[0].options.at("beta1") == Approx(0.9 - 0.1 / 3));
  opt::Adagrad ada({p}, opt::AdagradOptions(0.1));
  CHECK_THROWS_AS(opt::CyclicLR(ada, 0.01, 0.1, o), ValueError);
  opt::CyclicLROptions off = o;
  off.cycle_momentum = false;
  CHECK_NOTHROW(opt::CyclicLR(ada, 0.01, 0.1, off));
  opt::CyclicLROptions bad = o;
  bad.mode = "sawtooth";
  CHECK_THROWS_WITH(opt::CyclicLR(ada, 0.01, 0.1, bad), Catch::Contains("mode"));
}

TEST_CASE("SequentialLR and ChainedScheduler compose schedulers as PyTorch's") {
  {
    Fixture f;
    auto warm = std::make_shared<opt::LinearLR>(f.sgd, 0.1, 1.0, 3);
    auto cosine = std::make_shared<opt::CosineAnnealingLR>(f.sgd, 5, 0.001);
    opt::SequentialLR s(f.sgd, {warm, cosine}, {3});
    check_sequence(f.sgd, "SequentialLR_warmup_cosine", stepper(s));
  }
  {
    Fixture f;
    auto a = std::make_shared<opt::ConstantLR>(f.sgd, 0.5, 10);
    auto b = std::make_shared<opt::ExponentialLR>(f.sgd, 0.8);
    auto c = std::make_shared<opt::StepLR>(f.sgd, 2, 0.5);
    opt::SequentialLR s(f.sgd, {a, b, c}, {2, 6});
    check_sequence(f.sgd, "SequentialLR_three", stepper(s));
  }
  {
    Fixture f;
    auto a = std::make_shared<opt::ConstantLR>(f.sgd, 0.1, 3);
    auto b = std::make_shared<opt::ExponentialLR>(f.sgd, 0.9);
    opt::ChainedScheduler s({a, b});
    check_sequence(f.sgd, "ChainedScheduler", stepper(s));
    CHECK(s.get_last_lr()[0] == f.sgd.param_groups()[0].lr());
  }
}

TEST_CASE("Composite schedulers' state_dict carries their schedulers' and resumes exactly") {
  const std::vector<double>& want = torch_reference().at("SequentialLR_warmup_cosine");
  Fixture f;
  auto warm = std::make_shared<opt::LinearLR>(f.sgd, 0.1, 1.0, 3);
  auto cosine = std::make_shared<opt::CosineAnnealingLR>(f.sgd, 5, 0.001);
  opt::SequentialLR s(f.sgd, {warm, cosine}, {3});
  for (int i = 0; i < 6; ++i) s.step();
  opt::StateDict saved = s.state_dict();
  bool has_child = false;
  for (auto& [k, v] : saved) has_child |= k == "schedulers.1.T_max";
  CHECK(has_child);
  // A second run built the same way, restored mid-way, continues identically.
  Fixture g;
  auto warm2 = std::make_shared<opt::LinearLR>(g.sgd, 0.1, 1.0, 3);
  auto cosine2 = std::make_shared<opt::CosineAnnealingLR>(g.sgd, 5, 0.001);
  opt::SequentialLR r(g.sgd, {warm2, cosine2}, {3});
  r.load_state_dict(saved);
  g.sgd.param_groups()[0].set_lr(f.sgd.param_groups()[0].lr());
  for (int i = 7; i <= kSteps; ++i) {
    r.step();
    INFO("step " << i);
    CHECK(g.sgd.param_groups()[0].lr() == Approx(want[size_t(i)]).epsilon(1e-12).margin(1e-15));
  }
  // A child's key missing: ValueError naming it, nothing changed.
  opt::StateDict broken;
  for (auto& kv : saved)
    if (kv.first != "schedulers.1.T_max") broken.push_back(kv);
  CHECK_THROWS_WITH(r.load_state_dict(broken), Catch::Contains("T_max"));
}

TEST_CASE("The new schedulers check their arguments") {
  Fixture f;
  CHECK_THROWS_AS(opt::ConstantLR(f.sgd, 1.5), ValueError);
  CHECK_THROWS_AS(opt::PolynomialLR(f.sgd, 0), ValueError);
  CHECK_THROWS_AS(opt::CosineAnnealingWarmRestarts(f.sgd, 0), ValueError);
  CHECK_THROWS_AS(opt::CosineAnnealingWarmRestarts(f.sgd, 2, 0), ValueError);
  CHECK_THROWS_AS(opt::LambdaLR(f.sgd, std::vector<opt::LRLambda>{}), ValueError);
  CHECK_THROWS_AS(opt::CyclicLR(f.sgd, {0.1, 0.2}, {0.3}), ValueError);
  auto a = std::make_shared<opt::ConstantLR>(f.sgd, 0.5, 2);
  CHECK_THROWS_WITH(opt::SequentialLR(f.sgd, {a}, {3}), Catch::Contains("milestones"));
  CHECK_THROWS_AS(opt::SequentialLR(f.sgd, {}, {}), ValueError);
  Fixture other;
  auto b = std::make_shared<opt::ConstantLR>(other.sgd, 0.5, 2);
  CHECK_THROWS_WITH(opt::ChainedScheduler({a, b}), Catch::Contains("another optimizer"));
  CHECK_THROWS_AS(opt::ChainedScheduler({}), ValueError);
}
