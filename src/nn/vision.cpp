// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// grid_sample and affine_grid (include/vnn/nn/vision.h). grid_sample is one
// VNN_OP_GRID_SAMPLE forward and one VNN_OP_GRID_SAMPLE_BACKWARD (dx by
// atomic scatter-add into zeros, dgrid per point) whose ints are the ABI's
// vnn_grid_sample_params, packed here and nowhere else in the core.
// affine_grid is a fixed base grid times theta^T (matmul's gradient).
#include "vnn/nn/vision.h"

#include <array>
#include <tuple>
#include <vector>

#include "autograd/autograd.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/backend_abi.h"
#include "vnn/detail/message.h"
#include "vnn/error.h"
#include "vnn/linalg.h"

namespace vnn::nn::functional {

static_assert(int(GridSampleMode::bilinear) == VNN_GRID_BILINEAR && int(GridSampleMode::nearest) == VNN_GRID_NEAREST &&
                  int(GridSampleMode::bicubic) == VNN_GRID_BICUBIC,
              "GridSampleMode follows vnn_grid_sample_mode");
static_assert(int(GridSamplePadding::zeros) == VNN_GRID_PAD_ZEROS &&
                  int(GridSamplePadding::border) == VNN_GRID_PAD_BORDER &&
                  int(GridSamplePadding::reflection) == VNN_GRID_PAD_REFLECTION,
              "GridSamplePadding follows vnn_grid_padding_mode");

GridSampleFuncOptions& GridSampleFuncOptions::mode(InterpolateMode m) {
  VNN_CHECK(ValueError, m == InterpolateMode::bilinear || m == InterpolateMode::nearest,
            "grid_sample: mode must be kBilinear, kNearest or kBicubic (interpolate's other modes do not apply)");
  mode_ = m == InterpolateMode::bilinear ? GridSampleMode::bilinear : GridSampleMode::nearest;
  return *this;
}

GridSampleFuncOptions& GridSampleFuncOptions::padding_mode(PadMode p) {
  VNN_CHECK(ValueError, p == PadMode::constant,
            "grid_sample: padding_mode must be kZeros, kBorder or kReflection (kReflect, kReplicate and kCircular "
            "are pad's modes)");
  padding_mode_ = GridSamplePadding::zeros;
  return *this;
}

namespace {

using vnn::detail::Span;

Shape sampled_shape(const Tensor& input, const Tensor& grid) {
  std::vector<int64_t> s = {input.size(0), input.size(1)};
  for (int d = 1; d < grid.dim() - 1; ++d) s.push_back(grid.size(d));
  return Shape(s);
}

// dx (zeros, then scatter-added by the kernel) and dgrid of one backward.
std::tuple<Tensor, Tensor> grid_sample_backward(const Tensor& dout, const Tensor& x, const Tensor& grid,
                                                const vnn_grid_sample_params& p) {
  const char* op = "grid_sample_backward";
  vnn::detail::check_same_device(x, dout, op, "grad_output");
  VNN_CHECK(ShapeError, dout.sizes() == sampled_shape(x, grid), op, ": grad_output ", dout.sizes(),
            " should be ", sampled_shape(x, grid).str(), " for input ", x.sizes(), " and grid ", grid.sizes());
  Tensor g = dout.dtype() == x.dtype() ? dout : dout.to(x.dtype());
  Tensor dx = zeros(x.sizes(), TensorOptions(x.device()).with(x.dtype()));
  Tensor dgrid = vnn::detail::make_empty(x.impl()->ctx(), grid.sizes(), grid.dtype());
  std::array<int64_t, VNN_GRID_SAMPLE_NUM_INTS> ints;
  vnn_grid_sample_pack(&p, ints.data());
  vnn::detail::enqueue(VNN_OP_GRID_SAMPLE_BACKWARD, op, {&g, &x, &grid}, {&dx, &dgrid}, {},
                  Span<int64_t>(ints.data(), ints.size()));
  return {dx, dgrid};
}

void check_grid_sample(const Tensor& input, const Tensor& grid, const vnn_grid_sample_params& p) {
  const char* op = "grid_sample";
  VNN_CHECK(ValueError, input.defined(), op, ": argument 'input' is an undefined tensor");
  VNN_CHECK(ValueError, grid.defined(), op, ": argument 'grid' is an undefined tensor");
  vnn::detail::check_same_device(input, grid, op, "grid");
  VNN_CHECK(ShapeError, input.dim() == 4 || input.dim() == 5, op,
            ": input must be 4-D [N, C, H, W] or 5-D [N, C, D, H, W], got shape ", input.sizes());
  const int spatial = input.dim() - 2;
  VNN_CHECK(ShapeError, grid.dim() == input.dim() && grid.size(grid.dim() - 1) == spatial, op, ": grid ",
            grid.sizes(), " must be ", (spatial == 2 ? "[N, Ho, Wo, 2]" : "[N, Do, Ho, Wo, 3]"), " for input ",
            input.sizes());
  VNN_CHECK(ShapeError, grid.size(0) == input.size(0), op, ": grid ", grid.sizes(), " and input ", input.sizes(),
            " must have the same batch size N");
  VNN_CHECK(DTypeError, is_floating(input.dtype()) && grid.dtype() == input.dtype(), op,
            ": input and grid must have one floating dtype, got ", input.dtype(), " and ", grid.dtype(),
            "; convert them with .to(vnn::kFloat)");
  VNN_CHECK(ValueError, p.mode != VNN_GRID_BICUBIC || spatial == 2, op,
            ": mode kBicubic takes a 4-D input only, got input ", input.sizes(), "; use kBilinear (trilinear) or "
            "kNearest for 5-D");
  for (int d = 2; d < input.dim(); ++d)
    VNN_CHECK(ShapeError, input.size(d) > 0, op, ": input ", input.sizes(), " has an empty spatial dim");
}

Tensor run_grid_sample(const Tensor& input, const Tensor& grid, const vnn_grid_sample_params& p) {
  Tensor out = vnn::detail::make_empty(input.impl()->ctx(), sampled_shape(input, grid), input.dtype());
  std::array<int64_t, VNN_GRID_SAMPLE_NUM_INTS> ints;
  vnn_grid_sample_pack(&p, ints.data());
  vnn::detail::enqueue(VNN_OP_GRID_SAMPLE, "grid_sample", {&input, &grid}, {&out}, {},
                  Span<int64_t>(ints.data(), ints.size()));
  if (vnn::detail::needs_grad({&input, &grid})) {
    Tensor x = input.detach(), g = grid.detach();
    vnn::detail::record("grid_sample", out, {&input, &grid},
                   [=](const Tensor& dout) {
                     auto [dx, dgrid] = grid_sample_backward(dout, x, g, p);
                     return std::vector<Tensor>{dx, dgrid};
                   },
                   {&input, &grid});
  }
  return out;
}

}  // namespace

Tensor grid_sample(const Tensor& input, const Tensor& grid, const GridSampleFuncOptions& options) {
  vnn_grid_sample_params p{};
  p.mode = int64_t(options.mode());
  p.padding_mode = int64_t(options.padding_mode());
  p.align_corners = options.align_corners().value_or(false) ? 1 : 0;
  check_grid_sample(input, grid, p);
  // 16-bit floats: computed in float32 (the conversions carry the gradient).
  if (input.dtype() != kFloat32 && input.dtype() != kFloat64)
    return grid_sample(input.to(kFloat32), grid.to(kFloat32), options).to(input.dtype());
  return run_grid_sample(input, grid, p);
}

Tensor affine_grid(const Tensor& theta, const std::vector<int64_t>& size, bool align_corners) {
  const char* op = "affine_grid";
  VNN_CHECK(ValueError, theta.defined(), op, ": argument 'theta' is an undefined tensor");
  VNN_CHECK(DTypeError, is_floating(theta.dtype()), op, ": theta must be floating, got ", theta.dtype(),
            "; convert it with .to(vnn::kFloat)");
  VNN_CHECK(ValueError, size.size() == 4 || size.size() == 5, op,
            ": size must be 4-D {N, C, H, W} or 5-D {N, C, D, H, W}, got ", size.size(), " values");
  for (int64_t s : size) VNN_CHECK(ValueError, s > 0, op, ": size must be positive, got ", Shape(size));
  const int spatial = int(size.size()) - 2;
  VNN_CHECK(ShapeError, theta.dim() == 3 && theta.size(0) == size[0] && theta.size(1) == spatial &&
                            theta.size(2) == spatial + 1,
            op, ": theta must be [N, ", spatial, ", ", spatial + 1, "] = [", size[0], ", ", spatial, ", ",
            spatial + 1, "] for size ", Shape(size), ", got ", theta.sizes());
  // Normalized positions along one dim (PyTorch's linspace(-1, 1, n), scaled
  // by (n - 1) / n without align_corners; one step: 0).
  auto position = [&](int64_t i, int64_t n) {
    if (n <= 1) return 0.0;
    const double v = -1.0 + 2.0 * double(i) / double(n - 1);
    return align_corners ? v : v * double(n - 1) / double(n);
  };
  // Base grid [P, spatial + 1]: rows (x, y[, z], 1), x varying fastest.
  const int64_t W = size.back(), H = size[size.size() - 2], D = spatial == 3 ? size[2] : 1;
  std::vector<double> base;
  base.reserve(size_t(D * H * W * (spatial + 1)));
  for (int64_t d = 0; d < D; ++d)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t w = 0; w < W; ++w) {
        base.push_back(position(w, W));
        base.push_back(position(h, H));
        if (spatial == 3) base.push_back(position(d, D));
        base.push_back(1.0);
      }
  Tensor b = from_vector(base, {D * H * W, int64_t(spatial + 1)}, theta.device()).to(theta.dtype());
  Tensor grid = matmul(b, theta.transpose(1, 2));  // [N, P, spatial]
  std::vector<int64_t> shape = {size[0]};
  shape.insert(shape.end(), size.begin() + 2, size.end());
  shape.push_back(spatial);
  return grid.reshape(Shape(shape));
}

}  // namespace vnn::nn::functional
