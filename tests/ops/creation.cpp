// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// linspace, eye, the *_like overrides and literal tensors on the device
// under test, checked against plain float64 values.
#include <catch2/catch.hpp>
#include <cmath>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;

TEST_CASE("linspace: endpoints exact, steps 0 and 1, dtypes") {
  Device dev = device_under_test();
  TensorOptions o = TensorOptions(dev).with(kFloat64);
  for (int64_t steps : {int64_t(2), int64_t(5), int64_t(100001)}) {
    INFO("steps=" << steps << " on " << dev);
    Tensor t = linspace(-3.0, 7.5, steps, o);
    REQUIRE(t.sizes() == Shape{steps});
    CHECK(t.device() == dev);
    auto v = t.to_vector<double>();
    CHECK(v.front() == -3.0);
    CHECK(v.back() == 7.5);
    double step = 10.5 / double(steps - 1);
    for (int64_t i = 0; i < steps; i += steps / 5 + 1) CHECK(v[size_t(i)] == Approx(-3.0 + step * double(i)));
  }
  CHECK(linspace(1, 2, 0, o).numel() == 0);
  CHECK(linspace(4, 9, 1, o).to_vector<double>() == std::vector<double>{4.0});
  CHECK(linspace(0, 1, 3, TensorOptions(dev)).dtype() == kFloat32);
  CHECK(linspace(0, 10, 3, TensorOptions(dev).with(kInt64)).to_vector<int64_t>() == std::vector<int64_t>{0, 5, 10});
  CHECK_THROWS_AS(linspace(0, 1, -1, o), ValueError);
  CHECK_THROWS_AS(linspace(0, INFINITY, 3, o), ValueError);
}

TEST_CASE("eye: square and rectangular") {
  Device dev = device_under_test();
  for (auto [n, m] : {std::pair<int64_t, int64_t>{3, -1}, {2, 4}, {4, 2}, {0, 3}, {300, 300}}) {
    INFO(n << "x" << m << " on " << dev);
    Tensor e = eye(n, m, TensorOptions(dev).with(kInt32));
    int64_t mm = m < 0 ? n : m;
    REQUIRE(e.sizes() == Shape{n, mm});
    auto v = e.to_vector<int32_t>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < mm; ++j) REQUIRE(v[size_t(i * mm + j)] == (i == j ? 1 : 0));
  }
  CHECK_THROWS_AS(eye(-1), ValueError);
}

TEST_CASE("*_like overrides: dtype keeps the device, device keeps the dtype") {
  Device dev = device_under_test();
  Tensor t = ones({2, 3}, TensorOptions(dev).with(kInt32));
  Tensor a = zeros_like(t, kFloat64);
  CHECK(a.device() == dev);
  CHECK(a.dtype() == kFloat64);
  CHECK(a.sizes() == t.sizes());
  CHECK(a.to_vector<double>() == std::vector<double>(6, 0.0));
  Tensor b = ones_like(t, Device("cpu", 0));
  CHECK(b.device() == Device("cpu", 0));
  CHECK(b.dtype() == kInt32);
  CHECK(b.to_vector<int32_t>() == std::vector<int32_t>(6, 1));
  Tensor c = full_like(t, 2.5, TensorOptions(dev).with(kFloat32));
  CHECK(c.to_vector<float>() == std::vector<float>(6, 2.5f));
  CHECK(full_like(t, 7, kInt64).to_vector<int64_t>() == std::vector<int64_t>(6, 7));
  CHECK(full_like(t, 3, Device("cpu", 0)).dtype() == kInt32);
  CHECK(empty_like(t, kUInt8).dtype() == kUInt8);
  CHECK(empty_like(t, Device("cpu", 0)).sizes() == t.sizes());
  CHECK(empty_like(t, TensorOptions(dev).with(kBool)).dtype() == kBool);
  CHECK(ones_like(t, TensorOptions(dev).with(kFloat16)).to_vector<float>() == std::vector<float>(6, 1.f));
  CHECK(zeros_like(t, Device(dev)).device() == dev);
  CHECK_THROWS_AS(zeros_like(Tensor(), kFloat32), ValueError);
}

TEST_CASE("tensor from initializer lists") {
  Device dev = device_under_test();
  Tensor a = tensor({1, 2.5, -3}, TensorOptions(dev));
  CHECK(a.sizes() == Shape{3});
  CHECK(a.dtype() == kFloat32);
  CHECK(a.to_vector<float>() == std::vector<float>{1.f, 2.5f, -3.f});
  Tensor b = tensor({{1, 2, 3}, {4, 5, 6}}, TensorOptions(dev).with(kInt64));
  CHECK(b.sizes() == Shape{2, 3});
  CHECK(b.to_vector<int64_t>() == std::vector<int64_t>{1, 2, 3, 4, 5, 6});
  CHECK_THROWS_AS(tensor({{1, 2}, {3}}, TensorOptions(dev)), ShapeError);
}

TEST_CASE("LibTorch's spellings: new_zeros / new_ones / new_full / new_empty, half(), bfloat16(), scalar_tensor") {
  Device dev = device_under_test();
  Tensor t = arange(int64_t(0), int64_t(6), int64_t(1), TensorOptions(dev).with(kInt32)).view({2, 3});
  Tensor z = t.new_zeros({4}), o = t.new_ones({2, 2}), f = t.new_full({3}, 7), e = t.new_empty({5});
  for (const Tensor* x : {&z, &o, &f, &e}) {
    CHECK(x->dtype() == kInt32);
    CHECK(x->device() == dev);
  }
  CHECK(z.to_vector<int32_t>() == std::vector<int32_t>{0, 0, 0, 0});
  CHECK(o.to_vector<int32_t>() == std::vector<int32_t>{1, 1, 1, 1});
  CHECK(f.to_vector<int32_t>() == std::vector<int32_t>{7, 7, 7});
  CHECK(e.sizes() == Shape{5});
  Tensor x = full({3}, 1.5, TensorOptions(dev));
  CHECK(x.half().dtype() == kFloat16);
  CHECK(x.bfloat16().dtype() == kBFloat16);
  CHECK(x.bfloat16().to(kFloat32).to_vector<float>() == std::vector<float>{1.5f, 1.5f, 1.5f});
  Tensor s = scalar_tensor(2.5, TensorOptions(dev));
  CHECK(s.dim() == 0);
  CHECK(s.dtype() == kFloat32);
  CHECK(s.item<float>() == 2.5f);
  CHECK(scalar_tensor(3, TensorOptions(dev).with(kInt64)).item<int64_t>() == 3);
}
