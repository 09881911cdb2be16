// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
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

// SDPA / SDPA_BACKWARD: the parameters, and the operands every kernel
// indexes without looking: 3 (+1 mask) inputs and 2 outputs forward, 7 (+1
// mask) inputs and 3 outputs backward; q, k, v 4-D with one batch N, one
// E, Hk dividing Hq, and the output / gradient shapes that follow; a unit
// stride on the last dim of the dense operands; lse / delta [N, Hq, L];
// dropout_p in [0, 1).
inline bool decode_sdpa(const vnn_op& op, vnn_sdpa_params* p) {
  if (!vnn_sdpa_unpack(op.scalars, op.num_scalars, op.ints, op.num_ints, p)) return false;
  if (!(p->dropout_p >= 0.0 && p->dropout_p < 1.0) || p->dropout_threshold < 0 || p->dropout_threshold > (1 << 24))
    return false;
  const bool backward = op.kind == VNN_OP_SDPA_BACKWARD;
  const int32_t dense_in = backward ? 7 : 3, outs = backward ? 3 : 2;
  if (!op.inputs || !op.outputs || op.num_inputs != dense_in + (p->has_mask ? 1 : 0) || op.num_outputs != outs)
    return false;
  const vnn_tensor_desc &q = op.inputs[0], &k = op.inputs[1], &v = op.inputs[2];
  if (q.ndim != 4 || k.ndim != 4 || v.ndim != 4) return false;
  const int64_t N = q.sizes[0], Hq = q.sizes[1], L = q.sizes[2], E = q.sizes[3];
  const int64_t Hk = k.sizes[1], S = k.sizes[2], Ev = v.sizes[3];
  if (k.sizes[0] != N || v.sizes[0] != N || v.sizes[1] != Hk || v.sizes[2] != S || k.sizes[3] != E) return false;
  if (Hk <= 0 || Hq % Hk != 0) return false;
  auto is = [](const vnn_tensor_desc& d, int64_t a, int64_t b, int64_t c, int64_t e) {
    return d.ndim == 4 && d.sizes[0] == a && d.sizes[1] == b && d.sizes[2] == c && d.sizes[3] == e;
  };
  auto rows = [&](const vnn_tensor_desc& d) {
    return d.ndim == 3 && d.sizes[0] == N && d.sizes[1] == Hq && d.sizes[2] == L;
  };
  auto unit = [](const vnn_tensor_desc& d) { return d.sizes[3] <= 1 || d.strides[3] == 1; };
  if (!unit(q) || !unit(k) || !unit(v)) return false;
  if (p->has_mask && !is(op.inputs[dense_in], N, Hq, L, S)) return false;
  if (!backward) return is(op.outputs[0], N, Hq, L, Ev) && unit(op.outputs[0]) && rows(op.outputs[1]);
  const vnn_tensor_desc &o = op.inputs[3], &dout = op.inputs[4];
  return is(o, N, Hq, L, Ev) && is(dout, N, Hq, L, Ev) && unit(o) && unit(dout) && rows(op.inputs[5]) &&
         rows(op.inputs[6]) && is(op.outputs[0], N, Hq, L, E) && is(op.outputs[1], N, Hk, S, E) &&
         is(op.outputs[2], N, Hk, S, Ev) && unit(op.outputs[0]) && unit(op.outputs[1]) && unit(op.outputs[2]);
}

}  // namespace vnn::kernels
