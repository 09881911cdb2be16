// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// torch.special's functions under their torch.special names (vnn::special),
// and the composed special functions (polygamma, mvlgamma). The elementwise
// ones are lines of the op tables (vnn/ops/unary.def, binary.def; kernels in
// vnn/ops/special_functions.def); the names here forward to them.
#pragma once
#include <cstdint>
#include <optional>

#include "vnn/composite.h"
#include "vnn/creation.h"
#include "vnn/elementwise.h"
#include "vnn/reduction.h"
#include "vnn/tensor.h"

namespace vnn {

/// The n-th derivative of digamma (n >= 0; ValueError otherwise): digamma for
/// n = 0, else (-1)^(n+1) n! zeta(n + 1, x). Integers are computed in float32.
Tensor polygamma(int64_t n, const Tensor& x);
/// The multivariate log-gamma function of dimension p (p >= 1):
/// p (p - 1) / 4 log(pi) + sum_{j < p} lgamma(x - j / 2). Every element must
/// exceed (p - 1) / 2 (ValueError otherwise, as PyTorch).
Tensor mvlgamma(const Tensor& x, int64_t p);

/// torch.special's names.
namespace special {
/// vnn::erf.
inline Tensor erf(const Tensor& t) { return vnn::erf(t); }
/// vnn::erfc.
inline Tensor erfc(const Tensor& t) { return vnn::erfc(t); }
/// vnn::erfcx: exp(t^2) erfc(t).
inline Tensor erfcx(const Tensor& t) { return vnn::erfcx(t); }
/// vnn::erfinv.
inline Tensor erfinv(const Tensor& t) { return vnn::erfinv(t); }
/// The logistic sigmoid (vnn::sigmoid).
inline Tensor expit(const Tensor& t) { return vnn::sigmoid(t); }
/// vnn::logit.
inline Tensor logit(const Tensor& t, std::optional<double> eps = std::nullopt) { return vnn::logit(t, eps); }
/// vnn::exp2.
inline Tensor exp2(const Tensor& t) { return vnn::exp2(t); }
/// vnn::expm1.
inline Tensor expm1(const Tensor& t) { return vnn::expm1(t); }
/// vnn::log1p.
inline Tensor log1p(const Tensor& t) { return vnn::log1p(t); }
/// vnn::lgamma.
inline Tensor gammaln(const Tensor& t) { return vnn::lgamma(t); }
/// vnn::digamma.
inline Tensor digamma(const Tensor& t) { return vnn::digamma(t); }
/// vnn::digamma (torch.special.psi).
inline Tensor psi(const Tensor& t) { return vnn::digamma(t); }
/// vnn::polygamma.
inline Tensor polygamma(int64_t n, const Tensor& t) { return vnn::polygamma(n, t); }
/// vnn::mvlgamma.
inline Tensor multigammaln(const Tensor& t, int64_t p) { return vnn::mvlgamma(t, p); }
/// vnn::i0.
inline Tensor i0(const Tensor& t) { return vnn::i0(t); }
/// vnn::i0e.
inline Tensor i0e(const Tensor& t) { return vnn::i0e(t); }
/// vnn::i1.
inline Tensor i1(const Tensor& t) { return vnn::i1(t); }
/// vnn::i1e.
inline Tensor i1e(const Tensor& t) { return vnn::i1e(t); }
/// vnn::ndtr.
inline Tensor ndtr(const Tensor& t) { return vnn::ndtr(t); }
/// vnn::ndtri.
inline Tensor ndtri(const Tensor& t) { return vnn::ndtri(t); }
/// vnn::log_ndtr.
inline Tensor log_ndtr(const Tensor& t) { return vnn::log_ndtr(t); }
/// vnn::entr.
inline Tensor entr(const Tensor& t) { return vnn::entr(t); }
/// vnn::sinc.
inline Tensor sinc(const Tensor& t) { return vnn::sinc(t); }
/// vnn::round (half to even).
inline Tensor round(const Tensor& t) { return vnn::round(t); }
/// vnn::xlogy.
inline Tensor xlogy(const Tensor& a, const Tensor& b) { return vnn::xlogy(a, b); }
/// vnn::xlogy with a scalar b.
inline Tensor xlogy(const Tensor& a, double b) { return vnn::xlogy(a, b); }
/// vnn::xlog1py.
inline Tensor xlog1py(const Tensor& a, const Tensor& b) { return vnn::xlog1py(a, b); }
/// vnn::xlog1py with a scalar b.
inline Tensor xlog1py(const Tensor& a, double b) { return vnn::xlog1py(a, b); }
/// vnn::zeta (Hurwitz).
inline Tensor zeta(const Tensor& x, const Tensor& q) { return vnn::zeta(x, q); }
/// vnn::zeta with a scalar q.
inline Tensor zeta(const Tensor& x, double q) { return vnn::zeta(x, q); }
/// vnn::zeta with a scalar x.
inline Tensor zeta(double x, const Tensor& q) { return vnn::zeta(full_like(q, x), q); }
/// vnn::igamma, the regularised lower incomplete gamma function.
inline Tensor gammainc(const Tensor& a, const Tensor& x) { return vnn::igamma(a, x); }
/// vnn::igammac, the regularised upper incomplete gamma function.
inline Tensor gammaincc(const Tensor& a, const Tensor& x) { return vnn::igammac(a, x); }
/// vnn::logsumexp.
inline Tensor logsumexp(const Tensor& t, const Dims& dims, bool keepdim = false) {
  return vnn::logsumexp(t, dims, keepdim);
}
/// vnn::softmax.
inline Tensor softmax(const Tensor& t, int dim) { return vnn::softmax(t, dim); }
/// vnn::log_softmax.
inline Tensor log_softmax(const Tensor& t, int dim) { return vnn::log_softmax(t, dim); }
/// vnn::bessel_j0.
inline Tensor bessel_j0(const Tensor& t) { return vnn::bessel_j0(t); }
/// vnn::bessel_j1.
inline Tensor bessel_j1(const Tensor& t) { return vnn::bessel_j1(t); }
/// vnn::bessel_y0.
inline Tensor bessel_y0(const Tensor& t) { return vnn::bessel_y0(t); }
/// vnn::bessel_y1.
inline Tensor bessel_y1(const Tensor& t) { return vnn::bessel_y1(t); }
/// vnn::i0 (torch.special.modified_bessel_i0).
inline Tensor modified_bessel_i0(const Tensor& t) { return vnn::i0(t); }
/// vnn::i1 (torch.special.modified_bessel_i1).
inline Tensor modified_bessel_i1(const Tensor& t) { return vnn::i1(t); }
/// vnn::modified_bessel_k0.
inline Tensor modified_bessel_k0(const Tensor& t) { return vnn::modified_bessel_k0(t); }
/// vnn::modified_bessel_k1.
inline Tensor modified_bessel_k1(const Tensor& t) { return vnn::modified_bessel_k1(t); }
/// vnn::scaled_modified_bessel_k0.
inline Tensor scaled_modified_bessel_k0(const Tensor& t) { return vnn::scaled_modified_bessel_k0(t); }
/// vnn::scaled_modified_bessel_k1.
inline Tensor scaled_modified_bessel_k1(const Tensor& t) { return vnn::scaled_modified_bessel_k1(t); }
/// vnn::spherical_bessel_j0.
inline Tensor spherical_bessel_j0(const Tensor& t) { return vnn::spherical_bessel_j0(t); }
/// vnn::airy_ai, the Airy function Ai.
inline Tensor airy_ai(const Tensor& t) { return vnn::airy_ai(t); }
// The orthogonal polynomials of degree n (truncated to an integer; 0 for n < 0) at x, as
// torch.special's: the binary op table's lines. Integers are computed in float32; no gradient.
/// The Chebyshev polynomial of the first kind T_n(x) (vnn::chebyshev_polynomial_t).
inline Tensor chebyshev_polynomial_t(const Tensor& x, const Tensor& n) { return vnn::chebyshev_polynomial_t(x, n); }
/// vnn::chebyshev_polynomial_t with a scalar degree n.
inline Tensor chebyshev_polynomial_t(const Tensor& x, double n) { return vnn::chebyshev_polynomial_t(x, n); }
/// vnn::chebyshev_polynomial_t at a scalar x (float32 for an integer n).
Tensor chebyshev_polynomial_t(double x, const Tensor& n);
/// The Chebyshev polynomial of the second kind U_n(x) (vnn::chebyshev_polynomial_u).
inline Tensor chebyshev_polynomial_u(const Tensor& x, const Tensor& n) { return vnn::chebyshev_polynomial_u(x, n); }
/// vnn::chebyshev_polynomial_u with a scalar degree n.
inline Tensor chebyshev_polynomial_u(const Tensor& x, double n) { return vnn::chebyshev_polynomial_u(x, n); }
/// vnn::chebyshev_polynomial_u at a scalar x (float32 for an integer n).
Tensor chebyshev_polynomial_u(double x, const Tensor& n);
/// The Chebyshev polynomial of the third kind V_n(x) (vnn::chebyshev_polynomial_v).
inline Tensor chebyshev_polynomial_v(const Tensor& x, const Tensor& n) { return vnn::chebyshev_polynomial_v(x, n); }
/// vnn::chebyshev_polynomial_v with a scalar degree n.
inline Tensor chebyshev_polynomial_v(const Tensor& x, double n) { return vnn::chebyshev_polynomial_v(x, n); }
/// vnn::chebyshev_polynomial_v at a scalar x (float32 for an integer n).
Tensor chebyshev_polynomial_v(double x, const Tensor& n);
/// The Chebyshev polynomial of the fourth kind W_n(x) (vnn::chebyshev_polynomial_w).
inline Tensor chebyshev_polynomial_w(const Tensor& x, const Tensor& n) { return vnn::chebyshev_polynomial_w(x, n); }
/// vnn::chebyshev_polynomial_w with a scalar degree n.
inline Tensor chebyshev_polynomial_w(const Tensor& x, double n) { return vnn::chebyshev_polynomial_w(x, n); }
/// vnn::chebyshev_polynomial_w at a scalar x (float32 for an integer n).
Tensor chebyshev_polynomial_w(double x, const Tensor& n);
/// The shifted Chebyshev polynomial of the first kind T_n(2x - 1) (vnn::shifted_chebyshev_polynomial_t).
inline Tensor shifted_chebyshev_polynomial_t(const Tensor& x, const Tensor& n) {
  return vnn::shifted_chebyshev_polynomial_t(x, n);
}
/// vnn::shifted_chebyshev_polynomial_t with a scalar degree n.
inline Tensor shifted_chebyshev_polynomial_t(const Tensor& x, double n) {
  return vnn::shifted_chebyshev_polynomial_t(x, n);
}
/// vnn::shifted_chebyshev_polynomial_t at a scalar x (float32 for an integer n).
Tensor shifted_chebyshev_polynomial_t(double x, const Tensor& n);
/// The shifted Chebyshev polynomial of the second kind U_n(2x - 1) (vnn::shifted_chebyshev_polynomial_u).
inline Tensor shifted_chebyshev_polynomial_u(const Tensor& x, const Tensor& n) {
  return vnn::shifted_chebyshev_polynomial_u(x, n);
}
/// vnn::shifted_chebyshev_polynomial_u with a scalar degree n.
inline Tensor shifted_chebyshev_polynomial_u(const Tensor& x, double n) {
  return vnn::shifted_chebyshev_polynomial_u(x, n);
}
/// vnn::shifted_chebyshev_polynomial_u at a scalar x (float32 for an integer n).
Tensor shifted_chebyshev_polynomial_u(double x, const Tensor& n);
/// The shifted Chebyshev polynomial of the third kind V_n(2x - 1) (vnn::shifted_chebyshev_polynomial_v).
inline Tensor shifted_chebyshev_polynomial_v(const Tensor& x, const Tensor& n) {
  return vnn::shifted_chebyshev_polynomial_v(x, n);
}
/// vnn::shifted_chebyshev_polynomial_v with a scalar degree n.
inline Tensor shifted_chebyshev_polynomial_v(const Tensor& x, double n) {
  return vnn::shifted_chebyshev_polynomial_v(x, n);
}
/// vnn::shifted_chebyshev_polynomial_v at a scalar x (float32 for an integer n).
Tensor shifted_chebyshev_polynomial_v(double x, const Tensor& n);
/// The shifted Chebyshev polynomial of the fourth kind W_n(2x - 1) (vnn::shifted_chebyshev_polynomial_w).
inline Tensor shifted_chebyshev_polynomial_w(const Tensor& x, const Tensor& n) {
  return vnn::shifted_chebyshev_polynomial_w(x, n);
}
/// vnn::shifted_chebyshev_polynomial_w with a scalar degree n.
inline Tensor shifted_chebyshev_polynomial_w(const Tensor& x, double n) {
  return vnn::shifted_chebyshev_polynomial_w(x, n);
}
/// vnn::shifted_chebyshev_polynomial_w at a scalar x (float32 for an integer n).
Tensor shifted_chebyshev_polynomial_w(double x, const Tensor& n);
/// The physicists' Hermite polynomial H_n(x) (vnn::hermite_polynomial_h).
inline Tensor hermite_polynomial_h(const Tensor& x, const Tensor& n) { return vnn::hermite_polynomial_h(x, n); }
/// vnn::hermite_polynomial_h with a scalar degree n.
inline Tensor hermite_polynomial_h(const Tensor& x, double n) { return vnn::hermite_polynomial_h(x, n); }
/// vnn::hermite_polynomial_h at a scalar x (float32 for an integer n).
Tensor hermite_polynomial_h(double x, const Tensor& n);
/// The probabilists' Hermite polynomial He_n(x) (vnn::hermite_polynomial_he).
inline Tensor hermite_polynomial_he(const Tensor& x, const Tensor& n) { return vnn::hermite_polynomial_he(x, n); }
/// vnn::hermite_polynomial_he with a scalar degree n.
inline Tensor hermite_polynomial_he(const Tensor& x, double n) { return vnn::hermite_polynomial_he(x, n); }
/// vnn::hermite_polynomial_he at a scalar x (float32 for an integer n).
Tensor hermite_polynomial_he(double x, const Tensor& n);
/// The Laguerre polynomial L_n(x) (vnn::laguerre_polynomial_l).
inline Tensor laguerre_polynomial_l(const Tensor& x, const Tensor& n) { return vnn::laguerre_polynomial_l(x, n); }
/// vnn::laguerre_polynomial_l with a scalar degree n.
inline Tensor laguerre_polynomial_l(const Tensor& x, double n) { return vnn::laguerre_polynomial_l(x, n); }
/// vnn::laguerre_polynomial_l at a scalar x (float32 for an integer n).
Tensor laguerre_polynomial_l(double x, const Tensor& n);
/// The Legendre polynomial P_n(x) (vnn::legendre_polynomial_p).
inline Tensor legendre_polynomial_p(const Tensor& x, const Tensor& n) { return vnn::legendre_polynomial_p(x, n); }
/// vnn::legendre_polynomial_p with a scalar degree n.
inline Tensor legendre_polynomial_p(const Tensor& x, double n) { return vnn::legendre_polynomial_p(x, n); }
/// vnn::legendre_polynomial_p at a scalar x (float32 for an integer n).
Tensor legendre_polynomial_p(double x, const Tensor& n);
}  // namespace special

}  // namespace vnn
