// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// OpenCL host code for fused attention (VNN_OP_SDPA, VNN_OP_SDPA_BACKWARD):
// FlashAttention-2 kernels in kernels/attention.cl, tiles chosen per device
// and shape class by the tuner (tuning.cpp's tuned_choice, cached in the
// tuning file). VNN_STATUS_UNSUPPORTED for what they do not take (16-bit
// dtypes, head dims past 512, float64 without cl_khr_fp64): the core then
// runs its math path.
#ifndef VNN_OPENCL_OPS_ATTENTION_HPP
#define VNN_OPENCL_OPS_ATTENTION_HPP

#include <CL/cl.h>

#include <cstdint>
#include <string>

#include "device.hpp"
#include "vnn/backend_abi.h"

namespace vnn_opencl {

// True for the kinds run_attention serves.
inline bool is_attention_kind(int32_t kind) { return kind == VNN_OP_SDPA || kind == VNN_OP_SDPA_BACKWARD; }

// Runs one of those kinds; what names the op for error messages.
// VNN_OPENCL_SDPA=default runs the default tiles (no tuning), =N the tuner's
// candidate N; unset: the tuned choice per shape class.
vnn_status run_attention(Device& d, cl_command_queue q, const vnn_op& op, const std::string& what);

}  // namespace vnn_opencl

#endif
