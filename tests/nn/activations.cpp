// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The activations of vnn/nn/activation.h and RMSNorm (vnn/nn/rms_norm.h):
// values against PyTorch's formulas in float64 loops (float64 and float32 on
// the device under test), float64 finite-difference gradients, the modules'
// options, parameters and state-dict keys, and the typed errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"
#include "vnn/nn.h"

using namespace vnn;
using namespace vnn::nn;
namespace F = vnn::nn::functional;
using vnn::test::device_under_test;

namespace {

// Values that cover both sides of every kink and the saturated ranges (no value on a kink).
const std::vector<double> kXs = {-30.0, -7.0, -3.5, -2.9, -1.2, -0.7, -0.45, -0.2, 0.05,
                                 0.3,   0.6,  1.4,  2.5,  3.7,  6.8,  12.0,  25.0};
// Away from every kink too, and small enough for finite differences.
const std::vector<double> kGradXs = {-2.7, -1.3, -0.71, -0.2, 0.33, 0.9, 1.7, 4.1};

Tensor f64_on(const std::vector<double>& v, const Shape& s) { return from_vector(v, s, device_under_test()); }

// f(x) on the device in float64 (tight) and float32 (loose) against ref per element; then a gradcheck.
void check_elementwise(const std::string& name, const std::function<Tensor(const Tensor&)>& f,
                       const std::function<double(double)>& ref, bool grad = true) {
  INFO(name);
  Tensor x = f64_on(kXs, {int64_t(kXs.size())});
  std::vector<double> got = f(x).to_vector<double>();
  std::vector<float> got32 = f(x.to(kFloat32)).to_vector<float>();
  REQUIRE(got.size() == kXs.size());
  for (size_t i = 0; i < kXs.size(); ++i) {
    INFO("x = " << kXs[i]);
    const double want = ref(kXs[i]);
    CHECK(got[i] == Approx(want).margin(1e-12).epsilon(1e-12));
    CHECK(double(got32[i]) == Approx(want).margin(1e-5).epsilon(1e-5));
  }
  if (!grad) return;
  Tensor g = f64_on(kGradXs, {2, 4}).requires_grad_();
  auto r = autograd::gradcheck([&](const std::vector<Tensor>& t) { return f(t[0]); }, {g});
  INFO(r.message);
  CHECK(r.ok);
}

double ref_softplus(double x, double beta, double threshold) {
  return x * beta > threshold ? x : std::log1p(std::exp(beta * x)) / beta;
}

}  // namespace

TEST_CASE("activations: values against PyTorch's formulas, float64 gradients") {
  check_elementwise("elu", [](const Tensor& x) { return F::elu(x, F::ELUFuncOptions().alpha(1.5)); },
                    [](double x) { return x > 0 ? x : 1.5 * std::expm1(x); });
  check_elementwise("ELU module", [](const Tensor& x) { return ELU(ELUOptions().alpha(0.5))(x); },
                    [](double x) { return x > 0 ? x : 0.5 * std::expm1(x); });
  const double sa = 1.6732632423543772848170429916717, ss = 1.0507009873554804934193349852946;
  check_elementwise("selu", [](const Tensor& x) { return SELU()(x); },
                    [&](double x) { return ss * (std::max(0.0, x) + std::min(0.0, sa * std::expm1(x))); });
  check_elementwise("celu", [](const Tensor& x) { return CELU(CELUOptions().alpha(2.0))(x); },
                    [](double x) { return std::max(0.0, x) + std::min(0.0, 2.0 * std::expm1(x / 2.0)); });
  check_elementwise("hardtanh", [](const Tensor& x) { return Hardtanh(HardtanhOptions().min_val(-2).max_val(3))(x); },
                    [](double x) { return std::min(3.0, std::max(-2.0, x)); });
  check_elementwise("relu6", [](const Tensor& x) { return ReLU6()(x); },
                    [](double x) { return std::min(6.0, std::max(0.0, x)); });
  check_elementwise("hardswish", [](const Tensor& x) { return Hardswish()(x); },
                    [](double x) { return x <= -3 ? 0.0 : x >= 3 ? x : x * (x + 3) / 6; });
  check_elementwise("hardsigmoid", [](const Tensor& x) { return Hardsigmoid()(x); },
                    [](double x) { return x <= -3 ? 0.0 : x >= 3 ? 1.0 : x / 6 + 0.5; });
  check_elementwise("hardshrink", [](const Tensor& x) { return Hardshrink(HardshrinkOptions(0.5))(x); },
                    [](double x) { return (x > 0.5 || x < -0.5) ? x : 0.0; });
  check_elementwise("softshrink", [](const Tensor& x) { return Softshrink(SoftshrinkOptions(0.5))(x); },
                    [](double x) { return x > 0.5 ? x - 0.5 : x < -0.5 ? x + 0.5 : 0.0; });
  check_elementwise("tanhshrink", [](const Tensor& x) { return Tanhshrink()(x); },
                    [](double x) { return x - std::tanh(x); });
  check_elementwise("threshold", [](const Tensor& x) { return Threshold(0.1, -4.0)(x); },
                    [](double x) { return x > 0.1 ? x : -4.0; });
  check_elementwise("logsigmoid", [](const Tensor& x) { return LogSigmoid()(x); },
                    [](double x) { return -std::log1p(std::exp(-x)); });
  check_elementwise("softplus", [](const Tensor& x) { return Softplus()(x); },
                    [](double x) { return ref_softplus(x, 1.0, 20.0); });
  check_elementwise("softplus beta 2 threshold 5",
                    [](const Tensor& x) { return F::softplus(x, F::SoftplusFuncOptions().beta(2).threshold(5)); },
                    [](double x) { return ref_softplus(x, 2.0, 5.0); });
  check_elementwise("softsign", [](const Tensor& x) { return Softsign()(x); },
                    [](double x) { return x / (1 + std::fabs(x)); });
  check_elementwise("mish", [](const Tensor& x) { return Mish()(x); },
                    [](double x) { return x * std::tanh(std::log1p(std::exp(x))); });
  check_elementwise("prelu default", [](const Tensor& x) { PReLU m; m->to(x.device()); return m(x); },
                    [](double x) { return x > 0 ? x : 0.25 * x; });
}

