// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Conv3d, ConvTranspose1d / 2d / 3d and Fold / Unfold: values against
// PyTorch's definitions in float64 loops (one 3-D reference; the 1-D and 2-D
// cases are 3-D with size-1 dims), float64 finite-difference gradients,
// state-dict keys and the typed errors, on the device under test.
#include <catch2/catch.hpp>

#include <array>
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

std::vector<double> values(size_t n, uint32_t salt) { return test::lcg_values(n, 29, salt, -2.0, 2.0); }

using test::check_close;
using test::check_grad;

// One 3-D geometry: input spatial sizes, kernel, stride, padding, dilation.
struct Geo {
  I3 in, k, s{1, 1, 1}, p{0, 0, 0}, d{1, 1, 1};
};

int64_t prod(const I3& a) { return a[0] * a[1] * a[2]; }
int64_t flat(const I3& i, const I3& n) { return (i[0] * n[1] + i[1]) * n[2] + i[2]; }

// Visits every (output position o, kernel tap t, input position i) of a convolution over `in` with zero padding:
// i = o * s - p + t * d, inside the input.
template <class Fn>
void for_taps(const Geo& g, const I3& out, Fn fn) {
  for (int64_t o = 0; o < prod(out); ++o)
    for (int64_t t = 0; t < prod(g.k); ++t) {
      const I3 oi{o / (out[1] * out[2]), (o / out[2]) % out[1], o % out[2]};
      const I3 ti{t / (g.k[1] * g.k[2]), (t / g.k[2]) % g.k[1], t % g.k[2]};
      I3 ii;
      bool inside = true;
      for (int a = 0; a < 3; ++a) {
        ii[size_t(a)] = oi[size_t(a)] * g.s[size_t(a)] - g.p[size_t(a)] + ti[size_t(a)] * g.d[size_t(a)];
        inside = inside && ii[size_t(a)] >= 0 && ii[size_t(a)] < g.in[size_t(a)];
      }
      if (inside) fn(o, t, flat(ii, g.in));
    }
}

I3 conv_out(const Geo& g) {
  I3 o;
  for (size_t a = 0; a < 3; ++a) o[a] = (g.in[a] + 2 * g.p[a] - g.d[a] * (g.k[a] - 1) - 1) / g.s[a] + 1;
  return o;
}

// conv3d: x [n, c, in], w [o, c/groups, k], b [o] or empty.
std::vector<double> ref_conv(const std::vector<double>& x, const std::vector<double>& w, const std::vector<double>& b,
                             int64_t n, int64_t c, int64_t o, int64_t groups, const Geo& g) {
  const I3 out = conv_out(g);
  const int64_t cg = c / groups, og = o / groups, L = prod(out), K = prod(g.k), P = prod(g.in);
  std::vector<double> y(size_t(n * o * L));
  for (int64_t ni = 0; ni < n; ++ni)
    for (int64_t oc = 0; oc < o; ++oc) {
      double* row = &y[size_t((ni * o + oc) * L)];
      for (int64_t l = 0; l < L; ++l) row[l] = b.empty() ? 0.0 : b[size_t(oc)];
      for (int64_t ci = 0; ci < cg; ++ci) {
        const int64_t cin = (oc / og) * cg + ci;
        for_taps(g, out, [&](int64_t ol, int64_t t, int64_t il) {
          row[ol] += w[size_t((oc * cg + ci) * K + t)] * x[size_t((ni * c + cin) * P + il)];
        });
      }
    }
  return y;
}

