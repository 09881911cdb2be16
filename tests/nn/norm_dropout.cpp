// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// InstanceNorm1d/2d/3d, BatchNorm3d, LocalResponseNorm, CrossMapLRN2d
// (vnn/nn/instance_norm.h) and the dropout family (vnn/nn/dropout.h), with
// the modules' inplace options: values against float64 loops on the device
// under test, running statistics, state-dict keys, float64 finite-difference
// gradients, the masks' structure, and the typed errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"
#include "support/op_checks.hpp"
#include "vnn/nn.h"

using namespace vnn;
using namespace vnn::nn;
namespace F = vnn::nn::functional;
using vnn::test::device_under_test;

namespace {

using vnn::test::check_grad;

std::vector<std::string> sorted_keys(const Module& m) {
  std::vector<std::string> k = m.state_dict().keys();
  std::sort(k.begin(), k.end());
  return k;
}

// x * (k + alpha / size * sum_j w[c][j] x_j^2)^-beta over channels of [N, C, R], in plain loops.
std::vector<double> ref_window_norm(const std::vector<double>& v, int64_t n, int64_t c, int64_t r,
                                    const std::vector<double>& w, int64_t size, double alpha, double beta, double k) {
  std::vector<double> out(v.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < c; ++i)
      for (int64_t e = 0; e < r; ++e) {
        double s = 0;
        for (int64_t j = 0; j < c; ++j) s += w[size_t(i * c + j)] * v[size_t((b * c + j) * r + e)] * v[size_t((b * c + j) * r + e)];
        const size_t at = size_t((b * c + i) * r + e);
        out[at] = v[at] * std::pow(k + alpha / double(size) * s, -beta);
      }
  return out;
}

}  // namespace

TEST_CASE("InstanceNorm2d: per-instance statistics, running stats, eval, keys, gradients") {
  Device dev = device_under_test();
  const int64_t n = 2, c = 3, r = 6;
  std::vector<double> v = test::lcg_values(size_t(n * c * r), 3, 1, -2.0, 2.0);
  Tensor x = from_vector(v, {n, c, 2, 3}, dev);
  InstanceNorm2d in(InstanceNorm2dOptions(c).affine(true).track_running_stats(true).momentum(0.2));
  CHECK(sorted_keys(*in) ==
        std::vector<std::string>{"bias", "num_batches_tracked", "running_mean", "running_var", "weight"});
  CHECK(sorted_keys(*InstanceNorm1d(4)).empty());  // affine and track_running_stats default to false
  const std::vector<double> w = {0.5, -1.0, 2.0}, bi = {0.1, 0.2, -0.3};
  in->to(dev);
  {
    NoGradGuard ng;
    in->weight.copy_(from_vector(w, {c}, dev).to(in->weight.dtype()));
    in->bias.copy_(from_vector(bi, {c}, dev).to(in->bias.dtype()));
  }
  std::vector<double> got = in(x.to(kFloat32)).to_vector<double>();
  std::vector<double> mean_c(size_t(c), 0.0), uvar_c(size_t(c), 0.0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      const size_t o = size_t((b * c + ch) * r);
      double m = 0, s = 0;
      for (int64_t e = 0; e < r; ++e) m += v[o + size_t(e)] / double(r);
      for (int64_t e = 0; e < r; ++e) s += (v[o + size_t(e)] - m) * (v[o + size_t(e)] - m);
      mean_c[size_t(ch)] += m / double(n);
      uvar_c[size_t(ch)] += s / double(r - 1) / double(n);
      for (int64_t e = 0; e < r; ++e)
        CHECK(got[o + size_t(e)] ==
              Approx((v[o + size_t(e)] - m) / std::sqrt(s / double(r) + 1e-5) * w[size_t(ch)] + bi[size_t(ch)])
                  .margin(1e-5));
    }
  std::vector<double> rm = in->running_mean.to_vector<double>(), rv = in->running_var.to_vector<double>();
  for (int64_t ch = 0; ch < c; ++ch) {
    CHECK(rm[size_t(ch)] == Approx(0.2 * mean_c[size_t(ch)]).margin(1e-6));
    CHECK(rv[size_t(ch)] == Approx(0.8 + 0.2 * uvar_c[size_t(ch)]).margin(1e-6));
  }
  CHECK(in->num_batches_tracked.to_vector<int64_t>() == std::vector<int64_t>{1});
  // Eval normalises with the running statistics.
  in->eval();
  std::vector<double> ev = in(x.to(kFloat32)).to_vector<double>();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t e = 0; e < r; ++e) {
        const size_t at = size_t((b * c + ch) * r + e);
        CHECK(ev[at] == Approx((v[at] - rm[size_t(ch)]) / std::sqrt(rv[size_t(ch)] + 1e-5) * w[size_t(ch)] +
                               bi[size_t(ch)])
                            .margin(1e-5));
      }
  // Unbatched [C, H, W] is the batched result of one sample; 1d and 3d ranks.
  InstanceNorm2d plain(c);
  std::vector<double> one = plain(x.select(0, 1)).to_vector<double>();
  std::vector<double> both = plain(x).to_vector<double>();
  for (size_t i = 0; i < one.size(); ++i) CHECK(one[i] == Approx(both[size_t(c * r) + i]).margin(1e-12));
  CHECK(InstanceNorm1d(c)(x.reshape({n, c, r})).sizes() == Shape{n, c, r});
  CHECK(InstanceNorm3d(c)(x.reshape({n, c, 1, 2, 3})).sizes() == Shape{n, c, 1, 2, 3});
  Tensor xg = from_vector(v, {n, c, r}, dev).requires_grad_();
  Tensor wg = from_vector(w, {c}, dev).requires_grad_(), bg = from_vector(bi, {c}, dev).requires_grad_();
  check_grad([](const std::vector<Tensor>& t) {
    return F::instance_norm(t[0], F::InstanceNormFuncOptions().weight(t[1]).bias(t[2]).eps(1e-3));
  }, {xg, wg, bg});
}

