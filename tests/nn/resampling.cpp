// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Padding layers, Conv1d and the 1-D pools, Upsample and PixelShuffle /
// PixelUnshuffle: values against PyTorch's definitions in float64 loops on the
// device under test, float64 finite-difference gradients, state-dict keys and
// the typed errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"
#include "support/op_checks.hpp"
#include "vnn/nn.h"

using namespace vnn;
using namespace vnn::nn;
namespace F = vnn::nn::functional;
using vnn::test::device_under_test;

namespace {

std::vector<double> values(size_t n, uint32_t salt) { return test::lcg_values(n, 17, salt, -2.0, 2.0); }

void check_close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(got[i] == Approx(want[i]).margin(tol));
  }
}

using vnn::test::check_grad;

// The source index of padded position j (j in [-before, n + after)) in an axis of n, per mode; -1: the fill value.
int64_t pad_source(int64_t j, int64_t n, PadMode m) {
  if (j >= 0 && j < n) return j;
  switch (m) {
    case PadMode::constant: return -1;
    case PadMode::reflect: return j < 0 ? -j : 2 * (n - 1) - j;
    case PadMode::replicate: return j < 0 ? 0 : n - 1;
    case PadMode::circular: return ((j % n) + n) % n;
  }
  return -1;
}

// Pads the last two dims of [B, H, W] (pads = {left, right, top, bottom}) in float64.
std::vector<double> ref_pad2d(const std::vector<double>& x, int64_t b, int64_t h, int64_t w,
                              const std::vector<int64_t>& p, PadMode m, double value) {
  const int64_t oh = h + p[2] + p[3], ow = w + p[0] + p[1];
  std::vector<double> out;
  for (int64_t i = 0; i < b; ++i)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t xx = 0; xx < ow; ++xx) {
        const int64_t sy = pad_source(y - p[2], h, m), sx = pad_source(xx - p[0], w, m);
        out.push_back(sy < 0 || sx < 0 ? value : x[size_t((i * h + sy) * w + sx)]);
      }
  return out;
}

// PyTorch's conv1d in float64: x [N, C, L], w [O, C/g, K], zero padding (pl, pr).
std::vector<double> ref_conv1d(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& b,
                               int64_t n, int64_t c, int64_t l, int64_t o, int64_t k, int64_t stride, int64_t pl,
                               int64_t pr, int64_t dil, int64_t g) {
  const int64_t ol = (l + pl + pr - dil * (k - 1) - 1) / stride + 1, cg = c / g, og = o / g;
  std::vector<double> out;
  for (int64_t ni = 0; ni < n; ++ni)
    for (int64_t oi = 0; oi < o; ++oi)
      for (int64_t t = 0; t < ol; ++t) {
        double s = b.empty() ? 0.0 : b[size_t(oi)];
        const int64_t grp = oi / og;
        for (int64_t ci = 0; ci < cg; ++ci)
          for (int64_t ki = 0; ki < k; ++ki) {
            const int64_t pos = t * stride - pl + ki * dil;
            if (pos < 0 || pos >= l) continue;
            s += w[size_t((oi * cg + ci) * k + ki)] * x[size_t((ni * c + grp * cg + ci) * l + pos)];
          }
        out.push_back(s);
      }
  return out;
}

void set_param(Tensor& p, const std::vector<double>& v) {
  NoGradGuard ng;
  p.copy_(from_vector(v, p.sizes(), p.device()).to(p.dtype()));
}

}  // namespace