// conv_transpose3d: x [n, c, in] is the convolution's output side; w [c, o/groups, k]; the output has spatial sizes
// `out` (the convolution's input side, output_padding included). y[i*s - p + t*d] += x[i] * w[t].
std::vector<double> ref_conv_t(const std::vector<double>& x, const std::vector<double>& w,
                               const std::vector<double>& b, int64_t n, int64_t c, int64_t o, int64_t groups,
                               const Geo& g, const I3& out) {
  Geo cg = g;  // the convolution whose output is x's grid: its input is `out`
  cg.in = out;
  const int64_t og = o / groups, ci_g = c / groups, L = prod(out), K = prod(g.k), P = prod(g.in);
  std::vector<double> y(size_t(n * o * L));
  for (int64_t ni = 0; ni < n; ++ni)
    for (int64_t oc = 0; oc < o; ++oc) {
      double* row = &y[size_t((ni * o + oc) * L)];
      for (int64_t l = 0; l < L; ++l) row[l] = b.empty() ? 0.0 : b[size_t(oc)];
      const int64_t grp = oc / og;
      for (int64_t ci = 0; ci < ci_g; ++ci) {
        const int64_t cin = grp * ci_g + ci;
        for_taps(cg, g.in, [&](int64_t xl, int64_t t, int64_t yl) {
          row[yl] += w[size_t((cin * og + oc % og) * K + t)] * x[size_t((ni * c + cin) * P + xl)];
        });
      }
    }
  return y;
}

Tensor tensor(const std::vector<double>& v, const Shape& s) { return from_vector(v, s, device_under_test()); }

void set_param(Tensor& p, const std::vector<double>& v) {
  NoGradGuard ng;
  p.copy_(from_vector(v, p.sizes(), p.device()).to(p.dtype()));
}

}  // namespace

TEST_CASE("Unfold / Fold: PyTorch's column order, the adjoint pair, gradients, errors") {
  Device dev = device_under_test();
  const int64_t n = 2, c = 3, h = 5, w = 6;
  std::vector<double> xv = values(size_t(n * c * h * w), 1);
  Tensor x = tensor(xv, {n, c, h, w});
  // kernel (2, 3), stride (2, 1), padding (1, 1), dilation (1, 2): one row per (c, ki, kj), one column per block.
  const Geo g{{1, h, w}, {1, 2, 3}, {1, 2, 1}, {0, 1, 1}, {1, 1, 2}};
  const I3 out = conv_out(g);
  const int64_t K = prod(g.k), L = prod(out);
  std::vector<double> want(size_t(n * c * K * L), 0.0);
  for (int64_t r = 0; r < n * c; ++r)
    for_taps(g, out, [&](int64_t l, int64_t t, int64_t il) {
      want[size_t((r * K + t) * L + l)] = xv[size_t(r * h * w + il)];
    });
  auto uo = F::UnfoldFuncOptions({2, 3}).stride({2, 1}).padding(1).dilation({1, 2});
  Tensor cols = F::unfold(x, uo);
  CHECK(cols.sizes() == Shape{n, c * K, L});
  check_close(cols, want, 0);
  check_close(Unfold(uo)(x[0]), std::vector<double>(want.begin(), want.begin() + c * K * L), 0);  // unbatched
  // fold sums every column entry back where unfold took it from.
  std::vector<double> cv = values(size_t(n * c * K * L), 2), back(size_t(n * c * h * w), 0.0);
  for (int64_t r = 0; r < n * c; ++r)
    for_taps(g, out, [&](int64_t l, int64_t t, int64_t il) {
      back[size_t(r * h * w + il)] += cv[size_t((r * K + t) * L + l)];
    });
  auto fo = F::FoldFuncOptions({h, w}, {2, 3}).stride({2, 1}).padding(1).dilation({1, 2});
  check_close(Fold(fo)(tensor(cv, {n, c * K, L})), back, 1e-12);
  check_grad([uo](const std::vector<Tensor>& t) { return F::unfold(t[0], uo); }, {x.clone().requires_grad_()});
  check_grad([fo](const std::vector<Tensor>& t) { return F::fold(t[0], fo); },
             {tensor(cv, {n, c * K, L}).requires_grad_()});
  // float32 too (the kernels' other dtype).
  CHECK(test::max_abs_diff(F::unfold(x.to(kFloat32), uo), cols) < 1e-6);
  CHECK_THROWS_AS(F::fold(tensor(cv, {n, c * K + 1, L}), fo), ShapeError);   // rows not a multiple of kh*kw
  CHECK_THROWS_AS(F::fold(tensor(cv, {n, c * K, L - 1}), fo), ShapeError);  // blocks do not match output_size
  CHECK_THROWS_AS(F::unfold(x, F::UnfoldFuncOptions(7)), ShapeError);        // kernel larger than the image
  CHECK_THROWS_AS(F::unfold(x, F::UnfoldFuncOptions(2).stride(0)), ValueError);
  CHECK_THROWS_AS(F::unfold(zeros({2, 3}, TensorOptions(dev)), uo), ShapeError);
  CHECK_THROWS_AS(F::unfold(zeros({1, 1, 4, 4}, TensorOptions(dev).dtype(kInt64)), uo), DTypeError);
}

