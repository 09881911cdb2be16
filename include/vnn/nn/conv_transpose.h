// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ConvTranspose1d / 2d / 3d (torch.nn.ConvTranspose*d) and
// F::conv_transpose1d / 2d / 3d, with LibTorch's options:
//   vnn::nn::ConvTranspose2d up(vnn::nn::ConvTranspose2dOptions(16, 8, 3).stride(2).padding(1).output_padding(1));
//   auto y = F::conv_transpose1d(x, w, F::ConvTranspose1dFuncOptions().stride(2));
// A transposed convolution is convolution's input gradient: the 2-D forward
// is conv2d_backward_input (COL2IM, or oneDNN's backward-data on the CPU),
// its input gradient is conv2d and its weight gradient conv2d's weight
// gradient with the roles swapped. 1-D runs on a [N, C, 1, L] view; 3-D runs
// the 2-D one with the depth taps as channels, then F::fold sums the depth
// taps. Weight [in, out/groups, k...] and state-dict keys are PyTorch's.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "vnn/nn/conv3d.h"
#include "vnn/nn/module.h"
#include "vnn/nn/options.h"
#include "vnn/random.h"

namespace vnn::nn {

/// Options of ConvTranspose1d / 2d / 3d (S: int64_t, Size2, Size3): channels, kernel, stride, padding,
/// output_padding, groups, bias, dilation.
template <class S>
struct ConvTransposeOptions {
  /// A transposed convolution from `in_channels` to `out_channels` with a `kernel_size` kernel.
  ConvTransposeOptions(int64_t in_channels, int64_t out_channels, S kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  /// Channels of the input.
  VNN_ARG(int64_t, in_channels);
  /// Channels of the output.
  VNN_ARG(int64_t, out_channels);
  /// Kernel size per spatial dim.
  VNN_ARG(S, kernel_size);
  /// Step between kernel applications (default 1).
  VNN_ARG(S, stride) = 1;
  /// dilation * (kernel_size - 1) - padding zeros are cropped from each side of the full output (default 0).
  VNN_ARG(S, padding) = 0;
  /// Extra size added to one side of the output; smaller than stride or dilation (default 0).
  VNN_ARG(S, output_padding) = 0;
  /// Channel groups; in_channels and out_channels must be multiples (default 1).
  VNN_ARG(int64_t, groups) = 1;
  /// Whether a learned bias is added (default true).
  VNN_ARG(bool, bias) = true;
  /// Spacing between kernel taps (default 1).
  VNN_ARG(S, dilation) = 1;
  /// Only kZeros, as in PyTorch.
  VNN_ARG(PadMode, padding_mode) = kZeros;
};
/// Options of ConvTranspose1d.
using ConvTranspose1dOptions = ConvTransposeOptions<int64_t>;
/// Options of ConvTranspose2d.
using ConvTranspose2dOptions = ConvTransposeOptions<Size2>;
/// Options of ConvTranspose3d.
using ConvTranspose3dOptions = ConvTransposeOptions<Size3>;

namespace functional {
/// Options of conv_transpose1d / 2d / 3d: bias, stride, padding, output_padding, groups, dilation.
template <class S>
struct ConvTransposeFuncOptions {
  /// Bias [out_channels], or undefined for none.
  VNN_ARG(Tensor, bias);
  /// Step of the window.
  VNN_ARG(S, stride) = 1;
  /// Cropped from each side of the full output.
  VNN_ARG(S, padding) = 0;
  /// Extra size on one side of the output; smaller than stride or dilation.
  VNN_ARG(S, output_padding) = 0;
  /// Channel groups.
  VNN_ARG(int64_t, groups) = 1;
  /// Spacing of the kernel taps.
  VNN_ARG(S, dilation) = 1;
};
/// Options of conv_transpose1d.
using ConvTranspose1dFuncOptions = ConvTransposeFuncOptions<int64_t>;
/// Options of conv_transpose2d.
using ConvTranspose2dFuncOptions = ConvTransposeFuncOptions<Size2>;
/// Options of conv_transpose3d.
using ConvTranspose3dFuncOptions = ConvTransposeFuncOptions<Size3>;

/// Transposed 1-D convolution of [N, C, L] (or [C, L]) by weight [C, O/groups, k]; output [N, O, OL].
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const ConvTranspose1dFuncOptions& options = {});
/// Transposed 2-D convolution of [N, C, H, W] (or [C, H, W]) by weight [C, O/groups, kh, kw].
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const ConvTranspose2dFuncOptions& options = {});
/// Transposed 3-D convolution of [N, C, D, H, W] (or [C, D, H, W]) by weight [C, O/groups, kd, kh, kw].
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const ConvTranspose3dFuncOptions& options = {});
}  // namespace functional

