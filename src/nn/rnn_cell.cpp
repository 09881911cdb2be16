// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One recurrent cell step (rnn_cell.hpp) and the cell functions of
// vnn/nn/rnn.h. The step takes the backend's fused RNN_CELL (biases, gates
// and state update in one pass; ABI comment in backend_abi.h, docs/ops.md)
// and records one autograd node whose backward is RNN_CELL_BACKWARD; a
// backend that declines either gets the same equations composed from
// elementwise ops (PyTorch's, gate orders i,f,g,o and r,z,n):
//   LSTM  c' = f c + i g, h' = o tanh(c')
//   GRU   n = tanh(x_n + b_in + r (h_n + b_hn)), h' = (1 - z) n + z h
//   RNN   h' = tanh(a) or relu(a), a = x W_ih^T + b_ih + h W_hh^T + b_hh
#include "nn/rnn_cell.hpp"

#include <atomic>
#include <vector>

#include "autograd/autograd.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/autograd.h"
#include "vnn/detail/message.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/indexing.h"
#include "vnn/linalg.h"
#include "vnn/nn/rnn.h"
#include "vnn/reduction.h"

namespace vnn::nn::detail {

namespace {

std::atomic<bool> g_fused{true};

bool is_lstm(int mode) { return mode == VNN_RNN_LSTM; }
bool is_gru(int mode) { return mode == VNN_RNN_GRU; }

// A matrix operand as the kernel takes it: a unit last stride.
Tensor unit_rows(const Tensor& t) { return t.dim() == 2 && (t.size(1) <= 1 || t.stride(1) == 1) ? t : t.contiguous(); }

// The textbook step from elementwise ops (autograd records each).
CellState composed_step(int mode, const Tensor& xg, const Tensor& hg, const Tensor& state, const Tensor& b_ih,
                        const Tensor& b_hh) {
  Tensor xb = b_ih.defined() ? add(xg, b_ih) : xg, hb = b_hh.defined() ? add(hg, b_hh) : hg;
  if (is_gru(mode)) {
    std::vector<Tensor> x = xb.chunk(3, 1), h = hb.chunk(3, 1);
    Tensor r = sigmoid(add(x[0], h[0])), z = sigmoid(add(x[1], h[1]));
    Tensor n = tanh(add(x[2], mul(r, h[2])));
    return {add(mul(rsub(z, 1.0), n), mul(z, state)), Tensor()};
  }
  Tensor a = add(xb, hb);
  if (!is_lstm(mode)) return {mode == VNN_RNN_TANH ? tanh(a) : relu(a), Tensor()};
  std::vector<Tensor> g = a.chunk(4, 1);
  Tensor i = sigmoid(g[0]), f = sigmoid(g[1]), c = add(mul(f, state), mul(i, tanh(g[2])));
  return {mul(sigmoid(g[3]), tanh(c)), c};
}

// The gradients of the fused step's pre-activations (RNN_CELL_BACKWARD's
// outputs) from elementwise ops, for a backend that has the forward kernel only.
std::vector<Tensor> composed_backward(int mode, const Tensor& dh, const Tensor& dc, const Tensor& saved,
                                      const Tensor& state, const Tensor& out) {
  if (mode == VNN_RNN_TANH) return {mul(dh, rsub(mul(out, out), 1.0))};
  if (mode == VNN_RNN_RELU) return {where(gt(out, 0.0), dh, 0.0)};
  if (is_lstm(mode)) {
    std::vector<Tensor> s = saved.chunk(4, 1);
    const Tensor &i = s[0], &f = s[1], &g = s[2], &o = s[3];
    Tensor tc = tanh(out);
    Tensor dct = add(dc, mul(mul(dh, o), rsub(mul(tc, tc), 1.0)));
    auto dsig = [](const Tensor& d, const Tensor& y) { return mul(mul(d, y), rsub(y, 1.0)); };
    Tensor da = cat({dsig(mul(dct, g), i), dsig(mul(dct, state), f), mul(mul(dct, i), rsub(mul(g, g), 1.0)),
                     dsig(mul(dh, tc), o)},
                    1);
    return {da, mul(dct, f)};
  }
  std::vector<Tensor> s = saved.chunk(4, 1);
  const Tensor &r = s[0], &z = s[1], &n = s[2], &hn = s[3];
  Tensor dn = mul(mul(dh, rsub(z, 1.0)), rsub(mul(n, n), 1.0));
  Tensor dz = mul(mul(mul(dh, sub(state, n)), z), rsub(z, 1.0));
  Tensor dr = mul(mul(mul(dn, hn), r), rsub(r, 1.0));
  return {cat({dr, dz, dn}, 1), cat({dr, dz, mul(dn, r)}, 1), mul(dh, z)};
}

}  // namespace

std::vector<Tensor> cell_backward(int mode, const Tensor& dh, const Tensor& dc, const Tensor& saved,
                                  const Tensor& state, const Tensor& out, const std::vector<Tensor>& dest) {
  const char* op = "rnn_cell_backward";
  const int64_t B = dh.size(0), H = dh.size(1);
  ::vnn::detail::DeviceContext& ctx = dh.impl()->ctx();
  const DType dt = dh.dtype();
  std::vector<Tensor> res = dest;
  std::vector<const Tensor*> in;
  const bool lstm = is_lstm(mode), gru = is_gru(mode);
  const std::vector<Shape> shapes = lstm  ? std::vector<Shape>{{B, 4 * H}, {B, H}}
                                    : gru ? std::vector<Shape>{{B, 3 * H}, {B, 3 * H}, {B, H}}
                                          : std::vector<Shape>{{B, H}};
  for (size_t k = res.size(); k < shapes.size(); ++k) res.push_back(::vnn::detail::make_empty(ctx, shapes[k], dt, op));
  if (lstm) in = {&dh, &dc, &saved, &state, &out};
  else if (gru) in = {&dh, &saved, &state};
  else in = {&dh, &out};
  std::vector<const Tensor*> outs;
  for (const Tensor& t : res) outs.push_back(&t);
  int64_t ints[] = {mode};
  try {
    ::vnn::detail::enqueue(VNN_OP_RNN_CELL_BACKWARD, op, ::vnn::detail::Span<const Tensor*>(in.data(), in.size()),
                           ::vnn::detail::Span<const Tensor*>(outs.data(), outs.size()), {},
                           ::vnn::detail::Span<int64_t>(ints, 1));
  } catch (const Unsupported&) {
    std::vector<Tensor> c = composed_backward(mode, dh, dc, saved, state, out);
    for (size_t k = 0; k < c.size(); ++k) res[k].copy_(c[k]);
  }
  return res;
}

bool fused_cell_into(int mode, const Tensor& xg, const Tensor& hg, const Tensor& state, const Tensor& b_ih,
                     const Tensor& b_hh, const Tensor& h, const Tensor& c, const Tensor& saved) {
  const bool bias = b_ih.defined();
  std::vector<const Tensor*> in = {&xg, &hg};
  if (state.defined()) in.push_back(&state);
  if (bias) in.push_back(&b_ih), in.push_back(&b_hh);
  std::vector<const Tensor*> outs = {&h};
  if (c.defined()) outs.push_back(&c);
  if (saved.defined()) outs.push_back(&saved);
  int64_t ints[] = {mode, int64_t(bias)};
  try {
    ::vnn::detail::enqueue(VNN_OP_RNN_CELL, "rnn_cell", ::vnn::detail::Span<const Tensor*>(in.data(), in.size()),
                           ::vnn::detail::Span<const Tensor*>(outs.data(), outs.size()), {},
                           ::vnn::detail::Span<int64_t>(ints, 2));
  } catch (const Unsupported&) {
    return false;
  }
  return true;
}

namespace {

// RNN_CELL with one autograd node; false where the backend declines.
bool fused_step(int mode, const Tensor& xg_in, const Tensor& hg_in, const Tensor& state_in, const Tensor& b_ih,
                const Tensor& b_hh, CellState* result) {
  const char* op = "rnn_cell";
  const DType dt = xg_in.dtype();
  if (dt != kFloat32 && dt != kFloat64) return false;
  const bool bias = b_ih.defined() && b_hh.defined();
  if (b_ih.defined() != b_hh.defined()) return false;
  const int64_t B = hg_in.size(0), G = is_lstm(mode) ? 4 : is_gru(mode) ? 3 : 1, H = hg_in.size(1) / G;
  Tensor xg = unit_rows(xg_in.detach()), hg = unit_rows(hg_in.detach());
  Tensor state = state_in.defined() ? unit_rows(state_in.detach()) : Tensor();
  Tensor bi = bias ? b_ih.detach().contiguous() : Tensor(), bh = bias ? b_hh.detach().contiguous() : Tensor();
  ::vnn::detail::DeviceContext& ctx = xg.impl()->ctx();
  // LSTM: h' and c' side by side in one buffer, so that one node owns both.
  Tensor out = ::vnn::detail::make_empty(ctx, {B, is_lstm(mode) ? 2 * H : H}, dt, op);
  Tensor h = is_lstm(mode) ? out.narrow(1, 0, H) : out, c = is_lstm(mode) ? out.narrow(1, H, H) : Tensor();
  Tensor saved = is_lstm(mode) || is_gru(mode) ? ::vnn::detail::make_empty(ctx, {B, 4 * H}, dt, op) : Tensor();
  if (!fused_cell_into(mode, xg, hg, state, bi, bh, h, c, saved)) return false;
  if (::vnn::detail::needs_grad({&xg_in, &hg_in, &state_in, &b_ih, &b_hh})) {
    Tensor keep_state = state, keep_saved = saved, keep_out = is_lstm(mode) ? c : h;
    ::vnn::detail::record(
        "rnn_cell", out, {&xg_in, &hg_in, &state_in, &b_ih, &b_hh},
        [=](const Tensor& g) {
          Tensor dh = is_lstm(mode) ? g.narrow(1, 0, H) : g, dc = is_lstm(mode) ? g.narrow(1, H, H) : Tensor();
          std::vector<Tensor> d =
              cell_backward(mode, unit_rows(dh), dc.defined() ? unit_rows(dc) : dc, keep_saved, keep_state, keep_out);
          Tensor dxg = d[0], dhg = is_gru(mode) ? d[1] : d[0];
          Tensor dstate = is_lstm(mode) ? d[1] : is_gru(mode) ? d[2] : Tensor();
          Tensor dbi = bias ? sum(dxg, {0}) : Tensor();
          Tensor dbh = bias ? (is_gru(mode) ? sum(dhg, {0}) : dbi) : Tensor();
          return std::vector<Tensor>{dxg, dhg, dstate, dbi, dbh};
        });
  }
  if (is_lstm(mode)) *result = {out.narrow(1, 0, H), out.narrow(1, H, H)};
  else *result = {out, Tensor()};
  return true;
}

}  // namespace

void set_fused_rnn_cell(bool enabled) { g_fused.store(enabled); }
bool fused_rnn_cell() { return g_fused.load(); }

CellState rnn_cell_step(int mode, const Tensor& xg, const Tensor& hg, const Tensor& state, const Tensor& b_ih,
                        const Tensor& b_hh) {
  const DType dt = xg.dtype();
  if (dt == kFloat16 || dt == kBFloat16) {
    auto up = [](const Tensor& t) { return t.defined() ? t.to(kFloat32) : t; };
    CellState s = rnn_cell_step(mode, up(xg), up(hg), up(state), up(b_ih), up(b_hh));
    return {s.h.to(dt), s.c.defined() ? s.c.to(dt) : s.c};
  }
  CellState r;
  if (fused_rnn_cell() && xg.numel() > 0 && fused_step(mode, xg, hg, state, b_ih, b_hh, &r)) return r;
  return composed_step(mode, xg, hg, state, b_ih, b_hh);
}

}  // namespace vnn::nn::detail