TEST_CASE("Conv3d: strides, padding, dilation, groups, bias, same / valid and padding modes against float64 loops") {
  Device dev = device_under_test();
  const int64_t n = 2, c = 4, o = 6;
  const Geo g{{4, 5, 4}, {2, 3, 2}, {2, 1, 2}, {1, 1, 0}, {1, 2, 1}};
  std::vector<double> xv = values(size_t(n * c * prod(g.in)), 3), wv = values(size_t(o * 2 * prod(g.k)), 4),
                      bv = values(size_t(o), 5);
  Tensor x = tensor(xv, {n, c, 4, 5, 4});
  Conv3d conv(Conv3dOptions(4, 6, {2, 3, 2}).stride({2, 1, 2}).padding(Size3(1, 1, 0)).dilation({1, 2, 1}).groups(2));
  CHECK(conv->state_dict().size() == 2);
  CHECK(conv->weight.sizes() == Shape{6, 2, 2, 3, 2});
  conv->to(dev, kFloat64);
  set_param(conv->weight, wv);
  set_param(conv->bias, bv);
  const I3 out = conv_out(g);
  Tensor y = conv(x);
  CHECK(y.sizes() == Shape{n, o, out[0], out[1], out[2]});
  check_close(y, ref_conv(xv, wv, bv, n, c, o, 2, g), 1e-10);
  check_close(conv(x[1]), ref_conv(std::vector<double>(xv.begin() + c * prod(g.in), xv.end()), wv, bv, 1, c, o, 2, g),
              1e-10);  // unbatched
  // float32 (oneDNN on the CPU where it runs).
  conv->to(kFloat32);
  CHECK(test::max_abs_diff(conv(x.to(kFloat32)), y) < 1e-4);
  {  // "same" with even kernels: the extra zero after, as PyTorch; no bias.
    Conv3d same(Conv3dOptions(4, 3, {2, 3, 4}).padding(kSame).bias(false));
    same->to(dev, kFloat64);
    std::vector<double> w2 = values(size_t(3 * 4 * 24), 6);
    set_param(same->weight, w2);
    std::vector<double> padded;  // pad (0, 1), (1, 1), (1, 2) with zeros, then a valid convolution
    const I3 pin{5, 7, 7};
    for (int64_t r = 0; r < n * c; ++r)
      for (int64_t a = 0; a < prod(pin); ++a) {
        const int64_t i = a / 49, j = (a / 7) % 7 - 1, l = a % 7 - 1;
        padded.push_back(i < 4 && j >= 0 && j < 5 && l >= 0 && l < 4 ? xv[size_t(r * 80 + (i * 5 + j) * 4 + l)] : 0);
      }
    Tensor ys = same(x);
    CHECK(ys.sizes() == Shape{n, 3, 4, 5, 4});
    check_close(ys, ref_conv(padded, w2, {}, n, c, 3, 1, Geo{pin, {2, 3, 4}}), 1e-10);
    Conv3d valid(Conv3dOptions(4, 3, 2).padding("valid"));
    valid->to(dev);
    CHECK(valid(x.to(kFloat32)).sizes() == Shape{n, 3, 3, 4, 3});
  }
  {  // circular padding_mode: the wrapped input convolved without padding.
    Conv3d circ(Conv3dOptions(4, 2, 3).padding(1).padding_mode(kCircular));
    circ->to(dev, kFloat64);
    std::vector<double> w3 = values(size_t(2 * 4 * 27), 7), b3 = values(2, 8), padded;
    set_param(circ->weight, w3);
    set_param(circ->bias, b3);
    const I3 pin{6, 7, 6};
    auto wrap = [](int64_t i, int64_t m) { return (i + m) % m; };
    for (int64_t r = 0; r < n * c; ++r)
      for (int64_t a = 0; a < prod(pin); ++a) {
        const int64_t i = wrap(a / 42 - 1, 4), j = wrap((a / 6) % 7 - 1, 5), l = wrap(a % 6 - 1, 4);
        padded.push_back(xv[size_t(r * 80 + (i * 5 + j) * 4 + l)]);
      }
    check_close(circ(x), ref_conv(padded, w3, b3, n, c, 2, 1, Geo{pin, {3, 3, 3}}), 1e-10);
  }
  Tensor xg = tensor(values(size_t(1 * 4 * 3 * 4 * 3), 9), {1, 4, 3, 4, 3}).requires_grad_();
  Tensor wg = tensor(values(size_t(4 * 2 * 2 * 2 * 2), 10), {4, 2, 2, 2, 2}).requires_grad_();
  Tensor bg = tensor(values(4, 11), {4}).requires_grad_();
  check_grad([](const std::vector<Tensor>& t) {
    return F::conv3d(t[0], t[1], F::Conv3dFuncOptions().bias(t[2]).stride({2, 1, 1}).padding(1).dilation({1, 2, 1})
                                     .groups(2));
  }, {xg, wg, bg});
  check_grad([](const std::vector<Tensor>& t) { return F::conv3d(t[0], t[1], F::Conv3dFuncOptions().padding(kSame)); },
             {xg, tensor(values(size_t(3 * 4 * 8), 12), {3, 4, 2, 2, 2}).requires_grad_()});
}

