// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// dispatch_types<Set>(op, dtype, f): calls f(T{}) with the storage type T of
// the vnn_dtype `dtype` when T is in the named type set Set, as PyTorch's
// AT_DISPATCH_*_TYPES macros do. A dtype outside the set throws
// UnsupportedDtype naming the op, the dtype and the set; the plugin turns it
// into VNN_STATUS_UNSUPPORTED (the core's vnn::Unsupported) with that text.
// try_dispatch_types<Set>(dtype, f) returns false instead, for paths that
// fall back to another kernel (vendor BLAS before the portable GEMM).
// A kernel that declines for another reason (shapes, parameters) says why
// with `return refuse("...")`: the plugin puts that text in its
// VNN_STATUS_UNSUPPORTED message (plugin.hpp run_on).
// dispatch_fn<Count>(fn, f) does the same for an op's function code.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "kokkos/kernels/types.hpp"
#include "vnn/detail/message.h"

namespace vnn::kernels {

template <class... Ts>
struct TypeSet {};

// float32 / float64: kernels whose 16-bit operands the core converts.
using FloatingTypes = TypeSet<float, double>;
// The floating types with float16 / bfloat16 storage computed in float32.
using FloatingAndHalfTypes = TypeSet<float, double, Half, BFloat16>;
// The types with arithmetic of their own (GEMM, sums, index_add).
using ArithmeticTypes = TypeSet<float, double, int32_t, int64_t>;
// Every storage type (copies, gathers, fills).
using AllTypes = TypeSet<float, double, int32_t, int64_t, uint8_t, Bool, Half, BFloat16, int8_t, int16_t>;

template <class T> struct DtypeOf;
template <> struct DtypeOf<float> { static constexpr int32_t code = VNN_FLOAT32; };
template <> struct DtypeOf<double> { static constexpr int32_t code = VNN_FLOAT64; };
template <> struct DtypeOf<int32_t> { static constexpr int32_t code = VNN_INT32; };
template <> struct DtypeOf<int64_t> { static constexpr int32_t code = VNN_INT64; };
template <> struct DtypeOf<uint8_t> { static constexpr int32_t code = VNN_UINT8; };
template <> struct DtypeOf<Bool> { static constexpr int32_t code = VNN_BOOL; };
template <> struct DtypeOf<Half> { static constexpr int32_t code = VNN_FLOAT16; };
template <> struct DtypeOf<BFloat16> { static constexpr int32_t code = VNN_BFLOAT16; };
template <> struct DtypeOf<int8_t> { static constexpr int32_t code = VNN_INT8; };
template <> struct DtypeOf<int16_t> { static constexpr int32_t code = VNN_INT16; };

// A kernel asked for a dtype outside its set; the plugin names its device
// and answers VNN_STATUS_UNSUPPORTED with "<op>: dtype int8 is not
// supported on openmp:0 (float32, float64 are)".
struct UnsupportedDtype : std::runtime_error {
  UnsupportedDtype(const char* op_, int32_t dtype_, std::string types_)
      : std::runtime_error(vnn::detail::str_cat(op_, ": dtype ", vnn::detail::abi_dtype(dtype_), " is not supported (",
                                                types_, " are)")),
        op(op_),
        dtype(dtype_),
        types(std::move(types_)) {}
  const char* op;     // the kernel's name ("matmul")
  int32_t dtype;      // the vnn_dtype asked for
  std::string types;  // the set it takes: "float32, float64"
};

// Why the latest kernel on this thread returned false ("" when it did not say).
inline std::string& refusal() {
  thread_local std::string why;
  return why;
}
// Records why a kernel declines and returns false: `return refuse("a ", a.ndim, "-D operand");`.
template <class... Parts>
bool refuse(const Parts&... parts) {
  refusal() = vnn::detail::str_cat(parts...);
  return false;
}

template <class... Ts, class F>
bool try_dispatch_types(TypeSet<Ts...>, int32_t dtype, F&& f) {
  bool hit = false;
  // Left to right, stopping at the first match.
  (void)((DtypeOf<Ts>::code == dtype ? (f(Ts{}), hit = true) : false) || ...);
  return hit;
}

template <class Set, class F>
bool try_dispatch_types(int32_t dtype, F&& f) {
  return try_dispatch_types(Set{}, dtype, f);
}

template <class... Ts>
std::string type_set_names(TypeSet<Ts...>) {
  std::string s;
  ((s += vnn::detail::str_cat(s.empty() ? "" : ", ", vnn::detail::abi_dtype(DtypeOf<Ts>::code))), ...);
  return s;
}

template <class Set, class F>
void dispatch_types(const char* op, int32_t dtype, F&& f) {
  if (!try_dispatch_types(Set{}, dtype, f)) throw UnsupportedDtype(op, dtype, type_set_names(Set{}));
}

// dispatch_fn<Count>(fn, f): f(std::integral_constant<int, Fn>{}) for the
// run-time function code fn in [0, Count), Count an ABI count such as
// VNN_UNARY_COUNT_; false (f not called) outside it. The cases are made
// from the count, not listed, so an enumerator added to the ABI is
// dispatched (and needs its functor to compile) with no list to update.
template <class F, int... Fns>
bool dispatch_fn(int64_t fn, F&& f, std::integer_sequence<int, Fns...>) {
  bool ok = false;
  (void)((fn == Fns ? (ok = f(std::integral_constant<int, Fns>{}), true) : false) || ...);
  return ok;
}

template <int Count, class F>
bool dispatch_fn(int64_t fn, F&& f) {
  return fn >= 0 && fn < Count && dispatch_fn(fn, f, std::make_integer_sequence<int, Count>{});
}

}  // namespace vnn::kernels
