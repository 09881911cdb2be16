// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// BINARY and UNARY elementwise ops over strided, same-shape operands
// (broadcast inputs arrive with stride 0). Contiguous operands take one flat
// vectorisable loop; anything else walks rows x runs (StridedRuns). Inputs share one dtype; the
// output has it too, except comparisons, logical ops and LOGICAL_NOT, whose
// output is bool.
#pragma once
#include <Kokkos_Core.hpp>
#include <limits>
#include <type_traits>

#include "kokkos/kernels/dispatch.hpp"
#include "kokkos/kernels/types.hpp"
#include "vnn/op_names.h"

#if !defined(__CUDACC__) && !defined(__HIPCC__)
#define VNN_GELU_HOST 1
#include "kokkos/kernels/gelu_host.hpp"
#else
#define VNN_GELU_HOST 0
#endif

namespace vnn::kernels {


// Signed integer +, -, * and negation wrap (two's complement), as PyTorch's
// and the OpenCL kernels' results do: done in unsigned arithmetic, since
// signed overflow is undefined behaviour (UBSan: "negation of -2147483648").
template <class C> KOKKOS_INLINE_FUNCTION C wrap_add(C a, C b) {
  if constexpr (std::is_integral_v<C> && std::is_signed_v<C>)
    return C(std::make_unsigned_t<C>(a) + std::make_unsigned_t<C>(b));
  else return a + b;
}
// C's unsigned type, at least unsigned int: unsigned short operands would be
// promoted to (signed) int, where 65535 * 65535 overflows.
template <class C>
using wide_unsigned_t = std::conditional_t<(sizeof(C) < sizeof(unsigned)), unsigned, std::make_unsigned_t<C>>;
template <class C> KOKKOS_INLINE_FUNCTION C wrap_mul(C a, C b) {
  if constexpr (std::is_integral_v<C> && std::is_signed_v<C>) {
    using U = wide_unsigned_t<C>;
    return C(U(std::make_unsigned_t<C>(a)) * U(std::make_unsigned_t<C>(b)));
  } else {
    return a * b;
  }
}
template <class C> KOKKOS_INLINE_FUNCTION C wrap_neg(C a) {
  if constexpr (std::is_integral_v<C> && std::is_signed_v<C>)
    return C(std::make_unsigned_t<C>(0) - std::make_unsigned_t<C>(a));
  else return C(-a);
}

// The op tables' C99 math names on Kokkos: kmath's, plus those it lacks.
namespace km {
using namespace kmath;
template <class C> KOKKOS_INLINE_FUNCTION C rint(C x) { return kmath::nearbyint(x); }  // half to even
template <class C> KOKKOS_INLINE_FUNCTION C rsqrt(C x) { return C(1) / kmath::sqrt(x); }
// |x| with y's sign (-0.0 counts as negative; a NaN y as positive).
template <class C> KOKKOS_INLINE_FUNCTION C copysign(C x, C y) {
  const bool negative = y < C(0) || (y == C(0) && C(1) / y < C(0));
  return negative ? -kmath::fabs(x) : kmath::fabs(x);
}
// The neighbour of x toward y in C's own precision (Kokkos 3.4 has no
// nextafter; std::'s is host-only): one step of x's bits.
template <class C> KOKKOS_INLINE_FUNCTION C nextafter(C x, C y) {
  using U = std::conditional_t<sizeof(C) == 8, uint64_t, uint32_t>;
  static_assert(sizeof(U) == sizeof(C), "nextafter: float or double");
  if (x != x || y != y) return x + y;
  if (x == y) return y;
  U bits;
  if (x == C(0)) {  // the smallest subnormal, with y's sign
    bits = U(1) | (y < C(0) ? U(U(1) << (sizeof(U) * 8 - 1)) : U(0));
  } else {
    memcpy(&bits, &x, sizeof bits);
    bits = (x < y) == (x > C(0)) ? U(bits + 1) : U(bits - 1);  // away from zero, or toward it
  }
  memcpy(&x, &bits, sizeof bits);
  return x;
}
}  // namespace km

// The op tables' special functions (VNN_SP(f), vnn/ops/special_functions.def),
// computed in double for every floating type.
#define VNN_SPFN KOKKOS_INLINE_FUNCTION
#define VNN_SPT double
#define VNN_F(f) km::f
#include "vnn/ops/special_functions.def"
#undef VNN_SPFN
#undef VNN_SPT
#undef VNN_F

// Integer power by squaring. Negative exponents give 1/a^-b truncated:
// 1 for a == 1, +-1 for a == -1, otherwise 0 (a == 0: 0, like x / 0).
template <class C> KOKKOS_INLINE_FUNCTION C int_pow(C a, C b) {
  if constexpr (std::is_signed_v<C>) {
    if (b < C(0)) {
      if (a == C(1)) return C(1);
      if (a == C(-1)) return (b % C(2)) == C(0) ? C(1) : C(-1);
      return C(0);
    }
  }
  // Unsigned wrap-around arithmetic avoids signed-overflow UB (in at least
  // unsigned int: narrower operands would be promoted to signed int).
  using U = wide_unsigned_t<C>;
  U r = 1, base = U(std::make_unsigned_t<C>(a));
  U e = U(std::make_unsigned_t<C>(b));
  while (e) {
    if (e & U(1)) r = U(r * base);
    base = U(base * base);
    e >>= 1;
  }
  return C(r);
}

// Integer division and remainders that never trap: x / 0 and x % 0 give 0,
// and MIN / -1 (which traps on x86) wraps to MIN, as on the other backends.
template <class C> KOKKOS_INLINE_FUNCTION C int_div(C a, C b) {
  if (b == C(0)) return C(0);
  if constexpr (std::is_signed_v<C>)
    if (b == C(-1)) return wrap_neg(a);
  return C(a / b);
}
template <class C> KOKKOS_INLINE_FUNCTION C int_fmod(C a, C b) {
  if (b == C(0)) return C(0);
  if constexpr (std::is_signed_v<C>)
    if (b == C(-1)) return C(0);
  return C(a % b);
}
template <class C> KOKKOS_INLINE_FUNCTION C int_mod(C a, C b) {  // Python's: the sign of b
  const C r = int_fmod(a, b);
  return r != C(0) && ((r < C(0)) != (b < C(0))) ? C(r + b) : r;
}
template <class C> KOKKOS_INLINE_FUNCTION C int_floordiv(C a, C b) {
  const C q = int_div(a, b);
  return b != C(0) && int_fmod(a, b) != C(0) && ((a < C(0)) != (b < C(0))) ? C(q - C(1)) : q;
}

// Shifts as PyTorch's kernels: a count outside [0, width) shifts every bit
// out (left: 0; right: 0, or -1 for a negative signed a) instead of C's
// undefined behaviour; the left shift wraps (done unsigned).
template <class C> KOKKOS_INLINE_FUNCTION bool shift_out_of_range(C b) {
  if constexpr (std::is_signed_v<C>)
    if (b < C(0)) return true;
  return b >= C(sizeof(C) * 8);
}
template <class C> KOKKOS_INLINE_FUNCTION C int_shl(C a, C b) {
  if (shift_out_of_range(b)) return C(0);
  return C(std::make_unsigned_t<C>(std::make_unsigned_t<C>(a) << b));
}
template <class C> KOKKOS_INLINE_FUNCTION C int_shr(C a, C b) {
  if constexpr (std::is_signed_v<C>) {
    if (shift_out_of_range(b)) return a < C(0) ? C(-1) : C(0);
  } else {
    if (shift_out_of_range(b)) return C(0);
  }
  return C(a >> b);
}

// gcd and lcm of the magnitudes, as PyTorch's (non-negative; gcd(0, 0) = 0,
// lcm 0 where either is 0), in unsigned arithmetic: |MIN| does not overflow
// and the lcm wraps.
template <class C> KOKKOS_INLINE_FUNCTION std::make_unsigned_t<C> int_magnitude(C a) {
  using U = std::make_unsigned_t<C>;
  if constexpr (std::is_signed_v<C>)
    if (a < C(0)) return U(U(0) - U(a));
  return U(a);
}
template <class C> KOKKOS_INLINE_FUNCTION std::make_unsigned_t<C> int_gcd_magnitude(C a, C b) {
  std::make_unsigned_t<C> x = int_magnitude(a), y = int_magnitude(b);
  while (x != 0) {
    const auto r = y % x;
    y = x;
    x = r;
  }
  return y;
}
template <class C> KOKKOS_INLINE_FUNCTION C int_gcd(C a, C b) { return C(int_gcd_magnitude(a, b)); }
template <class C> KOKKOS_INLINE_FUNCTION C int_lcm(C a, C b) {
  using U = std::make_unsigned_t<C>;
  const U g = int_gcd_magnitude(a, b);
  using W = wide_unsigned_t<C>;
  return g == 0 ? C(0) : C(U(W(U(int_magnitude(a) / g)) * W(int_magnitude(b))));
}

// One functor per line of the binary op table (vnn/ops/binary.def): the
// float expression for floating compute types, the integer one otherwise.
template <int Fn> struct BinaryFn;
#define VNN_K(v) C(v)
#define VNN_F(f) km::f
#define VNN_SEL(c, x, y) ((c) ? (x) : (y))
#define VNN_WADD(x, y) wrap_add(x, y)
#define VNN_WMUL(x, y) wrap_mul(x, y)
#define VNN_WNEG(x) wrap_neg(x)
#define VNN_IDIV(x, y) int_div(x, y)
#define VNN_IPOW(x, y) int_pow(x, y)
#define VNN_IFMOD(x, y) int_fmod(x, y)
#define VNN_IMOD(x, y) int_mod(x, y)
#define VNN_IFLOORDIV(x, y) int_floordiv(x, y)
#define VNN_SP(f) vnn_sp_##f
#define VNN_ISHL(x, y) int_shl(x, y)
#define VNN_ISHR(x, y) int_shr(x, y)
#define VNN_IGCD(x, y) int_gcd(x, y)
#define VNN_ILCM(x, y) int_lcm(x, y)
#define VNN_BINARY_OP(ID, NAME, SIG, RULE, DOMAIN, DOC, GA, GB, FE, IE)                  \
  template <> struct BinaryFn<VNN_BINARY_##ID> {                                         \
    template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, C b, C alpha) {        \
      (void)b;                                                                           \
      (void)alpha;                                                                       \
      if constexpr (std::is_floating_point_v<C>) return C(FE);                           \
      else return C(IE);                                                                 \
    }                                                                                    \
  };
