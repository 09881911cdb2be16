// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// matmul / mm on the device under test, checked against the CPU reference
// device and against naive float64 loops. A backend other than cpu that
// answers Unsupported for MATMUL is skipped with a warning.
#include <catch2/catch.hpp>
#include <cmath>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;

namespace {

std::vector<float> sample(int64_t n, float lo, float hi, int64_t salt = 0) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = lo + (hi - lo) * float(((i + salt) * 7919) % 1009) / 1009.f;
  return v;
}

bool matmul_supported(const Device& dev) {
  try {
    mm(ones({2, 2}).to(dev), ones({2, 2}).to(dev)).to_vector<float>();
    return true;
  } catch (const Unsupported& e) {
    if (dev.is_cpu()) throw;
    WARN("skipped on " << dev << ": " << e.what());
    SUCCEED("the backend answers Unsupported for matmul");
    return false;
  }
}

// Naive float64 a [m, k] @ b [k, n], both row-major.
std::vector<double> naive(const std::vector<float>& a, const std::vector<float>& b, int64_t m, int64_t k, int64_t n) {
  std::vector<double> c(size_t(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) c[size_t(i * n + j)] += double(a[size_t(i * k + p)]) * double(b[size_t(p * n + j)]);
  return c;
}

double max_diff(const Tensor& t, const std::vector<double>& want) {
  auto got = t.to_vector<double>();
  REQUIRE(got.size() == want.size());
  double m = 0;
  for (size_t i = 0; i < got.size(); ++i) m = std::max(m, std::fabs(got[i] - want[i]));
  return m;
}

}  // namespace

TEST_CASE("mm matches naive loops below and above the inline grain") {
  Device dev = device_under_test();
  if (!matmul_supported(dev)) return;
  struct Dims { int64_t m, k, n; };
  for (Dims d : {Dims{1, 1, 1}, Dims{3, 5, 7}, Dims{17, 9, 13}, Dims{64, 80, 72}, Dims{130, 67, 129}}) {
    INFO("m=" << d.m << " k=" << d.k << " n=" << d.n << " on " << dev);
    auto av = sample(d.m * d.k, -1.f, 1.f), bv = sample(d.k * d.n, -1.f, 1.f, 31);
    Tensor ar = from_vector(av, {d.m, d.k}), br = from_vector(bv, {d.k, d.n});
    Tensor a = ar.to(dev), b = br.to(dev);
    auto want = naive(av, bv, d.m, d.k, d.n);
    Tensor c = mm(a, b);
    CHECK(c.sizes() == Shape{d.m, d.n});
    CHECK(c.device() == dev);
    CHECK(max_diff(c, want) <= 1e-4 * double(d.k));
    CHECK(max_abs_diff(c, mm(ar, br)) <= 1e-4 * double(d.k));
    // float64 agrees to rounding
    CHECK(max_diff(mm(a.to(kFloat64), b.to(kFloat64)), want) <= 1e-12 * double(d.k));
    // transposed (non-unit-stride) operands: a^T stored as [k, m] transposed
    Tensor at = ar.transpose(0, 1).contiguous().to(dev).transpose(0, 1);
    Tensor bt = br.transpose(0, 1).contiguous().to(dev).transpose(0, 1);
    REQUIRE((d.m == 1 || d.k == 1 || !at.is_contiguous()));
    CHECK(max_diff(mm(at, bt), want) <= 1e-4 * double(d.k));
    CHECK(max_diff(matmul(at, b), want) <= 1e-4 * double(d.k));
  }
}

TEST_CASE("matmul with fully strided operands (neither last dim unit-stride)") {
  Device dev = device_under_test();
  if (!matmul_supported(dev)) return;
  for (int64_t s : {int64_t(6), int64_t(150)}) {
    INFO("size " << s << " on " << dev);
    auto av = sample(2 * s * 2 * s, -1.f, 1.f), bv = sample(2 * s * 2 * s, -1.f, 1.f, 7);
    Tensor ar = from_vector(av, {2 * s, 2 * s}), br = from_vector(bv, {2 * s, 2 * s});
    // every other row and column: strides (4s, 2)
    Tensor a = ar.to(dev).view({s, 2, s, 2}).select(3, 0).select(1, 1);
    Tensor b = br.to(dev).view({s, 2, s, 2}).select(3, 1).select(1, 0);
    REQUIRE(a.stride(1) == 2);
    Tensor ref = mm(ar.view({s, 2, s, 2}).select(3, 0).select(1, 1).contiguous(),
                    br.view({s, 2, s, 2}).select(3, 1).select(1, 0).contiguous());
    CHECK(max_abs_diff(mm(a, b), ref) <= 1e-3);
  }
}