TEST_CASE("activations: inplace options write the input") {
  Tensor x = f64_on({-2.0, 0.5, 7.0}, {3});
  Tensor y = F::relu6(x, F::ReLU6FuncOptions(true));
  CHECK(x.to_vector<double>() == std::vector<double>{0.0, 0.5, 6.0});
  CHECK(y.to_vector<double>() == x.to_vector<double>());
  Tensor z = f64_on({-2.0, 0.5}, {2});
  F::threshold(z, F::ThresholdFuncOptions(1.0, 9.0).inplace(true));
  CHECK(z.to_vector<double>() == std::vector<double>{9.0, 9.0});
}

TEST_CASE("GLU, Softmin and PReLU with channels against float64 loops") {
  Device dev = device_under_test();
  std::vector<double> v = test::lcg_values(24, 5, 1, -2.0, 2.0);
  Tensor x = from_vector(v, {2, 4, 3}, dev);
  // GLU over dim 1: a = x[:, 0:2], b = x[:, 2:4].
  std::vector<double> g = GLU(GLUOptions(1))(x).to_vector<double>();
  REQUIRE(g.size() == 12);
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 2; ++c)
      for (int l = 0; l < 3; ++l) {
        double a = v[size_t(n * 12 + c * 3 + l)], b = v[size_t(n * 12 + (c + 2) * 3 + l)];
        CHECK(g[size_t(n * 6 + c * 3 + l)] == Approx(a / (1 + std::exp(-b))).epsilon(1e-12));
      }
  // Softmin over dim 1.
  std::vector<double> s = Softmin(1)(x).to_vector<double>();
  for (int n = 0; n < 2; ++n)
    for (int l = 0; l < 3; ++l) {
      double den = 0;
      for (int c = 0; c < 4; ++c) den += std::exp(-v[size_t(n * 12 + c * 3 + l)]);
      for (int c = 0; c < 4; ++c)
        CHECK(s[size_t(n * 12 + c * 3 + l)] == Approx(std::exp(-v[size_t(n * 12 + c * 3 + l)]) / den).epsilon(1e-12));
    }
  // PReLU with one slope per channel: state-dict key "weight" [4], values and gradients.
  PReLU pr(PReLUOptions().num_parameters(4).init(0.1));
  auto sd = pr->state_dict();
  REQUIRE(sd.size() == 1);
  CHECK(sd.begin()->first == "weight");
  CHECK(pr->weight.sizes() == Shape{4});
  pr->to(dev);
  {
    NoGradGuard ng;
    pr->weight.copy_(from_vector<double>({0.1, -0.2, 0.3, 0.4}, {4}, dev).to(pr->weight.dtype()));
  }
  std::vector<double> w = {0.1, -0.2, 0.3, 0.4};
  std::vector<double> p = pr(x.to(kFloat32)).to_vector<double>();
  for (size_t i = 0; i < v.size(); ++i) {
    const double wi = w[(i / 3) % 4];
    CHECK(p[i] == Approx(v[i] > 0 ? v[i] : wi * v[i]).margin(1e-6));
  }
  Tensor xg = from_vector(std::vector<double>(kGradXs.begin(), kGradXs.end()), {2, 4}, dev).requires_grad_();
  Tensor wg = from_vector<double>({0.1, -0.2, 0.3, 0.4}, {4}, dev).requires_grad_();
  auto r = autograd::gradcheck([](const std::vector<Tensor>& t) { return F::prelu(t[0], t[1]); }, {xg, wg});
  INFO(r.message);
  CHECK(r.ok);
  Tensor x3 = from_vector(v, {2, 4, 3}, dev).requires_grad_();
  auto r3 = autograd::gradcheck(
      [](const std::vector<Tensor>& t) { return mul(F::glu(t[0], 1), F::softmin(t[0], 2).narrow(1, 0, 2)); }, {x3});
  INFO(r3.message);
  CHECK(r3.ok);
}

