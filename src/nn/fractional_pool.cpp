// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// FractionalMaxPool2d / 3d (include/vnn/nn/fractional_pool.h). PyTorch's
// interval rule per plane and dim: with alpha = (in - k) / (out - 1), window
// i starts at floor((i + u) * alpha) - floor(u * alpha), the last at in - k.
// The windows differ per plane, so they are written out on the host as one
// int64 index [N, C, L * K] (L outputs, K taps in scan order) into the
// flattened planes: gather picks the taps, max over them the first maximum
// (as PyTorch's scan), and gathering the index at the arg max gives the
// flat input indices. Both ops run on every device and backpropagate.
#include "vnn/nn/fractional_pool.h"

#include <cmath>
#include <string>

#include "nn/conv_nd.hpp"
#include "vnn/indexing.h"
#include "vnn/reduction.h"

namespace vnn::nn {

using conv_nd::Dims;
using conv_nd::text;

namespace {

// PyTorch's window starts for one plane and dim.
std::vector<int64_t> window_starts(double u, int64_t in, int64_t out, int64_t k) {
  std::vector<int64_t> s(size_t(out), in - k);
  if (out > 1) {
    const double alpha = double(in - k) / double(out - 1);
    for (int64_t i = 0; i + 1 < out; ++i)
      s[size_t(i)] = int64_t(std::floor((double(i) + u) * alpha)) - int64_t(std::floor(u * alpha));
  }
  return s;
}

// The output sizes from output_size or output_ratio (exactly one), checked against the input and kernel.
Dims output_dims(const char* op, const Dims& in, const Dims& k, const std::optional<Dims>& size,
                 const std::optional<std::vector<double>>& ratio) {
  const size_t n = k.size();
  VNN_CHECK(ValueError, size.has_value() != ratio.has_value(), op,
            ": give exactly one of output_size and output_ratio");
  Dims out(n);
  if (size) {
    out = *size;
  } else {
    VNN_CHECK(ValueError, ratio->size() == 1 || ratio->size() == n, op, ": output_ratio must have 1 or ", n,
              " values, got ", ratio->size());
    for (size_t i = 0; i < n; ++i) {
      const double r = (*ratio)[ratio->size() == 1 ? 0 : i];
      VNN_CHECK(ValueError, r > 0 && r < 1, op, ": output_ratio must lie in (0, 1), got ", r);
      out[i] = int64_t(double(in[i]) * r);
    }
  }
  for (size_t i = 0; i < n; ++i)
    VNN_CHECK(ShapeError, out[i] > 0 && out[i] + k[i] - 1 <= in[i], op, ": output size ", text(out),
              " with kernel_size ", text(k), " does not fit the input ", text(in),
              " (output + kernel_size - 1 must be at most the input size)");
  return out;
}

std::tuple<Tensor, Tensor> fractional_max_pool_nd(const char* op, const Tensor& input, const Dims& k,
                                                  const std::optional<Dims>& size,
                                                  const std::optional<std::vector<double>>& ratio,
                                                  const Tensor& samples, Generator* gen) {
  const size_t n = k.size();
  bool unb = false;
  Tensor x = conv_nd::batched(input, n, op, &unb);
  conv_nd::check_positive(op, "kernel_size", k);
  const int64_t N = x.size(0), C = x.size(1);
  Dims in(n);
  for (size_t i = 0; i < n; ++i) in[i] = x.size(int(i) + 2);
  const Dims out = output_dims(op, in, k, size, ratio);
  Tensor u = samples;
  if (!u.defined()) {
    u = rand({N, C, int64_t(n)}, TensorOptions().dtype(kFloat64), gen);
  } else {
    VNN_CHECK(ShapeError, u.sizes() == Shape({N, C, int64_t(n)}), op, ": _random_samples must have shape [", N, ", ",
              C, ", ", n, "] for input ", input.sizes(), ", got ", u.sizes());
    VNN_CHECK(DTypeError, is_floating(u.dtype()), op, ": _random_samples must be floating, got ", name(u.dtype()));
  }
  const std::vector<double> uv = u.to(kFloat64).to_vector<double>();
  int64_t L = 1, K = 1, P = 1;
  for (size_t i = 0; i < n; ++i) L *= out[i], K *= k[i], P *= in[i];
  std::vector<int64_t> index;
  index.reserve(size_t(N * C * L * K));
  for (int64_t plane = 0; plane < N * C; ++plane) {
    std::vector<std::vector<int64_t>> starts(n);
    for (size_t i = 0; i < n; ++i) {
      const double ui = uv[size_t(plane) * n + i];
      VNN_CHECK(ValueError, ui >= 0 && ui < 1, op, ": _random_samples must lie in [0, 1), got ", ui);
      starts[i] = window_starts(ui, in[i], out[i], k[i]);
    }
    for (int64_t o = 0; o < L; ++o)
      for (int64_t t = 0; t < K; ++t) {
        int64_t flat = 0, orest = o, trest = t, ostride = L, tstride = K;
        for (size_t i = 0; i < n; ++i) {  // dims outermost first
          ostride /= out[i], tstride /= k[i];
          const int64_t oi = orest / ostride, ti = trest / tstride;
          orest %= ostride, trest %= tstride;
          flat = flat * in[i] + starts[i][size_t(oi)] + ti;
        }
        index.push_back(flat);
      }
  }
  Tensor idx = from_vector(index, {N, C, L * K}, x.device());
  Tensor taps = gather(x.reshape({N, C, P}), 2, idx).view({N, C, L, K});
  auto [values, arg] = max(taps, 3);
  Tensor where = gather(idx.view({N, C, L, K}), 3, arg.unsqueeze(3)).squeeze(3);
  std::vector<int64_t> shape{N, C};
  shape.insert(shape.end(), out.begin(), out.end());
  return {conv_nd::unbatch(values.view(Shape(shape)), unb), conv_nd::unbatch(where.view(Shape(shape)), unb)};
}

template <class S>
std::optional<Dims> dims_of(const std::optional<S>& s) {
  return s ? std::optional<Dims>(conv_nd::dims(*s)) : std::nullopt;
}

}  // namespace

namespace functional {

std::tuple<Tensor, Tensor> fractional_max_pool2d_with_indices(const Tensor& input,
                                                              const FractionalMaxPool2dFuncOptions& o,
                                                              Generator* gen) {
  return fractional_max_pool_nd("fractional_max_pool2d", input, conv_nd::dims(o.kernel_size()),
                                dims_of(o.output_size()), o.output_ratio(), o._random_samples(), gen);
}
Tensor fractional_max_pool2d(const Tensor& input, const FractionalMaxPool2dFuncOptions& o, Generator* gen) {
  return std::get<0>(fractional_max_pool2d_with_indices(input, o, gen));
}
std::tuple<Tensor, Tensor> fractional_max_pool3d_with_indices(const Tensor& input,
                                                              const FractionalMaxPool3dFuncOptions& o,
                                                              Generator* gen) {
  return fractional_max_pool_nd("fractional_max_pool3d", input, conv_nd::dims(o.kernel_size()),
                                dims_of(o.output_size()), o.output_ratio(), o._random_samples(), gen);
}
Tensor fractional_max_pool3d(const Tensor& input, const FractionalMaxPool3dFuncOptions& o, Generator* gen) {
  return std::get<0>(fractional_max_pool3d_with_indices(input, o, gen));
}

}  // namespace functional

}  // namespace vnn::nn
