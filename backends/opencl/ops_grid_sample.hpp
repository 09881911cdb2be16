// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// GRID_SAMPLE / GRID_SAMPLE_BACKWARD on OpenCL (kernels/grid_sample.cl):
// float32 and float64 (where the device has fp64 and 64-bit atomics).
#ifndef VNN_OPENCL_OPS_GRID_SAMPLE_HPP
#define VNN_OPENCL_OPS_GRID_SAMPLE_HPP

#include <CL/cl.h>

#include "device.hpp"
#include "vnn/backend_abi.h"

namespace vnn_opencl {

inline bool is_grid_sample_kind(int32_t kind) {
  return kind == VNN_OP_GRID_SAMPLE || kind == VNN_OP_GRID_SAMPLE_BACKWARD;
}

// Decodes the request (common/grid_sample_params.hpp; UNSUPPORTED where it
// does not fit), then launches one item per grid point.
vnn_status run_grid_sample(Device& d, cl_command_queue q, const vnn_op& op);

}  // namespace vnn_opencl

#endif
