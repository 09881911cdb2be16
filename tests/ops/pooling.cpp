// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Pooling on the device under test against plain float64 loops and the CPU
// reference: values, int64 indices and the gather-based backward passes.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;
using vnn::test::reference_device;

namespace {

std::vector<double> pseudo(size_t n, uint32_t seed) { return vnn::test::lcg_values(n, seed, 7u, -2.0, 2.0); }

struct P {
  int64_t N, C, H, W, k, s, p, d;
};

const std::vector<P> kCases = {{2, 3, 7, 6, 2, 2, 0, 1}, {2, 3, 7, 7, 3, 2, 1, 1}, {1, 2, 9, 8, 3, 1, 1, 2},
                               {1, 2, 5, 5, 3, 1, 0, 1}, {4, 16, 40, 40, 3, 2, 1, 1},   // > inline grain
                               // unpadded: the branch-free max path (CNN's 2x2 / 2, a dilated one, one above
                               // the inline grain)
                               {1, 2, 9, 8, 2, 2, 0, 2}, {8, 16, 40, 40, 2, 2, 0, 1},
                               // 2x2 / 2 with an odd height and width: rows and columns no window covers
                               {2, 3, 7, 7, 2, 2, 0, 1}};

int64_t osz(int64_t n, const P& c) { return (n + 2 * c.p - c.d * (c.k - 1) - 1) / c.s + 1; }

}  // namespace

TEST_CASE("max_pool2d values, indices and backward match float64 loops") {
  Device dev = device_under_test();
  for (const P& c : kCases) {
    INFO("N" << c.N << " C" << c.C << " " << c.H << "x" << c.W << " k" << c.k << " s" << c.s << " p" << c.p << " d"
              << c.d << " on " << dev);
    auto xv = pseudo(size_t(c.N * c.C * c.H * c.W), 1);
    int64_t OH = osz(c.H, c), OW = osz(c.W, c);
    // x_ref is [N, C, W, H] transposed: non-contiguous, values at [n, c, h, w] = xv[(n, c, w, h)].
    auto at = [&](int64_t n, int64_t ch, int64_t h, int64_t w) { return xv[size_t(((n * c.C + ch) * c.W + w) * c.H + h)]; };
    Tensor x_ref = from_vector(xv, {c.N, c.C, c.W, c.H}).transpose(2, 3);
    REQUIRE_FALSE(x_ref.is_contiguous());
    // Strided input (the generic paths) and the same values contiguous (the
    // unit-stride 2x2 / 2 path).
    for (bool contiguous : {false, true})
    for (DType t : {kFloat32, kFloat64}) {
      INFO((contiguous ? "contiguous " : "strided ") << name(t));
      Tensor x = from_vector(xv, {c.N, c.C, c.W, c.H}).to(t).to(dev).transpose(2, 3);
      if (contiguous) x = x.contiguous();
      auto [y, idx] = max_pool2d_with_indices(x, c.k, c.s, c.p, c.d);
      REQUIRE(y.sizes() == Shape{c.N, c.C, OH, OW});
      REQUIRE(idx.dtype() == kInt64);
      auto yv = y.to_vector<double>();
      auto iv = idx.to_vector<int64_t>();
      for (int64_t n = 0; n < c.N; ++n)
        for (int64_t ch = 0; ch < c.C; ++ch)
          for (int64_t oh = 0; oh < OH; ++oh)
            for (int64_t ow = 0; ow < OW; ++ow) {
              double best = -std::numeric_limits<double>::infinity();
              int64_t arg = -1;
              for (int64_t a = 0; a < c.k; ++a)
                for (int64_t b = 0; b < c.k; ++b) {
                  int64_t h = oh * c.s - c.p + a * c.d, w = ow * c.s - c.p + b * c.d;
                  if (h < 0 || h >= c.H || w < 0 || w >= c.W) continue;
                  double v = t == kFloat32 ? double(float(at(n, ch, h, w))) : at(n, ch, h, w);
                  if (arg < 0 || v > best) best = v, arg = h * c.W + w;
                }
              size_t o = size_t(((n * c.C + ch) * OH + oh) * OW + ow);
              REQUIRE(yv[o] == best);
              REQUIRE(iv[o] == arg);
            }
      auto [yr, ir] = max_pool2d_with_indices(x_ref.to(t), c.k, c.s, c.p, c.d);
      CHECK(max_abs_diff(y, yr) == 0);
      CHECK(max_abs_diff(idx, ir) == 0);
      // Backward: grad_in[p] = sum of grad_out over outputs whose argmax is p.
      auto gv = pseudo(size_t(y.numel()), 2);
      Tensor gy = from_vector(gv, y.sizes()).to(t);
      Tensor gx = max_pool2d_backward(gy.to(dev), x, idx, c.k, c.s, c.p, c.d);
      std::vector<double> want(size_t(c.N * c.C * c.H * c.W), 0.0);
      for (size_t o = 0; o < iv.size(); ++o) {
        size_t plane = o / size_t(OH * OW);
        want[plane * size_t(c.H * c.W) + size_t(iv[o])] += t == kFloat32 ? double(float(gv[o])) : gv[o];
      }
      auto gxv = gx.to_vector<double>();
      for (size_t i = 0; i < want.size(); ++i) REQUIRE(gxv[i] == Approx(want[i]).margin(1e-5));
      CHECK(max_abs_diff(gx, max_pool2d_backward(gy, x_ref.to(t), ir, c.k, c.s, c.p, c.d)) < 1e-5);
    }
  }
}

