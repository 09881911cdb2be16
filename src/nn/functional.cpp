// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn::nn::functional (include/vnn/nn/functional.h): LibTorch's functional
// spellings over the core ops. pad, interpolate and normalize are composed
// from differentiable ops (index_select, cat, mul, add, norm), so they run on
// every device and backpropagate without kernels of their own.
#include "vnn/nn/functional.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tensor/tensor_impl.hpp"
#include "vnn/detail/message.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/indexing.h"
#include "vnn/linalg.h"
#include "vnn/random.h"
#include "vnn/reduction.h"

#include "nn/conv_nd.hpp"
#include "nn/pad_mode.hpp"

namespace vnn::nn::functional {

namespace {

void check_defined(const Tensor& t, const char* op, const char* arg) {
  VNN_CHECK(ValueError, t.defined(), op, ": argument '", arg, "' is an undefined tensor");
}

Tensor index_tensor(const std::vector<int64_t>& idx, const Device& device) {
  return from_vector(idx, {int64_t(idx.size())}, device);
}

using vnn::nn::detail::pad_mode_name;

const char* interpolate_mode_name(InterpolateMode m) {
  switch (m) {
    case InterpolateMode::nearest: return "nearest";
    case InterpolateMode::nearest_exact: return "nearest-exact";
    case InterpolateMode::linear: return "linear";
    case InterpolateMode::bilinear: return "bilinear";
    case InterpolateMode::trilinear: return "trilinear";
    case InterpolateMode::area: return "area";
  }
  return "?";
}

}  // namespace

// ---- linear, convolution, pooling ---------------------------------------------

namespace {
// The functional 2-D forms take [N, C, H, W] or unbatched [C, H, W] (run as a batch of one), as LibTorch's.
template <class Op>
Tensor batch_of_one_if_3d(const Tensor& input, const char* op, Op&& run) {
  bool unbatched = false;
  Tensor x = conv_nd::batched(input, 2, op, &unbatched);
  return conv_nd::unbatch(run(x), unbatched);
}
}  // namespace

Tensor conv2d(const Tensor& input, const Tensor& weight, const Conv2dFuncOptions& o) {
  return batch_of_one_if_3d(input, "conv2d", [&](const Tensor& x) {
    return vnn::conv2d(x, weight, o.bias(), o.stride(), o.padding(), o.dilation(), o.groups());
  });
}

Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& o) {
  return batch_of_one_if_3d(input, "max_pool2d", [&](const Tensor& x) {
    return vnn::max_pool2d(x, o.kernel_size(), o.stride(), o.padding(), o.dilation());
  });
}

Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& o) {
  return batch_of_one_if_3d(input, "avg_pool2d", [&](const Tensor& x) {
    return vnn::avg_pool2d(x, o.kernel_size(), o.stride(), o.padding(), o.count_include_pad());
  });
}

Tensor adaptive_avg_pool2d(const Tensor& input, const AdaptiveAvgPool2dFuncOptions& o) {
  return batch_of_one_if_3d(input, "adaptive_avg_pool2d",
                            [&](const Tensor& x) { return vnn::adaptive_avg_pool2d(x, o.output_size()); });
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool2dFuncOptions& o) {
  return vnn::adaptive_max_pool2d(input, o.output_size());
}

Tensor adaptive_max_pool2d(const Tensor& input, const AdaptiveMaxPool2dFuncOptions& o) {
  return std::get<0>(vnn::adaptive_max_pool2d(input, o.output_size()));
}

// ---- activations ---------------------------------------------------------------

Tensor relu(Tensor input, const ReLUFuncOptions& o) {
  if (!o.inplace()) return vnn::relu(input);
  check_defined(input, "relu", "input");
  input.relu_();
  return input;
}

Tensor softmax(const Tensor& input, const SoftmaxFuncOptions& o) {
  check_defined(input, "softmax", "input");
  return vnn::softmax(o.dtype() ? input.to(*o.dtype()) : input, int(o.dim()));
}

Tensor log_softmax(const Tensor& input, const LogSoftmaxFuncOptions& o) {
  check_defined(input, "log_softmax", "input");
  return vnn::log_softmax(o.dtype() ? input.to(*o.dtype()) : input, int(o.dim()));
}