TEST_CASE("padding layers match PyTorch's modes, in 1-D, 2-D and 3-D") {
  Device dev = device_under_test();
  std::vector<double> v = values(2 * 3 * 4, 1);
  Tensor x = from_vector(v, {2, 3, 4}, dev);  // [N=2, H=3, W=4] or [C, H, W]
  struct Case {
    std::string name;
    Tensor got;
    std::vector<int64_t> pads;
    PadMode mode;
    double value;
  };
  std::vector<Case> cases = {
      {"ZeroPad2d", ZeroPad2d(ZeroPad2dOptions({1, 2, 0, 1}))(x), {1, 2, 0, 1}, PadMode::constant, 0.0},
      {"ConstantPad2d", ConstantPad2d(ConstantPad2dOptions(1, 3.5))(x), {1, 1, 1, 1}, PadMode::constant, 3.5},
      {"ReflectionPad2d", ReflectionPad2d(ReflectionPad2dOptions({3, 1, 2, 0}))(x), {3, 1, 2, 0}, PadMode::reflect, 0},
      {"ReplicationPad2d", ReplicationPad2d(2)(x), {2, 2, 2, 2}, PadMode::replicate, 0},
      {"CircularPad2d", CircularPad2d(CircularPad2dOptions({4, 1, 3, 2}))(x), {4, 1, 3, 2}, PadMode::circular, 0},
      {"ReflectionPad1d", ReflectionPad1d(ReflectionPad1dOptions({2, 3}))(x), {2, 3, 0, 0}, PadMode::reflect, 0},
      {"ReplicationPad1d", ReplicationPad1d(ReplicationPad1dOptions({0, 3}))(x), {0, 3, 0, 0}, PadMode::replicate, 0},
      {"CircularPad1d", CircularPad1d(3)(x), {3, 3, 0, 0}, PadMode::circular, 0},
      {"ConstantPad1d", ConstantPad1d(ConstantPad1dOptions({1, 2}, -1.0))(x), {1, 2, 0, 0}, PadMode::constant, -1.0},
      {"ZeroPad1d crop", ZeroPad1d(ZeroPad1dOptions({-1, 2}))(x), {-1, 2, 0, 0}, PadMode::constant, 0.0},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    if (c.pads[0] < 0) {  // a negative constant pad crops: x[..., 1:] then two zeros
      std::vector<double> want;
      for (int64_t r = 0; r < 6; ++r) {
        for (int64_t j = 1; j < 4; ++j) want.push_back(v[size_t(r * 4 + j)]);
        want.push_back(0), want.push_back(0);
      }
      check_close(c.got.to_vector<double>(), want, 0);
      continue;
    }
    check_close(c.got.to_vector<double>(), ref_pad2d(v, 2, 3, 4, c.pads, c.mode, c.value), 0);
  }
  // 3-D forms on [C=1, D=2, H=3, W=4]: the depth pads of replicate repeat the first / last plane.
  Tensor x3 = from_vector(v, {1, 2, 3, 4}, dev);
  Tensor r3 = ReplicationPad3d(ReplicationPad3dOptions({0, 0, 0, 0, 1, 1}))(x3);
  CHECK(r3.sizes() == Shape{1, 4, 3, 4});
  std::vector<double> r3v = r3.to_vector<double>();
  for (size_t i = 0; i < 12; ++i) CHECK((r3v[i] == v[i] && r3v[12 + i] == v[i] && r3v[36 + i] == v[12 + i]));
  CHECK(ZeroPad3d(1)(x3).sizes() == Shape{1, 4, 5, 6});
  CHECK(ConstantPad3d(ConstantPad3dOptions(1, 2.0))(x3).sum().item() == Approx(sum(x3).item() + 2.0 * (120 - 24)));
  CHECK(ReflectionPad3d(1)(x3).sizes() == Shape{1, 4, 5, 6});
  CHECK(CircularPad3d(1)(x3).sizes() == Shape{1, 4, 5, 6});
  CHECK(ReflectionPad2d(ReflectionPad2dOptions({3, 1, 2, 0}))->describe() == "ReflectionPad2d((3, 1, 2, 0))");
  // Gradients (index_select's backward sums the copies of each source element).
  Tensor g = from_vector(values(24, 3), {1, 2, 3, 4}, dev).requires_grad_();
  check_grad([](const std::vector<Tensor>& t) { return ReflectionPad2d(ReflectionPad2dOptions({2, 1, 1, 2}))(t[0]); },
             {g});
  check_grad([](const std::vector<Tensor>& t) {
    return CircularPad1d(CircularPad1dOptions({4, 2}))(t[0].reshape({2, 3, 4}));
  }, {g});
  check_grad([](const std::vector<Tensor>& t) { return ReplicationPad2d(2)(t[0]); }, {g});
}

