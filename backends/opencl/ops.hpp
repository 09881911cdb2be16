// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The generic op entry (vnn_backend::run): FILL, COPY, BINARY, UNARY.
#ifndef VNN_OPENCL_OPS_HPP
#define VNN_OPENCL_OPS_HPP

#include <cstdint>

#include "vnn/backend_abi.h"

namespace vnn_opencl {

vnn_status run(int32_t device, const vnn_op* op);

}  // namespace vnn_opencl

#endif
