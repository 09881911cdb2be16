// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reductions and softmax on the device under test, checked against the CPU
// reference device and against naive float64 loops. A backend other than
// cpu that answers Unsupported for these ops is skipped with a warning.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;

namespace {

std::vector<float> sample(int64_t n, float lo, float hi) { return vnn::test::spread_values(n, lo, hi); }

// False (with a warning) when a non-cpu device under test lacks the op.
bool device_supports(const Device& dev, const std::function<void()>& probe) {
  try {
    probe();
    return true;
  } catch (const Unsupported& e) {
    if (dev.is_cpu()) throw;
    WARN("skipped on " << dev << ": " << e.what());
    SUCCEED("the backend answers Unsupported for this op");
    return false;
  }
}

bool reductions_supported(const Device& dev) {
  return device_supports(dev, [&] { sum(ones({4}).to(dev)).item(); });
}

// Naive float64 reduction of a [rows, cols] row-major array along cols.
std::vector<double> row_sums(const std::vector<float>& v, int64_t rows, int64_t cols) {
  std::vector<double> out(size_t(rows), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[size_t(r)] += double(v[size_t(r * cols + c)]);
  return out;
}

}  // namespace

TEST_CASE("sum and mean over all dims, below and above the inline grain") {
  Device dev = device_under_test();
  if (!reductions_supported(dev)) return;
  for (int64_t n : {int64_t(7), int64_t(1000), int64_t(100003), int64_t(1) << 21}) {
    INFO("n=" << n << " on " << dev);
    auto v = sample(n, -1.f, 3.f);
    Tensor ref = from_vector(v, {n});
    Tensor x = ref.to(dev);
    double want = 0;
    for (float f : v) want += double(f);
    Tensor s = sum(x);
    CHECK(s.dim() == 0);
    CHECK(s.dtype() == kFloat32);
    CHECK(s.item() == Approx(want).epsilon(1e-6));
    CHECK(mean(x).item() == Approx(want / double(n)).epsilon(1e-6));
    CHECK(std::fabs(sum(x).item() - sum(ref).item()) <= 1e-6 * std::fabs(want) + 1e-6);
    // float64 is exact to rounding
    CHECK(sum(x.to(kFloat64)).item() == Approx(want).epsilon(1e-12));
  }
}

TEST_CASE("reductions along one dim, several dims, keepdim, non-contiguous inputs") {
  Device dev = device_under_test();
  if (!reductions_supported(dev)) return;
  for (int64_t cols : {int64_t(5), int64_t(40000)}) {  // rows*cols below and above the grain
    const int64_t rows = 6;
    INFO("rows=" << rows << " cols=" << cols << " on " << dev);
    auto v = sample(rows * cols, -2.f, 2.f);
    Tensor ref = from_vector(v, {rows, cols});
    Tensor x = ref.to(dev);
    auto want = row_sums(v, rows, cols);

    Tensor s1 = sum(x, 1);
    REQUIRE(s1.sizes() == Shape{rows});
    auto got = s1.to_vector<double>();
    for (int64_t r = 0; r < rows; ++r) CHECK(got[size_t(r)] == Approx(want[size_t(r)]).margin(1e-3));
    CHECK(sum(x, 1, true).sizes() == Shape{rows, 1});
    CHECK(sum(x, {0, 1}, true).sizes() == Shape{1, 1});
    CHECK(sum(x, {-1, 0}).item() == Approx(sum(ref).item()).epsilon(1e-5));

    // Columns: a strided reduction (dim 0), and the same through a transpose.
    Tensor c0 = sum(x, 0);
    Tensor t = x.transpose(0, 1);  // non-contiguous
    REQUIRE_FALSE(t.is_contiguous());
    CHECK(max_abs_diff(sum(t, 1), c0) <= 1e-5);
    CHECK(max_abs_diff(c0, sum(ref, 0)) <= 1e-5);
    CHECK(max_abs_diff(mean(t, 0), mean(ref, 1)) <= 1e-6);
    CHECK(max_abs_diff(mean(x, {1}, true), mean(ref, 1, true)) <= 1e-6);

    // max / min / argmax / argmin along both dims vs the reference and loops.
    for (int d : {0, 1}) {
      INFO("dim " << d);
      auto [mv, mi] = max(x, d);
      auto [rv, ri] = max(ref, d);
      CHECK(max_abs_diff(mv, rv) == 0);
      CHECK(max_abs_diff(mi, ri) == 0);
      CHECK(mi.dtype() == kInt64);
      auto [nv, ni] = min(t, 1 - d, true);
      auto [qv, qi] = min(ref, d, true);
      CHECK(max_abs_diff(nv, qv.transpose(0, 1)) == 0);
      CHECK(max_abs_diff(ni, qi.transpose(0, 1)) == 0);
      CHECK(max_abs_diff(argmax(x, d), ri) == 0);
      CHECK(max_abs_diff(argmin(x, d), argmin(ref, d)) == 0);
      CHECK(max_abs_diff(amax(x, {int64_t(d)}), rv) == 0);
    }
    // plain loops for row 0
    double mx = -1e300;
    int64_t am = 0;
    for (int64_t c = 0; c < cols; ++c)
      if (double(v[size_t(c)]) > mx) { mx = v[size_t(c)]; am = c; }
    CHECK(std::get<0>(max(x, 1)).to_vector<double>()[0] == mx);
    CHECK(argmax(x, 1).to_vector<int64_t>()[0] == am);
    CHECK(argmax(x).item<int64_t>() == argmax(ref).item<int64_t>());
    CHECK(max(x).item() == max(ref).item());
    CHECK(min(x).item() == min(ref).item());
    CHECK(max_abs_diff(amin(x, {0, 1}, true), amin(ref, {}, true)) == 0);
  }
}

TEST_CASE("3-D reductions over inner and outer dims") {
  Device dev = device_under_test();
  if (!reductions_supported(dev)) return;
  auto v = sample(4 * 300 * 50, -1.f, 1.f);
  Tensor ref = from_vector(v, {4, 300, 50});
  Tensor x = ref.to(dev);
  // Naive float64 for dims {0, 2}.
  std::vector<double> want(300, 0.0);
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 300; ++b)
      for (int c = 0; c < 50; ++c) want[size_t(b)] += v[size_t((a * 300 + b) * 50 + c)];
  auto got = sum(x, {0, 2}).to_vector<double>();
  for (int b = 0; b < 300; ++b) REQUIRE(got[size_t(b)] == Approx(want[size_t(b)]).margin(1e-4));
  CHECK(max_abs_diff(sum(x, {2, 0}, true), sum(ref, {0, 2}, true)) <= 1e-5);
  CHECK(sum(x, {0, 2}, true).sizes() == Shape{1, 300, 1});
  Tensor nc = x.narrow(2, 3, 40).permute({2, 0, 1});  // non-contiguous view
  CHECK(max_abs_diff(amax(nc, {1}), amax(ref.narrow(2, 3, 40).permute({2, 0, 1}), {1})) == 0);
  CHECK(max_abs_diff(prod(x.narrow(1, 0, 3), 1), prod(ref.narrow(1, 0, 3), 1)) <= 1e-6);
}

