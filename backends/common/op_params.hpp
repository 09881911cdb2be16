// The one decoder of the ops with named parameters (vnn/backend_abi.h:
// vnn_pool2d_params, vnn_conv2d_params, vnn_optimizer_params), shared by
// the Kokkos kernels and the OpenCL plugin: the ABI's unpack (counts) plus
// the range checks that keep a malformed request from indexing out of
// bounds. False means VNN_STATUS_INVALID_ARGUMENT (or UNSUPPORTED for an
// optimizer rule this ABI version lacks: see decode_optimizer).
#pragma once
#include "vnn/backend_abi.h"

namespace vnn::kernels {

// POOL2D / POOL2D_BACKWARD: a known mode, positive kernel, stride and
// dilation, non-negative padding.
inline bool decode_pool2d(const vnn_op& op, vnn_pool2d_params* p) {
  return vnn_pool2d_unpack(op.ints, op.num_ints, p) && p->mode >= 0 && p->mode < VNN_POOL_COUNT_ &&
         p->kernel_h > 0 && p->kernel_w > 0 && p->stride_h > 0 && p->stride_w > 0 && p->pad_h >= 0 &&
         p->pad_w >= 0 && p->dilation_h > 0 && p->dilation_w > 0;
}

// IM2COL / COL2IM and the CONV2D kinds: positive kernel, stride, dilation
// and groups, non-negative padding.
inline bool decode_conv2d(const vnn_op& op, vnn_conv2d_params* p) {
  return vnn_conv2d_unpack(op.ints, op.num_ints, p) && p->kernel_h > 0 && p->kernel_w > 0 && p->stride_h > 0 &&
         p->stride_w > 0 && p->pad_h >= 0 && p->pad_w >= 0 && p->dilation_h > 0 && p->dilation_w > 0 &&
         p->groups > 0;
}

// OPTIMIZER_STEP: a known rule with its scalars and ints, and the state
// outputs that rule uses (out0 = param, then vnn_optimizer_num_state).
inline bool decode_optimizer(const vnn_op& op, vnn_optimizer_params* p) {
  return vnn_optimizer_unpack(op.scalars, op.num_scalars, op.ints, op.num_ints, p) && op.outputs &&
         op.num_outputs >= 1 + vnn_optimizer_num_state(p);
}

}  // namespace vnn::kernels