TEST_CASE("Conv3d errors: groups, same with stride, channels, dims") {
  Device dev = device_under_test();
  CHECK_THROWS_WITH(Conv3d(Conv3dOptions(4, 6, 3).groups(4)), Catch::Contains("divisible by groups"));
  CHECK_THROWS_AS(Conv3d(Conv3dOptions(4, 6, 3).padding(kSame).stride({1, 2, 1})), ValueError);
  CHECK_THROWS_AS(Conv3d(Conv3dOptions(4, 6, {3, 0, 3})), ValueError);
  CHECK_THROWS_AS(Conv3dOptions(1, 1, 1).padding("full"), ValueError);
  Conv3d conv(Conv3dOptions(4, 6, 3));
  conv->to(dev);
  CHECK_THROWS_AS(conv(zeros({2, 5, 4, 4, 4}, TensorOptions(dev))), ShapeError);   // channels
  CHECK_THROWS_AS(conv(zeros({2, 4, 4, 4}, TensorOptions(dev)).unsqueeze(0).unsqueeze(0)), ShapeError);  // 6-D
  CHECK_THROWS_AS(conv(zeros({2, 4, 2, 4, 4}, TensorOptions(dev))), ShapeError);   // kernel deeper than the input
  CHECK_THROWS_AS(F::conv3d(zeros({2, 4, 4, 4, 4}, TensorOptions(dev)), zeros({6, 4, 3, 3}, TensorOptions(dev))),
                  ShapeError);
}

