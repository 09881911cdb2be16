// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// SCAN on OpenCL (kernels/scan.cl).
#ifndef VNN_OPENCL_OPS_SCAN_HPP
#define VNN_OPENCL_OPS_SCAN_HPP

#include <CL/cl.h>

#include "device.hpp"
#include "vnn/backend_abi.h"

namespace vnn_opencl {

// Checks the request's structure (counts, dtypes, sizes), then launches.
vnn_status run_scan(Device& d, cl_command_queue q, const vnn_op& op);

}  // namespace vnn_opencl

#endif