#include "vnn/ops/binary.def"
#undef VNN_BINARY_OP
#undef VNN_K
#undef VNN_F
#undef VNN_SEL
#undef VNN_WADD
#undef VNN_WMUL
#undef VNN_WNEG
#undef VNN_IDIV
#undef VNN_IPOW
#undef VNN_IFMOD
#undef VNN_IMOD
#undef VNN_IFLOORDIV
#undef VNN_SP
#undef VNN_ISHL
#undef VNN_ISHR
#undef VNN_IGCD
#undef VNN_ILCM

// Which (function, compute type) pairs exist, and the output type: the
// table's rule.
template <int Fn> constexpr int binary_rule = vnn_binary_rule(Fn);
template <int Fn>
constexpr bool binary_bool_out = binary_rule<Fn> == VNN_BRULE_COMPARE || binary_rule<Fn> == VNN_BRULE_LOGICAL;
template <class T, int Fn> using binary_out_t = std::conditional_t<binary_bool_out<Fn>, Bool, T>;
template <int Fn, class C>
constexpr bool binary_takes = binary_rule<Fn> == VNN_BRULE_FLOATONLY || binary_rule<Fn> == VNN_BRULE_FLOATING
                                  ? std::is_floating_point_v<C>
                                  : binary_rule<Fn> == VNN_BRULE_INTEGRAL ? !std::is_floating_point_v<C> : true;

