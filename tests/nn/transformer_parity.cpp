// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Parity with torch.nn: MultiheadAttention, TransformerEncoderLayer (post-
// and pre-norm, relu and gelu, both layouts), TransformerDecoderLayer and
// the whole Transformer built in PyTorch with seed 0 (transformer_torch.py),
// their state_dicts loaded unchanged (strict: PyTorch's keys) into vnn's
// modules on the device under test; outputs, attention weights and the
// gradients of every input and parameter agree within 1e-4 relative
// (max |vnn - torch| / max |torch|) in float32. The program exits 77
// (skipped) only when no python3 has torch; VNN_PYTHON picks the
// interpreter, else python3 on PATH, then /usr/bin/python3 (Debian's
// python3-torch).
#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;

namespace {

constexpr double kRelTol = 1e-4;

int run(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 1;
}

// The fixtures, written once per program; exits 77 without torch.
const std::string& fixtures() {
  static const std::string dir = [] {
    const std::string script = VNN_TRANSFORMER_TORCH_PY;
    std::vector<std::string> candidates;
    if (const char* p = std::getenv("VNN_PYTHON")) candidates.push_back(p);
    candidates.push_back("python3");
    candidates.push_back("/usr/bin/python3");
    // Each candidate writes the fixtures directly; 77 ("no torch here") or 127 (no such interpreter): the next.
    std::string d = "/tmp/vnn_transformer_parity_" + std::to_string(::getpid());
    if (run("mkdir -p " + d) != 0) {
      std::cerr << "cannot create " << d << "\n";
      std::exit(1);
    }
    int rc = 77;
    for (auto& c : candidates) {
      rc = run(c + " " + script + " write " + d);
      if (rc != 77 && rc != 127) break;
    }
    if (rc == 77 || rc == 127) {
      run("rm -rf " + d);
      std::cout << "SKIP: no python3 with torch (tried VNN_PYTHON, python3, /usr/bin/python3)\n";
      std::exit(77);
    }
    if (rc != 0) {
      std::cerr << "transformer_torch.py failed (exit " << rc << ") writing the fixtures into " << d << "\n";
      std::exit(1);
    }
    std::atexit([] { run("rm -rf /tmp/vnn_transformer_parity_" + std::to_string(::getpid())); });
    return d;
  }();
  return dir;
}

struct Case {
  io::TensorMap all;
  Device dev = device_under_test();
  explicit Case(const std::string& name) : all(io::load(fixtures() + "/" + name + ".safetensors")) {}
  // The tensors under "<prefix>." with the prefix removed.
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
  // Loads the module strictly (PyTorch's keys, nothing missing or extra) and moves it.
  void load(nn::Module& m) const {
    m.load_state_dict(part("param"), /*strict=*/true);
    m.to(dev);
  }
};

double rel_err(const Tensor& got, const Tensor& want) {
  REQUIRE(got.defined());
  REQUIRE(got.sizes() == want.sizes());
  auto g = got.to_vector<double>(), w = want.to_vector<double>();
  double diff = 0, scale = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    diff = std::max(diff, std::fabs(g[i] - w[i]));
    scale = std::max(scale, std::fabs(w[i]));
  }
  return diff / std::max(scale, 1e-30);
}

void compare(const char* what, const Tensor& got, const Tensor& want) {
  double e = rel_err(got, want);
  INFO(what << ": relative error " << e);
  CHECK(e <= kRelTol);
}

// Backward from the fixture's grad_output, then every input and parameter gradient against PyTorch's.
void check_grads(const Case& c, const Tensor& out, const std::vector<std::pair<std::string, Tensor>>& inputs,
                 nn::Module& m) {
  out.backward(c.input("grad_output"));
  for (auto& [n, t] : inputs) compare(("grad of input " + n).c_str(), t.grad(), c.all.at("grad.input." + n));
  auto want = c.part("grad.param");
  auto params = m.named_parameters();
  CHECK(params.size() == want.size());
  for (auto& [k, p] : params) compare(("grad of " + k).c_str(), p.grad(), want.at(k));
}

}  // namespace

