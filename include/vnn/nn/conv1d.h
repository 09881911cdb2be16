// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The 1-D forms over [N, C, L] (or unbatched [C, L]) sequences: Conv1d,
// MaxPool1d, AvgPool1d, AdaptiveAvgPool1d, AdaptiveMaxPool1d and their
// functional forms, with LibTorch's options:
//   vnn::nn::Conv1d conv(vnn::nn::Conv1dOptions(16, 32, 5).padding(vnn::kSame).padding_mode(vnn::kReflect));
//   auto y = F::max_pool1d(x, F::MaxPool1dFuncOptions(3).stride(2));
// Each runs the 2-D op on a [N, C, 1, L] view (weight [O, C/g, k] viewed as
// [O, C/g, 1, k]), so it runs on every device and backpropagates; weights and
// state-dict keys ("weight", "bias") are PyTorch's.
#pragma once
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>

#include "vnn/nn/functional.h"
#include "vnn/nn/module.h"
#include "vnn/nn/options.h"
#include "vnn/random.h"

namespace vnn {

/// padding="same" / "valid" of the convolutions (LibTorch's torch::kSame, torch::kValid).
enum class ConvPaddingKind { same, valid };
/// padding="same": the output is as long as the input (stride 1 only); padding="valid": no padding.
///@{
inline constexpr ConvPaddingKind kSame = ConvPaddingKind::same, kValid = ConvPaddingKind::valid;
///@}
/// padding_mode "zeros" of the convolutions (LibTorch's torch::kZeros): constant padding with 0.
inline constexpr PadMode kZeros = PadMode::constant;

}  // namespace vnn

