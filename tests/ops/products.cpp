// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn/products.h on the device under test: outer, inner, kron, tensordot,
// einsum, cross, cdist, cov and corrcoef against plain host loops; bad
// input (each error type, its message naming the op); float64
// finite-difference gradients.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"
#include "support/op_checks.hpp"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::check_error;
using vnn::test::max_abs_diff;

namespace {

std::vector<double> host(const Tensor& t) { return t.to_vector<double>(); }
// Deterministic float64 values in [-1, 1) of the given shape on the device under test.
Tensor values(const Shape& shape, uint32_t salt) {
  return from_vector(vnn::test::lcg_values(size_t(shape.numel()), 5, salt, -1.0, 1.0), shape, device_under_test());
}
Tensor doubles(const std::vector<double>& v, const Shape& s) { return from_vector(v, s, device_under_test()); }

// gradcheck with fresh leaves of the given values.
void check_grad(const char* name, const std::function<Tensor(const std::vector<Tensor>&)>& f,
                std::vector<Tensor> inputs) {
  for (Tensor& t : inputs) t = t.detach().clone().requires_grad_();
  vnn::test::check_grad(name, f, inputs);
}

// A plain matrix product of row-major host values: [n, k] x [k, m].
std::vector<double> host_mm(const std::vector<double>& a, const std::vector<double>& b, int64_t n, int64_t k,
                            int64_t m) {
  std::vector<double> c(size_t(n * m), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j)
      for (int64_t p = 0; p < k; ++p) c[size_t(i * m + j)] += a[size_t(i * k + p)] * b[size_t(p * m + j)];
  return c;
}

double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

}  // namespace

TEST_CASE("outer, inner, kron and tensordot against host loops") {
  Tensor a = doubles({1, 2, 3}, {3}), b = doubles({4, 5}, {2});
  Tensor o = outer(a, b);
  REQUIRE(o.sizes() == Shape{3, 2});
  CHECK(host(o) == std::vector<double>{4, 5, 8, 10, 12, 15});
  CHECK(max_abs_diff(a.ger(b), o) == 0);
  CHECK(outer(a, from_vector(std::vector<int32_t>{1, 2}, {2}, device_under_test())).dtype() == kFloat64);

  Tensor x = values({2, 3, 4}, 1), y = values({5, 4}, 2);
  Tensor in = inner(x, y);
  REQUIRE(in.sizes() == Shape{2, 3, 5});
  CHECK(max_diff(host(in), host_mm(host(x), host(y.t().contiguous()), 6, 4, 5)) < 1e-12);
  CHECK(host(inner(doubles({2}, {}), a)) == std::vector<double>{2, 4, 6});
  CHECK(x.inner(y).sizes() == Shape{2, 3, 5});

  Tensor k1 = doubles({1, 2, 3, 4}, {2, 2}), k2 = doubles({0, 1, 1, 0, 2, 2}, {2, 3});
  Tensor kr = kron(k1, k2);
  REQUIRE(kr.sizes() == Shape{4, 6});
  std::vector<double> kv = host(kr), v1 = host(k1), v2 = host(k2);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 6; ++j)
      CHECK(kv[size_t(i * 6 + j)] == v1[size_t((i / 2) * 2 + j / 3)] * v2[size_t((i % 2) * 3 + j % 3)]);
  CHECK(kron(a, k1).sizes() == Shape{2, 6});

  Tensor p = values({3, 4, 5}, 3), q = values({4, 5, 2}, 4);
  Tensor td = tensordot(p, q, 2);
  REQUIRE(td.sizes() == Shape{3, 2});
  CHECK(max_diff(host(td), host_mm(host(p), host(q), 3, 20, 2)) < 1e-12);
  Tensor td2 = tensordot(p, q, {1, 2}, {0, 1});
  CHECK(max_abs_diff(td, td2) < 1e-12);
  Tensor tdt = tensordot(q, p, {0, 1}, {1, 2});  // [2, 3]: the transpose
  CHECK(max_abs_diff(tdt, td.t()) < 1e-12);
  CHECK(tensordot(a, b, 0).sizes() == Shape{3, 2});
  // A contracted size-1 dim broadcasts against a longer one (the longer one summed first).
  Tensor col = values({3, 1}, 8), wide = values({2, 4}, 9);
  CHECK(max_abs_diff(tensordot(col, wide, {1}, {0}), outer(col.view({3}), wide.sum(0))) < 1e-12);
  Tensor u8a = from_vector(std::vector<uint8_t>{200, 100, 3, 4}, {2, 2}, device_under_test());
  Tensor u8 = tensordot(u8a, u8a, 1);  // [[200*200 + 100*3, ...]] mod 256
  CHECK(u8.dtype() == kUInt8);
  CHECK(host(u8) == std::vector<double>{double((200 * 200 + 100 * 3) % 256), double((200 * 100 + 100 * 4) % 256),
                                       double((3 * 200 + 4 * 3) % 256), double((3 * 100 + 4 * 4) % 256)});
  CHECK(max_abs_diff(einsum("ij,jk->ik", {u8a, u8a}), u8) == 0);
  CHECK(tensordot(values({2, 0}, 5), values({0, 3}, 6), 1).sizes() == Shape{2, 3});
  CHECK(host(tensordot(values({2, 0}, 5), values({0, 3}, 6), 1)) == std::vector<double>(6, 0.0));

  check_error<ShapeError>([&] { outer(k1, a); }, "outer");
  check_error<ShapeError>([&] { inner(a, b); }, "inner");
  check_error<ShapeError>([&] { kron(values({1, 1, 1, 1, 1}, 7), a); }, "kron");
  check_error<ShapeError>([&] { tensordot(p, q, {0}, {0}); }, "tensordot");
  check_error<ValueError>([&] { tensordot(p, q, {0, 1}, {0}); }, "tensordot");
  check_error<ValueError>([&] { tensordot(p, q, -1); }, "tensordot");
  check_error<ShapeError>([&] { tensordot(a, b, 2); }, "tensordot");
  check_error<IndexError>([&] { tensordot(p, q, {3}, {0}); }, "tensordot");
}