TEST_CASE("integer, bool and float64 reductions and their dtypes") {
  Device dev = device_under_test();
  if (!reductions_supported(dev)) return;
  std::vector<int32_t> iv = {3, -1, 7, 2, 7, -5};
  Tensor xi = from_vector(iv, {2, 3}).to(dev);
  CHECK(sum(xi).dtype() == kInt64);
  CHECK(sum(xi).item<int64_t>() == 13);
  CHECK(sum(xi, 1).to_vector<int64_t>() == std::vector<int64_t>{9, 4});
  CHECK(prod(xi).dtype() == kInt64);
  CHECK(prod(xi).item<int64_t>() == 3 * -1 * 7 * 2 * 7 * -5);
  CHECK(max(xi).dtype() == kInt32);
  CHECK(max(xi).item<int32_t>() == 7);
  CHECK(argmax(xi).item<int64_t>() == 2);  // the first 7
  CHECK(argmin(xi, 1).to_vector<int64_t>() == std::vector<int64_t>{1, 2});
  Tensor big = full({3}, 2e9, TensorOptions(dev).with(kInt32));
  CHECK(sum(big).item<int64_t>() == int64_t(6e9));  // no int32 overflow
  Tensor b = from_vector(std::vector<int32_t>{1, 0, 1, 1}, {4}).to(kBool).to(dev);
  CHECK(sum(b).dtype() == kInt64);
  CHECK(sum(b).item<int64_t>() == 3);
  CHECK(max(b).dtype() == kBool);
  Tensor u8 = from_vector(std::vector<int32_t>{4, 200, 9}, {3}).to(kUInt8).to(dev);
  CHECK(max(u8).item() == 200);
  CHECK(sum(u8).item<int64_t>() == 213);
  Tensor d = arange(0, 100000, 1, TensorOptions(dev).with(kFloat64));
  CHECK(sum(d).item() == 4999950000.0);
  CHECK(mean(d).item() == 49999.5);
  Tensor h = ones({10}, TensorOptions(dev).with(kFloat16));
  CHECK(sum(h).dtype() == kFloat16);
  CHECK(sum(h).item() == 10.0);
}

