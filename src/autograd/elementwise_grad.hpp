// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Backward formulas of the elementwise ops (binary, unary, where).
#pragma once
#include "autograd/autograd.hpp"

namespace vnn::detail {

// Null for functions without a gradient (comparisons, logical ops).
// a, b: the operands as the kernel saw them (promoted and expanded).
BackwardFn binary_backward(vnn_binary_fn fn, const Tensor& a, const Tensor& b, const SavedOutput& out, double alpha);
// s0, s1: the op's scalars (leaky_relu slope, clamp bounds).
BackwardFn unary_backward(vnn_unary_fn fn, const Tensor& in, const SavedOutput& out, double s0, double s1);
// where(cond, a, b): gradients to a and b (cond has none).
BackwardFn where_backward(const Tensor& cond);

// Runs an in-place op so that autograd sees it: `compute(old)` builds the
// new value out of place from a copy of self's old value (so formulas that
// need the old value still have it); the result lands in self's storage
// and self takes over its history.
Tensor& inplace_with_grad(Tensor& self, const char* op, const std::function<Tensor(const Tensor& old)>& compute);

}  // namespace vnn::detail