TEST_CASE("matmul shape rules: vectors, batches, broadcasting") {
  Device dev = device_under_test();
  if (!matmul_supported(dev)) return;
  auto av = sample(2 * 3 * 4 * 5, -1.f, 1.f), bv = sample(3 * 5 * 6, -1.f, 1.f, 3);
  Tensor ar = from_vector(av, {2, 3, 4, 5}), br = from_vector(bv, {3, 5, 6});
  Tensor a = ar.to(dev), b = br.to(dev);
  // batched with broadcasting of the leading batch dim
  Tensor c = matmul(a, b);
  REQUIRE(c.sizes() == Shape{2, 3, 4, 6});
  CHECK(max_abs_diff(c, matmul(ar, br)) <= 1e-5);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      std::vector<float> as(av.begin() + (i * 3 + j) * 20, av.begin() + (i * 3 + j + 1) * 20);
      std::vector<float> bs(bv.begin() + j * 30, bv.begin() + (j + 1) * 30);
      CHECK(max_diff(c.select(0, i).select(0, j), naive(as, bs, 4, 5, 6)) <= 1e-5);
    }
  // a single matrix broadcast over b's batch (stride-0 batch)
  Tensor m = a.select(0, 0).select(0, 1);  // [4, 5]
  Tensor cm = matmul(m, b);
  REQUIRE(cm.sizes() == Shape{3, 4, 6});
  for (int j = 0; j < 3; ++j) CHECK(max_abs_diff(cm.select(0, j), mm(m, b.select(0, j))) <= 1e-6);
  // vector cases
  Tensor v5 = from_vector(sample(5, -1.f, 1.f), {5}).to(dev);
  Tensor v4 = from_vector(sample(4, -1.f, 1.f, 2), {4}).to(dev);
  Tensor dot = matmul(v5, v5);
  CHECK(dot.dim() == 0);
  double want = 0;
  for (float f : v5.to_vector<float>()) want += double(f) * f;
  CHECK(dot.item() == Approx(want).epsilon(1e-6));
  CHECK(matmul(m, v5).sizes() == Shape{4});
  CHECK(max_abs_diff(matmul(m, v5), mm(m, v5.view({5, 1})).view({4})) <= 1e-6);
  CHECK(matmul(v4, m).sizes() == Shape{5});
  CHECK(max_abs_diff(matmul(v4, m), mm(v4.view({1, 4}), m).view({5})) <= 1e-6);
  CHECK(matmul(a, v5).sizes() == Shape{2, 3, 4});
  CHECK(matmul(v5, b).sizes() == Shape{3, 6});
  // empty dims
  Tensor e = matmul(zeros({3, 0}, TensorOptions(dev)), zeros({0, 4}, TensorOptions(dev)));
  CHECK(e.sizes() == Shape{3, 4});
  CHECK(e.to_vector<float>() == std::vector<float>(12, 0.f));
  CHECK(matmul(zeros({0, 2}, TensorOptions(dev)), zeros({2, 4}, TensorOptions(dev))).sizes() == Shape{0, 4});
}

TEST_CASE("integer and half matmul") {
  Device dev = device_under_test();
  if (!matmul_supported(dev)) return;
  Tensor a = from_vector(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {2, 3}).to(dev);
  Tensor b = from_vector(std::vector<int32_t>{7, 8, 9, 10, 11, 12}, {3, 2}).to(dev);
  Tensor c = mm(a, b);
  CHECK(c.dtype() == kInt32);
  CHECK(c.to_vector<int32_t>() == std::vector<int32_t>{58, 64, 139, 154});
  CHECK(mm(a.to(kInt64), b.to(kInt64)).to_vector<int64_t>() == std::vector<int64_t>{58, 64, 139, 154});
  Tensor h = mm(a.to(kFloat16), b.to(kFloat16));
  CHECK(h.dtype() == kFloat16);
  CHECK(h.to_vector<float>() == std::vector<float>{58, 64, 139, 154});
}

