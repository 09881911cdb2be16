// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The `inplace` options of the nn modules and functions: the result is
// computed out of place (so autograd records ordinary ops), then copied into
// the input, which is returned.
#pragma once
#include "vnn/tensor.h"

namespace vnn::nn::detail {

/// y, or y copied into `input` (a handle to its storage) when inplace.
inline Tensor write_into_input(Tensor input, const Tensor& y, bool inplace) {
  if (!inplace) return y;
  input.copy_(y);
  return input;
}

}  // namespace vnn::nn::detail
