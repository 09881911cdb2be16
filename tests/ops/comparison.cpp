// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Comparisons, logical ops, where and masked_fill on the device under test,
// checked against plain C++ and the CPU reference.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>

#include "support/device_under_test.hpp"
#include "vnn/elementwise.h"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;

namespace {

std::vector<float> sample(int n, float lo, float hi) { return vnn::test::spread_values(n, lo, hi); }

}  // namespace

TEST_CASE("comparisons broadcast, return bool and match C++ operators") {
  Device dev = device_under_test();
  for (int n : {5, 70000}) {
    auto av = sample(n * 2, -2.f, 2.f);
    auto bv = sample(n, -2.f, 2.f);
    for (int k = 0; k < n; k += 3) bv[size_t(k)] = av[size_t(k)];  // some ties
    Tensor a = from_vector(av, {2, n}).to(dev), b = from_vector(bv, {n}).to(dev);
    using Fn = std::function<Tensor(const Tensor&, const Tensor&)>;
    using Ref = std::function<bool(float, float)>;
    std::vector<std::tuple<const char*, Fn, Ref>> ops = {
        {"eq", [](auto& x, auto& y) { return x == y; }, [](float x, float y) { return x == y; }},
        {"ne", [](auto& x, auto& y) { return x != y; }, [](float x, float y) { return x != y; }},
        {"lt", [](auto& x, auto& y) { return x < y; }, [](float x, float y) { return x < y; }},
        {"le", [](auto& x, auto& y) { return x <= y; }, [](float x, float y) { return x <= y; }},
        {"gt", [](auto& x, auto& y) { return x > y; }, [](float x, float y) { return x > y; }},
        {"ge", [](auto& x, auto& y) { return x >= y; }, [](float x, float y) { return x >= y; }},
    };
    for (auto& [name, op, ref] : ops) {
      INFO(name << " n=" << n << " on " << dev);
      Tensor got = op(a, b);
      REQUIRE(got.dtype() == kBool);
      REQUIRE(got.sizes() == Shape{2, n});
      auto g = got.to_vector<bool>();
      for (int r = 0; r < 2; ++r)
        for (int c = 0; c < n; ++c)
          REQUIRE(g[size_t(r * n + c)] == ref(av[size_t(r * n + c)], bv[size_t(c)]));
      // non-contiguous operands
      Tensor at = a.transpose(0, 1), bt = b.reshape({n, 1});
      CHECK(max_abs_diff(op(at, bt).to(kInt32), op(at.cpu(), bt.cpu()).to(kInt32)) == 0);
    }
  }
}

TEST_CASE("NaN: ne is true, every other comparison false") {
  Device dev = device_under_test();
  const float nan = std::nanf("");
  Tensor a = from_vector<float>({nan, nan, 1.f}, {3}).to(dev);
  Tensor b = from_vector<float>({nan, 1.f, nan}, {3}).to(dev);
  CHECK((a == b).to_vector<bool>() == std::vector<bool>{false, false, false});
  CHECK((a != b).to_vector<bool>() == std::vector<bool>{true, true, true});
  CHECK((a < b).to_vector<bool>() == std::vector<bool>{false, false, false});
  CHECK((a <= b).to_vector<bool>() == std::vector<bool>{false, false, false});
  CHECK((a > b).to_vector<bool>() == std::vector<bool>{false, false, false});
  CHECK((a >= b).to_vector<bool>() == std::vector<bool>{false, false, false});
  CHECK((a == a).to_vector<bool>() == std::vector<bool>{false, false, true});
}

