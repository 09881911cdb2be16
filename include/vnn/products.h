// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// LibTorch's tensor products and statistics built on them (outer, inner,
// kron, tensordot, einsum, cross, cdist, cov, corrcoef), with PyTorch's
// names, defaults and semantics. Each is composed of broadcast mul, sums
// and matmul/bmm, so it runs on every device and is differentiable through
// its parts. Operands of different dtypes are promoted to a common one.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vnn/tensor.h"

namespace vnn {

/// The outer product of two 1-D tensors: out[i][j] = a[i] * b[j].
Tensor outer(const Tensor& a, const Tensor& b);
/// outer (torch.ger).
Tensor ger(const Tensor& a, const Tensor& b);
/// The sum over the last dims of a and b of their product; shape a[:-1] + b[:-1]
/// (a 0-D operand multiplies).
Tensor inner(const Tensor& a, const Tensor& b);
/// The Kronecker product: shape a.size(i) * b.size(i) per dim (the fewer dims padded with leading ones).
Tensor kron(const Tensor& a, const Tensor& b);
/// The sum over the last `dims` dims of a times the first `dims` dims of b.
Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims = 2);
/// The sum over a's dims_a paired with b's dims_b; the result holds a's other dims, then b's.
Tensor tensordot(const Tensor& a, const Tensor& b, const std::vector<int64_t>& dims_a,
                 const std::vector<int64_t>& dims_b);
/// Einstein summation, torch.einsum's string form: "ij,jk->ik", implicit
/// output ("ij,jk": the labels used once, sorted), repeated labels within an
/// operand (diagonals: "ii->i", traces: "ii"), "..." for broadcast dims.
/// Lowered to diagonal views, permutes, sums and one bmm per operand pair.
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);
/// The cross product of 3-vectors along dim (none: the first dim of size 3); a and b broadcast.
Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim = std::nullopt);
/// The cross product along dim (default the last), torch.linalg.cross.
Tensor linalg_cross(const Tensor& a, const Tensor& b, int64_t dim = -1);
/// The p-norm distance between each row of x1 [..., P, M] and of x2 [..., R, M]:
/// [..., P, R] (batch dims broadcast); p >= 0. compute_mode as PyTorch's: none or 0, p = 2 with
/// more than 25 rows uses the matmul expansion; 1: p = 2 always does; 2: never.
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2.0, std::optional<int64_t> compute_mode = std::nullopt);
/// The covariance matrix of the variables in the rows of t (observations in
/// the columns; 1-D: one variable), divided by N - correction (weighted: as
/// torch.cov). fweights: integer counts per observation; aweights: floating weights.
Tensor cov(const Tensor& t, int64_t correction = 1, const Tensor& fweights = Tensor(),
           const Tensor& aweights = Tensor());
/// Pearson's correlation coefficients of the rows of t, clamped to [-1, 1].
Tensor corrcoef(const Tensor& t);

}  // namespace vnn
