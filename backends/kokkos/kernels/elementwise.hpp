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

#if !defined(__CUDACC__) && !defined(__HIPCC__)
#define VNN_GELU_HOST 1
#include "kokkos/kernels/gelu_host.hpp"
#else
#define VNN_GELU_HOST 0
#endif

namespace vnn::kernels {

// The output storage type of a function on inputs of storage type T.
template <int Fn> constexpr bool binary_bool_out = Fn >= VNN_BINARY_EQ && Fn <= VNN_BINARY_LOGICAL_XOR;
template <class T, int Fn> using binary_out_t = std::conditional_t<binary_bool_out<Fn>, Bool, T>;

// Signed integer +, -, * and negation wrap (two's complement), as PyTorch's
// and the OpenCL kernels' results do: done in unsigned arithmetic, since
// signed overflow is undefined behaviour (UBSan: "negation of -2147483648").
template <class C> KOKKOS_INLINE_FUNCTION C wrap_add(C a, C b) {
  if constexpr (std::is_integral_v<C> && std::is_signed_v<C>)
    return C(std::make_unsigned_t<C>(a) + std::make_unsigned_t<C>(b));
  else return a + b;
}
template <class C> KOKKOS_INLINE_FUNCTION C wrap_mul(C a, C b) {
  if constexpr (std::is_integral_v<C> && std::is_signed_v<C>)
    return C(std::make_unsigned_t<C>(a) * std::make_unsigned_t<C>(b));
  else return a * b;
}
template <class C> KOKKOS_INLINE_FUNCTION C wrap_neg(C a) {
  if constexpr (std::is_integral_v<C> && std::is_signed_v<C>)
    return C(std::make_unsigned_t<C>(0) - std::make_unsigned_t<C>(a));
  else return C(-a);
}

template <int Fn> struct BinaryFn;
template <> struct BinaryFn<VNN_BINARY_ADD> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, C b, C alpha) { return wrap_add(a, wrap_mul(alpha, b)); }
};
template <> struct BinaryFn<VNN_BINARY_SUB> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, C b, C alpha) {
    return wrap_add(a, wrap_neg(wrap_mul(alpha, b)));
  }
};
template <> struct BinaryFn<VNN_BINARY_MUL> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, C b, C) { return wrap_mul(a, b); }
};
template <> struct BinaryFn<VNN_BINARY_DIV> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, C b, C) {
    if constexpr (std::is_integral_v<C>) {
      if (b == C(0)) return C(0);  // no trap on x/0
      // MIN / -1 traps on x86 (SIGFPE): negate in unsigned arithmetic, which
      // wraps to MIN as on the other backends.
      if constexpr (std::is_signed_v<C>)
        if (b == C(-1)) return C(std::make_unsigned_t<C>(0) - std::make_unsigned_t<C>(a));
      return C(a / b);
    }
    else return a / b;
  }
};
template <> struct BinaryFn<VNN_BINARY_MAXIMUM> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, C b, C) {
    if constexpr (std::is_floating_point_v<C>) if (a != a || b != b) return a + b;  // nan propagates
    return a > b ? a : b;
  }
};
template <> struct BinaryFn<VNN_BINARY_MINIMUM> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, C b, C) {
    if constexpr (std::is_floating_point_v<C>) if (a != a || b != b) return a + b;
    return a < b ? a : b;
  }
};

// The exact GELU's gradient: g * (Phi(x) + x phi(x)); floating types only
// (binary_needs_float). Contiguous float32 on host spaces takes gelu_host.hpp.
template <> struct BinaryFn<VNN_BINARY_GELU_BACKWARD> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C g, C x, C) {
    const C cdf = C(0.5) * (C(1) + kmath::erf(x * C(0.70710678118654752440)));
    const C pdf = kmath::exp(C(-0.5) * x * x) * C(0.39894228040143267794);
    return g * (cdf + x * pdf);
  }
};
template <int Fn> constexpr bool binary_needs_float = Fn == VNN_BINARY_GELU_BACKWARD;

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
  // Unsigned wrap-around arithmetic avoids signed-overflow UB.
  using U = std::make_unsigned_t<C>;
  U r = 1, base = U(a);
  U e = U(b);
  while (e) {
    if (e & U(1)) r = U(r * base);
    base = U(base * base);
    e >>= 1;
  }
  return C(r);
}

