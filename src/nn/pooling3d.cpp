// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The pools of include/vnn/nn/pooling3d.h. A box window is separable: the
// 3-D pools run the 2-D pool op over (H, W) of every depth, then over depth
// on [N, C, D, OH*OW] with a (kd, 1) window; both passes have kernels on
// every device and a backward, so no kernel of their own is needed. The max
// of maxima picks the first maximum in (d, h, w) order, as PyTorch's scan.
// The averages are window sums (divisor_override 1) divided by PyTorch's
// divisors per output, which are products of per-dim counts. ceil_mode
// extends the input past its end by what the last window needs (-inf for
// max, zeros for average; the divisors ignore the extension).
#include "vnn/nn/pooling3d.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include "nn/conv_nd.hpp"
#include "vnn/elementwise.h"
#include "vnn/indexing.h"
#include "vnn/nn/functional.h"
#include "vnn/nn_ops.h"

namespace vnn::nn {

using conv_nd::Dims;
using conv_nd::text;

namespace {

struct PoolGeom {
  Dims in, k, s, p, d, out, ext;  // ext: what ceil_mode's last window reaches past the padded input
};

// PyTorch's pooling_output_shape per dim, with its checks (n = k.size() spatial dims at the end of x).
PoolGeom pool_geometry(const char* op, const Tensor& x, const Dims& k, Dims s, const Dims& p, const Dims& d,
                       bool ceil_mode) {
  const size_t n = k.size();
  conv_nd::check_positive(op, "kernel_size", k);
  if (std::all_of(s.begin(), s.end(), [](int64_t v) { return v == 0; })) s = k;
  conv_nd::check_positive(op, "stride", s);
  conv_nd::check_positive(op, "dilation", d);
  PoolGeom g{Dims(n), k, s, p, d, Dims(n), Dims(n)};
  for (size_t i = 0; i < n; ++i) {
    VNN_CHECK(ValueError, p[i] >= 0 && 2 * p[i] <= k[i], op, ": padding ", text(p),
              " must be non-negative and at most half the kernel_size ", text(k));
    g.in[i] = x.size(int(x.dim() - int64_t(n) + int64_t(i)));
    const int64_t span = d[i] * (k[i] - 1) + 1, room = g.in[i] + 2 * p[i] - span;
    VNN_CHECK(ShapeError, room >= 0 && g.in[i] > 0, op, ": the window ", text(k), " (dilation ", text(d),
              ") is larger than the padded input ", x.sizes(), " with padding ", text(p));
    g.out[i] = (ceil_mode ? (room + s[i] - 1) / s[i] : room / s[i]) + 1;
    if (ceil_mode && (g.out[i] - 1) * s[i] >= g.in[i] + p[i]) --g.out[i];  // the last window must start inside
    g.ext[i] = std::max<int64_t>(0, (g.out[i] - 1) * s[i] + span - (g.in[i] + 2 * p[i]));
  }
  return g;
}

// x extended past its end by g.ext with `fill`.
Tensor extend(const Tensor& x, const PoolGeom& g, double fill) {
  if (std::all_of(g.ext.begin(), g.ext.end(), [](int64_t v) { return v == 0; })) return x;
  return functional::pad(x, functional::PadFuncOptions(conv_nd::pad_pairs(Dims(g.ext.size(), 0), g.ext)).value(fill));
}

// An int64 table on x's device: t[j] = f(j), j < n (the index arithmetic of the joined max indices).
template <class Fn>
Tensor index_table(const Tensor& x, int64_t n, Fn f) {
  std::vector<int64_t> t(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) t[size_t(j)] = f(j);
  return from_vector(t, {n}, x.device());
}

// The flat index d * H * W + h * W + w of the maximum, from the (H, W) pass's indices i1 ([N, C*De, OH, OW], into
// the He x We planes) and the depth pass's i2 ([N, C, OD, P], P = OH*OW, d * P + j).
Tensor join_indices(const Tensor& i1, const Tensor& i2, const Dims& in, int64_t He, int64_t We) {
  const int64_t N = i2.size(0), C = i2.size(1), P = i2.size(3), De = i1.size(1) / C;
  Tensor hw = gather(i1.reshape({N, C, De * P}), 2, i2.reshape({N, C, i2.size(2) * P})).flatten();
  Tensor depth = index_table(i2, De * P, [&](int64_t j) { return (j / P) * in[1] * in[2]; });
  if (We != in[2]) hw = index_select(index_table(i2, He * We, [&](int64_t j) { return (j / We) * in[2] + j % We; }),
                                     0, hw);
  return (index_select(depth, 0, i2.flatten()) + hw).view(i2.sizes());
}

std::tuple<Tensor, Tensor> max_pool3d_impl(const Tensor& x, const PoolGeom& g) {
  const int64_t N = x.size(0), C = x.size(1);
  Tensor xe = extend(x, g, -std::numeric_limits<double>::infinity());
  const int64_t De = xe.size(2), He = xe.size(3), We = xe.size(4);
  auto [v1, i1] = max_pool2d_with_indices(xe.reshape({N, C * De, He, We}), Size2(g.k[1], g.k[2]),
                                          Size2(g.s[1], g.s[2]), Size2(g.p[1], g.p[2]), Size2(g.d[1], g.d[2]));
  const int64_t OH = v1.size(2), OW = v1.size(3);
  auto [v2, i2] = max_pool2d_with_indices(v1.reshape({N, C, De, OH * OW}), Size2(g.k[0], 1), Size2(g.s[0], 1),
                                          Size2(g.p[0], 0), Size2(g.d[0], 1));
  const Shape out{N, C, v2.size(2), OH, OW};
  return {v2.view(out), join_indices(i1, i2, g.in, He, We).view(out)};
}

// PyTorch's avg_pool divisor per output position along one dim.
std::vector<double> avg_divisors(const PoolGeom& g, size_t i, bool count_include_pad) {
  std::vector<double> v;
  for (int64_t o = 0; o < g.out[i]; ++o) {
    const int64_t start = o * g.s[i] - g.p[i], end = std::min(start + g.k[i], g.in[i] + g.p[i]);
    v.push_back(double(count_include_pad ? end - start : std::min(end, g.in[i]) - std::max<int64_t>(start, 0)));
  }
  return v;
}

Tensor avg_pool3d_impl(const Tensor& x, const PoolGeom& g, bool count_include_pad,
                       std::optional<int64_t> divisor_override) {
  const int64_t N = x.size(0), C = x.size(1);
  Tensor xe = extend(x, g, 0.0);
  const int64_t De = xe.size(2);
  Tensor s1 = avg_pool2d(xe.reshape({N, C * De, xe.size(3), xe.size(4)}), Size2(g.k[1], g.k[2]),
                         Size2(g.s[1], g.s[2]), Size2(g.p[1], g.p[2]), true, 1);  // window sums
  const int64_t OH = s1.size(2), OW = s1.size(3);
  Tensor sums = avg_pool2d(s1.reshape({N, C, De, OH * OW}), Size2(g.k[0], 1), Size2(g.s[0], 1), Size2(g.p[0], 0),
                           true, 1).view({N, C, g.out[0], OH, OW});
  if (divisor_override) return sums / double(*divisor_override);
  const auto dd = avg_divisors(g, 0, count_include_pad), dh = avg_divisors(g, 1, count_include_pad),
             dw = avg_divisors(g, 2, count_include_pad);
  std::vector<double> grid;
  for (double a : dd)
    for (double b : dh)
      for (double c : dw) grid.push_back(a * b * c);
  return sums / from_vector(grid, {g.out[0], OH, OW}, x.device()).to(x.dtype());
}

// [N, C, spatial (n dims)] -> [N, C, 1.., spatial] with 3 spatial dims, and the sizes padded with `fill` in front.
Tensor as_3d(const Tensor& x, size_t n) {
  Tensor y = x;
  for (size_t i = n; i < 3; ++i) y = y.unsqueeze(2);
  return y;
}
Dims front(const Dims& v, int64_t fill) {
  Dims r(3 - v.size(), fill);
  r.insert(r.end(), v.begin(), v.end());
  return r;
}

std::tuple<Tensor, Tensor> adaptive_max3d(const Tensor& x, Size3 o) {
  const int64_t N = x.size(0), C = x.size(1), D = x.size(2);
  auto [v1, i1] = adaptive_max_pool2d(x.reshape({N, C * D, x.size(3), x.size(4)}), Size2(o.h, o.w));
  auto [v2, i2] = adaptive_max_pool2d(v1.reshape({N, C, D, o.h * o.w}), Size2(o.d, o.h * o.w));
  const Shape out{N, C, o.d, o.h, o.w};
  return {v2.view(out), join_indices(i1, i2, {D, x.size(3), x.size(4)}, x.size(3), x.size(4)).view(out)};
}

void check_output_size(const char* op, Size3 o) {
  conv_nd::check_positive(op, "output_size", conv_nd::dims(o));
}

Tensor max_unpool_nd(const char* op, const Tensor& input, const Tensor& indices, const Dims& k, Dims s,
                     const Dims& p, const std::optional<std::vector<int64_t>>& output_size) {
  const size_t n = k.size();
  bool unb = false;
  Tensor x = conv_nd::batched(input, n, op, &unb);
  VNN_CHECK(ValueError, indices.defined(), op, ": argument 'indices' is undefined");
  VNN_CHECK(DTypeError, indices.dtype() == kInt64, op, ": indices must be int64 (from the max pool), got ",
            name(indices.dtype()));
  VNN_CHECK(ShapeError, indices.sizes() == input.sizes(), op, ": indices ", indices.sizes(),
            " must have the shape of input ", input.sizes());
  conv_nd::check_positive(op, "kernel_size", k);
  if (std::all_of(s.begin(), s.end(), [](int64_t v) { return v == 0; })) s = k;
  conv_nd::check_positive(op, "stride", s);
  Dims out(n);
  for (size_t i = 0; i < n; ++i) {
    VNN_CHECK(ValueError, p[i] >= 0, op, ": padding must be non-negative, got ", text(p));
    const int64_t def = (x.size(int(i) + 2) - 1) * s[i] - 2 * p[i] + k[i];
    out[i] = def;
    if (output_size) {
      const auto& os = *output_size;
      VNN_CHECK(ValueError, os.size() == n || os.size() == n + 2, op, ": output_size must have ", n, " or ", n + 2,
                " entries, got ", os.size());
      out[i] = os[os.size() - n + i];
      VNN_CHECK(ValueError, out[i] > def - s[i] && out[i] < def + s[i], op, ": output_size ", text(Dims(os)),
                " must be within stride of the default ", def, " in spatial dim ", i);
    }
    VNN_CHECK(ShapeError, out[i] > 0, op, ": the output of input ", input.sizes(), " is empty (size ", out[i],
              " in spatial dim ", i, ")");
  }
  const int64_t N = x.size(0), C = x.size(1), L = std::accumulate(out.begin(), out.end(), int64_t(1),
                                                                 std::multiplies<int64_t>());
  Tensor idx = unb ? indices.unsqueeze(0) : indices;
  Tensor flat = idx.reshape({N, C, -1});
  if (flat.numel() > 0) {
    const int64_t lo = flat.min().item<int64_t>(), hi = flat.max().item<int64_t>();
    VNN_CHECK(IndexError, lo >= 0 && hi < L, op, ": indices must lie in [0, ", L, ") for output ", text(out),
              ", got values from ", lo, " to ", hi);
  }
  Tensor y = scatter(zeros({N, C, L}, x.options()), 2, flat, x.reshape({N, C, -1}));
  std::vector<int64_t> shape{N, C};
  shape.insert(shape.end(), out.begin(), out.end());
  return conv_nd::unbatch(y.view(Shape(shape)), unb);
}

Tensor lp_pool_nd(const char* op, const Tensor& input, double norm, const Dims& k, const Dims& s, bool ceil_mode) {
  const size_t n = k.size();
  bool unb = false;
  Tensor x = as_3d(conv_nd::batched(input, n, op, &unb), n);
  VNN_CHECK(ValueError, norm > 0 && std::isfinite(norm), op, ": norm_type must be positive and finite, got ", norm);
  Dims s3 = std::all_of(s.begin(), s.end(), [](int64_t v) { return v == 0; }) ? k : s;
  PoolGeom g = pool_geometry(op, x, front(k, 1), front(s3, 1), Dims(3, 0), Dims(3, 1), ceil_mode);
  Tensor avg = avg_pool3d_impl(pow(x, norm), g, true, std::nullopt);
  const double window = double(std::accumulate(k.begin(), k.end(), int64_t(1), std::multiplies<int64_t>()));
  Tensor y = pow(sign(avg) * relu(abs(avg)) * window, 1.0 / norm);
  for (size_t i = n; i < 3; ++i) y = y.squeeze(2);
  return conv_nd::unbatch(y, unb);
}

}  // namespace

namespace functional {

std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, const MaxPool3dFuncOptions& o) {
  const char* op = "max_pool3d";
  bool unb = false;
  Tensor x = conv_nd::batched(input, 3, op, &unb);
  PoolGeom g = pool_geometry(op, x, conv_nd::dims(o.kernel_size()), conv_nd::dims(o.stride()),
                             conv_nd::dims(o.padding()), conv_nd::dims(o.dilation()), o.ceil_mode());
  auto [v, i] = max_pool3d_impl(x, g);
  return {conv_nd::unbatch(v, unb), conv_nd::unbatch(i, unb)};
}

Tensor max_pool3d(const Tensor& input, const MaxPool3dFuncOptions& options) {
  return std::get<0>(max_pool3d_with_indices(input, options));
}

Tensor avg_pool3d(const Tensor& input, const AvgPool3dFuncOptions& o) {
  const char* op = "avg_pool3d";
  VNN_CHECK(ValueError, !o.divisor_override() || *o.divisor_override() != 0, op,
            ": divisor_override must be non-zero (leave it unset for the window size)");
  bool unb = false;
  Tensor x = conv_nd::batched(input, 3, op, &unb);
  PoolGeom g = pool_geometry(op, x, conv_nd::dims(o.kernel_size()), conv_nd::dims(o.stride()),
                             conv_nd::dims(o.padding()), Dims(3, 1), o.ceil_mode());
  return conv_nd::unbatch(avg_pool3d_impl(x, g, o.count_include_pad(), o.divisor_override()), unb);
}

Tensor adaptive_avg_pool3d(const Tensor& input, const AdaptiveAvgPool3dFuncOptions& o) {
  const char* op = "adaptive_avg_pool3d";
  check_output_size(op, o.output_size());
  bool unb = false;
  Tensor x = conv_nd::batched(input, 3, op, &unb);
  const Size3 s = o.output_size();
  const int64_t N = x.size(0), C = x.size(1), D = x.size(2);
  Tensor a = adaptive_avg_pool2d(x.reshape({N, C * D, x.size(3), x.size(4)}), Size2(s.h, s.w));
  Tensor b = adaptive_avg_pool2d(a.reshape({N, C, D, s.h * s.w}), Size2(s.d, s.h * s.w));
  return conv_nd::unbatch(b.view({N, C, s.d, s.h, s.w}), unb);
}

std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool3dFuncOptions& o) {
  const char* op = "adaptive_max_pool3d";
  check_output_size(op, o.output_size());
  bool unb = false;
  Tensor x = conv_nd::batched(input, 3, op, &unb);
  auto [v, i] = adaptive_max3d(x, o.output_size());
  return {conv_nd::unbatch(v, unb), conv_nd::unbatch(i, unb)};
}

