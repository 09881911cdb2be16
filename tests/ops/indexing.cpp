// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// index_select, gather, scatter(_add), index_add, one_hot and embedding on
// the device under test, checked against the CPU reference and naive loops,
// with strided inputs, negative dims, duplicate indices and every error.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;

namespace {

Device cpu() { return Device("cpu", 0); }

// Deterministic pseudo-random values and indices.
std::vector<float> values(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float((i * 7919) % 1000) / 100.f - 5.f;
  return v;
}
std::vector<int64_t> indices(int64_t n, int64_t bound, int64_t salt = 1) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = (i * 2654435761LL + salt * 40503LL) % bound;
  return v;
}

}  // namespace

TEST_CASE("index_select matches loops on strided inputs, below and above the inline grain") {
  Device dev = device_under_test();
  for (int64_t rows : {6, 20000}) {
    INFO("rows=" << rows << " on " << dev);
    const int64_t cols = 3;
    auto xv = values(rows * cols);
    // x is [cols, rows] viewed transposed: a strided [rows, cols] tensor.
    Tensor x_ref = from_vector(xv, {cols, rows}).transpose(0, 1);
    Tensor x = from_vector(xv, {cols, rows}, dev).transpose(0, 1);
    auto iv = indices(rows + 1, rows);
    Tensor i_ref = from_vector(iv, {int64_t(iv.size())});
    Tensor got = index_select(x, 0, i_ref.to(dev));
    CHECK(got.sizes() == Shape{rows + 1, cols});
    CHECK(max_abs_diff(got, index_select(x_ref, 0, i_ref)) == 0);
    auto g = got.to_vector<double>();
    for (size_t r = 0; r < iv.size(); ++r)
      for (int64_t c = 0; c < cols; ++c)
        REQUIRE(g[r * cols + size_t(c)] == double(xv[size_t(c * rows + iv[r])]));
    // Along the last (negative) dim with an int32, strided index.
    Tensor idx32 = from_vector(std::vector<int32_t>{2, 0, 9, 0, 1, 9}, {3, 2}, dev).select(1, 0);  // {2, 9, 1}
    Tensor cg = index_select(x, -1, idx32.narrow(0, 0, 1));
    CHECK(cg.sizes() == Shape{rows, 1});
    CHECK(max_abs_diff(cg, x.narrow(1, 2, 1)) == 0);
  }
  // Other dtypes, and 0-D forms.
  Tensor b = from_vector(std::vector<bool>{true, false, true}, {3}, dev);
  CHECK(index_select(b, 0, from_vector(std::vector<int64_t>{1, 1, 0}, {3}, dev)).to_vector<bool>() ==
        std::vector<bool>{false, false, true});
  Tensor h = from_vector(std::vector<float>{1.5f, -2.f}, {2}, dev).to(kFloat16);
  CHECK(index_select(h, 0, full({}, 1, TensorOptions(dev).with(kInt64))).to_vector<float>() ==
        std::vector<float>{-2.f});
  // A 0-D self takes one index and gives a 0-D result, as PyTorch's.
  Tensor s = full({}, 7, dev);
  CHECK(index_select(s, 0, zeros({1}, TensorOptions(dev).with(kInt64))).sizes() == Shape{});
  CHECK(index_select(s, 0, zeros({1}, TensorOptions(dev).with(kInt64))).item() == 7.0);
  CHECK_THROWS_AS(index_select(s, 0, zeros({2}, TensorOptions(dev).with(kInt64))), IndexError);
}

TEST_CASE("gather matches loops, with negative dims and a strided source") {
  Device dev = device_under_test();
  for (int64_t n : {4, 20000}) {
    INFO("n=" << n << " on " << dev);
    const int64_t m = 5;
    auto xv = values(n * m);
    Tensor x_ref = from_vector(xv, {m, n}).transpose(0, 1);  // [n, m], strided
    Tensor x = x_ref.to(dev).transpose(0, 1).contiguous().transpose(0, 1);
    auto iv = indices(n * 3, m, 7);
    Tensor i_ref = from_vector(iv, {n, 3});
    Tensor got = gather(x, -1, i_ref.to(dev));
    CHECK(got.sizes() == Shape{n, 3});
    CHECK(max_abs_diff(got, gather(x_ref, 1, i_ref)) == 0);
    auto g = got.to_vector<double>();
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < 3; ++c)
        REQUIRE(g[size_t(r * 3 + c)] == double(xv[size_t(iv[size_t(r * 3 + c)] * n + r)]));
  }
  // Along dim 0, index smaller than the input in the other dim; int64 data.
  Tensor t = arange(0, 12, 1, TensorOptions(dev).with(kInt64)).view({3, 4});
  Tensor gi = from_vector(std::vector<int64_t>{2, 0, 1, 1, 0, 2}, {2, 3}, dev);
  CHECK(gather(t, 0, gi).to_vector<int64_t>() == std::vector<int64_t>{8, 1, 6, 4, 1, 10});
  CHECK(gather(full({}, 3, dev), 0, zeros({}, TensorOptions(dev).with(kInt64))).item() == 3);
}

