// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Gradient clipping after torch.nn.utils.clip_grad_norm_ / clip_grad_value_.
#pragma once
#include <vector>

#include "vnn/tensor.h"

namespace vnn::optim {

/// Scales every defined gradient in place so that their joint norm_type-norm
/// is at most max_norm (coefficient max_norm / (norm + 1e-6), capped at 1),
/// and returns that total norm as a 0-dim float64 tensor on the first
/// gradient's device, computed there: one reduction per gradient and no host
/// read (call .item() to read it). norm_type: any p > 0, or INFINITY for the
/// largest magnitude. error_if_nonfinite: throw ValueError when the norm is
/// NaN or Inf (this one reads the norm back). Without gradients it returns 0.
Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

/// Clamps every defined gradient in place to [-clip_value, clip_value].
void clip_grad_value_(const std::vector<Tensor>& params, double clip_value);

}  // namespace vnn::optim

namespace vnn::nn::utils {
/// LibTorch's spelling: vnn::nn::utils::clip_grad_norm_(model->parameters(), 1.0).
using vnn::optim::clip_grad_norm_;
/// LibTorch's spelling: vnn::nn::utils::clip_grad_value_(model->parameters(), 0.5).
using vnn::optim::clip_grad_value_;
}  // namespace vnn::nn::utils