TEST_CASE("padding errors: sizes, dims and counts") {
  Device dev = device_under_test();
  Tensor x = zeros({1, 2, 3}, TensorOptions(dev));
  CHECK_THROWS_AS(ReflectionPad1d(3)(x), ValueError);  // pad 3 >= width 3
  CHECK_THROWS_WITH(ReflectionPad1d(3)(x), Catch::Contains("ReflectionPad1d") && Catch::Contains("less than"));
  CHECK_THROWS_AS(ReflectionPad2d(2)(x), ValueError);  // height 2
  CHECK_THROWS_AS(CircularPad1d(4)(x), ValueError);
  CHECK_THROWS_AS(ReflectionPad2d(1)(zeros({3}, TensorOptions(dev))), ShapeError);
  CHECK_THROWS_AS(ZeroPad1d(1)(zeros({1, 1, 2, 3}, TensorOptions(dev))), ShapeError);
  CHECK_THROWS_AS(ReplicationPad1d(-1)(x), ValueError);
  CHECK_THROWS_AS(ReflectionPad2dOptions({1, 2, 3}), ValueError);  // 3 pads for a 2-d layer
}

TEST_CASE("Conv1d: strides, dilation, groups, bias, same / valid and padding modes against float64 loops") {
  Device dev = device_under_test();
  const int64_t n = 2, c = 4, l = 9;
  std::vector<double> xv = values(size_t(n * c * l), 5);
  Tensor x = from_vector(xv, {n, c, l}, dev);
  {  // groups 2, stride 2, padding 1, dilation 2, bias
    Conv1d conv(Conv1dOptions(4, 6, 3).stride(2).padding(1).dilation(2).groups(2));
    auto sd = conv->state_dict();
    CHECK(sd.size() == 2);
    CHECK(conv->weight.sizes() == Shape{6, 2, 3});
    CHECK(conv->bias.sizes() == Shape{6});
    conv->to(dev, kFloat64);
    std::vector<double> w = values(36, 6), b = values(6, 7);
    set_param(conv->weight, w);
    set_param(conv->bias, b);
    Tensor y = conv(x);
    check_close(y.to_vector<double>(), ref_conv1d(xv, w, b, n, c, l, 6, 3, 2, 1, 1, 2, 2), 1e-12);
    // Unbatched input [C, L].
    check_close(conv(x[0]).to_vector<double>(), ref_conv1d(xv, w, b, 1, c, l, 6, 3, 2, 1, 1, 2, 2), 1e-12);
  }
  {  // "same" with an even kernel: total 3, one zero on the left and two on the right, as PyTorch.
    Conv1d conv(Conv1dOptions(4, 3, 4).padding(kSame).bias(false));
    conv->to(dev, kFloat64);
    std::vector<double> w = values(48, 8);
    set_param(conv->weight, w);
    Tensor y = conv(x);
    CHECK(y.sizes() == Shape{2, 3, 9});
    check_close(y.to_vector<double>(), ref_conv1d(xv, w, {}, n, c, l, 3, 4, 1, 1, 2, 1, 1), 1e-12);
    Conv1d valid(Conv1dOptions(4, 3, 4).padding("valid").bias(false));
    valid->to(dev);
    CHECK(valid(x.to(kFloat32)).sizes() == Shape{2, 3, 6});
  }
  {  // padding_mode reflect with "same" (k 3, dilation 2: two each side), and circular with a number.
    for (PadMode m : {kReflect, kCircular, kReplicate}) {
      Conv1d conv(Conv1dOptions(4, 2, 3).padding(m == kReflect ? Conv1dPadding(kSame) : Conv1dPadding(2))
                      .dilation(m == kReflect ? 2 : 1).padding_mode(m));
      conv->to(dev, kFloat64);
      std::vector<double> w = values(24, 9), b = values(2, 10);
      set_param(conv->weight, w);
      set_param(conv->bias, b);
      // Reference: pad each row by the mode, then a valid convolution.
      std::vector<double> padded;
      for (int64_t r = 0; r < n * c; ++r)
        for (int64_t j = -2; j < l + 2; ++j) padded.push_back(xv[size_t(r * l + pad_source(j, l, m))]);
      check_close(conv(x).to_vector<double>(),
                  ref_conv1d(padded, w, b, n, c, l + 4, 2, 3, 1, 0, 0, m == kReflect ? 2 : 1, 1), 1e-12);
    }
  }
  // Gradients of input, weight and bias through the functional form.
  Tensor xg = from_vector(values(2 * 4 * 7, 11), {2, 4, 7}, dev).requires_grad_();
  Tensor wg = from_vector(values(6 * 2 * 3, 12), {6, 2, 3}, dev).requires_grad_();
  Tensor bg = from_vector(values(6, 13), {6}, dev).requires_grad_();
  check_grad([](const std::vector<Tensor>& t) {
    return F::conv1d(t[0], t[1], F::Conv1dFuncOptions().bias(t[2]).stride(2).padding(1).dilation(2).groups(2));
  }, {xg, wg, bg});
  check_grad([](const std::vector<Tensor>& t) {
    return F::conv1d(t[0], t[1], F::Conv1dFuncOptions().padding(kSame).groups(2));
  }, {xg, wg});
}

