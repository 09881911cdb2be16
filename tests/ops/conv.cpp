// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// conv2d and its gradients on the device under test, checked against plain
// float64 loops, the CPU reference device and finite differences.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;
using vnn::test::reference_device;

namespace {

std::vector<double> pseudo(size_t n, uint32_t seed) { return vnn::test::lcg_values(n, seed, 12345u, -1.0, 1.0); }

struct Case {
  int64_t N, C, H, W, O, kh, kw, s, p, d, g;
};

// out[n, o, oh, ow] = b[o] + sum over c in o's group, ki, kj.
std::vector<double> naive_conv(const Case& c, const std::vector<double>& x, const std::vector<double>& w,
                               const std::vector<double>& b, int64_t* OH, int64_t* OW) {
  *OH = (c.H + 2 * c.p - c.d * (c.kh - 1) - 1) / c.s + 1;
  *OW = (c.W + 2 * c.p - c.d * (c.kw - 1) - 1) / c.s + 1;
  int64_t cg = c.C / c.g, og = c.O / c.g;
  std::vector<double> out(size_t(c.N * c.O * *OH * *OW));
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t o = 0; o < c.O; ++o)
      for (int64_t oh = 0; oh < *OH; ++oh)
        for (int64_t ow = 0; ow < *OW; ++ow) {
          double acc = b[size_t(o)];
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t ki = 0; ki < c.kh; ++ki)
              for (int64_t kj = 0; kj < c.kw; ++kj) {
                int64_t h = oh * c.s - c.p + ki * c.d, ww = ow * c.s - c.p + kj * c.d;
                if (h < 0 || h >= c.H || ww < 0 || ww >= c.W) continue;
                int64_t ch = (o / og) * cg + ci;
                acc += x[size_t(((n * c.C + ch) * c.H + h) * c.W + ww)] *
                       w[size_t(((o * cg + ci) * c.kh + ki) * c.kw + kj)];
              }
          out[size_t(((n * c.O + o) * *OH + oh) * *OW + ow)] = acc;
        }
  return out;
}

const std::vector<Case> kCases = {
    {2, 4, 7, 6, 4, 3, 3, 1, 0, 1, 1}, {2, 4, 7, 6, 6, 3, 2, 2, 1, 1, 1}, {1, 4, 9, 9, 4, 3, 3, 1, 2, 2, 1},
    {2, 4, 7, 7, 6, 3, 3, 2, 1, 1, 2}, {2, 4, 6, 6, 4, 3, 3, 1, 1, 1, 4}, {1, 2, 5, 5, 3, 1, 1, 1, 0, 1, 1},
    {4, 8, 32, 32, 8, 3, 3, 1, 1, 1, 1},  // columns above the inline grain
    // Odd planes, a 5x5 and a 3x2 kernel, channel counts of 5 and 6: the
    // last pixel block and the channel blocks of OpenCL's plane kernels.
    {2, 3, 9, 11, 6, 5, 5, 1, 2, 1, 1}, {3, 5, 10, 7, 5, 3, 2, 1, 1, 1, 1},
    // 16 or more output channels: whole 16 x 16 tiles of the OpenCL weight
    // gradient's dy transpose (8 x 8 outputs) and whole and partial ones (7 x 7)
    {2, 3, 8, 8, 32, 3, 3, 1, 1, 1, 1}, {2, 4, 9, 9, 16, 3, 3, 1, 0, 1, 1},
};

std::string label(const Case& c) {
  return "N" + std::to_string(c.N) + " C" + std::to_string(c.C) + " " + std::to_string(c.H) + "x" +
         std::to_string(c.W) + " O" + std::to_string(c.O) + " k" + std::to_string(c.kh) + "x" + std::to_string(c.kw) +
         " s" + std::to_string(c.s) + " p" + std::to_string(c.p) + " d" + std::to_string(c.d) + " g" +
         std::to_string(c.g);
}

}  // namespace

