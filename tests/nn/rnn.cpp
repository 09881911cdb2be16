// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RNN, LSTM, GRU, their cells and nn::utils::rnn on the device under test,
// against the textbook equations written here from plain vnn ops on the
// CPU (PyTorch's gate orders and formulas), through the fused RNN_CELL
// kernel and through the composed path backends without it take; float64
// finite-difference checks of both paths; PyTorch's state-dict keys; typed
// errors for bad input.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"
#include "vnn/nn/rnn.h"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;
namespace R = vnn::nn::utils::rnn;

namespace {

const Device kCpu("cpu", 0);

// Restores the fused setting when a test section ends.
struct FusedScope {
  explicit FusedScope(bool on) { nn::detail::set_fused_rnn_cell(on); }
  ~FusedScope() { nn::detail::set_fused_rnn_cell(true); }
};

Tensor uniform(const Shape& s, uint64_t seed, DType dt = kFloat32) {
  Generator gen(seed);
  return sub(mul(rand(s, TensorOptions(kCpu).with(dt), &gen), 2.0), 1.0);
}

enum class Kind { rnn_tanh, rnn_relu, lstm, gru };

struct Config {
  Kind kind;
  int64_t layers = 1;
  bool bidir = false, batch_first = false, bias = true, h0 = false;
  int64_t proj = 0;
};

std::string label(const Config& c) {
  const char* k[] = {"RNN(tanh)", "RNN(relu)", "LSTM", "GRU"};
  return std::string(k[int(c.kind)]) + " layers=" + std::to_string(c.layers) + (c.bidir ? " bidirectional" : "") +
         (c.batch_first ? " batch_first" : "") + (c.bias ? "" : " no-bias") + (c.h0 ? " h0" : "") +
         (c.proj ? " proj=" + std::to_string(c.proj) : "");
}

// The textbook step: h' (and c') from x [B, I], h, c and one direction's parameters.
void textbook_step(Kind kind, const std::map<std::string, Tensor>& p, const std::string& sfx, const Tensor& x,
                   Tensor& h, Tensor& c) {
  auto get = [&](const std::string& n) {
    auto it = p.find(n + sfx);
    return it == p.end() ? Tensor() : it->second;
  };
  Tensor gx = matmul(x, get("weight_ih").t()), gh = matmul(h, get("weight_hh").t());
  if (get("bias_ih").defined()) gx = add(gx, get("bias_ih")), gh = add(gh, get("bias_hh"));
  if (kind == Kind::lstm) {
    auto a = add(gx, gh).chunk(4, 1);
    Tensor i = sigmoid(a[0]), f = sigmoid(a[1]), g = tanh(a[2]), o = sigmoid(a[3]);
    c = add(mul(f, c), mul(i, g));
    h = mul(o, tanh(c));
    if (get("weight_hr").defined()) h = matmul(h, get("weight_hr").t());
  } else if (kind == Kind::gru) {
    auto xs = gx.chunk(3, 1), hs = gh.chunk(3, 1);
    Tensor r = sigmoid(add(xs[0], hs[0])), z = sigmoid(add(xs[1], hs[1]));
    Tensor n = tanh(add(xs[2], mul(r, hs[2])));
    h = add(mul(sub(ones_like(z), z), n), mul(z, h));
  } else {
    Tensor a = add(gx, gh);
    h = kind == Kind::rnn_tanh ? tanh(a) : relu(a);
  }
}

struct Result {
  Tensor out, hn, cn;
};

// The whole layer stack from the equations: x [T, B, I], h0 [L*D, B, Hout], c0 [L*D, B, H].
Result textbook(Kind kind, const std::map<std::string, Tensor>& p, int64_t layers, bool bidir, const Tensor& x,
                const Tensor& h0, const Tensor& c0) {
  const int64_t D = bidir ? 2 : 1, T = x.size(0);
  Tensor in = x;
  std::vector<Tensor> hn, cn;
  for (int64_t l = 0; l < layers; ++l) {
    std::vector<Tensor> dirs;
    for (int64_t d = 0; d < D; ++d) {
      const std::string sfx = "_l" + std::to_string(l) + (d ? "_reverse" : "");
      Tensor h = h0.select(0, l * D + d), c = kind == Kind::lstm ? c0.select(0, l * D + d) : Tensor();
      std::vector<Tensor> outs(static_cast<size_t>(T));
      for (int64_t s = 0; s < T; ++s) {
        const int64_t t = d ? T - 1 - s : s;
        textbook_step(kind, p, sfx, in.select(0, t), h, c);
        outs[size_t(t)] = h;
      }
      dirs.push_back(stack(outs, 0));
      hn.push_back(h), cn.push_back(c);
    }
    in = D == 2 ? cat(dirs, 2) : dirs[0];
  }
  return {in, stack(hn, 0), kind == Kind::lstm ? stack(cn, 0) : Tensor()};
}

// A module of the config built on the CPU with a fixed generator; the forward on any device.
struct Layer {
  Config cfg;
  int64_t I = 5, H = 6;
  std::shared_ptr<nn::Module> mod;
  Layer(const Config& c, DType dt = kFloat32) : cfg(c) {
    Generator gen(42);
    if (c.kind == Kind::lstm)
      mod = std::make_shared<nn::LSTMImpl>(nn::LSTMOptions(I, H).num_layers(c.layers).bidirectional(c.bidir)
                                               .batch_first(c.batch_first).bias(c.bias).proj_size(c.proj), &gen);
    else if (c.kind == Kind::gru)
      mod = std::make_shared<nn::GRUImpl>(nn::GRUOptions(I, H).num_layers(c.layers).bidirectional(c.bidir)
                                              .batch_first(c.batch_first).bias(c.bias), &gen);
    else
      mod = std::make_shared<nn::RNNImpl>(nn::RNNOptions(I, H).num_layers(c.layers).bidirectional(c.bidir)
                                              .batch_first(c.batch_first).bias(c.bias)
                                              .nonlinearity(c.kind == Kind::rnn_relu ? nn::RNNNonlinearity(nn::kReLU)
                                                                                     : nn::RNNNonlinearity(nn::kTanh)),
                                          &gen);
    mod->to(dt);
  }
  int64_t hout() const { return cfg.proj ? cfg.proj : H; }
  int64_t dirs() const { return cfg.bidir ? 2 : 1; }
  Result forward(const Tensor& x, const Tensor& h0, const Tensor& c0) {
    if (auto* m = dynamic_cast<nn::LSTMImpl*>(mod.get())) {
      auto [o, s] = h0.defined() ? m->forward(x, std::make_tuple(h0, c0)) : m->forward(x);
      return {o, std::get<0>(s), std::get<1>(s)};
    }
    if (auto* m = dynamic_cast<nn::GRUImpl*>(mod.get())) {
      auto [o, h] = m->forward(x, h0);
      return {o, h, Tensor()};
    }
    auto [o, h] = dynamic_cast<nn::RNNImpl*>(mod.get())->forward(x, h0);
    return {o, h, Tensor()};
  }
  std::map<std::string, Tensor> params_on_cpu() const {
    std::map<std::string, Tensor> p;
    for (auto& [k, v] : mod->named_parameters()) p[k] = v.detach().to(kCpu);
    return p;
  }
};

const std::vector<Config>& configs() {
  static const std::vector<Config> all = {
      {Kind::lstm},
      {Kind::lstm, 2, true, false, true, true},
      {Kind::lstm, 2, false, true, true, true, 3},
      {Kind::lstm, 1, true, false, false, false, 4},
      {Kind::gru},
      {Kind::gru, 2, true, true, true, true},
      {Kind::gru, 1, false, false, false, true},
      {Kind::rnn_tanh, 2, true, false, true, true},
      {Kind::rnn_relu, 2, false, true, true, false},
      {Kind::rnn_relu, 1, true, false, false, true},
  };
  return all;
}

// Forward and backward of one config on the device under test against the
// equations on the CPU: outputs, final states, input / h0 and parameter gradients.
void check_against_textbook(const Config& c) {
  INFO(label(c) << " on " << device_under_test() << (nn::detail::fused_rnn_cell() ? " (fused)" : " (composed)"));
  Layer layer(c);
  const int64_t T = 4, B = 3, LD = c.layers * layer.dirs();
  Tensor x = uniform({T, B, layer.I}, 1), h0 = mul(uniform({LD, B, layer.hout()}, 2), 0.5);
  Tensor c0 = mul(uniform({LD, B, layer.H}, 3), 0.5);
  Tensor gout = uniform({T, B, layer.dirs() * layer.hout()}, 4), gh = uniform({LD, B, layer.hout()}, 5);
  // The reference, with its own autograd on the CPU.
  auto p = layer.params_on_cpu();
  for (auto& [k, v] : p) v.requires_grad_(true);
  Tensor xr = x.clone().requires_grad_(true), hr = h0.clone().requires_grad_(true);
  Result ref = textbook(c.kind, p, c.layers, c.bidir, xr, c.h0 ? hr : zeros_like(h0), c.h0 ? c0 : zeros_like(c0));
  add(sum(mul(ref.out, gout)), sum(mul(ref.hn, gh))).backward();
  // The module on the device.
  const Device dev = device_under_test();
  layer.mod->to(dev);
  Tensor xd = (c.batch_first ? x.transpose(0, 1).contiguous() : x).to(dev).requires_grad_(true);
  Tensor hd = h0.to(dev).requires_grad_(true);
  Result got = layer.forward(xd, c.h0 ? hd : Tensor(), c.h0 && c.kind == Kind::lstm ? c0.to(dev) : Tensor());
  Tensor out = c.batch_first ? got.out.transpose(0, 1) : got.out;
  REQUIRE(out.sizes() == ref.out.sizes());
  CHECK(max_abs_diff(out.to(kCpu), ref.out) < 1e-5);
  CHECK(max_abs_diff(got.hn.to(kCpu), ref.hn) < 1e-5);
  if (c.kind == Kind::lstm) CHECK(max_abs_diff(got.cn.to(kCpu), ref.cn) < 1e-5);
  add(sum(mul(out, gout.to(dev))), sum(mul(got.hn, gh.to(dev)))).backward();
  Tensor gx = c.batch_first ? xd.grad().transpose(0, 1) : xd.grad();
  CHECK(max_abs_diff(gx.to(kCpu), xr.grad()) < 1e-5);
  if (c.h0) CHECK(max_abs_diff(hd.grad().to(kCpu), hr.grad()) < 1e-5);
  for (auto& [k, v] : layer.mod->named_parameters()) {
    INFO("parameter " << k);
    REQUIRE(v.grad().defined());
    CHECK(max_abs_diff(v.grad().to(kCpu), p[k].grad()) < 2e-5);
  }
}

}  // namespace

