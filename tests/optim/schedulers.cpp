// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Learning-rate schedulers: every lr sequence against closed-form values
// (PyTorch's documented examples where it gives them), state_dict round
// trips and the typed errors. The optimizer's parameter lives on the device
// under test; schedulers themselves only touch host-side options.
#include <catch2/catch.hpp>
#include <cmath>

#include "support/device_under_test.hpp"
#include "vnn/optim.h"

using namespace vnn;
using vnn::test::device_under_test;
namespace opt = vnn::optim;

namespace {

constexpr double kPi = 3.14159265358979323846;

Tensor param() {
  Tensor p = zeros({3}, TensorOptions(device_under_test()));
  p.requires_grad_();
  return p;
}

// lr of group 0 after construction (epoch 0) and each of `steps` steps.
template <class S>
std::vector<double> sequence(opt::Optimizer& o, S& s, int steps) {
  std::vector<double> out = {o.param_groups()[0].lr()};
  CHECK(s.get_last_lr()[0] == out[0]);
  for (int i = 0; i < steps; ++i) {
    s.step();
    out.push_back(o.param_groups()[0].lr());
    CHECK(s.get_last_lr()[0] == out.back());
  }
  return out;
}

void check_close(const std::vector<double>& got, const std::function<double(int)>& expect, double tol = 1e-12) {
  for (size_t e = 0; e < got.size(); ++e) {
    INFO("epoch " << e);
    CHECK(got[e] == Approx(expect(int(e))).epsilon(tol).margin(1e-15));
  }
}

}  // namespace

TEST_CASE("StepLR and MultiStepLR follow PyTorch's documented examples") {
  Tensor p = param();
  {
    opt::SGD o({p}, opt::SGDOptions(0.05));
    opt::StepLR s(o, 30, 0.1);
    // lr = 0.05 for epoch < 30, 0.005 for 30 <= epoch < 60, 0.0005 for 60 <= epoch < 90
    check_close(sequence(o, s, 100), [](int e) { return 0.05 * std::pow(0.1, e / 30); });
  }
  {
    opt::SGD o({p}, opt::SGDOptions(0.05));
    opt::MultiStepLR s(o, {30, 80}, 0.1);
    check_close(sequence(o, s, 100), [](int e) { return e < 30 ? 0.05 : e < 80 ? 0.005 : 0.0005; });
  }
  {
    opt::SGD o({p}, opt::SGDOptions(1.0));
    opt::MultiStepLR s(o, {2, 2, 5}, 0.5);  // a repeated milestone applies gamma twice
    check_close(sequence(o, s, 7), [](int e) { return e < 2 ? 1.0 : e < 5 ? 0.25 : 0.125; });
  }
}

TEST_CASE("ExponentialLR, CosineAnnealingLR and LinearLR match their closed forms") {
  Tensor p = param();
  {
    opt::SGD o({p}, opt::SGDOptions(0.1));
    opt::ExponentialLR s(o, 0.9);
    check_close(sequence(o, s, 50), [](int e) { return 0.1 * std::pow(0.9, e); }, 1e-11);
  }
  {
    // eta_t = eta_min + (base - eta_min) (1 + cos(pi t / T_max)) / 2, also
    // past T_max where the recursive form keeps following the cosine.
    opt::SGD o({p}, opt::SGDOptions(0.1));
    opt::CosineAnnealingLR s(o, 10, 0.001);
    check_close(sequence(o, s, 35), [](int e) { return 0.001 + (0.1 - 0.001) * (1 + std::cos(kPi * e / 10)) / 2; },
                1e-9);
  }
  {
    // PyTorch's example: lr = 0.025 at epoch 0, 0.03125, 0.0375, 0.04375, then 0.05.
    opt::SGD o({p}, opt::SGDOptions(0.05));
    opt::LinearLR s(o, 0.5, 1.0, 4);
    const double want[] = {0.025, 0.03125, 0.0375, 0.04375, 0.05, 0.05, 0.05};
    check_close(sequence(o, s, 6), [&](int e) { return want[e]; });
  }
}

TEST_CASE("OneCycleLR follows the 1cycle policy and cycles momentum") {
  Tensor p = param();
  const int total = 100;
  const double max_lr = 0.1, initial = max_lr / 25, min_lr = initial / 1e4;
  auto cos_anneal = [](double a, double b, double pct) { return b + (a - b) / 2 * (std::cos(kPi * pct) + 1); };
  {
    opt::SGD o({p}, opt::SGDOptions(0.5).momentum(0.9));
    opt::OneCycleOptions oc;
    oc.total_steps = total;
    opt::OneCycleLR s(o, max_lr, oc);
    std::vector<double> mom = {o.param_groups()[0].options.at("momentum")};
    std::vector<double> lrs = {o.param_groups()[0].lr()};
    for (int i = 0; i < total; ++i) {
      s.step();
      lrs.push_back(o.param_groups()[0].lr());
      mom.push_back(o.param_groups()[0].options.at("momentum"));
    }
    const double up_end = 0.3 * total - 1;  // 29
    check_close(lrs, [&](int e) {
      return e <= up_end ? cos_anneal(initial, max_lr, e / up_end)
                         : cos_anneal(max_lr, min_lr, (e - up_end) / (total - 1 - up_end));
    }, 1e-10);
    CHECK(lrs[0] == Approx(initial));
    CHECK(lrs[29] == Approx(max_lr));
    CHECK(lrs[99] == Approx(min_lr));
    CHECK(mom[0] == Approx(0.95));
    CHECK(mom[29] == Approx(0.85));
    CHECK(mom[99] == Approx(0.95));
    CHECK_THROWS_AS(s.step(), ValueError);  // step 101 of 100
  }
  {
    // Linear annealing, Adam (beta1 cycles), three phases.
    opt::Adam o({p}, opt::AdamOptions(0.5));
    opt::OneCycleOptions oc;
    oc.epochs = 2;
    oc.steps_per_epoch = 10;
    oc.anneal_cos = false;
    oc.three_phase = true;
    oc.pct_start = 0.25;
    opt::OneCycleLR s(o, 1.0, oc);
    std::vector<double> lrs = sequence(o, s, 19);
    // phases end at steps 4 (up), 8 (down to initial) and 19 (to min).
    check_close(lrs, [](int e) {
      const double ini = 1.0 / 25, mn = ini / 1e4;
      if (e <= 4) return ini + (1.0 - ini) * e / 4.0;
      if (e <= 8) return 1.0 + (ini - 1.0) * (e - 4) / 4.0;
      return ini + (mn - ini) * (e - 8) / 11.0;
    }, 1e-10);
    CHECK(o.param_groups()[0].options.at("beta1") == Approx(0.95));
  }
}

