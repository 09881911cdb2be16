// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// nn::init (vnn/nn/init.h): calculate_gain for every nonlinearity and
// spelling, the fan modes, and each fill checked by its structure or its
// moments on the device under test: orthogonality of orthogonal_, the
// identity convolution of dirac_ (groups too), zeros per column of
// sparse_, bounds and moments of trunc_normal_, the typed errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "support/device_under_test.hpp"
#include "vnn/nn.h"

using namespace vnn;
using namespace vnn::nn;
namespace F = vnn::nn::functional;
using vnn::test::device_under_test;

namespace {

// Sample mean and standard deviation of t's values.
std::pair<double, double> moments(const Tensor& t) {
  std::vector<double> v = t.to_vector<double>();
  double mean = 0, var = 0;
  for (double x : v) mean += x;
  mean /= double(v.size());
  for (double x : v) var += (x - mean) * (x - mean);
  return {mean, std::sqrt(var / double(v.size() - 1))};
}

// Max |(M M^T)_ij - gain^2 delta_ij| over the rows of m [r, c] (r <= c), or
// over its columns (M^T M) when r > c.
double orthogonality_error(const Tensor& m, double gain) {
  const int64_t r = m.size(0), c = m.numel() / r;
  std::vector<double> v = m.to_vector<double>();
  const bool rows = r <= c;
  const int64_t k = rows ? r : c, len = rows ? c : r;
  auto at = [&](int64_t vec, int64_t i) { return rows ? v[size_t(vec * c + i)] : v[size_t(i * c + vec)]; };
  double worst = 0;
  for (int64_t a = 0; a < k; ++a)
    for (int64_t b = 0; b < k; ++b) {
      double dot = 0;
      for (int64_t i = 0; i < len; ++i) dot += at(a, i) * at(b, i);
      worst = std::max(worst, std::abs(dot - (a == b ? gain * gain : 0.0)));
    }
  return worst;
}

}  // namespace

TEST_CASE("calculate_gain: every nonlinearity, LibTorch constants and PyTorch strings") {
  using init::calculate_gain;
  for (auto nl : {init::NonlinearityType(vnn::kLinear), init::NonlinearityType(kConv1D),
                  init::NonlinearityType(kConv2D), init::NonlinearityType(kConv3D),
                  init::NonlinearityType(kConvTranspose1D), init::NonlinearityType(kConvTranspose2D),
                  init::NonlinearityType(kConvTranspose3D), init::NonlinearityType(kSigmoid),
                  init::NonlinearityType("conv_transpose3d"), init::NonlinearityType("sigmoid")})
    CHECK(calculate_gain(nl) == 1.0);
  CHECK(calculate_gain(kTanh) == Approx(5.0 / 3.0));
  CHECK(calculate_gain("tanh") == Approx(5.0 / 3.0));
  CHECK(calculate_gain(kReLU) == Approx(std::sqrt(2.0)));
  CHECK(calculate_gain(RNNNonlinearityKind::relu) == Approx(std::sqrt(2.0)));
  CHECK(calculate_gain(kLeakyReLU) == Approx(std::sqrt(2.0 / (1.0 + 0.01 * 0.01))));
  CHECK(calculate_gain(kLeakyReLU, 0.2) == Approx(std::sqrt(2.0 / 1.04)));
  CHECK(calculate_gain("leaky_relu", std::sqrt(5.0)) == Approx(std::sqrt(1.0 / 3.0)));
  CHECK(calculate_gain(kSELU) == 0.75);
  CHECK(calculate_gain(std::string("selu")) == 0.75);
  CHECK_THROWS_AS(calculate_gain("gelu"), ValueError);
  CHECK_THROWS_AS(calculate_gain("conv4d"), ValueError);
  CHECK_THROWS_AS(calculate_gain(kGELU), ValueError);
  CHECK_THROWS_AS(calculate_gain(vnn::kBilinear), ValueError);
  auto fans = init::_calculate_fan_in_and_fan_out(zeros({4, 3, 5}));
  CHECK(std::get<0>(fans) == 15);
  CHECK(std::get<1>(fans) == 20);
  CHECK_THROWS_AS(init::_calculate_fan_in_and_fan_out(zeros({4})), ShapeError);
}

