// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// op_db mappings of the elementwise ops: every plain op of the unary and
// binary op tables (vnn/ops/unary.def, binary.def) under its own name, and
// the hand-written forms with extra arguments.
#include "opdb.hpp"
#include "vnn/special.h"

namespace vnn::opdb {
namespace {

// A Python scalar as PyTorch wraps it for a tensor op: a 0-D tensor on a's
// device in a's dtype, or in the default dtype of the scalar's category
// (int64, float32) where that category is higher than a's.
Tensor wrapped_scalar(const Tensor& a, const Arg& s) {
  DType dt = a.dtype();
  if (s.kind == Arg::Kind::real && !is_floating(dt)) dt = kFloat32;
  if (s.kind == Arg::Kind::integer && dt == kBool) dt = kInt64;
  return vnn::scalar_tensor(s.number(), TensorOptions(dt).device(a.device()));
}

// A binary op's `other`: a tensor, or a Python scalar.
template <class TensorFn, class ScalarFn>
Arg binary_call(Call& c, TensorFn on_tensor, ScalarFn on_scalar) {
  const Arg* other = c.get(0, "other");
  if (!other) throw std::invalid_argument("op_db: binary op without `other`");
  if (other->kind == Arg::Kind::tensor) return on_tensor(c.in(), other->t);
  return on_scalar(c.in(), other->number());
}

#define VNN_OPDB_UNARY_PLAIN(NAME) \
  OPDB(#NAME) { return vnn::NAME(c.in()); };
#define VNN_OPDB_UNARY_FP32(NAME) VNN_OPDB_UNARY_PLAIN(NAME)
#define VNN_OPDB_UNARY_CUSTOM(NAME)
#define VNN_UNARY_OP(ID, NAME, SIG, ...) VNN_OPDB_UNARY_##SIG(NAME)
#include "vnn/ops/unary.def"
#undef VNN_UNARY_OP

#define VNN_OPDB_BINARY_PLAIN(NAME)                                                       \
  OPDB(#NAME) {                                                                           \
    return binary_call(                                                                   \
        c, [](const Tensor& a, const Tensor& b) { return vnn::NAME(a, b); },             \
        [](const Tensor& a, double b) { return vnn::NAME(a, b); });                       \
  };
#define VNN_OPDB_BINARY_CUSTOM(NAME)
#define VNN_BINARY_OP(ID, NAME, SIG, ...) VNN_OPDB_BINARY_##SIG(NAME)
#include "vnn/ops/binary.def"
#undef VNN_BINARY_OP

// The table's CUSTOM binary ops: operators and comparisons.
// Those without a scalar overload take the scalar wrapped as PyTorch does.
#define VNN_OPDB_BINARY_OPERATOR(KEY, EXPR)                                               \
  OPDB(KEY) {                                                                             \
    const Arg* other = c.get(0, "other");                                                 \
    const Tensor& a = c.in();                                                             \
    const Tensor b = other->kind == Arg::Kind::tensor ? other->t : wrapped_scalar(a, *other); \
    return EXPR;                                                                          \
  };
OPDB("mul") {
  return binary_call(
      c, [](const Tensor& a, const Tensor& b) { return vnn::mul(a, b); },
      [](const Tensor& a, double b) { return vnn::mul(a, b); });
};
VNN_OPDB_BINARY_OPERATOR("maximum", vnn::maximum(a, b))
VNN_OPDB_BINARY_OPERATOR("minimum", vnn::minimum(a, b))
VNN_OPDB_BINARY_OPERATOR("eq", vnn::eq(a, b))
VNN_OPDB_BINARY_OPERATOR("ne", vnn::ne(a, b))
VNN_OPDB_BINARY_OPERATOR("lt", vnn::lt(a, b))
VNN_OPDB_BINARY_OPERATOR("le", vnn::le(a, b))
VNN_OPDB_BINARY_OPERATOR("gt", vnn::gt(a, b))
VNN_OPDB_BINARY_OPERATOR("ge", vnn::ge(a, b))
VNN_OPDB_BINARY_OPERATOR("logical_and", vnn::logical_and(a, b))
VNN_OPDB_BINARY_OPERATOR("logical_or", vnn::logical_or(a, b))
VNN_OPDB_BINARY_OPERATOR("logical_xor", vnn::logical_xor(a, b))

OPDB("add") {
  const double alpha = c.number(1, "alpha", 1.0);
  return binary_call(
      c, [&](const Tensor& a, const Tensor& b) { return vnn::add(a, b, alpha); },
      [&](const Tensor& a, double b) { return vnn::add(a, b * alpha); });
};
OPDB("sub") {
  const double alpha = c.number(1, "alpha", 1.0);
  return binary_call(
      c, [&](const Tensor& a, const Tensor& b) { return vnn::sub(a, b, alpha); },
      [&](const Tensor& a, double b) { return vnn::sub(a, b * alpha); });
};
OPDB("div.no_rounding_mode") {
  return binary_call(
      c, [](const Tensor& a, const Tensor& b) { return vnn::div(a, b); },
      [](const Tensor& a, double b) { return vnn::div(a, b); });
};
// div(a, b, rounding_mode): the keyword as the sample gives it (the entry's mode by default).
#define VNN_OPDB_DIV_ROUNDING(KEY, MODE)                                                 \
  OPDB(KEY) {                                                                             \
    const std::string mode = c.str(SIZE_MAX, "rounding_mode", MODE);                      \
    return binary_call(                                                                   \
        c, [&](const Tensor& a, const Tensor& b) { return vnn::div(a, b, mode); },        \
        [&](const Tensor& a, double b) { return vnn::div(a, b, mode); });                 \
  };
VNN_OPDB_DIV_ROUNDING("div.trunc_rounding", "trunc")
VNN_OPDB_DIV_ROUNDING("div.floor_rounding", "floor")
OPDB("pow") {
  return binary_call(
      c, [](const Tensor& a, const Tensor& b) { return vnn::pow(a, b); },
      [](const Tensor& a, double b) { return vnn::pow(a, b); });
};
OPDB("clamp") {
  const Arg* lo = c.get(0, "min");
  const Arg* hi = c.get(1, "max");
  if ((lo && lo->kind == Arg::Kind::tensor) || (hi && hi->kind == Arg::Kind::tensor))
    gap("clamp with tensor bounds");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return vnn::clamp(c.in(), lo ? lo->number() : nan, hi ? hi->number() : nan);
};
OPDB("clamp_min") {
  const Arg* lo = c.get(0, "min");
  if (lo && lo->kind == Arg::Kind::tensor) return vnn::maximum(c.in(), lo->t);
  return vnn::clamp_min(c.in(), lo->number());
};
OPDB("clamp_max") {
  const Arg* hi = c.get(0, "max");
  if (hi && hi->kind == Arg::Kind::tensor) return vnn::minimum(c.in(), hi->t);
  return vnn::clamp_max(c.in(), hi->number());
};
OPDB("square") { return c.in().square(); };
OPDB("positive") { return c.in(); };
OPDB("where") {
  const Tensor& cond = c.tensor(0, "condition");
  const Arg* other = c.get(1, "other");
  if (other->kind == Arg::Kind::tensor) return vnn::where(cond, c.in(), other->t);
  return vnn::where(cond, c.in(), other->number());
};
OPDB("masked_fill") {
  const Tensor& mask = c.tensor(0, "mask");
  const Arg* value = c.get(1, "value");
  if (value->kind == Arg::Kind::tensor && value->t.requires_grad()) gap("masked_fill's gradient for a tensor value");
  return vnn::masked_fill(c.in(), mask, value->number());
};
OPDB("isclose") {
  return vnn::isclose(c.in(), c.tensor(0, "other"), c.number(1, "rtol", 1e-5), c.number(2, "atol", 1e-8),
                      c.boolean(3, "equal_nan", false));
};
OPDB("allclose") {
  return vnn::allclose(c.in(), c.tensor(0, "other"), c.number(1, "rtol", 1e-5), c.number(2, "atol", 1e-8),
                       c.boolean(3, "equal_nan", false));
};
OPDB("equal") { return vnn::equal(c.in(), c.tensor(0, "other")); };
OPDB("nn.functional.relu") { return vnn::relu(c.in()); };

// torch.special's entries, through vnn::special's names.
#define VNN_OPDB_SPECIAL_UNARY(NAME) \
  OPDB("special." #NAME) { return vnn::special::NAME(c.in()); };
VNN_OPDB_SPECIAL_UNARY(erfcx)
VNN_OPDB_SPECIAL_UNARY(ndtr)
VNN_OPDB_SPECIAL_UNARY(ndtri)
VNN_OPDB_SPECIAL_UNARY(log_ndtr)
VNN_OPDB_SPECIAL_UNARY(i0e)
VNN_OPDB_SPECIAL_UNARY(i1)
VNN_OPDB_SPECIAL_UNARY(i1e)
VNN_OPDB_SPECIAL_UNARY(entr)
VNN_OPDB_SPECIAL_UNARY(bessel_j0)
VNN_OPDB_SPECIAL_UNARY(bessel_j1)
VNN_OPDB_SPECIAL_UNARY(bessel_y0)
VNN_OPDB_SPECIAL_UNARY(bessel_y1)
VNN_OPDB_SPECIAL_UNARY(modified_bessel_i0)
VNN_OPDB_SPECIAL_UNARY(modified_bessel_i1)
VNN_OPDB_SPECIAL_UNARY(modified_bessel_k0)
VNN_OPDB_SPECIAL_UNARY(modified_bessel_k1)
VNN_OPDB_SPECIAL_UNARY(scaled_modified_bessel_k0)
VNN_OPDB_SPECIAL_UNARY(scaled_modified_bessel_k1)
VNN_OPDB_SPECIAL_UNARY(spherical_bessel_j0)
VNN_OPDB_SPECIAL_UNARY(airy_ai)
#undef VNN_OPDB_SPECIAL_UNARY
OPDB("special.zeta") {
  return binary_call(
      c, [](const Tensor& a, const Tensor& b) { return vnn::special::zeta(a, b); },
      [](const Tensor& a, double b) { return vnn::special::zeta(a, b); });
};
OPDB("special.xlog1py") {
  return binary_call(
      c, [](const Tensor& a, const Tensor& b) { return vnn::special::xlog1py(a, b); },
      [](const Tensor& a, double b) { return vnn::special::xlog1py(a, b); });
};
// The orthogonal polynomials (x, n): n a tensor or a Python scalar.
#define VNN_OPDB_SPECIAL_POLYNOMIAL(NAME)                                     \
  OPDB("special." #NAME) {                                                    \
    const Arg* n = c.get(0, "n");                                             \
    if (!n) throw std::invalid_argument("op_db: special." #NAME " without n"); \
    if (n->kind == Arg::Kind::tensor) return vnn::special::NAME(c.in(), n->t); \
    return vnn::special::NAME(c.in(), n->number());                           \
  };
VNN_OPDB_SPECIAL_POLYNOMIAL(chebyshev_polynomial_t)
VNN_OPDB_SPECIAL_POLYNOMIAL(chebyshev_polynomial_u)
VNN_OPDB_SPECIAL_POLYNOMIAL(chebyshev_polynomial_v)
VNN_OPDB_SPECIAL_POLYNOMIAL(chebyshev_polynomial_w)
VNN_OPDB_SPECIAL_POLYNOMIAL(shifted_chebyshev_polynomial_t)
VNN_OPDB_SPECIAL_POLYNOMIAL(shifted_chebyshev_polynomial_u)
VNN_OPDB_SPECIAL_POLYNOMIAL(shifted_chebyshev_polynomial_v)
VNN_OPDB_SPECIAL_POLYNOMIAL(shifted_chebyshev_polynomial_w)
VNN_OPDB_SPECIAL_POLYNOMIAL(hermite_polynomial_h)
VNN_OPDB_SPECIAL_POLYNOMIAL(hermite_polynomial_he)
VNN_OPDB_SPECIAL_POLYNOMIAL(laguerre_polynomial_l)
VNN_OPDB_SPECIAL_POLYNOMIAL(legendre_polynomial_p)
#undef VNN_OPDB_SPECIAL_POLYNOMIAL
OPDB("frexp") { return vnn::frexp(c.in()); };
// polygamma(n, x) and mvlgamma(x, p): op_db passes x as the input.
#define VNN_OPDB_POLYGAMMA(KEY) \
  OPDB(KEY) { return vnn::polygamma(c.integer(0, "n"), c.in()); };
VNN_OPDB_POLYGAMMA("polygamma.polygamma_n_0")
VNN_OPDB_POLYGAMMA("polygamma.polygamma_n_1")
VNN_OPDB_POLYGAMMA("polygamma.polygamma_n_2")
VNN_OPDB_POLYGAMMA("polygamma.polygamma_n_3")
VNN_OPDB_POLYGAMMA("polygamma.polygamma_n_4")
VNN_OPDB_POLYGAMMA("special.polygamma.special_polygamma_n_0")
#undef VNN_OPDB_POLYGAMMA
#define VNN_OPDB_MVLGAMMA(KEY) \
  OPDB(KEY) { return vnn::mvlgamma(c.in(), c.integer(0, "p")); };
VNN_OPDB_MVLGAMMA("mvlgamma.mvlgamma_p_1")
VNN_OPDB_MVLGAMMA("mvlgamma.mvlgamma_p_3")
VNN_OPDB_MVLGAMMA("mvlgamma.mvlgamma_p_5")
#undef VNN_OPDB_MVLGAMMA
#define VNN_OPDB_ROUND_DECIMALS(KEY) \
  OPDB(KEY) { return vnn::round(c.in(), c.integer(SIZE_MAX, "decimals")); };
VNN_OPDB_ROUND_DECIMALS("round.decimals_0")
VNN_OPDB_ROUND_DECIMALS("round.decimals_3")
VNN_OPDB_ROUND_DECIMALS("round.decimals_neg_3")
#undef VNN_OPDB_ROUND_DECIMALS

}  // namespace
}  // namespace vnn::opdb