TEST_CASE("ReduceLROnPlateau reduces after patience, respects cooldown and min_lr") {
  Tensor p = param();
  {
    opt::SGD o({p}, opt::SGDOptions(1.0));
    opt::ReduceLROnPlateauOptions ro;
    ro.factor = 0.5;
    ro.patience = 2;
    opt::ReduceLROnPlateau s(o, ro);
    const double metrics[] = {10, 9, 9, 9, 9, 8, 8, 8, 8};
    const double want[] = {1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.25};
    for (int i = 0; i < 9; ++i) {
      s.step(metrics[i]);
      INFO("epoch " << i + 1);
      CHECK(o.param_groups()[0].lr() == want[i]);
      CHECK(s.get_last_lr()[0] == want[i]);
    }
    CHECK(s.best() == 8);
  }
  {
    opt::SGD o({p}, opt::SGDOptions(1.0));
    opt::ReduceLROnPlateauOptions ro;
    ro.factor = 0.5;
    ro.patience = 0;
    ro.cooldown = 1;
    ro.min_lrs = {0.2};
    opt::ReduceLROnPlateau s(o, ro);
    const double want[] = {1, 0.5, 0.5, 0.25, 0.25, 0.2, 0.2, 0.2};
    for (int i = 0; i < 8; ++i) {
      s.step(5.0);
      INFO("epoch " << i + 1);
      CHECK(o.param_groups()[0].lr() == want[i]);
    }
  }
  {
    // mode max with an absolute threshold: 1.05 over 1.0 is no improvement at 0.1.
    opt::SGD o({p}, opt::SGDOptions(1.0));
    opt::ReduceLROnPlateauOptions ro;
    ro.mode_max = true;
    ro.threshold_rel = false;
    ro.threshold = 0.1;
    ro.patience = 1;
    opt::ReduceLROnPlateau s(o, ro);
    for (double m : {1.0, 1.05, 1.08}) s.step(m);
    CHECK(o.param_groups()[0].lr() == Approx(0.1));
    CHECK(s.best() == 1.0);
  }
}

TEST_CASE("scheduler state_dict round trips continue identically") {
  Tensor p = param();
  opt::SGD o1({p}, opt::SGDOptions(0.1).momentum(0.9));
  opt::CosineAnnealingLR s1(o1, 7, 0.01);
  for (int i = 0; i < 4; ++i) s1.step();
  Tensor q = param();
  opt::SGD o2({q}, opt::SGDOptions(0.3).momentum(0.9));
  opt::CosineAnnealingLR s2(o2, 3, 0.0);
  o2.load_state_dict(o1.state_dict());
  s2.load_state_dict(s1.state_dict());
  CHECK(s2.get_last_lr() == s1.get_last_lr());
  for (int i = 0; i < 12; ++i) {
    s1.step();
    s2.step();
    CHECK(o2.param_groups()[0].lr() == o1.param_groups()[0].lr());
  }
  opt::ReduceLROnPlateau r1(o1), r2(o2);
  for (double m : {3.0, 2.0, 2.5}) r1.step(m);
  r2.load_state_dict(r1.state_dict());
  CHECK(r2.best() == 2.0);
  CHECK(r2.num_bad_epochs() == 1);
  opt::StateDict missing = s1.state_dict();
  missing.erase(missing.begin());
  CHECK_THROWS_WITH(s2.load_state_dict(missing), Catch::Contains("last_epoch"));
}

TEST_CASE("scheduler arguments are checked") {
  Tensor p = param();
  opt::SGD o({p}, opt::SGDOptions(0.1));
  CHECK_THROWS_WITH(opt::StepLR(o, 0), Catch::Contains("step_size"));
  CHECK_THROWS_WITH(opt::LinearLR(o, 0.0), Catch::Contains("start_factor"));
  CHECK_THROWS_WITH(opt::CosineAnnealingLR(o, 0), Catch::Contains("T_max"));
  CHECK_THROWS_AS(opt::OneCycleLR(o, 0.1, opt::OneCycleOptions{}), ValueError);
  opt::ReduceLROnPlateauOptions ro;
  ro.factor = 1.0;
  CHECK_THROWS_WITH(opt::ReduceLROnPlateau(o, ro), Catch::Contains("factor"));
  opt::Adagrad ada({p});
  opt::OneCycleOptions oc;
  oc.total_steps = 10;
  CHECK_THROWS_WITH(opt::OneCycleLR(ada, 0.1, oc), Catch::Contains("momentum"));
}