TEST_CASE("RNN, LSTM and GRU match the textbook equations, fused and composed") {
  for (bool fused : {true, false}) {
    FusedScope scope(fused);
    for (const Config& c : configs()) check_against_textbook(c);
  }
}

TEST_CASE("unbatched 2-D input equals a batch of one") {
  const Device dev = device_under_test();
  Generator gen(3);
  nn::GRU gru(nn::GRUOptions(4, 5).num_layers(2).bidirectional(true), &gen);
  gru->to(dev);
  Tensor x = uniform({6, 4}, 8).to(dev), h0 = uniform({4, 5}, 9).to(dev);
  auto [out, hn] = gru(x, h0);
  auto [out_b, hn_b] = gru(x.unsqueeze(1), h0.unsqueeze(1));
  CHECK(out.sizes() == Shape{6, 10});
  CHECK(hn.sizes() == Shape{4, 5});
  CHECK(max_abs_diff(out, out_b.squeeze(1)) < 1e-6);
  CHECK(max_abs_diff(hn, hn_b.squeeze(1)) < 1e-6);
  nn::LSTM lstm(nn::LSTMOptions(4, 5).proj_size(2), &gen);
  lstm->to(dev);
  auto [o2, s2] = lstm->forward(x);
  CHECK(o2.sizes() == Shape{6, 2});
  CHECK(std::get<0>(s2).sizes() == Shape{1, 2});
  CHECK(std::get<1>(s2).sizes() == Shape{1, 5});
}