TEST_CASE("empty and scalar reductions, NaN") {
  Device dev = device_under_test();
  if (!reductions_supported(dev)) return;
  Tensor e = zeros({0, 3}, TensorOptions(dev));
  CHECK(sum(e).item() == 0.0);
  CHECK(prod(e).item() == 1.0);
  CHECK(std::isnan(mean(e).item()));
  CHECK(sum(e, 0).to_vector<float>() == std::vector<float>{0, 0, 0});
  CHECK(sum(e, 1).sizes() == Shape{0});
  CHECK(amax(e, {1}).sizes() == Shape{0});
  Tensor s = full({}, 4.0, TensorOptions(dev));
  CHECK(sum(s).item() == 4.0);
  CHECK(sum(s, 0).item() == 4.0);
  CHECK(argmax(s).item() == 0);
  float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor n = from_vector(std::vector<float>{1, nan, 3, nan}, {4}).to(dev);
  CHECK(std::isnan(max(n).item()));
  CHECK(std::isnan(min(n).item()));
  CHECK(argmax(n).item<int64_t>() == 1);
  CHECK(argmin(n).item<int64_t>() == 1);
  CHECK(std::isnan(sum(n).item()));
}

TEST_CASE("reduction errors are typed and name the op") {
  Device dev = device_under_test();
  if (!reductions_supported(dev)) return;
  Tensor x = ones({2, 3}, TensorOptions(dev));
  CHECK_THROWS_AS(sum(x, 2), IndexError);
  CHECK_THROWS_AS(sum(x, {0, 5}), IndexError);
  CHECK_THROWS_AS(sum(x, -3), IndexError);
  CHECK_THROWS_AS(sum(x, {1, -1}), ValueError);
  CHECK_THROWS_WITH(sum(x, 2), Catch::Contains("sum") && Catch::Contains("out of range"));
  Tensor xi = ones({2, 3}, TensorOptions(dev).with(kInt32));
  CHECK_THROWS_AS(mean(xi), DTypeError);
  CHECK_THROWS_WITH(mean(xi), Catch::Contains("mean") && Catch::Contains("float"));
  CHECK_THROWS_AS(softmax(xi, 1), DTypeError);
  CHECK_THROWS_AS(softmax(x, 2), IndexError);
  Tensor e = zeros({2, 0}, TensorOptions(dev));
  CHECK_THROWS_AS(max(e, 1), IndexError);
  CHECK_THROWS_AS(argmax(e), IndexError);
  CHECK_THROWS_AS(amin(e, {1}), IndexError);
  CHECK_THROWS_AS(sum(Tensor()), ValueError);
}

