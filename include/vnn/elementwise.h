// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Elementwise functions beyond the basic arithmetic of vnn/tensor.h: more
// math, comparisons and logical ops (bool results), pow, clamp, where and
// masked_fill, and the scalar forms of the operators. NumPy broadcasting and
// the promotion rules of docs/dtypes.md apply throughout.
#pragma once
#include <string>
#include <tuple>

#include "vnn/tensor.h"

namespace vnn {

// Math. Integer and bool inputs compute in float32 (as in PyTorch).
/// log(1 + a), accurate for small a (integers compute in float32).
Tensor log1p(const Tensor& a);
/// 1 / sqrt(a) elementwise.
Tensor rsqrt(const Tensor& a);
/// The sine elementwise (radians).
Tensor sin(const Tensor& a);
/// The cosine elementwise (radians).
Tensor cos(const Tensor& a);
/// The Gauss error function elementwise.
Tensor erf(const Tensor& a);
/// 1 / a elementwise.
Tensor reciprocal(const Tensor& a);
// Activations: floating inputs only (DTypeError otherwise).
/// a for a >= 0, negative_slope * a below (floating inputs only).
Tensor leaky_relu(const Tensor& a, double negative_slope = 0.01);
/// The exact GELU, a * (1 + erf(a / sqrt 2)) / 2 (floating inputs only).
Tensor gelu(const Tensor& a);  // exact: x * (1 + erf(x / sqrt 2)) / 2
/// GELU by name, as torch.nn.functional.gelu: approximate "none" is gelu(a), "tanh" is
/// a * (1 + tanh(sqrt(2/pi) * (a + 0.044715 a^3))) / 2 (composed, differentiable); others: ValueError.
Tensor gelu(const Tensor& a, const std::string& approximate);
/// The exact GELU's gradient, grad * (Phi(a) + a phi(a)) (Phi, phi: the standard normal's CDF and
/// density), one fused op as aten's gelu_backward; floating inputs only, broadcast as mul.
Tensor gelu_backward(const Tensor& grad, const Tensor& a);
/// Splits a into mantissa and exponent, a = mantissa * 2^exponent with 0.5 <= |mantissa| < 1, as
/// torch::frexp: the mantissa in a's dtype, the exponent int32 (0, an infinity and NaN give a
/// and 0). Floating inputs only (DTypeError otherwise); the mantissa's gradient is grad / 2^exponent.
std::tuple<Tensor, Tensor> frexp(const Tensor& a);
/// a * sigmoid(a) (floating inputs only).
Tensor silu(const Tensor& a);  // x * sigmoid(x)
// Rounding: the identity (a copy) on integers; round() is half to even.
/// The largest integer not above a (integers: a copy).
Tensor floor(const Tensor& a);
/// The smallest integer not below a (integers: a copy).
Tensor ceil(const Tensor& a);
/// Rounds half to even (integers: a copy).
Tensor round(const Tensor& a);
/// Rounds half to even to `decimals` decimal places (negative: to tens, hundreds, ...), as
/// torch::round(input, decimals); floating tensors only (DTypeError) unless decimals is 0. Its gradient is zero.
Tensor round(const Tensor& a, int64_t decimals);
/// -1, 0 or 1 in a's dtype; NaN gives NaN; bool inputs are an error.
Tensor sign(const Tensor& a);
// A NaN bound is no bound. A fractional bound with an integer tensor gives
// float32. Bool tensors are an error.
/// Clamps into [min, max] (a NaN bound is no bound; bool tensors are an error).
Tensor clamp(const Tensor& a, double min, double max);
/// Clamps from below (a NaN bound is no bound).
Tensor clamp_min(const Tensor& a, double min);
/// Clamps from above (a NaN bound is no bound).
Tensor clamp_max(const Tensor& a, double max);

// Powers: the promoted dtype (integer powers stay integers; an integer
// tensor to a negative integer scalar power is a ValueError).
/// a to the power exponent, broadcast, in the promoted dtype.
Tensor pow(const Tensor& a, const Tensor& exponent);
/// a to a scalar power (an integer tensor to a negative integer power is a ValueError).
Tensor pow(const Tensor& a, double exponent);

// Scalar forms: s is treated as a 0-dim tensor under the scalar promotion
// rule (docs/dtypes.md rule 5).
/// a - b with a scalar b (scalar promotion rule).
Tensor sub(const Tensor& a, double b);
/// a / b with a scalar b (true division).
Tensor div(const Tensor& a, double b);
/// a / b rounded as torch::div's rounding_mode says, in the promoted dtype:
/// "trunc" toward zero, "floor" down (floor_divide). Integers divided by 0
/// give 0 (vnn's integer-division rule; PyTorch raises ZeroDivisionError).
/// ValueError for another rounding_mode.
Tensor div(const Tensor& a, const Tensor& b, const std::string& rounding_mode);
/// div(a, b, rounding_mode) with a scalar b.
Tensor div(const Tensor& a, double b, const std::string& rounding_mode);
/// b - a: a scalar minus a tensor.
Tensor rsub(const Tensor& a, double b);  // b - a
/// b / a: a scalar divided by a tensor (true division).
Tensor rdiv(const Tensor& a, double b);  // b / a

// Comparisons: operands promoted to a common dtype, result bool. NaN
// compares unequal to everything (ne true, all others false).
/// a == b elementwise, bool result (NaN equals nothing).
Tensor eq(const Tensor& a, const Tensor& b);
/// a != b elementwise, bool result (true where either is NaN).
Tensor ne(const Tensor& a, const Tensor& b);
/// a < b elementwise, bool result.
Tensor lt(const Tensor& a, const Tensor& b);
/// a <= b elementwise, bool result.
Tensor le(const Tensor& a, const Tensor& b);
/// a > b elementwise, bool result.
Tensor gt(const Tensor& a, const Tensor& b);
/// a >= b elementwise, bool result.
Tensor ge(const Tensor& a, const Tensor& b);
/// a == b against a scalar, bool result.
Tensor eq(const Tensor& a, double b);
/// a != b against a scalar, bool result.
Tensor ne(const Tensor& a, double b);
/// a < b against a scalar, bool result.
Tensor lt(const Tensor& a, double b);
/// a <= b against a scalar, bool result.
Tensor le(const Tensor& a, double b);
/// a > b against a scalar, bool result.
Tensor gt(const Tensor& a, double b);
/// a >= b against a scalar, bool result.
Tensor ge(const Tensor& a, double b);

// Logical ops: any input dtypes (nonzero, NaN included, is true), bool out.
/// a AND b (nonzero, NaN included, is true), bool result.
Tensor logical_and(const Tensor& a, const Tensor& b);
/// a OR b (nonzero is true), bool result.
Tensor logical_or(const Tensor& a, const Tensor& b);
/// a XOR b (nonzero is true), bool result.
Tensor logical_xor(const Tensor& a, const Tensor& b);
/// NOT a (zero is false), bool result.
Tensor logical_not(const Tensor& a);

/// cond ? a : b with cond (bool) and a, b broadcast together; a and b are
/// promoted to a common dtype.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
/// cond ? a : b with a scalar b.
Tensor where(const Tensor& cond, const Tensor& a, double b);
/// cond ? a : b with a scalar a.
Tensor where(const Tensor& cond, double a, const Tensor& b);
/// cond ? a : b with two scalars: float32 of cond's shape, on cond's device (torch.where(cond, 1.0, 0.0)).
Tensor where(const Tensor& cond, double a, double b);
/// t with value where mask (bool, broadcastable to t's shape) is true; the
/// result keeps t's shape and dtype.
Tensor masked_fill(const Tensor& t, const Tensor& mask, double value);

// Triangles of the last two dims (torch.tril / torch.triu), any dtype, any
// leading (batch) dims, differentiable: element (i, j) is kept where
// j - i <= diagonal (tril) or j - i >= diagonal (triu), else zero. Composed
// from arange, a comparison and where, so it runs on every device.
/// The lower triangle of the last two dims (j - i <= diagonal kept, the rest zero).
Tensor tril(const Tensor& t, int64_t diagonal = 0);
/// The upper triangle of the last two dims (j - i >= diagonal kept, the rest zero).
Tensor triu(const Tensor& t, int64_t diagonal = 0);

/// sub(a, b) with a scalar.
inline Tensor operator-(const Tensor& a, double b) { return sub(a, b); }
/// div(a, b) with a scalar.
inline Tensor operator/(const Tensor& a, double b) { return div(a, b); }
/// add(b, a): scalar + tensor.
inline Tensor operator+(double a, const Tensor& b) { return add(b, a); }
/// mul(b, a): scalar * tensor.
inline Tensor operator*(double a, const Tensor& b) { return mul(b, a); }
/// rsub(b, a): scalar - tensor.
inline Tensor operator-(double a, const Tensor& b) { return rsub(b, a); }
/// rdiv(b, a): scalar / tensor.
inline Tensor operator/(double a, const Tensor& b) { return rdiv(b, a); }

/// bitwise_left_shift(a, b): integers only.
inline Tensor operator<<(const Tensor& a, const Tensor& b) { return bitwise_left_shift(a, b); }
/// bitwise_right_shift(a, b): integers only, arithmetic for signed dtypes.
inline Tensor operator>>(const Tensor& a, const Tensor& b) { return bitwise_right_shift(a, b); }
/// bitwise_left_shift(a, b) with a scalar count.
inline Tensor operator<<(const Tensor& a, double b) { return bitwise_left_shift(a, b); }
/// bitwise_right_shift(a, b) with a scalar count.
inline Tensor operator>>(const Tensor& a, double b) { return bitwise_right_shift(a, b); }

/// eq(a, b): a bool tensor of the broadcast shape, not a bool.
inline Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
/// ne(a, b), a bool tensor.
inline Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
/// lt(a, b), a bool tensor.
inline Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
/// le(a, b), a bool tensor.
inline Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
/// gt(a, b), a bool tensor.
inline Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
/// ge(a, b), a bool tensor.
inline Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
/// eq(a, b) with a scalar, a bool tensor.
inline Tensor operator==(const Tensor& a, double b) { return eq(a, b); }
/// ne(a, b) with a scalar, a bool tensor.
inline Tensor operator!=(const Tensor& a, double b) { return ne(a, b); }
/// lt(a, b) with a scalar, a bool tensor.
inline Tensor operator<(const Tensor& a, double b) { return lt(a, b); }
/// le(a, b) with a scalar, a bool tensor.
inline Tensor operator<=(const Tensor& a, double b) { return le(a, b); }
/// gt(a, b) with a scalar, a bool tensor.
inline Tensor operator>(const Tensor& a, double b) { return gt(a, b); }
/// ge(a, b) with a scalar, a bool tensor.
inline Tensor operator>=(const Tensor& a, double b) { return ge(a, b); }
/// eq(b, a): scalar == tensor, a bool tensor.
inline Tensor operator==(double a, const Tensor& b) { return eq(b, a); }
/// ne(b, a): scalar != tensor, a bool tensor.
inline Tensor operator!=(double a, const Tensor& b) { return ne(b, a); }
/// gt(b, a): scalar < tensor, a bool tensor.
inline Tensor operator<(double a, const Tensor& b) { return gt(b, a); }
/// ge(b, a): scalar <= tensor, a bool tensor.
inline Tensor operator<=(double a, const Tensor& b) { return ge(b, a); }
/// lt(b, a): scalar > tensor, a bool tensor.
inline Tensor operator>(double a, const Tensor& b) { return lt(b, a); }
/// le(b, a): scalar >= tensor, a bool tensor.
inline Tensor operator>=(double a, const Tensor& b) { return le(b, a); }
// Elementwise logic on any dtype (nonzero is true), bool out.
/// logical_and(a, b), elementwise (not short-circuiting).
inline Tensor operator&&(const Tensor& a, const Tensor& b) { return logical_and(a, b); }
/// logical_or(a, b), elementwise (not short-circuiting).
inline Tensor operator||(const Tensor& a, const Tensor& b) { return logical_or(a, b); }
/// logical_not(a), elementwise.
inline Tensor operator!(const Tensor& a) { return logical_not(a); }

}  // namespace vnn
