// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Transformer layers and stacks with torch.nn's structure, submodule names
// and forward passes (PyTorch 2.x's TransformerEncoderLayer._sa_block /
// _ff_block, post-norm or pre-norm); MultiheadAttention is in
// multihead_attention.cpp.
#include <cmath>
#include <string>

#include "vnn/autograd.h"
#include "vnn/detail/message.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/nn/init.h"
#include "vnn/nn/transformer.h"

namespace vnn::nn {

// ---- activation -------------------------------------------------------------

TransformerActivation::TransformerActivation(TransformerActivationKind kind) : kind_(kind) {
  VNN_CHECK(ValueError, kind != TransformerActivationKind::custom,
            "TransformerActivation: a custom activation needs its function; pass the function itself");
}

TransformerActivation::TransformerActivation(const char* name) : TransformerActivation(std::string(name ? name : "")) {}

TransformerActivation::TransformerActivation(const std::string& name) {
  if (name == "relu") kind_ = TransformerActivationKind::relu;
  else if (name == "gelu") kind_ = TransformerActivationKind::gelu;
  else VNN_THROW(ValueError, "Transformer activation should be \"relu\" or \"gelu\" (or a function), not \"", name, "\"");
}

Tensor TransformerActivation::operator()(const Tensor& x) const {
  switch (kind_) {
    case TransformerActivationKind::relu: return relu(x);
    case TransformerActivationKind::gelu: return gelu(x);
    case TransformerActivationKind::custom: break;
  }
  return fn_(x);
}

std::string TransformerActivation::name() const {
  return kind_ == TransformerActivationKind::relu ? "relu" : kind_ == TransformerActivationKind::gelu ? "gelu" : "custom";
}

namespace {

void check_layer_sizes(const char* op, int64_t d_model, int64_t nhead, int64_t dim_feedforward, double dropout) {
  VNN_CHECK(ValueError, d_model > 0 && nhead > 0 && dim_feedforward > 0, op,
            ": d_model, nhead and dim_feedforward must be positive, got ", d_model, ", ", nhead, " and ",
            dim_feedforward);
  VNN_CHECK(ValueError, d_model % nhead == 0, op, ": d_model ", d_model, " must be divisible by nhead ", nhead);
  VNN_CHECK(ValueError, dropout >= 0.0 && dropout <= 1.0, op, ": dropout must be in [0, 1], got ", dropout);
}

LayerNorm make_norm(int64_t d_model, double eps) { return LayerNorm(LayerNormOptions({d_model}).eps(eps)); }

std::string layer_text(const char* type, int64_t d, int64_t h, int64_t ff, const std::string& act, bool bf, bool nf) {
  std::string s = std::string(type) + "(d_model=" + std::to_string(d) + ", nhead=" + std::to_string(h) +
                  ", dim_feedforward=" + std::to_string(ff) + ", activation=" + act;
  if (bf) s += ", batch_first=true";
  if (nf) s += ", norm_first=true";
  return s + ")";
}

}  // namespace

// ---- encoder layer ------------------------------------------------------------

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& opt)
    : Cloneable("TransformerEncoderLayer"), options(opt) {
  check_layer_sizes("TransformerEncoderLayer", opt.d_model(), opt.nhead(), opt.dim_feedforward(), opt.dropout());
  reset();
}

void TransformerEncoderLayerImpl::reset() {
  const int64_t d = options.d_model(), ff = options.dim_feedforward();
  const double p = options.dropout();
  // PyTorch's registration order (and so its state-dict order).
  self_attn = register_module("self_attn", MultiheadAttention(MultiheadAttentionOptions(d, options.nhead())
                                                                  .dropout(p)
                                                                  .batch_first(options.batch_first())));
  linear1 = register_module("linear1", Linear(d, ff));
  dropout = register_module("dropout", Dropout(p));
  linear2 = register_module("linear2", Linear(ff, d));
  norm1 = register_module("norm1", make_norm(d, options.layer_norm_eps()));
  norm2 = register_module("norm2", make_norm(d, options.layer_norm_eps()));
  dropout1 = register_module("dropout1", Dropout(p));
  dropout2 = register_module("dropout2", Dropout(p));
}

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const Tensor& src_mask,
                                            const Tensor& src_key_padding_mask, bool is_causal) {
  auto sa = [&](const Tensor& x) {
    return dropout1(std::get<0>(self_attn(x, x, x, src_key_padding_mask, false, src_mask, true, is_causal)));
  };
  auto ff = [&](const Tensor& x) { return dropout2(linear2(dropout(options.activation()(linear1(x))))); };
  Tensor x = src;
  if (options.norm_first()) {
    x = add(x, sa(norm1(x)));
    x = add(x, ff(norm2(x)));
  } else {
    x = norm1(add(x, sa(x)));
    x = norm2(add(x, ff(x)));
  }
  return x;
}

