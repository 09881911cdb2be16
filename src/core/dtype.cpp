// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "vnn/detail/message.h"
#include "vnn/dtype.h"

#include <ostream>

#include "vnn/error.h"

namespace vnn {

size_t itemsize(DType t) {
  switch (t) {
    case kFloat32: case kInt32: return 4;
    case kFloat64: case kInt64: return 8;
    case kUInt8: case kBool: case kInt8: return 1;
    case kFloat16: case kBFloat16: case kInt16: return 2;
  }
  VNN_THROW(DTypeError, "itemsize: unknown dtype code ", int(t));
}

std::ostream& operator<<(std::ostream& os, DType t) { return os << name(t); }

const char* name(DType t) {
  switch (t) {
    case kFloat32: return "float32";
    case kFloat64: return "float64";
    case kInt32: return "int32";
    case kInt64: return "int64";
    case kUInt8: return "uint8";
    case kBool: return "bool";
    case kFloat16: return "float16";
    case kBFloat16: return "bfloat16";
    case kInt8: return "int8";
    case kInt16: return "int16";
  }
  return "unknown";
}

bool is_floating(DType t) {
  return t == kFloat32 || t == kFloat64 || t == kFloat16 || t == kBFloat16;
}
bool is_integral(DType t) {
  return t == kInt8 || t == kInt16 || t == kInt32 || t == kInt64 || t == kUInt8;
}

namespace {
// Category first (bool < integer < floating), then width within it.
int category(DType t) { return t == kBool ? 0 : is_integral(t) ? 1 : 2; }
int rank_in_category(DType t) {
  switch (t) {
    case kUInt8: case kInt8: return 0;
    case kInt16: return 1;
    case kInt32: return 2;
    case kInt64: return 3;
    case kFloat16: case kBFloat16: return 0;
    case kFloat32: return 1;
    case kFloat64: return 2;
    default: return 0;
  }
}
}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  int ca = category(a), cb = category(b);
  if (ca != cb) return ca > cb ? a : b;
  // float16 with bfloat16: neither holds the other, so float32 (as PyTorch).
  if ((a == kFloat16 && b == kBFloat16) || (a == kBFloat16 && b == kFloat16)) return kFloat32;
  // uint8 with int8: neither holds the other, so int16 (as PyTorch).
  if ((a == kUInt8 && b == kInt8) || (a == kInt8 && b == kUInt8)) return kInt16;
  return rank_in_category(a) >= rank_in_category(b) ? a : b;
}

DType dtype_from_name(const std::string& n) {
  for (DType t : {kFloat32, kFloat64, kInt32, kInt64, kUInt8, kBool, kFloat16, kBFloat16, kInt8, kInt16})
    if (n == name(t)) return t;
  if (n == "float") return kFloat32;
  if (n == "double") return kFloat64;
  if (n == "half") return kFloat16;
  if (n == "int") return kInt32;
  if (n == "long") return kInt64;
  if (n == "short") return kInt16;
  if (n == "char") return kInt8;
  VNN_THROW(ValueError, "dtype_from_name: unknown dtype '", n,
            "'; expected one of float32, float64, int32, int64, uint8, bool, float16, bfloat16, int8, int16");
}

}  // namespace vnn
