// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// grid_sample and affine_grid (LibTorch's torch/nn/functional/vision.h):
// sampling an image at arbitrary normalized points, as spatial transformer
// networks and optical-flow warps do.
//
//   namespace F = vnn::nn::functional;
//   auto grid = F::affine_grid(theta, {N, C, 32, 32}, /*align_corners=*/false);   // theta [N, 2, 3]
//   auto out = F::grid_sample(img, grid, F::GridSampleFuncOptions()
//                                            .mode(vnn::kBilinear).padding_mode(vnn::kBorder).align_corners(false));
//
// grid_sample runs one kernel per direction on every device (GRID_SAMPLE in
// the backend ABI) and backpropagates to both the input and the grid;
// affine_grid is a product of a fixed base grid with theta, so its gradient
// wrt theta comes from matmul's.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "vnn/nn/conv1d.h"
#include "vnn/nn/functional.h"
#include "vnn/nn/options.h"
#include "vnn/tensor.h"

namespace vnn {

/// grid_sample's interpolation (LibTorch's torch::kBilinear, torch::kNearest, torch::kBicubic).
enum class GridSampleMode { bilinear, nearest, bicubic };
/// grid_sample's padding_mode (LibTorch's torch::kZeros, torch::kBorder, torch::kReflection).
enum class GridSamplePadding { zeros, border, reflection };
/// The bicubic mode of grid_sample (torch::kBicubic; 4-D input only).
inline constexpr GridSampleMode kBicubic = GridSampleMode::bicubic;
/// padding_mode of grid_sample: out-of-range points take the nearest border value (torch::kBorder).
inline constexpr GridSamplePadding kBorder = GridSamplePadding::border;
/// padding_mode of grid_sample: out-of-range points reflect at the border (torch::kReflection).
inline constexpr GridSamplePadding kReflection = GridSamplePadding::reflection;

}  // namespace vnn

namespace vnn::nn::functional {

/// Options of grid_sample: mode, padding_mode, align_corners.
struct GridSampleFuncOptions {
  /// kBilinear (default; trilinear on 5-D input), kNearest or kBicubic (4-D input only).
  GridSampleFuncOptions& mode(GridSampleMode m) {
    mode_ = m;
    return *this;
  }
  /// The mode spelled as interpolate's constants: kBilinear or kNearest (others throw ValueError).
  GridSampleFuncOptions& mode(InterpolateMode m);
  /// The interpolation.
  GridSampleMode mode() const { return mode_; }
  /// kZeros (default), kBorder or kReflection.
  GridSampleFuncOptions& padding_mode(GridSamplePadding p) {
    padding_mode_ = p;
    return *this;
  }
  /// kZeros spelled as the convolutions' padding_mode (other PadModes throw ValueError).
  GridSampleFuncOptions& padding_mode(PadMode p);
  /// Where points outside the input read.
  GridSamplePadding padding_mode() const { return padding_mode_; }
  /// true: -1 and 1 are the centres of the corner pixels; false (the default): their outer edges.
  VNN_ARG(std::optional<bool>, align_corners);

 private:
  GridSampleMode mode_ = GridSampleMode::bilinear;
  GridSamplePadding padding_mode_ = GridSamplePadding::zeros;
};

/// Samples input [N, C, H, W] at grid [N, Ho, Wo, 2] -> [N, C, Ho, Wo], or input [N, C, D, H, W] at grid
/// [N, Do, Ho, Wo, 3] -> [N, C, Do, Ho, Wo]; grid's last dim is (x, y[, z]) normalized to [-1, 1] over the
/// input's W, H[, D]. float32 / float64 (16-bit floats computed in float32); differentiable wrt input and grid.
Tensor grid_sample(const Tensor& input, const Tensor& grid, const GridSampleFuncOptions& options = {});

/// The sampling grid of a batch of affine maps: theta [N, 2, 3] and size {N, C, H, W} give [N, H, W, 2];
/// theta [N, 3, 4] and size {N, C, D, H, W} give [N, D, H, W, 3] (torch.nn.functional.affine_grid).
/// Differentiable wrt theta.
Tensor affine_grid(const Tensor& theta, const std::vector<int64_t>& size, bool align_corners = false);

}  // namespace vnn::nn::functional
