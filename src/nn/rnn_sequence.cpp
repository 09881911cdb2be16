// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One direction of one recurrent layer as one autograd node (rnn_cell.hpp's
// fused_direction). Forward, per step: one GEMM h W_hh^T and one RNN_CELL
// writing h', c' and the saved gates straight into rows of whole-sequence
// buffers. Backward (backpropagation through time), per step in reverse:
// RNN_CELL_BACKWARD writing the gate gradients into rows of [N, G*H]
// buffers and one GEMM for dh; then the weight gradients are one GEMM each
// over all steps (dW_hh = dG^T H_prev, dW_hr = dH^T H_raw) and the bias
// gradients one sum each. A per-step autograd graph would instead scatter
// each step's slice of the input projection's gradient into a full-size
// zero tensor (narrow's backward), once per step.
//
// Packed steps: step t covers rows [off_t, off_t + b_t) of the [N, *]
// buffers, b_t non-increasing. Forward in time, rows whose sequence ended
// keep their last state; in reverse, sequences join (from their end) with
// their initial state.
#include <vector>

#include "autograd/autograd.hpp"
#include "nn/rnn_cell.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/autograd.h"
#include "vnn/backend_abi.h"
#include "vnn/indexing.h"
#include "vnn/linalg.h"
#include "vnn/reduction.h"

