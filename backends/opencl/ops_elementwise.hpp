// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// BINARY, UNARY and WHERE on the OpenCL backend (kernels/elementwise.cl,
// kernels/where.cl).
#ifndef VNN_OPENCL_OPS_ELEMENTWISE_HPP
#define VNN_OPENCL_OPS_ELEMENTWISE_HPP

#include <CL/cl.h>

#include "device.hpp"
#include "vnn/backend_abi.h"

namespace vnn_opencl {

inline bool is_elementwise_kind(int32_t kind) {
  return kind == VNN_OP_BINARY || kind == VNN_OP_UNARY || kind == VNN_OP_WHERE;
}

// Checks the request's structure (counts, descriptors, function codes,
// dtypes) and enqueues it on q.
vnn_status run_elementwise_op(Device& d, cl_command_queue q, const vnn_op& op);

}  // namespace vnn_opencl

#endif
