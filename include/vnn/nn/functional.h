// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn::nn::functional: torch::nn::functional's functions and their
// *FuncOptions, so that LibTorch code ports by renaming:
//
//   namespace F = vnn::nn::functional;
//   auto y = F::conv2d(x, w, F::Conv2dFuncOptions().stride(1).padding(1));
//   auto p = F::softmax(y.flatten(1), F::SoftmaxFuncOptions(1));
//   auto d = F::dropout(p, F::DropoutFuncOptions().p(0.2).training(true));
//   auto l = F::cross_entropy(logits, target, F::CrossEntropyFuncOptions().reduction(vnn::kSum));
//   auto u = F::interpolate(img, F::InterpolateFuncOptions().size({64, 64}).mode(vnn::kBilinear));
//
// Each function calls the core op of the same meaning (vnn/nn_ops.h,
// vnn/reduction.h, nn/loss.h ...) or composes differentiable ops (pad,
// interpolate, normalize), so every function runs on every device and
// backpropagates. Errors are vnn's typed exceptions naming the function, the
// argument and the shapes. What LibTorch has and this header lacks is listed
// in docs/from-libtorch.md.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "vnn/attention.h"
#include "vnn/elementwise.h"
#include "vnn/indexing.h"
#include "vnn/linalg.h"
#include "vnn/nn/conv.h"
#include "vnn/nn/layers.h"
#include "vnn/nn/loss.h"
#include "vnn/nn/normalization.h"
#include "vnn/nn/options.h"
#include "vnn/nn_ops.h"

namespace vnn {

/// The modes of interpolate (LibTorch's torch::kNearest ... values).
enum class InterpolateMode { nearest, nearest_exact, linear, bilinear, trilinear, area };
/// interpolate modes, as torch::kNearest, torch::kBilinear, ...
///@{
inline constexpr InterpolateMode kNearest = InterpolateMode::nearest, kNearestExact = InterpolateMode::nearest_exact,
                                 kLinear = InterpolateMode::linear, kBilinear = InterpolateMode::bilinear,
                                 kTrilinear = InterpolateMode::trilinear, kArea = InterpolateMode::area;
///@}
/// The modes of pad (LibTorch's torch::kConstant ... values).
enum class PadMode { constant, reflect, replicate, circular };
/// pad modes, as torch::kConstant, torch::kReflect, ...
///@{
inline constexpr PadMode kConstant = PadMode::constant, kReflect = PadMode::reflect, kReplicate = PadMode::replicate,
                         kCircular = PadMode::circular;
///@}
/// Loss reductions under LibTorch's names torch::kNone, torch::kMean, torch::kSum.
using nn::kMean;
using nn::kNone;
using nn::kSum;

}  // namespace vnn

namespace vnn::nn::functional {

// ---- linear and convolution ----------------------------------------------
/// input [..., in] @ weight [out, in]^T + bias (vnn::linear).
inline Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor()) {
  return vnn::linear(input, weight, bias);
}
/// Options of conv2d: bias, stride, padding, dilation, groups (torch::nn::functional::Conv2dFuncOptions).
struct Conv2dFuncOptions {
  /// Bias [out_channels], or undefined for none.
  VNN_ARG(Tensor, bias);
  /// Stride of the window (one number or {h, w}).
  VNN_ARG(Size2, stride) = 1;
  /// Zero padding on each side (one number or {h, w}).
  VNN_ARG(Size2, padding) = 0;
  /// Spacing of the kernel taps.
  VNN_ARG(Size2, dilation) = 1;
  /// Channel groups (in and out channels divisible by it).
  VNN_ARG(int64_t, groups) = 1;
};
/// 2-D convolution of [N, C, H, W] by weight [O, C/groups, kh, kw] (vnn::conv2d).
Tensor conv2d(const Tensor& input, const Tensor& weight, const Conv2dFuncOptions& options = {});

