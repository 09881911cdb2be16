// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "vnn/detail/message.h"
#include "vnn/nn/init.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "vnn/autograd.h"
#include "vnn/creation.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/nn/functional.h"
#include "vnn/nn/rnn.h"
#include "vnn/nn/transformer.h"

namespace vnn::nn::init {

namespace {
// Values computed on the host as a tensor of t's shape, dtype and device,
// converted on the CPU (a device then builds no float64 kernel for a
// float32 tensor).
Tensor host_values_like(const std::vector<double>& values, const Tensor& t) {
  return from_vector(values, t.sizes()).to(t.dtype()).to(t.device());
}
}  // namespace

NonlinearityType::NonlinearityType(InterpolateMode m) : kind(NonlinearityKind::linear) {
  VNN_CHECK(ValueError, m == InterpolateMode::linear,
            "calculate_gain: of the interpolation modes only kLinear names a nonlinearity");
}
NonlinearityType::NonlinearityType(RNNNonlinearityKind k)
    : kind(k == RNNNonlinearityKind::tanh ? NonlinearityKind::tanh : NonlinearityKind::relu) {}
NonlinearityType::NonlinearityType(TransformerActivationKind k) : kind(NonlinearityKind::relu) {
  VNN_CHECK(ValueError, k == TransformerActivationKind::relu,
            "calculate_gain: unsupported nonlinearity (kGELU or a custom activation); PyTorch has no gain for it");
}
NonlinearityType::NonlinearityType(const std::string& name) {
  static const std::pair<const char*, NonlinearityKind> names[] = {
      {"linear", NonlinearityKind::linear},
      {"conv1d", NonlinearityKind::conv1d},
      {"conv2d", NonlinearityKind::conv2d},
      {"conv3d", NonlinearityKind::conv3d},
      {"conv_transpose1d", NonlinearityKind::conv_transpose1d},
      {"conv_transpose2d", NonlinearityKind::conv_transpose2d},
      {"conv_transpose3d", NonlinearityKind::conv_transpose3d},
      {"sigmoid", NonlinearityKind::sigmoid},
      {"tanh", NonlinearityKind::tanh},
      {"relu", NonlinearityKind::relu},
      {"leaky_relu", NonlinearityKind::leaky_relu},
      {"selu", NonlinearityKind::selu}};
  for (auto& [n, k] : names)
    if (name == n) {
      kind = k;
      return;
    }
  VNN_THROW(ValueError, "calculate_gain: unsupported nonlinearity '", name,
            "' (expected linear, conv1d/2d/3d, conv_transpose1d/2d/3d, sigmoid, tanh, relu, leaky_relu or selu)");
}

FanModeType::FanModeType(const std::string& name) : mode(name == "fan_out" ? FanMode::fan_out : FanMode::fan_in) {
  VNN_CHECK(ValueError, name == "fan_in" || name == "fan_out", "kaiming init: mode must be \"fan_in\" or \"fan_out\", not \"",
            name, "\"");
}

std::pair<int64_t, int64_t> fan_in_out(const Tensor& w) {
  if (w.dim() < 2)
    VNN_THROW(ShapeError, "init: fan in and fan out need a tensor of at least 2 dimensions, got shape ", w.sizes());
  int64_t receptive = 1;
  for (int i = 2; i < w.dim(); ++i) receptive *= w.size(i);
  return {w.size(1) * receptive, w.size(0) * receptive};
}

std::tuple<int64_t, int64_t> _calculate_fan_in_and_fan_out(const Tensor& weight) {
  auto [in, out] = fan_in_out(weight);
  return {in, out};
}

double calculate_gain(NonlinearityType nl, double param) {
  switch (nl.kind) {
    case NonlinearityKind::tanh: return 5.0 / 3.0;
    case NonlinearityKind::relu: return std::sqrt(2.0);
    case NonlinearityKind::leaky_relu: return std::sqrt(2.0 / (1.0 + param * param));
    case NonlinearityKind::selu: return 3.0 / 4.0;
    default: return 1.0;  // linear, the convolutions, sigmoid
  }
}

Tensor& uniform_(Tensor& t, double low, double high, Generator* gen) {
  autograd::NoGradGuard g;
  return vnn::uniform_(t, low, high, gen);
}
Tensor& normal_(Tensor& t, double mean, double std, Generator* gen) {
  autograd::NoGradGuard g;
  return vnn::normal_(t, mean, std, gen);
}

Tensor& trunc_normal_(Tensor& t, double mean, double std, double a, double b, Generator* gen) {
  VNN_CHECK(ValueError, std > 0 && a < b, "trunc_normal_: needs std > 0 and a < b, got std ", std, ", a ", a, ", b ", b);
  // The normal CDF at the bounds; a uniform draw between them, mapped back
  // through the inverse CDF (erfinv), lands in [a, b] without redraws.
  auto cdf = [](double x) { return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))); };
  const double l = cdf((a - mean) / std), u = cdf((b - mean) / std);
  autograd::NoGradGuard g;
  vnn::uniform_(t, 2.0 * l - 1.0, 2.0 * u - 1.0, gen);
  t.copy_(erfinv(t));
  t.mul_(std * std::sqrt(2.0));
  t.add_(mean);
  return t.clamp_(a, b);  // float32 rounding at the ends
}