TEST_CASE("conv2d matches a float64 loop and the CPU reference") {
  Device dev = device_under_test();
  for (const Case& c : kCases) {
    INFO(label(c) << " on " << dev);
    auto xv = pseudo(size_t(c.N * c.C * c.H * c.W), 1), wv = pseudo(size_t(c.O * (c.C / c.g) * c.kh * c.kw), 2),
         bv = pseudo(size_t(c.O), 3);
    int64_t OH, OW;
    auto want = naive_conv(c, xv, wv, bv, &OH, &OW);
    // Non-contiguous input: stored NHWC, viewed as NCHW.
    Tensor x_nhwc = from_vector(xv, {c.N, c.C, c.H, c.W}).permute({0, 2, 3, 1}).contiguous();
    Tensor x_ref = x_nhwc.permute({0, 3, 1, 2}).to(kFloat32);
    Tensor w_ref = from_vector(wv, {c.O, c.C / c.g, c.kh, c.kw}).to(kFloat32);
    Tensor b_ref = from_vector(bv, {c.O}).to(kFloat32);
    Tensor x = x_nhwc.to(dev).to(kFloat32).permute({0, 3, 1, 2});
    REQUIRE_FALSE(x.is_contiguous());
    Tensor got = conv2d(x, w_ref.to(dev), b_ref.to(dev), c.s, c.p, c.d, c.g);
    REQUIRE(got.device() == dev);
    REQUIRE(got.sizes() == Shape{c.N, c.O, OH, OW});
    auto g = got.to_vector<double>();
    double err = 0;
    for (size_t i = 0; i < want.size(); ++i) err = std::max(err, std::fabs(g[i] - want[i]));
    CHECK(err < 1e-4);
    CHECK(max_abs_diff(got, conv2d(x_ref, w_ref, b_ref, c.s, c.p, c.d, c.g)) < 1e-4);
    // float64 on the device.
    Tensor g64 = conv2d(x.to(kFloat64), w_ref.to(dev).to(kFloat64), b_ref.to(dev).to(kFloat64), c.s, c.p, c.d, c.g);
    auto g64v = g64.to_vector<double>();
    err = 0;
    for (size_t i = 0; i < want.size(); ++i) err = std::max(err, std::fabs(g64v[i] - want[i]));
    CHECK(err < 1e-10);
  }
}

TEST_CASE("conv2d gradients match finite differences and the CPU reference") {
  Device dev = device_under_test();
  for (const Case& c : kCases) {
    if (c.H > 16) continue;  // finite differences on the small cases only; the large one is compared below
    INFO(label(c) << " on " << dev);
    Tensor x = from_vector(pseudo(size_t(c.N * c.C * c.H * c.W), 4), {c.N, c.C, c.H, c.W});
    Tensor w = from_vector(pseudo(size_t(c.O * (c.C / c.g) * c.kh * c.kw), 5), {c.O, c.C / c.g, c.kh, c.kw});
    Tensor b = from_vector(pseudo(size_t(c.O), 6), {c.O});
    Tensor y = conv2d(x, w, b, c.s, c.p, c.d, c.g);
    Tensor r = from_vector(pseudo(size_t(y.numel()), 7), y.sizes());
    // loss = sum(conv(x, w, b) * r); dloss/dy = r.
    auto loss = [&](const Tensor& xx, const Tensor& ww, const Tensor& bb) {
      return sum(mul(conv2d(xx, ww, bb, c.s, c.p, c.d, c.g), r)).item();
    };
    Tensor gx = conv2d_backward_input(r, w, x.sizes(), c.s, c.p, c.d, c.g);
    Tensor gw = conv2d_backward_weight(r, x, w.sizes(), c.s, c.p, c.d, c.g);
    Tensor gb = conv2d_backward_bias(r);
    const double h = 1e-6;
    auto fd = [&](Tensor& t, int64_t i, int which) {
      Tensor tp = t.clone(), tm = t.clone();
      auto vp = tp.to_vector<double>(), vm = tm.to_vector<double>();
      vp[size_t(i)] += h;
      vm[size_t(i)] -= h;
      tp = from_vector(vp, t.sizes());
      tm = from_vector(vm, t.sizes());
      double lp = which == 0 ? loss(tp, w, b) : which == 1 ? loss(x, tp, b) : loss(x, w, tp);
      double lm = which == 0 ? loss(tm, w, b) : which == 1 ? loss(x, tm, b) : loss(x, w, tm);
      return (lp - lm) / (2 * h);
    };
    auto gxv = gx.to_vector<double>(), gwv = gw.to_vector<double>(), gbv = gb.to_vector<double>();
    for (int64_t i = 0; i < x.numel(); i += 7) REQUIRE(gxv[size_t(i)] == Approx(fd(x, i, 0)).margin(1e-6));
    for (int64_t i = 0; i < w.numel(); i += 5) REQUIRE(gwv[size_t(i)] == Approx(fd(w, i, 1)).margin(1e-6));
    for (int64_t i = 0; i < b.numel(); ++i) REQUIRE(gbv[size_t(i)] == Approx(fd(b, i, 2)).margin(1e-6));
  }
  // Device against CPU, every case, float32 and float64.
  for (const Case& c : kCases) {
    INFO(label(c) << " on " << dev);
    for (DType t : {kFloat32, kFloat64}) {
      Tensor x = from_vector(pseudo(size_t(c.N * c.C * c.H * c.W), 8), {c.N, c.C, c.H, c.W}).to(t);
      Tensor w = from_vector(pseudo(size_t(c.O * (c.C / c.g) * c.kh * c.kw), 9), {c.O, c.C / c.g, c.kh, c.kw}).to(t);
      Tensor y = conv2d(x, w, Tensor(), c.s, c.p, c.d, c.g);
      Tensor r = from_vector(pseudo(size_t(y.numel()), 10), y.sizes()).to(t);
      Tensor gx = conv2d_backward_input(r.to(dev), w.to(dev), x.sizes(), c.s, c.p, c.d, c.g);
      Tensor gw = conv2d_backward_weight(r.to(dev), x.to(dev), w.sizes(), c.s, c.p, c.d, c.g);
      REQUIRE(gx.device() == dev);
      double tol = t == kFloat32 ? 1e-3 : 1e-9;
      CHECK(max_abs_diff(gx, conv2d_backward_input(r, w, x.sizes(), c.s, c.p, c.d, c.g)) < tol);
      CHECK(max_abs_diff(gw, conv2d_backward_weight(r, x, w.sizes(), c.s, c.p, c.d, c.g)) < tol);
      CHECK(max_abs_diff(conv2d_backward_bias(r.to(dev)), conv2d_backward_bias(r)) < tol);
    }
  }
}

