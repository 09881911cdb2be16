// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Max and average pooling through a backend's host library (oneDNN in the
// CPU plugin, backends/openmp/onednn_pooling.cpp) against plain float64
// loops of vnn's rules (docs/ops.md): values, int64 indices (ties: the
// first maximum in row-major window order), gradients, on both sides of
// the plugin's selection rule (input elements), padded, stride != kernel,
// non-square, dilated, count_include_pad on and off, float32 and float64
// (float64 always runs vnn's kernels). Inputs the plugin must decline
// (NaN / -inf, indices outside their window, divisor_override, strided
// operands) are checked for vnn's semantics and for the path taken. The
// profiler must name max_pool2d[onednn] & co. exactly where the rule takes
// the op (max backward: never, it stays on vnn's kernel). ctest runs this program twice on the CPU: as built, and with
// VNN_ONEDNN=0 (vnn's kernels on every case, the same expectations).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "support/device_under_test.hpp"
#include "vnn/profiler.h"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::onednn_on;
using vnn::test::max_abs_diff;

namespace {

struct Case {
  int64_t N, C, H, W, kh, kw, sh, sw, ph, pw, d;
};

const std::vector<Case> kCases = {
    {4, 16, 28, 28, 2, 2, 2, 2, 0, 0, 1},  // the CNN's pooling
    {8, 16, 15, 17, 3, 3, 2, 2, 1, 1, 1},  // padded, stride != kernel, odd sizes
    {2, 32, 20, 19, 3, 2, 1, 2, 1, 0, 1},  // non-square kernel and stride, overlapping rows
    {4, 8, 31, 30, 4, 4, 3, 3, 2, 2, 1},   // 4x4 padding 2 stride 3
    {2, 16, 24, 24, 2, 2, 2, 2, 0, 0, 2},  // dilated (max only)
    {2, 8, 16, 16, 3, 3, 2, 2, 1, 1, 1},   // 4096 elements: avg's side of the rule, not max's
    {1, 2, 9, 8, 2, 2, 2, 2, 0, 0, 1},     // below both
    {2, 3, 7, 7, 3, 3, 2, 2, 1, 1, 1},     // below both, padded
};

// The CPU plugin's rule (onednn_pooling.cpp): avg pooling from 2^12 input
// elements; max forward only under VNN_ONEDNN_POOL=all, which takes every
// size (ctest runs this program under it too).
bool force_all() {
  const char* v = std::getenv("VNN_ONEDNN_POOL");
  return v && std::string(v) == "all";
}
bool large(const Case& c, bool is_max) {
  if (force_all()) return true;
  return !is_max && c.N * c.C * c.H * c.W >= (1 << 12);
}

std::string label(const Case& c) {
  return "N" + std::to_string(c.N) + " C" + std::to_string(c.C) + " " + std::to_string(c.H) + "x" +
         std::to_string(c.W) + " k" + std::to_string(c.kh) + "x" + std::to_string(c.kw) + " s" +
         std::to_string(c.sh) + "x" + std::to_string(c.sw) + " p" + std::to_string(c.ph) + "x" +
         std::to_string(c.pw) + " d" + std::to_string(c.d);
}

int64_t out_size(int64_t n, int64_t k, int64_t s, int64_t p, int64_t d) { return (n + 2 * p - d * (k - 1) - 1) / s + 1; }

// Values in {-3, ..., 2} (ties == true: most windows hold a tie for their
// maximum) or continuous in [-2, 2).
std::vector<double> values(size_t n, uint32_t seed, bool ties) {
  auto v = vnn::test::lcg_values(n, seed, 11u, -3.0, 3.0);
  for (double& x : v) x = ties ? std::floor(x) : x * (2.0 / 3.0);
  return v;
}

// How many events of the profile are named `name`, and `name[onednn]`.
struct Paths {
  int plain = 0, onednn = 0;
};
Paths paths(const profiler::Profile& p, const std::string& name) {
  Paths r;
  for (const auto& e : p.events()) {
    if (e.name == name) ++r.plain;
    if (e.name == name + "[onednn]") ++r.onednn;
  }
  return r;
}

// vnn's max rule over float64 (first maximum, NaN wins, positions outside
// the input skipped): values and indices per output, then the gradient.
struct MaxRef {
  std::vector<double> y, gx;
  std::vector<int64_t> idx;
};
MaxRef max_ref(const Case& c, const std::vector<double>& x, const std::vector<double>& gy) {
  const int64_t OH = out_size(c.H, c.kh, c.sh, c.ph, c.d), OW = out_size(c.W, c.kw, c.sw, c.pw, c.d);
  MaxRef r;
  r.gx.assign(x.size(), 0.0);
  for (int64_t pl = 0; pl < c.N * c.C; ++pl)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double best = 0;
        int64_t arg = -1;
        for (int64_t a = 0; a < c.kh; ++a)
          for (int64_t b = 0; b < c.kw; ++b) {
            const int64_t h = oh * c.sh - c.ph + a * c.d, w = ow * c.sw - c.pw + b * c.d;
            if (h < 0 || h >= c.H || w < 0 || w >= c.W) continue;
            const double v = x[size_t((pl * c.H + h) * c.W + w)];
            if (arg < 0 || v > best || std::isnan(v)) best = v, arg = h * c.W + w;
          }
        r.y.push_back(best);
        r.idx.push_back(arg);
        r.gx[size_t(pl * c.H * c.W + arg)] += gy[r.y.size() - 1];
      }
  return r;
}