// NaN wins (PyTorch's rule): a window holding NaN yields NaN, its index
// that of the last NaN scanned; a NaN maximum is not displaced by a later
// larger number. Contiguous input, padded (checked path) and unpadded.
TEST_CASE("max_pool2d propagates NaN like the float64 rule") {
  Device dev = device_under_test();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const int64_t N = 2, C = 3, H = 8, W = 8;
  auto xv = pseudo(size_t(N * C * H * W), 5);
  for (size_t i = 0; i < xv.size(); i += 7) xv[i] = nan;  // some windows hold one NaN, some two
  for (auto [k, p] : {std::pair<int64_t, int64_t>{3, 0}, {3, 1}, {2, 0}}) {  // {2, 0}: the unit-stride 2x2 / 2 path
    const int64_t s = 2, OH = (H + 2 * p - k) / s + 1, OW = (W + 2 * p - k) / s + 1;
    for (DType t : {kFloat32, kFloat64}) {
      INFO("kernel " << k << " padding " << p << " " << name(t) << " on " << dev);
      Tensor x = from_vector(xv, {N, C, H, W}).to(t).to(dev);
      auto [y, idx] = max_pool2d_with_indices(x, k, s, p, 1);
      auto yv = y.to_vector<double>();
      auto iv = idx.to_vector<int64_t>();
      int64_t nan_windows = 0;
      for (int64_t pl = 0; pl < N * C; ++pl)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            double best = 0;
            int64_t arg = -1;
            for (int64_t a = 0; a < k; ++a)
              for (int64_t b = 0; b < k; ++b) {
                int64_t h = oh * s - p + a, w = ow * s - p + b;
                if (h < 0 || h >= H || w < 0 || w >= W) continue;
                double v = xv[size_t((pl * H + h) * W + w)];
                if (arg < 0 || v > best || std::isnan(v)) best = v, arg = h * W + w;
              }
            size_t o = size_t((pl * OH + oh) * OW + ow);
            REQUIRE(iv[o] == arg);
            if (std::isnan(best)) {
              ++nan_windows;
              REQUIRE(std::isnan(yv[o]));
            } else {
              REQUIRE(yv[o] == (t == kFloat32 ? double(float(best)) : best));
            }
          }
      REQUIRE(nan_windows > 0);
    }
  }
}

// Indices that name no pixel of their own window (negative, past the plane,
// a neighbouring window's pixel) route nothing: the disjoint 2x2 / 2 case
// (scatter path) and an overlapping one (gather path), both above the
// inline grain.
TEST_CASE("max_pool2d_backward ignores indices outside their window") {
  Device dev = device_under_test();
  for (P c : {P{8, 16, 40, 40, 2, 2, 0, 1}, P{4, 16, 40, 40, 3, 2, 1, 1}}) {
    INFO("k" << c.k << " s" << c.s << " p" << c.p << " on " << dev);
    const int64_t OH = osz(c.H, c), OW = osz(c.W, c), HW = c.H * c.W;
    Tensor x = from_vector(pseudo(size_t(c.N * c.C * HW), 3), {c.N, c.C, c.H, c.W});
    auto iv = std::get<1>(max_pool2d_with_indices(x, c.k, c.s, c.p, c.d)).to_vector<int64_t>();
    for (size_t o = 0; o < iv.size(); o += 5) iv[o] = (o / 5) % 3 == 0 ? -1 : (o / 5) % 3 == 1 ? HW + 3 : iv[o] + 2 * c.W;
    Tensor idx = from_vector(iv, {c.N, c.C, OH, OW});
    auto gv = pseudo(iv.size(), 4);
    std::vector<double> want(size_t(c.N * c.C * HW), 0.0);
    for (size_t o = 0; o < iv.size(); ++o) {
      int64_t oh = int64_t(o) / OW % OH, ow = int64_t(o) % OW, at = iv[o];
      int64_t h = at >= 0 ? at / c.W : -1, w = at >= 0 ? at % c.W : -1;
      bool in_window = at >= 0 && at < HW && h >= oh * c.s - c.p && h < oh * c.s - c.p + c.k &&
                       w >= ow * c.s - c.p && w < ow * c.s - c.p + c.k;
      if (in_window) want[o / size_t(OH * OW) * size_t(HW) + size_t(at)] += gv[o];
    }
    for (DType t : {kFloat32, kFloat64}) {
      Tensor gy = from_vector(gv, {c.N, c.C, OH, OW}).to(t);
      Tensor gx = max_pool2d_backward(gy.to(dev), x.to(t).to(dev), idx.to(dev), c.k, c.s, c.p, c.d);
      auto gxv = gx.to_vector<double>();
      for (size_t i = 0; i < want.size(); ++i) REQUIRE(gxv[i] == Approx(want[i]).margin(1e-5));
      CHECK(max_abs_diff(gx, max_pool2d_backward(gy, x.to(t), idx, c.k, c.s, c.p, c.d)) < 1e-5);
    }
  }
}