TEST_CASE("scatter and scatter_add match loops; duplicates sum under scatter_add") {
  Device dev = device_under_test();
  for (int64_t n : {8, 40000}) {
    INFO("n=" << n << " on " << dev);
    const int64_t bins = 7;  // n updates into 7 slots: many duplicates
    auto sv = values(n * 2);
    auto iv = indices(n * 2, bins, 3);
    for (DType dt : {kFloat32, kFloat64, kInt32, kInt64, kFloat16}) {
      INFO("dtype " << name(dt));
      Tensor src_ref = from_vector(sv, {2, n}).to(dt).transpose(0, 1);  // [n, 2], strided
      Tensor idx_ref = from_vector(iv, {n, 2});
      Tensor self_ref = ones({bins, 2}).to(dt);
      Tensor got = scatter_add(self_ref.to(dev), 0, idx_ref.to(dev), src_ref.to(dev));
      Tensor want = scatter_add(self_ref, 0, idx_ref, src_ref);
      CHECK(got.dtype() == dt);
      std::vector<double> loop(size_t(bins * 2), 1.0);
      auto sd = src_ref.to_vector<double>();
      for (int64_t r = 0; r < n; ++r)
        for (int64_t c = 0; c < 2; ++c) loop[size_t(iv[size_t(r * 2 + c)] * 2 + c)] += sd[size_t(r * 2 + c)];
      auto gv = got.to_vector<double>(), wv = want.to_vector<double>();
      // float32 sums run in any order; float16 rounds each addition.
      double tol = dt == kFloat16 ? 1e9 : dt == kFloat32 ? 1e-5 * double(n) : 1e-9;
      for (size_t k = 0; k < loop.size(); ++k) {
        REQUIRE(std::fabs(gv[k] - loop[k]) <= tol);
        REQUIRE(std::fabs(wv[k] - loop[k]) <= tol);
      }
      if (dt == kFloat16) CHECK(max_abs_diff(got, want) <= 0.05 * double(n));
    }
  }
  // scatter (set) without duplicates: a permutation along dim 1.
  Tensor self = zeros({2, 4}, dev);
  Tensor idx = from_vector(std::vector<int64_t>{3, 0, 2, 1, 1, 2, 0, 3}, {2, 4}, dev);
  Tensor src = arange(0.0, 8, 1, dev).view({2, 4});
  Tensor s = scatter(self, -1, idx, src);
  CHECK(s.to_vector<float>() == std::vector<float>{1, 3, 2, 0, 6, 4, 5, 7});
  CHECK(self.to_vector<float>() == std::vector<float>(8, 0.f));  // out of place
  // In place into a strided (transposed) self, index smaller than src.
  Tensor base = zeros({4, 2}, dev);
  Tensor tv = base.transpose(0, 1);
  scatter_(tv, 1, idx.narrow(1, 0, 2), src);
  // tv[0][3] = 0, tv[0][0] = 1, tv[1][1] = 4, tv[1][2] = 5 land at base[j][i].
  CHECK(base.to_vector<float>() == std::vector<float>{1, 0, 0, 4, 0, 5, 0, 0});
  // Duplicates under set: one of the written values lands.
  Tensor dup = scatter(zeros({3}, dev), 0, zeros({4}, TensorOptions(dev).with(kInt64)), arange(1.0, 5, 1, dev));
  float d0 = dup.to_vector<float>()[0];
  CHECK((d0 >= 1.f && d0 <= 4.f && d0 == float(int(d0))));
  // bool and uint8 selves: set copies bits; add computes in int64.
  Tensor bs = scatter(zeros({3}, TensorOptions(dev).with(kBool)), 0, from_vector(std::vector<int64_t>{2}, {1}, dev),
                      ones({1}, TensorOptions(dev).with(kBool)));
  CHECK(bs.to_vector<bool>() == std::vector<bool>{false, false, true});
  Tensor u8 = scatter_add(zeros({2}, TensorOptions(dev).with(kUInt8)), 0,
                          from_vector(std::vector<int64_t>{1, 1, 1}, {3}, dev), full({3}, 2, TensorOptions(dev).with(kUInt8)));
  CHECK(u8.to_vector<int64_t>() == std::vector<int64_t>{0, 6});
}

