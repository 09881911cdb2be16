// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// OpenCL host code for conv2d's whole-pass kinds (CONV2D,
// CONV2D_BACKWARD_DATA, CONV2D_BACKWARD_WEIGHT): direct kernels
// (kernels/conv.cl, CONV_DIRECT) where the tuner measured them faster than
// im2col + GEMM for the shape; VNN_STATUS_UNSUPPORTED otherwise, and the
// core runs its IM2COL + MATMUL path.
#ifndef VNN_OPENCL_OPS_CONV_DIRECT_HPP
#define VNN_OPENCL_OPS_CONV_DIRECT_HPP

#include <CL/cl.h>

#include <cstdint>
#include <string>

#include "device.hpp"
#include "vnn/backend_abi.h"

namespace vnn_opencl {

// True for the kinds run_conv_whole serves.
inline bool is_conv_whole_kind(int32_t kind) {
  return kind >= VNN_OP_CONV2D && kind <= VNN_OP_CONV2D_BACKWARD_WEIGHT;
}

// Runs one of those kinds; what names the op for error messages.
// VNN_OPENCL_CONV=gemm forces the core's im2col + GEMM path, =direct the
// direct kernel with its widest channel block, =directN the block of at
// most N channels; unset: the tuned choice per shape.
vnn_status run_conv_whole(Device& d, cl_command_queue q, const vnn_op& op, const std::string& what);

// "direct" when the latest run_conv_whole on this thread ran a direct
// kernel (the profiler's "conv2d[direct]"), else nullptr.
const char* conv_last_path();

}  // namespace vnn_opencl

#endif