namespace vnn::nn {

/// The padding of a 1-D convolution: a number of zeros each side, kSame or kValid ("same" / "valid" also).
struct Conv1dPadding {
  /// `p` on each side.
  Conv1dPadding(int64_t p = 0) : amount(p) {}  // NOLINT: implicit, as LibTorch's
  /// kSame or kValid.
  Conv1dPadding(ConvPaddingKind k) : kind(k) {}  // NOLINT: implicit, as LibTorch's
  /// "same" or "valid" (ValueError otherwise).
  Conv1dPadding(const std::string& s);  // NOLINT: implicit, as PyTorch's strings
  /// "same" or "valid" (ValueError otherwise).
  template <class C, class = std::enable_if_t<std::is_same_v<C, char>>>
  Conv1dPadding(const C* s) : Conv1dPadding(std::string(s)) {}  // NOLINT: implicit (a template, so 0 stays a number)
  /// The number of zeros each side, when no kind is given.
  int64_t amount = 0;
  /// kSame or kValid, or none (a number).
  std::optional<ConvPaddingKind> kind;
};

/// Options of Conv1d: channels, kernel, stride, padding (number, kSame, kValid), dilation, groups, bias, padding_mode.
struct Conv1dOptions {
  /// A convolution from `in_channels` to `out_channels` with a kernel of `kernel_size` taps.
  Conv1dOptions(int64_t in_channels, int64_t out_channels, int64_t kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  /// Channels of the input (C of [N, C, L]).
  VNN_ARG(int64_t, in_channels);
  /// Channels of the output.
  VNN_ARG(int64_t, out_channels);
  /// Kernel length.
  VNN_ARG(int64_t, kernel_size);
  /// Step between kernel applications (default 1).
  VNN_ARG(int64_t, stride) = 1;
  /// Padding each side, or kSame / kValid (default 0).
  VNN_ARG(Conv1dPadding, padding) = 0;
  /// Spacing between kernel taps (default 1).
  VNN_ARG(int64_t, dilation) = 1;
  /// Channel groups; in_channels and out_channels must be multiples (default 1).
  VNN_ARG(int64_t, groups) = 1;
  /// Whether a learned bias is added (default true).
  VNN_ARG(bool, bias) = true;
  /// How the padding is filled: kZeros (default), kReflect, kReplicate or kCircular.
  VNN_ARG(PadMode, padding_mode) = kZeros;
};

/// Options of MaxPool1d; a stride of 0 (the default) means the kernel size, as PyTorch's None.
struct MaxPool1dOptions {
  /// A pool over windows of `kernel_size`; implicit, as LibTorch's.
  MaxPool1dOptions(int64_t kernel_size) : kernel_size_(kernel_size) {}  // NOLINT: implicit, as LibTorch's
  /// Window length.
  VNN_ARG(int64_t, kernel_size);
  /// Step between windows (0: the kernel size).
  VNN_ARG(int64_t, stride) = 0;
  /// Implicit -inf padding each side, at most half the kernel (default 0).
  VNN_ARG(int64_t, padding) = 0;
  /// Spacing between window taps (default 1).
  VNN_ARG(int64_t, dilation) = 1;
};
/// Options of AvgPool1d; a stride of 0 (the default) means the kernel size.
struct AvgPool1dOptions {
  /// A pool over windows of `kernel_size`; implicit, as LibTorch's.
  AvgPool1dOptions(int64_t kernel_size) : kernel_size_(kernel_size) {}  // NOLINT: implicit, as LibTorch's
  /// Window length.
  VNN_ARG(int64_t, kernel_size);
  /// Step between windows (0: the kernel size).
  VNN_ARG(int64_t, stride) = 0;
  /// Zero padding each side, at most half the kernel (default 0).
  VNN_ARG(int64_t, padding) = 0;
  /// Whether padded zeros count in the divisor (default true).
  VNN_ARG(bool, count_include_pad) = true;
};
/// Options of AdaptiveAvgPool1d and AdaptiveMaxPool1d: the output length.
struct AdaptiveAvgPool1dOptions {
  /// Pools to `output_size` whatever the input length; implicit, as LibTorch's.
  AdaptiveAvgPool1dOptions(int64_t output_size) : output_size_(output_size) {}  // NOLINT: implicit
  /// Output length.
  VNN_ARG(int64_t, output_size);
};
/// Options of AdaptiveMaxPool1d (those of AdaptiveAvgPool1d).
using AdaptiveMaxPool1dOptions = AdaptiveAvgPool1dOptions;

namespace functional {
/// Options of conv1d: bias, stride, padding (number, kSame, kValid), dilation, groups.
struct Conv1dFuncOptions {
  /// Bias [out_channels], or undefined for none.
  VNN_ARG(Tensor, bias);
  /// Step of the window.
  VNN_ARG(int64_t, stride) = 1;
  /// Zero padding each side, or kSame / kValid.
  VNN_ARG(Conv1dPadding, padding) = 0;
  /// Spacing of the kernel taps.
  VNN_ARG(int64_t, dilation) = 1;
  /// Channel groups (in and out channels divisible by it).
  VNN_ARG(int64_t, groups) = 1;
};
/// Options of max_pool1d.
using MaxPool1dFuncOptions = MaxPool1dOptions;
/// Options of avg_pool1d.
using AvgPool1dFuncOptions = AvgPool1dOptions;
/// Options of adaptive_avg_pool1d.
using AdaptiveAvgPool1dFuncOptions = AdaptiveAvgPool1dOptions;
/// Options of adaptive_max_pool1d.
using AdaptiveMaxPool1dFuncOptions = AdaptiveMaxPool1dOptions;

/// 1-D convolution of [N, C, L] (or [C, L]) by weight [O, C/groups, k]; output [N, O, OL].
Tensor conv1d(const Tensor& input, const Tensor& weight, const Conv1dFuncOptions& options = {});
/// Max pooling of [N, C, L] (or [C, L]).
Tensor max_pool1d(const Tensor& input, const MaxPool1dFuncOptions& options);
/// Max pooling with int64 indices into L.
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, const MaxPool1dFuncOptions& options);
/// Average pooling of [N, C, L] (or [C, L]).
Tensor avg_pool1d(const Tensor& input, const AvgPool1dFuncOptions& options);
/// Adaptive average pooling of [N, C, L] (or [C, L]) to options.output_size(), PyTorch's windows.
Tensor adaptive_avg_pool1d(const Tensor& input, const AdaptiveAvgPool1dFuncOptions& options);
/// Adaptive max pooling of [N, C, L] (or [C, L]) to options.output_size().
Tensor adaptive_max_pool1d(const Tensor& input, const AdaptiveMaxPool1dFuncOptions& options);
/// Adaptive max pooling with int64 indices into L.
std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool1dFuncOptions& options);
}  // namespace functional

/// A 1-D convolution over [N, C, L] sequences (torch.nn.Conv1d), initialised as PyTorch does.
class Conv1dImpl : public Cloneable<Conv1dImpl> {
 public:
  /// A Conv1d from options; `gen` draws the initial values (the default generator when null). ValueError for
  /// channels not divisible by groups, non-positive sizes, or padding kSame with a stride above 1.
  explicit Conv1dImpl(const Conv1dOptions& options, Generator* gen = nullptr);
  /// Conv1d(in_channels, out_channels, kernel_size) with the default options.
  Conv1dImpl(int64_t in_channels, int64_t out_channels, int64_t kernel_size, Generator* gen = nullptr)
      : Conv1dImpl(Conv1dOptions(in_channels, out_channels, kernel_size), gen) {}
  void reset() override { build(nullptr); }
  /// The convolution of x [N, C, L] or [C, L], padded by padding_mode.
  Tensor forward(const Tensor& x);
  std::string describe() const override;
  /// The options the layer was built with.
  Conv1dOptions options;
  /// The parameters: weight [out, in / groups, k] and bias [out] (undefined without bias).
  ///@{
  Tensor weight, bias;
  ///@}

