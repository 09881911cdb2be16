// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// INDEX_SELECT, GATHER, SCATTER and INDEX_ADD on OpenCL (kernels/indexing.cl).
#ifndef VNN_OPENCL_OPS_INDEXING_HPP
#define VNN_OPENCL_OPS_INDEXING_HPP

#include <CL/cl.h>

#include <string>

#include "device.hpp"
#include "vnn/backend_abi.h"

namespace vnn_opencl {

// True for the four op kinds run_indexing serves.
inline bool is_indexing_kind(int32_t kind) {
  return kind == VNN_OP_INDEX_SELECT || kind == VNN_OP_GATHER || kind == VNN_OP_SCATTER ||
         kind == VNN_OP_INDEX_ADD;
}

// Checks the request's structure (counts, dtypes, ranks), then launches.
vnn_status run_indexing(Device& d, cl_command_queue q, const vnn_op& op);

}  // namespace vnn_opencl

#endif