TEST_CASE("packed sequences of unequal lengths match each sequence run alone") {
  const Device dev = device_under_test();
  const std::vector<int64_t> lengths = {3, 5, 1, 4};
  const int64_t B = 4, T = 5, I = 3, H = 4;
  Tensor padded = uniform({B, T, I}, 11).to(dev);  // batch_first
  for (int variant = 0; variant < 4; ++variant) {  // LSTM, LSTM with proj_size 2, GRU, RNN
    const Kind kind = variant < 2 ? Kind::lstm : variant == 2 ? Kind::gru : Kind::rnn_tanh;
    const int64_t P = variant == 1 ? 2 : H;
    INFO("kind " << int(kind) << (variant == 1 ? " proj_size 2" : "") << " on " << dev);
    Config c{kind, 2, true, true, true, true};
    Layer layer(c);
    layer.I = I;
    Generator gen(5);
    if (kind == Kind::lstm)
      layer.mod = std::make_shared<nn::LSTMImpl>(
          nn::LSTMOptions(I, H).num_layers(2).bidirectional(true).proj_size(variant == 1 ? 2 : 0), &gen);
    else if (kind == Kind::gru)
      layer.mod = std::make_shared<nn::GRUImpl>(nn::GRUOptions(I, H).num_layers(2).bidirectional(true), &gen);
    else
      layer.mod = std::make_shared<nn::RNNImpl>(nn::RNNOptions(I, H).num_layers(2).bidirectional(true), &gen);
    layer.mod->to(dev);
    Tensor h0 = uniform({4, B, P}, 12).to(dev), c0 = uniform({4, B, H}, 13).to(dev);
    R::PackedSequence packed =
        R::pack_padded_sequence(padded, from_vector<int64_t>(lengths, {B}), /*batch_first=*/true,
                                /*enforce_sorted=*/false);
    CHECK(packed.batch_sizes().to_vector<int64_t>() == std::vector<int64_t>{4, 3, 3, 2, 1});
    CHECK(packed.data().sizes() == Shape{13, I});
    R::PackedSequence out;
    Tensor hn, cn;
    if (auto* m = dynamic_cast<nn::LSTMImpl*>(layer.mod.get())) {
      auto [o, s] = m->forward_with_packed_input(packed, std::make_tuple(h0, c0));
      out = o, hn = std::get<0>(s), cn = std::get<1>(s);
    } else if (auto* g = dynamic_cast<nn::GRUImpl*>(layer.mod.get())) {
      std::tie(out, hn) = g->forward_with_packed_input(packed, h0);
    } else {
      std::tie(out, hn) = dynamic_cast<nn::RNNImpl*>(layer.mod.get())->forward_with_packed_input(packed, h0);
    }
    auto [unpacked, lens] = R::pad_packed_sequence(out, /*batch_first=*/true, /*padding_value=*/-7.0);
    CHECK(lens.to_vector<int64_t>() == lengths);
    REQUIRE(unpacked.sizes() == Shape{B, T, 2 * P});
    for (int64_t b = 0; b < B; ++b) {
      const int64_t L = lengths[size_t(b)];
      Tensor xb = padded.select(0, b).narrow(0, 0, L);
      Tensor h0b = h0.select(1, b), c0b = c0.select(1, b);
      Result alone;
      if (auto* m = dynamic_cast<nn::LSTMImpl*>(layer.mod.get())) {
        auto [o, s] = m->forward(xb, std::make_tuple(h0b, c0b));
        alone = {o, std::get<0>(s), std::get<1>(s)};
      } else {
        alone = layer.forward(xb, h0b, Tensor());
      }
      INFO("sequence " << b << " of length " << L);
      CHECK(max_abs_diff(unpacked.select(0, b).narrow(0, 0, L), alone.out) < 1e-5);
      CHECK(max_abs_diff(hn.select(1, b), alone.hn) < 1e-5);
      if (cn.defined()) CHECK(max_abs_diff(cn.select(1, b), alone.cn) < 1e-5);
      if (L < T) CHECK(max_abs_diff(unpacked.select(0, b).narrow(0, L, T - L), full({T - L, 2 * P}, -7.0)) == 0);
    }
  }
}

