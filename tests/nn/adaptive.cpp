// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// AdaptiveLogSoftmaxWithLoss (vnn/nn/adaptive.h): keys and shapes as
// PyTorch's; output, loss, every gradient, log_prob and predict against
// PyTorch 2.15 (float64, the same weights) on the device under test; the
// unbatched form, clone, float64 finite differences, the typed errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"
#include "vnn/nn.h"

using namespace vnn;
using namespace vnn::nn;
using vnn::test::device_under_test;

namespace {

void check_values(const Tensor& t, const std::vector<double>& want, double tol = 1e-12) {
  std::vector<double> got = t.to_vector<double>();
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(tol));
}

// AdaptiveLogSoftmaxWithLoss(4, 10, {3, 6}, div_value 2, head_bias) in
// float64 on dev, entry `salt` of the state dict (1-based, in key order)
// filled with 0.5 sin(0.7 i + salt), as the PyTorch script did.
AdaptiveLogSoftmaxWithLoss reference_module(Device dev) {
  AdaptiveLogSoftmaxWithLoss m(AdaptiveLogSoftmaxWithLossOptions(4, 10, {3, 6}).div_value(2.0).head_bias(true));
  m->to(dev, kFloat64);
  StateDict sd;
  int salt = 0;
  for (auto& [k, v] : m->state_dict()) {
    ++salt;
    std::vector<double> vals(size_t(v.numel()));
    for (size_t i = 0; i < vals.size(); ++i) vals[i] = 0.5 * std::sin(0.7 * double(i) + salt);
    sd.emplace_back(k, from_vector(vals, v.sizes()));
  }
  m->load_state_dict(sd);
  return m;
}

Tensor reference_input(Device dev, double scale = 1.0) {
  std::vector<double> x(20);
  for (size_t i = 0; i < x.size(); ++i) x[i] = scale * 0.3 * std::cos(0.9 * double(i));
  return from_vector(x, {5, 4}, dev);
}

}  // namespace

TEST_CASE("AdaptiveLogSoftmaxWithLoss: keys, output, loss and gradients as PyTorch's") {
  Device dev = device_under_test();
  AdaptiveLogSoftmaxWithLoss m = reference_module(dev);
  std::vector<std::string> keys;
  for (auto& [k, v] : m->state_dict()) keys.push_back(k + v.sizes().str());
  CHECK(keys == std::vector<std::string>{"head.weight[5, 4]", "head.bias[5]", "tail.0.0.weight[2, 4]",
                                         "tail.0.1.weight[3, 2]", "tail.1.0.weight[1, 4]", "tail.1.1.weight[4, 1]"});
  CHECK(m->shortlist_size == 3);
  CHECK(m->n_clusters == 2);
  CHECK(m->head_size == 5);
  CHECK(m->cutoffs == std::vector<int64_t>{3, 6, 10});
  Tensor x = reference_input(dev).requires_grad_(true);
  Tensor target = from_vector(std::vector<int64_t>{0, 4, 9, 2, 7}, {5}, dev);
  ASMoutput out = m(x, target);
  // torch.nn.AdaptiveLogSoftmaxWithLoss, PyTorch 2.15, float64, the same weights and input.
  check_values(out.output, {-0.9928235731808759, -3.2915396502361904, -3.822514744382019, -1.5150707824416827,
                            -3.645179397584712});
  CHECK(out.loss.dim() == 0);
  CHECK(out.loss.item() == Approx(2.6534256295650964).margin(1e-12));
  out.loss.backward();
  check_values(x.grad(),
               {-0.06408762733187723, -0.07477584168807896, -0.05029580929362064, -0.0021608718946736806,
                0.008099753194974761, 0.07306019887733455, 0.10365929143058569, 0.08550579950292425,
                0.06858121891871984, -0.013763040819744114, -0.0896343274072375, -0.1233491892401068,
                -0.010763007806165195, -0.050108775193093195, -0.06588760263549899, -0.05067846103623938,
                0.03209542890284846, -0.03962703337631192, -0.09271228266911623, -0.10219349675325723},
               1e-10);
  check_values(m->head->bias.grad(), {0.11334851247749256, 0.2538436757150089, -0.02622547589345367,
                                      -0.06130542812107462, -0.27966128417797315},
               1e-10);
  StateDict params = m->named_parameters();
  auto grad_of = [&](const std::string& k) {
    for (auto& [n, p] : params)
      if (n == k) return p.grad();
    FAIL("no parameter " << k);
    return Tensor();
  };
  check_values(grad_of("tail.0.1.weight"), {-0.014214318662361282, 0.017244909662039204, 0.030360675501074727,
                                            -0.036833781395438726, -0.016146356838713443, 0.01958887173339952},
               1e-10);
  check_values(grad_of("tail.1.0.weight"),
               {-0.00982438966892619, 0.0007643167344433357, 0.010774603471018315, 0.012630885109054033}, 1e-10);
  check_values(grad_of("tail.1.1.weight"),
               {-0.005875121224618269, -0.020861305059201078, -0.004719661006326223, 0.031456087290145575}, 1e-10);
  check_values(grad_of("head.weight").narrow(0, 4, 1),
               {-0.023604731596061253, 0.06999580684150955, 0.11062491413572192, 0.06753529189019251}, 1e-10);

  // Unbatched: a [4] input and a 0-dim target.
  ASMoutput one = m(reference_input(dev).select(0, 1), from_vector(std::vector<int64_t>{4}, {1}, dev).squeeze(0));
  CHECK(one.output.dim() == 0);
  CHECK(one.output.item() == Approx(-3.2915396502361904).margin(1e-12));
  CHECK(one.loss.item() == Approx(3.2915396502361904).margin(1e-12));
}

