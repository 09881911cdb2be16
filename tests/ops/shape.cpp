// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shape views (squeeze, unsqueeze, broadcast_to, flatten, unflatten, split,
// chunk) and the joins cat / stack on the device under test, checked
// against the CPU reference and plain loops.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;

namespace {

// 0, 1, 2, ... as float32 in the given shape on dev.
Tensor iota(const Shape& shape, const Device& dev) { return arange(0, double(shape.numel())).view(shape).to(dev); }

}  // namespace

TEST_CASE("squeeze, unsqueeze, flatten and unflatten are views with the right shapes") {
  Device dev = device_under_test();
  Tensor x = iota({2, 1, 3, 1}, dev);
  CHECK(x.squeeze().sizes() == Shape{2, 3});
  CHECK(x.squeeze(1).sizes() == Shape{2, 3, 1});
  CHECK(x.squeeze(-1).sizes() == Shape{2, 1, 3});
  CHECK(x.squeeze(0).sizes() == Shape{2, 1, 3, 1});  // size 2: unchanged, as in PyTorch
  CHECK(squeeze(x, 1).raw_data() == x.raw_data());
  CHECK(x.unsqueeze(0).sizes() == Shape{1, 2, 1, 3, 1});
  CHECK(x.unsqueeze(-1).sizes() == Shape{2, 1, 3, 1, 1});
  CHECK(unsqueeze(x, 2).sizes() == Shape{2, 1, 1, 3, 1});
  CHECK(x.unsqueeze(4).is_contiguous());
  CHECK(ones({}, dev).unsqueeze(0).sizes() == Shape{1});

  Tensor y = iota({2, 3, 4, 5}, dev);
  CHECK(y.flatten(1).sizes() == Shape{2, 60});
  CHECK(y.flatten(1, 2).sizes() == Shape{2, 12, 5});
  CHECK(flatten(y, -2).sizes() == Shape{2, 3, 20});
  CHECK(ones({}, dev).flatten(0).sizes() == Shape{1});
  CHECK(max_abs_diff(y.flatten(1, 2).flatten(), y.flatten()) == 0);
  // A non-contiguous tensor whose merged dims still form one run: a view.
  Tensor t = y.transpose(0, 3);  // [5, 3, 4, 2]
  Tensor f = t.flatten(1, 2);
  CHECK(f.sizes() == Shape{5, 12, 2});
  CHECK(f.raw_data() == y.raw_data());
  // Dims that don't form one run: a copy with the same values.
  Tensor g = t.flatten(0, 1);
  CHECK(g.sizes() == Shape{15, 4, 2});
  CHECK(max_abs_diff(g, t.contiguous().view({15, 4, 2})) == 0);

  Tensor u = y.unflatten(2, {2, -1});
  CHECK(u.sizes() == Shape{2, 3, 2, 2, 5});
  CHECK(max_abs_diff(u.flatten(2, 3), y) == 0);
  Tensor ut = t.unflatten(0, {5, 1});  // strided source
  CHECK(max_abs_diff(ut.squeeze(1), t) == 0);
  CHECK(unflatten(y, -1, {5}).sizes() == y.sizes());

  CHECK_THROWS_AS(x.squeeze(4), IndexError);
  CHECK_THROWS_AS(x.unsqueeze(6), IndexError);
  CHECK_THROWS_WITH(x.unsqueeze(-6), Catch::Contains("unsqueeze") && Catch::Contains("-6"));
  CHECK_THROWS_AS(ones({1, 1, 1, 1, 1, 1, 1, 1}, dev).unsqueeze(0), ShapeError);
  CHECK_THROWS_AS(y.flatten(2, 1), IndexError);
  CHECK_THROWS_AS(y.flatten(0, 4), IndexError);
  CHECK_THROWS_WITH(y.unflatten(1, {2, 2}), Catch::Contains("unflatten") && Catch::Contains("[2, 2]"));
  CHECK_THROWS_AS(y.unflatten(1, {-1, -1}), ShapeError);
  CHECK_THROWS_AS(y.unflatten(1, {}), ShapeError);
}

