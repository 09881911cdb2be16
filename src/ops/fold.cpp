// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// F::unfold / F::fold: one VNN_OP_IM2COL / VNN_OP_COL2IM each (the kernels
// conv2d unfolds with), so they run on every device; each records the other
// as its gradient, so double backward works too. 16-bit operands run on
// float32 copies (the kernels take float32 / float64; COL2IM accumulates).
#include <array>
#include <vector>

#include "autograd/autograd.hpp"
#include "ops/low_precision.hpp"
#include "ops/size2_text.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/backend_abi.h"
#include "vnn/detail/message.h"
#include "vnn/error.h"
#include "vnn/nn/fold.h"

namespace vnn::nn::functional {

namespace {

using ops_text::pair_str;

struct BlockGeom {
  Size2 image, blocks;  // H, W of the image; the block grid (OH, OW)
  std::array<int64_t, VNN_CONV2D_NUM_INTS> ints;
};

// Checks kernel / stride / padding / dilation and derives the block grid over an image of `image` size.
BlockGeom block_geometry(const char* op, Size2 image, Size2 kernel, Size2 dilation, Size2 padding, Size2 stride) {
  if (kernel.h <= 0 || kernel.w <= 0 || dilation.h <= 0 || dilation.w <= 0 || stride.h <= 0 || stride.w <= 0)
    VNN_THROW(ValueError, op, ": kernel_size ", pair_str(kernel), ", dilation ", pair_str(dilation), " and stride ",
              pair_str(stride), " must be positive");
  if (padding.h < 0 || padding.w < 0)
    VNN_THROW(ValueError, op, ": padding must be non-negative, got ", pair_str(padding));
  const int64_t eh = detail::checked_product(op, {dilation.h, kernel.h - 1}, "dilation * (kernel_size - 1)") + 1;
  const int64_t ew = detail::checked_product(op, {dilation.w, kernel.w - 1}, "dilation * (kernel_size - 1)") + 1;
  const int64_t ph = detail::checked_sum(op, {image.h, padding.h, padding.h}, "padded height");
  const int64_t pw = detail::checked_sum(op, {image.w, padding.w, padding.w}, "padded width");
  if (image.h <= 0 || image.w <= 0 || ph < eh || pw < ew)
    VNN_THROW(ShapeError, op, ": the dilated kernel (", eh, ", ", ew, ") does not fit the padded image ",
              pair_str(image), " with padding ", pair_str(padding), "; use a smaller kernel_size or dilation");
  BlockGeom g{image, Size2((ph - eh) / stride.h + 1, (pw - ew) / stride.w + 1), {}};
  vnn_conv2d_params p{};
  p.kernel_h = kernel.h, p.kernel_w = kernel.w, p.stride_h = stride.h, p.stride_w = stride.w;
  p.pad_h = padding.h, p.pad_w = padding.w, p.dilation_h = dilation.h, p.dilation_w = dilation.w, p.groups = 1;
  vnn_conv2d_pack(&p, g.ints.data());
  return g;
}

void check_block_input(const char* op, const Tensor& input, int64_t dim_lo) {
  VNN_CHECK(ValueError, input.defined(), op, ": argument 'input' is undefined");
  VNN_CHECK(DTypeError, is_floating(input.dtype()), op, ": input must be float32, float64, float16 or bfloat16, got ",
            name(input.dtype()), "; convert with .to(vnn::kFloat32)");
  VNN_CHECK(ShapeError, input.dim() == dim_lo || input.dim() == dim_lo + 1, op, ": expected a ", dim_lo,
            "-D (unbatched) or ", dim_lo + 1, "-D (batched) input, got ", input.sizes());
}

// IM2COL (col2im false: image -> columns) or COL2IM into a new tensor of `sizes`.
Tensor run_block_op(const Tensor& in, const Shape& sizes, const BlockGeom& g, bool col2im, const char* op) {
  Tensor out = detail::make_empty(in.impl()->ctx(), sizes, in.dtype(), op);
  detail::enqueue(col2im ? VNN_OP_COL2IM : VNN_OP_IM2COL, op, {&in}, {&out}, {},
                  detail::Span<int64_t>(g.ints.data(), VNN_IM2COL_NUM_INTS));
  return out;
}

}  // namespace

Tensor unfold(const Tensor& input, const UnfoldFuncOptions& o) {
  const char* op = "unfold";
  check_block_input(op, input, 3);
  if (input.dim() == 3) return unfold(input.unsqueeze(0), o).squeeze(0);
  if (detail::is_low_precision(input.dtype())) return detail::round_to(unfold(input.to(kFloat32), o), input.dtype());
  const int64_t N = input.size(0), C = input.size(1);
  const Size2 k = o.kernel_size();
  BlockGeom g = block_geometry(op, Size2(input.size(2), input.size(3)), k, o.dilation(), o.padding(), o.stride());
  const int64_t rows = detail::checked_product(op, {C, k.h, k.w}, "C * kernel_h * kernel_w");
  Tensor out = run_block_op(input, {N, rows, g.blocks.h * g.blocks.w}, g, false, op);
  if (detail::needs_grad({&input})) {
    FoldFuncOptions back(g.image, k);
    back.dilation(o.dilation()).padding(o.padding()).stride(o.stride());
    detail::record(op, out, {&input}, [back](const Tensor& grad) { return std::vector<Tensor>{fold(grad, back)}; });
  }
  return out;
}

Tensor fold(const Tensor& input, const FoldFuncOptions& o) {
  const char* op = "fold";
  check_block_input(op, input, 2);
  if (input.dim() == 2) return fold(input.unsqueeze(0), o).squeeze(0);
  if (detail::is_low_precision(input.dtype())) return detail::round_to(fold(input.to(kFloat32), o), input.dtype());
  const Size2 k = o.kernel_size();
  BlockGeom g = block_geometry(op, o.output_size(), k, o.dilation(), o.padding(), o.stride());
  const int64_t N = input.size(0), kk = k.h * k.w, L = g.blocks.h * g.blocks.w;
  if (input.size(1) % kk != 0)
    VNN_THROW(ShapeError, op, ": input ", input.sizes(), " has ", input.size(1),
              " rows, not a multiple of kernel_size ", pair_str(k), " (", kk, " taps per channel)");
  if (input.size(2) != L)
    VNN_THROW(ShapeError, op, ": input ", input.sizes(), " has ", input.size(2), " blocks, but output_size ",
              pair_str(o.output_size()), " with kernel_size ", pair_str(k), ", dilation ", pair_str(o.dilation()),
              ", padding ", pair_str(o.padding()), " and stride ", pair_str(o.stride()), " makes ", L, " (",
              g.blocks.h, " x ", g.blocks.w, ")");
  Tensor out = run_block_op(input, {N, input.size(1) / kk, g.image.h, g.image.w}, g, true, op);
  if (detail::needs_grad({&input})) {
    UnfoldFuncOptions back(k);
    back.dilation(o.dilation()).padding(o.padding()).stride(o.stride());
    detail::record(op, out, {&input}, [back](const Tensor& grad) { return std::vector<Tensor>{unfold(grad, back)}; });
  }
  return out;
}

}  // namespace vnn::nn::functional
