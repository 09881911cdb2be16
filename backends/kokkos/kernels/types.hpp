// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Element types as the kernels see them: storage type, compute type and the
// conversions between them, usable on host and device.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "vnn/backend_abi.h"
#include "vnn/checked_size.h"

namespace vnn::kernels {

// Math functions moved from Kokkos::Experimental to Kokkos in 3.7.
#if KOKKOS_VERSION >= 30700
namespace kmath = ::Kokkos;
#else
namespace kmath = ::Kokkos::Experimental;
#endif

// float16 / bfloat16 are stored as bits and computed in float.
struct Half { uint16_t bits; };
struct BFloat16 { uint16_t bits; };
// BOOL storage is one byte read as a byte: a C++ bool holding anything but
// 0 or 1 is undefined behaviour (UBSan: "load of value 2, which is not a
// valid value for type 'bool'"), and a tensor's bytes may come from a file,
// from_blob or a view of uint8 data. Every byte value reads as (byte != 0).
struct Bool { uint8_t bits; };

KOKKOS_INLINE_FUNCTION uint32_t float_bits(float f) {
  union { float f; uint32_t u; } v{f};
  return v.u;
}
KOKKOS_INLINE_FUNCTION float bits_float(uint32_t u) {
  union { uint32_t u; float f; } v{u};
  return v.f;
}

// float16 <-> float32 without branches (mask selects), so that the loops
// over 16-bit storage vectorise (GCC at plain x86-64: 4 lanes of SSE2);
// the branchy bit-by-bit versions made float16 3-6x slower than bfloat16
// on the CPU (docs/benchmarks.md). Both
// are exact (round to nearest even, NaN stays a quiet NaN) and checked
// against reference versions for every half and every rounding boundary
// (tests/backends/half_convert.cpp).
KOKKOS_INLINE_FUNCTION float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t shifted = uint32_t(h & 0x7fffu) << 13;  // exponent and mantissa in float's places
  const uint32_t exp = shifted & 0x0f800000u;
  const uint32_t normal = shifted + 0x38000000u;           // rebias 15 -> 127
  // inf / NaN: the exponent all ones again
  const uint32_t special = normal + 0x38000000u;
  // zero / subnormal: man * 2^-24, exactly, as (2^-14 + man * 2^-24) - 2^-14
  const uint32_t tiny = float_bits(bits_float(normal + 0x00800000u) - 6.103515625e-05f);
  // masks, not ?: (GCC turns those into branches and keeps the loop scalar)
  const uint32_t m_special = 0u - uint32_t(exp == 0x0f800000u), m_tiny = 0u - uint32_t(exp == 0);
  return bits_float(sign | (special & m_special) | (tiny & m_tiny) | (normal & ~(m_special | m_tiny)));
}

// Round to nearest even.
KOKKOS_INLINE_FUNCTION uint16_t float_to_half(float f) {
  const uint32_t x = float_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t a = x & 0x7fffffffu;
  // normal: rebias 127 -> 15 (the wrap-around add is a subtraction), add
  // half an ulp less one plus the kept lowest bit (ties to even), drop 13 bits;
  // a carry out of the mantissa steps the exponent, up to inf at 65520
  const uint32_t normal = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;
  // below 2^-14: adding 0.5 leaves the half's 10 mantissa bits at the
  // bottom of the float, rounded to nearest even by the float addition
  const uint32_t tiny = float_bits(bits_float(a) + 0.5f) - 0x3f000000u;
  const uint32_t big = 0x7c00u | (uint32_t(a > 0x7f800000u) << 9);  // NaN -> quiet NaN, inf and overflow -> inf
  const uint32_t m_big = 0u - uint32_t(a >= 0x47800000u), m_tiny = 0u - uint32_t(a < 0x38800000u);
  return uint16_t(sign | (big & m_big) | (tiny & m_tiny) | (normal & ~(m_big | m_tiny)));
}

