// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// nanoGPT's model against LibTorch (issue 30, "Parity with PyTorch"): the vnn
// port in examples/gpt_model.hpp and the same model written here in LibTorch
// 1.13's C++ API (no scaled_dot_product_attention there: the attention is
// nanoGPT's manual path, q k^T * scale, a causal tril mask, softmax, @ v),
// lm_head tied to transformer.wte in both. The vnn model's initial state is
// copied into LibTorch's key for key (so the keys must match, tied ones
// included); then one batch goes through both (vnn on the device under test,
// LibTorch on the CPU) and the logits, the loss, every gradient and every
// parameter after one AdamW step (weight decay on the 2-D parameters only)
// must agree, through vnn's fused attention and through its math path.
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gpt_model.hpp"
#include "support/device_under_test.hpp"

using vnn::test::device_under_test;

namespace tgpt {

// The same model in LibTorch, module for module as nanoGPT's model.py.
struct Config {
  int64_t vocab, block, n_layer, n_head, n_embd;
  double dropout;
};

struct CausalSelfAttentionImpl : torch::nn::Module {
  explicit CausalSelfAttentionImpl(const Config& c) : n_head(c.n_head), n_embd(c.n_embd) {
    c_attn = register_module("c_attn", torch::nn::Linear(n_embd, 3 * n_embd));
    c_proj = register_module("c_proj", torch::nn::Linear(n_embd, n_embd));
    attn_dropout = register_module("attn_dropout", torch::nn::Dropout(c.dropout));
    resid_dropout = register_module("resid_dropout", torch::nn::Dropout(c.dropout));
    // nanoGPT registers this as the buffer "bias" only on its non-flash path;
    // on PyTorch 2 (and in vnn's port) there is no such key, so it stays an
    // unregistered member here and the state keys match.
    mask = torch::tril(torch::ones({c.block, c.block})).view({1, 1, c.block, c.block});
  }
  torch::Tensor forward(const torch::Tensor& x) {
    const int64_t B = x.size(0), T = x.size(1), C = x.size(2);
    auto qkv = c_attn(x).split(n_embd, 2);
    torch::Tensor q = qkv[0].view({B, T, n_head, C / n_head}).transpose(1, 2);
    torch::Tensor k = qkv[1].view({B, T, n_head, C / n_head}).transpose(1, 2);
    torch::Tensor v = qkv[2].view({B, T, n_head, C / n_head}).transpose(1, 2);
    torch::Tensor att = torch::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(double(k.size(-1))));
    att = att.masked_fill(mask.narrow(2, 0, T).narrow(3, 0, T) == 0, -std::numeric_limits<float>::infinity());
    att = attn_dropout(torch::softmax(att, -1));
    torch::Tensor y = torch::matmul(att, v).transpose(1, 2).contiguous().view({B, T, C});
    return resid_dropout(c_proj(y));
  }
  int64_t n_head, n_embd;
  torch::nn::Linear c_attn{nullptr}, c_proj{nullptr};
  torch::nn::Dropout attn_dropout{nullptr}, resid_dropout{nullptr};
  torch::Tensor mask;
};
TORCH_MODULE(CausalSelfAttention);

struct MLPImpl : torch::nn::Module {
  explicit MLPImpl(const Config& c) {
    c_fc = register_module("c_fc", torch::nn::Linear(c.n_embd, 4 * c.n_embd));
    c_proj = register_module("c_proj", torch::nn::Linear(4 * c.n_embd, c.n_embd));
    dropout = register_module("dropout", torch::nn::Dropout(c.dropout));
  }
  torch::Tensor forward(const torch::Tensor& x) { return dropout(c_proj(torch::gelu(c_fc(x)))); }
  torch::nn::Linear c_fc{nullptr}, c_proj{nullptr};
  torch::nn::Dropout dropout{nullptr};
};
TORCH_MODULE(MLP);

