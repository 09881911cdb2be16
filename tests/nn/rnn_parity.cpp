// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Parity with torch.nn: LSTM (2 layers, bidirectional, proj_size,
// batch_first), GRU (bidirectional), RNN (relu), an LSTM over packed
// sequences of unequal lengths, LSTMCell and GRUCell, built in PyTorch with
// seed 0 (rnn_torch.py), their state_dicts loaded unchanged (strict:
// PyTorch's keys) into vnn's modules on the device under test; outputs,
// final states and the gradients of every input and parameter agree within
// 1e-5 relative (max |vnn - torch| / max |torch|) in float32. Exits 77
// (skipped, with the reason) when no python3 has torch: VNN_PYTHON, the
// bench venv (bench/torch2_venv.sh's ~/.cache/vnn/torch2-venv), python3,
// /usr/bin/python3.
#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"
#include "vnn/nn/rnn.h"

using namespace vnn;
using vnn::test::device_under_test;
namespace R = vnn::nn::utils::rnn;

namespace {

constexpr double kRelTol = 1e-5;

int run(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 1;
}

const std::string& fixtures() {
  static const std::string dir = [] {
    std::vector<std::string> candidates;
    if (const char* p = std::getenv("VNN_PYTHON")) candidates.push_back(p);
    if (const char* home = std::getenv("HOME")) candidates.push_back(std::string(home) + "/.cache/vnn/torch2-venv/bin/python3");
    candidates.push_back("python3");
    candidates.push_back("/usr/bin/python3");
    std::string d = "/tmp/vnn_rnn_parity_" + std::to_string(::getpid());
    if (run("mkdir -p " + d) != 0) {
      std::cerr << "cannot create " << d << "\n";
      std::exit(1);
    }
    int rc = 77;
    for (auto& c : candidates) {
      rc = run(c + " " + VNN_RNN_TORCH_PY + " write " + d + " 2>/dev/null");
      if (rc != 77 && rc != 127) break;
    }
    if (rc == 77 || rc == 127) {
      run("rm -rf " + d);
      std::cout << "SKIP: no python3 with torch (tried VNN_PYTHON, ~/.cache/vnn/torch2-venv, python3, /usr/bin/python3)\n";
      std::exit(77);
    }
    if (rc != 0) {
      std::cerr << "rnn_torch.py failed (exit " << rc << ") writing the fixtures into " << d << "\n";
      std::exit(1);
    }
    std::atexit([] { run("rm -rf /tmp/vnn_rnn_parity_" + std::to_string(::getpid())); });
    return d;
  }();
  return dir;
}

struct Case {
  io::TensorMap all;
  Device dev = device_under_test();
  explicit Case(const std::string& name) : all(io::load(fixtures() + "/" + name + ".safetensors")) {}
  StateDict part(const std::string& prefix) const {
    StateDict out;
    for (auto& [k, v] : all)
      if (k.rfind(prefix + ".", 0) == 0) out.emplace_back(k.substr(prefix.size() + 1), v);
    return out;
  }
  Tensor input(const std::string& n, bool grad = false) const {
    Tensor t = all.at("input." + n).to(dev);
    return grad ? t.detach().requires_grad_() : t;
  }
  void load(nn::Module& m) const {
    m.load_state_dict(part("param"), /*strict=*/true);
    m.to(dev);
  }
};

void compare(const std::string& what, const Tensor& got, const Tensor& want) {
  REQUIRE(got.defined());
  REQUIRE(got.sizes() == want.sizes());
  auto g = got.to_vector<double>(), w = want.to_vector<double>();
  double diff = 0, scale = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    diff = std::max(diff, std::fabs(g[i] - w[i]));
    scale = std::max(scale, std::fabs(w[i]));
  }
  INFO(what << " on " << device_under_test() << ": relative error " << diff / std::max(scale, 1e-30));
  CHECK(diff / std::max(scale, 1e-30) <= kRelTol);
}

