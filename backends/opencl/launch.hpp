// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Setting a kernel's arguments and enqueueing it, shared by every op file.
// The 1-D kernels (launch) loop over their n items with common.cl's
// VNN_ITEMS: grid-stride on GPUs (grid capped, any work-group size valid),
// one item per element elsewhere (the grid covers n).
#pragma once
#include <CL/cl.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "device.hpp"
#include "program_cache.hpp"
#include "vnn/backend_abi.h"

namespace vnn_opencl {

struct Arg {
  size_t size;
  const void* ptr;
  bool mem = false;  // a cl_mem: always set again (see set_args)
};
template <typename V>
Arg arg(const V& v) {
  return {sizeof v, &v, std::is_same<V, cl_mem>::value};
}

// Sets args in order and enqueues k over n items on q (nothing for n <= 0).
vnn_status launch(const Device& d, Kernel& k, cl_command_queue q, int64_t n, const std::string& what,
                  const Arg* args, size_t count);
inline vnn_status launch(const Device& d, Kernel& k, cl_command_queue q, int64_t n, const std::string& what,
                         std::initializer_list<Arg> args) {
  return launch(d, k, q, n, what, args.begin(), args.size());
}
inline vnn_status launch(const Device& d, Kernel& k, cl_command_queue q, int64_t n, const std::string& what,
                         const std::vector<Arg>& args) {
  return launch(d, k, q, n, what, args.data(), args.size());
}

// A work-group size of at most `most` items, halved (down to 1) while
// `items` would make fewer than four groups per compute unit: on a CPU
// device a group runs on one core.
size_t local_filling(const Device& d, size_t items, size_t most);

// The largest power of two that divides n and is at most most (1 for n = 0).
size_t pow2_divisor_at_most(uint64_t n, size_t most);

// The work-group shape for a grid whose kernel takes any: the driver's
// choice (nullptr) on GPUs; on CPU drivers, which compile a kernel once per
// group shape (PoCL: 0.1-0.3 s each; its own choice follows the grid, so a
// generation step's growing sequence compiled one per token), sides that
// are powers of two dividing the grid, at most `most` items, x first.
// Returns local or nullptr, for enqueue_nd.
const size_t* driver_local(const Device& d, cl_uint dims, const size_t* global, size_t most, size_t* local);

// Sets args in order and enqueues k on an explicit dims-D grid (kernels
// with a fixed work-group shape: reductions, GEMM).
vnn_status enqueue_nd(Kernel& k, cl_command_queue q, cl_uint dims, const size_t* global, const size_t* local,
                      const std::string& what, const Arg* args, size_t count);
inline vnn_status enqueue_nd(Kernel& k, cl_command_queue q, cl_uint dims, const size_t* global, const size_t* local,
                             const std::string& what, std::initializer_list<Arg> args) {
  return enqueue_nd(k, q, dims, global, local, what, args.begin(), args.size());
}

}  // namespace vnn_opencl
