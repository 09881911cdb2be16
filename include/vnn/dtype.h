// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Element types. float16 and bfloat16 are storage types: ops compute them
// in float32. The promotion rules are in docs/dtypes.md.
#pragma once
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>

namespace vnn {

/// The element types; the values equal vnn_dtype of the plugin ABI.
enum class DType : int32_t {  // values equal vnn_dtype of the plugin ABI
  float32 = 0,
  float64 = 1,
  int32 = 2,
  int64 = 3,
  uint8 = 4,
  boolean = 5,
  float16 = 6,
  bfloat16 = 7,
  int8 = 8,
  int16 = 9,
};

/// 32-bit IEEE float (the default dtype).
inline constexpr DType kFloat32 = DType::float32;
/// 64-bit IEEE float.
inline constexpr DType kFloat64 = DType::float64;
/// 32-bit signed integer.
inline constexpr DType kInt32 = DType::int32;
/// 64-bit signed integer (indices, integer arange, sums of integers).
inline constexpr DType kInt64 = DType::int64;
/// 8-bit unsigned integer (images).
inline constexpr DType kUInt8 = DType::uint8;
/// Bool (comparison results, masks), one byte per element.
inline constexpr DType kBool = DType::boolean;
/// IEEE half precision, a storage type (ops compute in float32).
inline constexpr DType kFloat16 = DType::float16;
/// bfloat16, a storage type (ops compute in float32).
inline constexpr DType kBFloat16 = DType::bfloat16;
/// 8-bit signed integer.
inline constexpr DType kInt8 = DType::int8;
/// 16-bit signed integer.
inline constexpr DType kInt16 = DType::int16;

// LibTorch's short names (torch::kLong ...), the same values.
/// float32 (torch::kFloat).
inline constexpr DType kFloat = kFloat32;
/// float64 (torch::kDouble).
inline constexpr DType kDouble = kFloat64;
/// float16 (torch::kHalf).
inline constexpr DType kHalf = kFloat16;
/// int32 (torch::kInt).
inline constexpr DType kInt = kInt32;
/// int64 (torch::kLong).
inline constexpr DType kLong = kInt64;
/// uint8 (torch::kByte).
inline constexpr DType kByte = kUInt8;
/// int8 (torch::kChar).
inline constexpr DType kChar = kInt8;
/// int16 (torch::kShort).
inline constexpr DType kShort = kInt16;

/// Bytes per element of `t` (bool: 1).
size_t itemsize(DType t);
/// The dtype's name: "float32", "int64", "bool", ...
const char* name(DType t);              // "float32", ...
/// Whether `t` is float16, bfloat16, float32 or float64.
bool is_floating(DType t);
/// Whether `t` is an integer type (int8, int16, int32, int64, uint8; bool excluded).
bool is_integral(DType t);              // bool excluded
/// The dtype of a binary op's result on `a` and `b` (NumPy/PyTorch rules, docs/dtypes.md).
DType promote_types(DType a, DType b);  // NumPy/PyTorch-style result type
/// The dtype named `name` ("float32", "int64", ...); ValueError listing the names otherwise.
DType dtype_from_name(const std::string& name);  // throws ValueError
/// Prints the dtype's name ("float32").
std::ostream& operator<<(std::ostream& os, DType t);  // its name: "float32"

/// The DType of a C++ element type: `dtype_of<float>::value` is kFloat32.
template <class T> struct dtype_of;
/// float is kFloat32.
template <> struct dtype_of<float> { static constexpr DType value = kFloat32; };
/// double is kFloat64.
template <> struct dtype_of<double> { static constexpr DType value = kFloat64; };
/// int32_t is kInt32.
template <> struct dtype_of<int32_t> { static constexpr DType value = kInt32; };
/// int64_t is kInt64.
template <> struct dtype_of<int64_t> { static constexpr DType value = kInt64; };
/// uint8_t is kUInt8.
template <> struct dtype_of<uint8_t> { static constexpr DType value = kUInt8; };
/// int8_t is kInt8.
template <> struct dtype_of<int8_t> { static constexpr DType value = kInt8; };
/// int16_t is kInt16.
template <> struct dtype_of<int16_t> { static constexpr DType value = kInt16; };
/// bool is kBool.
template <> struct dtype_of<bool> { static constexpr DType value = kBool; };
/// \var dtype_of<float>::value
/// The DType of the element type.
/// \var dtype_of<double>::value
/// The DType of the element type.
/// \var dtype_of<int32_t>::value
/// The DType of the element type.
/// \var dtype_of<int64_t>::value
/// The DType of the element type.
/// \var dtype_of<uint8_t>::value
/// The DType of the element type.
/// \var dtype_of<int8_t>::value
/// The DType of the element type.
/// \var dtype_of<int16_t>::value
/// The DType of the element type.
/// \var dtype_of<bool>::value
/// The DType of the element type.

}  // namespace vnn