// Unary parameters in the compute type: leaky_relu's slope in s0, clamp's
// bounds in s0/s1 with has0/has1 false for an absent (NaN) bound.
template <class C> struct UnaryParams {
  C s0{}, s1{};
  bool has0 = false, has1 = false;
};

// double -> C for a scalar parameter; integers saturate instead of C's
// undefined out-of-range conversion.
template <class C> inline C param_cast(double v) {
  if constexpr (std::is_floating_point_v<C>) {
    return C(v);
  } else {
    if (v <= double(std::numeric_limits<C>::lowest())) return std::numeric_limits<C>::lowest();
    if (v >= double(std::numeric_limits<C>::max())) return std::numeric_limits<C>::max();
    return C(v);
  }
}

// The op table's helpers (vnn/ops/unary.def), as the OpenCL kernels define
// them: sigmoid split by sign so that exp never overflows.
template <class C> KOKKOS_INLINE_FUNCTION C h_sigmoid(C x) {
  const C e = kmath::exp(-kmath::fabs(x));
  return x >= C(0) ? C(1) / (C(1) + e) : e / (C(1) + e);
}
template <class C> KOKKOS_INLINE_FUNCTION C h_gelu(C x) {
  return C(0.5) * x * (C(1) + kmath::erf(x * C(0.70710678118654752440)));
}
template <class C> KOKKOS_INLINE_FUNCTION C h_silu(C x) { return x * h_sigmoid(x); }