TEST_CASE("Conv1d errors: groups, same with stride, channels, dims") {
  Device dev = device_under_test();
  CHECK_THROWS_AS(Conv1d(Conv1dOptions(4, 6, 3).groups(3)), ValueError);
  CHECK_THROWS_WITH(Conv1d(Conv1dOptions(4, 6, 3).groups(3)), Catch::Contains("divisible by groups"));
  CHECK_THROWS_AS(Conv1d(Conv1dOptions(4, 6, 3).padding(kSame).stride(2)), ValueError);
  CHECK_THROWS_AS(Conv1dOptions(1, 1, 1).padding("full"), ValueError);
  Conv1d conv(Conv1dOptions(4, 6, 3));
  conv->to(dev);
  CHECK_THROWS_AS(conv(zeros({2, 5, 9}, TensorOptions(dev))), ShapeError);
  CHECK_THROWS_AS(conv(zeros({2, 4, 1, 9}, TensorOptions(dev))), ShapeError);
  CHECK_THROWS_AS(F::conv1d(zeros({2, 4, 9}, TensorOptions(dev)), zeros({6, 4, 3, 1}, TensorOptions(dev))),
                  ShapeError);
}

TEST_CASE("1-D pooling against float64 loops, indices, gradients") {
  Device dev = device_under_test();
  const int64_t l = 10;
  std::vector<double> xv = values(size_t(2 * 3 * l), 21);
  Tensor x = from_vector(xv, {2, 3, l}, dev);
  // MaxPool1d(3, stride 2, padding 1, dilation 1) and AvgPool1d(4, stride 3, padding 2, count_include_pad both ways).
  std::vector<double> mx, mi, av, av_ex;
  for (int64_t r = 0; r < 6; ++r) {
    for (int64_t o = 0; o < (l + 2 - 3) / 2 + 1; ++o) {
      double best = -INFINITY;
      int64_t arg = -1;
      for (int64_t k = 0; k < 3; ++k) {
        int64_t p = o * 2 - 1 + k;
        if (p >= 0 && p < l && xv[size_t(r * l + p)] > best) best = xv[size_t(r * l + p)], arg = p;
      }
      mx.push_back(best), mi.push_back(double(arg));
    }
    for (int64_t o = 0; o < (l + 4 - 4) / 3 + 1; ++o) {
      double s = 0;
      int64_t cnt = 0;
      const int64_t start = o * 3 - 2, end = std::min(start + 4, l + 2);
      for (int64_t p = start; p < end; ++p)
        if (p >= 0 && p < l) s += xv[size_t(r * l + p)], ++cnt;
      av.push_back(s / double(end - start)), av_ex.push_back(s / double(cnt));
    }
  }
  MaxPool1d mp(MaxPool1dOptions(3).stride(2).padding(1));
  auto [mv, idx] = mp->forward_with_indices(x);
  check_close(mv.to_vector<double>(), mx, 0);
  CHECK(idx.dtype() == kInt64);
  check_close(idx.to(kFloat64).to_vector<double>(), mi, 0);
  check_close(AvgPool1d(AvgPool1dOptions(4).stride(3).padding(2))(x).to_vector<double>(), av, 1e-12);
  check_close(F::avg_pool1d(x, F::AvgPool1dFuncOptions(4).stride(3).padding(2).count_include_pad(false))
                  .to_vector<double>(), av_ex, 1e-12);
  // Adaptive pools to 4 bins: [floor(i L / 4), ceil((i + 1) L / 4)).
  std::vector<double> aa, am;
  for (int64_t r = 0; r < 6; ++r)
    for (int64_t i = 0; i < 4; ++i) {
      const int64_t s = (i * l) / 4, e = ((i + 1) * l + 3) / 4;
      double sum = 0, best = -INFINITY;
      for (int64_t p = s; p < e; ++p) sum += xv[size_t(r * l + p)], best = std::max(best, xv[size_t(r * l + p)]);
      aa.push_back(sum / double(e - s)), am.push_back(best);
    }
  check_close(AdaptiveAvgPool1d(4)(x).to_vector<double>(), aa, 1e-12);
  check_close(AdaptiveMaxPool1d(4)(x).to_vector<double>(), am, 0);
  auto [uv, ui] = AdaptiveMaxPool1d(4)->forward_with_indices(x[0]);  // unbatched [C, L]
  CHECK(uv.sizes() == Shape{3, 4});
  CHECK(ui.sizes() == Shape{3, 4});
  Tensor g = from_vector(xv, {2, 3, l}, dev).requires_grad_();
  check_grad([](const std::vector<Tensor>& t) { return F::max_pool1d(t[0], F::MaxPool1dFuncOptions(3).stride(2)); },
             {g});
  check_grad([](const std::vector<Tensor>& t) {
    return F::avg_pool1d(t[0], F::AvgPool1dFuncOptions(4).stride(3).padding(2));
  }, {g});
  check_grad([](const std::vector<Tensor>& t) { return F::adaptive_avg_pool1d(t[0], 4); }, {g});
  check_grad([](const std::vector<Tensor>& t) { return F::adaptive_max_pool1d(t[0], 3); }, {g});
  CHECK_THROWS_AS(MaxPool1d(2)(zeros({2, 2, 2, 2}, TensorOptions(dev))), ShapeError);
  CHECK_THROWS_AS(MaxPool1d(MaxPool1dOptions(2).padding(2))(x), ValueError);
  CHECK_THROWS_AS(AdaptiveAvgPool1d(0)(x), ValueError);
}

