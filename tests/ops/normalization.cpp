// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// batch_norm / layer_norm / group_norm and their backward formulas on the
// device under test, against float64 loops, the CPU reference and finite
// differences.
#include <catch2/catch.hpp>
#include <cmath>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;

namespace {

std::vector<double> pseudo(size_t n, uint32_t seed) { return vnn::test::lcg_values(n, seed, 99u, -1.0, 2.0); }

double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

}  // namespace

TEST_CASE("batch_norm training and eval match float64 loops") {
  Device dev = device_under_test();
  for (int64_t HW : {3, 100}) {  // 4*6*100*100 elements: above the inline grain
    int64_t N = 4, C = 6, H = HW, W = HW;
    INFO("HW " << HW << " on " << dev);
    auto xv = pseudo(size_t(N * C * H * W), 1), wv = pseudo(size_t(C), 2), bv = pseudo(size_t(C), 3);
    Tensor x = from_vector(xv, {N, C, H, W}).to(dev), w = from_vector(wv, {C}).to(dev), b = from_vector(bv, {C}).to(dev);
    Tensor rm = zeros({C}, TensorOptions(kFloat64).with(dev)), rv = ones({C}, TensorOptions(kFloat64).with(dev));
    auto [out, sm, si] = batch_norm(x, w, b, rm, rv, true, 0.1, 1e-5);
    auto [bm, bvar] = batch_norm_stats(x);
    int64_t M = N * H * W;
    std::vector<double> mean(size_t(C), 0), var(size_t(C), 0), want(xv.size());
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < H * W; ++i) mean[size_t(c)] += xv[size_t((n * C + c) * H * W + i)];
      mean[size_t(c)] /= double(M);
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < H * W; ++i) {
          double d = xv[size_t((n * C + c) * H * W + i)] - mean[size_t(c)];
          var[size_t(c)] += d * d;
        }
      var[size_t(c)] /= double(M);
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < H * W; ++i) {
          size_t k = size_t((n * C + c) * H * W + i);
          want[k] = (xv[k] - mean[size_t(c)]) / std::sqrt(var[size_t(c)] + 1e-5) * wv[size_t(c)] + bv[size_t(c)];
        }
    }
    CHECK(max_diff(out.to_vector<double>(), want) < 1e-10);
    CHECK(max_diff(bm.to_vector<double>(), mean) < 1e-12);
    CHECK(max_diff(bvar.to_vector<double>(), var) < 1e-12);
    auto rmv = rm.to_vector<double>(), rvv = rv.to_vector<double>();
    for (int64_t c = 0; c < C; ++c) {
      CHECK(rmv[size_t(c)] == Approx(0.1 * mean[size_t(c)]));
      CHECK(rvv[size_t(c)] == Approx(0.9 + 0.1 * var[size_t(c)] * double(M) / double(M - 1)));
    }
    // Eval uses the running statistics.
    auto [eo, em, ei] = batch_norm(x, w, b, rm, rv, false, 0.1, 1e-5);
    auto eov = eo.to_vector<double>();
    for (size_t k = 0; k < xv.size(); k += 97) {
      size_t c = (k / size_t(H * W)) % size_t(C);
      REQUIRE(eov[k] == Approx((xv[k] - rmv[c]) / std::sqrt(rvv[c] + 1e-5) * wv[c] + bv[c]));
    }
    // float32 device against the CPU reference.
    Tensor x32 = x.to(kFloat32);
    auto [o32, m32, i32] = batch_norm(x32, w.to(kFloat32), b.to(kFloat32), Tensor(), Tensor(), true);
    auto [r32, rm32, ri32] = batch_norm(x32.cpu(), w.cpu().to(kFloat32), b.cpu().to(kFloat32), Tensor(), Tensor(), true);
    CHECK(max_abs_diff(o32, r32) < 1e-4);
  }
}