// vnn's avg rule over float64: forward and gradient.
std::pair<std::vector<double>, std::vector<double>> avg_ref(const Case& c, bool cip, const std::vector<double>& x,
                                                            const std::vector<double>& gy) {
  const int64_t OH = out_size(c.H, c.kh, c.sh, c.ph, 1), OW = out_size(c.W, c.kw, c.sw, c.pw, 1);
  std::vector<double> y, gx(x.size(), 0.0);
  for (int64_t pl = 0; pl < c.N * c.C; ++pl)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t hs = oh * c.sh - c.ph, ws = ow * c.sw - c.pw;
        const int64_t he = std::min(hs + c.kh, c.H + c.ph), we = std::min(ws + c.kw, c.W + c.pw);
        const int64_t h0 = std::max<int64_t>(hs, 0), h1 = std::min(hs + c.kh, c.H);
        const int64_t w0 = std::max<int64_t>(ws, 0), w1 = std::min(ws + c.kw, c.W);
        const double div = cip ? double((he - hs) * (we - ws)) : double((h1 - h0) * (w1 - w0));
        double s = 0;
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w) s += x[size_t((pl * c.H + h) * c.W + w)];
        const size_t o = y.size();
        y.push_back(s / div);
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w) gx[size_t((pl * c.H + h) * c.W + w)] += gy[o] / div;
      }
  return {y, gx};
}

std::vector<double> rounded(std::vector<double> v, DType t) {
  if (t == kFloat32)
    for (double& x : v) x = double(float(x));
  return v;
}

}  // namespace

TEST_CASE("max_pool2d on both sides of the oneDNN rule: values, indices with ties, gradients") {
  Device dev = device_under_test();
  const bool onednn = onednn_on(dev);
  for (const Case& c : kCases)
    for (bool ties : {true, false})
      for (DType t : {kFloat32, kFloat64}) {
        INFO(label(c) << (ties ? " ties" : "") << " " << name(t) << " on " << dev
                      << (onednn ? " (oneDNN on)" : " (no oneDNN)"));
        const Shape xs{c.N, c.C, c.H, c.W};
        const auto xv = rounded(values(size_t(xs.numel()), 1, ties), t);
        Tensor x = from_vector(xv, xs).to(t).to(dev);
        profiler::Profile prof;
        auto [y, idx] = max_pool2d_with_indices(x, {c.kh, c.kw}, {c.sh, c.sw}, {c.ph, c.pw}, c.d);
        const auto gv = rounded(values(size_t(y.numel()), 2, false), t);
        Tensor gx = max_pool2d_backward(from_vector(gv, y.sizes()).to(t).to(dev), x, idx, {c.kh, c.kw},
                                        {c.sh, c.sw}, {c.ph, c.pw}, c.d);
        prof.stop();
        const MaxRef want = max_ref(c, xv, gv);
        CHECK(y.to_vector<double>() == want.y);
        CHECK(idx.to_vector<int64_t>() == want.idx);
        const auto gxv = gx.to_vector<double>();
        REQUIRE(gxv.size() == want.gx.size());
        for (size_t i = 0; i < gxv.size(); ++i) REQUIRE(gxv[i] == Approx(want.gx[i]).margin(1e-6));
        // The path: oneDNN's forward for float32 above the rule's size (the
        // dilated case may get only oneDNN's reference kernel, which the
        // plugin declines: no expectation there).
        const Paths f = paths(prof, "max_pool2d"), b = paths(prof, "max_pool2d_backward");
        CHECK(f.plain + f.onednn == 1);
        CHECK(b.plain + b.onednn == 1);
        // Max backward is always vnn's scatter kernel (the rule's comment).
        CHECK(b.onednn == 0);
        if (c.d == 1 || !(onednn && t == kFloat32 && large(c, true)))
          CHECK(f.onednn == (onednn && t == kFloat32 && large(c, true) ? 1 : 0));
      }
}