struct BlockImpl : torch::nn::Module {
  explicit BlockImpl(const Config& c) {
    ln_1 = register_module("ln_1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.n_embd})));
    attn = register_module("attn", CausalSelfAttention(c));
    ln_2 = register_module("ln_2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.n_embd})));
    mlp = register_module("mlp", MLP(c));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor h = x + attn(ln_1(x));
    return h + mlp(ln_2(h));
  }
  torch::nn::LayerNorm ln_1{nullptr}, ln_2{nullptr};
  CausalSelfAttention attn{nullptr};
  MLP mlp{nullptr};
};
TORCH_MODULE(Block);

// nanoGPT's `transformer` ModuleDict.
struct TransformerImpl : torch::nn::Module {
  explicit TransformerImpl(const Config& c) {
    wte = register_module("wte", torch::nn::Embedding(c.vocab, c.n_embd));
    wpe = register_module("wpe", torch::nn::Embedding(c.block, c.n_embd));
    drop = register_module("drop", torch::nn::Dropout(c.dropout));
    h = register_module("h", torch::nn::ModuleList());
    for (int64_t i = 0; i < c.n_layer; ++i) h->push_back(Block(c));
    ln_f = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.n_embd})));
  }
  torch::Tensor forward(const torch::Tensor& idx) {
    torch::Tensor pos = torch::arange(idx.size(1), torch::kInt64);
    torch::Tensor x = drop(wte(idx) + wpe(pos));
    for (const auto& block : *h) x = block->as<BlockImpl>()->forward(x);
    return ln_f(x);
  }
  torch::nn::Embedding wte{nullptr}, wpe{nullptr};
  torch::nn::Dropout drop{nullptr};
  torch::nn::ModuleList h{nullptr};
  torch::nn::LayerNorm ln_f{nullptr};
};
TORCH_MODULE(Transformer);

// A bias-free Linear whose "weight" is an existing tensor: LibTorch's
// register_parameter cannot replace a torch::nn::Linear's own weight, so the
// tie (nanoGPT: self.transformer.wte.weight = self.lm_head.weight) registers
// wte's tensor here under lm_head.weight: one leaf, two names.
struct TiedLinearImpl : torch::nn::Module {
  explicit TiedLinearImpl(const torch::Tensor& w) { weight = register_parameter("weight", w); }
  torch::Tensor forward(const torch::Tensor& x) { return torch::nn::functional::linear(x, weight); }
  torch::Tensor weight;
};
TORCH_MODULE(TiedLinear);

struct GPTImpl : torch::nn::Module {
  explicit GPTImpl(const Config& c) {
    transformer = register_module("transformer", Transformer(c));
    lm_head = register_module("lm_head", TiedLinear(transformer->wte->weight));
  }
  torch::Tensor forward(const torch::Tensor& idx) { return lm_head(transformer(idx)); }
  Transformer transformer{nullptr};
  TiedLinear lm_head{nullptr};
};
TORCH_MODULE(GPT);

}  // namespace tgpt

namespace {

const vnn::Device kCpu("cpu", 0);

std::vector<int64_t> sizes_of(const torch::Tensor& t) { return std::vector<int64_t>(t.sizes().begin(), t.sizes().end()); }
std::vector<int64_t> sizes_of(const vnn::Tensor& t) {
  std::vector<int64_t> s;
  for (int i = 0; i < t.dim(); ++i) s.push_back(t.size(i));
  return s;
}

// A float32 vnn tensor's values as a CPU torch tensor.
torch::Tensor to_torch(const vnn::Tensor& t) {
  std::vector<float> d = t.to(kCpu).to_vector<float>();
  return torch::from_blob(d.data(), sizes_of(t), torch::kFloat32).clone();
}

// Token ids in [0, vocab) from an LCG (neither library's generator).
std::vector<int64_t> tokens(int64_t n, int64_t vocab, uint64_t salt) {
  std::vector<int64_t> d(static_cast<size_t>(n));
  uint64_t x = salt * 0x9E3779B97F4A7C15ull + 7;
  for (auto& e : d) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    e = int64_t((x >> 33) % uint64_t(vocab));
  }
  return d;
}

// The worst errors seen, per quantity, reported at the end of each run.
struct Worst {
  double rel = 0;   // max |vnn - torch| / max |torch| over a tensor (norm-wise relative)
  double elem = 0;  // max |vnn - torch| / (|torch| + 1) over the elements
};
std::map<std::string, Worst> g_worst;
size_t g_conditioned = 0;  // elements within tolerance only through the gradient-implied allowance

