// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fold / Unfold (torch.nn.Fold, torch.nn.Unfold) and their functional forms:
// unfold extracts the sliding blocks of [N, C, H, W] as columns
// [N, C*kh*kw, L] (im2col); fold sums columns back into an image (col2im),
// its adjoint. Each is one VNN_OP_IM2COL / VNN_OP_COL2IM on every device,
// and each is the other's gradient.
//   auto cols = F::unfold(x, F::UnfoldFuncOptions({2, 3}).stride(1).padding(1));
//   vnn::nn::Fold fold(vnn::nn::FoldOptions({4, 5}, {2, 2}).stride(2));
#pragma once
#include <string>

#include "vnn/nn/module.h"
#include "vnn/nn/options.h"
#include "vnn/nn_ops.h"

namespace vnn::nn {

/// Options of Unfold (torch::nn::UnfoldOptions): kernel_size, dilation, padding, stride.
struct UnfoldOptions {
  /// Blocks of `kernel_size`; implicit, as LibTorch's.
  UnfoldOptions(Size2 kernel_size) : kernel_size_(kernel_size) {}  // NOLINT: implicit, as LibTorch's
  /// Block height and width.
  VNN_ARG(Size2, kernel_size);
  /// Spacing between block taps (default 1).
  VNN_ARG(Size2, dilation) = 1;
  /// Zeros added on each side (default 0).
  VNN_ARG(Size2, padding) = 0;
  /// Step between blocks (default 1).
  VNN_ARG(Size2, stride) = 1;
};

/// Options of Fold (torch::nn::FoldOptions): output_size, kernel_size, dilation, padding, stride.
struct FoldOptions {
  /// Sums blocks of `kernel_size` into an output_size image.
  FoldOptions(Size2 output_size, Size2 kernel_size) : output_size_(output_size), kernel_size_(kernel_size) {}
  /// Height and width of the image made.
  VNN_ARG(Size2, output_size);
  /// Block height and width.
  VNN_ARG(Size2, kernel_size);
  /// Spacing between block taps (default 1).
  VNN_ARG(Size2, dilation) = 1;
  /// Padding the blocks reach into (cropped away; default 0).
  VNN_ARG(Size2, padding) = 0;
  /// Step between blocks (default 1).
  VNN_ARG(Size2, stride) = 1;
};

namespace functional {
/// Options of unfold.
using UnfoldFuncOptions = UnfoldOptions;
/// Options of fold.
using FoldFuncOptions = FoldOptions;
/// The sliding blocks of [N, C, H, W] (or [C, H, W]) as columns [N, C*kh*kw, L] (L blocks; torch.nn.functional.unfold).
Tensor unfold(const Tensor& input, const UnfoldFuncOptions& options);
/// Sums columns [N, C*kh*kw, L] (or [C*kh*kw, L]) into [N, C, output_size] (torch.nn.functional.fold).
Tensor fold(const Tensor& input, const FoldFuncOptions& options);
}  // namespace functional

/// Extracts sliding blocks as columns (torch.nn.Unfold).
class UnfoldImpl : public Cloneable<UnfoldImpl> {
 public:
  /// An Unfold from options.
  explicit UnfoldImpl(const UnfoldOptions& options) : Cloneable("Unfold"), options(options) {}
  void reset() override {}
  /// functional::unfold(x, options).
  Tensor forward(const Tensor& x) { return functional::unfold(x, options); }
  /// The options the layer was built with.
  UnfoldOptions options;
};
/// The holder of UnfoldImpl.
VNN_MODULE(Unfold);

/// Sums columns of blocks into an image (torch.nn.Fold).
class FoldImpl : public Cloneable<FoldImpl> {
 public:
  /// A Fold from options.
  explicit FoldImpl(const FoldOptions& options) : Cloneable("Fold"), options(options) {}
  void reset() override {}
  /// functional::fold(x, options).
  Tensor forward(const Tensor& x) { return functional::fold(x, options); }
  /// The options the layer was built with.
  FoldOptions options;
};
/// The holder of FoldImpl.
VNN_MODULE(Fold);

}  // namespace vnn::nn
