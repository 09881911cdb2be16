// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// MaxPool3d, AvgPool3d, AdaptiveAvg/MaxPool3d, MaxUnpool1d/2d/3d and
// LPPool1d/2d/3d: values and indices against PyTorch's definitions in float64
// loops (ceil_mode, padding, dilation, count_include_pad, divisor_override),
// float64 finite-difference gradients and the typed errors, on the device
// under test.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "support/device_under_test.hpp"
#include "support/op_checks.hpp"
#include "vnn/nn.h"

using namespace vnn;
using namespace vnn::nn;
namespace F = vnn::nn::functional;
using vnn::test::device_under_test;

namespace {

using I3 = std::array<int64_t, 3>;

std::vector<double> values(size_t n, uint32_t salt) { return test::lcg_values(n, 31, salt, -2.0, 2.0); }

using test::check_close;
using test::check_grad;

// A pooling geometry over 3 spatial dims, PyTorch's output sizes (ceil_mode: rounded up, the last window starting
// inside the input or the left padding).
struct Pool {
  I3 in, k, s, p{0, 0, 0}, d{1, 1, 1};
  bool ceil = false;
  int64_t out(size_t a) const {
    const int64_t room = in[a] + 2 * p[a] - d[a] * (k[a] - 1) - 1;
    int64_t o = (ceil ? (room + s[a] - 1) / s[a] : room / s[a]) + 1;
    if (ceil && (o - 1) * s[a] >= in[a] + p[a]) --o;
    return o;
  }
  int64_t outs() const { return out(0) * out(1) * out(2); }
};

// Max values and flat indices per plane (planes of in[0]*in[1]*in[2] values); the first maximum in scan order.
void ref_max(const std::vector<double>& x, int64_t planes, const Pool& g, std::vector<double>* v,
             std::vector<double>* idx) {
  const int64_t P = g.in[0] * g.in[1] * g.in[2];
  for (int64_t r = 0; r < planes; ++r)
    for (int64_t a = 0; a < g.out(0); ++a)
      for (int64_t b = 0; b < g.out(1); ++b)
        for (int64_t c = 0; c < g.out(2); ++c) {
          double best = -INFINITY;
          int64_t arg = -1;
          for (int64_t i = 0; i < g.k[0]; ++i)
            for (int64_t j = 0; j < g.k[1]; ++j)
              for (int64_t l = 0; l < g.k[2]; ++l) {
                const int64_t z = a * g.s[0] - g.p[0] + i * g.d[0], y = b * g.s[1] - g.p[1] + j * g.d[1],
                              w = c * g.s[2] - g.p[2] + l * g.d[2];
                if (z < 0 || z >= g.in[0] || y < 0 || y >= g.in[1] || w < 0 || w >= g.in[2]) continue;
                const int64_t f = (z * g.in[1] + y) * g.in[2] + w;
                if (x[size_t(r * P + f)] > best) best = x[size_t(r * P + f)], arg = f;
              }
          v->push_back(best), idx->push_back(double(arg));
        }
}

// PyTorch's avg_pool3d: windows clipped to the padded input for the divisor (count_include_pad) or to the input.
std::vector<double> ref_avg(const std::vector<double>& x, int64_t planes, const Pool& g, bool cip, int64_t dov) {
  const int64_t P = g.in[0] * g.in[1] * g.in[2];
  std::vector<double> out;
  for (int64_t r = 0; r < planes; ++r)
    for (int64_t a = 0; a < g.out(0); ++a)
      for (int64_t b = 0; b < g.out(1); ++b)
        for (int64_t c = 0; c < g.out(2); ++c) {
          const I3 o{a, b, c};
          I3 lo, hi;
          int64_t pool = 1, cnt = 1;
          for (size_t e = 0; e < 3; ++e) {
            const int64_t st = o[e] * g.s[e] - g.p[e], en = std::min(st + g.k[e], g.in[e] + g.p[e]);
            pool *= en - st;
            lo[e] = std::max<int64_t>(st, 0), hi[e] = std::min(en, g.in[e]);
            cnt *= hi[e] - lo[e];
          }
          double sum = 0;
          for (int64_t z = lo[0]; z < hi[0]; ++z)
            for (int64_t y = lo[1]; y < hi[1]; ++y)
              for (int64_t w = lo[2]; w < hi[2]; ++w) sum += x[size_t(r * P + (z * g.in[1] + y) * g.in[2] + w)];
          out.push_back(sum / double(dov ? dov : cip ? pool : cnt));
        }
  return out;
}

Tensor tensor(const std::vector<double>& v, const Shape& s) { return from_vector(v, s, device_under_test()); }

}  // namespace

