// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Scratch buffers an op uses within one call (padded planes, a transposed
// gradient, split-K and reduction partials, a packed GEMM operand), kept
// per command queue and handed to later ops on the same queue instead of a
// clCreateBuffer per call. Reuse is safe because a queue runs its commands
// in order: a later op's kernels, which may overwrite the buffer, start
// after those of the op that gave it back. On PoCL a new buffer is new
// pages, and the kernel zeroing them at first touch took 38% of the CNN
// training step (perf: clear_page_erms under the pad and transpose kernels).
#ifndef VNN_OPENCL_SCRATCH_HPP
#define VNN_OPENCL_SCRATCH_HPP

#include <CL/cl.h>

#include <cstddef>
#include <string>

#include "device.hpp"
#include "vnn/backend_abi.h"

namespace vnn_opencl {

class Scratch {
 public:
  Scratch() = default;
  ~Scratch() { give_back(); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  // At least `bytes` (one byte for 0) for ops on q; what names the op in the
  // error when no buffer could be made.
  static vnn_status make(const Device& d, cl_command_queue q, size_t bytes, const std::string& what, Scratch* out);

  cl_mem mem() const { return mem_; }
  // Returns the buffer to q's pool now (the destructor does it otherwise).
  void give_back();

 private:
  cl_command_queue queue_ = nullptr;
  cl_context context_ = nullptr;
  cl_mem mem_ = nullptr;
  size_t bytes_ = 0;
};

// Releases the idle scratch of q (queue_destroy, before q is released).
void release_scratch(cl_command_queue q);

}  // namespace vnn_opencl

#endif