// Compares got with want: the tensor's norm-wise relative error
// max|got - want| / max|want| must stay within tol (an element-wise relative
// error is meaningless for entries near 0, e.g. gradients that vanish
// analytically and are rounding noise in both libraries).
void compare(const std::string& kind, const std::string& what, const vnn::Tensor& got, const torch::Tensor& want,
             double tol) {
  INFO(kind << " " << what);
  REQUIRE(got.defined());
  REQUIRE(want.defined());
  REQUIRE(sizes_of(got) == sizes_of(want));
  CHECK(got.dtype() == vnn::kFloat32);
  std::vector<double> g = got.to(kCpu).to_vector<double>();
  torch::Tensor w = want.detach().to(torch::kFloat64).contiguous();
  const double* wp = w.data_ptr<double>();
  double diff = 0, scale = 0, elem = 0;
  size_t bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const double d = std::fabs(g[i] - wp[i]);
    if (!(d <= diff)) diff = d, bad = i;  // NaN sticks
    scale = std::max(scale, std::fabs(wp[i]));
    elem = std::max(elem, d / (std::fabs(wp[i]) + 1.0));
  }
  const double rel = scale > 0 ? diff / scale : diff;
  Worst& w_ = g_worst[kind];
  w_.rel = std::max(w_.rel, rel);
  w_.elem = std::max(w_.elem, elem);
  INFO("relative error " << rel << " (max |diff| " << diff << " at element " << bad << ": vnn "
                         << (g.empty() ? 0 : g[bad]) << ", LibTorch " << (g.empty() ? 0 : wp[bad]) << "; max |LibTorch| "
                         << scale << ")");
  CHECK(rel <= tol);
}

// A parameter after the first AdamW step. That step moves each element by
// lr * g / (|g| + eps) (m_hat = g, v_hat = g^2), which is ill-conditioned
// where |g| is near eps: the gradients that vanish analytically (the key
// bias's: softmax ignores a shift of a whole row of scores) are rounding
// noise of ~1e-11 in both libraries, and their steps differ by up to lr.
// So the error allowed beyond 1e-4 relative is what the two libraries'
// gradients (compared above) imply through that formula, computed in
// float64; it is ~0 wherever |g| >> eps, so a wrong update still shows.
void compare_step(const std::string& what, const vnn::Tensor& got, const torch::Tensor& want,
                  const vnn::Tensor& got_grad, const torch::Tensor& want_grad, double lr, double eps, double tol) {
  INFO("parameter after AdamW " << what);
  REQUIRE(sizes_of(got) == sizes_of(want));
  REQUIRE(sizes_of(got_grad) == sizes_of(want_grad));
  std::vector<double> g = got.to(kCpu).to_vector<double>(), gg = got_grad.to(kCpu).to_vector<double>();
  torch::Tensor w = want.detach().to(torch::kFloat64).contiguous();
  torch::Tensor wg = want_grad.detach().to(torch::kFloat64).contiguous();
  const double *wp = w.data_ptr<double>(), *wgp = wg.data_ptr<double>();
  double scale = 0, raw = 0, excess = 0;
  size_t bad = 0, conditioned = 0;
  for (size_t i = 0; i < g.size(); ++i) scale = std::max(scale, std::fabs(wp[i]));
  for (size_t i = 0; i < g.size(); ++i) {
    const double d = std::fabs(g[i] - wp[i]);
    const double implied = lr * std::fabs(gg[i] / (std::fabs(gg[i]) + eps) - wgp[i] / (std::fabs(wgp[i]) + eps));
    const double e = std::isnan(d) || d > implied ? d - implied : 0.0;  // NaN sticks
    if (d > tol * scale && e <= tol * scale) {
      // Only near-vanishing gradients may need the allowance.
      ++conditioned;
      INFO("element " << i << " needs the allowance: gradients vnn " << gg[i] << ", LibTorch " << wgp[i]);
      CHECK(std::min(std::fabs(gg[i]), std::fabs(wgp[i])) < 100 * eps);
    }
    raw = std::max(raw, d);
    if (!(e <= excess)) excess = e, bad = i;
  }
  const double rel = scale > 0 ? excess / scale : excess, raw_rel = scale > 0 ? raw / scale : raw;
  Worst& w_ = g_worst["parameter after AdamW"];
  w_.rel = std::max(w_.rel, rel);
  Worst& r_ = g_worst["parameter after AdamW, raw"];
  r_.rel = std::max(r_.rel, raw_rel);
  g_conditioned += conditioned;
  INFO("relative error beyond the gradients' implied difference "
       << rel << " (raw " << raw_rel << "; worst at element " << bad << ": vnn " << (g.empty() ? 0 : g[bad])
       << ", LibTorch " << (g.empty() ? 0 : wp[bad]) << ", gradients vnn " << (g.empty() ? 0 : gg[bad])
       << ", LibTorch " << (g.empty() ? 0 : wgp[bad]) << "; max |LibTorch| " << scale << ")");
  CHECK(rel <= tol);
}

