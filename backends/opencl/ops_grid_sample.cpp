// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Host side of kernels/grid_sample.cl: the request decoded by the decoder
// the Kokkos kernel uses too (common/grid_sample_params.hpp: parameters,
// shapes and dtypes, so that no launch can index out of bounds), then each
// operand passed as its buffer and a long8 of offset and strides.
#include "ops_grid_sample.hpp"

#include <string>

#include "common/grid_sample_params.hpp"
#include "errors.hpp"
#include "launch.hpp"
#include "op_common.hpp"
#include "program_cache.hpp"
#include "vnn/op_names.h"

namespace vnn_opencl {

namespace {

// (offset, batch stride, channel or coordinate stride, spatial strides
// innermost first), as grid_sample.cl reads them.
cl_long8 strides8(const vnn_tensor_desc& t, bool grid_like) {
  cl_long8 s{};
  const int nd = t.ndim;
  s.s[0] = t.offset;
  s.s[1] = t.strides[0];
  s.s[2] = grid_like ? t.strides[nd - 1] : t.strides[1];
  for (int a = 0; a < nd - 2; ++a) s.s[3 + a] = t.strides[(grid_like ? nd - 2 : nd - 1) - a];
  return s;
}

}  // namespace

vnn_status run_grid_sample(Device& d, cl_command_queue q, const vnn_op& op) {
  std::string what = d.label + ": " + (op.kind == VNN_OP_GRID_SAMPLE ? "GRID_SAMPLE" : "GRID_SAMPLE_BACKWARD");
  vnn::kernels::GridSampleOperands r;
  std::string why;
  if (!vnn::kernels::decode_grid_sample(op, &r, &why)) return fail(VNN_STATUS_UNSUPPORTED, what, ": ", why);
  what += std::string(" ") + VNN_NAME(vnn_grid_sample_mode_names, r.p.mode);
  const bool fp64 = r.dtype == VNN_FLOAT64;
  if (fp64 && !d.fp64)
    return fail(VNN_STATUS_UNSUPPORTED, what, ": float64 is not supported on ", d.label, " (device lacks cl_khr_fp64)");
  if (fp64 && r.backward && !d.has_extension("cl_khr_int64_base_atomics"))
    return fail(VNN_STATUS_UNSUPPORTED, what, ": float64 needs cl_khr_int64_base_atomics, which ", d.label, " lacks");
  if (r.points == 0) return VNN_STATUS_OK;
  Kernel* k = nullptr;
  const char* name = r.backward ? "vnn_grid_sample_bwd" : "vnn_grid_sample_fwd";
  if (vnn_status err = get_kernel(d, "grid_sample", name, fp64 ? "-DRT=double -DGS_FP64=1" : "-DRT=float", &k))
    return err;
  const cl_int dims = r.dims, mode = cl_int(r.p.mode), pad = cl_int(r.p.padding_mode), align = cl_int(r.p.align_corners);
  const cl_long C = r.C, points = r.points;
  const cl_long4 in4 = {{r.in[0], r.in[1], r.in[2], 0}}, out4 = {{r.out[0], r.out[1], r.out[2], 0}};
  const cl_mem x = mem(*r.x), grid = mem(*r.grid), y = mem(*r.y);
  const cl_long8 xs = strides8(*r.x, false), gs = strides8(*r.grid, true), ys = strides8(*r.y, false);
  if (!r.backward)
    return launch(d, *k, q, r.points, what,
                  {arg(dims), arg(mode), arg(pad), arg(align), arg(C), arg(in4), arg(out4), arg(points), arg(x),
                   arg(xs), arg(grid), arg(gs), arg(y), arg(ys)});
  const cl_mem dx = mem(*r.dx), dgrid = mem(*r.dgrid);
  const cl_long8 dxs = strides8(*r.dx, false), dgs = strides8(*r.dgrid, true);
  return launch(d, *k, q, r.points, what,
                {arg(dims), arg(mode), arg(pad), arg(align), arg(C), arg(in4), arg(out4), arg(points), arg(x), arg(xs),
                 arg(grid), arg(gs), arg(y), arg(ys), arg(dx), arg(dxs), arg(dgrid), arg(dgs)});
}

}  // namespace vnn_opencl
