// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn::special (torch.special's names) and the composed special functions
// polygamma and mvlgamma on the device under test: values against the
// table ops they are built of and known values, float64 gradient checks,
// the errors for bad input. The table's special functions themselves are
// tested line by line by test_ops_unary_table / test_ops_binary_table, and
// against PyTorch's samples by test_opdb.
#include <catch2/catch.hpp>
#include <cmath>
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
