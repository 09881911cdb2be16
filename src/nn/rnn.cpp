// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The recurrent layers of include/vnn/nn/rnn.h. Every input, padded or
// packed, runs as packed steps: data [N, I] with batch_sizes (a padded
// [L, B, I] is L steps of B rows). Per layer and direction the input
// projection of all steps is one GEMM (x W_ih^T), then each step is one GEMM
// h W_hh^T and one cell step (rnn_cell.hpp: the fused RNN_CELL kernel); a
// batch that shrinks (packed sequences ending) keeps its finished rows' last
// state, as PyTorch's packed RNNs do.
#include "vnn/nn/rnn.h"

#include <cmath>
#include <string>
#include <utility>

#include "nn/rnn_cell.hpp"
#include "vnn/autograd.h"
#include "vnn/detail/message.h"
#include "vnn/error.h"
#include "vnn/indexing.h"
#include "vnn/linalg.h"
#include "vnn/nn/functional.h"
#include "vnn/nn/init.h"

namespace vnn::nn {

RNNNonlinearity::RNNNonlinearity(TransformerActivationKind k) : kind(RNNNonlinearityKind::relu) {
  VNN_CHECK(ValueError, k == TransformerActivationKind::relu,
            "RNN: nonlinearity must be kTanh or kReLU (\"tanh\" or \"relu\")");
}

RNNNonlinearity::RNNNonlinearity(const std::string& name) : kind(RNNNonlinearityKind::tanh) {
  if (name == "relu") kind = RNNNonlinearityKind::relu;
  else VNN_CHECK(ValueError, name == "tanh", "RNN: nonlinearity \"", name, "\" must be \"tanh\" or \"relu\"");
}

namespace {

int64_t gates_of(int mode) { return mode == VNN_RNN_LSTM ? 4 : mode == VNN_RNN_GRU ? 3 : 1; }

void check_shape(const detail::RNNShape& s) {
  VNN_CHECK(ValueError, s.input_size > 0 && s.hidden_size > 0, s.name, ": input_size (", s.input_size,
            ") and hidden_size (", s.hidden_size, ") must be positive");
  VNN_CHECK(ValueError, s.num_layers >= 1, s.name, ": num_layers must be at least 1, got ", s.num_layers);
  VNN_CHECK(ValueError, s.dropout >= 0.0 && s.dropout <= 1.0, s.name, ": dropout must be a probability in [0, 1], got ",
            s.dropout);
  VNN_CHECK(ValueError, s.proj_size >= 0, s.name, ": proj_size must be >= 0 (0: no projection), got ", s.proj_size);
  VNN_CHECK(ValueError, s.proj_size < s.hidden_size, s.name, ": proj_size (", s.proj_size,
            ") must be smaller than hidden_size (", s.hidden_size, "); lower proj_size or use 0 for none");
}

// Draws t from U(-1/sqrt(H), 1/sqrt(H)) and registers it.
Tensor uniform_param(Module& m, const std::string& name, const Shape& shape, int64_t hidden, Generator* gen) {
  Tensor t = empty(shape);
  const double bound = 1.0 / std::sqrt(double(hidden));
  init::uniform_(t, -bound, bound, gen);
  return m.register_parameter(name, t);
}

}  // namespace

// ---------------------------------------------------------------- layers

RNNImplBase::RNNImplBase(const detail::RNNShape& shape, Generator* gen) : Module(shape.name), shape_(shape) {
  check_shape(shape_);
  build(gen);
}

void RNNImplBase::build(Generator* gen) {
  const detail::RNNShape& s = shape_;
  const int64_t D = s.bidirectional ? 2 : 1, H = s.hidden_size, G = gates_of(s.mode);
  const int64_t hout = s.proj_size > 0 ? s.proj_size : H;
  weights_.assign(size_t(s.num_layers * D), std::vector<Tensor>(5));  // sized once: the members stay put
  for (int64_t l = 0; l < s.num_layers; ++l)
    for (int64_t d = 0; d < D; ++d) {
      const std::string sfx = vnn::detail::str_cat("_l", l, d == 1 ? "_reverse" : "");
      const int64_t in = l == 0 ? s.input_size : hout * D;
      std::vector<Tensor>& w = weights_[size_t(l * D + d)];
      w[0] = uniform_param(*this, "weight_ih" + sfx, {G * H, in}, H, gen);
      w[1] = uniform_param(*this, "weight_hh" + sfx, {G * H, hout}, H, gen);
      if (s.bias) {
        w[2] = uniform_param(*this, "bias_ih" + sfx, {G * H}, H, gen);
        w[3] = uniform_param(*this, "bias_hh" + sfx, {G * H}, H, gen);
      }
      if (s.proj_size > 0)
        w[4] = uniform_param(*this, "weight_hr" + sfx, {s.proj_size, H}, H, gen);
    }
}

void RNNImplBase::reset_parameters(Generator* gen) {
  const double bound = 1.0 / std::sqrt(double(shape_.hidden_size));
  autograd::NoGradGuard no_grad;
  for (Tensor& t : parameters(false)) init::uniform_(t, -bound, bound, gen);
}

std::vector<Tensor> RNNImplBase::all_weights() const { return parameters(false); }

std::string RNNImplBase::describe() const {
  const detail::RNNShape& s = shape_;
  std::string d = vnn::detail::str_cat(s.name, "(", s.input_size, ", ", s.hidden_size);
  if (s.proj_size > 0) d += vnn::detail::str_cat(", proj_size=", s.proj_size);
  if (s.num_layers != 1) d += vnn::detail::str_cat(", num_layers=", s.num_layers);
  if (s.mode == VNN_RNN_RELU) d += ", nonlinearity=relu";
  if (!s.bias) d += ", bias=false";
  if (s.batch_first) d += ", batch_first=true";
  if (s.dropout > 0) d += vnn::detail::str_cat(", dropout=", s.dropout);
  if (s.bidirectional) d += ", bidirectional=true";
  return d + ")";
}

namespace {

// One direction of one layer over packed steps, one autograd node per step
// (the path where the fused kernel is off or declined): xg_all [N, G*H] (the input
// projection of every step), h0 [B, Hout], c0 [B, H] (LSTM) with B =
// batch_sizes[0]; w = w_ih, w_hh, b_ih, b_hh, w_hr. Returns (out [N, Hout], h_T, c_T).
std::tuple<Tensor, Tensor, Tensor> run_direction(int mode, const Tensor& xg_all, const std::vector<int64_t>& bs,
                                                 const std::vector<int64_t>& offsets, const Tensor& h0,
                                                 const Tensor& c0, const std::vector<Tensor>& w, bool reverse) {
  const int64_t T = int64_t(bs.size());
  const bool lstm = mode == VNN_RNN_LSTM;
  std::vector<Tensor> outs(static_cast<size_t>(T));
  Tensor h, c;
  auto step = [&](int64_t t) {
    Tensor xg = xg_all.narrow(0, offsets[size_t(t)], bs[size_t(t)]);
    Tensor hg = matmul(h, w[1].t());
    Tensor state = lstm ? c : mode == VNN_RNN_GRU ? h : Tensor();
    detail::CellState s = detail::rnn_cell_step(mode, xg, hg, state, w[2], w[3]);
    h = w[4].defined() ? matmul(s.h, w[4].t()) : s.h;
    c = s.c;
    outs[size_t(t)] = h;
  };
  if (!reverse) {
    h = h0, c = c0;
    int64_t cur = h0.size(0);
    std::vector<Tensor> done_h, done_c;  // rows whose sequences ended, latest first once reversed
    for (int64_t t = 0; t < T; ++t) {
      const int64_t b = bs[size_t(t)];
      if (b < cur) {
        done_h.push_back(h.narrow(0, b, cur - b)), h = h.narrow(0, 0, b);
        if (lstm) done_c.push_back(c.narrow(0, b, cur - b)), c = c.narrow(0, 0, b);
        cur = b;
      }
      step(t);
    }
    if (!done_h.empty()) {
      std::vector<Tensor> hs{h}, cs{c};
      for (auto it = done_h.rbegin(); it != done_h.rend(); ++it) hs.push_back(*it);
      for (auto it = done_c.rbegin(); it != done_c.rend(); ++it) cs.push_back(*it);
      h = cat(hs, 0);
      if (lstm) c = cat(cs, 0);
    }
  } else {
    int64_t cur = bs[size_t(T - 1)];
    h = h0.narrow(0, 0, cur), c = lstm ? c0.narrow(0, 0, cur) : Tensor();
    for (int64_t t = T - 1; t >= 0; --t) {
      const int64_t b = bs[size_t(t)];
      if (b > cur) {  // sequences that start here (from their end) join with their initial state
        h = cat({h, h0.narrow(0, cur, b - cur)}, 0);
        if (lstm) c = cat({c, c0.narrow(0, cur, b - cur)}, 0);
        cur = b;
      }
      step(t);
    }
  }
  return {cat(outs, 0), h, c};
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> RNNImplBase::run(const Tensor& data, const std::vector<int64_t>& bs,
                                                    const Tensor& h0, const Tensor& c0) {
  const detail::RNNShape& s = shape_;
  const int64_t D = s.bidirectional ? 2 : 1;
  const bool lstm = s.mode == VNN_RNN_LSTM;
  std::vector<int64_t> offsets(bs.size() + 1, 0);
  for (size_t t = 0; t < bs.size(); ++t) offsets[t + 1] = offsets[t] + bs[t];
  Tensor x = data;
  std::vector<Tensor> hn, cn;
  for (int64_t l = 0; l < s.num_layers; ++l) {
    std::vector<Tensor> dir_out;
    for (int64_t d = 0; d < D; ++d) {
      const std::vector<Tensor>& w = weights_[size_t(l * D + d)];
      Tensor xg_all = matmul(x, w[0].t());
      Tensor h_init = h0.select(0, l * D + d), c_init = lstm ? c0.select(0, l * D + d) : Tensor();
      Tensor out, h, c;
      if (!detail::fused_rnn_cell() ||
          !detail::fused_direction(s.mode, xg_all, bs, h_init, c_init, w, d == 1, &out, &h, &c))
        std::tie(out, h, c) = run_direction(s.mode, xg_all, bs, offsets, h_init, c_init, w, d == 1);
      dir_out.push_back(out), hn.push_back(h), cn.push_back(c);
    }
    x = D == 2 ? cat(dir_out, 1) : dir_out[0];
    if (s.dropout > 0 && is_training() && l + 1 < s.num_layers)
      x = functional::dropout(x, functional::DropoutFuncOptions().p(s.dropout).training(true));
  }
  return {x, stack(hn, 0), lstm ? stack(cn, 0) : Tensor()};
}

namespace {

// The initial state: hx checked against `want`, or zeros like `like`.
Tensor initial_state(const char* module, const char* arg, const Tensor& hx, const Shape& want, const Tensor& like,
                     const char* what) {
  if (!hx.defined()) return zeros(want, TensorOptions().dtype(like.dtype()).device(like.device()));
  VNN_CHECK(ShapeError, hx.sizes() == want, module, ": ", arg, " must have shape ", want.str(), " (", what,
            "), got ", hx.sizes(), "; check hidden_size, num_layers, bidirectional and the batch size");
  VNN_CHECK(DTypeError, hx.dtype() == like.dtype(), module, ": ", arg, " dtype ", name(hx.dtype()),
            " differs from the input's ", name(like.dtype()));
  VNN_CHECK(DeviceMismatch, hx.device() == like.device(), module, ": ", arg, " is on ", hx.device(),
            ", the input on ", like.device(), "; move it with .to(", like.device(), ")");
  return hx;
}

void check_input(const detail::RNNShape& s, const Tensor& x, const Tensor& w, int64_t features) {
  VNN_CHECK(ShapeError, features == s.input_size, s.name, ": input has ", features, " features (shape ", x.sizes(),
            ") but input_size is ", s.input_size, "; give input [L, N, ", s.input_size, "] or build the layer with "
            "input_size=", features);
  VNN_CHECK(DTypeError, x.dtype() == w.dtype(), s.name, ": input dtype ", name(x.dtype()),
            " differs from the parameters' ", name(w.dtype()), "; convert one with .to()");
  VNN_CHECK(DeviceMismatch, x.device() == w.device(), s.name, ": input is on ", x.device(), ", the parameters on ",
            w.device(), "; move the module with ->to(", x.device(), ")");
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> RNNImplBase::run_padded(const Tensor& input, const Tensor& hx, const Tensor& cx) {
  const detail::RNNShape& s = shape_;
  VNN_CHECK(ValueError, input.defined(), s.name, ": input is an undefined tensor");
  VNN_CHECK(ShapeError, input.dim() == 2 || input.dim() == 3, s.name,
            ": input must be 2-D (unbatched [L, input_size]) or 3-D ([L, N, input_size], [N, L, input_size] with "
            "batch_first), got shape ", input.sizes());
  const bool unbatched = input.dim() == 2;
  Tensor x = unbatched ? input.unsqueeze(1) : s.batch_first ? input.transpose(0, 1) : input;  // [T, B, I]
  check_input(s, input, weights_[0][0], x.size(2));
  const int64_t T = x.size(0), B = x.size(1), D = s.bidirectional ? 2 : 1;
  VNN_CHECK(ShapeError, T > 0 && B > 0, s.name, ": input ", input.sizes(), " has no steps or no sequences");
  const int64_t hout = s.proj_size > 0 ? s.proj_size : s.hidden_size;
  auto state = [&](const Tensor& t, const char* arg, int64_t width) {
    Shape want = unbatched ? Shape{s.num_layers * D, width} : Shape{s.num_layers * D, B, width};
    Tensor v = initial_state(s.name, arg, t, want, input, "[num_layers * num_directions, batch, hidden]");
    return unbatched ? v.unsqueeze(1) : v;
  };
  Tensor h0 = state(hx, "h0 (hx)", hout);
  Tensor c0 = s.mode == VNN_RNN_LSTM ? state(cx, "c0", s.hidden_size) : Tensor();
  auto [out, hn, cn] = run(x.reshape({T * B, s.input_size}), std::vector<int64_t>(size_t(T), B), h0, c0);
  out = out.view({T, B, D * hout});
  if (unbatched) return {out.squeeze(1), hn.squeeze(1), cn.defined() ? cn.squeeze(1) : cn};
  return {s.batch_first ? out.transpose(0, 1) : out, hn, cn};
}

std::tuple<utils::rnn::PackedSequence, Tensor, Tensor> RNNImplBase::run_packed(
    const utils::rnn::PackedSequence& input, const Tensor& hx, const Tensor& cx) {
  const detail::RNNShape& s = shape_;
  VNN_CHECK(ValueError, input.is_defined() && input.data().dim() == 2, s.name,
            ": a PackedSequence input needs data [sum of lengths, input_size]");
  const Tensor& data = input.data();
  check_input(s, data, weights_[0][0], data.size(1));
  const std::vector<int64_t> bs = input.batch_sizes().to_vector<int64_t>();
  VNN_CHECK(ShapeError, !bs.empty() && bs[0] > 0, s.name, ": a PackedSequence with no steps");
  int64_t rows = 0;
  for (size_t t = 0; t < bs.size(); ++t) {
    VNN_CHECK(ValueError, bs[t] > 0 && (t == 0 || bs[t] <= bs[t - 1]), s.name, ": PackedSequence batch_sizes must be "
              "positive and non-increasing (as pack_padded_sequence makes them); step ", t, " has ", bs[t]);
    rows += bs[t];
  }
  VNN_CHECK(ShapeError, rows == data.size(0), s.name, ": PackedSequence data has ", data.size(0),
            " rows but its batch_sizes sum to ", rows);
  const int64_t B = bs[0], D = s.bidirectional ? 2 : 1, hout = s.proj_size > 0 ? s.proj_size : s.hidden_size;
  auto state = [&](const Tensor& t, const char* arg, int64_t width) {
    Tensor v = initial_state(s.name, arg, t, {s.num_layers * D, B, width}, data,
                             "[num_layers * num_directions, batch, hidden]");
    const Tensor& order = input.sorted_indices();
    return t.defined() && order.defined() ? v.index_select(1, order.to(v.device())) : v;
  };
  Tensor h0 = state(hx, "h0 (hx)", hout);
  Tensor c0 = s.mode == VNN_RNN_LSTM ? state(cx, "c0", s.hidden_size) : Tensor();
  auto [out, hn, cn] = run(data, bs, h0, c0);
  const Tensor& back = input.unsorted_indices();
  if (back.defined()) {
    hn = hn.index_select(1, back.to(hn.device()));
    if (cn.defined()) cn = cn.index_select(1, back.to(cn.device()));
  }
  return {utils::rnn::PackedSequence(out, input.batch_sizes(), input.sorted_indices(), input.unsorted_indices()), hn,
          cn};
}

RNNImpl::RNNImpl(const RNNOptions& o, Generator* gen)
    : RNNImplBase({"RNN", o.nonlinearity().kind == RNNNonlinearityKind::relu ? VNN_RNN_RELU : VNN_RNN_TANH,
                   o.input_size(), o.hidden_size(), o.num_layers(), 0, o.bias(), o.batch_first(), o.bidirectional(),
                   o.dropout()},
                  gen),
      options(o) {}

std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& input, const Tensor& hx) {
  auto [out, hn, cn] = run_padded(input, hx, Tensor());
  return {out, hn};
}

std::tuple<utils::rnn::PackedSequence, Tensor> RNNImpl::forward_with_packed_input(
    const utils::rnn::PackedSequence& packed_input, const Tensor& hx) {
  auto [out, hn, cn] = run_packed(packed_input, hx, Tensor());
  return {out, hn};
}

LSTMImpl::LSTMImpl(const LSTMOptions& o, Generator* gen)
    : RNNImplBase({"LSTM", VNN_RNN_LSTM, o.input_size(), o.hidden_size(), o.num_layers(), o.proj_size(), o.bias(),
                   o.batch_first(), o.bidirectional(), o.dropout()},
                  gen),
      options(o) {}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(
    const Tensor& input, const std::optional<std::tuple<Tensor, Tensor>>& hx) {
  auto [out, hn, cn] =
      hx ? run_padded(input, std::get<0>(*hx), std::get<1>(*hx)) : run_padded(input, Tensor(), Tensor());
  return {out, {hn, cn}};
}

std::tuple<utils::rnn::PackedSequence, std::tuple<Tensor, Tensor>> LSTMImpl::forward_with_packed_input(
    const utils::rnn::PackedSequence& packed_input, const std::optional<std::tuple<Tensor, Tensor>>& hx) {
  auto [out, hn, cn] = hx ? run_packed(packed_input, std::get<0>(*hx), std::get<1>(*hx))
                          : run_packed(packed_input, Tensor(), Tensor());
  return {out, {hn, cn}};
}

GRUImpl::GRUImpl(const GRUOptions& o, Generator* gen)
    : RNNImplBase({"GRU", VNN_RNN_GRU, o.input_size(), o.hidden_size(), o.num_layers(), 0, o.bias(), o.batch_first(),
                   o.bidirectional(), o.dropout()},
                  gen),
      options(o) {}

std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, const Tensor& hx) {
  auto [out, hn, cn] = run_padded(input, hx, Tensor());
  return {out, hn};
}

std::tuple<utils::rnn::PackedSequence, Tensor> GRUImpl::forward_with_packed_input(
    const utils::rnn::PackedSequence& packed_input, const Tensor& hx) {
  auto [out, hn, cn] = run_packed(packed_input, hx, Tensor());
  return {out, hn};
}

// ---------------------------------------------------------------- cells

RNNCellImplBase::RNNCellImplBase(const char* name, int mode, int64_t input_size, int64_t hidden_size, bool bias,
                                 Generator* gen)
    : Module(name), mode_(mode), input_size_(input_size), hidden_size_(hidden_size), bias_(bias) {
  VNN_CHECK(ValueError, input_size > 0 && hidden_size > 0, name, ": input_size (", input_size, ") and hidden_size (",
            hidden_size, ") must be positive");
  build(gen);
}

void RNNCellImplBase::build(Generator* gen) {
  const int64_t G = gates_of(mode_), H = hidden_size_;
  weight_ih = uniform_param(*this, "weight_ih", {G * H, input_size_}, H, gen);
  weight_hh = uniform_param(*this, "weight_hh", {G * H, H}, H, gen);
  if (bias_) {
    bias_ih = uniform_param(*this, "bias_ih", {G * H}, H, gen);
    bias_hh = uniform_param(*this, "bias_hh", {G * H}, H, gen);
  } else {
    bias_ih = Tensor(), bias_hh = Tensor();
  }
}

void RNNCellImplBase::reset_parameters(Generator* gen) {
  const double bound = 1.0 / std::sqrt(double(hidden_size_));
  autograd::NoGradGuard no_grad;
  for (Tensor& t : parameters(false)) init::uniform_(t, -bound, bound, gen);
}

std::string RNNCellImplBase::describe() const {
  std::string d = vnn::detail::str_cat(type_name(), "(", input_size_, ", ", hidden_size_);
  if (!bias_) d += ", bias=false";
  if (mode_ == VNN_RNN_RELU) d += ", nonlinearity=relu";
  return d + ")";
}

std::tuple<Tensor, Tensor, bool> RNNCellImplBase::batched(const Tensor& input, const Tensor& hx,
                                                          const char* state_name) const {
  const char* n = type_name().c_str();
  VNN_CHECK(ValueError, input.defined(), n, ": input is an undefined tensor");
  VNN_CHECK(ShapeError, input.dim() == 1 || input.dim() == 2, n,
            ": input must be 1-D [input_size] or 2-D [batch, input_size], got shape ", input.sizes());
  VNN_CHECK(ShapeError, input.size(-1) == input_size_, n, ": input has ", input.size(-1), " features (shape ",
            input.sizes(), ") but input_size is ", input_size_);
  VNN_CHECK(DTypeError, input.dtype() == weight_ih.dtype(), n, ": input dtype ", name(input.dtype()),
            " differs from the parameters' ", name(weight_ih.dtype()));
  const bool unb = input.dim() == 1;
  Tensor x = unb ? input.unsqueeze(0) : input;
  const Shape want = unb ? Shape{hidden_size_} : Shape{x.size(0), hidden_size_};
  Tensor h = initial_state(n, state_name, hx, want, input, "[batch, hidden_size]");
  return {x, unb ? h.unsqueeze(0) : h, unb};
}

RNNCellImpl::RNNCellImpl(const RNNCellOptions& o, Generator* gen)
    : RNNCellImplBase("RNNCell", o.nonlinearity().kind == RNNNonlinearityKind::relu ? VNN_RNN_RELU : VNN_RNN_TANH,
                      o.input_size(), o.hidden_size(), o.bias(), gen),
      options(o) {}

Tensor RNNCellImpl::forward(const Tensor& input, const Tensor& hx) {
  auto [x, h, unb] = batched(input, hx, "hx");
  Tensor out = mode_ == VNN_RNN_RELU ? rnn_relu_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh)
                                     : rnn_tanh_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh);
  return unb ? out.squeeze(0) : out;
}

LSTMCellImpl::LSTMCellImpl(const LSTMCellOptions& o, Generator* gen)
    : RNNCellImplBase("LSTMCell", VNN_RNN_LSTM, o.input_size(), o.hidden_size(), o.bias(), gen), options(o) {}

std::tuple<Tensor, Tensor> LSTMCellImpl::forward(const Tensor& input,
                                                 const std::optional<std::tuple<Tensor, Tensor>>& hx) {
  auto [x, h, unb] = batched(input, hx ? std::get<0>(*hx) : Tensor(), "h0");
  auto [x2, c, unb2] = batched(input, hx ? std::get<1>(*hx) : Tensor(), "c0");
  (void)x2, (void)unb2;
  auto [h1, c1] = lstm_cell(x, {h, c}, weight_ih, weight_hh, bias_ih, bias_hh);
  if (unb) return {h1.squeeze(0), c1.squeeze(0)};
  return {h1, c1};
}

GRUCellImpl::GRUCellImpl(const GRUCellOptions& o, Generator* gen)
    : RNNCellImplBase("GRUCell", VNN_RNN_GRU, o.input_size(), o.hidden_size(), o.bias(), gen), options(o) {}

Tensor GRUCellImpl::forward(const Tensor& input, const Tensor& hx) {
  auto [x, h, unb] = batched(input, hx, "hx");
  Tensor out = gru_cell(x, h, weight_ih, weight_hh, bias_ih, bias_hh);
  return unb ? out.squeeze(0) : out;
}

}  // namespace vnn::nn