TEST_CASE("RMSNorm: PyTorch 2.x's formula, eps default, weight key, gradients") {
  Device dev = device_under_test();
  std::vector<double> v = test::lcg_values(24, 9, 2, -3.0, 3.0);
  Tensor x = from_vector(v, {2, 3, 4}, dev);
  auto ref = [&](int k, double eps, const std::vector<double>& w) {  // normalise over the last k dims
    const size_t group = k == 1 ? 4 : 12;
    std::vector<double> out(v.size());
    for (size_t g0 = 0; g0 < v.size(); g0 += group) {
      double ms = 0;
      for (size_t j = 0; j < group; ++j) ms += v[g0 + j] * v[g0 + j];
      ms /= double(group);
      for (size_t j = 0; j < group; ++j) out[g0 + j] = v[g0 + j] / std::sqrt(ms + eps) * w[j];
    }
    return out;
  };
  RMSNorm norm(RMSNormOptions({4}).eps(1e-3));
  auto sd = norm->state_dict();
  REQUIRE(sd.size() == 1);
  CHECK(sd.begin()->first == "weight");
  norm->to(dev);
  {
    NoGradGuard ng;
    norm->weight.copy_(from_vector<double>({0.5, 1.0, -2.0, 3.0}, {4}, dev).to(norm->weight.dtype()));
  }
  std::vector<double> got = norm(x.to(kFloat32)).to_vector<double>();
  std::vector<double> want = ref(1, 1e-3, {0.5, 1.0, -2.0, 3.0});
  for (size_t i = 0; i < v.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-5));
  // eps unset: float64 machine epsilon; no affine: no parameters.
  RMSNorm plain(RMSNormOptions({3, 4}).elementwise_affine(false));
  CHECK(plain->parameters().empty());
  std::vector<double> got2 = plain(x).to_vector<double>();
  std::vector<double> want2 = ref(2, 2.220446049250313e-16, std::vector<double>(12, 1.0));
  for (size_t i = 0; i < v.size(); ++i) CHECK(got2[i] == Approx(want2[i]).epsilon(1e-12));
  Tensor xg = from_vector(v, {2, 3, 4}, dev).requires_grad_();
  Tensor wg = from_vector<double>({0.5, 1.0, -2.0, 3.0}, {4}, dev).requires_grad_();
  auto r = autograd::gradcheck(
      [](const std::vector<Tensor>& t) {
        return F::rms_norm(t[0], F::RMSNormFuncOptions({4}).weight(t[1]).eps(1e-5));
      },
      {xg, wg});
  INFO(r.message);
  CHECK(r.ok);
  CHECK_THROWS_AS(norm(from_vector(v, {2, 4, 3}, dev).to(kFloat32)), ShapeError);
  CHECK_THROWS_AS(RMSNorm(RMSNormOptions(Shape{})), ValueError);
  CHECK(norm->describe().find("RMSNorm") == 0);
}

TEST_CASE("activation errors are typed and name the op") {
  Device dev = device_under_test();
  Tensor odd = zeros({2, 3}, TensorOptions(dev));
  CHECK_THROWS_AS(GLU()(odd), ShapeError);
  CHECK_THROWS_WITH(F::glu(odd, 1 - 0), Catch::Contains("glu") && Catch::Contains("odd size 3"));
  CHECK_THROWS_AS(Hardtanh(HardtanhOptions().min_val(2).max_val(1)), ValueError);
  CHECK_THROWS_AS(F::hardtanh(odd, F::HardtanhFuncOptions().min_val(2).max_val(1)), ValueError);
  CHECK_THROWS_AS(Softshrink(SoftshrinkOptions(-0.1)), ValueError);
  CHECK_THROWS_AS(F::elu(arange(0, 4, 1, dev)), DTypeError);
  CHECK_THROWS_AS(PReLU(PReLUOptions().num_parameters(0)), ValueError);
  PReLU pr(PReLUOptions().num_parameters(5));
  pr->to(dev);
  CHECK_THROWS_WITH(pr(odd), Catch::Contains("prelu") && Catch::Contains("5 slopes"));
  CHECK_THROWS_AS(F::softplus(odd, F::SoftplusFuncOptions().beta(0)), ValueError);
}
