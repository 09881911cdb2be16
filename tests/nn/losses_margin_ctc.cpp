// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// MultiMarginLoss, MultiLabelMarginLoss, TripletMarginWithDistanceLoss
// (vnn/nn/loss_margin.h) and CTCLoss (vnn/nn/loss_ctc.h): values against
// float64 loops (CTC: the alpha recursion written plainly), reductions,
// zero_infinity, float64 finite-difference gradients, typed errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "support/device_under_test.hpp"
#include "support/op_checks.hpp"
#include "vnn/nn.h"
#include "vnn/nn/loss_ctc.h"
#include "vnn/nn/loss_margin.h"

using namespace vnn;
using namespace vnn::nn;
namespace F = vnn::nn::functional;
using vnn::test::check_grad;
using vnn::test::device_under_test;

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double log_add(double a, double b) {
  const double m = std::max(a, b);
  return m == kNegInf ? kNegInf : m + std::log(std::exp(a - m) + std::exp(b - m));
}

// -log p(labels | lp[0..len) of sample b), lp [T, N, C] flattened, by the textbook alpha recursion.
double ctc_reference(const std::vector<double>& lp, int64_t n, int64_t c, int64_t b, int64_t len,
                     const std::vector<int64_t>& labels, int64_t blank) {
  std::vector<int64_t> ext = {blank};
  for (int64_t y : labels) {
    ext.push_back(y);
    ext.push_back(blank);
  }
  const size_t l = ext.size();
  auto at = [&](int64_t t, int64_t k) { return lp[size_t((t * n + b) * c + k)]; };
  std::vector<double> a(l, kNegInf);
  a[0] = at(0, ext[0]);
  if (l > 1) a[1] = at(0, ext[1]);
  for (int64_t t = 1; t < len; ++t) {
    std::vector<double> na(l, kNegInf);
    for (size_t s = 0; s < l; ++s) {
      double v = a[s];
      if (s >= 1) v = log_add(v, a[s - 1]);
      if (s >= 2 && ext[s] != blank && ext[s] != ext[s - 2]) v = log_add(v, a[s - 2]);
      na[s] = v == kNegInf ? kNegInf : v + at(t, ext[s]);
    }
    a = na;
  }
  return -log_add(a[l - 1], l > 1 ? a[l - 2] : kNegInf);
}

}  // namespace

TEST_CASE("MultiMarginLoss and MultiLabelMarginLoss against loops, gradients") {
  Device dev = device_under_test();
  const int64_t n = 3, c = 4;
  std::vector<double> xv = test::lcg_values(size_t(n * c), 21, 1, -1.5, 1.5);
  Tensor x = from_vector(xv, {n, c}, dev);
  const std::vector<int64_t> y = {2, 0, 3};
  const std::vector<double> w = {0.5, 1.0, 2.0, 1.5};
  Tensor yt = from_vector(y, {n}, dev), wt = from_vector(w, {c}, dev);
  for (int64_t p : {1, 2})
    for (bool weighted : {false, true}) {
      INFO("p " << p << " weighted " << weighted);
      MultiMarginLossOptions o;
      o.p(p).margin(0.7).reduction(kNone);
      if (weighted) o.weight(wt);
      std::vector<double> got = MultiMarginLoss(o)(x, yt).to_vector<double>();
      for (int64_t s = 0; s < n; ++s) {
        double want = 0;
        for (int64_t i = 0; i < c; ++i) {
          if (i == y[size_t(s)]) continue;
          const double z = std::max(0.0, 0.7 - xv[size_t(s * c + y[size_t(s)])] + xv[size_t(s * c + i)]);
          want += (p == 1 ? z : z * z) * (weighted ? w[size_t(y[size_t(s)])] : 1.0);
        }
        CHECK(got[size_t(s)] == Approx(want / double(c)).epsilon(1e-12).margin(1e-15));
      }
    }
  CHECK(F::multi_margin_loss(x.select(0, 0), from_vector<int64_t>({2}, {}, dev)).item<double>() ==
        Approx(F::multi_margin_loss(x, yt, F::MultiMarginLossFuncOptions().reduction(kNone)).to_vector<double>()[0]));
  // Multilabel: targets listed until the first -1 (class 1 twice in the last row counts twice).
  const std::vector<int64_t> ml = {3, 0, -1, 1, 2, -1, -1, -1, 1, 1, 2, -1};
  Tensor mt = from_vector(ml, {n, c}, dev);
  std::vector<double> got = MultiLabelMarginLoss(kNone)(x, mt).to_vector<double>();
  for (int64_t s = 0; s < n; ++s) {
    std::vector<int64_t> listed;
    for (int64_t k = 0; k < c && ml[size_t(s * c + k)] != -1; ++k) listed.push_back(ml[size_t(s * c + k)]);
    double want = 0;
    for (int64_t j : listed)
      for (int64_t i = 0; i < c; ++i)
        if (std::find(listed.begin(), listed.end(), i) == listed.end())
          want += std::max(0.0, 1.0 - (xv[size_t(s * c + j)] - xv[size_t(s * c + i)]));
    CHECK(got[size_t(s)] == Approx(want / double(c)).epsilon(1e-12).margin(1e-15));
  }
  CHECK(F::multilabel_margin_loss(x, mt, kSum).item<double>() ==
        Approx(got[0] + got[1] + got[2]).epsilon(1e-12));
  Tensor xg = from_vector(xv, {n, c}, dev).requires_grad_();
  check_grad([&](const std::vector<Tensor>& t) {
    return F::multi_margin_loss(t[0], yt, F::MultiMarginLossFuncOptions().p(2).weight(wt));
  }, {xg});
  check_grad([&](const std::vector<Tensor>& t) { return F::multilabel_margin_loss(t[0], mt); }, {xg});
  CHECK_THROWS_AS(F::multi_margin_loss(x, yt, F::MultiMarginLossFuncOptions().p(3)), ValueError);
  CHECK_THROWS_AS(F::multi_margin_loss(x, from_vector<int64_t>({0, 4, 1}, {3}, dev)), IndexError);
  CHECK_THROWS_AS(F::multi_margin_loss(x, from_vector<int64_t>({0, 1}, {2}, dev)), ShapeError);
  CHECK_THROWS_AS(F::multi_margin_loss(x, yt, F::MultiMarginLossFuncOptions().weight(ones({3}, TensorOptions(dev)))),
                  ShapeError);
  CHECK_THROWS_AS(F::multilabel_margin_loss(x, from_vector<int64_t>(std::vector<int64_t>(12, 7), {n, c}, dev)),
                  IndexError);
  CHECK_THROWS_AS(F::multilabel_margin_loss(x, yt), ShapeError);
  // A 0-D input is one sample of one class, as PyTorch's: the target class is left out, so the loss is 0.
  Tensor x0 = from_vector<double>({0.5}, {1}, dev).reshape({});
  Tensor t0 = from_vector<int64_t>({0}, {1}, dev).reshape({});
  CHECK(F::multi_margin_loss(x0, t0, F::MultiMarginLossFuncOptions().reduction(Reduction::none)).sizes() == Shape{});
  CHECK(F::multi_margin_loss(x0, t0).item<double>() == 0.0);
  CHECK(F::multilabel_margin_loss(x0, t0).item<double>() == 0.0);
  CHECK_THROWS_AS(F::multi_margin_loss(x.reshape({1, n, c}), yt), ShapeError);
}