TEST_CASE("comparison promotion and scalar forms") {
  Device dev = device_under_test();
  Tensor i = from_vector<int32_t>({1, 2, 3}, {3}).to(dev);
  Tensor f = from_vector<float>({1.5f, 2.f, 2.5f}, {3}).to(dev);
  CHECK((i < f).to_vector<bool>() == std::vector<bool>{true, false, false});   // compared as float32
  CHECK((i == f).to_vector<bool>() == std::vector<bool>{false, true, false});
  CHECK((i > 1.5).to_vector<bool>() == std::vector<bool>{false, true, true});  // fractional scalar: float
  CHECK((i == 2).to_vector<bool>() == std::vector<bool>{false, true, false});
  CHECK((2 < i).to_vector<bool>() == std::vector<bool>{false, false, true});
  CHECK((2.5 >= f).to_vector<bool>() == std::vector<bool>{true, true, true});
  Tensor big = from_vector<int64_t>({(int64_t(1) << 40) + 1}, {1}).to(dev);
  Tensor big2 = from_vector<int64_t>({int64_t(1) << 40}, {1}).to(dev);
  CHECK((big != big2).to_vector<bool>() == std::vector<bool>{true});  // int64 compare, not via float
  Tensor bl = from_vector<bool>({true, false}, {2}).to(dev);
  CHECK((bl == 1).to_vector<bool>() == std::vector<bool>{true, false});
  Tensor h = from_vector<float>({0.5f, 2.f}, {2}).to(dev).to(kFloat16);
  CHECK((h > 1.0).to_vector<bool>() == std::vector<bool>{false, true});
  CHECK_THROWS_AS(eq(ones({2}, dev), ones({3}, dev)), ShapeError);
}

TEST_CASE("logical ops treat nonzero as true, any dtype, bool out") {
  Device dev = device_under_test();
  Tensor a = from_vector<float>({0.f, 0.f, 2.f, std::nanf("")}, {4}).to(dev);
  Tensor b = from_vector<int64_t>({0, 5, 0, -1}, {4}).to(dev);
  CHECK(logical_and(a, b).dtype() == kBool);
  CHECK(logical_and(a, b).to_vector<bool>() == std::vector<bool>{false, false, false, true});
  CHECK(logical_or(a, b).to_vector<bool>() == std::vector<bool>{false, true, true, true});
  CHECK(logical_xor(a, b).to_vector<bool>() == std::vector<bool>{false, true, true, false});
  CHECK(logical_not(a).to_vector<bool>() == std::vector<bool>{true, true, false, false});
  CHECK(logical_not(b).dtype() == kBool);
  CHECK((!b).to_vector<bool>() == std::vector<bool>{true, false, true, false});
  CHECK(((a > 1.0) || (b < 0)).to_vector<bool>() == std::vector<bool>{false, false, true, true});
  CHECK(((a == 0) && (b == 0)).to_vector<bool>() == std::vector<bool>{true, false, false, false});
  // broadcasting, sizes above the inline grain
  int n = 40000;
  Tensor big = from_vector(sample(2 * n, -1.f, 1.f), {2, n}).to(dev);
  Tensor row = from_vector<uint8_t>({0, 3}, {2, 1}).to(dev);
  Tensor r = logical_and(big, row);
  CHECK(r.sizes() == Shape{2, n});
  auto rv = r.to_vector<bool>();
  auto bv = big.to_vector<float>();
  for (int k = 0; k < 2 * n; k += 37) REQUIRE(rv[size_t(k)] == (k >= n && bv[size_t(k)] != 0.f));
}