// Every output against PyTorch's, then the loss sum(out * weight) backward and every gradient.
void check(const Case& c, const std::vector<std::pair<std::string, Tensor>>& outs,
           const std::vector<std::pair<std::string, Tensor>>& inputs, nn::Module& m) {
  Tensor loss;
  for (auto& [n, t] : outs) {
    compare("output " + n, t, c.all.at("output." + n));
    Tensor term = sum(mul(t, c.all.at("weight." + n).to(c.dev)));
    loss = loss.defined() ? add(loss, term) : term;
  }
  loss.backward();
  for (auto& [n, t] : inputs) compare("grad of input " + n, t.grad(), c.all.at("grad.input." + n));
  auto want = c.part("grad.param");
  auto params = m.named_parameters();
  CHECK(params.size() == want.size());
  for (auto& [k, p] : params) compare("grad of " + k, p.grad(), want.at(k));
}

}  // namespace

TEST_CASE("LSTM, GRU, RNN and the cells match torch.nn") {
  SECTION("LSTM: 2 layers, bidirectional, proj_size, batch_first, initial state") {
    Case c("lstm_proj_bi");
    nn::LSTM m(nn::LSTMOptions(5, 8).num_layers(2).bidirectional(true).proj_size(3).batch_first(true));
    c.load(*m);
    Tensor x = c.input("x", true), h0 = c.input("h0", true), c0 = c.input("c0", true);
    auto [out, state] = m(x, std::make_tuple(h0, c0));
    check(c, {{"out", out}, {"hn", std::get<0>(state)}, {"cn", std::get<1>(state)}},
          {{"x", x}, {"h0", h0}, {"c0", c0}}, *m);
  }
  SECTION("GRU: 2 layers, bidirectional") {
    Case c("gru_bi");
    nn::GRU m(nn::GRUOptions(5, 8).num_layers(2).bidirectional(true));
    c.load(*m);
    Tensor x = c.input("x", true), h0 = c.input("h0", true);
    auto [out, hn] = m(x, h0);
    check(c, {{"out", out}, {"hn", hn}}, {{"x", x}, {"h0", h0}}, *m);
  }
  SECTION("RNN: relu, 2 layers") {
    Case c("rnn_relu");
    nn::RNN m(nn::RNNOptions(5, 8).num_layers(2).nonlinearity(nn::kReLU));
    c.load(*m);
    Tensor x = c.input("x", true);
    auto [out, hn] = m(x);
    check(c, {{"out", out}, {"hn", hn}}, {{"x", x}}, *m);
  }
  SECTION("LSTM over packed sequences of unequal lengths (unsorted)") {
    Case c("lstm_packed");
    nn::LSTM m(nn::LSTMOptions(5, 8).bidirectional(true));
    c.load(*m);
    Tensor x = c.input("x", true);
    auto packed = R::pack_padded_sequence(x, c.all.at("input.lengths"), false, /*enforce_sorted=*/false);
    auto [out, state] = m->forward_with_packed_input(packed);
    Tensor padded = std::get<0>(R::pad_packed_sequence(out));
    check(c, {{"out", padded}, {"hn", std::get<0>(state)}, {"cn", std::get<1>(state)}}, {{"x", x}}, *m);
  }
  SECTION("LSTMCell and GRUCell") {
    Case c("lstm_cell");
    nn::LSTMCell m(5, 8);
    c.load(*m);
    Tensor x = c.input("x", true), h = c.input("h", true), cc = c.input("c", true);
    auto [h1, c1] = m(x, std::make_tuple(h, cc));
    check(c, {{"h1", h1}, {"c1", c1}}, {{"x", x}, {"h", h}, {"c", cc}}, *m);
    Case g("gru_cell");
    nn::GRUCell gm(5, 8);
    g.load(*gm);
    Tensor gx = g.input("x", true), gh = g.input("h", true);
    check(g, {{"h1", gm(gx, gh)}}, {{"x", gx}, {"h", gh}}, *gm);
  }
}