// ---- pooling ----------------------------------------------------------------
/// Options of max_pool2d: kernel_size, stride (0: the kernel size), padding, dilation.
using MaxPool2dFuncOptions = MaxPool2dOptions;
/// Options of avg_pool2d: kernel_size, stride (0: the kernel size), padding, count_include_pad.
using AvgPool2dFuncOptions = AvgPool2dOptions;
/// Options of adaptive_avg_pool2d: output_size.
using AdaptiveAvgPool2dFuncOptions = AdaptiveAvgPool2dOptions;
/// Max pooling (vnn::max_pool2d).
Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& options);
/// Average pooling (vnn::avg_pool2d).
Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& options);
/// Adaptive average pooling to options.output_size() (vnn::adaptive_avg_pool2d).
Tensor adaptive_avg_pool2d(const Tensor& input, const AdaptiveAvgPool2dFuncOptions& options);
/// Options of adaptive_max_pool2d: output_size.
using AdaptiveMaxPool2dFuncOptions = AdaptiveAvgPool2dOptions;
/// Adaptive max pooling to options.output_size() (vnn::adaptive_max_pool2d's values).
Tensor adaptive_max_pool2d(const Tensor& input, const AdaptiveMaxPool2dFuncOptions& options);
/// The values and flat indices h * W + w of adaptive max pooling.
std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool2dFuncOptions& options);

// ---- activations --------------------------------------------------------------
/// Options of relu: inplace.
struct ReLUFuncOptions {
  /// In place or not (F::ReLUFuncOptions(true), as LibTorch's).
  ReLUFuncOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT: implicit, as LibTorch's
  /// Overwrite the input (input.relu_()) instead of returning a new tensor.
  VNN_ARG(bool, inplace);
};
/// max(x, 0); in place with options.inplace().
Tensor relu(Tensor input, const ReLUFuncOptions& options = {});
/// Options of gelu: approximate "none" (exact, the default) or "tanh" (nn::GELUOptions, as LibTorch's).
using GELUFuncOptions = GELUOptions;
/// GELU, exact or tanh-approximated (vnn::gelu(input, approximate)).
inline Tensor gelu(const Tensor& input, const GELUFuncOptions& options = {}) {
  return vnn::gelu(input, options.approximate());
}
/// x * sigmoid(x) (vnn::silu).
inline Tensor silu(const Tensor& input) { return vnn::silu(input); }
/// Options of leaky_relu: negative_slope (nn::LeakyReLUOptions, as LibTorch's).
using LeakyReLUFuncOptions = LeakyReLUOptions;
/// x for x >= 0, negative_slope * x below (vnn::leaky_relu).
inline Tensor leaky_relu(const Tensor& input, const LeakyReLUFuncOptions& options = {}) {
  return vnn::leaky_relu(input, options.negative_slope());
}
/// Options of softmax: the dim, and a dtype the input is converted to first.
struct SoftmaxFuncOptions {
  /// Softmax over `dim`.
  SoftmaxFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT: implicit, as LibTorch's
  /// The dim normalised over (negative counts from the end).
  VNN_ARG(int64_t, dim);
  /// A dtype to convert the input to before the softmax (none: the input's).
  VNN_ARG(std::optional<DType>, dtype);
};
/// Options of log_softmax (those of softmax).
using LogSoftmaxFuncOptions = SoftmaxFuncOptions;
/// softmax along options.dim() (vnn::softmax).
Tensor softmax(const Tensor& input, const SoftmaxFuncOptions& options);
/// log_softmax along options.dim() (vnn::log_softmax).
Tensor log_softmax(const Tensor& input, const LogSoftmaxFuncOptions& options);

// ---- dropout ----------------------------------------------------------------
/// Options of dropout: p, training (true by default, as LibTorch's functional), inplace.
struct DropoutFuncOptions {
  /// Probability of zeroing an element, in [0, 1].
  VNN_ARG(double, p) = 0.5;
  /// Whether to drop (false: the identity).
  VNN_ARG(bool, training) = true;
  /// Write the result into the input.
  VNN_ARG(bool, inplace) = false;
};
/// Zeroes elements with probability p and scales the rest by 1 / (1 - p) when training (default generator).
Tensor dropout(Tensor input, const DropoutFuncOptions& options = {});

