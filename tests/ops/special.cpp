// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn::special (torch.special's names) and the composed special functions
// polygamma and mvlgamma on the device under test: values against the
// table ops they are built of and known values, float64 gradient checks,
// the errors for bad input. The table's special functions themselves are
// tested line by line by test_ops_unary_table / test_ops_binary_table, and
// against PyTorch's samples by test_opdb.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "support/device_under_test.hpp"
#include "support/op_checks.hpp"
#include "vnn/vnn.h"

using namespace vnn;
using vnn::test::check_error;
using vnn::test::check_grad;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;

namespace {
Tensor vec(const std::vector<double>& v, const Device& dev) { return from_vector(v, {int64_t(v.size())}).to(dev); }
}  // namespace

TEST_CASE("polygamma: digamma for n = 0, the signed factorial times zeta beyond") {
  Device dev = device_under_test();
  Tensor x = vec({0.3, 1.0, 2.5, 7.0, -0.5}, dev);
  CHECK(max_abs_diff(polygamma(0, x), digamma(x)) == 0);
  // psi'(1) = pi^2 / 6, psi''(1) = -2 zeta(3), psi'(1/2) = pi^2 / 2
  auto p1 = polygamma(1, vec({1.0, 0.5}, dev)).cpu().to_vector<double>();
  CHECK(p1[0] == Approx(M_PI * M_PI / 6).epsilon(1e-14));
  CHECK(p1[1] == Approx(M_PI * M_PI / 2).epsilon(1e-14));
  CHECK(polygamma(2, vec({1.0}, dev)).item() == Approx(-2 * 1.2020569031595942).epsilon(1e-14));
  CHECK(polygamma(3, vec({1.0}, dev)).item() == Approx(M_PI * M_PI * M_PI * M_PI / 15).epsilon(1e-14));
  // integers are computed in float32, as PyTorch's
  CHECK(polygamma(1, vec({1, 2}, dev).to(kInt64)).dtype() == kFloat32);
  CHECK(special::polygamma(2, x).allclose(polygamma(2, x)));
  check_error<ValueError>([&] { polygamma(-1, x); }, "polygamma");
}

TEST_CASE("polygamma and digamma: gradients against float64 finite differences") {
  Device dev = device_under_test();
  Tensor x = vec({0.4, 1.3, 2.7}, dev).requires_grad_(true);
  check_grad("polygamma(1)", [](const std::vector<Tensor>& in) { return polygamma(1, in[0]); }, {x});
  check_grad("polygamma(2)", [](const std::vector<Tensor>& in) { return polygamma(2, in[0]); }, {x});
  check_grad("digamma", [](const std::vector<Tensor>& in) { return special::psi(in[0]); }, {x});
}

TEST_CASE("mvlgamma: the sum of lgammas plus p (p - 1) / 4 log pi") {
  Device dev = device_under_test();
  Tensor x = vec({1.6, 2.0, 3.25}, dev);
  auto got = mvlgamma(x, 3).cpu().to_vector<double>();
  const std::vector<double> xs = {1.6, 2.0, 3.25};
  for (size_t i = 0; i < xs.size(); ++i) {
    const double want = 1.5 * std::log(M_PI) + std::lgamma(xs[i]) + std::lgamma(xs[i] - 0.5) + std::lgamma(xs[i] - 1);
    CHECK(got[i] == Approx(want).epsilon(1e-13));
  }
  CHECK(max_abs_diff(special::multigammaln(x, 1), lgamma(x)) == 0);
  check_grad("mvlgamma", [](const std::vector<Tensor>& in) { return mvlgamma(in[0], 2); },
             {vec({1.2, 2.5}, dev).requires_grad_(true)});
  check_error<ValueError>([&] { mvlgamma(x, 0); }, "mvlgamma");
  check_error<ValueError>([&] { mvlgamma(vec({0.9, 2.0}, dev), 3); }, "mvlgamma");  // 0.9 <= (3 - 1) / 2
}

TEST_CASE("vnn::special forwards torch.special's names to the ops") {
  Device dev = device_under_test();
  Tensor x = vec({0.2, 0.5, 0.9}, dev), y = vec({1.5, 2.0, 3.0}, dev);
  CHECK(max_abs_diff(special::expit(x), sigmoid(x)) == 0);
  CHECK(max_abs_diff(special::gammaln(y), lgamma(y)) == 0);
  CHECK(max_abs_diff(special::gammainc(y, x), igamma(y, x)) == 0);
  CHECK(max_abs_diff(special::gammaincc(y, x), igammac(y, x)) == 0);
  CHECK(max_abs_diff(special::modified_bessel_i0(x), i0(x)) == 0);
  CHECK(max_abs_diff(special::modified_bessel_i1(x), i1(x)) == 0);
  CHECK(max_abs_diff(special::zeta(2.0, y), zeta(full_like(y, 2.0), y)) == 0);
  CHECK(max_abs_diff(special::log_softmax(x, 0), log_softmax(x, 0)) == 0);
  // known values: P(1, x) = 1 - e^-x, zeta(2, 1) = pi^2 / 6, ndtri(ndtr(x)) = x
  CHECK(max_abs_diff(special::gammainc(vec({1.0}, dev), vec({0.7}, dev)), vec({1 - std::exp(-0.7)}, dev)) < 1e-15);
  CHECK(special::zeta(vec({2.0}, dev), 1.0).item() == Approx(M_PI * M_PI / 6).epsilon(1e-15));
  CHECK(max_abs_diff(special::ndtri(special::ndtr(x)), x) < 1e-14);
  CHECK(max_abs_diff(special::erfinv(special::erf(x)), x) < 1e-14);
}