TEST_CASE("float16 and bfloat16 matmul round once, like float32 on the same inputs") {
  // cuBLAS takes half operands as they are (float32 accumulation); other
  // backends convert to float32. Either way: one rounding of the float32
  // product, on batched, transposed and broadcast operands.
  Device dev = device_under_test();
  if (!matmul_supported(dev)) return;
  for (DType t : {kFloat16, kBFloat16}) {
    INFO(name(t) << " on " << dev);
    Tensor ar = from_vector(sample(2 * 3 * 33 * 40, -2.f, 2.f), {2, 3, 33, 40}).to(t);
    Tensor br = from_vector(sample(3 * 40 * 35, -2.f, 2.f, 5), {3, 35, 40}).to(t);
    Tensor a = ar.to(dev), b = br.to(dev).transpose(-1, -2);  // b: [3, 40, 35], column-major matrices
    Tensor c = matmul(a, b);
    REQUIRE(c.dtype() == t);
    REQUIRE(c.sizes() == Shape{2, 3, 33, 35});
    Tensor want = matmul(ar.to(kFloat32), br.to(kFloat32).transpose(-1, -2)).to(t);
    // float32 sums in a different order may round to the neighbouring half
    const double ulp = t == kBFloat16 ? 1.0 / 128 : 1.0 / 1024;
    CHECK(max_abs_diff(c.to(kFloat32), want.to(kFloat32)) <= 2 * ulp * 80.0);
    CHECK(max_abs_diff(c.to(kFloat32), want.to(kFloat32).to(dev)) <= 2 * ulp * 80.0);
    // gradients flow through the native path too
    Tensor x = a.to(kFloat32).to(t).detach().requires_grad_(true);
    vnn::sum(matmul(x, b)).backward();
    REQUIRE(x.grad().defined());
    CHECK(x.grad().dtype() == t);
    CHECK(x.grad().sizes() == x.sizes());
  }
}

TEST_CASE("matmul errors are typed and name op, argument and shapes") {
  Device dev = device_under_test();
  if (!matmul_supported(dev)) return;
  Tensor a = ones({2, 3}, TensorOptions(dev)), b = ones({4, 5}, TensorOptions(dev));
  CHECK_THROWS_AS(mm(a, b), ShapeError);
  CHECK_THROWS_WITH(mm(a, b), Catch::Contains("2x3") && Catch::Contains("4x5"));
  CHECK_THROWS_AS(matmul(a, b), ShapeError);
  CHECK_THROWS_WITH(matmul(a, b), Catch::Contains("matmul") && Catch::Contains("[2, 3]"));
  CHECK_THROWS_AS(matmul(ones({2, 2, 3}, TensorOptions(dev)), ones({3, 3, 4}, TensorOptions(dev))), ShapeError);
  CHECK_THROWS_AS(matmul(full({}, 1.0, TensorOptions(dev)), a), ShapeError);
  CHECK_THROWS_AS(mm(ones({3}, TensorOptions(dev)), a), ShapeError);
  CHECK_THROWS_AS(mm(a, ones({3, 2}, TensorOptions(dev).with(kFloat64))), DTypeError);
  CHECK_THROWS_WITH(mm(a, ones({3, 2}, TensorOptions(dev).with(kFloat64))),
                    Catch::Contains("float32") && Catch::Contains("float64"));
  CHECK_THROWS_AS(mm(a.to(kBool), ones({3, 2}, TensorOptions(dev).with(kBool))), DTypeError);
  if (!dev.is_cpu()) {
    CHECK_THROWS_AS(matmul(a, ones({3, 2})), DeviceMismatch);
    CHECK_THROWS_WITH(matmul(a, ones({3, 2})), Catch::Contains("mat2") && Catch::Contains("matmul"));
  }
  CHECK_THROWS_AS(matmul(a, Tensor()), ValueError);
}