// A double narrowed to float rounding to odd (truncated, last bit set when
// inexact): rounding that float to half or bfloat16 then gives the correctly
// rounded result; a plain float(d) first can round twice (1 + 2^-11 + 2^-40
// would become 1.0 in half instead of 1 + 2^-10).
KOKKOS_INLINE_FUNCTION float float_round_to_odd(double d) {
  const float f = float(d);
  if (d != d || double(f) == d) return f;
  uint32_t b = float_bits(f);
  const double ad = d < 0 ? -d : d, af = f < 0 ? -double(f) : double(f);
  if (af > ad) --b;  // one ulp toward zero: the truncated value
  return bits_float(b | 1u);
}

KOKKOS_INLINE_FUNCTION float bf16_to_float(uint16_t b) { return bits_float(uint32_t(b) << 16); }
KOKKOS_INLINE_FUNCTION uint16_t float_to_bf16(float f) {
  uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);  // quiet nan
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return uint16_t((x + rounding) >> 16);
}

// compute_t<T>: the type arithmetic on T happens in.
template <class T> struct Compute { using type = T; };
template <> struct Compute<Half> { using type = float; };
template <> struct Compute<BFloat16> { using type = float; };
template <> struct Compute<Bool> { using type = int32_t; };
template <class T> using compute_t = typename Compute<T>::type;

template <class T> KOKKOS_INLINE_FUNCTION compute_t<T> load(const T& v) { return compute_t<T>(v); }
template <> KOKKOS_INLINE_FUNCTION float load<Half>(const Half& v) { return half_to_float(v.bits); }
template <> KOKKOS_INLINE_FUNCTION float load<BFloat16>(const BFloat16& v) { return bf16_to_float(v.bits); }
template <> KOKKOS_INLINE_FUNCTION int32_t load<Bool>(const Bool& v) { return v.bits != 0; }

// A floating value as int64 without UB: NaN to 0, out of range saturated.
template <class C> KOKKOS_INLINE_FUNCTION int64_t float_to_int64(C c) {
  if (!(c == c)) return 0;
  if (c >= C(9223372036854775807.0)) return INT64_MAX;  // 2^63 as C
  if (c < C(-9223372036854775807.0)) return INT64_MIN;
  return int64_t(c);
}

// Converting store: C casts, bool as (x != 0), floats to half rounding to
// nearest even. Floating to integer goes through int64 and wraps, as
// PyTorch's c10::convert does (-1.0 to uint8 is 255): a direct cast of a
// value outside the target's range is undefined behaviour.
template <class T> struct Store {
  template <class C> KOKKOS_INLINE_FUNCTION static T from(C c) {
    if constexpr (std::is_integral<T>::value && std::is_floating_point<C>::value) return T(float_to_int64(c));
    else return T(c);
  }
};
template <> struct Store<Bool> {
  template <class C> KOKKOS_INLINE_FUNCTION static Bool from(C c) { return Bool{uint8_t(c != C(0))}; }
};
template <class C> KOKKOS_INLINE_FUNCTION float narrow_to_float(C c) {
  if constexpr (std::is_same_v<C, double>) return float_round_to_odd(c);  // one rounding, not two
  else return float(c);
}
template <> struct Store<Half> {
  template <class C> KOKKOS_INLINE_FUNCTION static Half from(C c) { return Half{float_to_half(narrow_to_float(c))}; }
};
template <> struct Store<BFloat16> {
  template <class C> KOKKOS_INLINE_FUNCTION static BFloat16 from(C c) {
    return BFloat16{float_to_bf16(narrow_to_float(c))};
  }
};
template <class T, class C> KOKKOS_INLINE_FUNCTION T store(C c) { return Store<T>::from(c); }

// Calls f(T{}) with the storage type of a vnn_dtype; returns false for an
// unknown code.
template <class F>
bool dispatch_dtype(int32_t dtype, F&& f) {
  switch (dtype) {
    case VNN_FLOAT32: f(float{}); return true;
    case VNN_FLOAT64: f(double{}); return true;
    case VNN_INT32: f(int32_t{}); return true;
    case VNN_INT64: f(int64_t{}); return true;
    case VNN_UINT8: f(uint8_t{}); return true;
    case VNN_BOOL: f(Bool{}); return true;
    case VNN_FLOAT16: f(Half{}); return true;
    case VNN_BFLOAT16: f(BFloat16{}); return true;
    case VNN_INT8: f(int8_t{}); return true;
    case VNN_INT16: f(int16_t{}); return true;
    default: return false;
  }
}

