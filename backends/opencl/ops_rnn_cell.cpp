// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Host side of kernels/rnn_cell.cl: the request decoded by the decoder the
// Kokkos kernel uses too (common/rnn_cell_params.hpp: counts, shapes,
// strides, dtypes, so that no launch can index out of bounds), then each
// matrix passed as buffer, element offset and row stride.
#include "ops_rnn_cell.hpp"

#include <string>
#include <vector>

#include "common/rnn_cell_params.hpp"
#include "errors.hpp"
#include "launch.hpp"
#include "op_common.hpp"
#include "program_cache.hpp"
#include "vnn/op_names.h"

namespace vnn_opencl {

vnn_status run_rnn_cell(Device& d, cl_command_queue q, const vnn_op& op) {
  std::string what = d.label + ": " + (op.kind == VNN_OP_RNN_CELL ? "RNN_CELL" : "RNN_CELL_BACKWARD");
  vnn::kernels::RnnCellOperands r;
  std::string why;
  if (!vnn::kernels::decode_rnn_cell(op, &r, &why)) return fail(VNN_STATUS_UNSUPPORTED, what, ": ", why);
  what += std::string(" ") + VNN_NAME(vnn_rnn_cell_names, r.mode);
  if (r.dtype == VNN_FLOAT64 && !d.fp64)
    return fail(VNN_STATUS_UNSUPPORTED, what, ": float64 is not supported on ", d.label, " (device lacks cl_khr_fp64)");
  if (r.B * r.H == 0) return VNN_STATUS_OK;
  Kernel* k = nullptr;
  const char* name = r.backward ? "vnn_rnn_cell_bwd" : "vnn_rnn_cell_fwd";
  if (vnn_status err = get_kernel(d, "rnn_cell", name, r.dtype == VNN_FLOAT64 ? "-DRT=double" : "-DRT=float", &k))
    return err;
  // Values the argument list points at: they live until launch returns.
  struct Mat {
    cl_mem m;
    cl_long off, ld;
  };
  auto mat = [](const vnn_tensor_desc* t) { return Mat{mem(*t), t->offset, t->strides[0]}; };
  const int max_in = r.backward ? 5 : 3;
  std::vector<Mat> ins, outs;
  for (int i = 0; i < max_in; ++i) ins.push_back(mat(r.in[i < r.n_in ? i : 0]));
  for (int i = 0; i < 3; ++i) outs.push_back(mat(r.out[i < r.n_out ? i : 0]));
  const cl_int mode = r.mode, bias = r.bias;
  const cl_long B = r.B, H = r.H;
  Mat bi = r.bias ? mat(r.in[0]) : ins[0], bh = bi;
  if (r.bias) bi = {mem(*r.b_ih), r.b_ih->offset, 0}, bh = {mem(*r.b_hh), r.b_hh->offset, 0};
  std::vector<Arg> args = {arg(mode), arg(B), arg(H)};
  if (!r.backward) args.push_back(arg(bias));
  for (const Mat& m : ins) args.insert(args.end(), {arg(m.m), arg(m.off), arg(m.ld)});
  if (!r.backward) args.insert(args.end(), {arg(bi.m), arg(bi.off), arg(bh.m), arg(bh.off)});
  for (const Mat& m : outs) args.insert(args.end(), {arg(m.m), arg(m.off), arg(m.ld)});
  return launch(d, *k, q, r.B * r.H, what, args);
}

}  // namespace vnn_opencl
