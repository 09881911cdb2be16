// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Kernel sources embedded at build time (see EmbedKernels.cmake).
#ifndef VNN_OPENCL_EMBEDDED_KERNELS_HPP
#define VNN_OPENCL_EMBEDDED_KERNELS_HPP

namespace vnn_opencl {

// Source text of kernels/<name>.cl, or nullptr when there is no such file.
const char* embedded_kernel_source(const char* name);

}  // namespace vnn_opencl

#endif
