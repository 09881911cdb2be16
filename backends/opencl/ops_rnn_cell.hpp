// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RNN_CELL / RNN_CELL_BACKWARD on OpenCL (kernels/rnn_cell.cl): one fused
// recurrent step per launch, float32 and float64 (where the device has fp64).
#ifndef VNN_OPENCL_OPS_RNN_CELL_HPP
#define VNN_OPENCL_OPS_RNN_CELL_HPP

#include <CL/cl.h>

#include "device.hpp"
#include "vnn/backend_abi.h"

namespace vnn_opencl {

inline bool is_rnn_cell_kind(int32_t kind) { return kind == VNN_OP_RNN_CELL || kind == VNN_OP_RNN_CELL_BACKWARD; }

// Decodes the request (common/rnn_cell_params.hpp; UNSUPPORTED where it
// does not fit), then launches one item per element of [B, H].
vnn_status run_rnn_cell(Device& d, cl_command_queue q, const vnn_op& op);

}  // namespace vnn_opencl

#endif