TEST_CASE("softmax and log_softmax are stable and match float64 loops") {
  Device dev = device_under_test();
  if (!device_supports(dev, [&] { softmax(ones({2}).to(dev), 0).to_vector<float>(); })) return;
  for (int64_t cols : {int64_t(7), int64_t(9000)}) {  // below and above the grain (x 5 rows)
    const int64_t rows = 5;
    INFO("cols=" << cols << " on " << dev);
    auto v = sample(rows * cols, -30.f, 30.f);
    v[0] = 1000.f;  // would overflow exp without the max shift
    Tensor ref = from_vector(v, {rows, cols});
    Tensor x = ref.to(dev);
    Tensor sm = softmax(x, 1), lsm = log_softmax(x, -1);
    CHECK(max_abs_diff(sm, softmax(ref, 1)) <= 1e-6);
    CHECK(max_abs_diff(lsm, log_softmax(ref, 1)) <= 1e-4);
    auto got = sm.to_vector<double>(), lgot = lsm.to_vector<double>();
    for (int64_t r = 0; r < rows; ++r) {
      double mx = -1e300, s = 0;
      for (int64_t c = 0; c < cols; ++c) mx = std::max(mx, double(v[size_t(r * cols + c)]));
      for (int64_t c = 0; c < cols; ++c) s += std::exp(double(v[size_t(r * cols + c)]) - mx);
      for (int64_t c = 0; c < cols; c += 13) {
        double z = double(v[size_t(r * cols + c)]) - mx;
        REQUIRE(got[size_t(r * cols + c)] == Approx(std::exp(z) / s).margin(1e-6));
        REQUIRE(lgot[size_t(r * cols + c)] == Approx(z - std::log(s)).margin(1e-4));
      }
    }
    // Over dim 0 (a strided dim), and on a non-contiguous input.
    Tensor s0 = softmax(x, 0);
    CHECK(s0.sizes() == Shape{rows, cols});
    CHECK(max_abs_diff(s0, softmax(ref.transpose(0, 1).contiguous(), 1).transpose(0, 1)) <= 1e-6);
    CHECK(max_abs_diff(softmax(x.transpose(0, 1), 1), softmax(ref, 0).transpose(0, 1)) <= 1e-6);
    CHECK(max_abs_diff(sum(s0, 0), ones({cols})) <= 1e-5);
  }
  Tensor d = from_vector(std::vector<double>{1, 2, 3}, {3}).to(dev);
  CHECK(softmax(d, 0).dtype() == kFloat64);
  CHECK(log_softmax(d, 0).to_vector<double>()[2] == Approx(3 - std::log(std::exp(1) + std::exp(2) + std::exp(3))));
}

// ---- var / std / norm / logsumexp / any / all --------------------------------

namespace {

// Naive float64 variance of rows of a [rows, cols] array.
std::vector<double> row_vars(const std::vector<float>& v, int64_t rows, int64_t cols, int64_t correction) {
  std::vector<double> out(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    double m = 0, s = 0;
    for (int64_t c = 0; c < cols; ++c) m += v[size_t(r * cols + c)];
    m /= double(cols);
    for (int64_t c = 0; c < cols; ++c) s += (v[size_t(r * cols + c)] - m) * (v[size_t(r * cols + c)] - m);
    out[size_t(r)] = s / double(cols - correction);
  }
  return out;
}

}  // namespace