namespace {
// PyTorch's bilinear (upsample_bilinear2d) and nearest in float64 for [B, H, W] planes.
std::vector<double> ref_resize(const std::vector<double>& x, int64_t b, int64_t h, int64_t w, int64_t oh, int64_t ow,
                               bool bilinear, bool align, double fh, double fw) {
  auto scale = [&](int64_t in, int64_t out, double f) {
    if (bilinear && align) return out > 1 ? double(in - 1) / double(out - 1) : 0.0;
    return f > 0 ? 1.0 / f : double(in) / double(out);
  };
  const double sh = scale(h, oh, fh), sw = scale(w, ow, fw);
  auto src = [&](int64_t d, double s, int64_t in, int64_t* lo, int64_t* hi, double* lam) {
    if (!bilinear) {
      *lo = *hi = std::min(int64_t(std::floor(double(d) * s)), in - 1);
      *lam = 0;
      return;
    }
    double r = align ? s * double(d) : std::max(s * (double(d) + 0.5) - 0.5, 0.0);
    *lo = std::min(int64_t(r), in - 1);
    *hi = *lo < in - 1 ? *lo + 1 : *lo;
    *lam = std::min(std::max(r - double(*lo), 0.0), 1.0);
  };
  std::vector<double> out;
  for (int64_t i = 0; i < b; ++i)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t xx = 0; xx < ow; ++xx) {
        int64_t y0, y1, x0, x1;
        double ly, lx;
        src(y, sh, h, &y0, &y1, &ly);
        src(xx, sw, w, &x0, &x1, &lx);
        auto at = [&](int64_t yy, int64_t xc) { return x[size_t((i * h + yy) * w + xc)]; };
        out.push_back((1 - ly) * ((1 - lx) * at(y0, x0) + lx * at(y0, x1)) +
                      ly * ((1 - lx) * at(y1, x0) + lx * at(y1, x1)));
      }
  return out;
}
}  // namespace

