// Element types. float16 and bfloat16 are storage types: ops compute them
// in float32. The promotion rules are in docs/dtypes.md.
#pragma once
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>

namespace vnn {

enum class DType : int32_t {  // values equal vnn_dtype of the plugin ABI
  float32 = 0,
  float64 = 1,
  int32 = 2,
  int64 = 3,
  uint8 = 4,
  boolean = 5,
  float16 = 6,
  bfloat16 = 7,
};

inline constexpr DType kFloat32 = DType::float32;
inline constexpr DType kFloat64 = DType::float64;
inline constexpr DType kInt32 = DType::int32;
inline constexpr DType kInt64 = DType::int64;
inline constexpr DType kUInt8 = DType::uint8;
inline constexpr DType kBool = DType::boolean;
inline constexpr DType kFloat16 = DType::float16;
inline constexpr DType kBFloat16 = DType::bfloat16;

size_t itemsize(DType t);
const char* name(DType t);              // "float32", ...
bool is_floating(DType t);
bool is_integral(DType t);              // bool excluded
DType promote_types(DType a, DType b);  // NumPy/PyTorch-style result type
DType dtype_from_name(const std::string& name);  // throws ValueError
std::ostream& operator<<(std::ostream& os, DType t);  // its name: "float32"

template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = kFloat32; };
template <> struct dtype_of<double> { static constexpr DType value = kFloat64; };
template <> struct dtype_of<int32_t> { static constexpr DType value = kInt32; };
template <> struct dtype_of<int64_t> { static constexpr DType value = kInt64; };
template <> struct dtype_of<uint8_t> { static constexpr DType value = kUInt8; };
template <> struct dtype_of<bool> { static constexpr DType value = kBool; };

}  // namespace vnn