TEST_CASE("BatchNorm3d: per-channel statistics over N, D, H, W and its keys") {
  Device dev = device_under_test();
  std::vector<double> v = test::lcg_values(2 * 3 * 2 * 2 * 2, 5, 2, -1.0, 1.0);
  Tensor x = from_vector(v, {2, 3, 2, 2, 2}, dev);
  BatchNorm3d bn(BatchNorm3dOptions(3).momentum(0.5));
  CHECK(sorted_keys(*bn) ==
        std::vector<std::string>{"bias", "num_batches_tracked", "running_mean", "running_var", "weight"});
  bn->to(dev);
  std::vector<double> got = bn(x.to(kFloat32)).to_vector<double>();
  for (int ch = 0; ch < 3; ++ch) {
    double m = 0, s = 0;
    for (int b = 0; b < 2; ++b)
      for (int e = 0; e < 8; ++e) m += v[size_t((b * 3 + ch) * 8 + e)] / 16.0;
    for (int b = 0; b < 2; ++b)
      for (int e = 0; e < 8; ++e) s += std::pow(v[size_t((b * 3 + ch) * 8 + e)] - m, 2) / 16.0;
    for (int b = 0; b < 2; ++b)
      for (int e = 0; e < 8; ++e) {
        const size_t at = size_t((b * 3 + ch) * 8 + e);
        CHECK(got[at] == Approx((v[at] - m) / std::sqrt(s + 1e-5)).margin(1e-5));
      }
    CHECK(bn->running_mean.to_vector<double>()[size_t(ch)] == Approx(0.5 * m).margin(1e-6));
  }
  CHECK_THROWS_AS(bn(x.select(0, 0)), ShapeError);
}

