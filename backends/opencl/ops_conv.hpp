// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// OpenCL host code for the conv2d / pooling op kinds: IM2COL, COL2IM,
// POOL2D, POOL2D_BACKWARD (kernels/conv.cl, kernels/pooling.cl).
#ifndef VNN_OPENCL_OPS_CONV_HPP
#define VNN_OPENCL_OPS_CONV_HPP

#include <CL/cl.h>

#include <cstdint>
#include <string>

#include "device.hpp"
#include "vnn/backend_abi.h"

namespace vnn_opencl {

// Output extent of a conv2d / pooling window along one dimension (0 when
// the window does not fit); the caller checked k, s, d > 0 and p >= 0.
inline int64_t conv_out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  const int64_t span = in + 2 * p - d * (k - 1) - 1;
  return span < 0 ? 0 : span / s + 1;
}

// True for the kinds run_conv_family serves.
inline bool is_conv_family(int32_t kind) { return kind >= VNN_OP_IM2COL && kind <= VNN_OP_POOL2D_BACKWARD; }

// Runs one of those kinds; what names the op for error messages.
vnn_status run_conv_family(Device& d, cl_command_queue q, const vnn_op& op, const std::string& what);

}  // namespace vnn_opencl

#endif
