// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// OPTIMIZER_STEP on OpenCL (kernels/optimizer.cl): one fused kernel per
// parameter per step; UNSCALE_CHECK (GradScaler) for a parameter group.
#ifndef VNN_OPENCL_OPS_OPTIMIZER_HPP
#define VNN_OPENCL_OPS_OPTIMIZER_HPP

#include <CL/cl.h>

#include "device.hpp"
#include "vnn/backend_abi.h"

namespace vnn_opencl {

inline bool is_optimizer_kind(int32_t kind) { return kind == VNN_OP_OPTIMIZER_STEP || kind == VNN_OP_UNSCALE_CHECK; }

// Checks the request's structure (counts, dtypes, contiguity), then launches.
vnn_status run_optimizer(Device& d, cl_command_queue q, const vnn_op& op);

}  // namespace vnn_opencl

#endif