template <> struct BinaryFn<VNN_BINARY_POW> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, C b, C) {
    if constexpr (std::is_floating_point_v<C>) return kmath::pow(a, b);
    else return int_pow(a, b);
  }
};
// Comparisons return 0/1 in the compute type; the bool store keeps != 0.
// NaN compares false everywhere except NE, as the C operators do.
template <> struct BinaryFn<VNN_BINARY_EQ> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, C b, C) { return C(a == b); }
};
template <> struct BinaryFn<VNN_BINARY_NE> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, C b, C) { return C(a != b); }
};
template <> struct BinaryFn<VNN_BINARY_LT> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, C b, C) { return C(a < b); }
};
template <> struct BinaryFn<VNN_BINARY_LE> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, C b, C) { return C(a <= b); }
};
template <> struct BinaryFn<VNN_BINARY_GT> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, C b, C) { return C(a > b); }
};
template <> struct BinaryFn<VNN_BINARY_GE> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, C b, C) { return C(a >= b); }
};
template <> struct BinaryFn<VNN_BINARY_LOGICAL_AND> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, C b, C) { return C(a != C(0) && b != C(0)); }
};
template <> struct BinaryFn<VNN_BINARY_LOGICAL_OR> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, C b, C) { return C(a != C(0) || b != C(0)); }
};
template <> struct BinaryFn<VNN_BINARY_LOGICAL_XOR> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, C b, C) { return C((a != C(0)) != (b != C(0))); }
};

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

template <int Fn> struct UnaryFn;
#define VNN_UNARY(FN, EXPR)                                                          \
  template <> struct UnaryFn<FN> {                                                   \
    template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, const UnaryParams<C>& p) { \
      (void)p;                                                                       \
      EXPR;                                                                          \
    }                                                                                \
  };
VNN_UNARY(VNN_UNARY_NEG, return wrap_neg(a))
VNN_UNARY(VNN_UNARY_EXP, return kmath::exp(a))
VNN_UNARY(VNN_UNARY_LOG, return kmath::log(a))
VNN_UNARY(VNN_UNARY_SQRT, return kmath::sqrt(a))
VNN_UNARY(VNN_UNARY_RELU, return a > C(0) ? a : (a != a ? a : C(0)))
VNN_UNARY(VNN_UNARY_SIGMOID, return C(1) / (C(1) + kmath::exp(-a)))
VNN_UNARY(VNN_UNARY_TANH, return kmath::tanh(a))
VNN_UNARY(VNN_UNARY_LOG1P, return kmath::log1p(a))
VNN_UNARY(VNN_UNARY_RSQRT, return C(1) / kmath::sqrt(a))
VNN_UNARY(VNN_UNARY_SIN, return kmath::sin(a))
VNN_UNARY(VNN_UNARY_COS, return kmath::cos(a))
VNN_UNARY(VNN_UNARY_LEAKY_RELU, return a > C(0) ? a : C(a * p.s0))
VNN_UNARY(VNN_UNARY_GELU, return C(0.5) * a * (C(1) + kmath::erf(a * C(0.70710678118654752440))))
VNN_UNARY(VNN_UNARY_SILU, return a / (C(1) + kmath::exp(-a)))
VNN_UNARY(VNN_UNARY_ERF, return kmath::erf(a))
VNN_UNARY(VNN_UNARY_LOGICAL_NOT, return C(a == C(0)))
// NaN inputs stay NaN (the comparisons are false); lo > hi gives hi, as in
// torch.clamp.
VNN_UNARY(VNN_UNARY_CLAMP, C r = (p.has0 && a < p.s0) ? p.s0 : a; return (p.has1 && r > p.s1) ? p.s1 : r)
VNN_UNARY(VNN_UNARY_RECIPROCAL, return C(1) / a)
#undef VNN_UNARY