TEST_CASE("einsum: explicit and implicit output, diagonals, traces, ellipsis and broadcasting") {
  Tensor a = values({3, 4}, 11), b = values({4, 5}, 12), c = values({5, 2}, 13);
  std::vector<double> ab = host_mm(host(a), host(b), 3, 4, 5);
  CHECK(max_diff(host(einsum("ij,jk->ik", {a, b})), ab) < 1e-12);
  CHECK(max_diff(host(einsum("ij,jk", {a, b})), ab) < 1e-12);  // implicit: ik
  CHECK(max_diff(host(einsum("ij , jk -> ki", {a, b})), host(einsum("ij,jk->ik", {a, b}).t().contiguous())) < 1e-12);
  CHECK(max_diff(host(einsum("ij,jk,kl->il", {a, b, c})), host_mm(ab, host(c), 3, 5, 2)) < 1e-12);
  CHECK(max_abs_diff(einsum("ij->ji", {a}), a.t()) == 0);
  CHECK(std::abs(einsum("ij->", {a}).item() - a.sum().item()) < 1e-12);
  CHECK(max_abs_diff(einsum("ij->j", {a}), a.sum(0)) < 1e-12);

  Tensor sq = values({4, 4}, 14);
  std::vector<double> sv = host(sq);
  double tr = 0;
  for (int i = 0; i < 4; ++i) tr += sv[size_t(i * 5)];
  CHECK(std::abs(einsum("ii", {sq}).item() - tr) < 1e-12);
  CHECK(host(einsum("ii->i", {sq})) == std::vector<double>{sv[0], sv[5], sv[10], sv[15]});
  Tensor cube = values({3, 3, 3}, 15);
  std::vector<double> cv = host(cube);
  CHECK(host(einsum("iii->i", {cube})) == std::vector<double>{cv[0], cv[13], cv[26]});

  Tensor u = values({3}, 16), w = values({4}, 17);
  CHECK(max_abs_diff(einsum("i,j->ij", {u, w}), outer(u, w)) < 1e-12);
  CHECK(std::abs(einsum("i,i", {u, u}).item() - (u * u).sum().item()) < 1e-12);
  // Implicit output order is alphabetical: "ba" over [3] x [4] gives "ab" = [4, 3].
  CHECK(einsum("b,a", {u, w}).sizes() == Shape{4, 3});

  Tensor bx = values({2, 3, 4}, 18), by = values({2, 4, 5}, 19);
  Tensor bm = einsum("bij,bjk->bik", {bx, by});
  REQUIRE(bm.sizes() == Shape{2, 3, 5});
  CHECK(max_abs_diff(bm, bmm(bx, by)) < 1e-12);
  CHECK(max_abs_diff(einsum("...ij,...jk->...ik", {bx, by}), bm) < 1e-12);
  CHECK(max_abs_diff(einsum("...ij,...jk", {bx, by}), bm) < 1e-12);
  // The ellipsis broadcasts: [2, 3, 4] against [4, 5] (no batch dim).
  Tensor bc = einsum("...ij,jk->...ik", {bx, b});
  CHECK(max_abs_diff(bc, matmul(bx, b)) < 1e-12);
  // Size-1 dims broadcast: [1, 3, 4] with [2, 4, 5].
  Tensor one = values({1, 3, 4}, 20);
  CHECK(max_abs_diff(einsum("bij,bjk->bik", {one, by}), matmul(one, by)) < 1e-12);
  CHECK(max_abs_diff(einsum("i...->...i", {bx}), bx.permute({1, 2, 0})) == 0);
  // Batched diagonal and a label summed from one side only.
  Tensor bd = einsum("bii->bi", {values({2, 3, 3}, 21)});
  CHECK(bd.sizes() == Shape{2, 3});
  CHECK(max_abs_diff(einsum("ij,kl->ik", {a, b}), outer(a.sum(1), b.sum(1))) < 1e-12);
  CHECK(einsum("ij,jk->ik", {values({3, 0}, 22), values({0, 2}, 23)}).sizes() == Shape{3, 2});
  CHECK(host(einsum("ij,jk->ik", {values({3, 0}, 22), values({0, 2}, 23)})) == std::vector<double>(6, 0.0));

  check_error<ValueError>([&] { einsum("ij,jk->ik", {a}); }, "einsum");
  check_error<ShapeError>([&] { einsum("ijk->i", {a}); }, "einsum");
  check_error<ShapeError>([&] { einsum("ij,jk->ik", {a, a}); }, "einsum");
  check_error<ValueError>([&] { einsum("ij->iz", {a}); }, "einsum");
  check_error<ValueError>([&] { einsum("ij->ii", {a}); }, "einsum");
  check_error<ValueError>([&] { einsum("i1->i", {a}); }, "einsum");
  check_error<ValueError>([&] { einsum("i..j->i", {a}); }, "einsum");
  check_error<ShapeError>([&] { einsum("ii->i", {a}); }, "einsum");
  check_error<ShapeError>([&] { einsum("abcde,efghi->a", {values({1, 1, 1, 1, 1}, 1), values({1, 1, 1, 1, 1}, 2)}); },
                          "einsum");
}

