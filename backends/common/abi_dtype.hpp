// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Bytes per element of a vnn_dtype, for the plugins' shared pieces (the
// descriptor checks and the MATMUL -> BLAS plan). 0 for a code this ABI
// version lacks.
#pragma once
#include <cstdint>

#include "vnn/backend_abi.h"

namespace vnn::kernels {

inline int64_t dtype_bytes(int32_t dtype) {
  switch (dtype) {
    case VNN_FLOAT64:
    case VNN_INT64: return 8;
    case VNN_FLOAT32:
    case VNN_INT32: return 4;
    case VNN_FLOAT16:
    case VNN_BFLOAT16: return 2;
    case VNN_UINT8:
    case VNN_BOOL: return 1;
    default: return 0;
  }
}

}  // namespace vnn::kernels
