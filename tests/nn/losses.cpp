// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Losses against hand-computed float64 values, their gradients against
// finite differences, and their errors, on the device under test.
#include <catch2/catch.hpp>

#include <cmath>

#include "support/device_under_test.hpp"
#include "vnn/nn.h"

using namespace vnn;
using namespace vnn::nn;
using vnn::test::device_under_test;

namespace {
Tensor logits_fixture() {
  return from_vector<double>({1.0, 2.0, 0.5, -1.0, 0.0, 3.0, 0.2, 0.2, 0.2}, {3, 3}).to(device_under_test());
}
Tensor targets_fixture() { return from_vector<int64_t>({1, 2, 0}, {3}).to(device_under_test()); }

double ref_ce(const std::vector<double>& z, const std::vector<int64_t>& t, const std::vector<double>& w, int64_t ignore,
              double eps) {
  double total = 0, wsum = 0;
  for (size_t r = 0; r < t.size(); ++r) {
    if (t[r] == ignore) continue;
    double m = std::max({z[r * 3], z[r * 3 + 1], z[r * 3 + 2]}), s = 0;
    for (int c = 0; c < 3; ++c) s += std::exp(z[r * 3 + c] - m);
    auto logp = [&](int c) { return z[r * 3 + c] - m - std::log(s); };
    double smooth = 0;
    for (int c = 0; c < 3; ++c) smooth -= w[size_t(c)] * logp(c);
    total += (1 - eps) * (-w[size_t(t[r])] * logp(int(t[r]))) + eps * smooth / 3.0;
    wsum += w[size_t(t[r])];
  }
  return total / wsum;
}
}  // namespace

TEST_CASE("cross entropy matches a float64 reference, with weights, ignore_index and smoothing") {
  Tensor z = logits_fixture(), t = targets_fixture();
  auto zv = z.to_vector<double>();
  CHECK(cross_entropy(z, t).item() == Approx(ref_ce(zv, {1, 2, 0}, {1, 1, 1}, -100, 0)));
  CrossEntropyOptions o;
  o.weight = from_vector<double>({0.5, 2.0, 1.0}, {3}).to(device_under_test());
  CHECK(cross_entropy(z, t, o).item() == Approx(ref_ce(zv, {1, 2, 0}, {0.5, 2.0, 1.0}, -100, 0)));
  CrossEntropyOptions ig;
  ig.ignore_index = 2;
  CHECK(cross_entropy(z, from_vector<int64_t>({1, 2, 0}, {3}).to(device_under_test()), ig).item() ==
        Approx(ref_ce(zv, {1, 2, 0}, {1, 1, 1}, 2, 0)));
  CrossEntropyOptions sm;
  sm.label_smoothing = 0.1;
  CHECK(cross_entropy(z, t, sm).item() == Approx(ref_ce(zv, {1, 2, 0}, {1, 1, 1}, -100, 0.1)));
  CrossEntropyOptions none;
  none.reduction = Reduction::none;
  CHECK(cross_entropy(z, t, none).sizes() == Shape{3});
  CHECK(nll_loss(log_softmax(z, 1), t).item() == Approx(cross_entropy(z, t).item()));
  CHECK(accuracy(z, t) == Approx(1.0));  // row 2 ties: argmax takes the first, class 0
}

TEST_CASE("regression and binary losses") {
  Device dev = device_under_test();
  Tensor x = from_vector<double>({0.5, -1.0, 2.0, 0.1}, {4}).to(dev), y = from_vector<double>({0.0, 1.0, 1.5, 0.1}, {4}).to(dev);
  CHECK(mse_loss(x, y).item() == Approx((0.25 + 4.0 + 0.25 + 0.0) / 4));
  CHECK(l1_loss(x, y, Reduction::sum).item() == Approx(0.5 + 2.0 + 0.5));
  CHECK(smooth_l1_loss(x, y).item() == Approx((0.125 + 1.5 + 0.125 + 0.0) / 4));
  Tensor p = from_vector<double>({0.9, 0.2, 0.6, 0.0}, {4}).to(dev), b = from_vector<double>({1, 0, 1, 0}, {4}).to(dev);
  double want = -(std::log(0.9) + std::log(0.8) + std::log(0.6) + std::log(1.0)) / 4;
  CHECK(binary_cross_entropy(p, b).item() == Approx(want));
  Tensor logit = from_vector<double>({100.0, -3.0, 0.5, -100.0}, {4}).to(dev);
  double bce = 0;
  std::vector<double> lv = {100.0, -3.0, 0.5, -100.0}, bv = {1, 0, 1, 0};
  for (int i = 0; i < 4; ++i) bce += std::max(lv[i], 0.0) - lv[i] * bv[i] + std::log1p(std::exp(-std::fabs(lv[i])));
  CHECK(binary_cross_entropy_with_logits(logit, b).item() == Approx(bce / 4));
  Tensor pw = full({4}, 3.0, TensorOptions(dev).with(kFloat64));
  CHECK(std::isfinite(binary_cross_entropy_with_logits(logit, b, Tensor(), pw).item()));
}