TEST_CASE("MultiheadAttention matches torch.nn.MultiheadAttention") {
  SECTION("self-attention, [L, N, E], float attn_mask and bool key_padding_mask, the SDPA path") {
    Case c("mha_self");
    nn::MultiheadAttention m(16, 4);
    c.load(*m);
    Tensor x = c.input("x", true);
    auto [out, w] = m(x, x, x, c.input("kpm"), /*need_weights=*/false, c.input("attn_mask"));
    CHECK(!w.defined());
    compare("output", out, c.all.at("output.out"));
    check_grads(c, out, {{"x", x}}, *m);
  }
  SECTION("kdim / vdim, batch_first, bool [N * H, L, S] mask, per-head weights") {
    Case c("mha_kv_weights");
    nn::MultiheadAttention m(nn::MultiheadAttentionOptions(16, 2).kdim(12).vdim(8).batch_first(true));
    c.load(*m);
    Tensor q = c.input("query", true), k = c.input("key", true), v = c.input("value", true);
    auto [out, w] = m(q, k, v, Tensor(), true, c.input("attn_mask"), /*average_attn_weights=*/false);
    compare("output", out, c.all.at("output.out"));
    compare("weights", w, c.all.at("output.weights"));
    check_grads(c, out, {{"query", q}, {"key", k}, {"value", v}}, *m);
  }
  SECTION("packed weights over separate key and value, no bias, averaged weights") {
    Case c("mha_avg_weights");
    nn::MultiheadAttention m(nn::MultiheadAttentionOptions(8, 2).bias(false));
    c.load(*m);
    Tensor q = c.input("query", true), k = c.input("key", true), v = c.input("value", true);
    auto [out, w] = m(q, k, v, c.input("kpm"));
    compare("output", out, c.all.at("output.out"));
    compare("weights", w, c.all.at("output.weights"));
    check_grads(c, out, {{"query", q}, {"key", k}, {"value", v}}, *m);
  }
}

TEST_CASE("TransformerEncoderLayer matches torch.nn's: post- and pre-norm, relu and gelu, both layouts") {
  struct Config {
    const char* name;
    bool norm_first;
    const char* act;
    bool batch_first;
  };
  for (Config cfg : {Config{"enc_post_relu", false, "relu", false}, Config{"enc_pre_gelu", true, "gelu", true},
                     Config{"enc_post_gelu", false, "gelu", true}, Config{"enc_pre_relu", true, "relu", false}}) {
    INFO(cfg.name);
    Case c(cfg.name);
    nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(16, 4)
                                          .dim_feedforward(32)
                                          .dropout(0.0)
                                          .activation(cfg.act)
                                          .layer_norm_eps(cfg.norm_first ? 1e-6 : 1e-5)
                                          .batch_first(cfg.batch_first)
                                          .norm_first(cfg.norm_first));
    c.load(*layer);
    Tensor src = c.input("src", true);
    Tensor out = layer(src, c.input("src_mask"), c.input("kpm"));
    compare("output", out, c.all.at("output.out"));
    check_grads(c, out, {{"src", src}}, *layer);
  }
}

TEST_CASE("TransformerDecoderLayer matches torch.nn's") {
  struct Config {
    const char* name;
    bool norm_first;
    const char* act;
    bool batch_first;
  };
  for (Config cfg : {Config{"dec_post_relu", false, "relu", false}, Config{"dec_pre_gelu", true, "gelu", true}}) {
    INFO(cfg.name);
    Case c(cfg.name);
    nn::TransformerDecoderLayer layer(nn::TransformerDecoderLayerOptions(16, 2)
                                          .dim_feedforward(24)
                                          .dropout(0.0)
                                          .activation(cfg.act)
                                          .batch_first(cfg.batch_first)
                                          .norm_first(cfg.norm_first));
    c.load(*layer);
    Tensor tgt = c.input("tgt", true), memory = c.input("memory", true);
    Tensor out = layer(tgt, memory, c.input("tgt_mask"), Tensor(), Tensor(), c.input("mkpm"));
    compare("output", out, c.all.at("output.out"));
    check_grads(c, out, {{"tgt", tgt}, {"memory", memory}}, *layer);
  }
}

TEST_CASE("Transformer matches torch.nn.Transformer") {
  Case c("transformer");
  nn::Transformer model(nn::TransformerOptions(8, 2, 2, 2).dim_feedforward(16).dropout(0.0));
  c.load(*model);
  Tensor src = c.input("src", true), tgt = c.input("tgt", true);
  Tensor out = model(src, tgt, Tensor(), c.input("tgt_mask"));
  compare("output", out, c.all.at("output.out"));
  check_grads(c, out, {{"src", src}, {"tgt", tgt}}, *model);
}