TEST_CASE("pad_sequence, pack_sequence and the sorted path") {
  const Device dev = device_under_test();
  Tensor a = uniform({4, 2}, 1).to(dev), b = uniform({2, 2}, 2).to(dev), c = uniform({1, 2}, 3).to(dev);
  Tensor p = R::pad_sequence({a, b, c}, /*batch_first=*/false, 0.5);
  REQUIRE(p.sizes() == Shape{4, 3, 2});
  CHECK(max_abs_diff(p.select(1, 0), a) == 0);
  CHECK(max_abs_diff(p.select(1, 1).narrow(0, 0, 2), b) == 0);
  CHECK(max_abs_diff(p.select(1, 2).narrow(0, 1, 3), full({3, 2}, 0.5)) == 0);
  CHECK(R::pad_sequence({a, b}, true).sizes() == Shape{2, 4, 2});
  R::PackedSequence packed = R::pack_sequence({a, b, c});  // sorted: no permutation kept
  CHECK_FALSE(packed.sorted_indices().defined());
  CHECK(packed.batch_sizes().to_vector<int64_t>() == std::vector<int64_t>{3, 2, 1, 1});
  auto [back, lens] = R::pad_packed_sequence(packed, false, 0.5, 6);
  CHECK(back.sizes() == Shape{6, 3, 2});
  CHECK(max_abs_diff(back.narrow(0, 0, 4), p) == 0);
  CHECK(lens.to_vector<int64_t>() == std::vector<int64_t>{4, 2, 1});
  std::vector<Tensor> back_seqs = R::unpack_sequence(R::pack_sequence({b, a, c}, /*enforce_sorted=*/false));
  REQUIRE(back_seqs.size() == 3);
  CHECK(max_abs_diff(back_seqs[0], b) == 0);
  CHECK(max_abs_diff(back_seqs[1], a) == 0);
  CHECK(max_abs_diff(back_seqs[2], c) == 0);
  std::vector<Tensor> cut = R::unpad_sequence(p, from_vector<int64_t>({4, 2, 1}, {3}));
  REQUIRE(cut.size() == 3);
  CHECK(cut[1].sizes() == Shape{2, 2});
  CHECK(max_abs_diff(cut[1], b) == 0);
  CHECK_THROWS_AS(R::pack_sequence({b, a}), ValueError);  // enforce_sorted with increasing lengths
  CHECK_THROWS_WITH(R::pack_padded_sequence(p, from_vector<int64_t>({4, 0, 1}, {3})),
                    Catch::Contains("pack_padded_sequence") && Catch::Contains("lengths[1]"));
}

