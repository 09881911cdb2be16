// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Philox random numbers: the device under test gives exactly the CPU
// reference's values for the same (seed, offset), element i depends on i
// only, and the distributions look right.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <thread>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::reference_device;

namespace {

uint32_t philox_word(uint64_t seed, uint64_t offset, int64_t i) {
  uint64_t ctr = offset + uint64_t(i) / 4u;
  uint32_t c[4] = {uint32_t(ctr), uint32_t(ctr >> 32), 0u, 0u};
  philox4x32_10(c, uint32_t(seed), uint32_t(seed >> 32));
  return c[i % 4];
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

}  // namespace

TEST_CASE("philox4x32-10 matches the Random123 known-answer vectors") {
  struct Kat { uint32_t ctr[4], key[2], want[4]; };
  const Kat kats[] = {
      {{0u, 0u, 0u, 0u}, {0u, 0u}, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
      {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
       {0xffffffffu, 0xffffffffu},
       {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
      {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
       {0xa4093822u, 0x299f31d0u},
       {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
  };
  for (const Kat& k : kats) {
    uint32_t c[4] = {k.ctr[0], k.ctr[1], k.ctr[2], k.ctr[3]};
    philox4x32_10(c, k.key[0], k.key[1]);
    for (int w = 0; w < 4; ++w) CHECK(c[w] == k.want[w]);
  }
}

TEST_CASE("rand on the device equals the host Philox formula bit for bit") {
  Device dev = device_under_test();
  for (int64_t n : {int64_t(7), int64_t(70001)}) {  // below and above the inline grain
    Generator g(0x123456789abcdefull);
    g.set_offset(5);
    auto v = rand({n}, TensorOptions(dev), &g).to_vector<float>();
    for (int64_t i = 0; i < n; ++i) {
      float want = float(philox_word(0x123456789abcdefull, 5, i) >> 8) * 5.9604644775390625e-8f;
      REQUIRE(bits(v[size_t(i)]) == bits(want));
    }
  }
}

TEST_CASE("the device under test gives the CPU reference's values") {
  Device dev = device_under_test(), ref = reference_device();
  for (int64_t n : {int64_t(5), int64_t(70003)}) {
    INFO("n=" << n << " on " << dev);
    Generator gd(42), gr(42);
    // float32 uniform on [-3, 5): bit-identical.
    Tensor a = empty({n}, TensorOptions(dev)), b = empty({n}, TensorOptions(ref));
    auto av = uniform_(a, -3.0, 5.0, &gd).to_vector<float>();
    auto bv = uniform_(b, -3.0, 5.0, &gr).to_vector<float>();
    for (size_t i = 0; i < av.size(); ++i) {
      REQUIRE(bits(av[i]) == bits(bv[i]));
      REQUIRE(av[i] >= -3.f);
      REQUIRE(av[i] <= 5.f);
    }
    // float32 normal: within 1e-6.
    auto an = randn({n}, TensorOptions(dev), &gd).to_vector<float>();
    auto bn = randn({n}, TensorOptions(ref), &gr).to_vector<float>();
    for (size_t i = 0; i < an.size(); ++i) REQUIRE(std::fabs(an[i] - bn[i]) <= 1e-6f);
    // randint, int32 and int64: identical.
    auto ai = randint(-5, 1000, {n}, TensorOptions(dev).with(kInt32), &gd).to_vector<int32_t>();
    auto bi = randint(-5, 1000, {n}, TensorOptions(ref).with(kInt32), &gr).to_vector<int32_t>();
    CHECK(ai == bi);
    auto al = randint(7, {n}, TensorOptions(dev).with(kInt64), &gd).to_vector<int64_t>();
    auto bl = randint(7, {n}, TensorOptions(ref).with(kInt64), &gr).to_vector<int64_t>();
    CHECK(al == bl);
    CHECK(gd.offset() == gr.offset());
    // float64, where the device has it.
    bool f64 = true;
    try {
      (void)zeros({1}, TensorOptions(dev).with(kFloat64)).add_(1.0).item();
    } catch (const Unsupported&) {
      f64 = false;
    }
    if (f64) {
      auto ad = rand({n}, TensorOptions(dev).with(kFloat64), &gd).to_vector<double>();
      auto bd = rand({n}, TensorOptions(ref).with(kFloat64), &gr).to_vector<double>();
      CHECK(ad == bd);
      auto adn = randn({n}, TensorOptions(dev).with(kFloat64), &gd).to_vector<double>();
      auto bdn = randn({n}, TensorOptions(ref).with(kFloat64), &gr).to_vector<double>();
      for (size_t i = 0; i < adn.size(); ++i) REQUIRE(std::fabs(adn[i] - bdn[i]) <= 1e-6);
    }
  }
}

TEST_CASE("successive draws and different offsets differ; manual_seed restarts") {
  Device dev = device_under_test();
  Generator g(7);
  CHECK(g.offset() == 0);
  auto x = rand({10}, TensorOptions(dev), &g).to_vector<float>();
  CHECK(g.offset() == 3);  // ceil(10 / 4)
  auto y = rand({10}, TensorOptions(dev), &g).to_vector<float>();
  CHECK(g.offset() == 6);
  CHECK(x != y);
  g.manual_seed(7);
  CHECK(g.offset() == 0);
  CHECK(g.seed() == 7);
  CHECK(rand({10}, TensorOptions(dev), &g).to_vector<float>() == x);
  g.manual_seed(8);
  CHECK(rand({10}, TensorOptions(dev), &g).to_vector<float>() != x);

  manual_seed(1234);
  auto d1 = randn({33}, TensorOptions(dev)).to_vector<float>();
  CHECK(default_generator().offset() == 9);
  auto d2 = randn({33}, TensorOptions(dev)).to_vector<float>();
  CHECK(d1 != d2);
  manual_seed(1234);
  CHECK(randn({33}, TensorOptions(dev)).to_vector<float>() == d1);
}

TEST_CASE("a strided output gets the values of the matching contiguous elements") {
  Device dev = device_under_test();
  Tensor base = zeros({300, 10}, TensorOptions(dev));
  Tensor view = base.narrow(1, 2, 5);
  Generator g1(99), g2(99);
  uniform_(view, 0.0, 1.0, &g1);
  auto want = rand({300, 5}, TensorOptions(dev), &g2).to_vector<float>();
  auto got = view.contiguous().to_vector<float>();
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) REQUIRE(bits(got[i]) == bits(want[i]));
  // Columns outside the view are untouched.
  auto all = base.to_vector<float>();
  for (int r = 0; r < 300; ++r) {
    REQUIRE(all[size_t(r * 10 + 0)] == 0.f);
    REQUIRE(all[size_t(r * 10 + 9)] == 0.f);
  }
  Tensor nv = zeros({300, 10}, TensorOptions(dev)).narrow(1, 1, 3);
  Generator g3(5), g4(5);
  normal_(nv, 2.0, 3.0, &g3);
  auto wn = randn({300, 3}, TensorOptions(dev), &g4).to_vector<float>();
  auto gn = nv.contiguous().to_vector<float>();
  for (size_t i = 0; i < gn.size(); ++i) REQUIRE(std::fabs(gn[i] - (2.f + 3.f * wn[i])) <= 1e-5f);
}

TEST_CASE("uniform and normal samples have the right mean and std") {
  Device dev = device_under_test();
  const int64_t n = 1000000;
  Generator g(2024);
  auto stats = [](const std::vector<float>& v, double* mean, double* var) {
    double s = 0, s2 = 0;
    for (float x : v) s += x;
    *mean = s / double(v.size());
    for (float x : v) s2 += (x - *mean) * (x - *mean);
    *var = s2 / double(v.size() - 1);
  };
  double m, var;
  auto u = rand({n}, TensorOptions(dev), &g).to_vector<float>();
  stats(u, &m, &var);
  // 5 sigma: mean sd = sqrt(1/12/n); variance sd = sqrt((1/80 - 1/144)/n).
  CHECK(std::fabs(m - 0.5) < 5 * std::sqrt(1.0 / 12 / double(n)));
  CHECK(std::fabs(var - 1.0 / 12) < 5 * std::sqrt((1.0 / 80 - 1.0 / 144) / double(n)));
  for (float x : u) REQUIRE((x >= 0.f && x < 1.f));
  auto z = randn({n}, TensorOptions(dev), &g).to_vector<float>();
  stats(z, &m, &var);
  CHECK(std::fabs(m) < 5 / std::sqrt(double(n)));
  CHECK(std::fabs(var - 1.0) < 5 * std::sqrt(2.0 / double(n)));
  auto s = randn_like(zeros({n}, TensorOptions(dev)), &g);
  auto sv = s.to_vector<float>();
  stats(sv, &m, &var);
  CHECK(std::fabs(m) < 5 / std::sqrt(double(n)));
  auto r = rand_like(zeros({3, 4}, TensorOptions(dev).with(kFloat16)), &g);
  CHECK(r.dtype() == kFloat16);
  CHECK(r.device() == dev);
  for (float x : r.to(kFloat32).to_vector<float>()) CHECK((x >= 0.f && x <= 1.f));
}

TEST_CASE("randint stays in range and covers every value; randperm is a permutation") {
  Device dev = device_under_test();
  Generator g(11);
  auto v = randint(-3, 7, {10000}, TensorOptions(dev).with(kInt64), &g);
  CHECK(v.dtype() == kInt64);
  std::set<int64_t> seen;
  for (int64_t x : v.to_vector<int64_t>()) {
    REQUIRE(x >= -3);
    REQUIRE(x < 7);
    seen.insert(x);
  }
  CHECK(seen.size() == 10);
  auto w = randint(0, 3, {1000}, TensorOptions(dev).with(kUInt8), &g).to_vector<uint8_t>();
  for (uint8_t x : w) REQUIRE(x < 3);
  CHECK(randint(0, 4, {10}, TensorOptions(dev), &g).dtype() == kInt64);  // a Device alone keeps int64 (issue 15)
  auto f = randint(0, 4, {1000}, TensorOptions(dev).with(kFloat32), &g);  // float32 when asked, as PyTorch allows
  CHECK(f.dtype() == kFloat32);
  for (float x : f.to_vector<float>()) REQUIRE((x == 0.f || x == 1.f || x == 2.f || x == 3.f));
  CHECK_THROWS_AS(randint(5, 5, {3}, TensorOptions(dev).with(kInt64), &g), ValueError);
  CHECK_THROWS_AS(rand({3}, TensorOptions(dev).with(kInt32), &g), DTypeError);

  for (int64_t n : {int64_t(0), int64_t(1), int64_t(1000)}) {
    Tensor p = randperm(n, TensorOptions(dev).with(kInt64), &g);
    CHECK(p.device() == dev);
    CHECK(p.sizes() == Shape{n});
    auto pv = p.to_vector<int64_t>();
    std::vector<int64_t> sorted = pv;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < n; ++i) REQUIRE(sorted[size_t(i)] == i);
    if (n == 1000) {
      int fixed = 0;
      for (int64_t i = 0; i < n; ++i) fixed += pv[size_t(i)] == i;
      CHECK(fixed < 20);
    }
  }
  Generator a(3), b(3);
  CHECK(randperm(50, TensorOptions(dev).with(kInt64), &a).to_vector<int64_t>() ==
        randperm(50, TensorOptions(reference_device()).with(kInt64), &b).to_vector<int64_t>());
}

TEST_CASE("offset reservation is thread-safe") {
  Generator g(1);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&g] {
      for (int i = 0; i < 1000; ++i) g.reserve(10);
    });
  for (auto& t : threads) t.join();
  CHECK(g.offset() == 8u * 1000u * 3u);
}