TEST_CASE("var and std: dims, keepdim, correction, large offsets, non-contiguous") {
  Device dev = device_under_test();
  if (!reductions_supported(dev)) return;
  for (int64_t cols : {int64_t(5), int64_t(40000)}) {
    const int64_t rows = 3;
    INFO("cols=" << cols << " on " << dev);
    // Values near 1e4 with spread 1: a one-pass sum(x^2) - n*mean^2 in
    // float32 would lose every digit here.
    auto v = sample(rows * cols, 1e4f, 1e4f + 1.f);
    Tensor ref = from_vector(v, {rows, cols});
    Tensor x = ref.to(dev);
    for (int64_t corr : {int64_t(0), int64_t(1)}) {
      auto want = row_vars(v, rows, cols, corr);
      auto got = var(x, {1}, corr).to_vector<double>();
      auto gsd = vnn::std(x, {-1}, corr, true);
      REQUIRE(gsd.sizes() == Shape{rows, 1});
      auto sd = gsd.to_vector<double>();
      for (int64_t r = 0; r < rows; ++r) {
        CHECK(got[size_t(r)] == Approx(want[size_t(r)]).epsilon(1e-4));
        CHECK(sd[size_t(r)] == Approx(std::sqrt(want[size_t(r)])).epsilon(1e-4));
      }
    }
    CHECK(max_abs_diff(var(x, 1), var(ref, 1)) <= 1e-4);
    CHECK(max_abs_diff(var(x, 1, false), var(x, {1}, 0)) == 0);
    Tensor t = x.transpose(0, 1);  // non-contiguous
    CHECK(max_abs_diff(var(t, 0, true, true), var(ref, 1, true, true).transpose(0, 1)) <= 1e-4);
    CHECK(max_abs_diff(vnn::std(t.to(kFloat64), 0), vnn::std(ref.to(kFloat64), 1)) <= 1e-9);
    CHECK(var(x).dim() == 0);
    CHECK(var(x).item() == Approx(var(ref).item()).epsilon(1e-5));
    CHECK(var(x.to(kFloat16), 1).dtype() == kFloat16);
  }
  // One element, unbiased: nan (0 / 0), like PyTorch.
  CHECK(std::isnan(var(ones({1}).to(dev)).item()));
  CHECK_THROWS_AS(var(ones({3}, kInt32).to(dev)), DTypeError);
  CHECK_THROWS_AS(vnn::std(ones({3}).to(dev), 2), IndexError);
  CHECK_THROWS_AS(var(ones({3}).to(dev), {0}, -1), ValueError);
}

TEST_CASE("norm: p = 1, 2, 3, inf, -inf, 0, fro over dims") {
  Device dev = device_under_test();
  if (!reductions_supported(dev)) return;
  for (int64_t n : {int64_t(6), int64_t(50000)}) {
    INFO("n=" << n << " on " << dev);
    auto v = sample(2 * n, -2.f, 2.f);
    v[3] = 0.f;
    Tensor ref = from_vector(v, {2, n});
    Tensor x = ref.to(dev);
    double l1 = 0, l2 = 0, l3 = 0, li = 0, lmi = 1e300, l0 = 0;
    for (int64_t c = 0; c < n; ++c) {
      double a = std::fabs(double(v[size_t(c)]));
      l1 += a;
      l2 += a * a;
      l3 += a * a * a;
      li = std::max(li, a);
      lmi = std::min(lmi, a);
      l0 += a != 0;
    }
    auto row0 = [](const Tensor& r) { return r.to_vector<double>()[0]; };
    CHECK(row0(norm(x, 1, {1})) == Approx(l1).epsilon(1e-5));
    CHECK(row0(norm(x, 2, {1})) == Approx(std::sqrt(l2)).epsilon(1e-5));
    CHECK(row0(norm(x, "fro", {1})) == Approx(std::sqrt(l2)).epsilon(1e-5));
    CHECK(row0(norm(x, 3, {1})) == Approx(std::cbrt(l3)).epsilon(1e-4));
    CHECK(row0(norm(x, INFINITY, {1})) == Approx(li));
    CHECK(row0(norm(x, -INFINITY, {1})) == Approx(lmi));
    CHECK(row0(norm(x, 0, {1})) == l0);
    CHECK(max_abs_diff(norm(x), norm(ref)) <= 1e-3);
    CHECK(max_abs_diff(norm(x.transpose(0, 1), 2, {0}, true), norm(ref, 2, {1}, true).transpose(0, 1)) <= 1e-3);
  }
  CHECK(norm(zeros({0}).to(dev), INFINITY).item() == 0);
  CHECK_THROWS_AS(norm(ones({3}, kInt64).to(dev)), DTypeError);
  CHECK_THROWS_AS(norm(ones({3}).to(dev), "nuc"), ValueError);
}