TEST_CASE("the orthogonal polynomials: closed forms of low degree, the trigonometric forms, scalar x and n") {
  Device dev = device_under_test();
  const std::vector<double> xs = {-1.5, -0.4, 0.3, 0.9, 1.7};
  Tensor x = vec(xs, dev);
  auto at = [&](Tensor (*f)(const Tensor&, double), double n) { return f(x, n).cpu().to_vector<double>(); };
  const auto t3 = at(special::chebyshev_polynomial_t, 3), u2 = at(special::chebyshev_polynomial_u, 2);
  const auto v2 = at(special::chebyshev_polynomial_v, 2), w2 = at(special::chebyshev_polynomial_w, 2);
  const auto st2 = at(special::shifted_chebyshev_polynomial_t, 2), h3 = at(special::hermite_polynomial_h, 3);
  const auto he3 = at(special::hermite_polynomial_he, 3), l2 = at(special::laguerre_polynomial_l, 2);
  const auto p2 = at(special::legendre_polynomial_p, 2), t10 = at(special::chebyshev_polynomial_t, 10.7);
  for (size_t i = 0; i < xs.size(); ++i) {
    const double v = xs[i], s = 2 * v - 1;
    INFO("x = " << v);
    CHECK(t3[i] == Approx(4 * v * v * v - 3 * v).margin(1e-13));
    CHECK(u2[i] == Approx(4 * v * v - 1).margin(1e-13));
    CHECK(v2[i] == Approx(4 * v * v - 2 * v - 1).margin(1e-13));
    CHECK(w2[i] == Approx(4 * v * v + 2 * v - 1).margin(1e-13));
    CHECK(st2[i] == Approx(2 * s * s - 1).margin(1e-13));
    CHECK(h3[i] == Approx(8 * v * v * v - 12 * v).margin(1e-13));
    CHECK(he3[i] == Approx(v * v * v - 3 * v).margin(1e-13));
    CHECK(l2[i] == Approx((v * v - 4 * v + 2) / 2).margin(1e-13));
    CHECK(p2[i] == Approx((3 * v * v - 1) / 2).margin(1e-13));
    if (std::fabs(v) < 1) CHECK(t10[i] == Approx(std::cos(10 * std::acos(v))).margin(1e-12));  // n truncated
  }
  // a negative degree gives 0, degree 0 gives 1
  CHECK(max_abs_diff(special::legendre_polynomial_p(x, -1.0), zeros_like(x)) == 0);
  CHECK(max_abs_diff(special::hermite_polynomial_h(x, 0.0), ones_like(x)) == 0);
  // a scalar x against a tensor of degrees: float32 for integer degrees, as PyTorch's
  Tensor n = from_vector(std::vector<int64_t>{0, 1, 2, 3}, {4}).to(dev);
  Tensor y = special::chebyshev_polynomial_u(0.5, n);
  CHECK(y.dtype() == kFloat32);
  CHECK(max_abs_diff(y.to(kFloat64), vec({1, 1, 0, -1}, dev)) < 1e-6);
  CHECK(special::laguerre_polynomial_l(0.5, n.to(kFloat64)).dtype() == kFloat64);
  check_error<ValueError>([&] { special::chebyshev_polynomial_t(0.5, Tensor()); }, "chebyshev_polynomial_t");
}

