// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// int8 and int16 (torch::kChar / kShort) on the device under test: creation,
// host access, casting to and from every dtype, arithmetic wrapping at the
// type's width, promotion, comparison, where, reductions, scans, sorting,
// indexing, cat / stack, printing; the shifts and div's rounding modes on
// every integer dtype. Expected values are PyTorch's (CPU), written out.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <string>

#include "support/device_under_test.hpp"
#include "vnn/vnn.h"

using namespace vnn;
using vnn::test::device_under_test;

namespace {

const Device kCpu("cpu", 0);

// Values on the host as int64 (every int8 / int16 / uint8 value is exact).
std::vector<int64_t> host(const Tensor& t) { return t.to(kCpu).to(kInt64).to_vector<int64_t>(); }

Tensor ints(const std::vector<int64_t>& v, DType dt, const Device& dev) {
  return from_vector(v, {int64_t(v.size())}).to(dev).to(dt);
}

const std::vector<DType> kSmall = {kInt8, kInt16};

}  // namespace

TEST_CASE("int8 / int16: creation, host access, item and printing") {
  Device dev = device_under_test();
  for (DType dt : kSmall) {
    INFO(name(dt) << " on " << dev);
    const TensorOptions o = TensorOptions(dev).with(dt);
    CHECK(zeros({2, 3}, o).dtype() == dt);
    CHECK(host(zeros({4}, o)) == std::vector<int64_t>(4, 0));
    CHECK(host(ones({3}, o)) == std::vector<int64_t>(3, 1));
    CHECK(host(full({2}, -5.0, o)) == std::vector<int64_t>{-5, -5});
    CHECK(empty({5}, o).dtype() == dt);
    Tensor r = arange(-3, 4, 2, o);
    CHECK(r.dtype() == dt);
    CHECK(host(r) == std::vector<int64_t>{-3, -1, 1, 3});
    CHECK(full({1}, -7.0, o).item<int>() == -7);
    CHECK(zeros_like(r).dtype() == dt);
    CHECK(r.str().find("dtype=" + std::string(name(dt))) != std::string::npos);
    CHECK(r.str().find("-3") != std::string::npos);
  }
  Tensor a = from_vector(std::vector<int8_t>{-128, -1, 0, 127}, {4}).to(dev);
  CHECK(a.dtype() == kChar);
  CHECK(a.to_vector<int8_t>() == std::vector<int8_t>{-128, -1, 0, 127});
  Tensor b = from_vector(std::vector<int16_t>{-32768, 300, 32767}, {3}).to(dev);
  CHECK(b.dtype() == kShort);
  CHECK(b.to_vector<int16_t>() == std::vector<int16_t>{-32768, 300, 32767});
  CHECK(b.to(kCpu).data<int16_t>()[1] == 300);
  CHECK(itemsize(kInt8) == 1);
  CHECK(itemsize(kInt16) == 2);
}

TEST_CASE("int8 / int16: casting to and from every dtype wraps as PyTorch") {
  Device dev = device_under_test();
  // float -> int8 / int16 truncates toward zero through int64, then wraps.
  Tensor f = from_vector(std::vector<float>{-3.75f, 100.5f, 300.f, -129.f, 70000.f, 0.f}, {6}).to(dev);
  CHECK(host(f.to(kInt8)) == std::vector<int64_t>{-3, 100, 44, 127, 112, 0});
  CHECK(host(f.to(kInt16)) == std::vector<int64_t>{-3, 100, 300, -129, 4464, 0});
  Tensor i64 = ints({-1, 255, 256, -32769, 65535}, kInt64, dev);
  CHECK(host(i64.to(kInt8)) == std::vector<int64_t>{-1, -1, 0, -1, -1});
  CHECK(host(i64.to(kInt16)) == std::vector<int64_t>{-1, 255, 256, 32767, -1});
  CHECK(host(ints({-1, -128, 5}, kInt8, dev).to(kUInt8)) == std::vector<int64_t>{255, 128, 5});
  CHECK(host(ints({-1, 0, 3}, kInt16, dev).to(kBool)) == std::vector<int64_t>{1, 0, 1});
  // Every dtype in and out, the device against the CPU.
  const std::vector<double> vals = {0, 1, -2, 100, 0.5, -3.75, 127};
  const std::vector<DType> all = {kFloat32, kFloat64, kInt32, kInt64, kUInt8, kBool, kFloat16, kBFloat16, kInt8, kInt16};
  for (DType small : kSmall)
    for (DType other : all) {
      INFO(name(small) << " <-> " << name(other) << " on " << dev);
      Tensor src = from_vector(vals, {7}).to(other);
      CHECK(host(src.to(dev).to(small)) == host(src.to(small)));
      Tensor s = from_vector(vals, {7}).to(small);
      CHECK(s.to(dev).to(other).to(kCpu).to(kFloat64).to_vector<double>() ==
            s.to(other).to(kFloat64).to_vector<double>());
    }
}

