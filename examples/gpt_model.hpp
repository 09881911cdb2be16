// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// nanoGPT's model (model.py) in LibTorch's spelling, on vnn: token and
// position embeddings, pre-norm blocks of causal self-attention (through
// vnn::scaled_dot_product_attention) and a GELU MLP, a final LayerNorm and
// an lm_head tied to the token embedding, initialised as nanoGPT does. The
// state-dict keys are nanoGPT's (transformer.wte.weight, transformer.h.0.
// attn.c_attn.weight, ..., lm_head.weight). Used by examples/train_gpt.cpp
// and by the PyTorch parity test (tests/parity/gpt.cpp).
#pragma once
#include <vnn/vnn.h>

#include <cmath>
#include <string>

namespace gpt {

namespace nn = vnn::nn;

struct GPTConfig {
  int64_t vocab, block, n_layer, n_head, n_embd;
  double dropout;
};

struct CausalSelfAttentionImpl : nn::Cloneable<CausalSelfAttentionImpl> {
  explicit CausalSelfAttentionImpl(const GPTConfig& c) : Cloneable("CausalSelfAttention"), cfg(c) { reset(); }
  void reset() override {
    c_attn = register_module("c_attn", nn::Linear(cfg.n_embd, 3 * cfg.n_embd));
    c_proj = register_module("c_proj", nn::Linear(cfg.n_embd, cfg.n_embd));
    resid_dropout = register_module("resid_dropout", nn::Dropout(cfg.dropout));
  }
  vnn::Tensor forward(const vnn::Tensor& x) {
    const int64_t B = x.size(0), T = x.size(1), C = x.size(2), H = cfg.n_head;
    auto qkv = c_attn(x).split(C, 2);
    // [B, T, C] -> [B, H, T, C/H]: views of the projection, no copies.
    vnn::Tensor q = qkv[0].reshape({B, T, H, C / H}).transpose(1, 2);
    vnn::Tensor k = qkv[1].reshape({B, T, H, C / H}).transpose(1, 2);
    vnn::Tensor v = qkv[2].reshape({B, T, H, C / H}).transpose(1, 2);
    vnn::Tensor y = vnn::scaled_dot_product_attention(q, k, v, vnn::Tensor(), is_training() ? cfg.dropout : 0.0,
                                                      /*is_causal=*/true);
    y = y.transpose(1, 2).contiguous().view({B, T, C});
    return resid_dropout(c_proj(y));
  }
  GPTConfig cfg;
  nn::Linear c_attn{nullptr}, c_proj{nullptr};
  nn::Dropout resid_dropout{nullptr};
};
VNN_MODULE(CausalSelfAttention);

struct MLPImpl : nn::Cloneable<MLPImpl> {
  explicit MLPImpl(const GPTConfig& c) : Cloneable("MLP"), cfg(c) { reset(); }
  void reset() override {
    c_fc = register_module("c_fc", nn::Linear(cfg.n_embd, 4 * cfg.n_embd));
    c_proj = register_module("c_proj", nn::Linear(4 * cfg.n_embd, cfg.n_embd));
    dropout = register_module("dropout", nn::Dropout(cfg.dropout));
  }
  vnn::Tensor forward(const vnn::Tensor& x) { return dropout(c_proj(vnn::gelu(c_fc(x)))); }
  GPTConfig cfg;
  nn::Linear c_fc{nullptr}, c_proj{nullptr};
  nn::Dropout dropout{nullptr};
};
VNN_MODULE(MLP);

struct BlockImpl : nn::Cloneable<BlockImpl> {
  explicit BlockImpl(const GPTConfig& c) : Cloneable("Block"), cfg(c) { reset(); }
  void reset() override {
    ln_1 = register_module("ln_1", nn::LayerNorm(vnn::Shape{cfg.n_embd}));
    attn = register_module("attn", CausalSelfAttention(cfg));
    ln_2 = register_module("ln_2", nn::LayerNorm(vnn::Shape{cfg.n_embd}));
    mlp = register_module("mlp", MLP(cfg));
  }
  vnn::Tensor forward(const vnn::Tensor& x) {
    vnn::Tensor h = x + attn(ln_1(x));
    return h + mlp(ln_2(h));
  }
  GPTConfig cfg;
  nn::LayerNorm ln_1{nullptr}, ln_2{nullptr};
  CausalSelfAttention attn{nullptr};
  MLP mlp{nullptr};
};
VNN_MODULE(Block);

// nanoGPT's `transformer` ModuleDict: wte, wpe, drop, h, ln_f.
struct TransformerImpl : nn::Cloneable<TransformerImpl> {
  explicit TransformerImpl(const GPTConfig& c) : Cloneable("ModuleDict"), cfg(c) { reset(); }
  void reset() override {
    wte = register_module("wte", nn::Embedding(cfg.vocab, cfg.n_embd));
    wpe = register_module("wpe", nn::Embedding(cfg.block, cfg.n_embd));
    drop = register_module("drop", nn::Dropout(cfg.dropout));
    h = register_module("h", nn::ModuleList());
    for (int64_t i = 0; i < cfg.n_layer; ++i) h->push_back(Block(cfg));
    ln_f = register_module("ln_f", nn::LayerNorm(vnn::Shape{cfg.n_embd}));
  }
  vnn::Tensor forward(const vnn::Tensor& idx) {
    const int64_t T = idx.size(1);
    vnn::Tensor pos = vnn::arange(T, vnn::TensorOptions(idx.device()).with(vnn::kInt64));
    vnn::Tensor x = drop(wte(idx) + wpe(pos));
    for (const auto& block : *h) x = (*block)(x);
    return ln_f(x);
  }
  GPTConfig cfg;
  nn::Embedding wte{nullptr}, wpe{nullptr};
  nn::Dropout drop{nullptr};
  nn::ModuleList h{nullptr};
  nn::LayerNorm ln_f{nullptr};
};
VNN_MODULE(Transformer);

struct GPTImpl : nn::Cloneable<GPTImpl> {
  explicit GPTImpl(const GPTConfig& c) : Cloneable("GPT"), cfg(c) { reset(); }
  void reset() override {
    transformer = register_module("transformer", Transformer(cfg));
    lm_head = register_module("lm_head", nn::Linear(nn::LinearOptions(cfg.n_embd, cfg.vocab).bias(false)));
    lm_head->weight = transformer->wte->weight;  // weight tying: one tensor, two names
    // nanoGPT's _init_weights: N(0, 0.02) for Linear and Embedding weights,
    // zero biases; the residual projections N(0, 0.02 / sqrt(2 n_layer)).
    for (auto& [name, p] : named_parameters()) {
      vnn::NoGradGuard no_grad;
      const bool proj = name.size() > 13 && name.compare(name.size() - 13, 13, "c_proj.weight") == 0;
      if (name.find("ln_") != std::string::npos) continue;  // LayerNorms keep ones / zeros
      if (p.dim() == 1) nn::init::zeros_(p);
      else nn::init::normal_(p, 0.0, proj ? 0.02 / std::sqrt(2.0 * double(cfg.n_layer)) : 0.02);
    }
  }
  // Logits [B, T, vocab].
  vnn::Tensor forward(const vnn::Tensor& idx) { return lm_head(transformer(idx)); }
  GPTConfig cfg;
  Transformer transformer{nullptr};
  nn::Linear lm_head{nullptr};
};
VNN_MODULE(GPT);

}  // namespace gpt