TEST_CASE("cross, cdist, cov and corrcoef against host loops") {
  Tensor a = values({4, 3}, 31), b = values({4, 3}, 32);
  std::vector<double> av = host(a), bv = host(b), cv = host(cross(a, b));
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t i = 0; i < 3; ++i) {
      auto A = [&](int64_t j) { return av[size_t(r * 3 + (i + j) % 3)]; };
      auto B = [&](int64_t j) { return bv[size_t(r * 3 + (i + j) % 3)]; };
      CHECK(std::abs(cv[size_t(r * 3 + i)] - (A(1) * B(2) - A(2) * B(1))) < 1e-12);
    }
  CHECK(max_abs_diff(linalg_cross(a, b), cross(a, b)) == 0);
  CHECK(max_abs_diff(linalg_cross(a.t(), b.t(), 0), cross(a, b).t()) < 1e-15);
  CHECK(max_abs_diff(a.cross(b, 1), cross(a, b)) == 0);
  CHECK(linalg_cross(values({2, 1, 3}, 33), values({1, 5, 3}, 34)).sizes() == Shape{2, 5, 3});

  for (int64_t rows : {4, 30}) {  // the broadcast path and the matmul expansion
    Tensor x1 = values({2, rows, 3}, 35), x2 = values({2, 5, 3}, 36);
    std::vector<double> v1 = host(x1), v2 = host(x2);
    for (double p : {0.0, 1.0, 2.0, 3.0, double(INFINITY)}) {
      if (rows == 30 && p != 2.0) continue;
      std::vector<double> d = host(cdist(x1, x2, p));
      REQUIRE(d.size() == size_t(2 * rows * 5));
      for (int64_t bt = 0; bt < 2; ++bt)
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < 5; ++j) {
            double acc = 0;
            for (int64_t k = 0; k < 3; ++k) {
              double diff = std::abs(v1[size_t((bt * rows + i) * 3 + k)] - v2[size_t((bt * 5 + j) * 3 + k)]);
              if (p == 0) acc += diff != 0;
              else if (std::isinf(p)) acc = std::max(acc, diff);
              else acc += std::pow(diff, p);
            }
            if (p != 0 && !std::isinf(p)) acc = std::pow(acc, 1.0 / p);
            CHECK(std::abs(d[size_t((bt * rows + i) * 5 + j)] - acc) < 1e-9);
          }
    }
  }
  CHECK(cdist(values({3, 2}, 37), values({4, 2}, 38)).sizes() == Shape{3, 4});
  // compute_mode 1 (matmul) and 2 (differences) agree with the default.
  Tensor c1 = values({30, 4}, 49), c2 = values({6, 4}, 50);
  CHECK(max_abs_diff(cdist(c1, c2, 2.0, 1), cdist(c1, c2, 2.0, 2)) < 1e-12);
  CHECK(max_abs_diff(cdist(c2, c2, 2.0, 1), cdist(c2, c2)) < 1e-7);  // sqrt of the 1e-30 floor on the diagonal

  Tensor obs = values({3, 6}, 39);
  std::vector<double> ov = host(obs);
  auto host_cov = [&](const std::vector<double>& w, int64_t correction, const std::vector<double>& aw) {
    // Weighted mean and the normalisation of torch.cov.
    std::vector<double> out(9);
    double wsum = 0, wa = 0;
    for (size_t k = 0; k < 6; ++k) {
      wsum += w[k];
      wa += w[k] * aw[k];
    }
    std::vector<double> mean(3, 0);
    for (size_t r = 0; r < 3; ++r) {
      for (size_t k = 0; k < 6; ++k) mean[r] += ov[r * 6 + k] * w[k];
      mean[r] /= wsum;
    }
    double norm = wsum - double(correction) * wa / wsum;
    for (size_t r = 0; r < 3; ++r)
      for (size_t s = 0; s < 3; ++s) {
        double acc = 0;
        for (size_t k = 0; k < 6; ++k) acc += (ov[r * 6 + k] - mean[r]) * (ov[s * 6 + k] - mean[s]) * w[k];
        out[r * 3 + s] = acc / norm;
      }
    return out;
  };
  std::vector<double> ones6(6, 1.0);
  // Unweighted: norm = N - correction (wa / wsum = 1 with unit weights).
  CHECK(max_diff(host(cov(obs)), host_cov(ones6, 1, ones6)) < 1e-12);
  CHECK(max_diff(host(obs.cov(0)), host_cov(ones6, 0, ones6)) < 1e-12);
  std::vector<int64_t> fw = {1, 2, 1, 3, 1, 2};
  std::vector<double> aw = {0.5, 1.0, 2.0, 0.25, 1.5, 1.0}, w(6);
  for (size_t k = 0; k < 6; ++k) w[k] = double(fw[k]) * aw[k];
  Tensor fwt = from_vector(fw, {6}, device_under_test()), awt = doubles(aw, {6});
  CHECK(max_diff(host(cov(obs, 1, fwt, awt)), host_cov(w, 1, aw)) < 1e-12);
  std::vector<double> wf(fw.begin(), fw.end());
  // fweights alone: norm = sum(w) - correction, which host_cov gives with aw = 1.
  CHECK(max_diff(host(cov(obs, 1, fwt)), host_cov(wf, 1, ones6)) < 1e-12);
  CHECK(cov(values({5}, 40)).dim() == 0);
  CHECK(std::isinf(cov(doubles({1.0, 2.0}, {1, 2}), 2).item()));

  std::vector<double> cc = host(corrcoef(obs)), cv3 = host(cov(obs));
  for (size_t r = 0; r < 3; ++r)
    for (size_t s = 0; s < 3; ++s)
      CHECK(std::abs(cc[r * 3 + s] - cv3[r * 3 + s] / std::sqrt(cv3[r * 4] * cv3[s * 4])) < 1e-12);
  CHECK(std::abs(cc[0] - 1.0) < 1e-12);
  CHECK(corrcoef(values({4}, 41)).item() == 1.0);
  CHECK(corrcoef(values({1, 4}, 47)).dim() == 0);  // one variable: 0-D, as PyTorch
  CHECK(cov(values({1, 4}, 48)).dim() == 0);

  Tensor i2 = values({4, 2}, 42);
  check_error<ShapeError>([&] { cross(i2, i2); }, "cross");
  check_error<ShapeError>([&] { linalg_cross(a, i2); }, "linalg_cross");
  check_error<ShapeError>([&] { linalg_cross(a, values({3}, 43)); }, "linalg_cross");
  check_error<IndexError>([&] { linalg_cross(a, b, 2); }, "linalg_cross");
  check_error<ShapeError>([&] { cdist(values({3}, 44), a); }, "cdist");
  check_error<ShapeError>([&] { cdist(a, i2); }, "cdist");
  check_error<ValueError>([&] { cdist(a, b, -1.0); }, "cdist");
  check_error<ValueError>([&] { cdist(a, b, 2.0, 3); }, "cdist");
  check_error<DTypeError>([&] { cdist(a.to(kInt64), b.to(kInt64)); }, "cdist");
  check_error<ShapeError>([&] { cov(values({2, 2, 2}, 45)); }, "cov");
  check_error<ShapeError>([&] { cov(obs, 1, from_vector(std::vector<int64_t>{1, 1}, {2}, device_under_test())); }, "cov");
  check_error<DTypeError>([&] { cov(obs, 1, doubles(aw, {6})); }, "cov");
  check_error<DTypeError>([&] { cov(obs, 1, Tensor(), fwt); }, "cov");
  check_error<ValueError>([&] { cov(obs, 1, Tensor(), doubles({1, -1, 1, 1, 1, 1}, {6})); }, "cov");
  check_error<ShapeError>([&] { corrcoef(values({2, 2, 2}, 46)); }, "corrcoef");
}

