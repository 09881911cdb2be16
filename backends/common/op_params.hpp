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

// SORT / SEARCHSORTED: every operand a contiguous row-major [rows, cols]
// (a size-1 dim any stride).
inline bool dense_rows(const vnn_tensor_desc& d, int64_t* rows, int64_t* cols) {
  if (d.ndim != 2) return false;
  *rows = d.sizes[0], *cols = d.sizes[1];
  return *rows >= 0 && *cols >= 0 && (*cols <= 1 || d.strides[1] == 1) && (*rows <= 1 || d.strides[0] == *cols);
}

// SORT: in0 [rows, n], out0 (in0's dtype) and out1 (int64) of its shape;
// ints[0] = 1: descending. False with *why saying what is wrong.
struct SortRows {
  int64_t rows = 0, n = 0;
  bool descending = false;
};
inline bool decode_sort(const vnn_op& op, SortRows* s, const char** why) {
  int64_t r1 = 0, n1 = 0, r2 = 0, n2 = 0;
  *why = "takes 1 input and 2 outputs, each a contiguous [R, N] of one shape";
  if (op.num_inputs != 1 || op.num_outputs != 2 || !dense_rows(op.inputs[0], &s->rows, &s->n) ||
      !dense_rows(op.outputs[0], &r1, &n1) || !dense_rows(op.outputs[1], &r2, &n2) || r1 != s->rows ||
      n1 != s->n || r2 != s->rows || n2 != s->n)
    return false;
  *why = "out0 takes in0's dtype and out1 is int64";
  if (op.outputs[0].dtype != op.inputs[0].dtype || op.outputs[1].dtype != VNN_INT64) return false;
  s->descending = op.num_ints > 0 && op.ints[0] != 0;
  return true;
}

// SEARCHSORTED: in0 = sequences [seq_rows (rows or 1), n], in1 = values
// [rows, m] of in0's dtype, out0 [rows, m] int64 or int32; ints[0] = 1: right.
struct SearchRows {
  int64_t seq_rows = 0, n = 0, rows = 0, m = 0;
  bool right = false;
};
inline bool decode_searchsorted(const vnn_op& op, SearchRows* s, const char** why) {
  int64_t r1 = 0, m1 = 0;
  *why = "takes in0 [R or 1, N], in1 [R, M] and out0 [R, M], each contiguous";
  if (op.num_inputs != 2 || op.num_outputs != 1 || !dense_rows(op.inputs[0], &s->seq_rows, &s->n) ||
      !dense_rows(op.inputs[1], &s->rows, &s->m) || !dense_rows(op.outputs[0], &r1, &m1) || r1 != s->rows ||
      m1 != s->m || (s->seq_rows != s->rows && s->seq_rows != 1))
    return false;
  *why = "in1 takes in0's dtype and out0 is int64 or int32";
  if (op.inputs[1].dtype != op.inputs[0].dtype ||
      (op.outputs[0].dtype != VNN_INT64 && op.outputs[0].dtype != VNN_INT32))
    return false;
  s->right = op.num_ints > 0 && op.ints[0] != 0;
  return true;
}

}  // namespace vnn::kernels