TEST_CASE("int8 / int16: arithmetic wraps at the width; promotion as PyTorch") {
  Device dev = device_under_test();
  Tensor a = ints({127, -128, 64, -100}, kInt8, dev), b = ints({1, -1, 2, 3}, kInt8, dev);
  CHECK(add(a, b).dtype() == kInt8);
  CHECK(host(add(a, b)) == std::vector<int64_t>{-128, 127, 66, -97});
  CHECK(host(sub(a, b)) == std::vector<int64_t>{126, -127, 62, -103});
  CHECK(host(mul(a, b)) == std::vector<int64_t>{127, -128, -128, -44});
  CHECK(host(neg(a)) == std::vector<int64_t>{-127, -128, -64, 100});
  CHECK(host(abs(a)) == std::vector<int64_t>{127, -128, 64, 100});
  CHECK(host(add(a, 1.0)) == std::vector<int64_t>{-128, -127, 65, -99});  // an int scalar keeps int8
  CHECK(add(a, 1.5).dtype() == kFloat32);
  CHECK(div(a, b).dtype() == kFloat32);
  Tensor c = ints({32767, 300, -32768}, kInt16, dev);
  CHECK(host(add(c, c)) == std::vector<int64_t>{-2, 600, 0});
  CHECK(host(mul(c, c)) == std::vector<int64_t>{1, 24464, 0});
  CHECK(host(pow(ints({3, -2, 2}, kInt8, dev), 5.0)) == std::vector<int64_t>{-13, -32, 32});
  CHECK(promote_types(kInt8, kUInt8) == kInt16);
  CHECK(promote_types(kUInt8, kInt16) == kInt16);
  CHECK(promote_types(kInt8, kInt16) == kInt16);
  CHECK(promote_types(kInt16, kInt32) == kInt32);
  CHECK(promote_types(kBool, kInt8) == kInt8);
  CHECK(promote_types(kInt16, kFloat16) == kFloat16);
  Tensor u = ints({255, 0}, kUInt8, dev), s = ints({-1, -128}, kInt8, dev);
  Tensor us = add(u, s);
  CHECK(us.dtype() == kInt16);
  CHECK(host(us) == std::vector<int64_t>{254, -128});
  CHECK(add(s, ints({1, 2}, kInt16, dev)).dtype() == kInt16);
  CHECK(add(s, ints({1, 2}, kInt32, dev)).dtype() == kInt32);
  CHECK(mul(s, ones({2}, TensorOptions(dev))).dtype() == kFloat32);
  CHECK(dtype_from_name("int8") == kInt8);
  CHECK(dtype_from_name("short") == kInt16);
  CHECK(std::string(name(kShort)) == "int16");
}

