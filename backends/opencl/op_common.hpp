// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Host-side helpers every OpenCL op file shares: merged op layouts, cl_mem
// handles, element counts, descriptor checks and scalar kernel arguments.
// One copy here instead of one per ops*.cpp.
#ifndef VNN_OPENCL_OP_COMMON_HPP
#define VNN_OPENCL_OP_COMMON_HPP

#include <CL/cl.h>

#include <cstdint>
#include <initializer_list>
#include <string>

#include "device.hpp"
#include "launch.hpp"
#include "vnn/backend_abi.h"

namespace vnn_opencl {

// The op's shape with dimensions merged where every tensor walks them
// contiguously, innermost first (see common.cl): contiguous operands become
// one dimension and take the kernels' division-free path.
struct Layout {
  int64_t n = 1;  // element count
  cl_int ndim = 0;
  cl_long8 sizes{};
  cl_long8 strides[4]{};  // per tensor, in the order given to make_layout
};

// The layout of `shape` walked by `ts` (at most 4 tensors of its sizes).
Layout make_layout(const vnn_tensor_desc& shape, std::initializer_list<const vnn_tensor_desc*> ts);
// Whether tensor t of l is one dense run (a plain buffer copy or fill).
inline bool contiguous(const Layout& l, int t) { return l.ndim == 1 && (l.strides[t].s[0] == 1 || l.n == 1); }

// The buffer of a descriptor (the ABI's handle is a cl_mem).
inline cl_mem mem(const vnn_tensor_desc& t) { return static_cast<cl_mem>(t.data); }
// Product of t's sizes (run() checked it fits int64).
int64_t numel(const vnn_tensor_desc& t);
// Row-major contiguous (size-1 dims may have any stride).
bool dense(const vnn_tensor_desc& t);

// The device's preferred float vector width (halved for 64-bit dtypes), a
// power of two up to 16: the vector kernels' lane count.
int preferred_vector_width(const Device& d, int32_t dtype);
// ndim in range, a buffer, a non-negative offset and a known dtype.
bool valid_desc(const vnn_tensor_desc& t);
// valid_desc(t) with rank ndim and dtype dtype.
bool desc_ok(const vnn_tensor_desc& t, int ndim, int32_t dtype);
// The first 4 strides / sizes of a 4-D (or smaller) descriptor, as a kernel argument.
cl_long4 strides4(const vnn_tensor_desc& t);
cl_long4 sizes4(const vnn_tensor_desc& t);
// "-DIN_T=float -DIN_DT=0": a tensor's storage type and dtype code for a kernel.
std::string storage_defines(const char* prefix, int32_t dtype);

// Structural checks of one operand (descriptor, dtype, float64 support);
// VNN_STATUS_OK or the failure, with `what` naming the op.
vnn_status check_operand(const Device& d, const vnn_tensor_desc& t, const std::string& what);

// "opencl:0: binary": the start of every op's error context, built without
// a stream (it is made for every op, failing or not: an ostringstream
// was ~15% of a 64-float add's host time).
std::string op_label(const Device& d, int32_t kind);

// Tensor t's innermost stride in l as the strided kernels' OX / AX / BX
// class (common.cl VNN_ND_OFFSET): 1, 0, or -1 for any other.
int x_class(const Layout& l, int t);
// The strided kernels' 3-D grid (common.cl VNN_ND_ITEM) over a layout:
// x its innermost merged dim, y and z its two largest others, every
// further dim walked by the host, one launch per index. Work-groups tile
// the sizes exactly where divisors allow (check false: no bounds test).
struct NdPlan {
  size_t global[3] = {1, 1, 1}, local[3] = {1, 1, 1};
  bool check = false;
  cl_long4 sizes{};       // the grid dims' sizes
  cl_long4 strides[4]{};  // per tensor, along the grid dims
  int outer = 0;          // dims walked by the host
  int64_t outer_sizes[8]{}, outer_strides[4][8]{};
};
// False where the plan would pass the device's limits or take more than
// 256 launches (the caller takes its 1-D kernel).
bool plan_nd(const Device& d, const Layout& l, int tensors, NdPlan* p);
// Enqueues one launch per outer index: offs[t] is tensor t's base offset
// plus that index's part (enqueue is called with it).
template <typename F>
vnn_status each_nd_launch(const NdPlan& p, const cl_long* base, int tensors, F&& enqueue) {
  int64_t idx[8] = {};
  cl_long offs[4];
  for (;;) {
    for (int t = 0; t < tensors; ++t) {
      offs[t] = base[t];
      for (int k = 0; k < p.outer; ++k) offs[t] += idx[k] * p.outer_strides[t][k];
    }
    if (vnn_status st = enqueue(offs)) return st;
    int k = 0;
    while (k < p.outer && ++idx[k] == p.outer_sizes[k]) idx[k++] = 0;
    if (k == p.outer) return VNN_STATUS_OK;
  }
}

// Enqueues kernels/copy.cl's vnn_copy of in into out (same sizes, any
// strides and dtypes) over l = make_layout(out, {&out, &in}).
vnn_status copy_kernel(Device& d, cl_command_queue q, const vnn_tensor_desc& out, const vnn_tensor_desc& in,
                       const Layout& l, const std::string& what);

// A double scalar in each kernel compute type (see elementwise.cl); as()
// picks the one for a tensor's dtype. Integers saturate, NaN becomes 0.
struct Scalar {
  cl_float f;
  cl_double d;
  cl_int i;
  cl_long l;
  explicit Scalar(double v);
  Arg as(int32_t dtype) const;
};

}  // namespace vnn_opencl

#endif