TEST_CASE("kaiming and xavier: kFanIn / kFanOut, the gain, moments and bounds") {
  Device dev = device_under_test();
  Generator gen(11);
  Tensor w = zeros({64, 256}, dev);  // fan_in 256, fan_out 64
  init::kaiming_normal_(w, 0.0, kFanIn, kReLU, &gen);
  auto [m_in, s_in] = moments(w);
  CHECK(m_in == Approx(0.0).margin(0.01));
  CHECK(s_in == Approx(std::sqrt(2.0 / 256)).epsilon(0.04));
  init::kaiming_normal_(w, 0.0, kFanOut, "relu", &gen);
  CHECK(moments(w).second == Approx(std::sqrt(2.0 / 64)).epsilon(0.04));
  init::kaiming_uniform_(w, std::sqrt(5.0), "fan_out", kLeakyReLU, &gen);
  const double bound = std::sqrt(3.0) * std::sqrt(1.0 / 3.0) / std::sqrt(64.0);
  double peak = 0;
  for (double x : w.to_vector<double>()) peak = std::max(peak, std::abs(x));
  CHECK(peak <= bound * (1 + 1e-6));
  CHECK(peak > 0.98 * bound);
  CHECK(moments(w).second == Approx(bound / std::sqrt(3.0)).epsilon(0.04));
  init::xavier_normal_(w, 2.0, &gen);
  CHECK(moments(w).second == Approx(2.0 * std::sqrt(2.0 / 320)).epsilon(0.04));
  CHECK_THROWS_AS(init::kaiming_normal_(w, 0.0, "fan_avg"), ValueError);
  Tensor empty = zeros({0, 3}, dev);
  CHECK(init::kaiming_uniform_(empty).numel() == 0);  // a no-op, as PyTorch's
}

TEST_CASE("orthogonal_: Q^T Q = gain^2 I for tall, wide and 3-D shapes; reproducible from a generator") {
  Device dev = device_under_test();
  for (Shape s : {Shape{10, 6}, Shape{6, 10}, Shape{5, 5}, Shape{4, 2, 3}}) {
    INFO(s.str());
    Tensor w = zeros(s, dev);
    Generator gen(3);
    init::orthogonal_(w, 1.0, &gen);
    CHECK(orthogonality_error(w, 1.0) < 1e-5);
    init::orthogonal_(w, 2.0, &gen);
    CHECK(orthogonality_error(w, 2.0) < 1e-5);
  }
  Tensor a = zeros({8, 3}, TensorOptions(kFloat64).device(dev)), b = zeros({8, 3}, TensorOptions(kFloat64).device(dev));
  Generator g1(7), g2(7);
  init::orthogonal_(a, 1.0, &g1);
  init::orthogonal_(b, 1.0, &g2);
  CHECK(a.to_vector<double>() == b.to_vector<double>());
  CHECK(orthogonality_error(a, 1.0) < 1e-12);
  // R's diagonal made positive: Q = A R^-1 with R upper triangular, so
  // Q's first column is A's first column normalised (the same direction).
  Generator g3(7);
  std::vector<double> drawn = randn({8, 3}, TensorOptions(kFloat64), &g3).to_vector<double>(), q = a.to_vector<double>();
  double norm = 0;
  for (int i = 0; i < 8; ++i) norm += drawn[size_t(i * 3)] * drawn[size_t(i * 3)];
  for (int i = 0; i < 8; ++i) CHECK(q[size_t(i * 3)] == Approx(drawn[size_t(i * 3)] / std::sqrt(norm)));
  Tensor v = zeros({4}, dev);
  CHECK_THROWS_AS(init::orthogonal_(v), ShapeError);
}

TEST_CASE("trunc_normal_: inside [a, b], the truncated normal's mean and standard deviation") {
  Device dev = device_under_test();
  Generator gen(5);
  Tensor t = zeros({20000}, dev);
  const double mean = 0.5, sd = 2.0, a = -1.0, b = 4.0;
  init::trunc_normal_(t, mean, sd, a, b, &gen);
  std::vector<double> v = t.to_vector<double>();
  for (double x : v) REQUIRE((x >= a && x <= b));
  // Closed forms with alpha = (a - mean) / sd, beta = (b - mean) / sd.
  auto pdf = [](double x) { return std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI); };
  auto cdf = [](double x) { return 0.5 * (1 + std::erf(x / std::sqrt(2.0))); };
  const double al = (a - mean) / sd, be = (b - mean) / sd, z = cdf(be) - cdf(al);
  const double tm = mean + sd * (pdf(al) - pdf(be)) / z;
  const double tv = sd * sd * (1 + (al * pdf(al) - be * pdf(be)) / z - std::pow((pdf(al) - pdf(be)) / z, 2));
  auto [m, s] = moments(t);
  CHECK(m == Approx(tm).margin(0.03));
  CHECK(s == Approx(std::sqrt(tv)).epsilon(0.02));
  Tensor small = zeros({1000}, dev);
  init::trunc_normal_(small, 0.0, 0.02, -0.04, 0.04, &gen);  // ViT's std = .02, +-2 std
  for (double x : small.to_vector<double>()) CHECK(std::abs(x) <= 0.04);
  CHECK(moments(small).second == Approx(0.02 * 0.8796).epsilon(0.1));
  CHECK_THROWS_AS(init::trunc_normal_(t, 0.0, 0.0), ValueError);
  CHECK_THROWS_AS(init::trunc_normal_(t, 0.0, 1.0, 2.0, -2.0), ValueError);
}

