// BINARY and UNARY elementwise ops over strided, same-shape operands
// (broadcast inputs arrive with stride 0).
#pragma once
#include <Kokkos_Core.hpp>

#include "kokkos/kernels/types.hpp"

namespace vnn::kernels {

template <int Fn> struct BinaryFn;
template <> struct BinaryFn<VNN_BINARY_ADD> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, C b, C alpha) { return a + alpha * b; }
};
template <> struct BinaryFn<VNN_BINARY_SUB> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, C b, C alpha) { return a - alpha * b; }
};
template <> struct BinaryFn<VNN_BINARY_MUL> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, C b, C) { return a * b; }
};
template <> struct BinaryFn<VNN_BINARY_DIV> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a, C b, C) {
    if constexpr (std::is_integral_v<C>) return b == C(0) ? C(0) : C(a / b);  // no trap on x/0
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

template <int Fn> struct UnaryFn;
template <> struct UnaryFn<VNN_UNARY_NEG> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a) { return C(-a); }
};
template <> struct UnaryFn<VNN_UNARY_ABS> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a) {
    if constexpr (std::is_unsigned_v<C>) return a;
    else return a < C(0) ? C(-a) : a;
  }
};
template <> struct UnaryFn<VNN_UNARY_EXP> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a) { return kmath::exp(a); }
};
template <> struct UnaryFn<VNN_UNARY_LOG> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a) { return kmath::log(a); }
};
template <> struct UnaryFn<VNN_UNARY_SQRT> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a) { return kmath::sqrt(a); }
};
template <> struct UnaryFn<VNN_UNARY_RELU> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a) { return a > C(0) ? a : C(0); }
};
template <> struct UnaryFn<VNN_UNARY_SIGMOID> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a) {
    return C(1) / (C(1) + kmath::exp(-a));
  }
};
template <> struct UnaryFn<VNN_UNARY_TANH> {
  template <class C> KOKKOS_INLINE_FUNCTION static C apply(C a) { return kmath::tanh(a); }
};

template <class Exec, class T, int Fn>
void binary_typed(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& a,
                  const vnn_tensor_desc& b, double alpha_d) {
  using C = compute_t<T>;
  T* o = typed<T>(out);
  const T* x = typed<T>(a);
  const T* y = typed<T>(b);
  const C alpha = C(alpha_d);
  const StridedIndex oi(out), xi(a), yi(b);
  if (oi.contiguous && xi.contiguous && yi.contiguous) {
    // The common case, kept free of index math so that it vectorises.
    T* op = o + oi.offset;
    const T* xp = x + xi.offset;
    const T* yp = y + yi.offset;
    Kokkos::parallel_for("vnn::binary_contiguous", Range<Exec>(exec, 0, numel(out)), KOKKOS_LAMBDA(int64_t i) {
      op[i] = store<T>(BinaryFn<Fn>::apply(load(xp[i]), load(yp[i]), alpha));
    });
    return;
  }
  Kokkos::parallel_for("vnn::binary", Range<Exec>(exec, 0, numel(out)), KOKKOS_LAMBDA(int64_t i) {
    o[oi(i)] = store<T>(BinaryFn<Fn>::apply(load(x[xi(i)]), load(y[yi(i)]), alpha));
  });
}

template <class Exec, class T, int Fn>
void unary_typed(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& a) {
  T* o = typed<T>(out);
  const T* x = typed<T>(a);
  const StridedIndex oi(out), xi(a);
  if (oi.contiguous && xi.contiguous) {
    T* op = o + oi.offset;
    const T* xp = x + xi.offset;
    Kokkos::parallel_for("vnn::unary_contiguous", Range<Exec>(exec, 0, numel(out)), KOKKOS_LAMBDA(int64_t i) {
      op[i] = store<T>(UnaryFn<Fn>::apply(load(xp[i])));
    });
    return;
  }
  Kokkos::parallel_for("vnn::unary", Range<Exec>(exec, 0, numel(out)), KOKKOS_LAMBDA(int64_t i) {
    o[oi(i)] = store<T>(UnaryFn<Fn>::apply(load(x[xi(i)])));
  });
}

// Transcendental functions make no sense on integers: those pairs are
// answered "unsupported" (the core promotes integers to float32 first).
template <int Fn> constexpr bool unary_needs_float =
    Fn == VNN_UNARY_EXP || Fn == VNN_UNARY_LOG || Fn == VNN_UNARY_SQRT || Fn == VNN_UNARY_SIGMOID ||
    Fn == VNN_UNARY_TANH;

template <class Exec>
bool binary(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& a, const vnn_tensor_desc& b,
            int64_t fn, double alpha) {
  bool ok = false;
  dispatch_dtype(out.dtype, [&](auto t) {
    using T = decltype(t);
    switch (fn) {
      case VNN_BINARY_ADD: binary_typed<Exec, T, VNN_BINARY_ADD>(exec, out, a, b, alpha); ok = true; break;
      case VNN_BINARY_SUB: binary_typed<Exec, T, VNN_BINARY_SUB>(exec, out, a, b, alpha); ok = true; break;
      case VNN_BINARY_MUL: binary_typed<Exec, T, VNN_BINARY_MUL>(exec, out, a, b, alpha); ok = true; break;
      case VNN_BINARY_DIV: binary_typed<Exec, T, VNN_BINARY_DIV>(exec, out, a, b, alpha); ok = true; break;
      case VNN_BINARY_MAXIMUM: binary_typed<Exec, T, VNN_BINARY_MAXIMUM>(exec, out, a, b, alpha); ok = true; break;
      case VNN_BINARY_MINIMUM: binary_typed<Exec, T, VNN_BINARY_MINIMUM>(exec, out, a, b, alpha); ok = true; break;
      default: break;
    }
  });
  return ok;
}

template <class Exec, int Fn>
bool unary_fn(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& a) {
  bool ok = false;
  dispatch_dtype(out.dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (!unary_needs_float<Fn> || std::is_floating_point_v<compute_t<T>>) {
      unary_typed<Exec, T, Fn>(exec, out, a);
      ok = true;
    }
  });
  return ok;
}

template <class Exec>
bool unary(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& a, int64_t fn) {
  switch (fn) {
    case VNN_UNARY_NEG: return unary_fn<Exec, VNN_UNARY_NEG>(exec, out, a);
    case VNN_UNARY_ABS: return unary_fn<Exec, VNN_UNARY_ABS>(exec, out, a);
    case VNN_UNARY_EXP: return unary_fn<Exec, VNN_UNARY_EXP>(exec, out, a);
    case VNN_UNARY_LOG: return unary_fn<Exec, VNN_UNARY_LOG>(exec, out, a);
    case VNN_UNARY_SQRT: return unary_fn<Exec, VNN_UNARY_SQRT>(exec, out, a);
    case VNN_UNARY_RELU: return unary_fn<Exec, VNN_UNARY_RELU>(exec, out, a);
    case VNN_UNARY_SIGMOID: return unary_fn<Exec, VNN_UNARY_SIGMOID>(exec, out, a);
    case VNN_UNARY_TANH: return unary_fn<Exec, VNN_UNARY_TANH>(exec, out, a);
    default: return false;
  }
}

}  // namespace vnn::kernels
