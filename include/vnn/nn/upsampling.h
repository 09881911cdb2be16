// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Upsample (torch.nn.Upsample over functional::interpolate) and
// PixelShuffle / PixelUnshuffle, with LibTorch's options:
//   vnn::nn::Upsample up(vnn::nn::UpsampleOptions().scale_factor({2, 2}).mode(vnn::kBilinear).align_corners(false));
//   vnn::nn::PixelShuffle ps(2);   // [N, C * 4, H, W] -> [N, C, 2H, 2W]
// All are compositions of differentiable ops (index_select, reshape,
// permute), so they run on every device and backpropagate.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vnn/nn/functional.h"
#include "vnn/nn/module.h"
#include "vnn/nn/options.h"

namespace vnn::nn {

/// Options of Upsample: size or scale_factor (exactly one), mode, align_corners.
struct UpsampleOptions {
  /// The output's spatial sizes (one per spatial dim, or one for all).
  UpsampleOptions& size(std::vector<int64_t> s) { size_ = std::move(s); return *this; }
  /// The sizes given, if any.
  const std::optional<std::vector<int64_t>>& size() const { return size_; }
  /// Multipliers of the spatial sizes (one per spatial dim, or one for all).
  UpsampleOptions& scale_factor(std::vector<double> f) { scale_factor_ = std::move(f); return *this; }
  /// The factors given, if any.
  const std::optional<std::vector<double>>& scale_factor() const { return scale_factor_; }
  /// kNearest (default), kNearestExact, kLinear, kBilinear or kTrilinear.
  VNN_ARG(InterpolateMode, mode) = kNearest;
  /// Linear modes: map the corner pixels' centres onto each other (unset: false).
  VNN_ARG(std::optional<bool>, align_corners);

 private:
  std::optional<std::vector<int64_t>> size_;
  std::optional<std::vector<double>> scale_factor_;
};

/// Options of PixelShuffle: the upscale factor r.
struct PixelShuffleOptions {
  /// Shuffles by `upscale_factor`; implicit, as LibTorch's.
  PixelShuffleOptions(int64_t upscale_factor) : upscale_factor_(upscale_factor) {}  // NOLINT: implicit
  /// r: [*, C r^2, H, W] -> [*, C, H r, W r].
  VNN_ARG(int64_t, upscale_factor);
};
/// Options of PixelUnshuffle: the downscale factor r.
struct PixelUnshuffleOptions {
  /// Unshuffles by `downscale_factor`; implicit, as LibTorch's.
  PixelUnshuffleOptions(int64_t downscale_factor) : downscale_factor_(downscale_factor) {}  // NOLINT: implicit
  /// r: [*, C, H r, W r] -> [*, C r^2, H, W].
  VNN_ARG(int64_t, downscale_factor);
};

namespace functional {
/// Options of pixel_shuffle.
using PixelShuffleFuncOptions = PixelShuffleOptions;
/// Options of pixel_unshuffle.
using PixelUnshuffleFuncOptions = PixelUnshuffleOptions;
/// [*, C r^2, H, W] -> [*, C, H r, W r], PyTorch's element order (ShapeError when C r^2 is not divisible by r^2).
Tensor pixel_shuffle(const Tensor& input, const PixelShuffleFuncOptions& options);
/// [*, C, H r, W r] -> [*, C r^2, H, W], the inverse of pixel_shuffle (ShapeError when H or W is not divisible).
Tensor pixel_unshuffle(const Tensor& input, const PixelUnshuffleFuncOptions& options);
}  // namespace functional

/// Resamples [N, C, W], [N, C, H, W] or [N, C, D, H, W] (torch.nn.Upsample).
class UpsampleImpl : public Cloneable<UpsampleImpl> {
 public:
  /// An Upsample from options (checked at forward, as PyTorch's).
  explicit UpsampleImpl(const UpsampleOptions& options = {}) : Cloneable("Upsample"), options(options) {}
  void reset() override {}
  /// functional::interpolate(x, size / scale_factor, mode, align_corners).
  Tensor forward(const Tensor& x);
  std::string describe() const override;
  /// The options the layer was built with.
  UpsampleOptions options;
};
/// The holder of UpsampleImpl.
VNN_MODULE(Upsample);

/// Rearranges channels into space (torch.nn.PixelShuffle).
class PixelShuffleImpl : public Cloneable<PixelShuffleImpl> {
 public:
  /// A PixelShuffle from options (ValueError for a factor < 1).
  explicit PixelShuffleImpl(const PixelShuffleOptions& options);
  void reset() override {}
  /// functional::pixel_shuffle(x, options).
  Tensor forward(const Tensor& x) { return functional::pixel_shuffle(x, options); }
  std::string describe() const override;
  /// The options the layer was built with.
  PixelShuffleOptions options;
};
/// The holder of PixelShuffleImpl.
VNN_MODULE(PixelShuffle);

/// Rearranges space into channels (torch.nn.PixelUnshuffle).
class PixelUnshuffleImpl : public Cloneable<PixelUnshuffleImpl> {
 public:
  /// A PixelUnshuffle from options (ValueError for a factor < 1).
  explicit PixelUnshuffleImpl(const PixelUnshuffleOptions& options);
  void reset() override {}
  /// functional::pixel_unshuffle(x, options).
  Tensor forward(const Tensor& x) { return functional::pixel_unshuffle(x, options); }
  std::string describe() const override;
  /// The options the layer was built with.
  PixelUnshuffleOptions options;
};
/// The holder of PixelUnshuffleImpl.
VNN_MODULE(PixelUnshuffle);

}  // namespace vnn::nn
