// OpenCL host code for the conv2d / pooling op kinds: IM2COL, COL2IM,
// POOL2D, POOL2D_BACKWARD (kernels/conv.cl, kernels/pooling.cl).
#ifndef VNN_OPENCL_OPS_CONV_HPP
#define VNN_OPENCL_OPS_CONV_HPP

#include <CL/cl.h>

#include <string>

#include "device.hpp"
#include "vnn/backend_abi.h"

namespace vnn_opencl {

// True for the kinds run_conv_family serves.
inline bool is_conv_family(int32_t kind) { return kind >= VNN_OP_IM2COL && kind <= VNN_OP_POOL2D_BACKWARD; }

// Runs one of those kinds; what names the op for error messages.
vnn_status run_conv_family(Device& d, cl_command_queue q, const vnn_op& op, const std::string& what);

}  // namespace vnn_opencl

#endif
