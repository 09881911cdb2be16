// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The losses of vnn/nn/loss_more.h against PyTorch's formulas in float64
// loops (every reduction), float64 finite-difference gradients and the typed
// errors, on the device under test.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <numeric>
#include <vector>

#include "support/device_under_test.hpp"
#include "vnn/nn.h"

using namespace vnn;
using namespace vnn::nn;
namespace F = vnn::nn::functional;
using vnn::test::device_under_test;

namespace {

using Vec = std::vector<double>;

Tensor on_dev(const Vec& v, const Shape& s) { return from_vector(v, s, device_under_test()); }
Vec vals(size_t n, uint32_t salt, double lo = -2.0, double hi = 2.0) { return test::lcg_values(n, 23, salt, lo, hi); }
Vec signs(size_t n, uint32_t salt) {
  Vec v = vals(n, salt);
  for (double& x : v) x = x >= 0 ? 1.0 : -1.0;
  return v;
}
double total(const Vec& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

// none / sum / mean of a loss function against the per-element reference.
void check_reductions(const char* name, const std::function<Tensor(Reduction)>& f, const Vec& per_element) {
  INFO(name);
  Vec none = f(Reduction::none).to_vector<double>();
  REQUIRE(none.size() == per_element.size());
  for (size_t i = 0; i < none.size(); ++i) CHECK(none[i] == Approx(per_element[i]).epsilon(1e-10).margin(1e-12));
  CHECK(f(Reduction::sum).item() == Approx(total(per_element)).epsilon(1e-10));
  CHECK(f(Reduction::mean).item() == Approx(total(per_element) / double(per_element.size())).epsilon(1e-10));
}

void check_grad(const char* name, const std::function<Tensor(const std::vector<Tensor>&)>& f,
                const std::vector<Tensor>& in) {
  INFO(name);
  auto r = autograd::gradcheck(f, in);
  INFO(r.message);
  CHECK(r.ok);
}

double sp(double z) { return std::max(z, 0.0) + std::log1p(std::exp(-std::fabs(z))); }  // softplus

}  // namespace

TEST_CASE("elementwise losses: Huber, SoftMargin, MarginRanking, HingeEmbedding, PoissonNLL") {
  const size_t n = 12;
  Vec x = vals(n, 1), y = vals(n, 2), x2 = vals(n, 3), s = signs(n, 4);
  Tensor X = on_dev(x, {3, 4}), Y = on_dev(y, {3, 4}), X2 = on_dev(x2, {3, 4}), S = on_dev(s, {3, 4});
  Vec huber, soft, rank, hinge, pois, pois_full, pois_lin;
  const double delta = 0.7, margin = 0.3;
  Vec rate = vals(n, 5, 0.1, 3.0), counts = {0, 1, 2, 5, 0, 3, 1, 7, 2, 0, 4, 1};
  for (size_t i = 0; i < n; ++i) {
    const double d = std::fabs(x[i] - y[i]);
    huber.push_back(d < delta ? 0.5 * d * d : delta * (d - 0.5 * delta));
    soft.push_back(std::log1p(std::exp(-s[i] * x[i])));
    rank.push_back(std::max(0.0, -s[i] * (x[i] - x2[i]) + margin));
    hinge.push_back(s[i] == 1 ? x[i] : std::max(0.0, 1.0 - x[i]));
    const double t = counts[i];
    pois.push_back(std::exp(x[i]) - t * x[i]);
    pois_full.push_back(pois.back() + (t > 1 ? t * std::log(t) - t + 0.5 * std::log(2 * M_PI * t) : 0.0));
    pois_lin.push_back(rate[i] - t * std::log(rate[i] + 1e-8));
  }
  Tensor C = on_dev(counts, {3, 4}), R = on_dev(rate, {3, 4});
  check_reductions("huber", [&](Reduction r) { return HuberLoss(HuberLossOptions().delta(delta).reduction(r))(X, Y); },
                   huber);
  check_reductions("soft_margin", [&](Reduction r) { return F::soft_margin_loss(X, S, r); }, soft);
  check_reductions("margin_ranking", [&](Reduction r) {
    return MarginRankingLoss(MarginRankingLossOptions().margin(margin).reduction(r))(X, X2, S);
  }, rank);
  check_reductions("hinge_embedding", [&](Reduction r) {
    return HingeEmbeddingLoss(HingeEmbeddingLossOptions().reduction(r))(X, S);
  }, hinge);
  check_reductions("poisson_nll", [&](Reduction r) { return PoissonNLLLoss(PoissonNLLLossOptions().reduction(r))(X, C); },
                   pois);
  check_reductions("poisson_nll full", [&](Reduction r) {
    return F::poisson_nll_loss(X, C, F::PoissonNLLLossFuncOptions().full(true).reduction(r));
  }, pois_full);
  check_reductions("poisson_nll rate", [&](Reduction r) {
    return F::poisson_nll_loss(R, C, F::PoissonNLLLossFuncOptions().log_input(false).reduction(r));
  }, pois_lin);
  // Huber with delta 1 is SmoothL1 with beta 1.
  CHECK(F::huber_loss(X, Y).item() == Approx(F::smooth_l1_loss(X, Y).item()).epsilon(1e-12));
  Tensor xg = on_dev(x, {3, 4}).requires_grad_(), x2g = on_dev(x2, {3, 4}).requires_grad_();
  Tensor rg = on_dev(rate, {3, 4}).requires_grad_();
  check_grad("huber", [&](const std::vector<Tensor>& t) { return F::huber_loss(t[0], Y, HuberLossOptions().delta(delta)); },
             {xg});
  check_grad("soft_margin", [&](const std::vector<Tensor>& t) { return F::soft_margin_loss(t[0], S); }, {xg});
  check_grad("margin_ranking", [&](const std::vector<Tensor>& t) {
    return F::margin_ranking_loss(t[0], t[1], S, MarginRankingLossOptions().margin(margin));
  }, {xg, x2g});
  check_grad("hinge", [&](const std::vector<Tensor>& t) { return F::hinge_embedding_loss(t[0], S); }, {xg});
  check_grad("poisson", [&](const std::vector<Tensor>& t) {
    return F::poisson_nll_loss(t[0], C, PoissonNLLLossOptions().full(true));
  }, {xg});
  check_grad("poisson rate", [&](const std::vector<Tensor>& t) {
    return F::poisson_nll_loss(t[0], C, PoissonNLLLossOptions().log_input(false));
  }, {rg});
}

TEST_CASE("KLDivLoss: log_target, zero targets, batchmean") {
  // input: log-probabilities [2, 3]; target: probabilities with a zero.
  Vec logits = vals(6, 7);
  Vec inp(6), tgt = {0.2, 0.0, 0.8, 0.5, 0.25, 0.25};
  for (int r = 0; r < 2; ++r) {
    double m = 0;
    for (int c = 0; c < 3; ++c) m += std::exp(logits[size_t(r * 3 + c)]);
    for (int c = 0; c < 3; ++c) inp[size_t(r * 3 + c)] = logits[size_t(r * 3 + c)] - std::log(m);
  }
  Vec pointwise, pointwise_log;
  Vec log_t = vals(6, 8, -3, 0);
  for (size_t i = 0; i < 6; ++i) {
    pointwise.push_back(tgt[i] > 0 ? tgt[i] * (std::log(tgt[i]) - inp[i]) : 0.0);
    pointwise_log.push_back(std::exp(log_t[i]) * (log_t[i] - inp[i]));
  }
  Tensor I = on_dev(inp, {2, 3}), T = on_dev(tgt, {2, 3}), LT = on_dev(log_t, {2, 3});
  check_reductions("kl_div", [&](Reduction r) { return KLDivLoss(KLDivLossOptions().reduction(r))(I, T); }, pointwise);
  check_reductions("kl_div log_target", [&](Reduction r) {
    return F::kl_div(I, LT, F::KLDivFuncOptions().reduction(r).log_target(true));
  }, pointwise_log);
  CHECK(KLDivLoss(KLDivLossOptions().reduction(kBatchMean))(I, T).item() == Approx(total(pointwise) / 2).epsilon(1e-12));
  CHECK(F::kl_div(I, LT, F::KLDivFuncOptions().reduction(vnn::kBatchMean).log_target(true)).item() ==
        Approx(total(pointwise_log) / 2).epsilon(1e-12));
  Tensor ig = on_dev(inp, {2, 3}).requires_grad_(), tg = on_dev(log_t, {2, 3}).requires_grad_();
  check_grad("kl_div", [&](const std::vector<Tensor>& t) {
    return F::kl_div(t[0], T, KLDivLossOptions().reduction(kBatchMean));
  }, {ig});
  check_grad("kl_div log_target", [&](const std::vector<Tensor>& t) {
    return F::kl_div(t[0], t[1], KLDivLossOptions().log_target(true));
  }, {ig, tg});
  // A negative target is outside KL's domain: NaN there (PyTorch's xlogy), 0 where it is 0.
  Tensor odd = on_dev(Vec{0.5, -0.25, 0.0, 0.75, 0.1, 0.2}, {2, 3});
  Vec got = F::kl_div(I, odd, KLDivLossOptions().reduction(Reduction::none)).to(kFloat64).to_vector<double>();
  CHECK(std::isnan(got[1]));
  CHECK(got[2] == 0.0);
  CHECK(got[0] == Approx(0.5 * (std::log(0.5) - inp[0])).epsilon(1e-12));
  CHECK_THROWS_AS(F::kl_div(I, on_dev(tgt, {3, 2})), ShapeError);
}

TEST_CASE("CosineEmbedding, Triplet, GaussianNLL and MultiLabelSoftMargin losses") {
  const int64_t n = 4, d = 5;
  Vec a = vals(size_t(n * d), 11), b = vals(size_t(n * d), 12), c = vals(size_t(n * d), 13), y = signs(size_t(n), 14);
  Tensor A = on_dev(a, {n, d}), B = on_dev(b, {n, d}), Cn = on_dev(c, {n, d}), Y = on_dev(y, {n});
  Vec cosl, trip, trip_swap;
  const double margin = 0.2;
  auto dist = [&](const Vec& u, const Vec& v, int64_t r, double p) {
    double s = 0;
    for (int64_t j = 0; j < d; ++j) s += std::pow(std::fabs(u[size_t(r * d + j)] - v[size_t(r * d + j)] + 1e-6), p);
    return std::pow(s, 1.0 / p);
  };
  for (int64_t r = 0; r < n; ++r) {
    double dot = 0, na = 0, nb = 0;
    for (int64_t j = 0; j < d; ++j) {
      const size_t k = size_t(r * d + j);
      dot += a[k] * b[k], na += a[k] * a[k], nb += b[k] * b[k];
    }
    const double cos = dot / std::sqrt((na + 1e-12) * (nb + 1e-12));
    cosl.push_back(y[size_t(r)] == 1 ? 1 - cos : std::max(0.0, cos - margin));
    const double dp = dist(a, b, r, 2), dn = dist(a, c, r, 2), ds = dist(b, c, r, 2);
    trip.push_back(std::max(dp - dn + 1.0, 0.0));
    trip_swap.push_back(std::max(dp - std::min(dn, ds) + 1.0, 0.0));
  }
  check_reductions("cosine_embedding", [&](Reduction r) {
    return CosineEmbeddingLoss(CosineEmbeddingLossOptions().margin(margin).reduction(r))(A, B, Y);
  }, cosl);
  check_reductions("triplet", [&](Reduction r) {
    return TripletMarginLoss(TripletMarginLossOptions().reduction(r))(A, B, Cn);
  }, trip);
  check_reductions("triplet swap", [&](Reduction r) {
    return F::triplet_margin_loss(A, B, Cn, F::TripletMarginLossFuncOptions().swap(true).reduction(r));
  }, trip_swap);
  Vec trip_p1;
  for (int64_t r = 0; r < n; ++r) trip_p1.push_back(std::max(dist(a, b, r, 1) - dist(a, c, r, 1) + 1.0, 0.0));
  check_reductions("triplet p=1", [&](Reduction r) {
    return F::triplet_margin_loss(A, B, Cn, F::TripletMarginLossFuncOptions().p(1).reduction(r));
  }, trip_p1);
  // GaussianNLL: full var, var with one fewer dim (homoscedastic), clamping to eps.
  Vec var = vals(size_t(n * d), 15, 0.05, 2.0), var_row = vals(size_t(n), 16, 0.05, 2.0);
  var[0] = 1e-9;  // clamped to eps
  Vec g_full, g_row;
  for (int64_t r = 0; r < n; ++r)
    for (int64_t j = 0; j < d; ++j) {
      const size_t k = size_t(r * d + j);
      const double v = std::max(var[k], 1e-6), diff = a[k] - b[k];
      g_full.push_back(0.5 * (std::log(v) + diff * diff / v) + 0.5 * std::log(2 * M_PI));
      g_row.push_back(0.5 * (std::log(var_row[size_t(r)]) + diff * diff / var_row[size_t(r)]));
    }
  Tensor V = on_dev(var, {n, d}), VR = on_dev(var_row, {n});
  check_reductions("gaussian_nll full", [&](Reduction r) {
    return GaussianNLLLoss(GaussianNLLLossOptions().full(true).reduction(r))(A, B, V);
  }, g_full);
  check_reductions("gaussian_nll homoscedastic", [&](Reduction r) {
    return F::gaussian_nll_loss(A, B, VR, F::GaussianNLLLossFuncOptions().reduction(r));
  }, g_row);
  CHECK(F::gaussian_nll_loss(A, B, VR.unsqueeze(1)).item() == Approx(total(g_row) / double(n * d)).epsilon(1e-10));
  // A var of size 1 in one dim (here the batch: [1, d]) broadcasts there, as PyTorch's.
  Vec var_col(var.begin(), var.begin() + d);
  Vec var_tiled;
  for (int64_t r = 0; r < n; ++r) var_tiled.insert(var_tiled.end(), var_col.begin(), var_col.end());
  CHECK(F::gaussian_nll_loss(A, B, on_dev(var_col, {1, d})).item() ==
        Approx(F::gaussian_nll_loss(A, B, on_dev(var_tiled, {n, d})).item()).epsilon(1e-12));
  // MultiLabelSoftMargin with class weights: mean over classes per sample, then the reduction.
  Vec lbl = {1, 0, 0, 1, 1, 0, 1, 0, 0, 0, 1, 1, 0, 1, 0, 1, 1, 0, 0, 1}, w = {0.5, 1, 2, 1, 0.25};
  Vec ml;
  for (int64_t r = 0; r < n; ++r) {
    double s = 0;
    for (int64_t j = 0; j < d; ++j) {
      const size_t k = size_t(r * d + j);
      s += w[size_t(j)] * (lbl[k] * sp(-a[k]) + (1 - lbl[k]) * sp(a[k]));
    }
    ml.push_back(s / double(d));
  }
  Tensor L = on_dev(lbl, {n, d}), W = on_dev(w, {d});
  check_reductions("multilabel_soft_margin", [&](Reduction r) {
    return MultiLabelSoftMarginLoss(MultiLabelSoftMarginLossOptions().weight(W).reduction(r))(A, L);
  }, ml);
  // Gradients.
  Tensor ag = on_dev(a, {n, d}).requires_grad_(), bg = on_dev(b, {n, d}).requires_grad_();
  Tensor cg = on_dev(c, {n, d}).requires_grad_(), vg = on_dev(vals(size_t(n * d), 17, 0.1, 2.0), {n, d}).requires_grad_();
  check_grad("cosine", [&](const std::vector<Tensor>& t) {
    return F::cosine_embedding_loss(t[0], t[1], Y, CosineEmbeddingLossOptions().margin(-0.9));
  }, {ag, bg});
  check_grad("triplet", [&](const std::vector<Tensor>& t) {
    return F::triplet_margin_loss(t[0], t[1], t[2], TripletMarginLossOptions().margin(3.0).swap(true));
  }, {ag, bg, cg});
  check_grad("gaussian", [&](const std::vector<Tensor>& t) { return F::gaussian_nll_loss(t[0], t[1], t[2]); },
             {ag, bg, vg});
  check_grad("multilabel", [&](const std::vector<Tensor>& t) {
    return F::multilabel_soft_margin_loss(t[0], L, MultiLabelSoftMarginLossOptions().weight(W));
  }, {ag});
}

TEST_CASE("loss errors are typed and name the loss") {
  Tensor a = on_dev(vals(6, 31), {2, 3}), b = on_dev(vals(6, 32), {3, 2});
  CHECK_THROWS_AS(F::huber_loss(a, b), ShapeError);
  CHECK_THROWS_AS(F::huber_loss(a, a, HuberLossOptions().delta(0)), ValueError);
  CHECK_THROWS_WITH(F::soft_margin_loss(a, b), Catch::Contains("soft_margin_loss"));
  CHECK_THROWS_AS(F::margin_ranking_loss(a, a, on_dev({1, -1}, {2})), ShapeError);
  CHECK_THROWS_AS(F::cosine_embedding_loss(a, a, on_dev({1, -1, 1}, {3})), ShapeError);
  CHECK_THROWS_AS(F::cosine_embedding_loss(a.reshape({1, 2, 3}), a.reshape({1, 2, 3}), on_dev({1}, {1})), ShapeError);
  CHECK_THROWS_AS(F::triplet_margin_loss(a, a, b), ShapeError);
  CHECK_THROWS_AS(F::gaussian_nll_loss(a, a, on_dev({1, 1}, {1, 2})), ShapeError);
  CHECK_THROWS_WITH(F::gaussian_nll_loss(a, a, on_dev({1, -1, 1, 1, 1, 1}, {2, 3})), Catch::Contains("negative"));
  CHECK_THROWS_AS(F::multilabel_soft_margin_loss(a, b), ShapeError);
  CHECK_THROWS_AS(F::poisson_nll_loss(arange(0, 4, 1, device_under_test()), arange(0, 4, 1, device_under_test())),
                  DTypeError);
}