Tensor dropout(Tensor input, const DropoutFuncOptions& o) {
  const double p = o.p();
  VNN_CHECK(ValueError, p >= 0.0 && p <= 1.0, "dropout: p must be in [0, 1], got ", p);
  check_defined(input, "dropout", "input");
  if (!o.training() || p == 0.0) return input;
  VNN_CHECK(DTypeError, is_floating(input.dtype()), "dropout: input must be floating, got ", input.dtype(),
            "; convert it with .to(vnn::kFloat)");
  Tensor scale;
  if (p == 1.0) {
    scale = zeros_like(input);
  } else {
    // As nn::Dropout: float32 uniforms for 16-bit inputs, one rounding of the scale.
    DType u = input.dtype() == kFloat64 ? kFloat64 : kFloat32;
    Tensor keep = lt(rand(input.sizes(), TensorOptions(input.device()).dtype(u)), 1.0 - p);
    scale = mul(keep.to(input.dtype()), 1.0 / (1.0 - p));
  }
  if (o.inplace()) {
    input.mul_(scale);
    return input;
  }
  return mul(input, scale);
}

// ---- normalization -------------------------------------------------------------------

Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& o) {
  return std::get<0>(vnn::layer_norm(input, o.normalized_shape(), o.weight(), o.bias(), o.eps()));
}

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const BatchNormFuncOptions& o) {
  if (!o.training())
    VNN_CHECK(ValueError, running_mean.defined() && running_var.defined(),
              "batch_norm: running_mean and running_var must be given when training is false (evaluation "
              "normalises with them); pass them, or set .training(true) to use the batch statistics");
  VNN_CHECK(ValueError, running_mean.defined() == running_var.defined(),
            "batch_norm: give both running_mean and running_var, or neither");
  return std::get<0>(
      vnn::batch_norm(input, o.weight(), o.bias(), running_mean, running_var, o.training(), o.momentum(), o.eps()));
}

Tensor group_norm(const Tensor& input, const GroupNormFuncOptions& o) {
  return std::get<0>(vnn::group_norm(input, o.num_groups(), o.weight(), o.bias(), o.eps()));
}

Tensor normalize(const Tensor& input, const NormalizeFuncOptions& o) {
  check_defined(input, "normalize", "input");
  VNN_CHECK(DTypeError, is_floating(input.dtype()), "normalize: input must be floating, got ", input.dtype(),
            "; convert it with .to(vnn::kFloat)");
  VNN_CHECK(ValueError, o.eps() >= 0, "normalize: eps must be >= 0, got ", o.eps());
  VNN_CHECK(ShapeError, input.dim() >= 1, "normalize: input must have at least 1 dim, got shape ", input.sizes());
  const int d = ::vnn::detail::normalize_dim(int(o.dim()), input.dim(), "normalize");
  Tensor n = vnn::norm(input, o.p(), {int64_t(d)}, true);
  return div(input, clamp_min(n, o.eps()));
}

// ---- embeddings ---------------------------------------------------------------------------

Tensor embedding(const Tensor& input, const Tensor& weight, const EmbeddingFuncOptions& o) {
  check_defined(input, "embedding", "input");
  check_defined(weight, "embedding", "weight");
  Tensor e = vnn::embedding(weight, input);
  if (!o.padding_idx()) return e;
  VNN_CHECK(ShapeError, weight.dim() == 2, "embedding: weight must be 2-D, got shape ", weight.sizes());
  const int64_t rows = weight.size(0);
  int64_t pad = *o.padding_idx();
  VNN_CHECK(IndexError, pad >= -rows && pad < rows, "embedding: padding_idx ", pad,
            " must be within the ", rows, " rows of weight ", weight.sizes());
  if (pad < 0) pad += rows;
  // The padding row's lookups keep their values but pass no gradient.
  Tensor use = ne(input, double(pad)).unsqueeze(-1);
  return where(use, e, e.detach());
}

// ---- pad ------------------------------------------------------------------------------------

