// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The one decoder of GRID_SAMPLE / GRID_SAMPLE_BACKWARD requests
// (backend_abi.h, docs/ops.md), shared by the Kokkos kernel
// (kokkos/kernels/grid_sample.hpp) and the OpenCL plugin
// (opencl/ops_grid_sample.cpp): the parameters in range, x 4-D or 5-D, the
// grid [N, spatial out..., dims], every other operand's shape following
// from those two, one floating dtype. Each descriptor's extent was checked
// at run() (common/desc_check.hpp), so with these shapes no index a kernel
// forms leaves its tensor. False (with the reason): VNN_STATUS_UNSUPPORTED.
#pragma once
#include <cstdint>
#include <string>

#include "vnn/backend_abi.h"
#include "vnn/detail/message.h"
#include "vnn/op_names.h"

namespace vnn::kernels {

struct GridSampleOperands {
  vnn_grid_sample_params p{};
  bool backward = false;
  int dims = 2;               // spatial dims: 2 (4-D x) or 3 (5-D x)
  int64_t N = 0, C = 0;
  int64_t in[3] = {1, 1, 1};  // x's spatial sizes, innermost first (W, H, D)
  int64_t out[3] = {1, 1, 1}; // the grid's spatial sizes, innermost first
  int64_t points = 0;         // N * the grid's spatial sizes: one work item each
  const vnn_tensor_desc* x = nullptr;
  const vnn_tensor_desc* grid = nullptr;
  const vnn_tensor_desc* y = nullptr;      // forward: out0; backward: in0 (dout)
  const vnn_tensor_desc* dx = nullptr;     // backward: out0
  const vnn_tensor_desc* dgrid = nullptr;  // backward: out1
  int32_t dtype = VNN_FLOAT32;
};

inline bool decode_grid_sample(const vnn_op& op, GridSampleOperands* r, std::string* why) {
  auto no = [why](auto&&... parts) {
    *why = vnn::detail::str_cat(parts...);
    return false;
  };
  vnn_grid_sample_params& p = r->p;
  if (!vnn_grid_sample_unpack(op.ints, op.num_ints, &p) || p.mode < 0 || p.mode >= VNN_GRID_MODE_COUNT_ ||
      p.padding_mode < 0 || p.padding_mode >= VNN_GRID_PAD_COUNT_ || (p.align_corners != 0 && p.align_corners != 1))
    return no("ints must be vnn_grid_sample_params {mode, padding_mode, align_corners} in range");
  r->backward = op.kind == VNN_OP_GRID_SAMPLE_BACKWARD;
  const int n_in = r->backward ? 3 : 2, n_out = r->backward ? 2 : 1;
  if (op.num_inputs != n_in || op.num_outputs != n_out || !op.inputs || !op.outputs)
    return no("takes ", n_in, " inputs and ", n_out, " outputs, got ", op.num_inputs, " and ", op.num_outputs);
  r->x = &op.inputs[r->backward ? 1 : 0];
  r->grid = &op.inputs[r->backward ? 2 : 1];
  r->y = r->backward ? &op.inputs[0] : &op.outputs[0];
  const vnn_tensor_desc& x = *r->x;
  const vnn_tensor_desc& g = *r->grid;
  if (x.ndim != 4 && x.ndim != 5) return no("x must be 4-D or 5-D, got ", vnn::detail::desc_sizes(x));
  r->dims = x.ndim - 2;
  if (p.mode == VNN_GRID_BICUBIC && r->dims != 2) return no("bicubic takes a 4-D x only");
  r->N = x.sizes[0], r->C = x.sizes[1], r->dtype = x.dtype;
  if (r->dtype != VNN_FLOAT32 && r->dtype != VNN_FLOAT64)
    return no("float32 and float64 only (the core computes 16-bit floats in float32), got ",
              vnn::detail::abi_dtype(r->dtype));
  if (g.ndim != x.ndim || g.sizes[0] != r->N || g.sizes[x.ndim - 1] != r->dims || g.dtype != r->dtype)
    return no("grid must be [N, spatial..., ", r->dims, "] with N = ", r->N, " and x's dtype, got ",
              vnn::detail::desc_sizes(g));
  r->points = r->N;
  for (int a = 0; a < r->dims; ++a) {
    r->in[a] = x.sizes[x.ndim - 1 - a];
    r->out[a] = g.sizes[g.ndim - 2 - a];
    r->points *= r->out[a];  // bounded by the grid's element count (checked at run())
  }
  // [N, C, grid spatial...] (y, dout) or x's shape (dx) or the grid's (dgrid).
  auto same = [&](const vnn_tensor_desc& d, const vnn_tensor_desc& like, bool sampled) {
    if (d.ndim != like.ndim || d.dtype != r->dtype) return false;
    for (int k = 0; k < d.ndim; ++k) {
      const int64_t want = sampled && k >= 2 ? g.sizes[k - 1] : like.sizes[k];
      if (d.sizes[k] != want) return false;
    }
    return true;
  };
  if (!same(*r->y, x, true))
    return no(r->backward ? "dout" : "out", " must be [N, C, grid spatial...] in x's dtype, got ",
              vnn::detail::desc_sizes(*r->y));
  if (r->backward) {
    r->dx = &op.outputs[0], r->dgrid = &op.outputs[1];
    if (!same(*r->dx, x, false)) return no("dx must have x's shape and dtype, got ", vnn::detail::desc_sizes(*r->dx));
    if (!same(*r->dgrid, g, false))
      return no("dgrid must have the grid's shape and dtype, got ", vnn::detail::desc_sizes(*r->dgrid));
  }
  for (int a = 0; a < r->dims; ++a)
    if (r->in[a] <= 0 && r->points > 0 && r->C > 0) return no("x ", vnn::detail::desc_sizes(x), " has an empty spatial dim");
  return true;
}

}  // namespace vnn::kernels