TEST_CASE("broadcast_to matches expand and rejects incompatible shapes") {
  Device dev = device_under_test();
  Tensor x = iota({3, 1}, dev);
  Tensor b = x.broadcast_to({2, 3, 4});
  CHECK(b.sizes() == Shape{2, 3, 4});
  CHECK(b.strides()[0] == 0);
  CHECK(b.strides()[2] == 0);
  auto v = b.to_vector<float>();
  for (int i = 0; i < 2; ++i)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 4; ++c) REQUIRE(v[size_t(i * 12 + r * 4 + c)] == float(r));
  CHECK(broadcast_to(x, {-1, 5}).sizes() == Shape{3, 5});
  CHECK_THROWS_AS(x.broadcast_to({2, 4}), ShapeError);
  CHECK_THROWS_WITH(x.broadcast_to({2, 4}), Catch::Contains("broadcast_to") && Catch::Contains("[3, 1]") &&
                                                Catch::Contains("[2, 4]"));
  CHECK_THROWS_AS(x.broadcast_to({4}), ShapeError);       // fewer dims
  CHECK_THROWS_AS(x.broadcast_to({-1, 3, 4}), ShapeError);  // -1 for a new dim
}

TEST_CASE("split and chunk give views covering the tensor") {
  Device dev = device_under_test();
  Tensor x = iota({7, 4}, dev);
  auto parts = x.split(3);
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].sizes() == Shape{3, 4});
  CHECK(parts[2].sizes() == Shape{1, 4});
  CHECK(parts[1].raw_data() == x.raw_data());
  CHECK(parts[1].storage_offset() == 12);
  CHECK(max_abs_diff(cat(parts, 0), x) == 0);
  auto cols = split(x, std::vector<int64_t>{1, 0, 3}, -1);
  REQUIRE(cols.size() == 3);
  CHECK(cols[1].sizes() == Shape{7, 0});
  CHECK(cols[2].sizes() == Shape{7, 3});
  CHECK(max_abs_diff(cat(cols, 1), x) == 0);
  auto ch = chunk(x, 3, 0);  // ceil(7/3) = 3: 3, 3, 1
  REQUIRE(ch.size() == 3);
  CHECK(ch[2].sizes() == Shape{1, 4});
  CHECK(iota({6}, dev).chunk(4).size() == 3);  // ceil(6/4) = 2: fewer chunks, as in PyTorch
  CHECK(iota({0}, dev).chunk(2).size() == 1);

  CHECK_THROWS_AS(x.split(0), ValueError);
  CHECK_THROWS_AS(x.split(2, 2), IndexError);
  CHECK_THROWS_WITH(x.split(std::vector<int64_t>{3, 3}), Catch::Contains("split") && Catch::Contains("[3, 3]") &&
                                                            Catch::Contains("7"));
  CHECK_THROWS_AS(x.split(std::vector<int64_t>{8, -1}), ValueError);
  CHECK_THROWS_AS(x.chunk(0), ValueError);
  CHECK_THROWS_AS(ones({}, dev).split(1), ShapeError);
}