TEST_CASE("loss gradients pass the gradient checker") {
  Device dev = device_under_test();
  Tensor z = logits_fixture().requires_grad_(), t = targets_fixture();
  CrossEntropyOptions o;
  o.weight = from_vector<double>({0.5, 2.0, 1.0}, {3}).to(dev);
  o.label_smoothing = 0.2;
  auto ce = autograd::gradcheck([&](const std::vector<Tensor>& v) { return cross_entropy(v[0], t, o); }, {z});
  INFO(ce.message);
  CHECK(ce.ok);
  Tensor x = from_vector<double>({0.5, -1.0, 2.0, 0.3}, {4}).to(dev).requires_grad_();
  Tensor y = from_vector<double>({0.0, 1.0, 1.5, 0.1}, {4}).to(dev);
  for (auto f : {&mse_loss, &l1_loss}) {
    auto r = autograd::gradcheck([&](const std::vector<Tensor>& v) { return f(v[0], y, Reduction::mean); }, {x});
    CHECK(r.ok);
  }
  auto sl1 = autograd::gradcheck([&](const std::vector<Tensor>& v) { return smooth_l1_loss(v[0], y); }, {x});
  CHECK(sl1.ok);
  Tensor b = from_vector<double>({1, 0, 1, 0}, {4}).to(dev);
  auto bl = autograd::gradcheck([&](const std::vector<Tensor>& v) { return binary_cross_entropy_with_logits(v[0], b); }, {x});
  CHECK(bl.ok);
  Tensor p = from_vector<double>({0.9, 0.2, 0.6, 0.3}, {4}).to(dev).requires_grad_();
  auto bp = autograd::gradcheck([&](const std::vector<Tensor>& v) { return binary_cross_entropy(v[0], b); }, {p});
  CHECK(bp.ok);
}

TEST_CASE("loss errors name shapes and values") {
  Device dev = device_under_test();
  Tensor z = logits_fixture();
  CHECK_THROWS_AS(cross_entropy(z, from_vector<int64_t>({1, 5, 0}, {3}).to(dev)), IndexError);
  CHECK_THROWS_AS(cross_entropy(z, from_vector<int64_t>({1, 2}, {2}).to(dev)), ShapeError);
  CHECK_THROWS_AS(cross_entropy(z, full({3}, 1.0, dev)), DTypeError);
  CHECK_THROWS_AS(mse_loss(zeros({3}, dev), zeros({4}, dev)), ShapeError);
  CHECK_THROWS_AS(reduction_from_string("avg"), ValueError);
}

TEST_CASE("loss modules keep their weights as buffers: state_dict keys, to(), load_state_dict") {
  const Device dev = device_under_test();
  Tensor w = from_vector<double>({0.5, 1.0, 2.0}, {3});
  Tensor z = logits_fixture(), t = targets_fixture();
  CrossEntropyLoss ce(CrossEntropyLossOptions().weight(w));
  CHECK(ce->state_dict().size() == 1);
  CHECK(ce->state_dict().contains("weight"));
  ce->to(dev);
  CHECK(ce->weight.device() == dev);
  const double weighted = ce(z, t).item();
  // PyTorch's checkpoints carry the weights: loading them changes the loss.
  StateDict state;
  state.emplace_back("weight", from_vector<double>({1.0, 1.0, 1.0}, {3}));
  ce->load_state_dict(state);
  CHECK(ce(z, t).item() == Approx(CrossEntropyLoss()(z, t).item()).epsilon(1e-12));
  CHECK(weighted != Approx(ce(z, t).item()));
  CHECK(NLLLoss(NLLLossOptions().weight(w))->state_dict().contains("weight"));
  CHECK(BCELoss(BCELossOptions().weight(w))->state_dict().contains("weight"));
  BCEWithLogitsLoss bce(BCEWithLogitsLossOptions().weight(w).pos_weight(w));
  CHECK(bce->state_dict().contains("weight"));
  CHECK(bce->state_dict().contains("pos_weight"));
  CHECK(MultiLabelSoftMarginLoss(MultiLabelSoftMarginLossOptions().weight(w))->state_dict().contains("weight"));
  // Without weights nothing is registered, and a clone keeps the buffer.
  CHECK(CrossEntropyLoss()->state_dict().size() == 0);
  auto copy = std::dynamic_pointer_cast<CrossEntropyLossImpl>(ce->clone());
  REQUIRE(copy);
  CHECK(copy->weight.to(kFloat64).to_vector<double>() == std::vector<double>{1.0, 1.0, 1.0});
}