TEST_CASE("Upsample and interpolate: nearest and bilinear (align_corners both ways, size or scale_factor)") {
  Device dev = device_under_test();
  std::vector<double> xv = values(2 * 3 * 4, 31);
  Tensor x = from_vector(xv, {1, 2, 3, 4}, dev);
  for (bool align : {false, true}) {
    INFO("align_corners " << align);
    Upsample up(UpsampleOptions().scale_factor({2, 2}).mode(kBilinear).align_corners(align));
    check_close(up(x).to_vector<double>(), ref_resize(xv, 2, 3, 4, 6, 8, true, align, 2, 2), 1e-6);
    Tensor sized = F::interpolate(x, F::InterpolateFuncOptions().size({5, 7}).mode(kBilinear).align_corners(align));
    check_close(sized.to_vector<double>(), ref_resize(xv, 2, 3, 4, 5, 7, true, align, 0, 0), 1e-6);
  }
  check_close(Upsample(UpsampleOptions().size({5, 9}))(x).to_vector<double>(),
              ref_resize(xv, 2, 3, 4, 5, 9, false, false, 0, 0), 0);
  check_close(Upsample(UpsampleOptions().scale_factor({3}).mode(kNearest))(x).to_vector<double>(),
              ref_resize(xv, 2, 3, 4, 9, 12, false, false, 3, 3), 0);
  CHECK(Upsample(UpsampleOptions().scale_factor({2}))->describe() == "Upsample(scale_factor=(2))");
  Tensor g = from_vector(xv, {1, 2, 3, 4}, dev).requires_grad_();
  check_grad([](const std::vector<Tensor>& t) {
    return Upsample(UpsampleOptions().size({5, 7}).mode(kBilinear).align_corners(false))(t[0]);
  }, {g});
  check_grad([](const std::vector<Tensor>& t) {
    return F::interpolate(t[0], F::InterpolateFuncOptions().scale_factor({2, 1.5}).mode(kBilinear).align_corners(true));
  }, {g});
  check_grad([](const std::vector<Tensor>& t) { return Upsample(UpsampleOptions().scale_factor({2}))(t[0]); }, {g});
  // Errors: both or neither of size and scale_factor, align_corners with nearest, a mode for another rank.
  CHECK_THROWS_AS(Upsample(UpsampleOptions().size({4, 4}).scale_factor({2}))(x), ValueError);
  CHECK_THROWS_WITH(Upsample(UpsampleOptions().size({4, 4}).scale_factor({2}))(x), Catch::Contains("both"));
  CHECK_THROWS_AS(Upsample(UpsampleOptions())(x), ValueError);
  CHECK_THROWS_AS(Upsample(UpsampleOptions().size({4, 4}).align_corners(true))(x), ValueError);
  CHECK_THROWS_AS(Upsample(UpsampleOptions().size({4}).mode(kBilinear))(zeros({1, 2, 3}, TensorOptions(dev))),
                  ShapeError);
}

TEST_CASE("PixelShuffle / PixelUnshuffle: PyTorch's element order, round trip, gradients, errors") {
  Device dev = device_under_test();
  const int64_t r = 2, c = 3, h = 2, w = 3;
  std::vector<double> xv = values(size_t(2 * c * r * r * h * w), 41);
  Tensor x = from_vector(xv, {2, c * r * r, h, w}, dev);
  Tensor y = PixelShuffle(2)(x);
  CHECK(y.sizes() == Shape{2, c, h * r, w * r});
  std::vector<double> got = y.to_vector<double>();
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t ci = 0; ci < c; ++ci)
      for (int64_t yy = 0; yy < h * r; ++yy)
        for (int64_t xx = 0; xx < w * r; ++xx) {
          const int64_t src_c = ci * r * r + (yy % r) * r + (xx % r);
          const double want = xv[size_t(((n * c * r * r + src_c) * h + yy / r) * w + xx / r)];
          CHECK(got[size_t(((n * c + ci) * h * r + yy) * w * r + xx)] == want);
        }
  Tensor back = PixelUnshuffle(2)(y);
  CHECK(back.sizes() == x.sizes());
  CHECK(test::max_abs_diff(back, x) == 0);
  // Leading dims beyond one batch dim, and unbatched [C, H, W].
  CHECK(F::pixel_shuffle(x.reshape({1, 2, c * r * r, h, w}), 2).sizes() == Shape{1, 2, c, h * r, w * r});
  CHECK(test::max_abs_diff(F::pixel_shuffle(x[1], 2), y[1]) == 0);
  Tensor g = from_vector(xv, {2, c * r * r, h, w}, dev).requires_grad_();
  check_grad([](const std::vector<Tensor>& t) { return PixelShuffle(2)(t[0]) * PixelShuffle(2)(t[0]); }, {g});
  CHECK_THROWS_AS(PixelShuffle(2)(zeros({1, 6, 2, 2}, TensorOptions(dev))), ShapeError);
  CHECK_THROWS_AS(PixelUnshuffle(2)(zeros({1, 1, 3, 2}, TensorOptions(dev))), ShapeError);
  CHECK_THROWS_AS(PixelShuffle(0), ValueError);
  CHECK_THROWS_AS(PixelShuffle(2)(zeros({4, 2}, TensorOptions(dev))), ShapeError);
}