TEST_CASE("ConvTranspose1d / 2d / 3d against float64 loops: stride, padding, output_padding, groups, dilation") {
  Device dev = device_under_test();
  const int64_t n = 2, c = 4, o = 6;
  struct Case {
    int dims;
    Geo g;  // in: the transposed conv's input grid (size-1 dims for 1-D / 2-D)
    I3 op;
  };
  const Case cases[] = {
      {1, {{1, 1, 5}, {1, 1, 3}, {1, 1, 2}, {0, 0, 1}, {1, 1, 2}}, {0, 0, 1}},
      {2, {{1, 3, 4}, {1, 3, 2}, {1, 2, 3}, {0, 1, 0}, {1, 1, 2}}, {0, 1, 2}},
      {3, {{3, 2, 3}, {2, 2, 3}, {2, 1, 2}, {1, 0, 1}, {1, 2, 1}}, {1, 0, 1}},
      {2, {{1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 2, 0}, {1, 3, 3}}, {0, 2, 1}},  // output_padding >= stride, < dilation
  };
  for (const Case& cs : cases) {
    INFO("dims " << cs.dims);
    const Geo& g = cs.g;
    I3 out;
    for (size_t a = 0; a < 3; ++a)
      out[a] = (g.in[a] - 1) * g.s[a] - 2 * g.p[a] + g.d[a] * (g.k[a] - 1) + cs.op[a] + 1;
    std::vector<double> xv = values(size_t(n * c * prod(g.in)), 20), wv = values(size_t(c * 3 * prod(g.k)), 21),
                        bv = values(size_t(o), 22);
    const auto want = ref_conv_t(xv, wv, bv, n, c, o, 2, g, out);
    auto shape = [&](int64_t a, int64_t b, const I3& sp) {
      std::vector<int64_t> s{a, b};
      for (int i = 3 - cs.dims; i < 3; ++i) s.push_back(sp[size_t(i)]);
      return Shape(s);
    };
    Tensor x = tensor(xv, shape(n, c, g.in)), w = tensor(wv, shape(c, 3, g.k)), b = tensor(bv, {o});
    Tensor y;
    if (cs.dims == 1) {
      ConvTranspose1d m(ConvTranspose1dOptions(c, o, g.k[2]).stride(g.s[2]).padding(g.p[2])
                            .output_padding(cs.op[2]).dilation(g.d[2]).groups(2));
      CHECK(m->weight.sizes() == Shape{c, 3, g.k[2]});
      m->to(dev, kFloat64);
      set_param(m->weight, wv);
      set_param(m->bias, bv);
      y = m(x);
      check_close(m->forward(x, {out[2]}), want, 1e-10);  // output_size picks the same output_padding
    } else if (cs.dims == 2) {
      y = F::conv_transpose2d(x, w, F::ConvTranspose2dFuncOptions().bias(b).stride({g.s[1], g.s[2]})
                                        .padding({g.p[1], g.p[2]}).output_padding({cs.op[1], cs.op[2]})
                                        .dilation({g.d[1], g.d[2]}).groups(2));
    } else {
      ConvTranspose3d m(ConvTranspose3dOptions(c, o, {g.k[0], g.k[1], g.k[2]}).stride({g.s[0], g.s[1], g.s[2]})
                            .padding({g.p[0], g.p[1], g.p[2]}).output_padding({cs.op[0], cs.op[1], cs.op[2]})
                            .dilation({g.d[0], g.d[1], g.d[2]}).groups(2));
      CHECK(m->state_dict().size() == 2);
      m->to(dev, kFloat64);
      set_param(m->weight, wv);
      set_param(m->bias, bv);
      y = m(x);
      check_close(m(x[0]), std::vector<double>(want.begin(), want.begin() + o * prod(out)), 1e-10);  // unbatched
    }
    CHECK(y.sizes() == shape(n, o, out));
    check_close(y, want, 1e-10);
    check_close(y.to(kFloat32), want, 1e-4);
  }
}