TEST_CASE("state-dict keys and shapes are PyTorch's") {
  nn::LSTM lstm(nn::LSTMOptions(10, 20).num_layers(2).bidirectional(true).proj_size(5));
  std::vector<std::pair<std::string, Shape>> want;
  for (int l = 0; l < 2; ++l)
    for (std::string sfx : {"", "_reverse"}) {
      const std::string s = "_l" + std::to_string(l) + sfx;
      want.push_back({"weight_ih" + s, {80, l == 0 ? 10 : 10}});
      want.push_back({"weight_hh" + s, {80, 5}});
      want.push_back({"bias_ih" + s, {80}});
      want.push_back({"bias_hh" + s, {80}});
      want.push_back({"weight_hr" + s, {5, 20}});
    }
  lstm->flatten_parameters();
  CHECK(lstm->all_weights().size() == want.size());
  StateDict sd = lstm->state_dict();
  REQUIRE(sd.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    CHECK(sd[i].key() == want[i].first);
    CHECK(sd[i].value().sizes() == want[i].second);
  }
  nn::GRU gru(nn::GRUOptions(3, 4).bias(false));
  StateDict g = gru->state_dict();
  REQUIRE(g.size() == 2);
  CHECK(g[0].key() == "weight_ih_l0");
  CHECK(g[0].value().sizes() == Shape{12, 3});
  nn::LSTMCell cell(7, 3);
  StateDict cs = cell->state_dict();
  REQUIRE(cs.size() == 4);
  CHECK(cs[0].key() == "weight_ih");
  CHECK(cs[0].value().sizes() == Shape{12, 7});
  CHECK(cs[3].key() == "bias_hh");
  // PyTorch's init: every value within 1 / sqrt(hidden_size).
  for (auto& [k, v] : lstm->named_parameters()) CHECK(max(abs(v)).item<double>() <= 1.0 / std::sqrt(20.0) + 1e-7);
}

