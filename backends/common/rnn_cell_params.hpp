// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The one decoder of RNN_CELL / RNN_CELL_BACKWARD requests (backend_abi.h,
// docs/ops.md), shared by the Kokkos kernel (kokkos/kernels/rnn_cell.hpp)
// and the OpenCL plugin (opencl/ops_rnn_cell.cpp): the operand counts of
// the cell mode, every matrix [B, w H] with a unit last stride and a
// non-negative row stride, [G H] unit-stride biases, one floating dtype.
// False (with the reason) means the plugin declines: VNN_STATUS_UNSUPPORTED.
#pragma once
#include <cstdint>
#include <string>

#include "vnn/backend_abi.h"
#include "vnn/detail/message.h"
#include "vnn/op_names.h"

namespace vnn::kernels {

struct RnnCellOperands {
  int mode = 0;
  bool backward = false, bias = false;
  int64_t B = 0, H = 0;
  int n_in = 0, n_out = 0;  // matrices, biases not counted
  const vnn_tensor_desc* in[5] = {};
  const vnn_tensor_desc* out[3] = {};
  const vnn_tensor_desc* b_ih = nullptr;
  const vnn_tensor_desc* b_hh = nullptr;
  int32_t dtype = VNN_FLOAT32;
};

// Gates per step of a mode: RNN 1, LSTM 4 (i, f, g, o), GRU 3 (r, z, n).
inline int rnn_cell_gates(int mode) { return mode == VNN_RNN_LSTM ? 4 : mode == VNN_RNN_GRU ? 3 : 1; }

// The width (in units of H) of input or output k of a request.
inline int rnn_cell_width(int mode, bool backward, bool input, int k) {
  const bool lstm = mode == VNN_RNN_LSTM, gru = mode == VNN_RNN_GRU;
  if (!backward) {
    if (input) return k < 2 ? rnn_cell_gates(mode) : 1;
    return k == 0 ? 1 : lstm ? (k == 1 ? 1 : 4) : 4;
  }
  if (input) return lstm ? (k == 2 ? 4 : 1) : gru ? (k == 1 ? 4 : 1) : 1;
  if (lstm) return k == 0 ? 4 : 1;
  return gru ? (k < 2 ? 3 : 1) : 1;
}

inline bool decode_rnn_cell(const vnn_op& op, RnnCellOperands* r, std::string* why) {
  auto no = [why](auto&&... parts) {
    *why = vnn::detail::str_cat(parts...);
    return false;
  };
  r->backward = op.kind == VNN_OP_RNN_CELL_BACKWARD;
  if (op.num_ints < 1 || !op.ints || op.ints[0] < 0 || op.ints[0] >= VNN_RNN_CELL_COUNT_)
    return no("ints[0] must be a vnn_rnn_cell_mode");
  r->mode = int(op.ints[0]);
  r->bias = !r->backward && op.num_ints > 1 && op.ints[1] != 0;
  const bool lstm = r->mode == VNN_RNN_LSTM, gru = r->mode == VNN_RNN_GRU;
  if (!r->backward) r->n_in = lstm || gru ? 3 : 2, r->n_out = lstm ? 3 : gru ? 2 : 1;
  else r->n_in = lstm ? 5 : gru ? 3 : 2, r->n_out = lstm ? 2 : gru ? 3 : 1;
  const int want_in = r->n_in + (r->bias ? 2 : 0);
  if (op.num_inputs != want_in || op.num_outputs != r->n_out || !op.inputs || !op.outputs)
    return no(VNN_NAME(vnn_rnn_cell_names, r->mode), " takes ", want_in, " inputs and ", r->n_out, " outputs, got ",
              op.num_inputs, " and ", op.num_outputs);
  const vnn_tensor_desc& first = r->backward ? op.inputs[0] : op.outputs[0];
  if (first.ndim != 2) return no("h' / dh' must be [B, H], got ", vnn::detail::desc_sizes(first));
  r->B = first.sizes[0], r->H = first.sizes[1], r->dtype = first.dtype;
  if (r->dtype != VNN_FLOAT32 && r->dtype != VNN_FLOAT64)
    return no("float32 and float64 only (the core computes float16 / bfloat16 in float32), got ",
              vnn::detail::abi_dtype(r->dtype));
  auto fits = [&](const vnn_tensor_desc& d, int w) {
    return d.ndim == 2 && d.sizes[0] == r->B && d.sizes[1] == w * r->H && d.dtype == r->dtype && d.offset >= 0 &&
           (d.sizes[1] <= 1 || d.strides[1] == 1) && (r->B <= 1 || d.strides[0] >= 0);
  };
  for (int k = 0; k < r->n_in; ++k) {
    const int w = rnn_cell_width(r->mode, r->backward, true, k);
    if (!fits(op.inputs[k], w))
      return no("input ", k, " must be [B, ", w, " H] = [", r->B, ", ", w * r->H,
                "] with a unit last stride and h's dtype, got ", vnn::detail::desc_sizes(op.inputs[k]));
    r->in[k] = &op.inputs[k];
  }
  for (int k = 0; k < r->n_out; ++k) {
    const int w = rnn_cell_width(r->mode, r->backward, false, k);
    if (!fits(op.outputs[k], w))
      return no("output ", k, " must be [B, ", w, " H] = [", r->B, ", ", w * r->H,
                "] with a unit last stride and h's dtype, got ", vnn::detail::desc_sizes(op.outputs[k]));
    r->out[k] = &op.outputs[k];
  }
  if (r->bias) {
    const int64_t gh = int64_t(rnn_cell_gates(r->mode)) * r->H;
    for (int k = r->n_in; k < r->n_in + 2; ++k) {
      const vnn_tensor_desc& d = op.inputs[k];
      if (d.ndim != 1 || d.sizes[0] != gh || d.dtype != r->dtype || d.offset < 0 || (gh > 1 && d.strides[0] != 1))
        return no("the biases must be [", gh, "] with unit stride and h's dtype");
    }
    r->b_ih = &op.inputs[r->n_in], r->b_hh = &op.inputs[r->n_in + 1];
  }
  return true;
}

}  // namespace vnn::kernels
