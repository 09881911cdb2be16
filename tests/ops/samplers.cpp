// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The random samplers (vnn/samplers.h) on the device under test: the same
// draws as the CPU from one seed, each distribution's support and first two
// moments over 200000 draws, and the typed errors for bad parameters.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "support/device_under_test.hpp"
#include "support/op_checks.hpp"
#include "vnn/samplers.h"
#include "vnn/vnn.h"

using namespace vnn;
using vnn::test::check_error;
using vnn::test::device_under_test;
using vnn::test::reference_device;

namespace {
constexpr int64_t kDraws = 200000;

struct Moments {
  double mean, var, min, max;
};
Moments moments(const Tensor& t) {
  auto v = t.cpu().to(kFloat64).contiguous().to_vector<double>();
  double s = 0, s2 = 0, lo = v.at(0), hi = v.at(0);
  for (double x : v) {
    s += x;
    s2 += x * x;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  const double m = s / double(v.size());
  return {m, s2 / double(v.size()) - m * m, lo, hi};
}

// The sampler run on dev and on the CPU from the same seed.
template <class F>
void same_draws_as_cpu(F sample, double tol) {
  Device dev = device_under_test();
  Generator g1(1234), g2(1234);
  Tensor a = sample(dev, &g1), b = sample(reference_device(), &g2);
  CHECK(vnn::test::max_abs_diff(a, b) <= tol);
}
}  // namespace

TEST_CASE("samplers give the CPU's draws on every device from one seed") {
  same_draws_as_cpu([](const Device& d, Generator* g) { return bernoulli(full({1000}, 0.3, TensorOptions(kFloat32).device(d)), g); }, 0);
  same_draws_as_cpu([](const Device& d, Generator* g) {
    Tensor t = empty({1000}, TensorOptions(kFloat64).device(d));
    return exponential_(t, 2.0, g);
  }, 1e-12);
  same_draws_as_cpu([](const Device& d, Generator* g) {
    Tensor t = empty({1000}, TensorOptions(kInt64).device(d));
    return random_(t, -5, 7, g);
  }, 0);
  same_draws_as_cpu([](const Device& d, Generator* g) {
    return normal(arange(0.0, 10.0, 1.0, TensorOptions(kFloat64).device(d)), full({10}, 0.5, TensorOptions(kFloat64).device(d)), g);
  }, 1e-12);
}

TEST_CASE("each distribution has its support and first two moments") {
  Device dev = device_under_test();
  Generator gen(7);
  auto f64 = TensorOptions(kFloat64).device(dev);
  {
    Moments m = moments(bernoulli(full({kDraws}, 0.3, f64), &gen));
    CHECK(m.mean == Approx(0.3).margin(0.01));
    CHECK((m.min == 0 && m.max == 1));
    CHECK(moments(bernoulli(full({100}, 0.0, f64), &gen)).max == 0);
    CHECK(moments(bernoulli(full({100}, 1.0, f64), &gen)).min == 1);
  }
  {
    Tensor t = empty({kDraws}, f64);
    Moments m = moments(exponential_(t, 2.0, &gen));
    CHECK(m.mean == Approx(0.5).margin(0.01));
    CHECK(m.var == Approx(0.25).margin(0.01));
    CHECK(m.min >= 0);
  }
  {
    Tensor t = empty({kDraws}, TensorOptions(kFloat32).device(dev));
    Moments m = moments(geometric_(t, 0.25, &gen));
    CHECK(m.mean == Approx(4.0).margin(0.05));  // 1 / p
    CHECK(m.min == 1);
    Tensor frac = sub(t, floor(t));
    CHECK(moments(frac).max == 0);  // integers
  }
  {
    Tensor t = empty({kDraws}, f64);
    cauchy_(t, 1.0, 2.0, &gen);
    // The median (no mean exists): half the draws below it.
    CHECK(moments(lt(t, 1.0).to(kFloat64)).mean == Approx(0.5).margin(0.01));
  }
  {
    Tensor t = empty({kDraws}, f64);
    Moments m = moments(log(log_normal_(t, 0.5, 0.25, &gen)));
    CHECK(m.mean == Approx(0.5).margin(0.01));
    CHECK(m.var == Approx(0.0625).margin(0.005));
  }
  {
    Tensor t = empty({kDraws}, TensorOptions(kInt32).device(dev));
    Moments m = moments(random_(t, 3, 10, &gen));
    CHECK((m.min == 3 && m.max == 9));
    CHECK(m.mean == Approx(6.0).margin(0.05));
    Tensor u = empty({kDraws}, TensorOptions(kUInt8).device(dev));
    Moments mu = moments(random_(u, &gen));
    CHECK((mu.min == 0 && mu.max == 255));
  }
  {
    Moments m = moments(normal(full({kDraws}, 2.0, f64), 3.0, &gen));
    CHECK(m.mean == Approx(2.0).margin(0.05));
    CHECK(m.var == Approx(9.0).margin(0.2));
    CHECK(normal(0.0, 1.0, Shape{3, 4}, f64, &gen).sizes() == Shape{3, 4});
    Tensor r = randint_like(empty({kDraws}, TensorOptions(kInt64).device(dev)), 4, &gen);
    CHECK(r.dtype() == kInt64);
    Moments mr = moments(r);
    CHECK((mr.min == 0 && mr.max == 3));
  }
}

TEST_CASE("samplers refuse bad parameters with a typed error naming the op") {
  Device dev = device_under_test();
  Tensor f = empty({4}, TensorOptions(kFloat32).device(dev));
  Tensor i = empty({4}, TensorOptions(kInt64).device(dev));
  check_error<ValueError>([&] { bernoulli(full({2}, 1.5, TensorOptions(kFloat32).device(dev))); }, "bernoulli");
  check_error<ValueError>([&] { bernoulli_(f, -0.1); }, "bernoulli_");
  check_error<ValueError>([&] { exponential_(f, 0.0); }, "exponential_");
  check_error<DTypeError>([&] { exponential_(i); }, "exponential_");
  check_error<ValueError>([&] { geometric_(f, 1.0); }, "geometric_");
  check_error<ValueError>([&] { cauchy_(f, 0.0, -1.0); }, "cauchy_");
  check_error<ValueError>([&] { log_normal_(f, 0.0, 0.0); }, "log_normal_");
  check_error<ValueError>([&] { random_(i, 5, 5); }, "random_");
  check_error<ValueError>([&] { normal(f, -1.0); }, "normal");
}