std::string TransformerEncoderLayerImpl::describe() const {
  return layer_text("TransformerEncoderLayer", options.d_model(), options.nhead(), options.dim_feedforward(),
                    options.activation().name(), options.batch_first(), options.norm_first());
}

// ---- decoder layer ------------------------------------------------------------

TransformerDecoderLayerImpl::TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& opt)
    : Cloneable("TransformerDecoderLayer"), options(opt) {
  check_layer_sizes("TransformerDecoderLayer", opt.d_model(), opt.nhead(), opt.dim_feedforward(), opt.dropout());
  reset();
}

void TransformerDecoderLayerImpl::reset() {
  const int64_t d = options.d_model(), ff = options.dim_feedforward();
  const double p = options.dropout();
  auto mha = [&] {
    return MultiheadAttention(MultiheadAttentionOptions(d, options.nhead()).dropout(p).batch_first(options.batch_first()));
  };
  self_attn = register_module("self_attn", mha());
  multihead_attn = register_module("multihead_attn", mha());
  linear1 = register_module("linear1", Linear(d, ff));
  dropout = register_module("dropout", Dropout(p));
  linear2 = register_module("linear2", Linear(ff, d));
  norm1 = register_module("norm1", make_norm(d, options.layer_norm_eps()));
  norm2 = register_module("norm2", make_norm(d, options.layer_norm_eps()));
  norm3 = register_module("norm3", make_norm(d, options.layer_norm_eps()));
  dropout1 = register_module("dropout1", Dropout(p));
  dropout2 = register_module("dropout2", Dropout(p));
  dropout3 = register_module("dropout3", Dropout(p));
}

Tensor TransformerDecoderLayerImpl::forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask,
                                            const Tensor& memory_mask, const Tensor& tgt_key_padding_mask,
                                            const Tensor& memory_key_padding_mask, bool tgt_is_causal,
                                            bool memory_is_causal) {
  VNN_CHECK(ValueError, memory.defined(), "TransformerDecoderLayer: memory must be a defined tensor");
  auto sa = [&](const Tensor& x) {
    return dropout1(std::get<0>(self_attn(x, x, x, tgt_key_padding_mask, false, tgt_mask, true, tgt_is_causal)));
  };
  auto mha = [&](const Tensor& x) {
    return dropout2(std::get<0>(
        multihead_attn(x, memory, memory, memory_key_padding_mask, false, memory_mask, true, memory_is_causal)));
  };
  auto ff = [&](const Tensor& x) { return dropout3(linear2(dropout(options.activation()(linear1(x))))); };
  Tensor x = tgt;
  if (options.norm_first()) {
    x = add(x, sa(norm1(x)));
    x = add(x, mha(norm2(x)));
    x = add(x, ff(norm3(x)));
  } else {
    x = norm1(add(x, sa(x)));
    x = norm2(add(x, mha(x)));
    x = norm3(add(x, ff(x)));
  }
  return x;
}

std::string TransformerDecoderLayerImpl::describe() const {
  return layer_text("TransformerDecoderLayer", options.d_model(), options.nhead(), options.dim_feedforward(),
                    options.activation().name(), options.batch_first(), options.norm_first());
}

// ---- stacks -----------------------------------------------------------------------

namespace {

// num_layers clones of `layer` under "layers", and a clone of the norm under "norm".
template <class Holder>
void build_stack(Module& self, const char* op, const Holder& layer, int64_t num_layers, const ModulePtr& norm_template,
                 ModuleList& layers, ModulePtr& norm) {
  VNN_CHECK(ValueError, !layer.is_empty(), op, ": the layer to clone is an empty holder");
  VNN_CHECK(ValueError, num_layers >= 1, op, ": num_layers must be at least 1, got ", num_layers);
  layers = self.register_module("layers", ModuleList(std::make_shared<ModuleListImpl>()));
  for (int64_t i = 0; i < num_layers; ++i) layers->push_back(layer->clone());
  norm = norm_template ? norm_template->clone() : nullptr;
  if (norm) self.register_module("norm", norm);
}

}  // namespace

TransformerEncoderImpl::TransformerEncoderImpl(const TransformerEncoderOptions& opt)
    : Cloneable("TransformerEncoder"), options(opt) {
  reset();
}

void TransformerEncoderImpl::reset() {
  build_stack(*this, "TransformerEncoder", options.encoder_layer(), options.num_layers(), options.norm(), layers, norm);
}