template <> struct UnaryFn<VNN_UNARY_ABS> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, const UnaryParams<C>&) {
    if constexpr (std::is_unsigned_v<C>) return a;
    else return a < C(0) ? wrap_neg(a) : a;
  }
};
// floor / ceil / round are the identity on integers.
template <> struct UnaryFn<VNN_UNARY_FLOOR> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, const UnaryParams<C>&) {
    if constexpr (std::is_floating_point_v<C>) return kmath::floor(a);
    else return a;
  }
};
template <> struct UnaryFn<VNN_UNARY_CEIL> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, const UnaryParams<C>&) {
    if constexpr (std::is_floating_point_v<C>) return kmath::ceil(a);
    else return a;
  }
};
// nearbyint in the default rounding mode rounds half to even.
template <> struct UnaryFn<VNN_UNARY_ROUND> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, const UnaryParams<C>&) {
    if constexpr (std::is_floating_point_v<C>) return kmath::nearbyint(a);
    else return a;
  }
};
// sign(NaN) is NaN (NumPy's choice), sign(+-0) is 0.
template <> struct UnaryFn<VNN_UNARY_SIGN> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, const UnaryParams<C>&) {
    if constexpr (std::is_unsigned_v<C>) {
      return C(a != C(0));
    } else {
      if (a != a) return a;
      return C(int(C(0) < a) - int(a < C(0)));
    }
  }
};

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

// Transcendental functions make no sense on integers: those pairs are
// answered "unsupported" (the core promotes integers to float32 first).
template <int Fn> constexpr bool unary_needs_float =
    Fn == VNN_UNARY_EXP || Fn == VNN_UNARY_LOG || Fn == VNN_UNARY_SQRT || Fn == VNN_UNARY_SIGMOID ||
    Fn == VNN_UNARY_TANH || Fn == VNN_UNARY_LOG1P || Fn == VNN_UNARY_RSQRT || Fn == VNN_UNARY_SIN ||
    Fn == VNN_UNARY_COS || Fn == VNN_UNARY_LEAKY_RELU || Fn == VNN_UNARY_GELU || Fn == VNN_UNARY_SILU ||
    Fn == VNN_UNARY_ERF || Fn == VNN_UNARY_RECIPROCAL;

template <class Exec, int Fn>
bool binary_fn(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& a, const vnn_tensor_desc& b,
               double alpha) {
  bool ok = false;
  if (a.dtype != b.dtype || out.dtype != (binary_bool_out<Fn> ? int32_t(VNN_BOOL) : a.dtype))
    return refuse("takes a and b of one dtype and out of ", binary_bool_out<Fn> ? "bool" : "that dtype");
  dispatch_dtype(a.dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (!binary_needs_float<Fn> || std::is_floating_point_v<compute_t<T>>) {
      binary_typed<Exec, T, Fn>(exec, out, a, b, alpha);
      ok = true;
    }
  });
  return ok || refuse(binary_needs_float<Fn> ? "takes floating dtypes only" : "takes no such dtype");
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
  constexpr bool bool_out = Fn == VNN_UNARY_LOGICAL_NOT;
  if (out.dtype != (bool_out ? int32_t(VNN_BOOL) : a.dtype))
    return refuse("out must be ", bool_out ? "bool" : "the input's dtype");
  bool ok = false;
  dispatch_dtype(a.dtype, [&](auto t) {
    using T = decltype(t);
    using C = compute_t<T>;
    using O = std::conditional_t<bool_out, Bool, T>;
    if constexpr (!unary_needs_float<Fn> || std::is_floating_point_v<C>) {
      UnaryParams<C> p;
      // A NaN scalar means "no such bound" (clamp); it never reaches an
      // integer conversion.
      if (ns > 0 && s[0] == s[0]) p.s0 = param_cast<C>(s[0]), p.has0 = true;
      if (ns > 1 && s[1] == s[1]) p.s1 = param_cast<C>(s[1]), p.has1 = true;
      unary_typed<Exec, T, O, Fn>(exec, out, a, p);
      ok = true;
    }
  });
  return ok || refuse(unary_needs_float<Fn> ? "takes floating dtypes only" : "takes no such dtype");
}

template <class Exec>
bool unary(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& a, int64_t fn,
           const double* scalars, int32_t num_scalars) {
  return dispatch_fn<VNN_UNARY_COUNT_>(
      fn, [&](auto f) { return unary_fn<Exec, decltype(f)::value>(exec, out, a, scalars, num_scalars); });
}

}  // namespace vnn::kernels