TEST_CASE("index_add matches loops with duplicates, alpha and strided operands") {
  Device dev = device_under_test();
  for (int64_t n : {10, 50000}) {
    INFO("n=" << n << " on " << dev);
    const int64_t rows = 5, width = 3;
    auto sv = values(n * width);
    auto iv = indices(n, rows, 11);
    for (DType dt : {kFloat32, kFloat64, kInt64, kInt32, kBFloat16}) {
      INFO("dtype " << name(dt));
      Tensor src_ref = from_vector(sv, {width, n}).to(dt).transpose(0, 1);  // [n, width], strided
      Tensor idx_ref = from_vector(iv, {n});
      Tensor self_ref = full({width, rows}, 2.0).to(dt).transpose(0, 1);  // [rows, width], strided
      double alpha = 2.0;
      Tensor want = index_add(self_ref, 0, idx_ref, src_ref, alpha);
      Tensor self = self_ref.to(dev).transpose(0, 1).contiguous().transpose(0, 1);
      index_add_(self, -2, idx_ref.to(dev).to(kInt32), src_ref.to(dev), alpha);
      std::vector<double> loop(size_t(rows * width), 2.0);
      auto sd = src_ref.to_vector<double>();
      for (int64_t r = 0; r < n; ++r)
        for (int64_t c = 0; c < width; ++c) loop[size_t(iv[size_t(r)] * width + c)] += alpha * sd[size_t(r * width + c)];
      auto gv = self.to_vector<double>(), wv = want.to_vector<double>();
      double tol = dt == kBFloat16 ? 1e9 : dt == kFloat32 ? 1e-5 * double(n) : 1e-9;
      for (size_t k = 0; k < loop.size(); ++k) {
        REQUIRE(std::fabs(gv[k] - loop[k]) <= tol);
        REQUIRE(std::fabs(wv[k] - loop[k]) <= tol);
      }
      if (dt == kBFloat16) CHECK(max_abs_diff(self, want) <= 0.05 * double(n) * 10);
    }
  }
  // Contiguous rows along dim 0, the embedding gradient's shape (the CPU's row-owner path): [2048, 40] into
  // [96, 40], duplicates everywhere, and a row-strided out (a narrow of a wider table).
  {
    const int64_t n = 2048, rows = 96, width = 40;
    auto sv = values(n * width);
    auto iv = indices(n, rows, 7);
    for (DType dt : {kFloat32, kFloat64, kInt32}) {
      INFO("contiguous rows, dtype " << name(dt) << " on " << dev);
      Tensor table = full({rows, width + 5}, 1.0).to(dt).to(dev);
      Tensor self = table.narrow(1, 2, width);
      index_add_(self, 0, from_vector(iv, {n}).to(dev), from_vector(sv, {n, width}).to(dt).to(dev), 3.0);
      std::vector<double> loop(size_t(rows * width), 1.0);
      auto sd = from_vector(sv, {n, width}).to(dt).to_vector<double>();
      for (int64_t r = 0; r < n; ++r)
        for (int64_t c = 0; c < width; ++c) loop[size_t(iv[size_t(r)] * width + c)] += 3.0 * sd[size_t(r * width + c)];
      auto gv = self.contiguous().to_vector<double>();
      for (size_t k = 0; k < loop.size(); ++k) REQUIRE(std::fabs(gv[k] - loop[k]) <= (dt == kFloat32 ? 1e-3 : 1e-9));
      CHECK(sum(table.narrow(1, 0, 2).to(kFloat64)).item<double>() == 2.0 * double(rows));  // untouched columns
    }
  }
  // Along dim 1.
  Tensor s = zeros({2, 3}, dev);
  index_add_(s, 1, from_vector(std::vector<int64_t>{2, 2}, {2}, dev), ones({2, 2}, dev), 0.5);
  CHECK(s.to_vector<float>() == std::vector<float>{0, 0, 1, 0, 0, 1});
}