TEST_CASE("normalization backward formulas match finite differences") {
  Device dev = device_under_test();
  int64_t N = 3, C = 4, H = 3, W = 2;
  Tensor x = from_vector(pseudo(size_t(N * C * H * W), 4), {N, C, H, W});
  Tensor w = from_vector(pseudo(size_t(C), 5), {C}), b = from_vector(pseudo(size_t(C), 6), {C});
  Tensor r = from_vector(pseudo(size_t(x.numel()), 7), x.sizes());
  const double h = 1e-6;
  auto fd = [&](const Tensor& t, int64_t i, auto&& loss) {
    auto vp = t.to_vector<double>(), vm = vp;
    vp[size_t(i)] += h;
    vm[size_t(i)] -= h;
    return (loss(from_vector(vp, t.sizes())) - loss(from_vector(vm, t.sizes()))) / (2 * h);
  };
  for (bool training : {true, false}) {
    INFO("batch_norm training " << training << " on " << dev);
    Tensor rm = from_vector(pseudo(size_t(C), 8), {C}), rv = add(abs(from_vector(pseudo(size_t(C), 9), {C})), 0.5);
    auto bn = [&](const Tensor& xx, const Tensor& ww, const Tensor& bb) {
      return std::get<0>(batch_norm(xx, ww, bb, training ? Tensor() : rm, training ? Tensor() : rv, training));
    };
    auto [out, sm, si] = batch_norm(x.to(dev), w.to(dev), b.to(dev), training ? Tensor() : rm.to(dev),
                                    training ? Tensor() : rv.to(dev), training);
    auto [gx, gw, gb] = batch_norm_backward(r.to(dev), x.to(dev), w.to(dev), sm, si, training);
    REQUIRE(gx.device() == dev);
    auto gxv = gx.to_vector<double>(), gwv = gw.to_vector<double>(), gbv = gb.to_vector<double>();
    for (int64_t i = 0; i < x.numel(); i += 5)
      REQUIRE(gxv[size_t(i)] == Approx(fd(x, i, [&](const Tensor& t) { return sum(mul(bn(t, w, b), r)).item(); })).margin(1e-6));
    for (int64_t i = 0; i < C; ++i) {
      REQUIRE(gwv[size_t(i)] == Approx(fd(w, i, [&](const Tensor& t) { return sum(mul(bn(x, t, b), r)).item(); })).margin(1e-6));
      REQUIRE(gbv[size_t(i)] == Approx(fd(b, i, [&](const Tensor& t) { return sum(mul(bn(x, w, t), r)).item(); })).margin(1e-6));
    }
  }
  {
    INFO("layer_norm on " << dev);
    Shape ns{H, W};
    Tensor lw = from_vector(pseudo(size_t(H * W), 10), ns), lb = from_vector(pseudo(size_t(H * W), 11), ns);
    auto ln = [&](const Tensor& xx, const Tensor& ww, const Tensor& bb) { return std::get<0>(layer_norm(xx, ns, ww, bb)); };
    auto [out, m, rs] = layer_norm(x.to(dev), ns, lw.to(dev), lb.to(dev));
    REQUIRE(m.sizes() == Shape{N, C, 1, 1});
    auto [gx, gw, gb] = layer_norm_backward(r.to(dev), x.to(dev), ns, m, rs, lw.to(dev));
    auto gxv = gx.to_vector<double>(), gwv = gw.to_vector<double>(), gbv = gb.to_vector<double>();
    for (int64_t i = 0; i < x.numel(); i += 5)
      REQUIRE(gxv[size_t(i)] == Approx(fd(x, i, [&](const Tensor& t) { return sum(mul(ln(t, lw, lb), r)).item(); })).margin(1e-6));
    for (int64_t i = 0; i < H * W; ++i) {
      REQUIRE(gwv[size_t(i)] == Approx(fd(lw, i, [&](const Tensor& t) { return sum(mul(ln(x, t, lb), r)).item(); })).margin(1e-6));
      REQUIRE(gbv[size_t(i)] == Approx(fd(lb, i, [&](const Tensor& t) { return sum(mul(ln(x, lw, t), r)).item(); })).margin(1e-6));
    }
  }
}

TEST_CASE("layer_norm and group_norm forward match float64 loops") {
  Device dev = device_under_test();
  int64_t N = 3, C = 6, L = 5;
  auto xv = pseudo(size_t(N * C * L), 12), wv = pseudo(size_t(C), 13), bv = pseudo(size_t(C), 14);
  // Non-contiguous input: stored [N, L, C], viewed [N, C, L].
  Tensor x = from_vector(xv, {N, L, C}).to(dev).transpose(1, 2);
  auto xa = [&](int64_t n, int64_t c, int64_t l) { return xv[size_t((n * L + l) * C + c)]; };
  for (int64_t G : {1, 2, 3, 6}) {
    INFO("group_norm G " << G << " on " << dev);
    auto [out, m, rs] = group_norm(x, G, from_vector(wv, {C}).to(dev), from_vector(bv, {C}).to(dev), 1e-5);
    REQUIRE(m.sizes() == Shape{N, G});
    auto ov = out.to_vector<double>();
    int64_t cg = C / G;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t g = 0; g < G; ++g) {
        double s = 0, ss = 0;
        for (int64_t c = g * cg; c < (g + 1) * cg; ++c)
          for (int64_t l = 0; l < L; ++l) s += xa(n, c, l);
        double mu = s / double(cg * L);
        for (int64_t c = g * cg; c < (g + 1) * cg; ++c)
          for (int64_t l = 0; l < L; ++l) ss += (xa(n, c, l) - mu) * (xa(n, c, l) - mu);
        double rstd = 1.0 / std::sqrt(ss / double(cg * L) + 1e-5);
        for (int64_t c = g * cg; c < (g + 1) * cg; ++c)
          for (int64_t l = 0; l < L; ++l)
            REQUIRE(ov[size_t((n * C + c) * L + l)] ==
                    Approx((xa(n, c, l) - mu) * rstd * wv[size_t(c)] + bv[size_t(c)]).margin(1e-10));
      }
  }
  auto [lo, lm, lr] = layer_norm(x, Shape{L});
  auto lov = lo.to_vector<double>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      double s = 0, ss = 0;
      for (int64_t l = 0; l < L; ++l) s += xa(n, c, l);
      double mu = s / double(L);
      for (int64_t l = 0; l < L; ++l) ss += (xa(n, c, l) - mu) * (xa(n, c, l) - mu);
      for (int64_t l = 0; l < L; ++l)
        REQUIRE(lov[size_t((n * C + c) * L + l)] == Approx((xa(n, c, l) - mu) / std::sqrt(ss / double(L) + 1e-5)).margin(1e-10));
    }
}