TEST_CASE("MaxPool3d / AvgPool3d against float64 loops: padding, dilation, ceil_mode, indices, divisors") {
  const int64_t n = 2, c = 3;
  const I3 in{5, 6, 7};
  std::vector<double> xv = values(size_t(n * c * 210), 1);
  Tensor x = tensor(xv, {n, c, 5, 6, 7});
  for (bool ceil : {false, true}) {
    INFO("ceil_mode " << ceil);
    const Pool g{in, {3, 2, 3}, {2, 2, 2}, {1, 0, 1}, {1, 2, 1}, ceil};
    std::vector<double> mv, mi;
    ref_max(xv, n * c, g, &mv, &mi);
    MaxPool3d mp(MaxPool3dOptions({3, 2, 3}).stride(2).padding({1, 0, 1}).dilation({1, 2, 1}).ceil_mode(ceil));
    auto [v, idx] = mp->forward_with_indices(x);
    CHECK(v.sizes() == Shape{n, c, g.out(0), g.out(1), g.out(2)});
    CHECK(idx.dtype() == kInt64);
    check_close(v, mv, 0);
    check_close(idx, mi, 0);
    check_close(mp(x[1]), std::vector<double>(mv.begin() + c * g.outs(), mv.end()), 0);  // unbatched
    const Pool ga{in, {3, 3, 2}, {2, 1, 3}, {1, 1, 0}, {1, 1, 1}, ceil};
    for (bool cip : {true, false}) {
      auto opt = AvgPool3dOptions({3, 3, 2}).stride({2, 1, 3}).padding({1, 1, 0}).ceil_mode(ceil).count_include_pad(cip);
      check_close(AvgPool3d(opt)(x), ref_avg(xv, n * c, ga, cip, 0), 1e-12);
    }
    check_close(F::avg_pool3d(x, F::AvgPool3dFuncOptions({3, 3, 2}).stride({2, 1, 3}).padding({1, 1, 0})
                                     .ceil_mode(ceil).divisor_override(5)),
                ref_avg(xv, n * c, ga, true, 5), 1e-12);
  }
  // float32 (the kernels' other dtype) agrees.
  CHECK(test::max_abs_diff(F::max_pool3d(x.to(kFloat32), F::MaxPool3dFuncOptions(2)), F::max_pool3d(x, Size3(2))) < 1e-6);
  // Gradients: max (distinct values), average with padding and ceil_mode.
  Tensor xg = tensor(values(size_t(1 * 2 * 4 * 5 * 4), 2), {1, 2, 4, 5, 4}).requires_grad_();
  check_grad([](const std::vector<Tensor>& t) {
    return F::max_pool3d(t[0], F::MaxPool3dFuncOptions({2, 3, 2}).stride({1, 2, 2}).padding({1, 1, 0}).ceil_mode(true));
  }, {xg});
  check_grad([](const std::vector<Tensor>& t) {
    return F::avg_pool3d(t[0], F::AvgPool3dFuncOptions({2, 3, 3}).stride(2).padding(1).ceil_mode(true)
                                   .count_include_pad(false));
  }, {xg});
}