TEST_CASE("gcd, lcm and nextafter: exact values and their dtype rules") {
  Device dev = device_under_test();
  const int64_t lo = std::numeric_limits<int64_t>::min();
  Tensor a = from_vector(std::vector<int64_t>{12, -12, 0, 0, 7, lo, -4}, {7}).to(dev);
  Tensor b = from_vector(std::vector<int64_t>{18, 18, 5, 0, -3, 0, -6}, {7}).to(dev);
  CHECK(gcd(a, b).cpu().to_vector<int64_t>() == std::vector<int64_t>{6, 6, 5, 0, 1, lo, 2});  // |MIN| wraps, as PyTorch
  CHECK(lcm(a, b).cpu().to_vector<int64_t>() == std::vector<int64_t>{36, 36, 0, 0, 21, 0, 12});
  Tensor a8 = a.narrow(0, 0, 5).to(kInt8), b8 = b.narrow(0, 0, 5).to(kInt8);
  CHECK(gcd(a8, b8).dtype() == kInt8);
  CHECK(lcm(a8, b8).to(kInt64).cpu().to_vector<int64_t>() == std::vector<int64_t>{36, 36, 0, 0, 21});
  CHECK(gcd(a, 4.0).cpu().to_vector<int64_t>() == std::vector<int64_t>{4, 4, 4, 4, 1, 4, 4});
  CHECK_THROWS_AS(gcd(a.to(kFloat32), b), DTypeError);

  const std::vector<double> xs = {1.0, -2.5, 0.0, 0.0, 3.0, 1e-300}, ys = {2.0, -3.0, -1.0, 1.0, 3.0, 0.0};
  auto next64 = nextafter(vec(xs, dev), vec(ys, dev)).cpu().to_vector<double>();
  auto next32 = nextafter(vec(xs, dev).to(kFloat32), vec(ys, dev).to(kFloat32)).cpu().to_vector<float>();
  for (size_t i = 0; i < xs.size(); ++i) {
    INFO(xs[i] << " toward " << ys[i]);
    CHECK(next64[i] == std::nextafter(xs[i], ys[i]));
    CHECK(next32[i] == std::nextafter(float(xs[i]), float(ys[i])));
  }
  CHECK(std::signbit(next64[2]));  // 0 toward -1: the negative smallest subnormal
  CHECK(std::isnan(nextafter(vec({NAN}, dev), 1.0).item()));
  check_error<DTypeError>([&] { nextafter(vec({1.0}, dev).to(kFloat16), vec({2.0}, dev).to(kFloat16)); }, "nextafter");
  CHECK_THROWS_AS(nextafter(a, b), DTypeError);
}

TEST_CASE("airy_ai: known values on the series and both asymptotic sides") {
  Device dev = device_under_test();
  // mpmath's values; -2.5 lies where PyTorch's own airy_ai is off by up to 3e-6
  const std::vector<double> xs = {0.0, 2.0, -2.5, -10.0, 8.0, -30.0};
  const std::vector<double> want = {0.35502805388781723926,  0.034924130423274379135, -0.11232506769296608919,
                                    0.040241238486443190689, 4.6922076160992316256e-8, -0.087968188456842162833};
  auto got = special::airy_ai(vec(xs, dev)).cpu().to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i) {
    INFO("Ai(" << xs[i] << ")");
    CHECK(got[i] == Approx(want[i]).epsilon(1e-11).margin(1e-15));
  }
  CHECK(airy_ai(from_vector(std::vector<int64_t>{0, 1}, {2}).to(dev)).dtype() == kFloat32);
  CHECK(airy_ai(vec({INFINITY}, dev)).item() == 0);
  CHECK(std::isnan(airy_ai(vec({NAN}, dev)).item()));
}

TEST_CASE("frexp: mantissa and int32 exponent, the edge values, the mantissa's gradient") {
  Device dev = device_under_test();
  const std::vector<double> xs = {1.0, -3.0, 0.1, 1e300, 4.9406564584124654e-324, 0.0, -0.0, INFINITY, NAN};
  auto [m, e] = frexp(vec(xs, dev));
  REQUIRE(m.dtype() == kFloat64);
  REQUIRE(e.dtype() == kInt32);
  auto ms = m.cpu().to_vector<double>();
  auto es = e.to(kInt64).cpu().to_vector<int64_t>();
  for (size_t i = 0; i < xs.size(); ++i) {
    INFO("frexp(" << xs[i] << ")");
    int want_e = 0;
    const double want_m = std::frexp(xs[i], &want_e);
    if (std::isnan(want_m)) {
      CHECK(std::isnan(ms[i]));
    } else {
      CHECK(ms[i] == want_m);
      CHECK(std::signbit(ms[i]) == std::signbit(want_m));
    }
    CHECK(es[i] == (std::isfinite(xs[i]) ? want_e : 0));
  }
  auto [m16, e16] = frexp(vec({1.5, -96.0}, dev).to(kFloat16));
  CHECK(m16.dtype() == kFloat16);
  CHECK(max_abs_diff(m16.to(kFloat64), vec({0.75, -0.75}, dev)) == 0);
  CHECK(e16.to(kInt64).cpu().to_vector<int64_t>() == std::vector<int64_t>{1, 7});
  check_grad("frexp mantissa", [](const std::vector<Tensor>& in) { return std::get<0>(frexp(in[0])); },
             {vec({0.3, -5.2, 1.7}, dev).requires_grad_(true)});
  check_error<DTypeError>([&] { frexp(from_vector(std::vector<int64_t>{1}, {1}).to(dev)); }, "frexp");
}
