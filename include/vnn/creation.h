// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Creation ops beyond those in tensor.h: linspace, eye, the *_like family
// with dtype / device overrides, and small literal tensors.
#pragma once
#include <cstdint>
#include <initializer_list>

#include "vnn/tensor.h"

namespace vnn {

/// `steps` values from start to end inclusive, evenly spaced (steps == 1:
/// just start). Computed in float64 on the host, then converted.
Tensor linspace(double start, double end, int64_t steps, const TensorOptions& opt = {});

/// An n x m (m < 0: n x n) matrix with ones on the diagonal.
Tensor eye(int64_t n, int64_t m = -1, const TensorOptions& opt = {});
/// An n x n identity with options: vnn::eye(3, device), vnn::eye(3, vnn::kLong) (torch::eye(n, options)).
inline Tensor eye(int64_t n, const TensorOptions& opt) { return eye(n, -1, opt); }

// The *_like family with an override. A DType or Device overrides just that
// field and keeps the other from t; a TensorOptions replaces both (write
// TensorOptions(t.device()).with(kFloat64) to keep t's device).
/// An uninitialised tensor with t's shape and device and `dtype`.
Tensor empty_like(const Tensor& t, DType dtype);
/// An uninitialised tensor with t's shape and dtype on `device`.
Tensor empty_like(const Tensor& t, const Device& device);
/// An uninitialised tensor with t's shape and the dtype and device of `opt`.
Tensor empty_like(const Tensor& t, const TensorOptions& opt);
/// Zeros with t's shape and device and `dtype`.
Tensor zeros_like(const Tensor& t, DType dtype);
/// Zeros with t's shape and dtype on `device`.
Tensor zeros_like(const Tensor& t, const Device& device);
/// Zeros with t's shape and the dtype and device of `opt`.
Tensor zeros_like(const Tensor& t, const TensorOptions& opt);
/// Ones with t's shape and device and `dtype`.
Tensor ones_like(const Tensor& t, DType dtype);
/// Ones with t's shape and dtype on `device`.
Tensor ones_like(const Tensor& t, const Device& device);
/// Ones with t's shape and the dtype and device of `opt`.
Tensor ones_like(const Tensor& t, const TensorOptions& opt);
/// `value` with t's shape and device and `dtype`.
Tensor full_like(const Tensor& t, double value, DType dtype);
/// `value` with t's shape and dtype on `device`.
Tensor full_like(const Tensor& t, double value, const Device& device);
/// `value` with t's shape and the dtype and device of `opt`.
Tensor full_like(const Tensor& t, double value, const TensorOptions& opt);

/// Literal tensors: vnn::tensor({1, 2, 3}) is 1-D, vnn::tensor({{1, 2},
/// {3, 4}}) 2-D (rows must have equal lengths: ShapeError). Default float32.
Tensor tensor(std::initializer_list<double> values, const TensorOptions& opt = {});
/// A 2-D literal tensor from rows of equal length (ShapeError otherwise); float32 unless opt names a dtype.
Tensor tensor(std::initializer_list<std::initializer_list<double>> rows, const TensorOptions& opt = {});

}  // namespace vnn
