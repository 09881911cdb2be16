// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Host side of IM2COL / COL2IM / POOL2D / POOL2D_BACKWARD: structural checks
// (the core validated shapes; these keep a malformed request from reading
// out of bounds), then one grid-stride 1-D launch.
#include "ops_conv.hpp"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <string>

#include "dtype.hpp"
#include "errors.hpp"
#include "common/op_params.hpp"
#include "launch.hpp"
#include "op_common.hpp"
#include "program_cache.hpp"

namespace vnn_opencl {
namespace {

// pooling.cl's geometry vectors: geom = (mode, kh, kw, sh, sw, ph, pw, dh),
// g2 = (dw, count_include_pad, divisor_override, 0).
void pool_geometry(const vnn_pool2d_params& g, cl_long8* geom, cl_long4* g2) {
  *geom = {{g.mode, g.kernel_h, g.kernel_w, g.stride_h, g.stride_w, g.pad_h, g.pad_w, g.dilation_h}};
  *g2 = {{g.dilation_w, g.count_include_pad, g.divisor_override, 0}};
}

std::string type_define(int32_t dtype) { return dtype == VNN_FLOAT64 ? "-DT=double" : "-DT=float"; }

vnn_status run_im2col(Device& d, cl_command_queue q, const vnn_op& op, const std::string& what, bool col2im) {
  const vnn_tensor_desc& out = op.outputs[0];
  const vnn_tensor_desc& in = op.inputs[0];
  vnn_conv2d_params g;
  if (!vnn::kernels::decode_conv2d(op, &g))
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": needs ints {kh, kw, sh, sw, ph, pw, dh, dw} in range");
  const vnn_tensor_desc& img = col2im ? out : in;
  const vnn_tensor_desc& col = col2im ? in : out;
  if (!desc_ok(img, 4, out.dtype) || !desc_ok(col, 3, out.dtype))
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": expects a 4-D image and a 3-D column tensor of one dtype");
  const int64_t oh = conv_out_size(img.sizes[2], g.kernel_h, g.stride_h, g.pad_h, g.dilation_h);
  const int64_t ow = conv_out_size(img.sizes[3], g.kernel_w, g.stride_w, g.pad_w, g.dilation_w);
  if (col.sizes[0] != img.sizes[0] || col.sizes[1] != img.sizes[1] * g.kernel_h * g.kernel_w ||
      col.sizes[2] != oh * ow)
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": column tensor sizes do not match the image and geometry");
  Kernel* k = nullptr;
  if (vnn_status st = get_kernel(d, "conv", col2im ? "vnn_col2im" : "vnn_im2col", type_define(out.dtype), &k))
    return st;
  cl_mem mo = mem(out), mi = mem(in);
  cl_long oo = out.offset, io = in.offset, OH = oh, OW = ow;
  cl_long4 os = strides4(out), is = strides4(in), dims = sizes4(img);
  // conv.cl's geometry vector: (kh, kw, sh, sw, ph, pw, dh, dw).
  const cl_long8 geom = {{g.kernel_h, g.kernel_w, g.stride_h, g.stride_w, g.pad_h, g.pad_w, g.dilation_h,
                          g.dilation_w}};
  return launch(d, *k, q, numel(out), what,
                {arg(mo), arg(oo), arg(os), arg(mi), arg(io), arg(is), arg(dims), arg(geom), arg(OH), arg(OW)});
}

// pooling.cl's build options: T the storage type, DT the dtype code (16-bit
// storage computes in float32 through common.cl's VNN_LD / VNN_ST).
std::string pool_defines(int32_t dtype) {
  return std::string("-DT=") + dtype_info(dtype)->storage + " -DDT=" + std::to_string(dtype);
}