TEST_CASE("TripletMarginWithDistanceLoss: default and custom distances, swap") {
  Device dev = device_under_test();
  Tensor a = from_vector(test::lcg_values(8, 31, 1, -1.0, 1.0), {2, 4}, dev);
  Tensor p = from_vector(test::lcg_values(8, 32, 1, -1.0, 1.0), {2, 4}, dev);
  Tensor ng = from_vector(test::lcg_values(8, 33, 1, -1.0, 1.0), {2, 4}, dev);
  // The default distance is pairwise_distance: TripletMarginLoss's value.
  CHECK(TripletMarginWithDistanceLoss()(a, p, ng).item<double>() ==
        Approx(F::triplet_margin_loss(a, p, ng, F::TripletMarginLossFuncOptions().eps(1e-6)).item<double>())
            .epsilon(1e-12));
  auto cos_dist = [](const Tensor& u, const Tensor& v) { return add(neg(F::cosine_similarity(u, v)), 1.0); };
  auto o = TripletMarginWithDistanceLossOptions().distance_function(cos_dist).margin(0.5).swap(true).reduction(kNone);
  std::vector<double> got = F::triplet_margin_with_distance_loss(a, p, ng, o).to_vector<double>();
  std::vector<double> dap = cos_dist(a, p).to_vector<double>(), dan = cos_dist(a, ng).to_vector<double>(),
                      dpn = cos_dist(p, ng).to_vector<double>();
  for (size_t i = 0; i < 2; ++i)
    CHECK(got[i] == Approx(std::max(0.0, 0.5 + dap[i] - std::min(dan[i], dpn[i]))).epsilon(1e-12).margin(1e-15));
  check_grad([&](const std::vector<Tensor>& t) {
    return F::triplet_margin_with_distance_loss(t[0], t[1], t[2], TripletMarginWithDistanceLossOptions().margin(2.0));
  }, {a.detach().requires_grad_(), p.detach().requires_grad_(), ng.detach().requires_grad_()});
  CHECK_THROWS_AS(F::triplet_margin_with_distance_loss(a, p, ng, TripletMarginWithDistanceLossOptions().margin(0)),
                  ValueError);
  CHECK_THROWS_AS(F::triplet_margin_with_distance_loss(a, p.select(0, 0), ng), ShapeError);
}