TEST_CASE("layer_norm in float32 over rows of 128 (the CPU's fused LAYER_NORM) matches float64 loops") {
  // [37, 5, 128]: 185 rows, blocks of 64 rows for dw / db and a remainder; with and without weight and bias,
  // and a row-strided input (a narrow of a wider tensor).
  Device dev = device_under_test();
  const int64_t A = 37, B = 5, D = 128, R = A * B;
  auto xv = pseudo(size_t(R * (D + 3)), 21), gv = pseudo(size_t(R * D), 22), wv = pseudo(size_t(D), 23),
       bv = pseudo(size_t(D), 24);
  Tensor wide = from_vector(xv, {A, B, D + 3}).to(dev).to(kFloat32);
  Tensor x = wide.narrow(2, 2, D);
  Tensor g = from_vector(gv, {A, B, D}).to(dev).to(kFloat32);
  Tensor w = from_vector(wv, {D}).to(dev).to(kFloat32), b = from_vector(bv, {D}).to(dev).to(kFloat32);
  auto xs = x.contiguous().to_vector<double>(), gs = g.to_vector<double>();
  for (bool affine : {true, false}) {
    INFO((affine ? "weight and bias" : "no weight") << " on " << dev);
    auto [y, m, rs] = affine ? layer_norm(x, Shape{D}, w, b) : layer_norm(x, Shape{D});
    REQUIRE(m.sizes() == Shape{A, B, 1});
    auto [gx, gw, gb] = layer_norm_backward(g, x, Shape{D}, m, rs, affine ? w : Tensor());
    REQUIRE(gw.defined() == affine);
    auto yv = y.to_vector<double>(), gxv = gx.to_vector<double>();
    std::vector<double> gw_ref(size_t(D), 0.0), gb_ref(size_t(D), 0.0);
    for (int64_t r = 0; r < R; ++r) {
      const double* xr = xs.data() + r * D;
      const double* gr = gs.data() + r * D;
      double mu = 0, var = 0, sa = 0, sc = 0;
      for (int64_t j = 0; j < D; ++j) mu += xr[j] / double(D);
      for (int64_t j = 0; j < D; ++j) var += (xr[j] - mu) * (xr[j] - mu) / double(D);
      const double rstd = 1.0 / std::sqrt(var + 1e-5);
      for (int64_t j = 0; j < D; ++j) {
        const double xh = (xr[j] - mu) * rstd, gh = gr[j] * (affine ? wv[size_t(j)] : 1.0);
        sa += gh / double(D), sc += gh * xh / double(D);
        gw_ref[size_t(j)] += gr[j] * xh, gb_ref[size_t(j)] += gr[j];
        REQUIRE(yv[size_t(r * D + j)] == Approx(affine ? xh * wv[size_t(j)] + bv[size_t(j)] : xh).margin(2e-5));
      }
      for (int64_t j = 0; j < D; ++j) {
        const double xh = (xr[j] - mu) * rstd, gh = gr[j] * (affine ? wv[size_t(j)] : 1.0);
        REQUIRE(gxv[size_t(r * D + j)] == Approx((gh - sa - xh * sc) * rstd).margin(2e-4));
      }
    }
    if (affine) {
      auto gwv = gw.to_vector<double>(), gbv = gb.to_vector<double>();
      for (int64_t j = 0; j < D; ++j) {
        REQUIRE(gwv[size_t(j)] == Approx(gw_ref[size_t(j)]).margin(1e-3));
        REQUIRE(gbv[size_t(j)] == Approx(gb_ref[size_t(j)]).margin(1e-3));
      }
    }
  }
}

TEST_CASE("normalization rejects bad shapes and arguments") {
  Device dev = device_under_test();
  Tensor x = zeros({2, 4, 3}, dev);
  CHECK_THROWS_AS(batch_norm(x, zeros({3}, dev), Tensor(), Tensor(), Tensor(), true), ShapeError);
  CHECK_THROWS_AS(batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), false), ValueError);
  CHECK_THROWS_AS(batch_norm(zeros({1, 4}, dev), Tensor(), Tensor(), Tensor(), Tensor(), true), ValueError);
  CHECK_THROWS_AS(batch_norm(x.to(kInt32), Tensor(), Tensor(), Tensor(), Tensor(), true), DTypeError);
  CHECK_THROWS_AS(layer_norm(x, Shape{4}), ShapeError);
  CHECK_THROWS_AS(layer_norm(x, Shape{3}, zeros({4}, dev)), ShapeError);
  CHECK_THROWS_AS(group_norm(x, 3), ValueError);
  CHECK_THROWS_AS(batch_norm_stats(zeros({4}, dev)), ShapeError);
}