Tensor pad(const Tensor& input, const PadFuncOptions& o) {
  check_defined(input, "pad", "input");
  const std::vector<int64_t>& p = o.pad();
  const char* mode = pad_mode_name(o.mode());
  VNN_CHECK(ValueError, p.size() % 2 == 0, "pad: the pad list must have an even length (pairs from the last dim "
            "backwards), got ", p.size(), " values");
  VNN_CHECK(ValueError, int(p.size() / 2) <= input.dim(), "pad: ", p.size() / 2, " pairs of pads for input of shape ",
            input.sizes(), " with ", input.dim(), " dims");
  Tensor x = input;
  for (size_t i = 0; i < p.size() / 2; ++i) {
    const int d = input.dim() - 1 - int(i);
    const int64_t before = p[2 * i], after = p[2 * i + 1], n = x.size(d);
    if (o.mode() == PadMode::constant) {
      // Negative pads crop.
      const int64_t lo = before < 0 ? -before : 0, hi = after < 0 ? -after : 0;
      VNN_CHECK(ValueError, lo + hi <= n, "pad: pads (", before, ", ", after, ") of dim ", d, " crop more than its ",
                n, " elements (input ", input.sizes(), ")");
      if (lo || hi) x = x.narrow(d, lo, n - lo - hi);
      std::vector<Tensor> parts;
      auto filler = [&](int64_t k) {
        Shape s = x.sizes();
        s[d] = k;
        return full(s, o.value(), TensorOptions(x.device()).dtype(x.dtype()));
      };
      if (before > 0) parts.push_back(filler(before));
      parts.push_back(x);
      if (after > 0) parts.push_back(filler(after));
      if (parts.size() > 1) x = cat(parts, d);
      continue;
    }
    VNN_CHECK(ValueError, before >= 0 && after >= 0, "pad: mode ", mode, " takes no negative pads, got (", before,
              ", ", after, ") for dim ", d);
    if (o.mode() == PadMode::reflect)
      VNN_CHECK(ValueError, before < n && after < n, "pad: reflect pads (", before, ", ", after, ") of dim ", d,
                " must be less than its size ", n, " (input ", input.sizes(), ")");
    if (o.mode() == PadMode::replicate)
      VNN_CHECK(ValueError, n > 0 || (before == 0 && after == 0), "pad: replicate cannot pad the empty dim ", d,
                " of input ", input.sizes());
    if (o.mode() == PadMode::circular)
      VNN_CHECK(ValueError, before <= n && after <= n, "pad: circular pads (", before, ", ", after, ") of dim ", d,
                " must be at most its size ", n, " (input ", input.sizes(), ")");
    std::vector<int64_t> idx;
    idx.reserve(size_t(before + n + after));
    for (int64_t j = -before; j < n + after; ++j) {
      int64_t s = j;
      if (j < 0 || j >= n) {
        switch (o.mode()) {
          case PadMode::reflect: s = j < 0 ? -j : 2 * (n - 1) - j; break;
          case PadMode::replicate: s = j < 0 ? 0 : n - 1; break;
          case PadMode::circular: s = ((j % n) + n) % n; break;
          case PadMode::constant: break;
        }
      }
      idx.push_back(s);
    }
    x = index_select(x, d, index_tensor(idx, x.device()));
  }
  return x;
}

