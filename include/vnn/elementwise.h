// Elementwise functions beyond the basic arithmetic of vnn/tensor.h: more
// math, comparisons and logical ops (bool results), pow, clamp, where and
// masked_fill, and the scalar forms of the operators. NumPy broadcasting and
// the promotion rules of docs/dtypes.md apply throughout.
#pragma once
#include "vnn/tensor.h"

namespace vnn {

// Math. Integer and bool inputs compute in float32 (as in PyTorch).
Tensor log1p(const Tensor& a);
Tensor rsqrt(const Tensor& a);
Tensor sin(const Tensor& a);
Tensor cos(const Tensor& a);
Tensor erf(const Tensor& a);
Tensor reciprocal(const Tensor& a);
// Activations: floating inputs only (DTypeError otherwise).
Tensor leaky_relu(const Tensor& a, double negative_slope = 0.01);
Tensor gelu(const Tensor& a);  // exact: x * (1 + erf(x / sqrt 2)) / 2
Tensor silu(const Tensor& a);  // x * sigmoid(x)
// Rounding: the identity (a copy) on integers; round() is half to even.
Tensor floor(const Tensor& a);
Tensor ceil(const Tensor& a);
Tensor round(const Tensor& a);
// -1, 0 or 1 in a's dtype; NaN gives NaN; bool inputs are an error.
Tensor sign(const Tensor& a);
// A NaN bound is no bound. A fractional bound with an integer tensor gives
// float32. Bool tensors are an error.
Tensor clamp(const Tensor& a, double min, double max);
Tensor clamp_min(const Tensor& a, double min);
Tensor clamp_max(const Tensor& a, double max);

// Powers: the promoted dtype (integer powers stay integers; an integer
// tensor to a negative integer scalar power is a ValueError).
Tensor pow(const Tensor& a, const Tensor& exponent);
Tensor pow(const Tensor& a, double exponent);

// Scalar forms: s is treated as a 0-dim tensor under the scalar promotion
// rule (docs/dtypes.md rule 5).
Tensor sub(const Tensor& a, double b);
Tensor div(const Tensor& a, double b);
Tensor rsub(const Tensor& a, double b);  // b - a
Tensor rdiv(const Tensor& a, double b);  // b / a

// Comparisons: operands promoted to a common dtype, result bool. NaN
// compares unequal to everything (ne true, all others false).
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, double b);
Tensor ne(const Tensor& a, double b);
Tensor lt(const Tensor& a, double b);
Tensor le(const Tensor& a, double b);
Tensor gt(const Tensor& a, double b);
Tensor ge(const Tensor& a, double b);

// Logical ops: any input dtypes (nonzero, NaN included, is true), bool out.
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& a);

// cond ? a : b with cond (bool) and a, b broadcast together; a and b are
// promoted to a common dtype.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, double b);
Tensor where(const Tensor& cond, double a, const Tensor& b);
// t with value where mask (bool, broadcastable to t's shape) is true; the
// result keeps t's shape and dtype.
Tensor masked_fill(const Tensor& t, const Tensor& mask, double value);

inline Tensor operator-(const Tensor& a, double b) { return sub(a, b); }
inline Tensor operator/(const Tensor& a, double b) { return div(a, b); }
inline Tensor operator+(double a, const Tensor& b) { return add(b, a); }
inline Tensor operator*(double a, const Tensor& b) { return mul(b, a); }
inline Tensor operator-(double a, const Tensor& b) { return rsub(b, a); }
inline Tensor operator/(double a, const Tensor& b) { return rdiv(b, a); }

inline Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
inline Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
inline Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
inline Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
inline Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
inline Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
inline Tensor operator==(const Tensor& a, double b) { return eq(a, b); }
inline Tensor operator!=(const Tensor& a, double b) { return ne(a, b); }
inline Tensor operator<(const Tensor& a, double b) { return lt(a, b); }
inline Tensor operator<=(const Tensor& a, double b) { return le(a, b); }
inline Tensor operator>(const Tensor& a, double b) { return gt(a, b); }
inline Tensor operator>=(const Tensor& a, double b) { return ge(a, b); }
inline Tensor operator==(double a, const Tensor& b) { return eq(b, a); }
inline Tensor operator!=(double a, const Tensor& b) { return ne(b, a); }
inline Tensor operator<(double a, const Tensor& b) { return gt(b, a); }
inline Tensor operator<=(double a, const Tensor& b) { return ge(b, a); }
inline Tensor operator>(double a, const Tensor& b) { return lt(b, a); }
inline Tensor operator>=(double a, const Tensor& b) { return le(b, a); }
// Elementwise logic on any dtype (nonzero is true), bool out.
inline Tensor operator&&(const Tensor& a, const Tensor& b) { return logical_and(a, b); }
inline Tensor operator||(const Tensor& a, const Tensor& b) { return logical_or(a, b); }
inline Tensor operator!(const Tensor& a) { return logical_not(a); }

}  // namespace vnn