Tensor& constant_(Tensor& t, double value) {
  autograd::NoGradGuard g;
  t.fill_(value);
  return t;
}
Tensor& zeros_(Tensor& t) { return constant_(t, 0.0); }
Tensor& ones_(Tensor& t) { return constant_(t, 1.0); }

Tensor& eye_(Tensor& t) {
  VNN_CHECK(ShapeError, t.dim() == 2, "eye_: only 2-D tensors are supported, got shape ", t.sizes());
  autograd::NoGradGuard g;
  return t.copy_(eye(t.size(0), t.size(1), TensorOptions(t.dtype()).device(t.device())));
}

Tensor& dirac_(Tensor& t, int64_t groups) {
  VNN_CHECK(ShapeError, t.dim() >= 3 && t.dim() <= 5, "dirac_: only 3-, 4- or 5-D tensors are supported, got shape ",
            t.sizes());
  VNN_CHECK(ValueError, groups > 0 && t.size(0) % groups == 0, "dirac_: dim 0 of shape ", t.sizes(),
            " must be divisible by groups (", groups, ")");
  const int64_t per_group = t.size(0) / groups, channels = std::min(per_group, t.size(1));
  // Offset of the kernel's centre within one [out, in] slice, and the slice size.
  int64_t centre = 0, kernel = 1;
  for (int d = 2; d < t.dim(); ++d) {
    centre = centre * t.size(d) + t.size(d) / 2;
    kernel *= t.size(d);
  }
  std::vector<double> values(size_t(t.numel()), 0.0);
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t d = 0; d < channels; ++d)
      values[size_t(((g * per_group + d) * t.size(1) + d) * kernel + centre)] = 1.0;
  autograd::NoGradGuard no_grad;
  return t.copy_(host_values_like(values, t));
}

namespace {
// The thin Q of the QR of a (m x n, m >= n), both column-major (each
// column contiguous, so every inner loop runs along memory), by Householder
// reflections, each column of Q signed so that R's diagonal is positive
// (the unique factorisation PyTorch's orthogonal_ takes).
std::vector<double> orthonormal_columns(std::vector<double> a, int64_t m, int64_t n) {
  auto col = [m](std::vector<double>& x, int64_t j) { return x.data() + j * m; };
  std::vector<double> v(size_t(m * n), 0.0);  // reflector k (unit) in column k, rows k..m-1
  std::vector<double> sign(size_t(n), 1.0);
  for (int64_t k = 0; k < n; ++k) {
    double* ak = col(a, k);
    double norm = 0;
    for (int64_t i = k; i < m; ++i) norm += ak[i] * ak[i];
    norm = std::sqrt(norm);
    const double alpha = ak[k] > 0 ? -norm : norm;  // R_kk, of the sign that avoids cancellation
    sign[size_t(k)] = alpha < 0 ? -1.0 : 1.0;
    double* vk = col(v, k);
    for (int64_t i = k; i < m; ++i) vk[i] = ak[i];
    vk[k] -= alpha;
    double vv = 0;
    for (int64_t i = k; i < m; ++i) vv += vk[i] * vk[i];
    if (vv == 0) continue;  // a zero column: no reflection
    const double inv = 1.0 / std::sqrt(vv);
    for (int64_t i = k; i < m; ++i) vk[i] *= inv;
    for (int64_t j = k + 1; j < n; ++j) {  // A[k:, j] -= 2 v (v . A[k:, j])
      double* aj = col(a, j);
      double dot = 0;
      for (int64_t i = k; i < m; ++i) dot += vk[i] * aj[i];
      dot *= 2.0;
      for (int64_t i = k; i < m; ++i) aj[i] -= dot * vk[i];
    }
  }
  // Q = H_0 ... H_{n-1} applied to the first n columns of the identity.
  std::vector<double> q(size_t(m * n), 0.0);
  for (int64_t j = 0; j < n; ++j) col(q, j)[j] = 1.0;
  for (int64_t k = n - 1; k >= 0; --k) {
    double* vk = col(v, k);
    for (int64_t j = k; j < n; ++j) {  // columns left of k are still e_j, which H_k leaves alone
      double* qj = col(q, j);
      double dot = 0;
      for (int64_t i = k; i < m; ++i) dot += vk[i] * qj[i];
      dot *= 2.0;
      for (int64_t i = k; i < m; ++i) qj[i] -= dot * vk[i];
    }
  }
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) col(q, j)[i] *= sign[size_t(j)];
  return q;
}
}  // namespace

