// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Argument checks and small index helpers shared by the composed shape and
// product ops (src/ops/shape_ops.cpp, shape_diag.cpp, products.cpp, einsum.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "tensor/tensor_impl.hpp"
#include "vnn/detail/message.h"
#include "vnn/error.h"
#include "vnn/tensor.h"

namespace vnn::detail {

// ValueError naming op and arg when t is undefined.
void require_arg(const Tensor& t, const char* op, const char* arg);
// dim in [-ndim, ndim) (0-D tensors accept 0 and -1), as an int in [0, ndim); IndexError otherwise.
int wrap_dim(int64_t dim, int ndim, const char* op);
// Each dim wrapped; a dim listed twice is a ValueError.
std::vector<int> wrap_unique_dims(const std::vector<int64_t>& dims, int ndim, const char* op);
// A 1-D int64 tensor of `values` on `device` (its bounds noted, so index ops skip their host read).
Tensor index_on(const std::vector<int64_t>& values, const Device& device);
// The values of an integer tensor on the host (DTypeError for other dtypes).
std::vector<int64_t> host_integers(const Tensor& t, const char* op, const char* arg);
// The dtype a product of `dt` operands is computed in: dt for floating
// types, int64 for the others (the matrix products take no uint8 or bool;
// sums of integers give int64; the result cast back to dt wraps as dt would).
inline DType product_dtype(DType dt) { return is_floating(dt) ? dt : kInt64; }

}  // namespace vnn::detail
