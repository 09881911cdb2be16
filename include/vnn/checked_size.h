// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Overflow-checked size arithmetic: the one place where element counts,
// strides, extents and byte sizes are multiplied. Header-only and free of
// exceptions, so the core (which turns a `false` into a ValueError naming
// the op and shape) and the plugins (which answer an ABI error code) share
// it. Every function returns false instead of wrapping; *out is then left
// unspecified.
#pragma once
#include <cstdint>

namespace vnn {
namespace checked {

/// a * b into *out; false on overflow.
inline bool mul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }
/// a + b into *out; false on overflow.
inline bool add(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }

/// Product of n sizes; false when a size is negative or the product overflows.
inline bool numel(const int64_t* sizes, int n, int64_t* out) {
  int64_t p = 1;
  bool zero = false;
  for (int i = 0; i < n; ++i) {
    if (sizes[i] < 0) return false;
    if (sizes[i] == 0) zero = true;
  }
  // A zero anywhere makes the product 0 whatever the other sizes are, as in
  // PyTorch ([0, 2^62, 2^62] is a valid empty shape).
  if (zero) {
    *out = 0;
    return true;
  }
  for (int i = 0; i < n; ++i)
    if (!mul(p, sizes[i], &p)) return false;
  *out = p;
  return true;
}

/// Bytes for n elements of elem_size bytes each.
inline bool bytes(int64_t n, int64_t elem_size, int64_t* out) {
  if (n < 0 || elem_size < 0) return false;
  return mul(n, elem_size, out);
}

/// Contiguous (row-major) strides for `sizes`; false on overflow.
inline bool contiguous_strides(const int64_t* sizes, int n, int64_t* strides) {
  int64_t s = 1;
  for (int i = n - 1; i >= 0; --i) {
    strides[i] = s;
    if (sizes[i] < 0) return false;
    if (!mul(s, sizes[i] > 0 ? sizes[i] : 1, &s)) return false;
  }
  return true;
}

/// The element range a strided view touches, relative to its storage:
/// [*lo, *hi] inclusive, offset included. An empty view (a zero size) touches
/// nothing: *lo = offset, *hi = offset - 1. False on negative sizes or
/// overflow. A view fits storage of `capacity` elements when
/// lo >= 0 && hi < capacity.
inline bool extent(const int64_t* sizes, const int64_t* strides, int n, int64_t offset, int64_t* lo,
                   int64_t* hi) {
  int64_t low = offset, high = offset;
  for (int i = 0; i < n; ++i) {
    if (sizes[i] < 0) return false;
    if (sizes[i] == 0) {
      *lo = offset;
      *hi = offset - 1;
      return true;
    }
  }
  for (int i = 0; i < n; ++i) {
    int64_t span;
    if (!mul(sizes[i] - 1, strides[i], &span)) return false;
    if (!add(span >= 0 ? high : low, span, span >= 0 ? &high : &low)) return false;
  }
  *lo = low;
  *hi = high;
  return true;
}

/// True when a strided view [sizes, strides, offset] of elements stays inside
/// storage of `capacity` elements.
inline bool fits(const int64_t* sizes, const int64_t* strides, int n, int64_t offset, int64_t capacity) {
  int64_t lo, hi;
  if (!extent(sizes, strides, n, offset, &lo, &hi)) return false;
  if (hi < lo) return offset >= 0 && offset <= capacity;  // empty view
  return lo >= 0 && hi < capacity;
}

}  // namespace checked
}  // namespace vnn