TEST_CASE("int8 / int16: comparison, where, reductions, scans and sorting") {
  Device dev = device_under_test();
  for (DType dt : kSmall) {
    INFO(name(dt) << " on " << dev);
    Tensor a = ints({5, -7, 100, -100, 3, 3}, dt, dev), b = ints({5, 7, -100, 100, 2, 4}, dt, dev);
    CHECK(lt(a, b).dtype() == kBool);
    CHECK(host(lt(a, b)) == std::vector<int64_t>{0, 1, 0, 1, 0, 1});
    CHECK(host(eq(a, b)) == std::vector<int64_t>{1, 0, 0, 0, 0, 0});
    CHECK(host(ge(a, 3.0)) == std::vector<int64_t>{1, 0, 1, 0, 1, 1});
    Tensor w = where(gt(a, b), a, b);
    CHECK(w.dtype() == dt);
    CHECK(host(w) == std::vector<int64_t>{5, 7, 100, 100, 3, 4});
    CHECK(where(gt(a, b), a, b.to(kInt32)).dtype() == kInt32);
    // sum of a small integer type is int64 (no wrap), max / min keep the dtype.
    Tensor big = full({4}, 100.0, TensorOptions(dev).with(dt));
    CHECK(sum(big).dtype() == kInt64);
    CHECK(sum(big).item<int64_t>() == 400);
    CHECK(max(a).dtype() == dt);
    CHECK(max(a).item<int>() == 100);
    CHECK(min(a).item<int>() == -100);
    CHECK(argmax(a).item<int64_t>() == 2);
    CHECK(host(sum(a.view({2, 3}), {1})) == std::vector<int64_t>{98, -94});
    CHECK(host(amax(a.view({2, 3}), {0})) == std::vector<int64_t>{5, 3, 100});
    Tensor cs = cumsum(big, 0);
    CHECK(cs.dtype() == kInt64);
    CHECK(host(cs) == std::vector<int64_t>{100, 200, 300, 400});
    // Products wrap at the width as PyTorch's: [[100, 2]] @ [[3], [-1]] = 298.
    Tensor p = matmul(ints({100, 2}, dt, dev).view({1, 2}), ints({3, -1}, dt, dev).view({2, 1}));
    CHECK(p.dtype() == dt);
    CHECK(host(p) == std::vector<int64_t>{dt == kInt8 ? 42 : 298});
    CHECK(host(searchsorted(ints({-5, 0, 5}, dt, dev), ints({-6, 0, 7}, dt, dev))) == std::vector<int64_t>{0, 1, 3});
    auto [vals, idx] = sort(a);
    CHECK(vals.dtype() == dt);
    CHECK(host(vals) == std::vector<int64_t>{-100, -7, 3, 3, 5, 100});
    CHECK(host(idx) == std::vector<int64_t>{3, 1, 4, 5, 0, 2});
  }
}

TEST_CASE("int8 / int16: indexing, cat, stack and copies") {
  Device dev = device_under_test();
  for (DType dt : kSmall) {
    INFO(name(dt) << " on " << dev);
    Tensor t = ints({-1, 2, -3, 4, -5, 6}, dt, dev).view({2, 3});
    Tensor idx = ints({2, 0}, kInt64, dev);
    CHECK(host(index_select(t, 1, idx)) == std::vector<int64_t>{-3, -1, 6, 4});
    Tensor gi = ints({1, 1, 0, 0, 2, 2}, kInt64, dev).view({2, 3});
    Tensor g = gather(t, 1, gi);
    CHECK(g.dtype() == dt);
    CHECK(host(g) == std::vector<int64_t>{2, 2, -1, 4, 6, 6});
    Tensor sc = scatter(zeros({2, 3}, TensorOptions(dev).with(dt)), 1, ints({2, 0, 1, 1, 2, 0}, kInt64, dev).view({2, 3}),
                        t);
    CHECK(host(sc) == std::vector<int64_t>{2, -3, -1, 6, 4, -5});
    Tensor m = masked_fill(t, lt(t, 0.0), 9.0);
    CHECK(m.dtype() == dt);
    CHECK(host(m) == std::vector<int64_t>{9, 2, 9, 4, 9, 6});
    CHECK(host(cat({t, t.narrow(0, 0, 1)}, 0)) == std::vector<int64_t>{-1, 2, -3, 4, -5, 6, -1, 2, -3});
    Tensor st = stack({t, t}, 0);
    CHECK(st.sizes() == Shape{2, 2, 3});
    CHECK(host(st.select(0, 1)) == host(t));
    CHECK(host(t.t().contiguous()) == std::vector<int64_t>{-1, 4, 2, -5, -3, 6});
    Tensor cl = t.clone();
    cl.copy_(ones({2, 3}, TensorOptions(dev)));
    CHECK(cl.dtype() == dt);
    CHECK(host(cl) == std::vector<int64_t>(6, 1));
    CHECK(host(t.to(kCpu).to(dev)) == host(t));
  }
}