TEST_CASE("conv2d rejects bad shapes, dtypes, arguments and devices") {
  Device dev = device_under_test();
  Tensor x = zeros({2, 4, 5, 5}, dev), w = zeros({3, 4, 3, 3}, dev);
  auto msg = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THROWS_AS(conv2d(x, zeros({3, 2, 3, 3}, dev)), ShapeError);
  std::string m = msg([&] { conv2d(x, zeros({3, 2, 3, 3}, dev)); });
  CHECK(m.find("conv2d") != std::string::npos);
  CHECK(m.find("[2, 4, 5, 5]") != std::string::npos);
  CHECK(m.find("[3, 2, 3, 3]") != std::string::npos);
  CHECK_THROWS_AS(conv2d(x, zeros({3, 2, 3, 3}, dev), Tensor(), 1, 0, 1, 3), ShapeError);  // groups
  CHECK_THROWS_AS(conv2d(zeros({4, 5, 5}, dev), w), ShapeError);
  CHECK_THROWS_AS(conv2d(x, zeros({3, 4, 7, 7}, dev)), ShapeError);  // kernel larger than input
  CHECK_THROWS_AS(conv2d(x, w, zeros({4}, dev)), ShapeError);         // bias size
  CHECK_THROWS_AS(conv2d(x, w, Tensor(), 0), ValueError);
  CHECK_THROWS_AS(conv2d(x, w, Tensor(), 1, -1), ValueError);
  CHECK_THROWS_AS(conv2d(x, w, Tensor(), 1, 0, 0), ValueError);
  CHECK_THROWS_AS(conv2d(x.to(kInt32), w.to(kInt32)), DTypeError);
  CHECK_THROWS_AS(conv2d(x, w.to(kFloat64)), DTypeError);
  CHECK_THROWS_AS(conv2d_backward_input(zeros({2, 3, 4, 4}, dev), w, x.sizes()), ShapeError);
  CHECK_THROWS_AS(conv2d_backward_weight(zeros({2, 3, 3, 4}, dev), x, w.sizes()), ShapeError);
  CHECK_THROWS_AS(conv2d_backward_bias(zeros({2, 3}, dev)), ShapeError);
  if (dev != reference_device()) CHECK_THROWS_AS(conv2d(x, zeros({3, 4, 3, 3})), DeviceMismatch);
}