TEST_CASE("cells match the equations and a one-step layer") {
  const Device dev = device_under_test();
  Generator gen(9);
  Tensor x = uniform({3, 5}, 21).to(dev), h = uniform({3, 4}, 22).to(dev), c = uniform({3, 4}, 23).to(dev);
  nn::LSTMCell lc(5, 4);
  nn::GRUCell gc(5, 4);
  nn::RNNCell rc(nn::RNNCellOptions(5, 4).nonlinearity("relu"));
  for (nn::Module* m : {static_cast<nn::Module*>(lc.get()), static_cast<nn::Module*>(gc.get()),
                        static_cast<nn::Module*>(rc.get())})
    m->to(dev);
  auto params = [](nn::Module& m) {
    std::map<std::string, Tensor> p;
    for (auto& [k, v] : m.named_parameters()) p[k + "_l0"] = v.detach().to(kCpu);
    return p;
  };
  Tensor hr = h.to(kCpu), cr = c.to(kCpu);
  textbook_step(Kind::lstm, params(*lc), "_l0", x.to(kCpu), hr, cr);
  auto [h1, c1] = lc(x, std::make_tuple(h, c));
  CHECK(max_abs_diff(h1.to(kCpu), hr) < 1e-6);
  CHECK(max_abs_diff(c1.to(kCpu), cr) < 1e-6);
  hr = h.to(kCpu);
  textbook_step(Kind::gru, params(*gc), "_l0", x.to(kCpu), hr, cr);
  CHECK(max_abs_diff(gc(x, h).to(kCpu), hr) < 1e-6);
  hr = h.to(kCpu);
  textbook_step(Kind::rnn_relu, params(*rc), "_l0", x.to(kCpu), hr, cr);
  CHECK(max_abs_diff(rc(x, h).to(kCpu), hr) < 1e-6);
  // Unbatched and default state.
  CHECK(gc(x.select(0, 1)).sizes() == Shape{4});
  auto [hu, cu] = lc->forward(x.select(0, 1));
  CHECK(max_abs_diff(hu, std::get<0>(lc(x, std::make_tuple(zeros_like(h), zeros_like(c)))).select(0, 1)) < 1e-6);
  CHECK(cu.sizes() == Shape{4});
}

TEST_CASE("float64 finite differences: cells and 2-layer bidirectional LSTM / GRU, fused and composed") {
  const Device dev = device_under_test();
  auto in = [&](const Shape& s, uint64_t seed) {
    return mul(uniform(s, seed, kFloat64), 0.8).to(dev).requires_grad_(true);
  };
  auto check = [&](const char* what, const std::function<Tensor(const std::vector<Tensor>&)>& f,
                   const std::vector<Tensor>& xs) {
    INFO(what << " on " << dev << (nn::detail::fused_rnn_cell() ? " (fused)" : " (composed)"));
    auto r = autograd::gradcheck(f, xs);
    INFO(r.message);
    CHECK(r.ok);
  };
  for (bool fused : {true, false}) {
    FusedScope scope(fused);
    const int64_t B = 2, I = 3, H = 3;
    Tensor x = in({B, I}, 1), h = in({B, H}, 2), c = in({B, H}, 3);
    Tensor w4 = in({4 * H, I}, 4), u4 = in({4 * H, H}, 5), b4 = in({4 * H}, 6), v4 = in({4 * H}, 7);
    Tensor w3 = in({3 * H, I}, 8), u3 = in({3 * H, H}, 9), b3 = in({3 * H}, 10), v3 = in({3 * H}, 11);
    Tensor w1 = in({H, I}, 12), u1 = in({H, H}, 13), b1 = in({H}, 14), v1 = in({H}, 15);
    check("lstm_cell", [](auto& v) {
      auto [h1, c1] = lstm_cell(v[0], std::make_tuple(v[1], v[2]), v[3], v[4], v[5], v[6]);
      return cat({h1, mul(c1, 0.5)}, 1);
    }, {x, h, c, w4, u4, b4, v4});
    check("gru_cell", [](auto& v) { return gru_cell(v[0], v[1], v[2], v[3], v[4], v[5]); }, {x, h, w3, u3, b3, v3});
    check("rnn_tanh_cell", [](auto& v) { return rnn_tanh_cell(v[0], v[1], v[2], v[3], v[4], v[5]); },
          {x, h, w1, u1, b1, v1});
    check("rnn_relu_cell", [](auto& v) { return rnn_relu_cell(v[0], v[1], v[2], v[3], v[4], v[5]); },
          {x, h, w1, u1, b1, v1});
    Generator gen(17);
    nn::LSTM lstm(nn::LSTMOptions(I, H).num_layers(2).bidirectional(true), &gen);
    nn::GRU gru(nn::GRUOptions(I, H).num_layers(2).bidirectional(true), &gen);
    lstm->to(dev, kFloat64);
    gru->to(dev, kFloat64);
    Tensor xs = in({3, B, I}, 18), h0 = in({4, B, H}, 19), c0 = in({4, B, H}, 20);
    check("LSTM 2 layers, bidirectional", [&](auto& v) {
      auto [o, s] = lstm(v[0], std::make_tuple(v[1], v[2]));
      return cat({o.flatten(), std::get<0>(s).flatten(), std::get<1>(s).flatten()}, 0);
    }, {xs, h0, c0});
    check("GRU 2 layers, bidirectional", [&](auto& v) {
      auto [o, hn] = gru(v[0], v[1]);
      return cat({o.flatten(), hn.flatten()}, 0);
    }, {xs, h0});
  }
}