TEST_CASE("AdaptiveLogSoftmaxWithLoss: log_prob, predict (head and tail rows), clone, finite differences") {
  Device dev = device_under_test();
  AdaptiveLogSoftmaxWithLoss m = reference_module(dev);
  Tensor x = reference_input(dev);
  Tensor lp = m->log_prob(x);
  CHECK(lp.sizes() == Shape{5, 10});
  check_values(lp.select(0, 1), {-1.2286105125610167, -1.4225367440723615, -1.6122022501952775, -3.4083142143282665,
                                 -3.2915396502361904, -3.280869585911029, -3.331982054315457, -3.2406919183067746,
                                 -3.1748046489185358, -3.1653080584610143});
  for (int r = 0; r < 5; ++r) {
    double total = 0;
    for (double v : lp.select(0, r).to_vector<double>()) total += std::exp(v);
    CHECK(total == Approx(1.0).margin(1e-12));
  }
  CHECK(m->log_prob(x.select(0, 1)).sizes() == Shape{10});
  CHECK(m->predict(x).to_vector<int64_t>() == std::vector<int64_t>{0, 0, 0, 0, 1});
  // Scaled up, rows 1 and 2 choose a cluster in the head (4 and 3): their
  // full distributions decide (PyTorch: 2 and 1).
  Tensor x8 = reference_input(dev, 8.0);
  CHECK(m->predict(x8).to_vector<int64_t>() == std::vector<int64_t>{0, 2, 1, 2, 1});
  CHECK(m->predict(x8.select(0, 1)).dim() == 0);
  CHECK(m->predict(x8.select(0, 1)).item() == 2.0);

  auto copy = std::dynamic_pointer_cast<AdaptiveLogSoftmaxWithLossImpl>(m->clone());
  REQUIRE(copy);
  CHECK(test::max_abs_diff(copy->log_prob(x), lp) == 0.0);
  copy->reset_parameters();
  CHECK(test::max_abs_diff(copy->log_prob(x), lp) > 1e-3);

  Tensor target = from_vector(std::vector<int64_t>{5, 1, 8}, {3}, dev);
  auto r = autograd::gradcheck(
      [&](const std::vector<Tensor>& in) { return m(in[0], target).loss; },
      {from_vector(test::lcg_values(12, 4, 1, -1, 1), {3, 4}, dev).requires_grad_(true)});
  INFO(r.message);
  CHECK(r.ok);
}

TEST_CASE("AdaptiveLogSoftmaxWithLoss: errors for cutoffs, shapes and targets") {
  Device dev = device_under_test();
  using Opt = AdaptiveLogSoftmaxWithLossOptions;
  CHECK_THROWS_AS(AdaptiveLogSoftmaxWithLoss(Opt(4, 10, {})), ValueError);
  CHECK_THROWS_AS(AdaptiveLogSoftmaxWithLoss(Opt(4, 10, {6, 3})), ValueError);
  CHECK_THROWS_AS(AdaptiveLogSoftmaxWithLoss(Opt(4, 10, {3, 3})), ValueError);
  CHECK_THROWS_AS(AdaptiveLogSoftmaxWithLoss(Opt(4, 10, {0, 3})), ValueError);
  CHECK_THROWS_AS(AdaptiveLogSoftmaxWithLoss(Opt(4, 10, {3, 10})), ValueError);
  CHECK_THROWS_AS(AdaptiveLogSoftmaxWithLoss(Opt(4, 10, {2, 4, 6})), ValueError);  // 4 / 4^3 = 0 features
  AdaptiveLogSoftmaxWithLoss m(Opt(16, 10, {3, 6}));
  m->to(dev);
  Tensor x = zeros({2, 16}, dev);
  CHECK_THROWS_AS(m(x, from_vector(std::vector<int64_t>{0, 10}, {2}, dev)), IndexError);
  CHECK_THROWS_AS(m(x, from_vector(std::vector<int64_t>{-1, 0}, {2}, dev)), IndexError);
  CHECK_THROWS_AS(m(x, from_vector(std::vector<int64_t>{0, 1, 2}, {3}, dev)), ShapeError);
  CHECK_THROWS_AS(m(x, zeros({2, 1}, TensorOptions(kInt64).device(dev))), ShapeError);
  CHECK_THROWS_AS(m(zeros({2, 5}, dev), from_vector(std::vector<int64_t>{0, 1}, {2}, dev)), ShapeError);
  CHECK_THROWS_AS(m(x, zeros({2}, dev)), DTypeError);
  CHECK_THROWS_AS(m->log_prob(zeros({2, 2, 16}, dev)), ShapeError);
  CHECK_THROWS_AS(m->predict(zeros({3}, dev)), ShapeError);
  CHECK(m->describe().find("cutoffs=[3, 6]") != std::string::npos);
}
