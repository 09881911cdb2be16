// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The one way vnn builds an error message: str_cat(args...) streams each
// argument, and VNN_THROW / VNN_CHECK wrap it in a typed exception. Header
// only, so the plugins (which do not link libvnn) build their failure texts
// with it too. Core types (Shape, DType, Device) print through their own
// operator<< in libvnn; what a plugin holds (ABI dtype codes, descriptor
// sizes, int64 lists) prints through the small wrappers below, with the
// same spelling: "float32", "[2, 3]".
#pragma once
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "vnn/backend_abi.h"
#include "vnn/op_names.h"

namespace vnn::detail {

/// An ABI dtype code (vnn_dtype) that prints as its name: "float32", or "dtype 42" for a code this ABI lacks.
struct AbiDType {
  int32_t code;  ///< The vnn_dtype value.
};
/// Wraps a vnn_dtype code for str_cat: str_cat(abi_dtype(VNN_INT8)) == "int8".
inline AbiDType abi_dtype(int32_t code) { return AbiDType{code}; }

/// An ABI op kind (vnn_op_kind) that prints as its name: "matmul", or "op kind 99" for a code this ABI lacks.
struct AbiOpKind {
  int32_t code;  ///< The vnn_op_kind value.
};
/// Wraps a vnn_op_kind code for str_cat: str_cat(abi_op_kind(VNN_OP_MATMUL)) == "matmul".
inline AbiOpKind abi_op_kind(int32_t code) { return AbiOpKind{code}; }

/// A list of int64 that prints as "[2, 3]" (the spelling of Shape::str()).
struct IntList {
  const int64_t* data;  ///< First element (may be null when n is 0).
  size_t n;             ///< Number of elements.
};
/// Wraps n int64 values for str_cat.
inline IntList int_list(const int64_t* data, size_t n) { return IntList{data, n}; }
/// Wraps a vector of int64 for str_cat.
inline IntList int_list(const std::vector<int64_t>& v) { return IntList{v.data(), v.size()}; }
/// The sizes of a tensor descriptor, "[2, 3]" ("[]" for a scalar; ndim is clamped to VNN_MAX_DIMS).
inline IntList desc_sizes(const vnn_tensor_desc& d) {
  int32_t n = d.ndim < 0 ? 0 : (d.ndim > VNN_MAX_DIMS ? VNN_MAX_DIMS : d.ndim);
  return IntList{d.sizes, static_cast<size_t>(n)};
}
/// The strides of a tensor descriptor, "[3, 1]" (ndim clamped as desc_sizes does).
inline IntList desc_strides(const vnn_tensor_desc& d) {
  int32_t n = d.ndim < 0 ? 0 : (d.ndim > VNN_MAX_DIMS ? VNN_MAX_DIMS : d.ndim);
  return IntList{d.strides, static_cast<size_t>(n)};
}

/// Prints a dtype code by name.
inline std::ostream& operator<<(std::ostream& os, AbiDType t) {
  const char* n = VNN_NAME(vnn_dtype_names, t.code);
  if (n) return os << n;
  return os << "dtype " << t.code;
}
/// Prints an op kind by name.
inline std::ostream& operator<<(std::ostream& os, AbiOpKind k) {
  const char* n = VNN_OP_KIND_NAME(k.code);
  if (n) return os << n;
  return os << "op kind " << k.code;
}
/// Prints "[a, b, ...]".
inline std::ostream& operator<<(std::ostream& os, IntList l) {
  os << '[';
  for (size_t i = 0; i < l.n; ++i) os << (i ? ", " : "") << l.data[i];
  return os << ']';
}

namespace message_impl {
// int8_t / uint8_t are character types to an ostream; a message means the number.
template <class T>
void put(std::ostream& os, const T& v) {
  if constexpr (std::is_same_v<T, signed char> || std::is_same_v<T, unsigned char>) {
    os << static_cast<int>(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    os << (v ? "true" : "false");
  } else if constexpr (std::is_pointer_v<T> && std::is_same_v<std::remove_cv_t<std::remove_pointer_t<T>>, char>) {
    os << (v ? v : "(null)");  // streaming a null char* is undefined
  } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
    os << int_list(v);
  } else {
    os << v;
  }
}
}  // namespace message_impl

/// Concatenates the arguments as an ostream prints them (numbers in full, Shape as "[2, 3]",
/// DType as "float32", Device as "openmp:0", int8/uint8 as numbers, bool as true/false).
template <class... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream os;
  (message_impl::put(os, args), ...);
  return os.str();
}
/// One string argument needs no stream.
inline std::string str_cat(const std::string& s) { return s; }
/// One literal needs no stream.
inline std::string str_cat(const char* s) { return s ? s : "(null)"; }

}  // namespace vnn::detail

/// Branch hint for failure paths.
#if defined(__GNUC__) || defined(__clang__)
#define VNN_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define VNN_UNLIKELY(x) (x)
#endif

/// Throws ErrorType(str_cat(...)): VNN_THROW(ShapeError, "matmul: ", a.sizes(), " vs ", b.sizes()).
/// An expression, like `throw`, so it also fits `cond ? x : VNN_THROW(...)` and functions that must return.
#define VNN_THROW(ErrorType, ...) throw ErrorType(::vnn::detail::str_cat(__VA_ARGS__))

/// Throws ErrorType(str_cat(...)) unless cond holds; cond is evaluated once, the message only built on failure.
#define VNN_CHECK(ErrorType, cond, ...)                                            \
  do {                                                                             \
    if (VNN_UNLIKELY(!static_cast<bool>(cond))) VNN_THROW(ErrorType, __VA_ARGS__); \
  } while (0)