TEST_CASE("dropout between layers only in training mode") {
  const Device dev = device_under_test();
  Generator gen(4);
  nn::GRU gru(nn::GRUOptions(3, 8).num_layers(2).dropout(0.5), &gen);
  gru->to(dev);
  Tensor x = uniform({5, 2, 3}, 30).to(dev);
  gru->eval();
  Tensor a = std::get<0>(gru(x)), b = std::get<0>(gru(x));
  CHECK(max_abs_diff(a, b) == 0);
  gru->train();
  manual_seed(1);
  Tensor t = std::get<0>(gru(x));
  CHECK(max_abs_diff(t, a) > 1e-3);
}

TEST_CASE("bad input throws typed errors naming the module and option") {
  nn::LSTM lstm(nn::LSTMOptions(4, 6).num_layers(2));
  Tensor x = zeros({5, 3, 4});
  CHECK_THROWS_AS(lstm(x, std::make_tuple(zeros({2, 3, 5}), zeros({2, 3, 6}))), ShapeError);
  CHECK_THROWS_WITH(lstm(x, std::make_tuple(zeros({2, 3, 5}), zeros({2, 3, 6}))),
                    Catch::Contains("LSTM") && Catch::Contains("h0") && Catch::Contains("[2, 3, 6]"));
  CHECK_THROWS_WITH(lstm(x, std::make_tuple(zeros({2, 3, 6}), zeros({1, 3, 6}))),
                    Catch::Contains("LSTM") && Catch::Contains("c0"));
  CHECK_THROWS_AS(lstm(zeros({5, 3, 7})), ShapeError);
  CHECK_THROWS_WITH(lstm(zeros({5, 3, 7})), Catch::Contains("LSTM") && Catch::Contains("input_size is 4"));
  CHECK_THROWS_AS(lstm(zeros({5, 3, 4, 1})), ShapeError);
  CHECK_THROWS_AS(nn::LSTM(nn::LSTMOptions(4, 6).proj_size(6)), ValueError);
  CHECK_THROWS_WITH(nn::LSTM(nn::LSTMOptions(4, 6).proj_size(8)),
                    Catch::Contains("LSTM") && Catch::Contains("proj_size (8)") && Catch::Contains("hidden_size (6)"));
  CHECK_THROWS_WITH(nn::GRU(nn::GRUOptions(4, 6).dropout(1.5)), Catch::Contains("GRU") && Catch::Contains("dropout"));
  CHECK_THROWS_WITH(nn::RNN(nn::RNNOptions(4, 6).nonlinearity("sigmoid")), Catch::Contains("nonlinearity"));
  nn::GRUCell cell(4, 6);
  CHECK_THROWS_WITH(cell(zeros({3, 4}), zeros({3, 5})), Catch::Contains("GRUCell") && Catch::Contains("hx"));
  CHECK_THROWS_AS(cell(zeros({3, 5})), ShapeError);
  CHECK_THROWS_AS(gru_cell(zeros({3, 4}), zeros({3, 6}), zeros({18, 4}), zeros({17, 6})), ShapeError);
  CHECK_THROWS_AS(lstm(zeros({5, 3, 4}, kFloat64)), DTypeError);
}