// Max pooling backward as zero-fill + scatter (kernels/pooling.cl) where
// the windows cannot overlap and grad_in is dense; false (nothing done)
// where the gather kernel has to run instead.
bool run_maxpool_backward_scatter(Device& d, cl_command_queue q, const vnn_op& op, const vnn_pool2d_params& g,
                                  const std::string& what, const vnn_tensor_desc& idx, vnn_status* st) {
  const vnn_tensor_desc& out = op.outputs[0];  // grad_in [N, C, H, W]
  const vnn_tensor_desc& gy = op.inputs[0];    // [N, C, OH, OW]
  // float32/float64 only: 16-bit storage takes the gather kernel (its
  // results are checked against float32 in tests/ops/low_precision.cpp).
  if (out.dtype != VNN_FLOAT32 && out.dtype != VNN_FLOAT64) return false;
  if (g.stride_h < g.dilation_h * (g.kernel_h - 1) + 1 || g.stride_w < g.dilation_w * (g.kernel_w - 1) + 1)
    return false;
  if (!dense(out)) return false;
  const int64_t expect = numel(out);
  // The element size of every dtype pooling takes (16-bit ones too: their
  // zero is all-zero bits as well).
  const DtypeInfo* info = dtype_info(out.dtype);
  if (!info) return false;
  const size_t esize = info->size;
  if (expect == 0) return *st = VNN_STATUS_OK, true;
  const uint64_t zero = 0;
  cl_int err = clEnqueueFillBuffer(q, mem(out), &zero, esize, size_t(out.offset) * esize, size_t(expect) * esize, 0,
                                   nullptr, nullptr);
  if (err != CL_SUCCESS) return *st = fail_cl(err, what, ": clEnqueueFillBuffer failed"), true;
  Kernel* k = nullptr;
  if ((*st = get_kernel(d, "pooling", "vnn_maxpool2d_backward_scatter", type_define(out.dtype), &k))) return true;
  cl_mem mo = mem(out), mi = mem(gy), mx = mem(idx);
  cl_long oo = out.offset, io = gy.offset, xo = idx.offset, OH = gy.sizes[2], OW = gy.sizes[3];
  cl_long4 os = strides4(out), is = strides4(gy), xs = strides4(idx), dims = sizes4(out);
  cl_long8 geom;
  cl_long4 g2;
  pool_geometry(g, &geom, &g2);
  *st = launch(d, *k, q, gy.sizes[0] * gy.sizes[1] * OH * OW, what,
               {arg(mo), arg(oo), arg(os), arg(mx), arg(xo), arg(xs), arg(mi), arg(io), arg(is), arg(dims), arg(OH),
                arg(OW), arg(geom), arg(g2)});
  return true;
}

// Max pooling 2x2 / 2 without padding on dense operands (the CNN's layers):
// pooling.cl's vnn_maxpool2d_2x2 / vnn_maxpool2d_backward_2x2. False
// (nothing done) where the general kernels run. On PoCL (2 threads,
// profile_training) the general ones took 6.7 ms forward and 5.4 ms
// backward per call on the CNN's two layers, 22% of the step.
bool run_maxpool_2x2(Device& d, cl_command_queue q, const vnn_op& op, const vnn_pool2d_params& g,
                     const std::string& what, const vnn_tensor_desc& idx, bool backward, vnn_status* st) {
  const vnn_tensor_desc& out = op.outputs[0];
  const vnn_tensor_desc& in = op.inputs[0];
  const vnn_tensor_desc& small = backward ? in : out;  // [N, C, OH, OW]
  const vnn_tensor_desc& big = backward ? out : in;    // [N, C, H, W]
  if (g.mode != VNN_POOL_MAX || g.kernel_h != 2 || g.kernel_w != 2 || g.stride_h != 2 || g.stride_w != 2 ||
      g.pad_h != 0 || g.pad_w != 0 || g.dilation_h != 1 || g.dilation_w != 1)
    return false;
  const int64_t H = big.sizes[2], W = big.sizes[3], OH = small.sizes[2], OW = small.sizes[3];
  // Where items run as loops on CPU threads, one item per plane (the
  // *_planes kernels; their backward also covers an odd H or W).
  const bool planes = d.one_per_item;
  if (OH != H / 2 || OW != W / 2 || (backward && !planes && (H != 2 * OH || W != 2 * OW))) return false;
  if (!dense(out) || !dense(in) || !dense(idx)) return false;
  const int64_t total = numel(small);
  if (total == 0) return *st = VNN_STATUS_OK, true;
  std::string name = backward ? "vnn_maxpool2d_backward_2x2" : "vnn_maxpool2d_2x2";
  if (planes) name += "_planes";
  Kernel* k = nullptr;
  if ((*st = get_kernel(d, "pooling", name.c_str(), pool_defines(out.dtype), &k))) return true;
  cl_mem mo = mem(out), mi = mem(in), mx = mem(idx);
  cl_long oo = out.offset, io = in.offset, xo = idx.offset, cH = H, cW = W, cOH = OH, cOW = OW;
  cl_long n = planes ? small.sizes[0] * small.sizes[1] : total;
  // Both kernels take (out, indices, in: the image or the gradient, sizes).
  const std::initializer_list<Arg> args = {arg(mo), arg(oo), arg(mx), arg(xo), arg(mi), arg(io),
                                           arg(cH), arg(cW), arg(cOH), arg(cOW), arg(n)};
  if (!planes) return *st = launch(d, *k, q, total, what, args), true;
  // Groups of up to 16 planes, fewer while that leaves too few groups.
  const size_t local = local_filling(d, size_t(n), std::min<size_t>({16, k->work_group_size, d.max_work_group_size}));
  const size_t global = (size_t(n) + local - 1) / local * local;
  *st = enqueue_nd(*k, q, 1, &global, &local, what, args);
  return true;
}