// Maps a linear element number to a storage offset for any strided view.
struct StridedIndex {
  int32_t ndim = 0;
  bool contiguous = true;
  int64_t offset = 0;
  int64_t sizes[VNN_MAX_DIMS] = {};
  int64_t strides[VNN_MAX_DIMS] = {};

  StridedIndex() = default;
  explicit StridedIndex(const vnn_tensor_desc& d) : ndim(d.ndim), offset(d.offset) {
    int64_t expected = 1;
    for (int i = ndim - 1; i >= 0; --i) {
      sizes[i] = d.sizes[i];
      strides[i] = d.strides[i];
      if (sizes[i] != 1 && strides[i] != expected) contiguous = false;
      if (!checked::mul(expected, sizes[i], &expected)) contiguous = false;  // run() checked sizes; stay defined
    }
  }
  KOKKOS_INLINE_FUNCTION int64_t operator()(int64_t i) const {
    if (contiguous) return offset + i;
    int64_t off = offset;
    for (int d = ndim - 1; d >= 0; --d) {
      off += (i % sizes[d]) * strides[d];
      i /= sizes[d];
    }
    return off;
  }
};

// Same-shape strided operands walked as rows x runs along the last dim:
// work item w covers up to kRunLength elements of one row, so the 64-bit
// divisions that map a row number to storage offsets happen once per run
// instead of once per element and operand. The core coalesces dims first
// (tensor_impl.cpp), so most broadcasts and permuted copies arrive as 2 or 3
// dims with a long last one.
template <int N>
struct StridedRuns {
  static constexpr int64_t kRunLength = 4096;
  int32_t outer = 0;              // dims before the last
  int64_t inner = 1, chunks = 1, count = 0;
  int64_t sizes[VNN_MAX_DIMS] = {};
  int64_t offset[N] = {}, step[N] = {};  // step: stride along the last dim
  int64_t strides[N][VNN_MAX_DIMS] = {};

  StridedRuns() = default;
  // All descriptors have d[0]'s sizes (the core checked).
  explicit StridedRuns(const vnn_tensor_desc* const* d) {
    const int32_t nd = d[0]->ndim;
    int64_t rows = 1;
    if (nd > 0) inner = d[0]->sizes[nd - 1];
    outer = nd > 0 ? nd - 1 : 0;
    for (int i = 0; i < outer; ++i) sizes[i] = d[0]->sizes[i], rows *= sizes[i];
    for (int k = 0; k < N; ++k) {
      offset[k] = d[k]->offset;
      step[k] = nd > 0 ? d[k]->strides[nd - 1] : 0;
      for (int i = 0; i < outer; ++i) strides[k][i] = d[k]->strides[i];
    }
    chunks = inner <= 0 ? 0 : (inner + kRunLength - 1) / kRunLength;
    count = rows * chunks;
  }
  // Storage offsets of the first element of run w, and its length.
  KOKKOS_INLINE_FUNCTION int64_t start(int64_t w, int64_t* off) const {
    int64_t r = w / chunks;
    const int64_t begin = (w - r * chunks) * kRunLength;
    for (int k = 0; k < N; ++k) off[k] = offset[k] + begin * step[k];
    for (int i = outer - 1; i >= 0; --i) {
      const int64_t q = r / sizes[i], idx = r - q * sizes[i];
      r = q;
      for (int k = 0; k < N; ++k) off[k] += idx * strides[k][i];
    }
    const int64_t left = inner - begin;
    return left < kRunLength ? left : kRunLength;
  }
};

// run() rejected descriptors whose count overflows (common/desc_check.hpp);
// 0 (nothing to do) keeps this defined for any other caller.
inline int64_t numel(const vnn_tensor_desc& d) {
  int64_t n;
  return checked::numel(d.sizes, d.ndim, &n) ? n : 0;
}

template <class T> inline T* typed(const vnn_tensor_desc& d) { return static_cast<T*>(d.data); }

template <class Exec>
using Range = Kokkos::RangePolicy<Exec, Kokkos::IndexType<int64_t>>;

}  // namespace vnn::kernels