Tensor adaptive_max_pool3d(const Tensor& input, const AdaptiveMaxPool3dFuncOptions& options) {
  return std::get<0>(adaptive_max_pool3d_with_indices(input, options));
}

Tensor max_unpool1d(const Tensor& input, const Tensor& indices, const MaxUnpool1dFuncOptions& o) {
  return max_unpool_nd("max_unpool1d", input, indices, conv_nd::dims(o.kernel_size()), conv_nd::dims(o.stride()),
                       conv_nd::dims(o.padding()), o.output_size());
}
Tensor max_unpool2d(const Tensor& input, const Tensor& indices, const MaxUnpool2dFuncOptions& o) {
  return max_unpool_nd("max_unpool2d", input, indices, conv_nd::dims(o.kernel_size()), conv_nd::dims(o.stride()),
                       conv_nd::dims(o.padding()), o.output_size());
}
Tensor max_unpool3d(const Tensor& input, const Tensor& indices, const MaxUnpool3dFuncOptions& o) {
  return max_unpool_nd("max_unpool3d", input, indices, conv_nd::dims(o.kernel_size()), conv_nd::dims(o.stride()),
                       conv_nd::dims(o.padding()), o.output_size());
}

Tensor lp_pool1d(const Tensor& input, const LPPool1dFuncOptions& o) {
  return lp_pool_nd("lp_pool1d", input, o.norm_type(), conv_nd::dims(o.kernel_size()), conv_nd::dims(o.stride()),
                    o.ceil_mode());
}
Tensor lp_pool2d(const Tensor& input, const LPPool2dFuncOptions& o) {
  return lp_pool_nd("lp_pool2d", input, o.norm_type(), conv_nd::dims(o.kernel_size()), conv_nd::dims(o.stride()),
                    o.ceil_mode());
}
Tensor lp_pool3d(const Tensor& input, const LPPool3dFuncOptions& o) {
  return lp_pool_nd("lp_pool3d", input, o.norm_type(), conv_nd::dims(o.kernel_size()), conv_nd::dims(o.stride()),
                    o.ceil_mode());
}

}  // namespace functional

template <class Derived, class S>
Tensor MaxUnpoolNdImpl<Derived, S>::forward(const Tensor& input, const Tensor& indices,
                                            const std::optional<std::vector<int64_t>>& output_size) {
  return max_unpool_nd(this->type_name().c_str(), input, indices, conv_nd::dims(options.kernel_size()),
                       conv_nd::dims(options.stride()), conv_nd::dims(options.padding()), output_size);
}

template <class Derived, class S>
Tensor LPPoolNdImpl<Derived, S>::forward(const Tensor& x) {
  return lp_pool_nd(this->type_name().c_str(), x, options.norm_type(), conv_nd::dims(options.kernel_size()),
                    conv_nd::dims(options.stride()), options.ceil_mode());
}

template class MaxUnpoolNdImpl<MaxUnpool1dImpl, int64_t>;
template class MaxUnpoolNdImpl<MaxUnpool2dImpl, Size2>;
template class MaxUnpoolNdImpl<MaxUnpool3dImpl, Size3>;
template class LPPoolNdImpl<LPPool1dImpl, int64_t>;
template class LPPoolNdImpl<LPPool2dImpl, Size2>;
template class LPPoolNdImpl<LPPool3dImpl, Size3>;

}  // namespace vnn::nn