/// The shared body of ConvTranspose1d / 2d / 3d (Derived: the module, S: its size type).
template <class Derived, class S>
class ConvTransposeNdImpl : public Cloneable<Derived> {
 public:
  /// The module `type_name` from options; `gen` draws the initial values (the default generator when null).
  /// ValueError for channels not divisible by groups, non-positive sizes, output_padding not below stride or
  /// dilation, or a padding_mode other than kZeros.
  ConvTransposeNdImpl(const char* type_name, const ConvTransposeOptions<S>& options, Generator* gen);
  /// Draws the parameters again (the default generator).
  void reset() override { build(nullptr); }
  /// The transposed convolution of x (batched or unbatched).
  Tensor forward(const Tensor& x);
  /// The transposed convolution whose output has the spatial sizes `output_size` (the last dims of the wanted
  /// shape; picks output_padding as LibTorch's forward(input, output_size)).
  Tensor forward(const Tensor& x, const std::vector<int64_t>& output_size);
  /// "ConvTranspose2d(16, 8, kernel_size=(3, 3), stride=(2, 2), ...)", as PyTorch prints the layer.
  std::string describe() const override;
  /// The options the layer was built with.
  ConvTransposeOptions<S> options;
  /// The weight [in, out / groups, k...].
  Tensor weight;
  /// The bias [out] (undefined without bias).
  Tensor bias;

 private:
  void build(Generator* gen);
};

/// A transposed 1-D convolution over [N, C, L] (torch.nn.ConvTranspose1d).
class ConvTranspose1dImpl : public ConvTransposeNdImpl<ConvTranspose1dImpl, int64_t> {
 public:
  /// A ConvTranspose1d from options.
  explicit ConvTranspose1dImpl(const ConvTranspose1dOptions& options, Generator* gen = nullptr)
      : ConvTransposeNdImpl("ConvTranspose1d", options, gen) {}
  /// ConvTranspose1d(in_channels, out_channels, kernel_size).
  ConvTranspose1dImpl(int64_t in_channels, int64_t out_channels, int64_t kernel_size, Generator* gen = nullptr)
      : ConvTranspose1dImpl(ConvTranspose1dOptions(in_channels, out_channels, kernel_size), gen) {}
};
/// The holder of ConvTranspose1dImpl.
VNN_MODULE(ConvTranspose1d);

/// A transposed 2-D convolution over [N, C, H, W] (torch.nn.ConvTranspose2d).
class ConvTranspose2dImpl : public ConvTransposeNdImpl<ConvTranspose2dImpl, Size2> {
 public:
  /// A ConvTranspose2d from options.
  explicit ConvTranspose2dImpl(const ConvTranspose2dOptions& options, Generator* gen = nullptr)
      : ConvTransposeNdImpl("ConvTranspose2d", options, gen) {}
  /// ConvTranspose2d(in_channels, out_channels, kernel_size).
  ConvTranspose2dImpl(int64_t in_channels, int64_t out_channels, Size2 kernel_size, Generator* gen = nullptr)
      : ConvTranspose2dImpl(ConvTranspose2dOptions(in_channels, out_channels, kernel_size), gen) {}
};
/// The holder of ConvTranspose2dImpl.
VNN_MODULE(ConvTranspose2d);

/// A transposed 3-D convolution over [N, C, D, H, W] (torch.nn.ConvTranspose3d).
class ConvTranspose3dImpl : public ConvTransposeNdImpl<ConvTranspose3dImpl, Size3> {
 public:
  /// A ConvTranspose3d from options.
  explicit ConvTranspose3dImpl(const ConvTranspose3dOptions& options, Generator* gen = nullptr)
      : ConvTransposeNdImpl("ConvTranspose3d", options, gen) {}
  /// ConvTranspose3d(in_channels, out_channels, kernel_size).
  ConvTranspose3dImpl(int64_t in_channels, int64_t out_channels, Size3 kernel_size, Generator* gen = nullptr)
      : ConvTranspose3dImpl(ConvTranspose3dOptions(in_channels, out_channels, kernel_size), gen) {}
};
/// The holder of ConvTranspose3dImpl.
VNN_MODULE(ConvTranspose3d);

}  // namespace vnn::nn