vnn::Tensor find(const vnn::nn::StateDict& sd, const std::string& key) {
  for (const auto& kv : sd)
    if (kv.first == key) return kv.second;
  return vnn::Tensor();
}

void run_parity(const vnn::Device& dev, const char* path) {
  INFO("attention path " << path << " on " << dev);
  const double tol = 1e-4;
  const gpt::GPTConfig vc{37, 16, 2, 2, 32, 0.0};
  const tgpt::Config tc{vc.vocab, vc.block, vc.n_layer, vc.n_head, vc.n_embd, vc.dropout};
  vnn::manual_seed(1234);
  gpt::GPT vm(vc);  // nanoGPT's initialisation, on the CPU
  vm->to(dev);
  tgpt::GPT tm(tc);

  // Keys: vnn's state_dict (every name of a shared tensor) against
  // LibTorch's named_parameters and named_buffers (which also list a
  // registered tensor under every name), both ways; then the values.
  const vnn::nn::StateDict vsd = vm->state_dict();
  auto tparams = tm->named_parameters();
  auto tbuffers = tm->named_buffers();
  CHECK(tbuffers.size() == 0);
  CHECK(vsd.size() == tparams.size() + tbuffers.size());
  std::set<std::string> vkeys;
  for (const auto& kv : vsd) vkeys.insert(kv.first);
  for (const auto& kv : tparams) {
    INFO("LibTorch key " << kv.key());
    CHECK(vkeys.count(kv.key()) == 1);
  }
  {
    torch::NoGradGuard no_grad;
    for (const auto& kv : vsd) {
      INFO("vnn key " << kv.first);
      const torch::Tensor* t = tparams.find(kv.first);
      REQUIRE(t != nullptr);
      REQUIRE(sizes_of(kv.second) == sizes_of(*t));
      const_cast<torch::Tensor*>(t)->copy_(to_torch(kv.second));
    }
  }
  // Both names of the tie hold one tensor in both libraries.
  REQUIRE(tm->lm_head->weight.unsafeGetTensorImpl() == tm->transformer->wte->weight.unsafeGetTensorImpl());
  REQUIRE(vm->lm_head->weight.impl() == vm->transformer->wte->weight.impl());
  for (const auto& kv : tparams) compare("initial state", kv.key(), find(vsd, kv.key()), kv.value(), 0.0);

  // parameters(): each tensor once in vnn, as Python's. LibTorch's C++
  // parameters() lists a tensor under each of its names (the tie twice), so
  // its distinct tensors are counted here; those are what the optimizer gets
  // (a repeated tensor would be stepped twice).
  std::vector<torch::Tensor> tdistinct;
  std::vector<std::string> tdistinct_names;
  {
    std::set<const void*> seen;
    for (const auto& kv : tparams)
      if (seen.insert(kv.value().unsafeGetTensorImpl()).second) {
        tdistinct.push_back(kv.value());
        tdistinct_names.push_back(kv.key());
      }
  }
  CHECK(tm->parameters().size() == tdistinct.size() + 1);
  const std::vector<vnn::Tensor> vparams = vm->parameters();
  CHECK(vparams.size() == tdistinct.size());
  {
    std::vector<std::string> vnames;
    for (const auto& kv : vm->named_parameters()) vnames.push_back(kv.first);
    CHECK(vnames == tdistinct_names);
  }

  // One batch [4, 16] and its next-token targets.
  const int64_t B = 4, T = vc.block;
  const std::vector<int64_t> idx = tokens(B * T, vc.vocab, 1), tgt = tokens(B * T, vc.vocab, 2);
  torch::Tensor idx_t = torch::tensor(idx, torch::kInt64).view({B, T});
  torch::Tensor tgt_t = torch::tensor(tgt, torch::kInt64).view({B * T});
  vnn::Tensor idx_v = vnn::from_vector(idx, {B, T}).to(dev);
  vnn::Tensor tgt_v = vnn::from_vector(tgt, {B * T}).to(dev);

  torch::Tensor logits_t = tm->forward(idx_t);
  vnn::profiler::Profile prof;
  vnn::Tensor logits_v = vm->forward(idx_v);
  prof.stop();
  // The attention ran on the path under test (the fused kernel where the
  // backend takes it: cpu and opencl here).
  {
    std::set<std::string> ranges;
    for (const auto& row : prof.key_averages()) ranges.insert(row.name);
    CHECK(ranges.count(std::string("sdpa[") + path + "]") == 1);
  }
  compare("logits", "logits", logits_v, logits_t, tol);
  torch::Tensor loss_t = torch::nn::functional::cross_entropy(logits_t.view({B * T, vc.vocab}), tgt_t);
  vnn::Tensor loss_v = vnn::nn::cross_entropy(logits_v.view({B * T, vc.vocab}), tgt_v);
  compare("loss", "loss", loss_v, loss_t, tol);
  loss_t.backward();
  loss_v.backward();

  // Gradients by name; the tied tensor's is the sum over its two uses (one
  // leaf in each library, so both names read the same gradient).
  const vnn::nn::StateDict vnamed = vm->named_parameters(true, /*remove_duplicate=*/false);
  REQUIRE(vnamed.size() == tparams.size());
  for (const auto& kv : tparams) {
    vnn::Tensor p = find(vnamed, kv.key());
    INFO("parameter " << kv.key());
    REQUIRE(p.defined());
    compare("gradient", kv.key(), p.grad(), kv.value().grad(), tol);
  }

  // One AdamW step, nanoGPT's configure_optimizers: decay on 2-D tensors.
  std::vector<torch::Tensor> tdecay, tno_decay;
  for (const auto& t : tdistinct) (t.dim() >= 2 ? tdecay : tno_decay).push_back(t);
  std::vector<vnn::Tensor> vdecay, vno_decay;
  for (const auto& p : vparams) (p.dim() >= 2 ? vdecay : vno_decay).push_back(p);
  CHECK(vdecay.size() == tdecay.size());
  CHECK(vno_decay.size() == tno_decay.size());
  std::vector<torch::optim::OptimizerParamGroup> tgroups;
  tgroups.emplace_back(tdecay, std::make_unique<torch::optim::AdamWOptions>(
                                   torch::optim::AdamWOptions(1e-2).betas({0.9, 0.95}).weight_decay(0.1)));
  tgroups.emplace_back(tno_decay, std::make_unique<torch::optim::AdamWOptions>(
                                      torch::optim::AdamWOptions(1e-2).betas({0.9, 0.95}).weight_decay(0.0)));
  torch::optim::AdamW topt(tgroups, torch::optim::AdamWOptions(1e-2).betas({0.9, 0.95}));
  vnn::optim::AdamW vopt({vnn::optim::ParamGroup(vdecay, {{"weight_decay", 0.1}}),
                          vnn::optim::ParamGroup(vno_decay, {{"weight_decay", 0.0}})},
                         vnn::optim::AdamWOptions(1e-2).betas(0.9, 0.95));
  topt.step();
  vopt.step();
  for (const auto& kv : tparams) {
    vnn::Tensor p = find(vnamed, kv.key());
    compare_step(kv.key(), p, kv.value(), p.grad(), kv.value().grad(), 1e-2, 1e-8, tol);
  }
  CHECK(vm->lm_head->weight.impl() == vm->transformer->wte->weight.impl());
}

void report(const vnn::Device& dev, const char* path) {
  std::cout << "gpt parity on " << dev << ", " << path << " attention: max relative error (norm-wise | element-wise "
            << "|d|/(|x|+1))";
  for (const auto& [kind, w] : g_worst) {
    std::cout << "; " << kind << " " << w.rel;
    if (kind.compare(0, 9, "parameter") != 0) std::cout << " | " << w.elem;
  }
  std::cout << "; " << g_conditioned << " elements within tolerance only through the gradient-implied allowance\n";
  g_worst.clear();
  g_conditioned = 0;
}

}  // namespace

TEST_CASE("nanoGPT in vnn agrees with LibTorch: keys, logits, loss, gradients, AdamW step (fused attention)") {
  vnn::Device dev = device_under_test();
  run_parity(dev, "flash");
  report(dev, "fused (flash)");
}

TEST_CASE("nanoGPT in vnn agrees with LibTorch through vnn's math attention path") {
  vnn::Device dev = device_under_test();
  vnn::SdpaKernelGuard guard(vnn::SDPBackend::math);
  run_parity(dev, "math");
  report(dev, "math");
}