// ---- normalization ------------------------------------------------------------
/// Options of layer_norm: normalized_shape, weight, bias, eps.
struct LayerNormFuncOptions {
  /// Normalise over the last normalized_shape.size() dims, which must equal it.
  LayerNormFuncOptions(Shape normalized_shape) : normalized_shape_(normalized_shape) {}  // NOLINT: implicit
  /// The trailing shape normalised over.
  VNN_ARG(Shape, normalized_shape);
  /// Scale of that shape, or undefined.
  VNN_ARG(Tensor, weight);
  /// Shift of that shape, or undefined.
  VNN_ARG(Tensor, bias);
  /// Added to the variance.
  VNN_ARG(double, eps) = 1e-5;
};
/// Layer normalization (vnn::layer_norm).
Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& options);
/// Options of batch_norm: weight, bias, training (false by default, as LibTorch's), momentum, eps.
struct BatchNormFuncOptions {
  /// Scale [C], or undefined.
  VNN_ARG(Tensor, weight);
  /// Shift [C], or undefined.
  VNN_ARG(Tensor, bias);
  /// Normalise with the batch statistics (and update the running ones) instead of the running ones.
  VNN_ARG(bool, training) = false;
  /// Weight of the batch statistics in the running update.
  VNN_ARG(double, momentum) = 0.1;
  /// Added to the variance.
  VNN_ARG(double, eps) = 1e-5;
};
/// Batch normalization of [N, C, *] (vnn::batch_norm); running_mean / running_var [C] may be undefined
/// only in training.
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const BatchNormFuncOptions& options = {});
/// Options of group_norm: num_groups, weight, bias, eps.
struct GroupNormFuncOptions {
  /// Normalise over `num_groups` groups of channels.
  GroupNormFuncOptions(int64_t num_groups) : num_groups_(num_groups) {}  // NOLINT: implicit
  /// Channel groups (C divisible by it).
  VNN_ARG(int64_t, num_groups);
  /// Scale [C], or undefined.
  VNN_ARG(Tensor, weight);
  /// Shift [C], or undefined.
  VNN_ARG(Tensor, bias);
  /// Added to the variance.
  VNN_ARG(double, eps) = 1e-5;
};
/// Group normalization of [N, C, *] (vnn::group_norm).
Tensor group_norm(const Tensor& input, const GroupNormFuncOptions& options);
/// Options of normalize: p, dim, eps.
struct NormalizeFuncOptions {
  /// The norm's exponent.
  VNN_ARG(double, p) = 2.0;
  /// The dim normalised along.
  VNN_ARG(int64_t, dim) = 1;
  /// Lower bound of the norm (no division by zero).
  VNN_ARG(double, eps) = 1e-12;
};
/// input / max(||input||_p along dim, eps) (floating inputs).
Tensor normalize(const Tensor& input, const NormalizeFuncOptions& options = {});

// ---- embeddings and encodings ---------------------------------------------------
/// Options of embedding: padding_idx.
struct EmbeddingFuncOptions {
  /// A row whose lookups get no gradient (negative counts from the end), or none.
  VNN_ARG(std::optional<int64_t>, padding_idx);
};
/// Rows of weight [num_embeddings, dim] at int64 `input` indices: shape input.sizes() + [dim].
Tensor embedding(const Tensor& input, const Tensor& weight, const EmbeddingFuncOptions& options = {});
/// int64 one-hot rows (vnn::one_hot); num_classes -1: max(input) + 1.
inline Tensor one_hot(const Tensor& input, int64_t num_classes = -1) { return vnn::one_hot(input, num_classes); }