Tensor& orthogonal_(Tensor& t, double gain, Generator* gen) {
  VNN_CHECK(ShapeError, t.dim() >= 2, "orthogonal_: only tensors with 2 or more dimensions are supported, got shape ",
            t.sizes());
  if (t.numel() == 0) return t;
  const int64_t rows = t.size(0), cols = t.numel() / rows;
  const bool wide = rows < cols;  // QR of the transpose: orthonormal rows
  const int64_t m = wide ? cols : rows, n = wide ? rows : cols;
  std::vector<double> drawn = randn({rows, cols}, TensorOptions(kFloat64), gen).to_vector<double>();
  // The drawn [rows, cols] row-major is its transpose column-major: the
  // column-major [m, n] matrix is the transpose of it when wide, else a
  // transposed copy of it.
  std::vector<double> a(drawn.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) a[size_t(wide ? i * cols + j : j * rows + i)] = drawn[size_t(i * cols + j)];
  std::vector<double> q = orthonormal_columns(std::move(a), m, n);
  std::vector<double> out(drawn.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      out[size_t(i * cols + j)] = gain * q[size_t(wide ? i * cols + j : j * rows + i)];
  autograd::NoGradGuard no_grad;
  return t.copy_(host_values_like(out, t));
}

Tensor& sparse_(Tensor& t, double sparsity, double std, Generator* gen) {
  VNN_CHECK(ShapeError, t.dim() == 2, "sparse_: only 2-D tensors are supported, got shape ", t.sizes());
  VNN_CHECK(ValueError, sparsity >= 0 && sparsity <= 1, "sparse_: sparsity must be in [0, 1], got ", sparsity);
  const int64_t rows = t.size(0), cols = t.size(1);
  const auto zeros = int64_t(std::ceil(sparsity * double(rows)));
  init::normal_(t, 0.0, std, gen);
  // Each column zeroes the rows of its `zeros` smallest uniform keys: a
  // uniformly random subset, as PyTorch's randperm(rows)[:zeros].
  std::vector<double> keys = rand({rows, cols}, TensorOptions(kFloat64), gen).to_vector<double>();
  std::vector<double> mask(keys.size(), 1.0);
  std::vector<int64_t> order(static_cast<size_t>(rows));
  for (int64_t c = 0; c < cols && zeros > 0; ++c) {
    std::iota(order.begin(), order.end(), int64_t(0));
    std::nth_element(order.begin(), order.begin() + (zeros - 1), order.end(), [&](int64_t x, int64_t y) {
      return keys[size_t(x * cols + c)] < keys[size_t(y * cols + c)];
    });
    for (int64_t k = 0; k < zeros; ++k) mask[size_t(order[size_t(k)] * cols + c)] = 0.0;
  }
  autograd::NoGradGuard no_grad;
  return t.mul_(host_values_like(mask, t));
}

Tensor& xavier_uniform_(Tensor& t, double gain, Generator* gen) {
  auto [fan_in, fan_out] = fan_in_out(t);
  double a = gain * std::sqrt(6.0 / double(fan_in + fan_out));
  return init::uniform_(t, -a, a, gen);
}
Tensor& xavier_normal_(Tensor& t, double gain, Generator* gen) {
  auto [fan_in, fan_out] = fan_in_out(t);
  return init::normal_(t, 0.0, gain * std::sqrt(2.0 / double(fan_in + fan_out)), gen);
}

namespace {
double kaiming_std(const Tensor& t, double a, FanModeType mode, NonlinearityType nl) {
  auto [fan_in, fan_out] = fan_in_out(t);
  double fan = double(mode.mode == FanMode::fan_in ? fan_in : fan_out);
  return calculate_gain(nl, a) / std::sqrt(fan);
}
}  // namespace

// A tensor with no elements is left as it is (PyTorch warns and returns it).
Tensor& kaiming_uniform_(Tensor& t, double a, FanModeType mode, NonlinearityType nl, Generator* gen) {
  if (t.numel() == 0) return t;
  double bound = std::sqrt(3.0) * kaiming_std(t, a, mode, nl);
  return init::uniform_(t, -bound, bound, gen);
}
Tensor& kaiming_normal_(Tensor& t, double a, FanModeType mode, NonlinearityType nl, Generator* gen) {
  if (t.numel() == 0) return t;
  return init::normal_(t, 0.0, kaiming_std(t, a, mode, nl), gen);
}

}  // namespace vnn::nn::init
