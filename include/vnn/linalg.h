// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Matrix products, with torch.matmul's semantics.
#pragma once
#include "vnn/tensor.h"

namespace vnn {

/// torch.matmul: 1-D x 1-D is a dot product (0-dim result); 2-D x 2-D a
/// matrix product; a 1-D first operand is a row vector and a 1-D second a
/// column vector (the added dim is removed afterwards); otherwise the last
/// two dims multiply and the leading (batch) dims broadcast.
/// Operands: the same floating or 32/64-bit integer dtype, the same device.
Tensor matmul(const Tensor& a, const Tensor& b);
/// a [n, k] @ b [k, m]; both exactly 2-D.
Tensor mm(const Tensor& a, const Tensor& b);

/// Batched a [B, n, k] @ b [B, k, m] -> [B, n, m]; both exactly 3-D with equal B (torch.bmm).
Tensor bmm(const Tensor& a, const Tensor& b);
/// beta * self + alpha * (mat1 [n, k] @ mat2 [k, m]), self broadcast to [n, m] (torch.addmm).
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, double beta = 1.0, double alpha = 1.0);
/// input [..., in] @ weight [out, in]^T + bias [out] (torch.nn.functional.linear); bias may be undefined.
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor());

}  // namespace vnn