// ---- losses ---------------------------------------------------------------------
/// Options of cross_entropy: weight, ignore_index, label_smoothing, reduction.
using CrossEntropyFuncOptions = CrossEntropyLossOptions;
/// Options of nll_loss: weight, ignore_index, reduction.
using NLLLossFuncOptions = NLLLossOptions;
/// Options of mse_loss: reduction.
using MSELossFuncOptions = MSELossOptions;
/// Options of l1_loss: reduction.
using L1LossFuncOptions = L1LossOptions;
/// Options of smooth_l1_loss: reduction, beta.
using SmoothL1LossFuncOptions = SmoothL1LossOptions;
/// Options of binary_cross_entropy: weight, reduction.
using BinaryCrossEntropyFuncOptions = BCELossOptions;
/// Options of binary_cross_entropy_with_logits: weight, pos_weight, reduction.
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsLossOptions;
/// Logits [N, C(, d...)] against int64 class indices (nn::cross_entropy).
inline Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& options = {}) {
  return nn::cross_entropy(input, target, options);
}
/// Log-probabilities [N, C(, d...)] against int64 class indices (nn::nll_loss).
inline Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options = {}) {
  return nn::nll_loss(input, target, options);
}
/// Mean squared error (nn::mse_loss).
inline Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options = {}) {
  return nn::mse_loss(input, target, options.reduction());
}
/// Mean absolute error (nn::l1_loss).
inline Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options = {}) {
  return nn::l1_loss(input, target, options.reduction());
}
/// Huber-like loss (nn::smooth_l1_loss).
inline Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& options = {}) {
  return nn::smooth_l1_loss(input, target, options.reduction(), options.beta());
}
/// Binary cross entropy of probabilities (nn::binary_cross_entropy).
inline Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                                   const BinaryCrossEntropyFuncOptions& options = {}) {
  return nn::binary_cross_entropy(input, target, options.weight(), options.reduction());
}
/// Binary cross entropy of logits (nn::binary_cross_entropy_with_logits).
inline Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                               const BinaryCrossEntropyWithLogitsFuncOptions& options = {}) {
  return nn::binary_cross_entropy_with_logits(input, target, options.weight(), options.pos_weight(),
                                              options.reduction());
}

// ---- padding and resampling --------------------------------------------------------
/// Options of pad: the pads (last dim first: {left, right, top, bottom, ...}), mode, value.
struct PadFuncOptions {
  /// Pads as pairs from the last dim backwards; negative pads crop (constant mode).
  PadFuncOptions(std::vector<int64_t> pad) : pad_(std::move(pad)) {}  // NOLINT: implicit, as LibTorch's
  /// Pairs (before, after) from the last dim backwards.
  VNN_ARG(std::vector<int64_t>, pad);
  /// kConstant (default), kReflect, kReplicate or kCircular.
  VNN_ARG(PadMode, mode) = kConstant;
  /// Fill value of kConstant.
  VNN_ARG(double, value) = 0.0;
};
/// Pads the last pad.size() / 2 dims (differentiable, any device): constant fills `value`; reflect mirrors
/// without repeating the edge (pad < size); replicate repeats the edge; circular wraps (pad <= size).
Tensor pad(const Tensor& input, const PadFuncOptions& options);

/// Options of interpolate: size or scale_factor (one of them), mode, align_corners.
struct InterpolateFuncOptions {
  /// The output's spatial sizes (one per spatial dim, or one for all).
  InterpolateFuncOptions& size(std::vector<int64_t> s) { size_ = std::move(s); return *this; }
  /// The sizes given, if any.
  const std::optional<std::vector<int64_t>>& size() const { return size_; }
  /// Multipliers of the spatial sizes (one per spatial dim, or one for all); output = floor(size * factor).
  InterpolateFuncOptions& scale_factor(std::vector<double> f) { scale_factor_ = std::move(f); return *this; }
  /// The factors given, if any.
  const std::optional<std::vector<double>>& scale_factor() const { return scale_factor_; }
  /// kNearest (default), kNearestExact, kLinear (3-D), kBilinear (4-D), kTrilinear (5-D) or kArea (4-D).
  VNN_ARG(InterpolateMode, mode) = kNearest;
  /// Linear modes: map the corner pixels' centres onto each other (false, the default: pixel areas).
  VNN_ARG(std::optional<bool>, align_corners);

 private:
  std::optional<std::vector<int64_t>> size_;
  std::optional<std::vector<double>> scale_factor_;
};
/// Resamples the spatial dims of [N, C, W], [N, C, H, W] or [N, C, D, H, W] (differentiable, any device),
/// with PyTorch's source-index rules for each mode.
Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options = {});

// ---- attention ------------------------------------------------------------------------
/// softmax(q k^T * scale + mask) v (vnn::scaled_dot_product_attention, PyTorch 2.x's arguments).
inline Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                           const Tensor& attn_mask = Tensor(), double dropout_p = 0.0,
                                           bool is_causal = false, std::optional<double> scale = std::nullopt,
                                           bool enable_gqa = false) {
  return vnn::scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa);
}

}  // namespace vnn::nn::functional
