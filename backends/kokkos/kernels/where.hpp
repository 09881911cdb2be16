// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// WHERE: out = cond ? a : b over strided, same-shape operands (broadcast
// inputs carry stride 0). cond is bool; a, b and out share one dtype.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kokkos/kernels/dispatch.hpp"
#include "kokkos/kernels/types.hpp"

namespace vnn::kernels {

// c ? a : b on the bits, without a branch (GCC keeps `?:` on two loaded
// values as a jump, which a random condition mispredicts half the time).
template <class T>
KOKKOS_INLINE_FUNCTION T select_bits(bool c, const T& a, const T& b) {
  using U = std::conditional_t<sizeof(T) == 1, uint8_t,
                               std::conditional_t<sizeof(T) == 2, uint16_t,
                                                  std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
  static_assert(sizeof(U) == sizeof(T), "select_bits takes 1, 2, 4 or 8-byte elements");
  U ua, ub;
  memcpy(&ua, &a, sizeof(U));
  memcpy(&ub, &b, sizeof(U));
  const U mask = U(U(0) - U(c));
  const U r = U((ua & mask) | (ub & U(~mask)));
  T out;
  memcpy(&out, &r, sizeof(U));
  return out;
}

template <class Exec, class T>
void where_typed(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& cond,
                 const vnn_tensor_desc& a, const vnn_tensor_desc& b) {
  T* o = typed<T>(out);
  const Bool* c = typed<Bool>(cond);  // bytes: any non-zero value is true
  const T* x = typed<T>(a);
  const T* y = typed<T>(b);
  const StridedIndex oi(out), ci(cond), xi(a), yi(b);
  // Elements are copied as stored (no compute type): float16 bits and NaN
  // payloads pass through unchanged.
  if (oi.contiguous && ci.contiguous && xi.contiguous && yi.contiguous) {
    // The common case without index math and without a branch per element
    // (select_bits): a branch on a random condition mispredicted half the
    // time, and an int64 select of 16M elements took 7x an add's time.
    T* op = o + oi.offset;
    const Bool* cp = c + ci.offset;
    const T* xp = x + xi.offset;
    const T* yp = y + yi.offset;
    Kokkos::parallel_for("vnn::where_contiguous", Range<Exec>(exec, 0, numel(out)), KOKKOS_LAMBDA(int64_t i) {
      op[i] = select_bits(cp[i].bits != 0, xp[i], yp[i]);
    });
    return;
  }
  Kokkos::parallel_for("vnn::where", Range<Exec>(exec, 0, numel(out)), KOKKOS_LAMBDA(int64_t i) {
    o[oi(i)] = c[ci(i)].bits != 0 ? x[xi(i)] : y[yi(i)];
  });
}

template <class Exec>
bool where(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& cond, const vnn_tensor_desc& a,
           const vnn_tensor_desc& b) {
  if (cond.dtype != VNN_BOOL || a.dtype != out.dtype || b.dtype != out.dtype)
    return refuse("takes a bool condition and a, b, out of one dtype");
  return dispatch_dtype(out.dtype, [&](auto t) { where_typed<Exec, decltype(t)>(exec, out, cond, a, b); });
}

}  // namespace vnn::kernels