TEST_CASE("where broadcasts all three operands and promotes a and b") {
  Device dev = device_under_test();
  for (int n : {4, 50000}) {
    auto av = sample(n, -1.f, 1.f);
    Tensor cond = from_vector(av, {1, n}).to(dev) > 0.0;      // [1, n]
    Tensor a = from_vector<int32_t>({10, 20}, {2, 1}).to(dev);  // [2, 1]
    Tensor b = from_vector<double>({-0.5}, {}).to(dev);         // scalar
    if (dev.backend() == "opencl") {
      bool fp64 = false;
      for (auto& [k, val] : device_info(dev).properties) fp64 |= k == "fp64" && val == "yes";
      if (!fp64) b = b.to(kFloat32);
    }
    Tensor w = where(cond, a, b);
    CHECK(w.dtype() == promote_types(kInt32, b.dtype()));
    REQUIRE(w.sizes() == Shape{2, n});
    auto wv = w.to_vector<double>();
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < n; c += (n > 100 ? 7 : 1))
        REQUIRE(wv[size_t(r * n + c)] == (av[size_t(c)] > 0 ? (r ? 20.0 : 10.0) : -0.5));
    CHECK(max_abs_diff(w, where(cond.cpu(), a.cpu(), b.cpu())) == 0);
  }
  Tensor c = from_vector<bool>({true, false}, {2}).to(dev);
  Tensor x = from_vector<float>({1, 2}, {2}).to(dev);
  CHECK(where(c, x, 7.0).to_vector<float>() == std::vector<float>{1, 7});
  CHECK(where(c, 7.0, x).to_vector<float>() == std::vector<float>{7, 2});
  Tensor h = x.to(kFloat16);
  CHECK(where(c, h, h * 0.0).dtype() == kFloat16);  // f16 arithmetic stays f16 (PyTorch)
  CHECK(where(c, h, x).dtype() == kFloat32);        // a dimensioned f32 widens
  CHECK(where(c, h, 7.0).dtype() == kFloat16);      // a scalar does not
  CHECK_THROWS_AS(where(x, x, x), DTypeError);      // condition must be bool
  CHECK_THROWS_AS(where(c, x, ones({3}, dev)), ShapeError);
}

TEST_CASE("masked_fill and masked_fill_ keep shape and dtype") {
  Device dev = device_under_test();
  Tensor t = arange(0, 6, 1, TensorOptions(dev).with(kInt64)).reshape({2, 3});
  Tensor mask = from_vector<bool>({true, false, true}, {3}).to(dev);
  Tensor r = masked_fill(t, mask, -7.9);  // converts like a C cast: -7
  CHECK(r.dtype() == kInt64);
  CHECK(r.to_vector<int64_t>() == std::vector<int64_t>{-7, 1, -7, -7, 4, -7});
  CHECK(t.to_vector<int64_t>() == std::vector<int64_t>{0, 1, 2, 3, 4, 5});
  Tensor f = zeros({3, 4}, dev);
  Tensor view = f.transpose(0, 1);  // non-contiguous self
  view.masked_fill_(from_vector<bool>({false, true, false}, {3}).to(dev), 2.5);
  auto fv = f.to_vector<float>();
  for (int k = 0; k < 12; ++k) CHECK(fv[size_t(k)] == (k / 4 == 1 ? 2.5f : 0.f));
  int n = 70000;
  Tensor big = from_vector(sample(n, -1.f, 1.f), {n}).to(dev);
  Tensor filled = masked_fill(big, big < 0.0, 0.0);
  CHECK(max_abs_diff(filled, relu(big)) == 0);
  CHECK_THROWS_AS(f.masked_fill_(ones({5}, dev) > 0.0, 1), ShapeError);
  CHECK_THROWS_AS(f.masked_fill_(ones({4}, dev), 1), DTypeError);
  CHECK_THROWS_AS(zeros({2}, dev).masked_fill_(ones({2, 2}, dev) > 0.0, 1), ShapeError);  // would grow self
}

TEST_CASE("comparison, where and masked_fill operands on different devices throw DeviceMismatch") {
  Device dev = device_under_test();
  if (dev.is_cpu()) {
    // On the cpu run there is no second device: the same-device path must work.
    CHECK((ones({2}, dev) == ones({2})).to_vector<bool>() == std::vector<bool>{true, true});
    return;
  }
  Tensor a = ones({2}, dev), b = ones({2});
  auto expect = [&](const std::function<void()>& f, const char* op) {
    try {
      f();
      FAIL("no throw");
    } catch (const DeviceMismatch& e) {
      std::string m = e.what();
      CHECK(m.find(dev.str()) != std::string::npos);
      CHECK(m.find("cpu:0") != std::string::npos);
      CHECK(m.find(op) != std::string::npos);
    }
  };
  expect([&] { (void)(a < b); }, "lt");
  expect([&] { (void)logical_or(a, b); }, "logical_or");
  expect([&] { (void)pow(a, b); }, "pow");
  expect([&] { (void)where(a > 0.0, a, b); }, "where");
  expect([&] { (void)masked_fill(a, b > 0.0, 1); }, "masked_fill");
  expect([&] { a.sub_(b); }, "sub");
}