TEST_CASE("avg_pool2d on both sides of the oneDNN rule, count_include_pad on and off") {
  Device dev = device_under_test();
  const bool onednn = onednn_on(dev);
  for (const Case& c : kCases) {
    if (c.d != 1) continue;  // avg pooling has no dilation
    for (bool cip : {true, false})
      for (DType t : {kFloat32, kFloat64}) {
        INFO(label(c) << " count_include_pad " << cip << " " << name(t) << " on " << dev
                      << (onednn ? " (oneDNN on)" : " (no oneDNN)"));
        const Shape xs{c.N, c.C, c.H, c.W};
        const auto xv = rounded(values(size_t(xs.numel()), 3, false), t);
        Tensor x = from_vector(xv, xs).to(t).to(dev);
        profiler::Profile prof;
        Tensor y = avg_pool2d(x, {c.kh, c.kw}, {c.sh, c.sw}, {c.ph, c.pw}, cip);
        const auto gv = rounded(values(size_t(y.numel()), 4, false), t);
        Tensor gx =
            avg_pool2d_backward(from_vector(gv, y.sizes()).to(t).to(dev), x, {c.kh, c.kw}, {c.sh, c.sw}, {c.ph, c.pw}, cip);
        prof.stop();
        const auto [wy, wgx] = avg_ref(c, cip, xv, gv);
        const auto yv = y.to_vector<double>(), gxv = gx.to_vector<double>();
        REQUIRE(yv.size() == wy.size());
        REQUIRE(gxv.size() == wgx.size());
        for (size_t i = 0; i < yv.size(); ++i) REQUIRE(yv[i] == Approx(wy[i]).margin(1e-5));
        for (size_t i = 0; i < gxv.size(); ++i) REQUIRE(gxv[i] == Approx(wgx[i]).margin(1e-5));
        const int expect = onednn && t == kFloat32 && large(c, false) ? 1 : 0;
        CHECK(paths(prof, "avg_pool2d").onednn == expect);
        CHECK(paths(prof, "avg_pool2d_backward").onednn == expect);
        CHECK(paths(prof, "avg_pool2d").plain == 1 - expect);
      }
  }
}