TEST_CASE("LocalResponseNorm and CrossMapLRN2d against loops, gradients") {
  Device dev = device_under_test();
  const int64_t n = 2, c = 5, r = 4;
  std::vector<double> v = test::lcg_values(size_t(n * c * r), 7, 3, -2.0, 2.0);
  for (int64_t size : {1, 2, 3, 4, 7}) {
    INFO("size " << size);
    std::vector<double> w(size_t(c * c), 0.0);
    for (int64_t i = 0; i < c; ++i)
      for (int64_t j = std::max<int64_t>(0, i - size / 2); j <= std::min(c - 1, i + (size - 1) / 2); ++j)
        w[size_t(i * c + j)] = 1;
    std::vector<double> want = ref_window_norm(v, n, c, r, w, size, 0.3, 0.75, 2.0);
    LocalResponseNorm lrn(LocalResponseNormOptions(size).alpha(0.3).k(2.0));
    std::vector<double> got3 = lrn(from_vector(v, {n, c, r}, dev)).to_vector<double>();
    std::vector<double> got4 = lrn(from_vector(v, {n, c, 2, 2}, dev)).to_vector<double>();
    for (size_t i = 0; i < v.size(); ++i) {
      CHECK(got3[i] == Approx(want[i]).epsilon(1e-12));
      CHECK(got4[i] == Approx(want[i]).epsilon(1e-12));
    }
    // CrossMapLRN2d: LibTorch's running-sum loop, replayed on the values.
    std::vector<double> cm(v.size());
    const int64_t pre_pad = (size - 1) / 2 + 1;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t e = 0; e < r; ++e) {
        auto sq = [&](int64_t ch) { return v[size_t((b * c + ch) * r + e)] * v[size_t((b * c + ch) * r + e)]; };
        std::vector<double> s(size_t(c), 0.0);
        for (int64_t ch = 0; ch < std::min(pre_pad, c); ++ch) s[0] += sq(ch);
        for (int64_t ch = 1; ch < c; ++ch) {
          s[size_t(ch)] = s[size_t(ch - 1)];
          if (ch < c - pre_pad + 1) s[size_t(ch)] += sq(ch + pre_pad - 1);
          if (ch > pre_pad) s[size_t(ch)] -= sq(ch - pre_pad);
        }
        for (int64_t ch = 0; ch < c; ++ch) {
          const size_t at = size_t((b * c + ch) * r + e);
          cm[at] = v[at] * std::pow(3.0 + 0.3 / double(size) * s[size_t(ch)], -0.5);
        }
      }
    CrossMapLRN2d cross(CrossMapLRN2dOptions(size).alpha(0.3).beta(0.5).k(3));
    std::vector<double> gotc = cross(from_vector(v, {n, c, 2, 2}, dev)).to_vector<double>();
    for (size_t i = 0; i < v.size(); ++i) CHECK(gotc[i] == Approx(cm[i]).epsilon(1e-12));
  }
  Tensor xg = from_vector(v, {n, c, 2, 2}, dev).requires_grad_();
  check_grad([](const std::vector<Tensor>& t) {
    return F::local_response_norm(t[0], F::LocalResponseNormFuncOptions(3).alpha(0.5).beta(0.6));
  }, {xg});
  check_grad([](const std::vector<Tensor>& t) {
    return CrossMapLRN2d(CrossMapLRN2dOptions(4).alpha(0.5))(t[0]);
  }, {xg});
  Tensor y32 = LocalResponseNorm(3)(from_vector(v, {n, c, r}, dev).to(kFloat32));
  CHECK(y32.dtype() == kFloat32);
}