 private:
  void build(Generator* gen);
};
/// The holder of Conv1dImpl.
VNN_MODULE(Conv1d);

/// The maximum over each window of [N, C, L] (torch.nn.MaxPool1d).
class MaxPool1dImpl : public Cloneable<MaxPool1dImpl> {
 public:
  /// A MaxPool1d from options.
  explicit MaxPool1dImpl(const MaxPool1dOptions& options) : Cloneable("MaxPool1d"), options(options) {}
  /// MaxPool1d(kernel_size).
  explicit MaxPool1dImpl(int64_t kernel_size) : MaxPool1dImpl(MaxPool1dOptions(kernel_size)) {}
  void reset() override {}
  /// functional::max_pool1d(x, options).
  Tensor forward(const Tensor& x) { return functional::max_pool1d(x, options); }
  /// The values and their int64 indices into L.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& x) {
    return functional::max_pool1d_with_indices(x, options);
  }
  std::string describe() const override;
  /// The options the layer was built with.
  MaxPool1dOptions options;
};
/// The holder of MaxPool1dImpl.
VNN_MODULE(MaxPool1d);

/// The mean over each window of [N, C, L] (torch.nn.AvgPool1d).
class AvgPool1dImpl : public Cloneable<AvgPool1dImpl> {
 public:
  /// An AvgPool1d from options.
  explicit AvgPool1dImpl(const AvgPool1dOptions& options) : Cloneable("AvgPool1d"), options(options) {}
  /// AvgPool1d(kernel_size).
  explicit AvgPool1dImpl(int64_t kernel_size) : AvgPool1dImpl(AvgPool1dOptions(kernel_size)) {}
  void reset() override {}
  /// functional::avg_pool1d(x, options).
  Tensor forward(const Tensor& x) { return functional::avg_pool1d(x, options); }
  std::string describe() const override;
  /// The options the layer was built with.
  AvgPool1dOptions options;
};
/// The holder of AvgPool1dImpl.
VNN_MODULE(AvgPool1d);

/// Averages [N, C, L] into output_size bins (torch.nn.AdaptiveAvgPool1d).
class AdaptiveAvgPool1dImpl : public Cloneable<AdaptiveAvgPool1dImpl> {
 public:
  /// An AdaptiveAvgPool1d from options.
  explicit AdaptiveAvgPool1dImpl(const AdaptiveAvgPool1dOptions& options)
      : Cloneable("AdaptiveAvgPool1d"), options(options) {}
  /// AdaptiveAvgPool1d(output_size).
  explicit AdaptiveAvgPool1dImpl(int64_t output_size) : AdaptiveAvgPool1dImpl(AdaptiveAvgPool1dOptions(output_size)) {}
  void reset() override {}
  /// functional::adaptive_avg_pool1d(x, options).
  Tensor forward(const Tensor& x) { return functional::adaptive_avg_pool1d(x, options); }
  /// The options the layer was built with.
  AdaptiveAvgPool1dOptions options;
};
/// The holder of AdaptiveAvgPool1dImpl.
VNN_MODULE(AdaptiveAvgPool1d);

/// The maximum of [N, C, L] over output_size bins (torch.nn.AdaptiveMaxPool1d).
class AdaptiveMaxPool1dImpl : public Cloneable<AdaptiveMaxPool1dImpl> {
 public:
  /// An AdaptiveMaxPool1d from options.
  explicit AdaptiveMaxPool1dImpl(const AdaptiveMaxPool1dOptions& options)
      : Cloneable("AdaptiveMaxPool1d"), options(options) {}
  /// AdaptiveMaxPool1d(output_size).
  explicit AdaptiveMaxPool1dImpl(int64_t output_size) : AdaptiveMaxPool1dImpl(AdaptiveMaxPool1dOptions(output_size)) {}
  void reset() override {}
  /// functional::adaptive_max_pool1d(x, options).
  Tensor forward(const Tensor& x) { return functional::adaptive_max_pool1d(x, options); }
  /// The values and their int64 indices into L.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& x) {
    return functional::adaptive_max_pool1d_with_indices(x, options);
  }
  /// The options the layer was built with.
  AdaptiveMaxPool1dOptions options;
};
/// The holder of AdaptiveMaxPool1dImpl.
VNN_MODULE(AdaptiveMaxPool1d);

}  // namespace vnn::nn