TEST_CASE("gradients of the products (float64 finite differences)") {
  Tensor v3 = values({3}, 51), v4 = values({4}, 52), m34 = values({3, 4}, 53), m45 = values({4, 5}, 54);
  check_grad("outer", [](auto& x) { return outer(x[0], x[1]); }, {v3, v4});
  check_grad("inner", [](auto& x) { return inner(x[0], x[1]); }, {m34, values({2, 4}, 55)});
  check_grad("kron", [](auto& x) { return kron(x[0], x[1]); }, {values({2, 2}, 56), values({2, 3}, 57)});
  check_grad("tensordot", [](auto& x) { return tensordot(x[0], x[1], {0}, {1}); }, {m34, values({2, 3}, 58)});
  check_grad("einsum matmul", [](auto& x) { return einsum("ij,jk->ik", {x[0], x[1]}); }, {m34, m45});
  check_grad("einsum trace", [](auto& x) { return einsum("ii", {x[0]}); }, {values({3, 3}, 59)});
  check_grad("einsum batched diagonal", [](auto& x) { return einsum("bii,bi->b", {x[0], x[1]}); },
             {values({2, 3, 3}, 60), values({2, 3}, 61)});
  check_grad("einsum ellipsis", [](auto& x) { return einsum("...ij,jk->...ik", {x[0], x[1]}); },
             {values({2, 3, 4}, 62), m45});
  check_grad("einsum three operands", [](auto& x) { return einsum("i,ij,j->", {x[0], x[1], x[2]}); },
             {v3, m34, v4});
  check_grad("cross", [](auto& x) { return cross(x[0], x[1], 1); }, {values({2, 3}, 63), values({2, 3}, 64)});
  check_grad("cdist p=2", [](auto& x) { return cdist(x[0], x[1]); }, {values({3, 2}, 65), values({4, 2}, 66)});
  check_grad("cdist p=2 matmul", [](auto& x) { return cdist(x[0], x[1]); }, {values({26, 2}, 67), values({2, 2}, 68)});
  check_grad("cdist p=1", [](auto& x) { return cdist(x[0], x[1], 1.0); }, {values({3, 2}, 69), values({4, 2}, 70)});
  check_grad("cdist p=3", [](auto& x) { return cdist(x[0], x[1], 3.0); }, {values({3, 2}, 71), values({4, 2}, 72)});
  check_grad("cov", [](auto& x) { return cov(x[0]); }, {values({3, 5}, 73)});
  check_grad("cov aweights", [](auto& x) { return cov(x[0], 1, Tensor(), abs(x[1]) + 0.5); },
             {values({2, 5}, 74), values({5}, 75)});
  check_grad("corrcoef", [](auto& x) { return corrcoef(x[0]); }, {values({3, 5}, 76)});
}