TEST_CASE("AdaptiveAvgPool3d / AdaptiveMaxPool3d against float64 loops, indices, gradients") {
  const int64_t n = 2, c = 2, D = 5, H = 4, W = 7;
  std::vector<double> xv = values(size_t(n * c * D * H * W), 3);
  Tensor x = tensor(xv, {n, c, D, H, W});
  const I3 o{3, 2, 4}, in{D, H, W};
  std::vector<double> aa, am, ai;
  for (int64_t r = 0; r < n * c; ++r)
    for (int64_t a = 0; a < o[0]; ++a)
      for (int64_t b = 0; b < o[1]; ++b)
        for (int64_t e = 0; e < o[2]; ++e) {
          const I3 oi{a, b, e};
          I3 lo, hi;
          for (size_t q = 0; q < 3; ++q)
            lo[q] = oi[q] * in[q] / o[q], hi[q] = ((oi[q] + 1) * in[q] + o[q] - 1) / o[q];
          double sum = 0, best = -INFINITY;
          int64_t arg = -1, cnt = 0;
          for (int64_t z = lo[0]; z < hi[0]; ++z)
            for (int64_t y = lo[1]; y < hi[1]; ++y)
              for (int64_t w = lo[2]; w < hi[2]; ++w) {
                const int64_t f = (z * H + y) * W + w;
                const double v = xv[size_t(r * D * H * W + f)];
                sum += v, ++cnt;
                if (v > best) best = v, arg = f;
              }
          aa.push_back(sum / double(cnt)), am.push_back(best), ai.push_back(double(arg));
        }
  check_close(AdaptiveAvgPool3d(Size3(3, 2, 4))(x), aa, 1e-12);
  auto [v, idx] = AdaptiveMaxPool3d(Size3(3, 2, 4))->forward_with_indices(x);
  check_close(v, am, 0);
  check_close(idx, ai, 0);
  CHECK(F::adaptive_max_pool3d(x[0], Size3(3, 2, 4)).sizes() == Shape{c, 3, 2, 4});  // unbatched
  Tensor xg = tensor(values(size_t(1 * 2 * 3 * 4 * 5), 4), {1, 2, 3, 4, 5}).requires_grad_();
  check_grad([](const std::vector<Tensor>& t) { return F::adaptive_avg_pool3d(t[0], Size3(2, 3, 2)); }, {xg});
  check_grad([](const std::vector<Tensor>& t) { return F::adaptive_max_pool3d(t[0], Size3(2, 2, 3)); }, {xg});
}

TEST_CASE("MaxUnpool1d / 2d / 3d undo the max pools; LPPool1d / 2d / 3d against float64 loops") {
  std::vector<double> xv = values(2 * 3 * 4 * 6 * 6, 5);
  {  // 3-D: unpool puts every maximum back at its index, zeros elsewhere.
    Tensor x = tensor(xv, {2, 3, 4, 6, 6});
    auto [v, idx] = F::max_pool3d_with_indices(x, F::MaxPool3dFuncOptions(2).stride(2));
    Tensor u = MaxUnpool3d(MaxUnpool3dOptions(2).stride(2))(v, idx);
    CHECK(u.sizes() == x.sizes());
    std::vector<double> want(xv.size(), 0.0), vv = v.to_vector<double>(), iv = idx.to(kFloat64).to_vector<double>();
    for (size_t i = 0; i < vv.size(); ++i) want[size_t(i / 18) * 144 + size_t(iv[i])] = vv[i];
    check_close(u, want, 0);
    const Tensor saved_idx = idx;
    check_grad([saved_idx](const std::vector<Tensor>& t) {
      return F::max_unpool3d(t[0], saved_idx, F::MaxUnpool3dFuncOptions(2).stride(2));
    }, {v.detach().requires_grad_()});
  }
  {  // 2-D with an output_size one larger than the default; 1-D unbatched.
    Tensor x = tensor(std::vector<double>(xv.begin(), xv.begin() + 2 * 3 * 5 * 5), {2, 3, 5, 5});
    auto [v, idx] = max_pool2d_with_indices(x, 2, 2);
    Tensor u = F::max_unpool2d(v, idx, F::MaxUnpool2dFuncOptions(2).stride(2).output_size(std::vector<int64_t>{5, 5}));
    CHECK(u.sizes() == x.sizes());
    CHECK(sum(u).item<double>() == Approx(sum(v).item<double>()));
    CHECK(test::max_abs_diff(gather(u.reshape({2, 3, 25}), 2, idx.reshape({2, 3, 4})).view(v.sizes()), v) == 0);
    Tensor x1 = tensor(std::vector<double>(xv.begin(), xv.begin() + 3 * 8), {3, 8});
    auto [v1, i1] = F::max_pool1d_with_indices(x1, F::MaxPool1dFuncOptions(2));
    Tensor u1 = MaxUnpool1d(MaxUnpool1dOptions(2))(v1, i1);
    CHECK(u1.sizes() == Shape{3, 8});
    CHECK(test::max_abs_diff(gather(u1, 1, i1), v1) == 0);
    CHECK(sum(u1).item<double>() == Approx(sum(v1).item<double>()));
  }
  // LPPool: (average of x^p over the window * its full size)^(1/p), PyTorch's formula (a ceil_mode window cut at
  // the input's end is averaged over what is left), on positive values.
  std::vector<double> pos;
  for (double v : xv) pos.push_back(std::fabs(v) + 0.1);
  const std::vector<double> pos2 = [&] {
    std::vector<double> p2;
    for (size_t i = 0; i < 288; ++i) p2.push_back(pos[i] * pos[i]);
    return p2;
  }();
  auto ref_lp = [&](const Pool& g, int64_t planes, double window) {
    std::vector<double> s = ref_avg(pos2, planes, g, true, 0);
    for (double& e : s) e = std::sqrt(e * window);
    return s;
  };
  Tensor x3 = tensor(std::vector<double>(pos.begin(), pos.begin() + 288), {2, 1, 4, 6, 6});
  check_close(LPPool1d(LPPool1dOptions(2, 3).stride(2).ceil_mode(true))(x3.reshape({2, 1, 144})),
              ref_lp(Pool{{1, 1, 144}, {1, 1, 3}, {1, 1, 2}, {0, 0, 0}, {1, 1, 1}, true}, 2, 3), 1e-10);
  check_close(F::lp_pool2d(x3.reshape({8, 6, 6}), F::LPPool2dFuncOptions(2, 3).stride(2).ceil_mode(true)),
              ref_lp(Pool{{1, 6, 6}, {1, 3, 3}, {1, 2, 2}, {0, 0, 0}, {1, 1, 1}, true}, 8, 9), 1e-10);  // unbatched
  check_close(LPPool3d(LPPool3dOptions(2, {2, 3, 3}).stride(2))(x3),
              ref_lp(Pool{{4, 6, 6}, {2, 3, 3}, {2, 2, 2}}, 2, 18), 1e-10);
  check_grad([](const std::vector<Tensor>& t) {
    return F::lp_pool2d(t[0], F::LPPool2dFuncOptions(3, {2, 3}).stride(1));
  }, {tensor(std::vector<double>(pos.begin(), pos.begin() + 2 * 4 * 5), {1, 2, 4, 5}).requires_grad_()});
}