TEST_CASE("one_hot and embedding") {
  Device dev = device_under_test();
  Tensor labels = from_vector(std::vector<int64_t>{2, 0, 1, 2}, {2, 2}, dev);
  Tensor oh = one_hot(labels);
  CHECK(oh.dtype() == kInt64);
  CHECK(oh.sizes() == Shape{2, 2, 3});
  CHECK(oh.to_vector<int64_t>() == std::vector<int64_t>{0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1});
  CHECK(one_hot(labels.to(kInt32), 5).sizes() == Shape{2, 2, 5});
  CHECK(one_hot(zeros({0}, TensorOptions(dev).with(kInt64)), 4).sizes() == Shape{0, 4});
  CHECK(max_abs_diff(one_hot(labels.to(cpu()), 4), one_hot(labels, 4)) == 0);

  for (int64_t n : {6, 40000}) {
    INFO("n=" << n << " on " << dev);
    const int64_t vocab = 9, width = 4;
    auto wv = values(vocab * width);
    Tensor w_ref = from_vector(wv, {vocab, width});
    auto iv = indices(n, vocab, 5);
    Tensor i_ref = from_vector(iv, {n / 2, 2});
    Tensor e = embedding(w_ref.to(dev), i_ref.to(dev));
    CHECK(e.sizes() == Shape{n / 2, 2, width});
    CHECK(max_abs_diff(e, embedding(w_ref, i_ref)) == 0);
    auto ev = e.to_vector<double>();
    for (int64_t k = 0; k < n; k += (n > 100 ? 331 : 1))
      for (int64_t c = 0; c < width; ++c) REQUIRE(ev[size_t(k * width + c)] == double(wv[size_t(iv[size_t(k)] * width + c)]));
    // Backward: rows sum over repeated indices.
    Tensor grad_ref = from_vector(values(n * width), {n / 2, 2, width});
    Tensor gw = embedding_backward(grad_ref.to(dev), i_ref.to(dev), vocab);
    CHECK(gw.sizes() == Shape{vocab, width});
    std::vector<double> loop(size_t(vocab * width), 0.0);
    auto gd = grad_ref.to_vector<double>();
    for (int64_t k = 0; k < n; ++k)
      for (int64_t c = 0; c < width; ++c) loop[size_t(iv[size_t(k)] * width + c)] += gd[size_t(k * width + c)];
    auto got = gw.to_vector<double>();
    for (size_t k = 0; k < loop.size(); ++k) REQUIRE(std::fabs(got[k] - loop[k]) <= 1e-5 * double(n));
    CHECK(max_abs_diff(gw, embedding_backward(grad_ref, i_ref, vocab)) <= 1e-5 * double(n));
  }
}