namespace vnn {

namespace {

// Checks a cell function's operands (PyTorch's messages, typed) and returns
// the unbatched flag; G gates.
bool check_cell(const char* op, const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih, const Tensor& b_hh, int64_t G) {
  VNN_CHECK(ValueError, input.defined() && hx.defined() && w_ih.defined() && w_hh.defined(), op,
            ": input, hx, w_ih and w_hh must be defined tensors");
  VNN_CHECK(ShapeError, input.dim() == 1 || input.dim() == 2, op, ": input must be 1-D [input_size] or 2-D [batch, "
            "input_size], got ", input.sizes());
  VNN_CHECK(DTypeError, is_floating(input.dtype()), op, ": input must be a floating dtype, got ", name(input.dtype()));
  VNN_CHECK(ShapeError, w_ih.dim() == 2 && w_hh.dim() == 2 && w_ih.size(0) % G == 0 && w_hh.size(0) == w_ih.size(0),
            op, ": w_ih ", w_ih.sizes(), " and w_hh ", w_hh.sizes(), " must be [", G, " * hidden_size, *]");
  const int64_t H = w_hh.size(0) / G;
  VNN_CHECK(ShapeError, w_ih.size(1) == input.size(-1), op, ": input has ", input.size(-1),
            " features but w_ih ", w_ih.sizes(), " expects ", w_ih.size(1));
  VNN_CHECK(ShapeError, w_hh.size(1) == H, op, ": w_hh ", w_hh.sizes(), " must be [", G * H, ", ", H, "]");
  const bool unbatched = input.dim() == 1;
  const Shape want = unbatched ? Shape{H} : Shape{input.size(0), H};
  VNN_CHECK(ShapeError, hx.sizes() == want, op, ": hidden state must have shape ", want.str(), " for input ",
            input.sizes(), ", got ", hx.sizes());
  for (const Tensor* b : {&b_ih, &b_hh})
    VNN_CHECK(ShapeError, !b->defined() || b->sizes() == Shape{G * H}, op, ": bias must have shape [", G * H,
              "], got ", b->sizes());
  for (const Tensor* t : {&hx, &w_ih, &w_hh, &b_ih, &b_hh}) {
    if (!t->defined()) continue;
    ::vnn::detail::check_same_device(input, *t, op, "weights and state");
    VNN_CHECK(DTypeError, t->dtype() == input.dtype(), op, ": every operand must have input's dtype ",
              name(input.dtype()), ", got ", name(t->dtype()));
  }
  return unbatched;
}

nn::detail::CellState cell_call(const char* op, int mode, const Tensor& input, const Tensor& hx, const Tensor& cx,
                                const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  const int64_t G = mode == VNN_RNN_LSTM ? 4 : mode == VNN_RNN_GRU ? 3 : 1;
  const bool unb = check_cell(op, input, hx, w_ih, w_hh, b_ih, b_hh, G);
  if (cx.defined())
    VNN_CHECK(ShapeError, cx.sizes() == hx.sizes(), op, ": cell state ", cx.sizes(), " must have hx's shape ",
              hx.sizes());
  auto rows = [unb](const Tensor& t) { return unb && t.defined() ? t.unsqueeze(0) : t; };
  Tensor x = rows(input), h = rows(hx);
  Tensor xg = matmul(x, w_ih.t()), hg = matmul(h, w_hh.t());
  Tensor state = mode == VNN_RNN_LSTM ? rows(cx) : mode == VNN_RNN_GRU ? h : Tensor();
  nn::detail::CellState s = nn::detail::rnn_cell_step(mode, xg, hg, state, b_ih, b_hh);
  if (unb) return {s.h.squeeze(0), s.c.defined() ? s.c.squeeze(0) : s.c};
  return s;
}

}  // namespace

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const std::tuple<Tensor, Tensor>& hx, const Tensor& w_ih,
                                     const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  auto s = cell_call("lstm_cell", VNN_RNN_LSTM, input, std::get<0>(hx), std::get<1>(hx), w_ih, w_hh, b_ih, b_hh);
  return {s.h, s.c};
}
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                const Tensor& b_hh) {
  return cell_call("gru_cell", VNN_RNN_GRU, input, hx, Tensor(), w_ih, w_hh, b_ih, b_hh).h;
}
Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  return cell_call("rnn_tanh_cell", VNN_RNN_TANH, input, hx, Tensor(), w_ih, w_hh, b_ih, b_hh).h;
}
Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  return cell_call("rnn_relu_cell", VNN_RNN_RELU, input, hx, Tensor(), w_ih, w_hh, b_ih, b_hh).h;
}

}  // namespace vnn