TEST_CASE("Dropout1d/2d/3d drop whole channels; eval and p = 0 are the identity") {
  Device dev = device_under_test();
  manual_seed(11);
  Tensor x = ones({4, 16, 3, 3}, TensorOptions(dev).dtype(kFloat64));
  Dropout2d d(Dropout2dOptions(0.25));
  std::vector<double> y = d(x).to_vector<double>();
  int kept = 0;
  for (size_t ch = 0; ch < 64; ++ch) {
    const double first = y[ch * 9];
    CHECK((first == 0.0 || first == Approx(1.0 / 0.75).epsilon(1e-15)));
    for (size_t e = 1; e < 9; ++e) CHECK(y[ch * 9 + e] == first);
    kept += first != 0.0;
  }
  CHECK(kept > 32);  // about 48 of 64 kept; below 33 has probability < 1e-6
  CHECK(kept < 64);
  // Unbatched inputs and the 1d / 3d ranks keep their shapes; channels stay whole.
  std::vector<double> u = F::dropout1d(ones({6, 5}, TensorOptions(dev).dtype(kFloat64)), F::Dropout1dFuncOptions().p(0.5))
                              .to_vector<double>();
  for (size_t ch = 0; ch < 6; ++ch)
    for (size_t e = 1; e < 5; ++e) CHECK(u[ch * 5 + e] == u[ch * 5]);
  CHECK(Dropout3d(0.5)(ones({2, 3, 2, 2, 2}, TensorOptions(dev))).sizes() == Shape{2, 3, 2, 2, 2});
  CHECK(Dropout1d(0.5)(ones({2, 3, 4}, TensorOptions(dev))).sizes() == Shape{2, 3, 4});
  CHECK(F::dropout2d(x, F::Dropout2dFuncOptions().p(1.0)).sum().item<double>() == 0.0);
  d->eval();
  CHECK(d(x).sum().item<double>() == 64.0 * 9);
  // The gradient is the mask: the same draws on every call under one seed.
  Tensor xg = from_vector(test::lcg_values(2 * 4 * 3, 1, 1, -1.0, 1.0), {2, 4, 3}, dev).requires_grad_();
  check_grad([](const std::vector<Tensor>& t) {
    manual_seed(5);
    return F::dropout1d(t[0], F::Dropout1dFuncOptions().p(0.4));
  }, {xg});
}

TEST_CASE("AlphaDropout and FeatureAlphaDropout: PyTorch's affine map, moments, channels") {
  Device dev = device_under_test();
  manual_seed(3);
  const double p = 0.2, alpha = 1.7580993408473766;
  const double a = 1.0 / std::sqrt((alpha * alpha * p + 1) * (1 - p));
  Tensor x = randn({4096}, TensorOptions(dev).dtype(kFloat64));
  std::vector<double> xv = x.to_vector<double>();
  AlphaDropout ad{AlphaDropoutOptions(p)};
  std::vector<double> y = ad(x).to_vector<double>();
  int dropped = 0;
  double m = 0, s = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    const bool is_drop = std::abs(y[i] - (alpha * a * p - alpha * a)) < 1e-12;
    if (!is_drop) CHECK(y[i] == Approx(xv[i] * a + alpha * a * p).margin(1e-12));
    dropped += is_drop;
    m += y[i] / double(y.size());
  }
  for (double e : y) s += (e - m) * (e - m) / double(y.size());
  CHECK(dropped > 600);  // about 819 of 4096
  CHECK(dropped < 1050);
  CHECK(std::abs(m) < 0.1);            // zero mean and unit variance are kept for a standard normal input
  CHECK(std::abs(s - 1.0) < 0.15);
  ad->eval();
  CHECK(ad(x).to_vector<double>() == xv);
  CHECK(F::alpha_dropout(x, F::AlphaDropoutFuncOptions().p(0.5)).to_vector<double>() == xv);  // training false
  // Out of training the identity whatever the input, as PyTorch's: 1-D and integer inputs too.
  Tensor v1 = from_vector<double>({1.0, -2.0}, {2}, dev);
  CHECK(F::feature_alpha_dropout(v1, F::FeatureAlphaDropoutFuncOptions().p(0.5)).to_vector<double>() ==
        v1.to_vector<double>());
  Tensor vi = arange(0, 4, 1, dev);
  CHECK(F::feature_alpha_dropout(vi, F::FeatureAlphaDropoutFuncOptions().p(0.5)).dtype() == vi.dtype());
  // One draw per channel: every element of a dropped channel is the constant.
  Tensor xc = from_vector(test::lcg_values(8 * 6 * 4, 2, 2, -1.0, 1.0), {8, 6, 4}, dev);
  std::vector<double> yc = FeatureAlphaDropout(0.5)(xc).to_vector<double>();
  const double a5 = 1.0 / std::sqrt((alpha * alpha * 0.5 + 1) * 0.5), drop5 = alpha * a5 * 0.5 - alpha * a5;
  for (size_t ch = 0; ch < 48; ++ch) {
    const bool first_dropped = std::abs(yc[ch * 4] - drop5) < 1e-12;
    for (size_t e = 1; e < 4; ++e) CHECK((std::abs(yc[ch * 4 + e] - drop5) < 1e-12) == first_dropped);
  }
  Tensor xg = from_vector(test::lcg_values(12, 4, 4, -1.0, 1.0), {2, 3, 2}, dev).requires_grad_();
  check_grad([](const std::vector<Tensor>& t) {
    manual_seed(9);
    return F::feature_alpha_dropout(t[0], F::FeatureAlphaDropoutFuncOptions().p(0.3).training(true));
  }, {xg});
}

