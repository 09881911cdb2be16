// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// 2-D pooling: every variant is one VNN_OP_POOL2D (forward) or
// VNN_OP_POOL2D_BACKWARD (a per-input-pixel gather) whose ints are the
// ABI's vnn_pool2d_params, packed here (pool_ints) and nowhere else in the
// core; see docs/ops.md.
#include <array>
#include <string>
#include <vector>

#include "autograd/autograd.hpp"
#include "ops/low_precision.hpp"
#include "ops/size2_text.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/backend_abi.h"
#include "vnn/detail/message.h"
#include "vnn/error.h"
#include "vnn/nn_ops.h"

namespace vnn {

using ops_text::pair_str;

namespace {

using detail::Span;


struct PoolArgs {
  vnn_pool2d_params p;  // what the backend gets
  Size2 out;            // OH, OW
};

// The op's ints (vnn_pool2d_pack: the ABI's field order).
std::array<int64_t, VNN_POOL2D_NUM_INTS> pool_ints(const PoolArgs& a) {
  std::array<int64_t, VNN_POOL2D_NUM_INTS> ints;
  vnn_pool2d_pack(&a.p, ints.data());
  return ints;
}

vnn_pool2d_params pool_params(vnn_pool_mode mode, Size2 kernel, Size2 stride, Size2 padding, Size2 dilation) {
  vnn_pool2d_params p{};
  p.mode = mode;
  p.kernel_h = kernel.h, p.kernel_w = kernel.w;
  p.stride_h = stride.h, p.stride_w = stride.w;
  p.pad_h = padding.h, p.pad_w = padding.w;
  p.dilation_h = dilation.h, p.dilation_w = dilation.w;
  p.count_include_pad = 1;
  p.divisor_override = 0;
  return p;
}

void check_input(const char* op, const Tensor& input) {
  VNN_CHECK(ValueError, input.defined(), op, ": argument 'input' is undefined");
  VNN_CHECK(DTypeError, is_floating(input.dtype()), op, ": input must be float32, float64, float16 or bfloat16, got ",
            name(input.dtype()), "; convert with .to(vnn::kFloat32)");
  VNN_CHECK(ShapeError, input.dim() == 4, op, ": expected a 4-D input [N, C, H, W], got input ", input.sizes());
  if (input.size(2) <= 0 || input.size(3) <= 0)
    VNN_THROW(ShapeError, op, ": input ", input.sizes(), " has an empty H or W plane");
}

// Validates a fixed-window pooling and derives the output size.
PoolArgs fixed_args(const char* op, const Tensor& input, vnn_pool_mode mode, Size2 kernel, Size2 stride, Size2 padding,
                    Size2 dilation) {
  check_input(op, input);
  if (stride.h == 0 && stride.w == 0) stride = kernel;
  if (kernel.h <= 0 || kernel.w <= 0)
    VNN_THROW(ValueError, op, ": kernel_size must be positive, got ", pair_str(kernel));
  if (stride.h <= 0 || stride.w <= 0) VNN_THROW(ValueError, op, ": stride must be positive, got ", pair_str(stride));
  if (dilation.h <= 0 || dilation.w <= 0)
    VNN_THROW(ValueError, op, ": dilation must be positive, got ", pair_str(dilation));
  if (padding.h < 0 || padding.w < 0 || padding.h > kernel.h / 2 || padding.w > kernel.w / 2)
    VNN_THROW(ValueError, op, ": padding ", pair_str(padding),
              " must be non-negative and at most half the kernel_size ", pair_str(kernel));
  // User arguments: a huge dilation or padding must not wrap.
  const int64_t eh = detail::checked_product(op, {dilation.h, kernel.h - 1}, "dilation * (kernel_size - 1)") + 1;
  const int64_t ew = detail::checked_product(op, {dilation.w, kernel.w - 1}, "dilation * (kernel_size - 1)") + 1;
  const int64_t ph = detail::checked_sum(op, {input.size(2), padding.h, padding.h}, "padded height");
  const int64_t pw = detail::checked_sum(op, {input.size(3), padding.w, padding.w}, "padded width");
  if (ph < eh || pw < ew)
    VNN_THROW(ShapeError, op, ": kernel_size ", pair_str(kernel), " (dilation ", pair_str(dilation),
              ") is larger than the padded input ", input.sizes());
  Size2 out((ph - eh) / stride.h + 1, (pw - ew) / stride.w + 1);
  return PoolArgs{pool_params(mode, kernel, stride, padding, dilation), out};
}

PoolArgs adaptive_args(const char* op, const Tensor& input, vnn_pool_mode mode, Size2 out) {
  check_input(op, input);
  if (out.h <= 0 || out.w <= 0) VNN_THROW(ValueError, op, ": output_size must be positive, got ", pair_str(out));
  return PoolArgs{pool_params(mode, 1, 1, 0, 1), out};
}

Shape out_shape(const Tensor& input, const PoolArgs& a) { return {input.size(0), input.size(1), a.out.h, a.out.w}; }

// Max modes also write the indices (idx), the op's second output.
void run_forward(const char* op, const Tensor& input, const PoolArgs& a, const Tensor& out, const Tensor* idx) {
  const auto ints = pool_ints(a);
  const Span<int64_t> iv(ints.data(), ints.size());
  if (idx)
    detail::enqueue(VNN_OP_POOL2D, op, {&input}, {&out, idx}, {}, iv);
  else
    detail::enqueue(VNN_OP_POOL2D, op, {&input}, {&out}, {}, iv);
}

Tensor run_backward(const char* op, const Tensor& grad, const Tensor& input, const Tensor* idx, const PoolArgs& a) {
  detail::check_same_device(input, grad, op, "grad_output");
  VNN_CHECK(DTypeError, grad.dtype() == input.dtype(), op, ": grad_output dtype ", name(grad.dtype()),
            " differs from input dtype ", name(input.dtype()));
  Shape want = out_shape(input, a);
  VNN_CHECK(ShapeError, grad.sizes() == want, op, ": grad_output ", grad.sizes(), " should be ", want.str(),
            " for input ", input.sizes());
  Tensor gx = detail::make_empty(input.impl()->ctx(), input.sizes(), input.dtype());
  const auto ints = pool_ints(a);
  const Span<int64_t> iv(ints.data(), ints.size());
  if (idx) {
    detail::check_same_device(input, *idx, op, "indices");
    if (idx->dtype() != kInt64 || idx->sizes() != want)
      VNN_THROW(ShapeError, op, ": indices must be int64 ", want.str(), ", got ", name(idx->dtype()), " ",
                idx->sizes());
    detail::enqueue(VNN_OP_POOL2D_BACKWARD, op, {&grad, idx}, {&gx}, {}, iv);
  } else {
    detail::enqueue(VNN_OP_POOL2D_BACKWARD, op, {&grad}, {&gx}, {}, iv);
  }
  return gx;
}

// run_backward on 16-bit storage where the backend takes it, else on
// float32 copies (the gradient sums accumulate in float32 either way).
Tensor native_backward(const char* op, const Tensor& grad, const Tensor& input, const Tensor* idx, const PoolArgs& a) {
  return detail::native_or_float32(input.impl()->ctx(), input.dtype(), VNN_OP_POOL2D_BACKWARD,
                                   [&] { return run_backward(op, grad, input, idx, a); },
                                   [&] { return run_backward(op, grad.to(kFloat32), input.to(kFloat32), idx, a)
                                             .to(input.dtype()); });
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, Size2 kernel_size, Size2 stride,
                                                   Size2 padding, Size2 dilation) {
  const char* op = "max_pool2d";
  PoolArgs a = fixed_args(op, input, VNN_POOL_MAX, kernel_size, stride, padding, dilation);
  auto& ctx = input.impl()->ctx();
  return detail::native_or_float32(ctx, input.dtype(), VNN_OP_POOL2D, [&]() -> std::tuple<Tensor, Tensor> {
    Tensor out = detail::make_empty(ctx, out_shape(input, a), input.dtype());
    Tensor idx = detail::make_empty(ctx, out_shape(input, a), kInt64);
    run_forward(op, input, a, out, &idx);
    if (detail::needs_grad({&input})) {
      Tensor x = input.detach();
      detail::record(op, out, {&input}, [=](const Tensor& g) {
        return std::vector<Tensor>{max_pool2d_backward(g, x, idx, kernel_size, stride, padding, dilation)};
      });
    }
    return {out, idx};
  }, [&]() -> std::tuple<Tensor, Tensor> {
    auto [out, idx] = max_pool2d_with_indices(input.to(kFloat32), kernel_size, stride, padding, dilation);
    return {out.to(input.dtype()), idx};
  });
}

Tensor max_pool2d(const Tensor& input, Size2 kernel_size, Size2 stride, Size2 padding, Size2 dilation) {
  return std::get<0>(max_pool2d_with_indices(input, kernel_size, stride, padding, dilation));
}

Tensor max_pool2d_backward(const Tensor& grad_output, const Tensor& input, const Tensor& indices, Size2 kernel_size,
                           Size2 stride, Size2 padding, Size2 dilation) {
  const char* op = "max_pool2d_backward";
  PoolArgs a = fixed_args(op, input, VNN_POOL_MAX, kernel_size, stride, padding, dilation);
  return native_backward(op, grad_output, input, &indices, a);
}

namespace {

// avg_pool2d's arguments, checked once for forward and backward.
PoolArgs avg_args(const char* op, const Tensor& input, Size2 kernel_size, Size2 stride, Size2 padding,
                  bool count_include_pad, int64_t divisor_override) {
  PoolArgs a = fixed_args(op, input, VNN_POOL_AVG, kernel_size, stride, padding, 1);
  if (divisor_override < 0)
    VNN_THROW(ValueError, op, ": divisor_override must be positive (0: none), got ", divisor_override);
  a.p.count_include_pad = count_include_pad ? 1 : 0;
  a.p.divisor_override = divisor_override;
  return a;
}

}  // namespace

Tensor avg_pool2d(const Tensor& input, Size2 kernel_size, Size2 stride, Size2 padding, bool count_include_pad,
                  int64_t divisor_override) {
  const char* op = "avg_pool2d";
  PoolArgs a = avg_args(op, input, kernel_size, stride, padding, count_include_pad, divisor_override);
  return detail::native_or_float32(input.impl()->ctx(), input.dtype(), VNN_OP_POOL2D, [&] {
    Tensor out = detail::make_empty(input.impl()->ctx(), out_shape(input, a), input.dtype());
    run_forward(op, input, a, out, nullptr);
    if (detail::needs_grad({&input})) {
      Tensor x = input.detach();
      detail::record(op, out, {&input}, [=](const Tensor& g) {
        return std::vector<Tensor>{
            avg_pool2d_backward(g, x, kernel_size, stride, padding, count_include_pad, divisor_override)};
      });
    }
    return out;
  }, [&] {
    return avg_pool2d(input.to(kFloat32), kernel_size, stride, padding, count_include_pad, divisor_override)
        .to(input.dtype());
  });
}

Tensor avg_pool2d_backward(const Tensor& grad_output, const Tensor& input, Size2 kernel_size, Size2 stride,
                           Size2 padding, bool count_include_pad, int64_t divisor_override) {
  const char* op = "avg_pool2d_backward";
  PoolArgs a = avg_args(op, input, kernel_size, stride, padding, count_include_pad, divisor_override);
  return native_backward(op, grad_output, input, nullptr, a);
}

Tensor adaptive_avg_pool2d(const Tensor& input, Size2 output_size) {
  const char* op = "adaptive_avg_pool2d";
  PoolArgs a = adaptive_args(op, input, VNN_POOL_ADAPTIVE_AVG, output_size);
  return detail::native_or_float32(input.impl()->ctx(), input.dtype(), VNN_OP_POOL2D, [&] {
    Tensor out = detail::make_empty(input.impl()->ctx(), out_shape(input, a), input.dtype());
    run_forward(op, input, a, out, nullptr);
    if (detail::needs_grad({&input})) {
      Tensor x = input.detach();
      detail::record(op, out, {&input},
                     [x](const Tensor& g) { return std::vector<Tensor>{adaptive_avg_pool2d_backward(g, x)}; });
    }
    return out;
  }, [&] { return adaptive_avg_pool2d(input.to(kFloat32), output_size).to(input.dtype()); });
}

Tensor adaptive_avg_pool2d_backward(const Tensor& grad_output, const Tensor& input) {
  const char* op = "adaptive_avg_pool2d_backward";
  VNN_CHECK(ShapeError, grad_output.dim() == 4, op, ": expected a 4-D grad_output, got ", grad_output.sizes());
  PoolArgs a = adaptive_args(op, input, VNN_POOL_ADAPTIVE_AVG, Size2(grad_output.size(2), grad_output.size(3)));
  return native_backward(op, grad_output, input, nullptr, a);
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, Size2 output_size) {
  const char* op = "adaptive_max_pool2d";
  PoolArgs a = adaptive_args(op, input, VNN_POOL_ADAPTIVE_MAX, output_size);
  auto& ctx = input.impl()->ctx();
  return detail::native_or_float32(ctx, input.dtype(), VNN_OP_POOL2D, [&]() -> std::tuple<Tensor, Tensor> {
    Tensor out = detail::make_empty(ctx, out_shape(input, a), input.dtype());
    Tensor idx = detail::make_empty(ctx, out_shape(input, a), kInt64);
    run_forward(op, input, a, out, &idx);
    if (detail::needs_grad({&input})) {
      Tensor x = input.detach();
      detail::record(op, out, {&input},
                     [x, idx](const Tensor& g) { return std::vector<Tensor>{adaptive_max_pool2d_backward(g, x, idx)}; });
    }
    return {out, idx};
  }, [&]() -> std::tuple<Tensor, Tensor> {
    auto [out, idx] = adaptive_max_pool2d(input.to(kFloat32), output_size);
    return {out.to(input.dtype()), idx};
  });
}

Tensor adaptive_max_pool2d_backward(const Tensor& grad_output, const Tensor& input, const Tensor& indices) {
  const char* op = "adaptive_max_pool2d_backward";
  VNN_CHECK(ShapeError, grad_output.dim() == 4, op, ": expected a 4-D grad_output, got ", grad_output.sizes());
  PoolArgs a = adaptive_args(op, input, VNN_POOL_ADAPTIVE_MAX, Size2(grad_output.size(2), grad_output.size(3)));
  return native_backward(op, grad_output, input, &indices, a);
}

}  // namespace vnn