TEST_CASE("the layers run the fused cell kernels where the backend has them") {
  const Device dev = device_under_test();
  Generator gen(6);
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2), &gen);
  lstm->to(dev);
  Tensor x = uniform({5, 2, 3}, 40).to(dev).requires_grad_(true);
  profiler::Profile prof;
  sum(std::get<0>(lstm(x))).backward();
  prof.stop();
  int fwd = 0, bwd = 0;
  for (const auto& e : prof.events()) {
    if (e.name.rfind("rnn_cell_backward", 0) == 0) ++bwd;
    else if (e.name.rfind("rnn_cell", 0) == 0) ++fwd;
  }
  INFO("on " << dev);
  // Both plugins here have the kernels (Kokkos every space, OpenCL); 5 steps x 2 layers each way.
  CHECK(fwd == 10);
  CHECK(bwd == 10);
}

TEST_CASE("clone copies the layers and cells without sharing") {
  const Device dev = device_under_test();
  Generator gen(8);
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true).proj_size(2), &gen);
  lstm->to(dev);
  auto copy = std::dynamic_pointer_cast<nn::LSTMImpl>(lstm->clone());
  REQUIRE(copy);
  Tensor x = uniform({5, 2, 3}, 50).to(dev);
  CHECK(max_abs_diff(std::get<0>(lstm(x)), std::get<0>(copy->forward(x))) == 0);
  CHECK(copy->state_dict().size() == lstm->state_dict().size());
  {
    NoGradGuard no_grad;
    copy->named_parameters()[0].value().fill_(0.0);
  }
  CHECK(max_abs_diff(std::get<0>(lstm(x)), std::get<0>(copy->forward(x))) > 0);
  nn::GRUCell cell(3, 4);
  auto cc = std::dynamic_pointer_cast<nn::GRUCellImpl>(cell->clone(dev));
  REQUIRE(cc);
  Tensor xc = uniform({2, 3}, 51).to(dev);
  cell->to(dev);
  CHECK(max_abs_diff(cell(xc), cc->forward(xc)) == 0);
  CHECK(cc->named_parameters().size() == 4);
}

TEST_CASE("bfloat16 and float16 layers compute their cells in float32") {
  const Device dev = device_under_test();
  for (DType dt : {kBFloat16, kFloat16}) {
    Generator gen(10);
    nn::GRU gru(nn::GRUOptions(3, 4).num_layers(2), &gen);
    gru->to(dev);
    Tensor x = uniform({4, 2, 3}, 60).to(dev);
    Tensor want = std::get<0>(gru(x));
    gru->to(dt);
    Tensor got = std::get<0>(gru(x.to(dt)));
    INFO(name(dt) << " on " << dev);
    CHECK(got.dtype() == dt);
    CHECK(max_abs_diff(got.to(kFloat32), want) < 0.05);
  }
}

TEST_CASE("under autocast (bfloat16) the layers run and stay close to float32") {
  const Device dev = device_under_test();
  Generator gen(12);
  nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true), &gen);
  lstm->to(dev);
  Tensor x = uniform({4, 2, 3}, 70).to(dev).requires_grad_(true);
  Tensor want = std::get<0>(lstm(x));
  Tensor got;
  {
    autocast::AutocastGuard guard(dev, kBFloat16);
    got = std::get<0>(lstm(x));
  }
  INFO("on " << dev);
  CHECK(max_abs_diff(got.to(kFloat32), want) < 0.05);
  sum(got.to(kFloat32)).backward();
  REQUIRE(x.grad().defined());
  CHECK(lstm->named_parameters()[0].value().grad().defined());
  // A malformed PackedSequence is refused, not read out of bounds.
  R::PackedSequence bad(zeros({5, 3}).to(dev), from_vector<int64_t>({2, 3}, {2}));
  CHECK_THROWS_AS(lstm->forward_with_packed_input(bad), ValueError);
  R::PackedSequence short_data(zeros({4, 3}).to(dev), from_vector<int64_t>({3, 2}, {2}));
  CHECK_THROWS_AS(lstm->forward_with_packed_input(short_data), ShapeError);
}
