// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fill and copy: every dtype pair, strided sources, float16/bfloat16
// rounding, on the device under test.
#include <catch2/catch.hpp>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;

namespace {
bool has_fp64(const Device& d) {
  if (d.backend() != "opencl") return true;
  for (auto& [k, v] : device_info(d).properties)
    if (k == "fp64") return v == "yes";
  return false;
}
}  // namespace

TEST_CASE("fill every dtype") {
  Device dev = device_under_test();
  for (DType t : {kFloat32, kFloat64, kInt32, kInt64, kUInt8, kBool, kFloat16, kBFloat16, kInt8, kInt16}) {
    if (t == kFloat64 && !has_fp64(dev)) continue;
    INFO(name(t) << " on " << dev);
    Tensor x = full({3, 5}, 3.0, TensorOptions(dev).with(t));
    auto v = x.to_vector<double>();
    for (double e : v) REQUIRE(e == (t == kBool ? 1.0 : 3.0));
  }
}

TEST_CASE("copy converts between all dtype pairs") {
  Device dev = device_under_test();
  std::vector<double> vals = {0, 1, 2, 100, 0.5, 3.75};
  std::vector<DType> types = {kFloat32, kFloat64, kInt32, kInt64, kUInt8, kBool, kFloat16, kBFloat16, kInt8, kInt16};
  for (DType from : types) {
    if (from == kFloat64 && !has_fp64(dev)) continue;
    for (DType to : types) {
      if (to == kFloat64 && !has_fp64(dev)) continue;
      INFO(name(from) << " -> " << name(to) << " on " << dev);
      Tensor src = from_vector(vals, {6}).to(from);
      Tensor got = src.to(dev).to(to).to(Device("cpu")).to(kFloat64);
      Tensor want = src.to(to).to(kFloat64);  // the CPU reference
      REQUIRE(got.to_vector<double>() == want.to_vector<double>());
    }
  }
}

TEST_CASE("float16 and bfloat16 round to nearest even") {
  Device dev = device_under_test();
  std::vector<float> v = {1.0f, 1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, 65504.f, 70000.f, 1e-8f, -2.5f};
  auto h = from_vector(v, {7}).to(dev).to(kFloat16).to(kFloat32).to_vector<float>();
  CHECK(h[0] == 1.0f);
  CHECK(h[1] == 1.0f);                    // tie rounds to even
  CHECK(h[2] == 1.0f + 4.0f / 2048);      // tie rounds up to even
  CHECK(h[3] == 65504.f);
  CHECK(std::isinf(h[4]));
  CHECK(h[5] == Approx(0.0f).margin(6e-8));
  CHECK(h[6] == -2.5f);
  auto b = from_vector<float>({1.0f + 1.0f / 256, 3.14159f}, {2}).to(dev).to(kBFloat16).to(kFloat32).to_vector<float>();
  CHECK(b[0] == 1.0f);
  CHECK(b[1] == 3.140625f);
}

TEST_CASE("strided sources copy into contiguous tensors") {
  Device dev = device_under_test();
  Tensor x = arange(0.0, 24, 1, dev).view({2, 3, 4});
  Tensor p = x.permute({2, 0, 1}).contiguous();
  CHECK(p.sizes() == Shape{4, 2, 3});
  auto v = p.to_vector<float>();
  // p[k][i][j] = x[i][j][k] = 12 i + 4 j + k
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) REQUIRE(v[size_t(k * 6 + i * 3 + j)] == float(12 * i + 4 * j + k));
  Tensor s = x.select(1, 2).narrow(1, 1, 2).clone();  // x[:, 2, 1:3]
  CHECK(s.to_vector<float>() == std::vector<float>{9, 10, 21, 22});
  Tensor dst = zeros({4, 3}, dev);
  dst.transpose(0, 1).copy_(arange(0.0, 12, 1, dev).view({3, 4}));
  CHECK(dst.to_vector<float>()[1] == 4.0f);
}