TEST_CASE("avg_pool2d and its backward match float64 loops") {
  Device dev = device_under_test();
  for (const P& c : kCases) {
    if (c.d != 1) continue;  // avg pooling has no dilation
    for (bool cip : {true, false})
      for (int64_t div : {0, 5}) {
        INFO("N" << c.N << " " << c.H << "x" << c.W << " k" << c.k << " s" << c.s << " p" << c.p << " cip " << cip
                  << " div " << div << " on " << dev);
        auto xv = pseudo(size_t(c.N * c.C * c.H * c.W), 3);
        Tensor x_ref = from_vector(xv, {c.N, c.C, c.H, c.W});
        Tensor x = x_ref.to(dev);
        Tensor y = avg_pool2d(x, c.k, c.s, c.p, cip, div);
        int64_t OH = osz(c.H, c), OW = osz(c.W, c);
        REQUIRE(y.sizes() == Shape{c.N, c.C, OH, OW});
        auto gv = pseudo(size_t(y.numel()), 4);
        std::vector<double> want_y(size_t(y.numel())), want_gx(xv.size(), 0.0);
        for (int64_t pl = 0; pl < c.N * c.C; ++pl)
          for (int64_t oh = 0; oh < OH; ++oh)
            for (int64_t ow = 0; ow < OW; ++ow) {
              int64_t hs = oh * c.s - c.p, ws = ow * c.s - c.p;
              int64_t he = std::min(hs + c.k, c.H + c.p), we = std::min(ws + c.k, c.W + c.p);
              int64_t padded = (he - hs) * (we - ws);
              double s = 0;
              int64_t cnt = 0;
              for (int64_t h = std::max<int64_t>(hs, 0); h < std::min(hs + c.k, c.H); ++h)
                for (int64_t w = std::max<int64_t>(ws, 0); w < std::min(ws + c.k, c.W); ++w) s += xv[size_t((pl * c.H + h) * c.W + w)], ++cnt;
              double dv = div ? double(div) : cip ? double(padded) : double(cnt);
              size_t o = size_t((pl * OH + oh) * OW + ow);
              want_y[o] = s / dv;
              for (int64_t h = std::max<int64_t>(hs, 0); h < std::min(hs + c.k, c.H); ++h)
                for (int64_t w = std::max<int64_t>(ws, 0); w < std::min(ws + c.k, c.W); ++w)
                  want_gx[size_t((pl * c.H + h) * c.W + w)] += gv[o] / dv;
            }
        auto yv = y.to_vector<double>();
        for (size_t i = 0; i < yv.size(); ++i) REQUIRE(yv[i] == Approx(want_y[i]).margin(1e-5));
        CHECK(max_abs_diff(y, avg_pool2d(x_ref, c.k, c.s, c.p, cip, div)) < 1e-6);
        Tensor gy = from_vector(gv, y.sizes());
        Tensor gx = avg_pool2d_backward(gy.to(dev).transpose(2, 3).contiguous().transpose(2, 3), x, c.k, c.s, c.p, cip, div);
        auto gxv = gx.to_vector<double>();
        for (size_t i = 0; i < gxv.size(); ++i) REQUIRE(gxv[i] == Approx(want_gx[i]).margin(1e-5));
        CHECK(max_abs_diff(gx, avg_pool2d_backward(gy, x_ref, c.k, c.s, c.p, cip, div)) < 1e-6);
      }
  }
}