TEST_CASE("cat joins strided inputs with type promotion, below and above the inline grain") {
  Device dev = device_under_test();
  for (int64_t n : {5, 40000}) {
    INFO("n=" << n << " on " << dev);
    Tensor a_ref = iota({2, n}, Device("cpu", 0));
    Tensor b_ref = arange(0, double(3 * n)).to(kInt32).view({n, 3}).transpose(0, 1);  // [3, n], strided
    Tensor a = a_ref.to(dev), b = b_ref.to(dev);
    Tensor got = cat({a, b}, 0);
    CHECK(got.dtype() == kFloat32);
    CHECK(got.sizes() == Shape{5, n});
    CHECK(max_abs_diff(got, cat({a_ref, b_ref}, 0)) == 0);
    auto v = got.to_vector<double>();
    for (int64_t c = 0; c < n; c += (n > 100 ? 997 : 1)) {
      REQUIRE(v[size_t(c)] == double(c));
      REQUIRE(v[size_t(n + c)] == double(n + c));
      for (int r = 0; r < 3; ++r) REQUIRE(v[size_t((2 + r) * n + c)] == double(c * 3 + r));
    }
    // Along a negative dim, with a float64 input: promotes to float64.
    Tensor c = cat({a.transpose(0, 1), b.to(kFloat64).transpose(0, 1)}, -1);
    CHECK(c.dtype() == kFloat64);
    CHECK(c.sizes() == Shape{n, 5});
    CHECK(max_abs_diff(c, got.transpose(0, 1)) == 0);
  }
  // Legacy empty 1-D inputs are skipped; all-empty gives [0].
  Tensor e = zeros({0}, dev);
  CHECK(cat({e, iota({2, 2}, dev), e}, 1).sizes() == Shape{2, 2});
  CHECK(cat({e, e}).sizes() == Shape{0});
  CHECK(cat({iota({2, 0}, dev), iota({2, 3}, dev)}, 1).sizes() == Shape{2, 3});
}

TEST_CASE("stack adds a dim") {
  Device dev = device_under_test();
  Tensor a = iota({2, 3}, dev), b = add(iota({2, 3}, dev), 10.0);
  Tensor s = stack({a, b}, 1);
  CHECK(s.sizes() == Shape{2, 2, 3});
  CHECK(max_abs_diff(s.select(1, 0), a) == 0);
  CHECK(max_abs_diff(s.select(1, 1), b) == 0);
  CHECK(stack({a, b}, -1).sizes() == Shape{2, 3, 2});
  CHECK(stack({a, b}).sizes() == Shape{2, 2, 3});
  CHECK(stack({ones({}, dev), zeros({}, dev)}).sizes() == Shape{2});
  CHECK_THROWS_AS(stack({a, b}, 3), IndexError);
  CHECK_THROWS_WITH(stack({a, iota({3, 2}, dev)}), Catch::Contains("stack") && Catch::Contains("[2, 3]") &&
                                                       Catch::Contains("[3, 2]"));
  CHECK_THROWS_AS(stack({}), ValueError);
}

TEST_CASE("cat errors name the op, the argument and the shapes") {
  Device dev = device_under_test();
  Tensor a = iota({2, 3}, dev);
  CHECK_THROWS_AS(cat({}), ValueError);
  CHECK_THROWS_AS(cat({a, Tensor()}), ValueError);
  CHECK_THROWS_AS(cat({a, a}, 2), IndexError);
  CHECK_THROWS_AS(cat({ones({}, dev)}), ShapeError);
  try {
    (void)cat({a, a, iota({4, 2}, dev)}, 0);
    FAIL("no throw");
  } catch (const ShapeError& e) {
    std::string m = e.what();
    CHECK(m.find("cat") != std::string::npos);
    CHECK(m.find("[2, 3]") != std::string::npos);
    CHECK(m.find("tensors[2]") != std::string::npos);
    CHECK(m.find("[4, 2]") != std::string::npos);
  }
  CHECK_THROWS_AS(cat({a, iota({2, 3, 1}, dev)}), ShapeError);
  if (!dev.is_cpu()) {
    try {
      (void)cat({a, a, iota({2, 3}, Device("cpu", 0))}, 0);
      FAIL("no throw");
    } catch (const DeviceMismatch& e) {
      std::string m = e.what();
      CHECK(m.find("tensors[2]") != std::string::npos);
      CHECK(m.find("cat") != std::string::npos);
      CHECK(m.find(dev.str()) != std::string::npos);
    }
  }
}