TEST_CASE("3-D pooling, unpooling and LPPool errors") {
  Device dev = device_under_test();
  Tensor x = zeros({1, 2, 4, 4, 4}, TensorOptions(dev));
  CHECK_THROWS_AS(MaxPool3d(MaxPool3dOptions(2).padding(2))(x), ValueError);     // padding above half the kernel
  CHECK_THROWS_AS(MaxPool3d(MaxPool3dOptions(5))(x), ShapeError);                // window larger than the input
  CHECK_THROWS_AS(MaxPool3d(2)(zeros({4, 4}, TensorOptions(dev))), ShapeError);   // dims
  CHECK_THROWS_AS(AvgPool3d(AvgPool3dOptions(2).divisor_override(0))(x), ValueError);
  CHECK_THROWS_AS(AvgPool3d(AvgPool3dOptions({2, 0, 2}))(x), ValueError);
  CHECK_THROWS_AS(AdaptiveAvgPool3d(Size3(0, 2, 2))(x), ValueError);
  CHECK_THROWS_AS(F::max_pool3d(zeros({1, 1, 2, 2, 2}, TensorOptions(dev).dtype(kInt64)), Size3(2)), DTypeError);
  auto [v, idx] = F::max_pool3d_with_indices(x, Size3(2));
  CHECK_THROWS_AS(MaxUnpool3d(2)(v, idx.to(kFloat32)), DTypeError);
  CHECK_THROWS_AS(MaxUnpool3d(2)(v, idx.narrow(2, 0, 1)), ShapeError);
  CHECK_THROWS_AS(MaxUnpool3d(2)(v, idx + 100), IndexError);
  CHECK_THROWS_AS(MaxUnpool3d(2)(v, idx, std::vector<int64_t>{8, 4, 4}), ValueError);  // not within stride of 4
  CHECK_THROWS_AS(LPPool2d(LPPool2dOptions(0, 2))(zeros({1, 1, 4, 4}, TensorOptions(dev))), ValueError);
}

namespace {
// PyTorch's fractional window starts (alpha = (in - k) / (out - 1); the last window ends at the input's end).
std::vector<int64_t> frac_starts(double u, int64_t in, int64_t out, int64_t k) {
  std::vector<int64_t> s;
  for (int64_t i = 0; i < out; ++i)
    s.push_back(i + 1 == out ? in - k
                             : int64_t(std::floor((double(i) + u) * double(in - k) / double(out - 1))) -
                                   int64_t(std::floor(u * double(in - k) / double(out - 1))));
  return s;
}
}  // namespace

