// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// LibTorch's composite pointwise, product and calculus ops (torch::addcmul,
// lerp, nan_to_num, dot, addmv, baddbmm, diff, trapezoid, isin, logit ...),
// with PyTorch's names, defaults and semantics. Each is a few existing vnn
// ops (broadcast elementwise, matmul/bmm, reductions, cumsum), so every
// device runs it and autograd follows its parts; each is at the memory floor
// of its parts (one pass per elementwise step) or one GEMM.
#pragma once
#include <cstdint>
#include <optional>

#include "vnn/tensor.h"

namespace vnn {

// ---- pointwise ---------------------------------------------------------------------
/// self + value * t1 * t2 (broadcast).
Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, double value = 1.0);
/// self + value * t1 / t2 (broadcast; integer t1 and t2 are refused, as PyTorch's).
Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, double value = 1.0);
/// start + weight * (end - start), with a scalar weight.
Tensor lerp(const Tensor& start, const Tensor& end, double weight);
/// start + weight * (end - start), with a tensor weight (broadcast).
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
/// other - alpha * self (torch.rsub).
Tensor rsub(const Tensor& self, const Tensor& other, double alpha = 1.0);
/// other - alpha * self, with a scalar other (rsub(self, other) without alpha: vnn/elementwise.h).
Tensor rsub(const Tensor& self, double other, double alpha);
/// pow computed in float64 (torch.float_power): the result is float64.
Tensor float_power(const Tensor& self, const Tensor& exponent);
/// float_power with a scalar exponent.
Tensor float_power(const Tensor& self, double exponent);
/// NaN -> nan, +inf -> posinf (default: the dtype's largest), -inf -> neginf
/// (default: its lowest); integer tensors are returned unchanged.
Tensor nan_to_num(const Tensor& t, double nan = 0.0, std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt);
/// t == +inf, as bool.
Tensor isposinf(const Tensor& t);
/// t == -inf, as bool.
Tensor isneginf(const Tensor& t);
/// log(t / (1 - t)), t clamped to [eps, 1 - eps] when eps is given; integers computed in float32.
Tensor logit(const Tensor& t, std::optional<double> eps = std::nullopt);
/// Whether each element of `elements` is in `test_elements` (bool, elements' shape); invert negates.
Tensor isin(const Tensor& elements, const Tensor& test_elements, bool assume_unique = false, bool invert = false);
/// isin against one scalar.
Tensor isin(const Tensor& elements, double test_element, bool assume_unique = false, bool invert = false);

// ---- products ----------------------------------------------------------------------
/// The dot product of two 1-D tensors of the same size and dtype (0-D result).
Tensor dot(const Tensor& a, const Tensor& b);
/// dot (real tensors: no conjugation).
Tensor vdot(const Tensor& a, const Tensor& b);
/// A matrix [n, m] times a vector [m]: [n].
Tensor mv(const Tensor& mat, const Tensor& vec);
/// beta * self + alpha * (mat @ vec); self broadcasts to [n].
Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec, double beta = 1.0, double alpha = 1.0);
/// beta * self + alpha * outer(vec1, vec2); self broadcasts to [n, m].
Tensor addr(const Tensor& self, const Tensor& vec1, const Tensor& vec2, double beta = 1.0, double alpha = 1.0);
/// beta * self + alpha * bmm(batch1, batch2); self broadcasts to [b, n, p].
Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, double beta = 1.0, double alpha = 1.0);
/// beta * self + alpha * sum over b of batch1[b] @ batch2[b]; self broadcasts to [n, p].
Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, double beta = 1.0, double alpha = 1.0);
/// The p-norm of a - b (broadcast), 0-D.
Tensor dist(const Tensor& a, const Tensor& b, double p = 2.0);

// ---- calculus and reshaping sums --------------------------------------------------------
/// The n-th forward difference along dim, after joining prepend and append (undefined: none).
Tensor diff(const Tensor& t, int64_t n = 1, int64_t dim = -1, const Tensor& prepend = Tensor(),
            const Tensor& append = Tensor());
/// The trapezoidal rule along dim with spacing dx.
Tensor trapezoid(const Tensor& y, double dx = 1.0, int64_t dim = -1);
/// The trapezoidal rule along dim at sample points x (1-D, or y's shape).
Tensor trapezoid(const Tensor& y, const Tensor& x, int64_t dim = -1);
/// trapezoid (torch.trapz).
Tensor trapz(const Tensor& y, double dx = 1.0, int64_t dim = -1);
/// trapezoid (torch.trapz) at sample points x.
Tensor trapz(const Tensor& y, const Tensor& x, int64_t dim = -1);
/// The running trapezoidal integral along dim with spacing dx (one fewer element).
Tensor cumulative_trapezoid(const Tensor& y, double dx = 1.0, int64_t dim = -1);
/// The running trapezoidal integral at sample points x.
Tensor cumulative_trapezoid(const Tensor& y, const Tensor& x, int64_t dim = -1);
/// t summed down to `size` (which t's shape broadcasts from), as torch.sum_to_size.
Tensor sum_to_size(const Tensor& t, const Shape& size);
/// Each slice along dim (sub-tensor t.select(dim, i)) whose p-norm exceeds
/// maxnorm scaled down to norm maxnorm.
Tensor renorm(const Tensor& t, double p, int64_t dim, double maxnorm);
/// base ** linspace(start, end, steps).
Tensor logspace(double start, double end, int64_t steps, double base = 10.0, const TensorOptions& opt = {});

}  // namespace vnn
