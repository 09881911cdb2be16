// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// SORT and SEARCHSORTED on OpenCL (kernels/sort.cl).
#ifndef VNN_OPENCL_OPS_SORT_HPP
#define VNN_OPENCL_OPS_SORT_HPP

#include <CL/cl.h>

#include "device.hpp"
#include "vnn/backend_abi.h"

namespace vnn_opencl {

// True for the two op kinds run_sort serves.
inline bool is_sort_kind(int32_t kind) { return kind == VNN_OP_SORT || kind == VNN_OP_SEARCHSORTED; }

// Checks the request (common/op_params.hpp decode_sort / decode_searchsorted), then launches.
vnn_status run_sort(Device& d, cl_command_queue q, const vnn_op& op);

}  // namespace vnn_opencl

#endif