// One functor per table line: the float expression for floating compute
// types, the integer one otherwise (the core sends integers only to KEEP,
// BOOLOUT and INTEGRAL ops; unary_takes says which pairs exist).
template <int Fn> struct UnaryFn;
#define VNN_K(v) C(v)
#define VNN_F(f) km::f
#define VNN_SIGMOID(v) h_sigmoid(v)
#define VNN_GELU(v) h_gelu(v)
#define VNN_SILU(v) h_silu(v)
#define VNN_S0 p.s0
#define VNN_S1 p.s1
#define VNN_HAS0 p.has0
#define VNN_HAS1 p.has1
#define VNN_LO (p.has0 ? p.s0 : C(-INFINITY))
#define VNN_HI (p.has1 ? p.s1 : C(INFINITY))
#define VNN_NEG(v) wrap_neg(v)
#define VNN_SEL(c, a, b) ((c) ? (a) : (b))
#define VNN_SP(f) vnn_sp_##f
#define VNN_UNARY_OP(ID, NAME, SIG, RULE, DOMAIN, DOC, GRAD, FE, IE)                        \
  template <> struct UnaryFn<VNN_UNARY_##ID> {                                              \
    template <class C> KOKKOS_INLINE_FUNCTION static C apply(C x, const UnaryParams<C>& p) { \
      (void)p;                                                                              \
      if constexpr (std::is_floating_point_v<C>) return C(FE);                              \
      else return C(IE);                                                                    \
    }                                                                                       \
  };
#include "vnn/ops/unary.def"
#undef VNN_UNARY_OP
#undef VNN_K
#undef VNN_F
#undef VNN_SIGMOID
#undef VNN_GELU
#undef VNN_SILU
#undef VNN_S0
#undef VNN_S1
#undef VNN_HAS0
#undef VNN_HAS1
#undef VNN_LO
#undef VNN_HI
#undef VNN_NEG
#undef VNN_SEL
#undef VNN_SP