Tensor TransformerEncoderImpl::forward(const Tensor& src, const Tensor& mask, const Tensor& src_key_padding_mask,
                                       bool is_causal) {
  Tensor x = src;
  for (const ModulePtr& m : *layers)
    x = static_cast<TransformerEncoderLayerImpl&>(*m).forward(x, mask, src_key_padding_mask, is_causal);
  return norm ? (*norm)(x) : x;
}

TransformerDecoderImpl::TransformerDecoderImpl(const TransformerDecoderOptions& opt)
    : Cloneable("TransformerDecoder"), options(opt) {
  reset();
}

void TransformerDecoderImpl::reset() {
  build_stack(*this, "TransformerDecoder", options.decoder_layer(), options.num_layers(), options.norm(), layers, norm);
}

Tensor TransformerDecoderImpl::forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask,
                                       const Tensor& memory_mask, const Tensor& tgt_key_padding_mask,
                                       const Tensor& memory_key_padding_mask, bool tgt_is_causal,
                                       bool memory_is_causal) {
  Tensor x = tgt;
  for (const ModulePtr& m : *layers)
    x = static_cast<TransformerDecoderLayerImpl&>(*m).forward(x, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                                                              memory_key_padding_mask, tgt_is_causal,
                                                              memory_is_causal);
  return norm ? (*norm)(x) : x;
}

// ---- Transformer --------------------------------------------------------------------

TransformerImpl::TransformerImpl(const TransformerOptions& opt) : Cloneable("Transformer"), options(opt) { reset(); }

void TransformerImpl::reset() {
  const int64_t d = options.d_model();
  encoder = register_module(
      "encoder", TransformerEncoder(TransformerEncoderOptions(TransformerEncoderLayerOptions(d, options.nhead())
                                                                   .dim_feedforward(options.dim_feedforward())
                                                                   .dropout(options.dropout())
                                                                   .activation(options.activation())
                                                                   .layer_norm_eps(options.layer_norm_eps())
                                                                   .batch_first(options.batch_first())
                                                                   .norm_first(options.norm_first()),
                                                               options.num_encoder_layers())
                                         .norm(make_norm(d, options.layer_norm_eps()))));
  decoder = register_module(
      "decoder", TransformerDecoder(TransformerDecoderOptions(TransformerDecoderLayerOptions(d, options.nhead())
                                                                   .dim_feedforward(options.dim_feedforward())
                                                                   .dropout(options.dropout())
                                                                   .activation(options.activation())
                                                                   .layer_norm_eps(options.layer_norm_eps())
                                                                   .batch_first(options.batch_first())
                                                                   .norm_first(options.norm_first()),
                                                               options.num_decoder_layers())
                                         .norm(make_norm(d, options.layer_norm_eps()))));
  // PyTorch's Transformer._reset_parameters: xavier-uniform for every parameter of two or more dims.
  for (Tensor& p : parameters())
    if (p.dim() > 1) init::xavier_uniform_(p);
}

Tensor TransformerImpl::forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask, const Tensor& tgt_mask,
                                const Tensor& memory_mask, const Tensor& src_key_padding_mask,
                                const Tensor& tgt_key_padding_mask, const Tensor& memory_key_padding_mask,
                                bool src_is_causal, bool tgt_is_causal, bool memory_is_causal) {
  VNN_CHECK(ValueError, src.defined() && tgt.defined(), "Transformer: src and tgt must be defined tensors");
  const int64_t d = options.d_model();
  VNN_CHECK(ShapeError, src.dim() == tgt.dim() && src.size(-1) == d && tgt.size(-1) == d, "Transformer: src ",
            src.sizes(), " and tgt ", tgt.sizes(), " must have the same number of dims and end in d_model ", d);
  if (src.dim() == 3) {
    const int b = options.batch_first() ? 0 : 1;
    VNN_CHECK(ShapeError, src.size(b) == tgt.size(b), "Transformer: the batch sizes of src ", src.sizes(), " and tgt ",
              tgt.sizes(), " differ (batch dim ", b, ", batch_first ", options.batch_first() ? "true" : "false", ")");
  }
  Tensor memory = encoder->forward(src, src_mask, src_key_padding_mask, src_is_causal);
  return decoder->forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask,
                          tgt_is_causal, memory_is_causal);
}

Tensor TransformerImpl::generate_square_subsequent_mask(int64_t sz, const TensorOptions& opt) {
  VNN_CHECK(ValueError, sz >= 0, "generate_square_subsequent_mask: sz must be non-negative, got ", sz);
  return triu(full({sz, sz}, -INFINITY, opt.with_requires_grad(false)), 1);
}

}  // namespace vnn::nn
