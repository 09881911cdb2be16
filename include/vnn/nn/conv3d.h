// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Conv3d over [N, C, D, H, W] volumes (or unbatched [C, D, H, W]) and
// F::conv3d, with LibTorch's options:
//   vnn::nn::Conv3d conv(vnn::nn::Conv3dOptions(4, 8, {3, 3, 3}).stride(2).padding(1));
//   auto y = F::conv3d(x, w, F::Conv3dFuncOptions().padding(vnn::kSame));
// The depth taps are unfolded into channels (F::unfold over a [N, C*H*W, D, 1]
// view) and one conv2d of [N*OD, C*kd, H, W] by weight [O, C/g*kd, kh, kw]
// does the rest, so Conv3d has conv2d's kernels on every device (oneDNN on
// the CPU) and its backward. Weight [O, C/groups, kd, kh, kw] and state-dict
// keys ("weight", "bias") are PyTorch's.
#pragma once
#include <optional>
#include <string>
#include <type_traits>

#include "vnn/nn/conv1d.h"
#include "vnn/nn/module.h"
#include "vnn/nn/options.h"
#include "vnn/random.h"

namespace vnn {

/// A (depth, height, width) triple; one number means all three.
struct Size3 {
  /// Depth, height and width.
  ///@{
  int64_t d = 0, h = 0, w = 0;
  ///@}
  /// All three `v` (implicit, so 3 means 3 x 3 x 3).
  Size3(int64_t v = 0) : d(v), h(v), w(v) {}  // NOLINT: implicit by design
  /// Depth `dd`, height `hh` and width `ww`.
  Size3(int64_t dd, int64_t hh, int64_t ww) : d(dd), h(hh), w(ww) {}
};

}  // namespace vnn

namespace vnn::nn {

/// The padding of a 3-D convolution: zeros on each side per dim, kSame or kValid ("same" / "valid" also).
struct Conv3dPadding {
  /// `p` on each side per dim.
  Conv3dPadding(Size3 p = 0) : amount(p) {}  // NOLINT: implicit, as LibTorch's
  /// `p` on each side of every dim.
  Conv3dPadding(int64_t p) : amount(p) {}  // NOLINT: implicit, as LibTorch's
  /// kSame or kValid.
  Conv3dPadding(ConvPaddingKind k) : kind(k) {}  // NOLINT: implicit, as LibTorch's
  /// "same" or "valid" (ValueError otherwise).
  Conv3dPadding(const std::string& s) : kind(Conv1dPadding(s).kind) {}  // NOLINT: implicit, as PyTorch's strings
  /// "same" or "valid" (ValueError otherwise).
  template <class C, class = std::enable_if_t<std::is_same_v<C, char>>>
  Conv3dPadding(const C* s) : Conv3dPadding(std::string(s)) {}  // NOLINT: implicit (a template, so 0 stays a number)
  /// Zeros on each side per dim, when no kind is given.
  Size3 amount;
  /// kSame or kValid, or none (numbers).
  std::optional<ConvPaddingKind> kind;
};

/// Options of Conv3d: channels, kernel, stride, padding (numbers, kSame, kValid), dilation, groups, bias, padding_mode.
struct Conv3dOptions {
  /// A convolution from `in_channels` to `out_channels` with a `kernel_size` kernel.
  Conv3dOptions(int64_t in_channels, int64_t out_channels, Size3 kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  /// Channels of the input (C of [N, C, D, H, W]).
  VNN_ARG(int64_t, in_channels);
  /// Channels of the output.
  VNN_ARG(int64_t, out_channels);
  /// Kernel depth, height and width.
  VNN_ARG(Size3, kernel_size);
  /// Step between kernel applications (default 1).
  VNN_ARG(Size3, stride) = 1;
  /// Padding each side per dim, or kSame / kValid (default 0).
  VNN_ARG(Conv3dPadding, padding) = 0;
  /// Spacing between kernel taps (default 1).
  VNN_ARG(Size3, dilation) = 1;
  /// Channel groups; in_channels and out_channels must be multiples (default 1).
  VNN_ARG(int64_t, groups) = 1;
  /// Whether a learned bias is added (default true).
  VNN_ARG(bool, bias) = true;
  /// How the padding is filled: kZeros (default), kReflect, kReplicate or kCircular.
  VNN_ARG(PadMode, padding_mode) = kZeros;
};

namespace functional {
/// Options of conv3d: bias, stride, padding (numbers, kSame, kValid), dilation, groups.
struct Conv3dFuncOptions {
  /// Bias [out_channels], or undefined for none.
  VNN_ARG(Tensor, bias);
  /// Step of the window.
  VNN_ARG(Size3, stride) = 1;
  /// Zero padding each side per dim, or kSame / kValid.
  VNN_ARG(Conv3dPadding, padding) = 0;
  /// Spacing of the kernel taps.
  VNN_ARG(Size3, dilation) = 1;
  /// Channel groups (in and out channels divisible by it).
  VNN_ARG(int64_t, groups) = 1;
};
/// 3-D convolution of [N, C, D, H, W] (or [C, D, H, W]) by weight [O, C/groups, kd, kh, kw]; output [N, O, OD, OH, OW].
Tensor conv3d(const Tensor& input, const Tensor& weight, const Conv3dFuncOptions& options = {});
}  // namespace functional

/// A 3-D convolution over [N, C, D, H, W] volumes (torch.nn.Conv3d), initialised as PyTorch does.
class Conv3dImpl : public Cloneable<Conv3dImpl> {
 public:
  /// A Conv3d from options; `gen` draws the initial values (the default generator when null). ValueError for
  /// channels not divisible by groups, non-positive sizes, or padding kSame with a stride above 1.
  explicit Conv3dImpl(const Conv3dOptions& options, Generator* gen = nullptr);
  /// Conv3d(in_channels, out_channels, kernel_size) with the default options.
  Conv3dImpl(int64_t in_channels, int64_t out_channels, Size3 kernel_size, Generator* gen = nullptr)
      : Conv3dImpl(Conv3dOptions(in_channels, out_channels, kernel_size), gen) {}
  void reset() override { build(nullptr); }
  /// The convolution of x [N, C, D, H, W] or [C, D, H, W], padded by padding_mode.
  Tensor forward(const Tensor& x);
  std::string describe() const override;
  /// The options the layer was built with.
  Conv3dOptions options;
  /// The parameters: weight [out, in / groups, kd, kh, kw] and bias [out] (undefined without bias).
  ///@{
  Tensor weight, bias;
  ///@}

 private:
  void build(Generator* gen);
};
/// The holder of Conv3dImpl.
VNN_MODULE(Conv3d);

}  // namespace vnn::nn