// Which (function, compute type) pairs exist: the table's integer rule.
template <int Fn> constexpr int unary_rule = vnn_unary_rule(Fn);
template <int Fn> constexpr bool unary_bool_out = unary_rule<Fn> == VNN_RULE_BOOLOUT;
template <int Fn, class C>
constexpr bool unary_takes = unary_rule<Fn> == VNN_RULE_KEEP || unary_rule<Fn> == VNN_RULE_BOOLOUT
                                 ? true
                                 : unary_rule<Fn> == VNN_RULE_INTEGRAL ? !std::is_floating_point_v<C>
                                                                       : std::is_floating_point_v<C>;

template <class Exec, class T, int Fn>
void binary_typed(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& a,
                  const vnn_tensor_desc& b, double alpha_d) {
  using C = compute_t<T>;
  using O = binary_out_t<T, Fn>;
  O* o = typed<O>(out);
  const T* x = typed<T>(a);
  const T* y = typed<T>(b);
  const C alpha = param_cast<C>(alpha_d);
  const StridedIndex oi(out), xi(a), yi(b);
  if (oi.contiguous && xi.contiguous && yi.contiguous) {
    // The common case, kept free of index math so that it vectorises.
    O* op = o + oi.offset;
    const T* xp = x + xi.offset;
    const T* yp = y + yi.offset;
#if VNN_GELU_HOST
    if constexpr (Fn == VNN_BINARY_GELU_BACKWARD && std::is_same_v<T, float> &&
                  Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible) {
      gelu_host<1>(exec, yp, xp, op, numel(out));
      return;
    }
#endif
    Kokkos::parallel_for("vnn::binary_contiguous", Range<Exec>(exec, 0, numel(out)), KOKKOS_LAMBDA(int64_t i) {
      op[i] = store<O>(BinaryFn<Fn>::apply(load(xp[i]), load(yp[i]), alpha));
    });
    return;
  }
  // Strided (broadcast, permuted): rows x runs, offsets once per run; the
  // unit-stride-output run with a unit-stride or broadcast input is the
  // training case (bias adds, [N, C, H, W] + [1, C, 1, 1]).
  const vnn_tensor_desc* descs[3] = {&out, &a, &b};
  const StridedRuns<3> runs(descs);
  Kokkos::parallel_for("vnn::binary_runs", Range<Exec>(exec, 0, runs.count), KOKKOS_LAMBDA(int64_t w) {
    int64_t off[3];
    const int64_t len = runs.start(w, off);
    const int64_t so = runs.step[0], sx = runs.step[1], sy = runs.step[2];
    O* op = o + off[0];
    const T* xp = x + off[1];
    const T* yp = y + off[2];
    if (so == 1 && sx == 1 && sy == 1) {
      for (int64_t j = 0; j < len; ++j) op[j] = store<O>(BinaryFn<Fn>::apply(load(xp[j]), load(yp[j]), alpha));
    } else if (so == 1 && sx == 1 && sy == 0) {
      const C yv = load(yp[0]);
      for (int64_t j = 0; j < len; ++j) op[j] = store<O>(BinaryFn<Fn>::apply(load(xp[j]), yv, alpha));
    } else {
      for (int64_t j = 0; j < len; ++j)
        op[j * so] = store<O>(BinaryFn<Fn>::apply(load(xp[j * sx]), load(yp[j * sy]), alpha));
    }
  });
}