TEST_CASE("indexing errors name the op, the bad value and the size") {
  Device dev = device_under_test();
  TensorOptions i64 = TensorOptions(dev).with(kInt64);
  Tensor x = ones({3, 4}, dev);
  Tensor bad = from_vector(std::vector<int64_t>{0, 3}, {2}, dev);
  Tensor neg = from_vector(std::vector<int64_t>{-1}, {1}, dev);
  CHECK_THROWS_AS(index_select(x, 0, bad), IndexError);
  CHECK_THROWS_WITH(index_select(x, 0, bad), Catch::Contains("index_select") && Catch::Contains("3") &&
                                                 Catch::Contains("size 3"));
  CHECK_THROWS_WITH(index_select(x, 1, neg), Catch::Contains("-1") && Catch::Contains("size 4"));
  CHECK_THROWS_AS(index_select(x, 0, ones({2}, dev)), DTypeError);
  CHECK_THROWS_WITH(index_select(x, 0, ones({2}, dev)), Catch::Contains("index_select") && Catch::Contains("float32"));
  CHECK_THROWS_AS(index_select(x, 0, zeros({1, 1}, i64)), ShapeError);
  CHECK_THROWS_AS(index_select(x, 2, zeros({1}, i64)), IndexError);
  CHECK_THROWS_AS(index_select(x, 0, Tensor()), ValueError);

  CHECK_THROWS_WITH(gather(x, 1, full({3, 2}, 4, i64)), Catch::Contains("gather") && Catch::Contains("4") &&
                                                           Catch::Contains("size 4"));
  CHECK_THROWS_AS(gather(x, 1, zeros({3}, i64)), ShapeError);
  CHECK_THROWS_WITH(gather(x, 1, zeros({4, 2}, i64)), Catch::Contains("[4, 2]") && Catch::Contains("[3, 4]"));
  CHECK_THROWS_AS(gather(x, 0, zeros({1, 1}, TensorOptions(dev).with(kUInt8))), DTypeError);

  Tensor self = zeros({3, 4}, dev);
  CHECK_THROWS_WITH(scatter_(self, 0, full({1, 4}, 5, i64), ones({1, 4}, dev)),
                    Catch::Contains("scatter_") && Catch::Contains("5") && Catch::Contains("size 3"));
  CHECK_THROWS_AS(scatter_add_(self, 0, full({1, 4}, -2, i64), ones({1, 4}, dev)), IndexError);
  CHECK_THROWS_AS(scatter_add(self, 0, zeros({2, 4}, i64), ones({1, 4}, dev)), ShapeError);  // index > src
  CHECK_THROWS_AS(scatter(self, 0, zeros({1, 5}, i64), ones({1, 5}, dev)), ShapeError);     // index > self
  CHECK_THROWS_AS(scatter(self, 0, zeros({4}, i64), ones({4}, dev)), ShapeError);           // ranks
  CHECK_THROWS_WITH(scatter(self, 0, zeros({1, 4}, i64), ones({1, 4}, TensorOptions(dev).with(kFloat64))),
                    Catch::Contains("float32") && Catch::Contains("float64"));
  Tensor expanded = zeros({1, 4}, dev).expand({3, 4});
  CHECK_THROWS_AS(scatter_(expanded, 0, zeros({1, 4}, i64), ones({1, 4}, dev)), ValueError);
  CHECK(self.to_vector<float>() == std::vector<float>(12, 0.f));  // nothing was written

  CHECK_THROWS_WITH(index_add_(self, 1, from_vector(std::vector<int64_t>{4}, {1}, dev), ones({3, 1}, dev)),
                    Catch::Contains("index_add_") && Catch::Contains("4") && Catch::Contains("size 4"));
  CHECK_THROWS_AS(index_add(self, 1, zeros({2}, i64), ones({3, 1}, dev)), ShapeError);
  CHECK_THROWS_AS(index_add(self, 1, zeros({1, 1}, i64), ones({3, 1}, dev)), ShapeError);
  CHECK_THROWS_AS(index_add(zeros({2}, i64), 0, zeros({1}, i64), ones({1}, i64), 0.5), ValueError);
  CHECK_THROWS_AS(index_add(self, 0, zeros({1}, i64), ones({1, 4}, TensorOptions(dev).with(kInt32))), DTypeError);
  CHECK(self.to_vector<float>() == std::vector<float>(12, 0.f));

  CHECK_THROWS_WITH(one_hot(from_vector(std::vector<int64_t>{0, 3}, {2}, dev), 3),
                    Catch::Contains("one_hot") && Catch::Contains("3"));
  CHECK_THROWS_AS(one_hot(neg), IndexError);
  CHECK_THROWS_AS(one_hot(ones({2}, dev)), DTypeError);
  CHECK_THROWS_AS(one_hot(zeros({0}, i64)), ValueError);
  CHECK_THROWS_AS(one_hot(zeros({1}, i64), -3), ValueError);

  CHECK_THROWS_WITH(embedding(x, from_vector(std::vector<int64_t>{1, 3}, {2}, dev)),
                    Catch::Contains("embedding") && Catch::Contains("3") && Catch::Contains("size 3"));
  CHECK_THROWS_AS(embedding(ones({3}, dev), zeros({1}, i64)), ShapeError);
  CHECK_THROWS_AS(embedding_backward(ones({2, 4}, dev), zeros({3}, i64), 3), ShapeError);
  CHECK_THROWS_AS(embedding_backward(ones({1, 4}, dev), full({1}, 3, i64), 3), IndexError);
  CHECK_THROWS_AS(embedding_backward(ones({1, 4}, dev), zeros({1}, i64), -1), ValueError);

  if (!dev.is_cpu()) {
    Tensor host_idx = zeros({1}, TensorOptions(cpu()).with(kInt64));
    CHECK_THROWS_AS(index_select(x, 0, host_idx), DeviceMismatch);
    CHECK_THROWS_WITH(gather(x, 0, zeros({1, 1}, TensorOptions(cpu()).with(kInt64))),
                      Catch::Contains("index") && Catch::Contains("gather"));
    CHECK_THROWS_WITH(scatter_add_(self, 0, zeros({1, 4}, i64), ones({1, 4})),
                      Catch::Contains("src") && Catch::Contains("scatter_add_"));
    CHECK_THROWS_AS(index_add_(self, 0, host_idx, ones({1, 4}, dev)), DeviceMismatch);
  }
}