TEST_CASE("inplace options of ReLU, LeakyReLU, Dropout and Dropout2d write the input") {
  Device dev = device_under_test();
  Tensor x = from_vector<double>({-2.0, 0.5, 3.0}, {3}, dev);
  Tensor y = ReLU(ReLUOptions(true))(x);
  CHECK(x.to_vector<double>() == std::vector<double>{0.0, 0.5, 3.0});
  CHECK(y.to_vector<double>() == x.to_vector<double>());
  Tensor z = from_vector<double>({-2.0, 1.0}, {2}, dev);
  LeakyReLU(LeakyReLUOptions().negative_slope(0.5).inplace(true))(z);
  CHECK(z.to_vector<double>() == std::vector<double>{-1.0, 1.0});
  Tensor o = from_vector<double>({1.0, 2.0}, {2}, dev);
  Dropout(DropoutOptions(1.0).inplace(true))(o);
  CHECK(o.to_vector<double>() == std::vector<double>{0.0, 0.0});
  Tensor c = ones({2, 3, 2, 2}, TensorOptions(dev));
  Dropout2d(Dropout2dOptions(1.0).inplace(true))(c);
  CHECK(c.sum().item<double>() == 0.0);
  CHECK(ReLU()(from_vector<double>({-1.0}, {1}, dev)).to_vector<double>() == std::vector<double>{0.0});
}

TEST_CASE("norm and dropout errors are typed and name the layer") {
  Device dev = device_under_test();
  Tensor x2 = zeros({2, 3}, TensorOptions(dev)), x4 = zeros({2, 3, 2, 2}, TensorOptions(dev));
  CHECK_THROWS_WITH(InstanceNorm2d(3)(x2), Catch::Contains("InstanceNorm2d") && Catch::Contains("2-D input"));
  CHECK_THROWS_AS(InstanceNorm1d(3)(x4), ShapeError);
  CHECK_THROWS_AS(InstanceNorm2d(InstanceNorm2dOptions(4).affine(true))(x4), ShapeError);
  CHECK_THROWS_AS(InstanceNorm2d(0), ValueError);
  CHECK_THROWS_AS(F::instance_norm(zeros({2, 3, 1}, TensorOptions(dev))), ValueError);  // one spatial element
  CHECK_THROWS_AS(F::instance_norm(x4, F::InstanceNormFuncOptions().use_input_stats(false)), ValueError);
  CHECK_THROWS_AS(F::instance_norm(x4, F::InstanceNormFuncOptions().weight(ones({5}, TensorOptions(dev)))),
                  ShapeError);
  CHECK_THROWS_AS(F::instance_norm(arange(0, 12, 1, dev).reshape({1, 3, 4})), DTypeError);
  CHECK_THROWS_WITH(LocalResponseNorm(2)(x2), Catch::Contains("local_response_norm"));
  CHECK_THROWS_AS(LocalResponseNorm(0), ValueError);
  CHECK_THROWS_AS(CrossMapLRN2d(3)(zeros({2, 3, 4}, TensorOptions(dev))), ShapeError);
  CHECK_THROWS_AS(CrossMapLRN2d(0), ValueError);
  CHECK_THROWS_WITH(Dropout2d(0.5)(zeros({1, 2, 3, 4, 5}, TensorOptions(dev))),
                    Catch::Contains("dropout2d") && Catch::Contains("5-D"));
  CHECK_THROWS_AS(Dropout1d(1.5), ValueError);
  CHECK_THROWS_AS(F::dropout3d(x4, F::Dropout3dFuncOptions().p(-0.1)), ValueError);
  CHECK_THROWS_AS(FeatureAlphaDropout(0.5)(zeros({4}, TensorOptions(dev))), ShapeError);
  CHECK_THROWS_AS(AlphaDropout(0.5)(arange(0, 4, 1, dev)), DTypeError);
}