TEST_CASE("ConvTranspose gradients (float64 finite differences) and errors") {
  Device dev = device_under_test();
  Tensor b = tensor(values(4, 33), {4}).requires_grad_();
  check_grad([](const std::vector<Tensor>& t) {
    return F::conv_transpose1d(t[0], t[1], F::ConvTranspose1dFuncOptions().bias(t[2]).stride(2).padding(1)
                                               .output_padding(1).groups(2).dilation(2));
  }, {tensor(values(2 * 4 * 4, 30), {2, 4, 4}).requires_grad_(),
      tensor(values(4 * 2 * 3, 31), {4, 2, 3}).requires_grad_(), b});
  check_grad([](const std::vector<Tensor>& t) {
    return F::conv_transpose2d(t[0], t[1], F::ConvTranspose2dFuncOptions().stride({2, 1}).padding({0, 1})
                                               .output_padding({1, 0}));
  }, {tensor(values(1 * 2 * 3 * 3, 34), {1, 2, 3, 3}).requires_grad_(),
      tensor(values(2 * 3 * 2 * 3, 35), {2, 3, 2, 3}).requires_grad_()});
  check_grad([](const std::vector<Tensor>& t) {
    return F::conv_transpose2d(t[0], t[1], F::ConvTranspose2dFuncOptions().dilation(2).output_padding(1));
  }, {tensor(values(1 * 2 * 3 * 3, 36), {1, 2, 3, 3}).requires_grad_(),
      tensor(values(2 * 2 * 2 * 2, 37), {2, 2, 2, 2}).requires_grad_()});
  check_grad([](const std::vector<Tensor>& t) {
    return F::conv_transpose3d(t[0], t[1], F::ConvTranspose3dFuncOptions().bias(t[2]).stride({2, 1, 2}).padding(1)
                                               .output_padding({1, 0, 0}).groups(2));
  }, {tensor(values(1 * 4 * 2 * 3 * 2, 38), {1, 4, 2, 3, 2}).requires_grad_(),
      tensor(values(4 * 2 * 2 * 2 * 3, 39), {4, 2, 2, 2, 3}).requires_grad_(), b});
  // Errors: output_padding not below stride or dilation, groups, channels, bias, padding mode.
  CHECK_THROWS_WITH(ConvTranspose2d(ConvTranspose2dOptions(4, 4, 3).stride(2).output_padding(2)),
                    Catch::Contains("output_padding"));
  CHECK_THROWS_AS(ConvTranspose1d(ConvTranspose1dOptions(4, 6, 3).groups(4)), ValueError);
  CHECK_THROWS_AS(ConvTranspose3d(ConvTranspose3dOptions(4, 6, 3).padding_mode(kReflect)), ValueError);
  Tensor x = zeros({1, 4, 3, 3}, TensorOptions(dev)), w = zeros({4, 2, 3, 3}, TensorOptions(dev));
  CHECK_THROWS_AS(F::conv_transpose2d(x, w, F::ConvTranspose2dFuncOptions().groups(3)), ValueError);
  CHECK_THROWS_AS(F::conv_transpose2d(zeros({1, 3, 3, 3}, TensorOptions(dev)), w), ShapeError);
  CHECK_THROWS_AS(F::conv_transpose2d(x, w, F::ConvTranspose2dFuncOptions().bias(zeros({3}, TensorOptions(dev)))),
                  ShapeError);
  CHECK_THROWS_AS(F::conv_transpose2d(x, w, F::ConvTranspose2dFuncOptions().stride(1).output_padding(1)), ValueError);
  CHECK_THROWS_AS(F::conv_transpose2d(x, w, F::ConvTranspose2dFuncOptions().padding(3)), ShapeError);  // empty output
  CHECK_THROWS_AS(F::conv_transpose3d(x, zeros({4, 2, 3, 3, 3}, TensorOptions(dev))), ShapeError);
  ConvTranspose2d up(ConvTranspose2dOptions(4, 2, 3).stride(2));
  up->to(dev);
  CHECK(up->forward(x, {8, 8}).sizes() == Shape{1, 2, 8, 8});
  CHECK_THROWS_AS(up->forward(x, {9, 7}), ValueError);  // 9 is not reachable with stride 2
}