TEST_CASE("adaptive pooling matches float64 loops and its gradients sum right") {
  Device dev = device_under_test();
  struct A { int64_t H, W, OH, OW; };
  for (A a : {A{7, 7, 3, 3}, A{10, 6, 4, 5}, A{5, 5, 7, 8}, A{6, 6, 1, 1}, A{64, 64, 5, 7}}) {
    INFO(a.H << "x" << a.W << " -> " << a.OH << "x" << a.OW << " on " << dev);
    int64_t N = 2, C = 5;
    auto xv = pseudo(size_t(N * C * a.H * a.W), 5);
    Tensor x_ref = from_vector(xv, {N, C, a.H, a.W}).to(kFloat64);
    Tensor x = x_ref.to(dev);
    Tensor y = adaptive_avg_pool2d(x, Size2(a.OH, a.OW));
    auto [ym, im] = adaptive_max_pool2d(x, Size2(a.OH, a.OW));
    auto yv = y.to_vector<double>(), ymv = ym.to_vector<double>();
    auto imv = im.to_vector<int64_t>();
    auto gv = pseudo(size_t(y.numel()), 6);
    std::vector<double> want_gx(xv.size(), 0.0);
    for (int64_t pl = 0; pl < N * C; ++pl)
      for (int64_t oh = 0; oh < a.OH; ++oh)
        for (int64_t ow = 0; ow < a.OW; ++ow) {
          int64_t h0 = oh * a.H / a.OH, h1 = ((oh + 1) * a.H + a.OH - 1) / a.OH;
          int64_t w0 = ow * a.W / a.OW, w1 = ((ow + 1) * a.W + a.OW - 1) / a.OW;
          double s = 0, best = -1e300;
          int64_t arg = -1;
          for (int64_t h = h0; h < h1; ++h)
            for (int64_t w = w0; w < w1; ++w) {
              double v = xv[size_t((pl * a.H + h) * a.W + w)];
              s += v;
              if (arg < 0 || v > best) best = v, arg = h * a.W + w;
            }
          size_t o = size_t((pl * a.OH + oh) * a.OW + ow);
          double cnt = double((h1 - h0) * (w1 - w0));
          REQUIRE(yv[o] == Approx(s / cnt).margin(1e-12));
          REQUIRE(ymv[o] == best);
          REQUIRE(imv[o] == arg);
          for (int64_t h = h0; h < h1; ++h)
            for (int64_t w = w0; w < w1; ++w) want_gx[size_t((pl * a.H + h) * a.W + w)] += gv[o] / cnt;
        }
    Tensor gy = from_vector(gv, y.sizes()).to(dev);
    auto gxv = adaptive_avg_pool2d_backward(gy, x).to_vector<double>();
    for (size_t i = 0; i < gxv.size(); ++i) REQUIRE(gxv[i] == Approx(want_gx[i]).margin(1e-12));
    Tensor gm = adaptive_max_pool2d_backward(gy, x, im);
    CHECK(max_abs_diff(gm, adaptive_max_pool2d_backward(gy.to(reference_device()), x_ref, im.to(reference_device()))) == 0);
    CHECK(sum(gm).item() == Approx(sum(gy).item()));
  }
}

TEST_CASE("pooling rejects bad arguments") {
  Device dev = device_under_test();
  Tensor x = zeros({1, 2, 6, 6}, dev);
  CHECK_THROWS_AS(max_pool2d(zeros({2, 6, 6}, dev), 2), ShapeError);
  CHECK_THROWS_AS(max_pool2d(x, 0), ValueError);
  CHECK_THROWS_AS(max_pool2d(x, 2, 1, 2), ValueError);  // padding above half the kernel
  CHECK_THROWS_AS(max_pool2d(x, 7), ShapeError);
  CHECK_THROWS_AS(max_pool2d(x.to(kInt64), 2), DTypeError);
  CHECK_THROWS_AS(avg_pool2d(x, 2, 2, 0, true, -1), ValueError);
  CHECK_THROWS_AS(adaptive_avg_pool2d(x, 0), ValueError);
  auto [y, idx] = max_pool2d_with_indices(x, 2);
  CHECK_THROWS_AS(max_pool2d_backward(zeros({1, 2, 2, 2}, dev), x, idx, 2), ShapeError);
  CHECK_THROWS_AS(max_pool2d_backward(y, x, idx.to(kInt32), 2), ShapeError);
  try {
    avg_pool2d_backward(zeros({1, 2, 4, 4}, dev), x, 2);
    FAIL("no error");
  } catch (const ShapeError& e) {
    CHECK(std::string(e.what()).find("[1, 2, 3, 3]") != std::string::npos);
  }
  if (dev != reference_device()) CHECK_THROWS_AS(max_pool2d_backward(y.cpu(), x, idx, 2), DeviceMismatch);
}