TEST_CASE("CTCLoss: the alpha recursion against a plain loop, reductions, zero_infinity, gradients") {
  Device dev = device_under_test();
  const int64_t t_max = 6, n = 4, c = 4, blank = 0;
  Tensor logits = from_vector(test::lcg_values(size_t(t_max * n * c), 41, 1, -2.0, 2.0), {t_max, n, c}, dev);
  Tensor lp = log_softmax(logits, 2);
  std::vector<double> lpv = lp.to_vector<double>();
  // Sample 1: empty target; sample 2: a repeated label (no skip between them);
  // sample 3: [2, 2, 2] needs 5 frames but has 4: impossible.
  const std::vector<std::vector<int64_t>> labels = {{1, 3}, {}, {2, 2, 1}, {2, 2, 2}};
  const std::vector<int64_t> il = {6, 4, 6, 4}, tl = {2, 0, 3, 3};
  std::vector<int64_t> padded(size_t(n * 3), 1);
  for (size_t b = 0; b < labels.size(); ++b)
    for (size_t k = 0; k < labels[b].size(); ++k) padded[b * 3 + k] = labels[b][k];
  Tensor targets = from_vector(padded, {n, 3}, dev);
  Tensor il_t = from_vector(il, {n}, dev), tl_t = from_vector(tl, {n}, dev);
  std::vector<double> got = CTCLoss(CTCLossOptions().reduction(kNone))(lp, targets, il_t, tl_t).to_vector<double>();
  std::vector<double> want(static_cast<size_t>(n));
  for (int64_t b = 0; b < n; ++b) {
    want[size_t(b)] = ctc_reference(lpv, n, c, b, il[size_t(b)], labels[size_t(b)], blank);
    INFO("sample " << b);
    if (std::isinf(want[size_t(b)])) {
      CHECK(std::isinf(got[size_t(b)]));
    } else {
      CHECK(got[size_t(b)] == Approx(want[size_t(b)]).epsilon(1e-12));
    }
  }
  // The concatenated 1-D targets, the mean (each loss over its target length) and zero_infinity.
  std::vector<int64_t> concat;
  for (auto& l : labels) concat.insert(concat.end(), l.begin(), l.end());
  auto o = CTCLossOptions().zero_infinity(true);
  double mean_got = F::ctc_loss(lp, from_vector(concat, {int64_t(concat.size())}, dev), il, tl, o).item<double>();
  CHECK(mean_got == Approx((want[0] / 2 + want[1] / 1 + want[2] / 3 + 0.0) / 4).epsilon(1e-12));
  CHECK(std::isinf(F::ctc_loss(lp, targets, il, tl, CTCLossOptions().reduction(kSum)).item<double>()));
  // Unbatched, another blank, float32.
  Tensor one = lp.select(1, 0);
  double single = F::ctc_loss(one, from_vector<int64_t>({1, 3}, {2}, dev), std::vector<int64_t>{6},
                              std::vector<int64_t>{2}, CTCLossOptions().reduction(kNone)).item<double>();
  CHECK(single == Approx(want[0]).epsilon(1e-12));
  std::vector<double> lp32 = lp.to(kFloat32).to(kFloat64).to_vector<double>();
  CHECK(F::ctc_loss(lp.to(kFloat32), targets, il, tl, CTCLossOptions().blank(2).reduction(kNone)).to_vector<double>()[0] ==
        Approx(ctc_reference(lp32, n, c, 0, 6, {1, 3}, 2)).epsilon(1e-5));
  // Gradients through log_softmax, the impossible sample zeroed.
  Tensor xg = from_vector(test::lcg_values(size_t(4 * 3 * c), 42, 1, -2.0, 2.0), {4, 3, c}, dev).requires_grad_();
  Tensor tg = from_vector<int64_t>({1, 2, 3, 3, 2, 1}, {3, 2}, dev);
  check_grad([&](const std::vector<Tensor>& t) {
    return F::ctc_loss(log_softmax(t[0], 2), tg, std::vector<int64_t>{4, 3, 4}, std::vector<int64_t>{2, 1, 2},
                       CTCLossOptions().zero_infinity(true));
  }, {xg});
  CHECK_THROWS_AS(F::ctc_loss(lp, targets, std::vector<int64_t>{7, 1, 1, 1}, tl), ValueError);
  CHECK_THROWS_AS(F::ctc_loss(lp, targets, il, std::vector<int64_t>{2, 0}), ShapeError);
  CHECK_THROWS_AS(F::ctc_loss(lp, targets, il, tl, CTCLossOptions().blank(4)), ValueError);
  CHECK_THROWS_AS(F::ctc_loss(lp, targets.to(kFloat64), il, tl), DTypeError);
  CHECK_THROWS_AS(F::ctc_loss(lp, from_vector<int64_t>(std::vector<int64_t>(12, 9), {n, 3}, dev), il, tl), IndexError);
  CHECK_THROWS_AS(F::ctc_loss(lp, targets, il, std::vector<int64_t>{4, 0, 0, 0}), ValueError);
}