TEST_CASE("eye_, dirac_ (an identity convolution, groups too), sparse_ and the constant fills") {
  Device dev = device_under_test();
  Tensor e = full({3, 5}, 7.0, dev);
  init::eye_(e);
  std::vector<double> ev = e.to_vector<double>();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) CHECK(ev[size_t(i * 5 + j)] == (i == j ? 1.0 : 0.0));
  Tensor cube = zeros({2, 2, 2}, dev);
  CHECK_THROWS_AS(init::eye_(cube), ShapeError);

  Tensor x = from_vector(test::lcg_values(2 * 4 * 5 * 6, 1, 1, -1, 1), {2, 4, 5, 6}, dev).to(kFloat32);
  Tensor w = full({4, 4, 3, 3}, 0.5, dev);
  init::dirac_(w);
  CHECK(test::max_abs_diff(F::conv2d(x, w, F::Conv2dFuncOptions().padding(1)), x) == 0.0);
  // More outputs than inputs: the first four copy the input, the rest are zero.
  Tensor wide = full({6, 4, 3, 3}, 0.5, dev);
  init::dirac_(wide);
  Tensor y = F::conv2d(x, wide, F::Conv2dFuncOptions().padding(1));
  CHECK(test::max_abs_diff(y.narrow(1, 0, 4), x) == 0.0);
  CHECK(y.narrow(1, 4, 2).abs().sum().item() == 0.0);
  // groups = 2: each group's two outputs copy that group's two inputs.
  Tensor x1 = from_vector(test::lcg_values(4 * 7, 2, 1, -1, 1), {1, 4, 7}, dev).to(kFloat32);
  Tensor g = full({4, 2, 3}, 0.5, dev);
  init::dirac_(g, 2);
  CHECK(test::max_abs_diff(F::conv1d(x1, g, F::Conv1dFuncOptions().padding(1).groups(2)), x1) == 0.0);
  Tensor w3 = full({2, 2, 1, 3, 3}, 0.5, dev);
  init::dirac_(w3);
  std::vector<double> w3v = w3.to_vector<double>();
  double ones = 0;
  for (double v : w3v) ones += v;
  CHECK(ones == 2.0);
  CHECK(w3v[size_t(4)] == 1.0);            // [0, 0, 0, 1, 1]
  CHECK(w3v[size_t(3 * 9 + 4)] == 1.0);    // [1, 1, 0, 1, 1]
  CHECK_THROWS_AS(init::dirac_(g, 3), ValueError);
  CHECK_THROWS_AS(init::dirac_(e), ShapeError);

  Generator gen(9);
  Tensor s = zeros({10, 7}, dev);
  init::sparse_(s, 0.25, 1.0, &gen);  // ceil(2.5) = 3 zeros per column
  std::vector<double> sv = s.to_vector<double>();
  for (int c = 0; c < 7; ++c) {
    int zeros_here = 0;
    for (int r = 0; r < 10; ++r) zeros_here += sv[size_t(r * 7 + c)] == 0.0;
    CHECK(zeros_here == 3);
  }
  init::sparse_(s, 0.0, 1.0, &gen);
  for (double v : s.to_vector<double>()) CHECK(v != 0.0);
  CHECK_THROWS_AS(init::sparse_(s, 1.5), ValueError);
  CHECK_THROWS_AS(init::sparse_(cube, 0.5), ShapeError);

  init::constant_(s, 0.25);
  CHECK(s.sum().item() == Approx(70 * 0.25));
  init::ones_(s);
  CHECK(s.sum().item() == 70.0);
  init::zeros_(s);
  CHECK(s.abs().sum().item() == 0.0);
}