TEST_CASE("logsumexp is stable: large values, -inf rows, +inf, empty") {
  Device dev = device_under_test();
  if (!reductions_supported(dev)) return;
  for (int64_t n : {int64_t(7), int64_t(40000)}) {
    INFO("n=" << n << " on " << dev);
    auto v = sample(2 * n, 500.f, 700.f);  // exp overflows float32 and float64 here
    Tensor ref = from_vector(v, {2, n});
    Tensor x = ref.to(dev);
    double m = -1e300, s = 0;
    for (int64_t c = 0; c < n; ++c) m = std::max(m, double(v[size_t(c)]));
    for (int64_t c = 0; c < n; ++c) s += std::exp(double(v[size_t(c)]) - m);
    Tensor r = logsumexp(x, 1);
    REQUIRE(r.sizes() == Shape{2});
    CHECK(r.to_vector<double>()[0] == Approx(m + std::log(s)).epsilon(1e-6));
    CHECK(logsumexp(x, {0, 1}, true).sizes() == Shape{1, 1});
    CHECK(max_abs_diff(logsumexp(x.transpose(0, 1), 0), logsumexp(ref, 1)) <= 1e-3);
    CHECK(max_abs_diff(logsumexp(x.to(kFloat64), -1), logsumexp(ref.to(kFloat64), -1)) <= 1e-9);
  }
  const float inf = std::numeric_limits<float>::infinity();
  Tensor special = from_vector(std::vector<float>{-inf, -inf, 1.f, inf, 0.f, 0.f}, {3, 2}).to(dev);
  auto got = logsumexp(special, 1).to_vector<double>();
  CHECK(got[0] == -INFINITY);
  CHECK(got[1] == INFINITY);
  CHECK(got[2] == Approx(std::log(2.0)));
  CHECK(logsumexp(zeros({2, 0}).to(dev), 1).to_vector<double>()[0] == -INFINITY);
  Tensor li = logsumexp(from_vector(std::vector<int32_t>{1, 2}, {2}).to(dev), 0);
  CHECK(li.dtype() == kFloat32);
  CHECK(li.item() == Approx(std::log(std::exp(1.0) + std::exp(2.0))).epsilon(1e-6));
  CHECK_THROWS_AS(logsumexp(ones({2}, kBool).to(dev), 0), DTypeError);
  CHECK_THROWS_AS(logsumexp(ones({2}).to(dev), 1), IndexError);
}

TEST_CASE("any and all: every dtype in, bool out, dims, empty") {
  Device dev = device_under_test();
  if (!reductions_supported(dev)) return;
  for (DType dt : {kFloat32, kFloat64, kInt32, kInt64, kUInt8, kBool, kFloat16, kBFloat16}) {
    for (int64_t n : {int64_t(5), int64_t(40000)}) {
      INFO(name(dt) << " n=" << n << " on " << dev);
      Tensor x = zeros({3, n}, dt).to(dev);  // row 0 all zero, row 1 one non-zero, row 2 all non-zero
      x.narrow(0, 1, 1).narrow(1, n - 1, 1).fill_(1);
      x.narrow(0, 2, 1).fill_(1);
      Tensor a = any(x, 1), l = all(x, -1, true);
      CHECK(a.dtype() == kBool);
      CHECK(l.sizes() == Shape{3, 1});
      CHECK(a.to_vector<bool>() == std::vector<bool>{false, true, true});
      CHECK(l.to_vector<bool>() == std::vector<bool>{false, false, true});
      CHECK(any(x).item() == 1);
      CHECK(all(x).item() == 0);
      CHECK(any(x.transpose(0, 1), 0).to_vector<bool>() == std::vector<bool>{false, true, true});
      CHECK(all(x.narrow(0, 2, 1)).item() == 1);
    }
  }
  CHECK(any(from_vector(std::vector<float>{0.f, NAN}, {2}).to(dev)).item() == 1);
  CHECK(any(zeros({0}).to(dev)).item() == 0);
  CHECK(all(zeros({0}).to(dev)).item() == 1);
  CHECK(all(zeros({2, 0}).to(dev), 1).to_vector<bool>() == std::vector<bool>{true, true});
  CHECK_THROWS_AS(any(ones({2}).to(dev), 3), IndexError);
}