TEST_CASE("FractionalMaxPool2d / 3d: PyTorch's windows from given samples, indices, gradients, errors") {
  Device dev = device_under_test();
  const int64_t n = 2, c = 3;
  const I3 in{5, 9, 8}, k{2, 2, 3}, out{2, 4, 3};
  std::vector<double> xv = values(size_t(n * c * 360), 40), uv = test::lcg_values(size_t(n * c * 3), 5, 41, 0, 1);
  for (int dims : {2, 3}) {
    INFO("dims " << dims);
    const int64_t P = dims == 3 ? 360 : 72, first = 3 - dims;
    std::vector<double> mv, mi, u2;
    for (int64_t r = 0; r < n * c; ++r) {
      std::vector<std::vector<int64_t>> st(3, std::vector<int64_t>{0});
      for (int a = first; a < 3; ++a) {
        u2.push_back(uv[size_t(r * 3 + a)]);
        st[size_t(a)] = frac_starts(uv[size_t(r * 3 + a)], in[size_t(a)], out[size_t(a)], k[size_t(a)]);
      }
      const I3 ou{dims == 3 ? out[0] : 1, out[1], out[2]}, ku{dims == 3 ? k[0] : 1, k[1], k[2]};
      const I3 iu{dims == 3 ? in[0] : 1, in[1], in[2]};
      for (int64_t a = 0; a < ou[0]; ++a)
        for (int64_t b = 0; b < ou[1]; ++b)
          for (int64_t e = 0; e < ou[2]; ++e) {
            double best = -INFINITY;
            int64_t arg = -1;
            for (int64_t i = 0; i < ku[0]; ++i)
              for (int64_t j = 0; j < ku[1]; ++j)
                for (int64_t l = 0; l < ku[2]; ++l) {
                  const int64_t f = ((st[0][size_t(a)] + i) * iu[1] + st[1][size_t(b)] + j) * iu[2] +
                                    st[2][size_t(e)] + l;
                  if (xv[size_t(r * P + f)] > best) best = xv[size_t(r * P + f)], arg = f;
                }
            mv.push_back(best), mi.push_back(double(arg));
          }
    }
    Tensor samples = tensor(u2, {n, c, dims});
    Tensor v, idx;
    if (dims == 2) {
      Tensor x = tensor(std::vector<double>(xv.begin(), xv.begin() + n * c * P), {n, c, 9, 8});
      std::tie(v, idx) = F::fractional_max_pool2d_with_indices(
          x, F::FractionalMaxPool2dFuncOptions({2, 3}).output_size(Size2(4, 3))._random_samples(samples));
      check_grad([samples](const std::vector<Tensor>& t) {
        return F::fractional_max_pool2d(t[0], F::FractionalMaxPool2dFuncOptions({2, 3}).output_size(Size2(4, 3))
                                                   ._random_samples(samples));
      }, {x.clone().requires_grad_()});
    } else {
      Tensor x = tensor(xv, {n, c, 5, 9, 8});
      FractionalMaxPool3d pool(FractionalMaxPool3dOptions({2, 2, 3}).output_ratio(std::vector<double>{0.5, 0.5, 0.4})
                                   ._random_samples(samples));
      std::tie(v, idx) = pool->forward_with_indices(x);
    }
    check_close(v, mv, 0);
    check_close(idx, mi, 0);
  }
  // Drawn samples: a Generator's draw, the values are the input's at the indices.
  Tensor x = tensor(xv, {n, c, 5, 9, 8});
  Generator gen(3);
  auto [v, idx] = F::fractional_max_pool3d_with_indices(x, F::FractionalMaxPool3dFuncOptions(2).output_size(Size3(3)),
                                                        &gen);
  CHECK(v.sizes() == Shape{n, c, 3, 3, 3});
  CHECK(test::max_abs_diff(gather(x.reshape({n, c, 360}), 2, idx.reshape({n, c, 27})).view(v.sizes()), v) == 0);
  CHECK(FractionalMaxPool2d(FractionalMaxPool2dOptions(2).output_ratio(std::vector<double>{0.5}))(x[0][0]).sizes() ==
        Shape{5, 4, 4});  // unbatched [C, H, W]
  CHECK_THROWS_AS(F::fractional_max_pool2d(x[0], F::FractionalMaxPool2dFuncOptions(2)), ValueError);  // neither
  CHECK_THROWS_AS(F::fractional_max_pool2d(x[0], F::FractionalMaxPool2dFuncOptions(2).output_size(Size2(9, 8))),
                  ShapeError);  // output + kernel - 1 beyond the input
  CHECK_THROWS_AS(F::fractional_max_pool3d(x, F::FractionalMaxPool3dFuncOptions(2).output_size(Size3(2))
                                                  ._random_samples(zeros({n, c, 2}, TensorOptions(dev)))),
                  ShapeError);
}
