// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shared by the optimizers' and LR schedulers' sources.
#pragma once
#include "vnn/tensor.h"

namespace vnn::optim::util {

constexpr double kPi = 3.14159265358979323846;

// A float64 scalar: the state_dict entries of optimizers and schedulers.
inline Tensor scalar64(double v) { return full(Shape{}, v, TensorOptions(kFloat64)); }

}  // namespace vnn::optim::util