// ---- interpolate ------------------------------------------------------------------------------

Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& o) {
  check_defined(input, "interpolate", "input");
  const InterpolateMode m = o.mode();
  const char* mode = interpolate_mode_name(m);
  const int nd = input.dim();
  VNN_CHECK(ShapeError, nd >= 3 && nd <= 5, "interpolate: input must be 3-D [N, C, W], 4-D [N, C, H, W] or 5-D "
            "[N, C, D, H, W], got shape ", input.sizes());
  const int spatial = nd - 2;
  const bool linear_mode = m == InterpolateMode::linear || m == InterpolateMode::bilinear ||
                           m == InterpolateMode::trilinear;
  const int wanted = m == InterpolateMode::linear ? 1 : m == InterpolateMode::bilinear ? 2
                   : m == InterpolateMode::trilinear ? 3 : m == InterpolateMode::area ? 2 : spatial;
  VNN_CHECK(ShapeError, wanted == spatial, "interpolate: mode ", mode, " takes ", wanted + 2, "-D input, got shape ",
            input.sizes());
  VNN_CHECK(ValueError, linear_mode || !o.align_corners(), "interpolate: align_corners can only be set with the "
            "interpolating modes linear, bilinear and trilinear, not ", mode);
  VNN_CHECK(ValueError, o.size().has_value() != o.scale_factor().has_value(), "interpolate: give either size or "
            "scale_factor (", (o.size() ? "both were given" : "neither was given"), ")");
  if (linear_mode || m == InterpolateMode::area)
    VNN_CHECK(DTypeError, is_floating(input.dtype()), "interpolate: mode ", mode, " needs a floating input, got ",
              input.dtype(), "; convert it with .to(vnn::kFloat)");
  const bool align = o.align_corners().value_or(false);

  std::vector<int64_t> out(static_cast<size_t>(spatial));
  std::vector<double> factor(static_cast<size_t>(spatial), 0.0);  // 0: none given
  if (o.size()) {
    const std::vector<int64_t>& s = *o.size();
    VNN_CHECK(ValueError, s.size() == 1 || int(s.size()) == spatial, "interpolate: size has ", s.size(),
              " values; input ", input.sizes(), " needs 1 or ", spatial);
    for (int i = 0; i < spatial; ++i) out[size_t(i)] = s.size() == 1 ? s[0] : s[size_t(i)];
  } else {
    const std::vector<double>& f = *o.scale_factor();
    VNN_CHECK(ValueError, f.size() == 1 || int(f.size()) == spatial, "interpolate: scale_factor has ", f.size(),
              " values; input ", input.sizes(), " needs 1 or ", spatial);
    for (int i = 0; i < spatial; ++i) {
      factor[size_t(i)] = f.size() == 1 ? f[0] : f[size_t(i)];
      VNN_CHECK(ValueError, factor[size_t(i)] > 0 && std::isfinite(factor[size_t(i)]),
                "interpolate: scale_factor must be positive and finite, got ", factor[size_t(i)]);
      out[size_t(i)] = int64_t(std::floor(double(input.size(2 + i)) * factor[size_t(i)]));
    }
  }
  for (int i = 0; i < spatial; ++i)
    VNN_CHECK(ValueError, out[size_t(i)] > 0, "interpolate: output size ", out[size_t(i)], " of spatial dim ", i,
              " must be positive (input ", input.sizes(), ")");

  if (m == InterpolateMode::area) return vnn::adaptive_avg_pool2d(input, Size2(out[0], out[1]));

  Tensor x = input;
  for (int i = 0; i < spatial; ++i) {
    const int d = 2 + i;
    const int64_t in = input.size(d), on = out[size_t(i)];
    VNN_CHECK(ValueError, in > 0, "interpolate: spatial dim ", i, " of input ", input.sizes(), " is empty");
    // PyTorch's scale (float, as its kernels compute it): align_corners maps
    // the corner centres; otherwise 1 / scale_factor when one was given, else in / out.
    float scale;
    if (linear_mode && align)
      scale = on > 1 ? float(in - 1) / float(on - 1) : 0.0f;
    else
      scale = factor[size_t(i)] > 0 ? float(1.0 / factor[size_t(i)]) : float(in) / float(on);
    std::vector<int64_t> i0(static_cast<size_t>(on)), i1;
    std::vector<float> w0, w1;
    for (int64_t j = 0; j < on; ++j) {
      if (m == InterpolateMode::nearest) {
        i0[size_t(j)] = std::min(int64_t(std::floor(float(j) * scale)), in - 1);
      } else if (m == InterpolateMode::nearest_exact) {
        i0[size_t(j)] = std::min(int64_t(std::floor((float(j) + 0.5f) * scale)), in - 1);
      } else {
        float src = align ? scale * float(j) : std::max(scale * (float(j) + 0.5f) - 0.5f, 0.0f);
        const int64_t lo = std::min(int64_t(src), in - 1);
        i0[size_t(j)] = lo;
        i1.push_back(lo < in - 1 ? lo + 1 : lo);
        const float l1 = std::min(std::max(src - float(lo), 0.0f), 1.0f);
        w0.push_back(1.0f - l1);
        w1.push_back(l1);
      }
    }
    Tensor a = index_select(x, d, index_tensor(i0, x.device()));
    if (!linear_mode) {
      x = a;
      continue;
    }
    Shape ws(std::vector<int64_t>(static_cast<size_t>(nd), 1));
    ws[d] = on;
    Tensor l0 = from_vector(w0, ws, x.device()).to(x.dtype());
    Tensor l1 = from_vector(w1, ws, x.device()).to(x.dtype());
    Tensor b = index_select(x, d, index_tensor(i1, x.device()));
    x = add(mul(a, l0), mul(b, l1));
  }
  return x;
}

}  // namespace vnn::nn::functional
