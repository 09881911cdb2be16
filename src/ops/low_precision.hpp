// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// float16 / bfloat16 in ops that accumulate (conv2d, pooling, softmax, the
// norms): float32 accumulation with one rounding of the result, on every
// backend (also OpenCL devices without cl_khr_fp16). Two ways:
//  - upcast_low / round_to: run on float32 copies of the 16-bit operands
//    and round the result once (conv2d, the norms);
//  - native_or_float32: first try the backend's kernel on 16-bit storage
//    (they compute in float32); a backend that answers Unsupported is
//    remembered per device and op kind and gets the float32 copies.
// The casts are ordinary differentiable .to() calls, so autograd flows
// through them and gradients come back in the operands' dtypes.
#pragma once
#include <atomic>

#include "runtime/device_context.hpp"
#include "vnn/error.h"
#include "vnn/tensor.h"

namespace vnn::detail {

inline bool is_low_precision(DType t) { return t == kFloat16 || t == kBFloat16; }

// t as float32 when it is float16 / bfloat16 (an undefined t stays so).
inline Tensor upcast_low(const Tensor& t) {
  return t.defined() && is_low_precision(t.dtype()) ? t.to(kFloat32) : t;
}

// t in dtype `want` (a no-op when it already is, or is undefined).
inline Tensor round_to(const Tensor& t, DType want) { return t.defined() && t.dtype() != want ? t.to(want) : t; }

// native() for float32/float64 and for 16-bit tensors on backends whose
// kernel of this op kind takes them; fallback() (the float32 route) where
// the backend answered Unsupported once. Only Unsupported is caught: it is
// answered before any work is queued or recorded.
template <class Native, class Fallback>
auto native_or_float32(DeviceContext& ctx, DType t, vnn_op_kind kind, Native&& native, Fallback&& fallback)
    -> decltype(native()) {
  if (!is_low_precision(t)) return native();
  std::atomic<int>& known = ctx.native_half_op[kind];  // 0 unknown, 1 native, 2 float32
  if (known.load(std::memory_order_relaxed) != 2) {
    try {
      auto r = native();
      known.store(1, std::memory_order_relaxed);
      return r;
    } catch (const Unsupported&) {
      known.store(2, std::memory_order_relaxed);
    }
  }
  return fallback();
}

}  // namespace vnn::detail