template <class Exec, class T, class O, int Fn>
void unary_typed(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& a,
                 const UnaryParams<compute_t<T>> p) {
  O* o = typed<O>(out);
  const T* x = typed<T>(a);
  const StridedIndex oi(out), xi(a);
  if (oi.contiguous && xi.contiguous) {
    O* op = o + oi.offset;
    const T* xp = x + xi.offset;
#if VNN_GELU_HOST
    if constexpr (Fn == VNN_UNARY_GELU && std::is_same_v<T, float> && std::is_same_v<O, float> &&
                  Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible) {
      gelu_host<0>(exec, xp, static_cast<const float*>(nullptr), op, numel(out));
      return;
    }
#endif
    Kokkos::parallel_for("vnn::unary_contiguous", Range<Exec>(exec, 0, numel(out)), KOKKOS_LAMBDA(int64_t i) {
      op[i] = store<O>(UnaryFn<Fn>::apply(load(xp[i]), p));
    });
    return;
  }
  const vnn_tensor_desc* descs[2] = {&out, &a};
  const StridedRuns<2> runs(descs);
  Kokkos::parallel_for("vnn::unary_runs", Range<Exec>(exec, 0, runs.count), KOKKOS_LAMBDA(int64_t w) {
    int64_t off[2];
    const int64_t len = runs.start(w, off);
    const int64_t so = runs.step[0], sx = runs.step[1];
    O* op = o + off[0];
    const T* xp = x + off[1];
    for (int64_t j = 0; j < len; ++j) op[j * so] = store<O>(UnaryFn<Fn>::apply(load(xp[j * sx]), p));
  });
}

template <class Exec, int Fn>
bool binary_fn(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& a, const vnn_tensor_desc& b,
               double alpha) {
  bool ok = false;
  if (a.dtype != b.dtype || out.dtype != (binary_bool_out<Fn> ? int32_t(VNN_BOOL) : a.dtype))
    return refuse("takes a and b of one dtype and out of ", binary_bool_out<Fn> ? "bool" : "that dtype");
  dispatch_dtype(a.dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (binary_takes<Fn, compute_t<T>>) {
      binary_typed<Exec, T, Fn>(exec, out, a, b, alpha);
      ok = true;
    }
  });
  return ok || refuse(binary_rule<Fn> == VNN_BRULE_INTEGRAL ? "takes integer and bool dtypes only"
                      : binary_takes<Fn, float> && !binary_takes<Fn, int> ? "takes floating dtypes only"
                                                                           : "takes no such dtype");
}

template <class Exec>
bool binary(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& a, const vnn_tensor_desc& b,
            int64_t fn, double alpha) {
  return dispatch_fn<VNN_BINARY_COUNT_>(
      fn, [&](auto f) { return binary_fn<Exec, decltype(f)::value>(exec, out, a, b, alpha); });
}

template <class Exec, int Fn>
bool unary_fn(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& a, const double* s,
              int32_t ns) {
  constexpr bool bool_out = unary_bool_out<Fn>;
  if (out.dtype != (bool_out ? int32_t(VNN_BOOL) : a.dtype))
    return refuse("out must be ", bool_out ? "bool" : "the input's dtype");
  bool ok = false;
  dispatch_dtype(a.dtype, [&](auto t) {
    using T = decltype(t);
    using C = compute_t<T>;
    using O = std::conditional_t<bool_out, Bool, T>;
    if constexpr (unary_takes<Fn, C>) {
      UnaryParams<C> p;
      // A NaN scalar means "no such bound" (clamp); it never reaches an
      // integer conversion.
      if (ns > 0 && s[0] == s[0]) p.s0 = param_cast<C>(s[0]), p.has0 = true;
      if (ns > 1 && s[1] == s[1]) p.s1 = param_cast<C>(s[1]), p.has1 = true;
      unary_typed<Exec, T, O, Fn>(exec, out, a, p);
      ok = true;
    }
  });
  return ok || refuse(unary_rule<Fn> == VNN_RULE_INTEGRAL ? "takes integer and bool dtypes only"
                      : unary_rule<Fn> == VNN_RULE_KEEP || unary_bool_out<Fn> ? "takes no such dtype"
                                                                             : "takes floating dtypes only");
}

template <class Exec>
bool unary(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& a, int64_t fn,
           const double* scalars, int32_t num_scalars) {
  return dispatch_fn<VNN_UNARY_COUNT_>(
      fn, [&](auto f) { return unary_fn<Exec, decltype(f)::value>(exec, out, a, scalars, num_scalars); });
}

}  // namespace vnn::kernels