vnn_status run_pool(Device& d, cl_command_queue q, const vnn_op& op, const std::string& what, bool backward) {
  vnn_pool2d_params g;
  if (!vnn::kernels::decode_pool2d(op, &g))
    return fail(VNN_STATUS_INVALID_ARGUMENT,
                what, ": needs ints {mode, kh, kw, sh, sw, ph, pw, dh, dw, count_include_pad, divisor} in range");
  const bool is_max = vnn_pool_is_max(g.mode);
  const vnn_tensor_desc& out = op.outputs[0];
  const vnn_tensor_desc& in = op.inputs[0];
  const vnn_tensor_desc* idx = nullptr;
  if (is_max) {
    if (backward ? op.num_inputs < 2 || !op.inputs : op.num_outputs < 2 || !op.outputs)
      return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": max pooling needs the indices tensor");
    idx = backward ? &op.inputs[1] : &op.outputs[1];
    if (!desc_ok(*idx, 4, VNN_INT64))
      return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": indices must be a 4-D int64 tensor");
  }
  if (!desc_ok(in, 4, out.dtype) || !desc_ok(out, 4, out.dtype) || in.sizes[0] != out.sizes[0] ||
      in.sizes[1] != out.sizes[1] ||
      (out.dtype != VNN_FLOAT32 && out.dtype != VNN_FLOAT64 && out.dtype != VNN_FLOAT16 && out.dtype != VNN_BFLOAT16))
    return fail(VNN_STATUS_UNSUPPORTED, what, ": expects 4-D float32/float64/float16/bfloat16 tensors of one dtype");
  const vnn_tensor_desc& small = backward ? in : out;  // [N, C, OH, OW]
  const vnn_tensor_desc& big = backward ? out : in;    // [N, C, H, W]
  if (idx)
    for (int i = 0; i < 4; ++i)
      if (idx->sizes[i] != small.sizes[i])
        return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": indices sizes differ from the pooled output");
  if (g.mode == VNN_POOL_MAX) {
    vnn_status st = VNN_STATUS_OK;
    if (run_maxpool_2x2(d, q, op, g, what, *idx, backward, &st)) return st;
    if (backward && run_maxpool_backward_scatter(d, q, op, g, what, *idx, &st)) return st;
  }
  Kernel* k = nullptr;
  if (vnn_status st = get_kernel(d, "pooling", backward ? "vnn_pool2d_backward" : "vnn_pool2d",
                                pool_defines(out.dtype), &k))
    return st;
  cl_mem mo = mem(out), mi = mem(in), mx = idx ? mem(*idx) : nullptr;
  cl_long oo = out.offset, io = in.offset, xo = idx ? idx->offset : 0, OH = small.sizes[2], OW = small.sizes[3];
  cl_long4 os = strides4(out), is = strides4(in), xs = idx ? strides4(*idx) : cl_long4{}, dims = sizes4(big);
  cl_long8 geom;
  cl_long4 g2;
  pool_geometry(g, &geom, &g2);
  return launch(d, *k, q, numel(out), what,
                {arg(mo), arg(oo), arg(os), arg(mx), arg(xo), arg(xs), arg(mi), arg(io), arg(is), arg(dims), arg(OH),
                 arg(OW), arg(geom), arg(g2)});
}

}  // namespace

vnn_status run_conv_family(Device& d, cl_command_queue q, const vnn_op& op, const std::string& what) {
  if (op.num_inputs < 1 || !op.inputs || op.num_outputs < 1 || !op.outputs)
    return fail(VNN_STATUS_INVALID_ARGUMENT, what, ": needs at least 1 input and 1 output");
  const int32_t dt = op.outputs[0].dtype;
  // Pooling also takes 16-bit storage (computed in float32); im2col / col2im
  // do not (conv2d runs 16-bit operands on float32 copies).
  const bool pool = op.kind == VNN_OP_POOL2D || op.kind == VNN_OP_POOL2D_BACKWARD;
  const bool half = dt == VNN_FLOAT16 || dt == VNN_BFLOAT16;
  if (dt != VNN_FLOAT32 && dt != VNN_FLOAT64 && !(pool && half))
    return fail(VNN_STATUS_UNSUPPORTED, what, ": only float32 and float64", pool ? ", float16 and bfloat16" : "",
                " are supported");
  if (dt == VNN_FLOAT64 && !d.fp64)
    return fail(VNN_STATUS_UNSUPPORTED, what, ": float64 is not supported on ", d.label, " (device lacks cl_khr_fp64)");
  switch (op.kind) {
    case VNN_OP_IM2COL: return run_im2col(d, q, op, what, false);
    case VNN_OP_COL2IM: return run_im2col(d, q, op, what, true);
    case VNN_OP_POOL2D: return run_pool(d, q, op, what, false);
    case VNN_OP_POOL2D_BACKWARD: return run_pool(d, q, op, what, true);
    default:
      return fail(VNN_STATUS_UNSUPPORTED, what, " is not supported by the opencl backend");
  }
}

}  // namespace vnn_opencl
