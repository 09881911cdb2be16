// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One recurrent cell step from its two GEMM results (src/nn/rnn_cell.cpp):
// the backend's fused RNN_CELL where it has it, else the same equations
// composed from elementwise ops; the layers (rnn.cpp) and the cell
// functions call it once per time step.
#pragma once
#include <vector>

#include "vnn/tensor.h"

namespace vnn::nn::detail {

/// The new state of a step: h' (and c' for LSTM).
struct CellState {
  Tensor h, c;
};

/// xg = x W_ih^T and hg = h W_hh^T, [B, G*H]; state: c [B, H] (LSTM), h [B, H]
/// (GRU), undefined (RNN); biases [G*H] or undefined. Differentiable in
/// every argument; one floating dtype (float16 / bfloat16 computed in float32).
CellState rnn_cell_step(int mode, const Tensor& xg, const Tensor& hg, const Tensor& state, const Tensor& b_ih,
                        const Tensor& b_hh);

/// RNN_CELL into the given outputs: h [B, H], c (LSTM) and saved [B, 4H]
/// (LSTM, GRU), which may be row views of larger buffers; no autograd.
/// False where the backend declines (nothing written).
bool fused_cell_into(int mode, const Tensor& xg, const Tensor& hg, const Tensor& state, const Tensor& b_ih,
                     const Tensor& b_hh, const Tensor& h, const Tensor& c, const Tensor& saved);

/// RNN_CELL_BACKWARD (composed from elementwise ops where the backend
/// declines): from dh', dc' (LSTM), saved, the state (LSTM c, GRU h) and
/// the output (RNN h', LSTM c'), the gradients docs/ops.md lists, written
/// into `dest` where given (row views allowed), else into new tensors.
std::vector<Tensor> cell_backward(int mode, const Tensor& dh, const Tensor& dc, const Tensor& saved,
                                  const Tensor& state, const Tensor& out, const std::vector<Tensor>& dest = {});

/// One direction of one layer over packed steps with one autograd node for
/// the whole sequence (forward loop of GEMM + RNN_CELL per step; its
/// backward runs the steps in reverse with RNN_CELL_BACKWARD and forms the
/// weight gradients with one GEMM each): xg_all [N, G*H] = x W_ih^T of every
/// step, h0 [B, Hout], c0 [B, H] (LSTM), w = w_ih, w_hh, b_ih, b_hh, w_hr.
/// Returns false, having recorded nothing, where the backend declines RNN_CELL.
bool fused_direction(int mode, const Tensor& xg_all, const std::vector<int64_t>& batch_sizes, const Tensor& h0,
                     const Tensor& c0, const std::vector<Tensor>& w, bool reverse, Tensor* out, Tensor* h_n,
                     Tensor* c_n);

}  // namespace vnn::nn::detail