// What oneDNN cannot say exactly goes to vnn's kernels, above the rule's
// size: a NaN or -inf in the input (oneDNN's max skips NaN and starts from
// -FLT_MAX), an index outside its window (vnn routes nothing for it),
// divisor_override, a strided input.
TEST_CASE("pooling inputs oneDNN cannot express exactly stay on vnn's kernels") {
  Device dev = device_under_test();
  const Case c{4, 16, 16, 16, 3, 3, 2, 2, 1, 1, 1};
  const Shape xs{c.N, c.C, c.H, c.W};
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (int special : {0, 1, 2}) {  // NaN, -inf, a plane of -inf (windows whose maximum is -inf)
    INFO("special " << special << " on " << dev);
    auto xv = values(size_t(xs.numel()), 5, true);
    if (special == 2)
      for (int64_t i = 0; i < c.H * c.W; ++i) xv[size_t(3 * c.H * c.W + i)] = -inf;
    else
      for (size_t i = 0; i < xv.size(); i += 97) xv[i] = special == 0 ? nan : -inf;
    Tensor x = from_vector(xv, xs).to(kFloat32).to(dev);
    profiler::Profile prof;
    auto [y, idx] = max_pool2d_with_indices(x, c.kh, c.sh, c.ph);
    prof.stop();
    const MaxRef want = max_ref(c, rounded(xv, kFloat32), std::vector<double>(size_t(y.numel()), 0.0));
    CHECK(idx.to_vector<int64_t>() == want.idx);
    const auto yv = y.to_vector<double>();
    for (size_t i = 0; i < yv.size(); ++i) {
      if (std::isnan(want.y[i])) REQUIRE(std::isnan(yv[i]));
      else REQUIRE(yv[i] == want.y[i]);
    }
    CHECK(paths(prof, "max_pool2d").onednn == 0);
  }
  {  // every fifth index moved out of its window (a neighbour's pixel, or off the plane)
    INFO("indices outside their windows on " << dev);
    const auto xv = values(size_t(xs.numel()), 6, false);
    Tensor x = from_vector(xv, xs).to(kFloat32).to(dev);
    auto iv = std::get<1>(max_pool2d_with_indices(x, c.kh, c.sh, c.ph)).to_vector<int64_t>();
    for (size_t o = 0; o < iv.size(); o += 5) iv[o] = (o / 5) % 2 ? -1 : iv[o] + 3 * c.W;
    const auto gv = values(iv.size(), 7, false);
    const int64_t OH = out_size(c.H, c.kh, c.sh, c.ph, 1), OW = out_size(c.W, c.kw, c.sw, c.pw, 1);
    std::vector<double> want(xv.size(), 0.0);
    for (size_t o = 0; o < iv.size(); ++o) {
      const int64_t oh = int64_t(o) / OW % OH, ow = int64_t(o) % OW, at = iv[o];
      const int64_t h = at >= 0 ? at / c.W : -1, w = at >= 0 ? at % c.W : -1;
      const bool in_window = at >= 0 && at < c.H * c.W && h >= oh * c.sh - c.ph && h < oh * c.sh - c.ph + c.kh &&
                             w >= ow * c.sw - c.pw && w < ow * c.sw - c.pw + c.kw;
      if (in_window) want[o / size_t(OH * OW) * size_t(c.H * c.W) + size_t(at)] += double(float(gv[o]));
    }
    profiler::Profile prof;
    Tensor gx = max_pool2d_backward(from_vector(gv, {c.N, c.C, OH, OW}).to(kFloat32).to(dev), x,
                                    from_vector(iv, {c.N, c.C, OH, OW}).to(dev), c.kh, c.sh, c.ph);
    prof.stop();
    const auto gxv = gx.to_vector<double>();
    for (size_t i = 0; i < gxv.size(); ++i) REQUIRE(gxv[i] == Approx(want[i]).margin(1e-6));
    CHECK(paths(prof, "max_pool2d_backward").onednn == 0);  // never oneDNN's
  }
  {  // divisor_override, and an NHWC-strided input: vnn's kernels, same values as the plain rule
    INFO("divisor_override / strided input on " << dev);
    const auto xv = values(size_t(xs.numel()), 8, false);
    Tensor x = from_vector(xv, xs).to(kFloat32).to(dev);
    Tensor xt = x.permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
    REQUIRE_FALSE(xt.is_contiguous());
    profiler::Profile prof;
    Tensor yd = avg_pool2d(x, c.kh, c.sh, c.ph, true, 7);
    Tensor ys = avg_pool2d(xt, c.kh, c.sh, c.ph, false);
    auto [ym, im] = max_pool2d_with_indices(xt, c.kh, c.sh, c.ph);
    prof.stop();
    CHECK(paths(prof, "avg_pool2d").onednn == 0);
    CHECK(paths(prof, "max_pool2d").onednn == 0);
    const Tensor ya = avg_pool2d(x, c.kh, c.sh, c.ph, true);
    const int64_t OH = out_size(c.H, c.kh, c.sh, c.ph, 1), OW = out_size(c.W, c.kw, c.sw, c.pw, 1);
    // Unpadded interior windows: the override's divisor 7 against 9.
    const auto ydv = yd.to_vector<double>(), yav = ya.to_vector<double>();
    CHECK(ydv[size_t(OW + 1)] == Approx(yav[size_t(OW + 1)] * 9.0 / 7.0).margin(1e-5));
    CHECK(max_abs_diff(ys, avg_pool2d(x, c.kh, c.sh, c.ph, false)) < 1e-6);
    auto [yc, ic] = max_pool2d_with_indices(x, c.kh, c.sh, c.ph);
    CHECK(max_abs_diff(ym, yc) == 0);
    CHECK(max_abs_diff(im, ic) == 0);
    CHECK(OH > 2);
  }
}