namespace vnn::nn::detail {

namespace {

struct Geometry {
  int mode = 0;
  bool lstm = false, gru = false, proj = false, reverse = false;
  int64_t T = 0, B = 0, N = 0, H = 0, Hout = 0, GH = 0;
  std::vector<int64_t> bs, off;
  // The steps in the order the forward pass runs them.
  int64_t step(int64_t k) const { return reverse ? T - 1 - k : k; }
};

// The forward pass's buffers, kept for the backward.
struct Saved {
  Tensor hprev, cprev;  // [N, Hout], [N, H]: the state each step started from
  Tensor hraw;          // [N, H]: h' before the projection (proj only)
  Tensor c;             // [N, H]: c' (LSTM)
  Tensor gates;         // [N, 4H]: LSTM gates / GRU r, z, n, hn
  Tensor out;           // [N, Hout]: the output rows (h after the projection)
};

Tensor rows(const Tensor& t, const Geometry& g, int64_t s) { return t.narrow(0, g.off[size_t(s)], g.bs[size_t(s)]); }

}  // namespace

bool fused_direction(int mode, const Tensor& xg_all, const std::vector<int64_t>& batch_sizes, const Tensor& h0_in,
                     const Tensor& c0_in, const std::vector<Tensor>& w, bool reverse, Tensor* out_p, Tensor* hn_p,
                     Tensor* cn_p) {
  const char* op = "rnn_cell";
  const DType dt = xg_all.dtype();
  if (dt != kFloat32 && dt != kFloat64) return false;
  if (w[2].defined() != w[3].defined()) return false;
  Geometry g;
  g.mode = mode, g.lstm = mode == VNN_RNN_LSTM, g.gru = mode == VNN_RNN_GRU, g.proj = w[4].defined();
  g.reverse = reverse, g.bs = batch_sizes, g.T = int64_t(batch_sizes.size()), g.B = h0_in.size(0);
  g.off.assign(size_t(g.T + 1), 0);
  for (int64_t t = 0; t < g.T; ++t) g.off[size_t(t + 1)] = g.off[size_t(t)] + g.bs[size_t(t)];
  g.N = g.off[size_t(g.T)], g.Hout = h0_in.size(1), g.GH = xg_all.size(1);
  g.H = g.lstm ? g.GH / 4 : g.gru ? g.GH / 3 : g.GH;
  const bool track = ::vnn::detail::needs_grad({&xg_all, &w[1], &w[2], &w[3], &w[4], &h0_in, &c0_in});
  Tensor xg = xg_all.detach().contiguous(), whh = w[1].detach();
  Tensor bi = w[2].defined() ? w[2].detach() : Tensor(), bh = w[3].defined() ? w[3].detach() : Tensor();
  Tensor whr = g.proj ? w[4].detach() : Tensor();
  Tensor h0 = h0_in.detach(), c0 = g.lstm ? c0_in.detach() : Tensor();
  ::vnn::detail::DeviceContext& ctx = xg.impl()->ctx();
  auto buffer = [&](int64_t rows_, int64_t cols) { return ::vnn::detail::make_empty(ctx, {rows_, cols}, dt, op); };
  // out, h_n and c_n side by side in one flat buffer: one node owns all three.
  const int64_t n_out = g.N * g.Hout, n_h = g.B * g.Hout, n_c = g.lstm ? g.B * g.H : 0;
  Tensor flat = ::vnn::detail::make_empty(ctx, {n_out + n_h + n_c}, dt, op);
  Saved sv;
  sv.out = flat.narrow(0, 0, n_out).view({g.N, g.Hout});
  sv.hraw = g.proj ? buffer(g.N, g.H) : sv.out;
  sv.c = g.lstm ? buffer(g.N, g.H) : Tensor();
  sv.gates = g.lstm || g.gru ? buffer(g.N, 4 * g.H) : Tensor();
  if (track) {
    sv.hprev = buffer(g.N, g.Hout);
    if (g.lstm) sv.cprev = buffer(g.N, g.H);
  }
  Tensor h, c;
  std::vector<Tensor> done_h, done_c;  // forward in time: rows whose sequences ended
  {
    autograd::NoGradGuard no_grad;
    for (int64_t k = 0; k < g.T; ++k) {
      const int64_t s = g.step(k), b = g.bs[size_t(s)];
      if (k == 0) {
        h = h0.narrow(0, 0, b), c = g.lstm ? c0.narrow(0, 0, b) : Tensor();
      } else if (b < h.size(0)) {
        done_h.push_back(h.narrow(0, b, h.size(0) - b)), h = h.narrow(0, 0, b);
        if (g.lstm) done_c.push_back(c.narrow(0, b, c.size(0) - b)), c = c.narrow(0, 0, b);
      } else if (b > h.size(0)) {
        const int64_t cur = h.size(0);
        h = cat({h, h0.narrow(0, cur, b - cur)}, 0);
        if (g.lstm) c = cat({c, c0.narrow(0, cur, b - cur)}, 0);
      }
      if (track) {
        rows(sv.hprev, g, s).copy_(h);
        if (g.lstm) rows(sv.cprev, g, s).copy_(c);
      }
      Tensor hg = matmul(h, whh.t());
      Tensor state = g.lstm ? c : g.gru ? h : Tensor();
      Tensor hr = rows(sv.hraw, g, s);
      if (!fused_cell_into(mode, rows(xg, g, s), hg, state, bi, bh, hr, g.lstm ? rows(sv.c, g, s) : Tensor(),
                           sv.gates.defined() ? rows(sv.gates, g, s) : Tensor())) {
        VNN_CHECK(ValueError, k == 0, "rnn: the backend declined RNN_CELL after accepting it");
        return false;
      }
      if (g.proj) rows(sv.out, g, s).copy_(matmul(hr, whr.t()));
      h = rows(sv.out, g, s), c = g.lstm ? rows(sv.c, g, s) : Tensor();
    }
    Tensor hn = flat.narrow(0, n_out, n_h).view({g.B, g.Hout});
    std::vector<Tensor> hs{h}, cs{c};
    for (auto it = done_h.rbegin(); it != done_h.rend(); ++it) hs.push_back(*it);
    for (auto it = done_c.rbegin(); it != done_c.rend(); ++it) cs.push_back(*it);
    hn.copy_(hs.size() > 1 ? cat(hs, 0) : h);
    if (g.lstm) flat.narrow(0, n_out + n_h, n_c).view({g.B, g.H}).copy_(cs.size() > 1 ? cat(cs, 0) : c);
  }
  if (track) {
    ::vnn::detail::record(
        "rnn_sequence", flat, {&xg_all, &w[1], &w[2], &w[3], &w[4], &h0_in, &c0_in},
        [g, sv, whh, whr, n_out, n_h, n_c, has_bias = bi.defined()](const Tensor& grad) {
          Tensor gf = grad.contiguous();
          Tensor d_out = gf.narrow(0, 0, n_out).view({g.N, g.Hout});
          Tensor d_hn = gf.narrow(0, n_out, n_h).view({g.B, g.Hout});
          Tensor d_cn = g.lstm ? gf.narrow(0, n_out + n_h, n_c).view({g.B, g.H}) : Tensor();
          ::vnn::detail::DeviceContext& cx = gf.impl()->ctx();
          auto buf = [&](int64_t r, int64_t cols) {
            return ::vnn::detail::make_empty(cx, {r, cols}, gf.dtype(), "rnn_cell_backward");
          };
          Tensor dxg = buf(g.N, g.GH), dhg = g.gru ? buf(g.N, g.GH) : dxg;
          Tensor dhtot = g.proj ? buf(g.N, g.Hout) : Tensor();
          Tensor dh0 = zeros({g.B, g.Hout}, TensorOptions(gf.device()).with(gf.dtype()));
          Tensor dc0 = g.lstm ? zeros({g.B, g.H}, TensorOptions(gf.device()).with(gf.dtype())) : Tensor();
          Tensor dh, dc;  // the carry: gradient of the state after the step
          for (int64_t k = g.T - 1; k >= 0; --k) {
            const int64_t s = g.step(k), b = g.bs[size_t(s)];
            // The rows of this step whose state was final (forward in time: sequences that
            // ended here) take h_n's gradient; in reverse the carry only shrinks.
            if (k == g.T - 1) {
              dh = d_hn.narrow(0, 0, b), dc = g.lstm ? d_cn.narrow(0, 0, b) : Tensor();
            } else if (b > dh.size(0)) {
              const int64_t cur = dh.size(0);
              dh = cat({dh, d_hn.narrow(0, cur, b - cur)}, 0);
              if (g.lstm) dc = cat({dc, d_cn.narrow(0, cur, b - cur)}, 0);
            } else if (b < dh.size(0)) {
              const int64_t cur = dh.size(0);
              dh0.narrow(0, b, cur - b).copy_(dh.narrow(0, b, cur - b));
              if (g.lstm) dc0.narrow(0, b, cur - b).copy_(dc.narrow(0, b, cur - b));
              dh = dh.narrow(0, 0, b), dc = g.lstm ? dc.narrow(0, 0, b) : Tensor();
            }
            Tensor dtot = add(rows(d_out, g, s), dh);
            Tensor draw = dtot;
            if (g.proj) {
              rows(dhtot, g, s).copy_(dtot);
              draw = matmul(dtot, whr);
            }
            const Tensor gates = sv.gates.defined() ? rows(sv.gates, g, s) : Tensor();
            std::vector<Tensor> d;
            if (g.lstm) {
              d = cell_backward(g.mode, draw.contiguous(), dc.contiguous(), gates, rows(sv.cprev, g, s),
                                rows(sv.c, g, s), {rows(dxg, g, s)});
              dc = d[1];
            } else if (g.gru) {
              d = cell_backward(g.mode, draw.contiguous(), Tensor(), gates, rows(sv.hprev, g, s), Tensor(),
                                {rows(dxg, g, s), rows(dhg, g, s)});
            } else {
              d = cell_backward(g.mode, draw.contiguous(), Tensor(), Tensor(), Tensor(), rows(sv.hraw, g, s),
                                {rows(dxg, g, s)});
            }
            dh = matmul(rows(dhg, g, s), whh);
            if (g.gru) dh = add(dh, d[2]);
          }
          // The state before the first step run: the initial state of every row it had.
          dh0.narrow(0, 0, dh.size(0)).copy_(dh);
          if (g.lstm) dc0.narrow(0, 0, dc.size(0)).copy_(dc);
          Tensor dwhh = matmul(dhg.t(), sv.hprev);
          Tensor dbi = has_bias ? sum(dxg, {0}) : Tensor();
          Tensor dbh = has_bias ? (g.gru ? sum(dhg, {0}) : dbi) : Tensor();
          Tensor dwhr = g.proj ? matmul(dhtot.t(), sv.hraw) : Tensor();
          return std::vector<Tensor>{dxg, dwhh, dbi, dbh, dwhr, dh0, dc0};
        });
  }
  *out_p = flat.narrow(0, 0, n_out).view({g.N, g.Hout});
  *hn_p = flat.narrow(0, n_out, n_h).view({g.B, g.Hout});
  *cn_p = g.lstm ? flat.narrow(0, n_out + n_h, n_c).view({g.B, g.H}) : Tensor();
  return true;
}

}  // namespace vnn::nn::detail