TEST_CASE("bitwise shifts: PyTorch's results on every integer dtype, counts outside [0, width) included") {
  Device dev = device_under_test();
  struct Case {
    DType dt;
    std::vector<int64_t> a, b, left, right;
  };
  const std::vector<Case> cases = {
      {kInt8, {1, 1, -128, -128, 64, 5, -5, 3}, {7, 8, 7, 8, 10, -1, -1, 1}, {-128, 0, 0, 0, 0, 0, 0, 6},
       {0, 0, -1, -1, 0, 0, -1, 1}},
      {kInt16, {1, 1, -32768, 300, -300, 7}, {15, 16, 15, 2, 3, 40}, {-32768, 0, 0, 1200, -2400, 0}, {0, 0, -1, 75, -38, 0}},
      {kUInt8, {255, 255, 1, 128}, {1, 8, 7, 7}, {254, 0, 128, 0}, {127, 0, 0, 1}},
      {kInt32, {1, -1, 5, -7}, {31, 32, -2, 1}, {INT32_MIN, 0, 0, -14}, {0, -1, 0, -4}},
      {kInt64, {1, -1, 5, -7}, {63, 64, 70, 2}, {INT64_MIN, 0, 0, -28}, {0, -1, 0, -2}},
  };
  for (const Case& c : cases) {
    INFO(name(c.dt) << " on " << dev);
    Tensor a = ints(c.a, c.dt, dev), b = ints(c.b, c.dt, dev);
    CHECK(bitwise_left_shift(a, b).dtype() == c.dt);
    CHECK(host(bitwise_left_shift(a, b)) == c.left);
    CHECK(host(bitwise_right_shift(a, b)) == c.right);
    CHECK(host(a << b) == c.left);
    CHECK(host(a >> b) == c.right);
  }
  Tensor x = ints({3, -3}, kInt8, dev);
  CHECK(host(x << 2.0) == std::vector<int64_t>{12, -12});
  CHECK(host(x >> 1.0) == std::vector<int64_t>{1, -2});
  Tensor y = x.clone();
  y.bitwise_left_shift_(1.0);
  CHECK(host(y) == std::vector<int64_t>{6, -6});
  CHECK_THROWS_AS(bitwise_left_shift(ones({2}, TensorOptions(dev)), ones({2}, TensorOptions(dev))), DTypeError);
  CHECK_THROWS_AS(bitwise_right_shift(x, ones({2}, TensorOptions(dev))), DTypeError);
}

TEST_CASE("div with rounding_mode trunc / floor, and floor_divide") {
  Device dev = device_under_test();
  for (DType dt : {kInt8, kInt16, kInt32, kInt64}) {
    INFO(name(dt) << " on " << dev);
    Tensor a = ints({7, -7, 7, -7, 5, 0}, dt, dev), b = ints({2, 2, -2, -2, 0, 3}, dt, dev);
    Tensor t = div(a, b, "trunc"), f = div(a, b, "floor");
    CHECK(t.dtype() == dt);
    CHECK(f.dtype() == dt);
    // x / 0 is 0 for integers: vnn's rule (PyTorch raises ZeroDivisionError).
    CHECK(host(t) == std::vector<int64_t>{3, -3, -3, 3, 0, 0});
    CHECK(host(f) == std::vector<int64_t>{3, -4, -4, 3, 0, 0});
    CHECK(host(floor_divide(a, b)) == host(f));
    CHECK(host(a.div(b, "trunc")) == host(t));
    CHECK(host(div(a, 2.0, "floor")) == std::vector<int64_t>{3, -4, 3, -4, 2, 0});
  }
  Tensor m = ints({-128, -128}, kInt8, dev), n = ints({-1, 1}, kInt8, dev);
  CHECK(host(div(m, n, "trunc")) == std::vector<int64_t>{-128, -128});  // wraps as PyTorch
  Tensor fa = from_vector(std::vector<float>{-7.5f, 7.5f, -1.0f}, {3}).to(dev);
  Tensor fb = from_vector(std::vector<float>{2.f, -2.f, 3.f}, {3}).to(dev);
  CHECK(div(fa, fb, "trunc").to_vector<float>() == std::vector<float>{-3.f, -3.f, -0.f});
  CHECK(div(fa, fb, "floor").to_vector<float>() == std::vector<float>{-4.f, -4.f, -1.f});
  CHECK(div(fa, fb, "trunc").dtype() == kFloat32);
  CHECK_THROWS_AS(div(fa, fb, "round"), ValueError);
  // Piecewise constant: zero gradients, as PyTorch's.
  Tensor g = fa.clone().requires_grad_();
  div(g, fb, "trunc").sum().backward();
  CHECK(g.grad().to_vector<float>() == std::vector<float>{0.f, 0.f, 0.f});
}
