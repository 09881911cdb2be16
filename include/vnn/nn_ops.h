// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Neural-network primitives with PyTorch's semantics (torch.nn.functional
// names), as free functions in namespace vnn. Forward and backward are
// separate functions so that an autograd layer can call them later.
//  - Images are 4-D [N, C, H, W]; float32, float64, float16 or bfloat16
//    (16-bit operands accumulate in float32 and return their own dtype;
//    docs/dtypes.md); all operands on one device. Errors are vnn
//    exceptions naming op, argument and shapes.
//  - conv2d = IM2COL + one batched MATMUL per group; its backward is
//    MATMUL + COL2IM (input) and MATMUL over the columns (weight).
//  - Pooling runs VNN_OP_POOL2D / VNN_OP_POOL2D_BACKWARD; normalization is
//    composed from core reductions and elementwise ops.
#pragma once
#include <cstdint>
#include <tuple>

#include "vnn/tensor.h"

namespace vnn {

/// A (height, width) pair; one number means both.
struct Size2 {
  /// Height and width.
  ///@{
  int64_t h = 0, w = 0;
  ///@}
  /// Both sizes `v` (implicit, so 3 means 3 x 3).
  Size2(int64_t v = 0) : h(v), w(v) {}  // NOLINT: implicit by design
  /// Height `hh` and width `ww`.
  Size2(int64_t hh, int64_t ww) : h(hh), w(ww) {}
};

// ---- convolution --------------------------------------------------------
// input [N, C, H, W], weight [O, C/groups, kh, kw], bias [O] or undefined.
// Output [N, O, OH, OW], OH = (H + 2*pad - dil*(kh-1) - 1) / stride + 1.
/// 2-D convolution of [N, C, H, W] by weight [O, C/groups, kh, kw] (+ bias [O]); output [N, O, OH, OW].
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), Size2 stride = 1,
              Size2 padding = 0, Size2 dilation = 1, int64_t groups = 1);
/// d loss / d input for grad_output [N, O, OH, OW]; input_sizes = [N, C, H, W].
Tensor conv2d_backward_input(const Tensor& grad_output, const Tensor& weight, const Shape& input_sizes,
                             Size2 stride = 1, Size2 padding = 0, Size2 dilation = 1, int64_t groups = 1);
/// d loss / d weight; weight_sizes = [O, C/groups, kh, kw].
Tensor conv2d_backward_weight(const Tensor& grad_output, const Tensor& input, const Shape& weight_sizes,
                              Size2 stride = 1, Size2 padding = 0, Size2 dilation = 1, int64_t groups = 1);
/// d loss / d bias = grad_output summed over N, OH, OW: [O].
Tensor conv2d_backward_bias(const Tensor& grad_output);

// ---- pooling --------------------------------------------------------------
// stride 0 (the default) means stride = kernel_size, as in PyTorch. Padding
// may be at most half the kernel. Output sizes use floor (ceil_mode=False).
// Max pooling: indices are int64 positions h * W + w in the input plane;
// NaN counts as the largest value.
/// Max pooling with int64 indices h * W + w into the input plane (stride 0: the kernel size; NaN counts as largest).
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, Size2 kernel_size, Size2 stride = 0,
                                                   Size2 padding = 0, Size2 dilation = 1);
/// Max pooling without the indices (stride 0: the kernel size; output sizes use floor).
Tensor max_pool2d(const Tensor& input, Size2 kernel_size, Size2 stride = 0, Size2 padding = 0, Size2 dilation = 1);
/// grad_output and indices [N, C, OH, OW] from max_pool2d_with_indices with
/// the same arguments; returns grad_input shaped like input.
Tensor max_pool2d_backward(const Tensor& grad_output, const Tensor& input, const Tensor& indices, Size2 kernel_size,
                           Size2 stride = 0, Size2 padding = 0, Size2 dilation = 1);
// divisor_override 0: none.
/// Average pooling (stride 0: the kernel size); divisor_override 0: none.
Tensor avg_pool2d(const Tensor& input, Size2 kernel_size, Size2 stride = 0, Size2 padding = 0,
                  bool count_include_pad = true, int64_t divisor_override = 0);
/// The gradient of avg_pool2d with respect to its input, for the same arguments.
Tensor avg_pool2d_backward(const Tensor& grad_output, const Tensor& input, Size2 kernel_size, Size2 stride = 0,
                           Size2 padding = 0, bool count_include_pad = true, int64_t divisor_override = 0);
/// Windows [floor(o*H/OH), ceil((o+1)*H/OH)) per output, as in PyTorch.
Tensor adaptive_avg_pool2d(const Tensor& input, Size2 output_size);
/// The gradient of adaptive_avg_pool2d with respect to its input.
Tensor adaptive_avg_pool2d_backward(const Tensor& grad_output, const Tensor& input);
/// Adaptive max pooling to `output_size` (PyTorch's windows), with int64 indices h * W + w.
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, Size2 output_size);
/// The gradient of adaptive_max_pool2d with respect to its input, from its indices.
Tensor adaptive_max_pool2d_backward(const Tensor& grad_output, const Tensor& input, const Tensor& indices);

// ---- normalization ------------------------------------------------------
// Per-channel mean and biased variance of [N, C, *] over every dim but 1.
/// Per-channel mean and biased variance of [N, C, *] over every dim but 1.
std::tuple<Tensor, Tensor> batch_norm_stats(const Tensor& input);
/// input [N, C, *]; weight, bias, running_mean, running_var [C] or undefined.
/// training: normalise with the batch statistics and, where running stats
/// are given, update them in place: r = (1 - momentum) * r + momentum * s
/// (running_var takes the unbiased variance, as PyTorch). Eval: normalise
/// with the running stats. Returns (out, save_mean, save_invstd), the
/// statistics used ([C]) for batch_norm_backward.
std::tuple<Tensor, Tensor, Tensor> batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                              const Tensor& running_mean, const Tensor& running_var, bool training,
                                              double momentum = 0.1, double eps = 1e-5);
/// Returns (grad_input, grad_weight, grad_bias); grad_weight is undefined
/// when weight is. training must match the forward call (eval treats the
/// statistics as constants).
std::tuple<Tensor, Tensor, Tensor> batch_norm_backward(const Tensor& grad_output, const Tensor& input,
                                                       const Tensor& weight, const Tensor& save_mean,
                                                       const Tensor& save_invstd, bool training);
/// Normalises over the last normalized_shape.size() dims, which must equal
/// normalized_shape; weight / bias have that shape or are undefined. Returns
/// (out, mean, rstd) with mean / rstd shaped [leading..., 1, ..., 1].
std::tuple<Tensor, Tensor, Tensor> layer_norm(const Tensor& input, const Shape& normalized_shape,
                                              const Tensor& weight = Tensor(), const Tensor& bias = Tensor(),
                                              double eps = 1e-5);
/// The gradients (input, weight, bias) of layer_norm from its saved mean and rstd.
std::tuple<Tensor, Tensor, Tensor> layer_norm_backward(const Tensor& grad_output, const Tensor& input,
                                                       const Shape& normalized_shape, const Tensor& mean,
                                                       const Tensor& rstd, const Tensor& weight = Tensor());
/// input [N, C, *] with C % num_groups == 0; weight / bias [C] or undefined.
/// Returns (out, mean [N, G], rstd [N, G]).
std::tuple<Tensor, Tensor, Tensor> group_norm(const Tensor& input, int64_t num_groups,
                                              const Tensor& weight = Tensor(), const Tensor& bias = Tensor(),
                                              double eps = 1e-5);

}  // namespace vnn
