// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Attention and Transformer layers in LibTorch's spelling, with PyTorch's
// parameter names, so a state_dict saved from torch.nn loads unchanged:
//   MultiheadAttention        in_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias
//                             (q_proj_weight, k_proj_weight, v_proj_weight when kdim / vdim differ)
//   TransformerEncoderLayer   self_attn.*, linear1.*, linear2.*, norm1.*, norm2.*
//   TransformerDecoderLayer   self_attn.*, multihead_attn.*, linear1.*, linear2.*, norm1.*, norm2.*, norm3.*
//   TransformerEncoder        layers.0.*, layers.1.*, ..., norm.* (with a final norm)
//   TransformerDecoder        layers.0.*, ..., norm.*
//   Transformer               encoder.layers.0.*, ..., encoder.norm.*, decoder.layers.0.*, ..., decoder.norm.*
//
//   vnn::nn::TransformerEncoderLayer layer(
//       vnn::nn::TransformerEncoderLayerOptions(64, 4).dim_feedforward(256).batch_first(true).norm_first(true));
//   vnn::nn::TransformerEncoder enc(vnn::nn::TransformerEncoderOptions(layer, 2));
//   vnn::Tensor y = enc(x, vnn::nn::Transformer::generate_square_subsequent_mask(T));
//
// Masks follow torch.nn (not scaled_dot_product_attention): a bool
// attn_mask or key_padding_mask is true where attention is NOT allowed; a
// float one is added to the scores. attn_mask is [L, S] or [N * num_heads,
// L, S]; key_padding_mask is [N, S]. Without batch_first, sequences are [L,
// N, E]; with it [N, L, E]; unbatched [L, E] inputs work too. Dropout draws
// from vnn's default generator and is active in training mode only.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "vnn/nn/container.h"
#include "vnn/nn/layers.h"
#include "vnn/nn/module.h"
#include "vnn/nn/normalization.h"
#include "vnn/nn/options.h"

namespace vnn::nn {

/// Options of MultiheadAttention (torch::nn::MultiheadAttentionOptions, plus Python's batch_first).
struct MultiheadAttentionOptions {
  /// Attention of model width `embed_dim` split over `num_heads` heads (embed_dim % num_heads == 0).
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads), kdim_(embed_dim), vdim_(embed_dim) {}
  /// Model width E: the query's last dim and the output's.
  VNN_ARG(int64_t, embed_dim);
  /// Number of heads; each attends over embed_dim / num_heads features.
  VNN_ARG(int64_t, num_heads);
  /// Dropout probability on the attention weights (training only).
  VNN_ARG(double, dropout) = 0.0;
  /// Whether the input and output projections have biases.
  VNN_ARG(bool, bias) = true;
  /// Learned key/value bias rows (PyTorch's add_bias_kv): only false is supported.
  VNN_ARG(bool, add_bias_kv) = false;
  /// A zero key/value row appended (PyTorch's add_zero_attn): only false is supported.
  VNN_ARG(bool, add_zero_attn) = false;
  /// Features of the key (default embed_dim); when kdim or vdim differs from embed_dim the projections are
  /// separate parameters q_proj_weight, k_proj_weight, v_proj_weight, as PyTorch's.
  VNN_ARG(int64_t, kdim);
  /// Features of the value (default embed_dim).
  VNN_ARG(int64_t, vdim);
  /// Inputs and outputs are [N, L, E] (true) or [L, N, E] (false, the default, as PyTorch's).
  VNN_ARG(bool, batch_first) = false;
};

/// Multi-head attention (torch.nn.MultiheadAttention). forward returns
/// (output, weights): output has the query's layout; weights [N, L, S]
/// (averaged over heads) or [N, num_heads, L, S], undefined unless
/// need_weights. Without need_weights the heads run through
/// vnn::scaled_dot_product_attention (the fused kernel where the backend has
/// one); with it through an explicit softmax, which materialises the weights.
class MultiheadAttentionImpl : public Cloneable<MultiheadAttentionImpl> {
 public:
  /// From options (ValueError when embed_dim % num_heads != 0; Unsupported for add_bias_kv / add_zero_attn).
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);
  /// MultiheadAttention(embed_dim, num_heads) with the default options.
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}
  /// Builds the parameters: xavier-uniform projections, zero biases (PyTorch's _reset_parameters).
  void reset() override;
  /// Attention of query [L, N, E] over key [S, N, kdim] and value [S, N, vdim] ([N, L, E] ... with
  /// batch_first; [L, E] ... unbatched). key_padding_mask [N, S] and attn_mask [L, S] or [N * num_heads, L, S]:
  /// bool true = not allowed, float = added. is_causal without attn_mask masks key j > query i (top-left
  /// aligned); with an attn_mask it is a hint, and the mask is used. average_attn_weights: the returned
  /// weights are the mean over heads.
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {}, bool need_weights = true,
                                     const Tensor& attn_mask = {}, bool average_attn_weights = true,
                                     bool is_causal = false);
  std::string describe() const override;
  /// The options the layer was built with.
  MultiheadAttentionOptions options;
  /// The packed projection [3E, E] (undefined when kdim / vdim differ).
  Tensor in_proj_weight;
  /// The projection biases [3E] (undefined without bias).
  Tensor in_proj_bias;
  /// Separate projections [E, E], [E, kdim], [E, vdim] (defined only when kdim / vdim differ).
  ///@{
  Tensor q_proj_weight, k_proj_weight, v_proj_weight;
  ///@}
  /// The output projection, E -> E.
  Linear out_proj{nullptr};
  /// embed_dim / num_heads.
  int64_t head_dim = 0;
  /// Whether kdim == vdim == embed_dim (one packed in_proj_weight).
  bool qkv_same_embed_dim = true;
};
/// The holder of MultiheadAttentionImpl.
VNN_MODULE(MultiheadAttention);

/// The feed-forward activation of the Transformer layers: kReLU, kGELU, "relu", "gelu" or any function.
enum class TransformerActivationKind { relu, gelu, custom };
/// LibTorch's torch::kReLU spelling for the activation option.
inline constexpr TransformerActivationKind kReLU = TransformerActivationKind::relu;
/// LibTorch's torch::kGELU spelling for the activation option.
inline constexpr TransformerActivationKind kGELU = TransformerActivationKind::gelu;
/// The activation of a Transformer layer's feed-forward block.
class TransformerActivation {
 public:
  /// kReLU or kGELU (the exact GELU, as PyTorch's "gelu").
  TransformerActivation(TransformerActivationKind kind = kReLU);  // NOLINT: implicit by design
  /// "relu" or "gelu" (ValueError otherwise), as PyTorch's strings.
  TransformerActivation(const char* name);  // NOLINT: implicit by design
  /// "relu" or "gelu" (ValueError otherwise).
  TransformerActivation(const std::string& name);  // NOLINT: implicit by design
  /// Any differentiable function of one tensor (a lambda, vnn::relu, a std::function).
  template <class F, std::enable_if_t<std::is_invocable_r_v<Tensor, F, const Tensor&>, int> = 0>
  TransformerActivation(F fn)  // NOLINT: implicit by design
      : kind_(TransformerActivationKind::custom), fn_(std::move(fn)) {}
  /// The activation applied to x.
  Tensor operator()(const Tensor& x) const;
  /// Which one it is.
  TransformerActivationKind kind() const { return kind_; }
  /// "relu", "gelu" or "custom".
  std::string name() const;

 private:
  TransformerActivationKind kind_ = TransformerActivationKind::relu;
  std::function<Tensor(const Tensor&)> fn_;
};

/// Options of a transformer layer (LibTorch's, plus Python's layer_norm_eps, batch_first, norm_first). One
/// template for both layers, so TransformerEncoderLayerOptions and TransformerDecoderLayerOptions stay distinct types
/// (as in LibTorch) with the same fields.
template <class Layer>
struct TransformerLayerOptions {
  /// A layer of width `d_model` with `nhead` attention heads.
  TransformerLayerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  /// Model width.
  VNN_ARG(int64_t, d_model);
  /// Attention heads.
  VNN_ARG(int64_t, nhead);
  /// Hidden width of the feed-forward block.
  VNN_ARG(int64_t, dim_feedforward) = 2048;
  /// Dropout after each attention, inside and after the feed-forward block (training only).
  VNN_ARG(double, dropout) = 0.1;
  /// Feed-forward activation: kReLU (default), kGELU, "relu", "gelu" or a function.
  VNN_ARG(TransformerActivation, activation) = kReLU;
  /// LayerNorm eps.
  VNN_ARG(double, layer_norm_eps) = 1e-5;
  /// Sequences are [N, L, E] (true) or [L, N, E] (false, the default).
  VNN_ARG(bool, batch_first) = false;
  /// Pre-norm (LayerNorm before attention and feed-forward) instead of post-norm.
  VNN_ARG(bool, norm_first) = false;
};

class TransformerEncoderLayerImpl;
class TransformerDecoderLayerImpl;
/// Options of TransformerEncoderLayer.
using TransformerEncoderLayerOptions = TransformerLayerOptions<TransformerEncoderLayerImpl>;
/// Options of TransformerDecoderLayer.
using TransformerDecoderLayerOptions = TransformerLayerOptions<TransformerDecoderLayerImpl>;

/// Self-attention and a feed-forward block, each with a residual and LayerNorm (torch.nn.TransformerEncoderLayer).
class TransformerEncoderLayerImpl : public Cloneable<TransformerEncoderLayerImpl> {
 public:
  /// From options.
  explicit TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& options);
  /// TransformerEncoderLayer(d_model, nhead) with the default options.
  TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead)) {}
  void reset() override;
  /// forward(src) without masks.
  Tensor forward(const Tensor& src) { return forward(src, Tensor()); }
  /// src [L, N, E] ([N, L, E] with batch_first); src_mask and src_key_padding_mask as MultiheadAttention's.
  Tensor forward(const Tensor& src, const Tensor& src_mask, const Tensor& src_key_padding_mask = {},
                 bool is_causal = false);
  std::string describe() const override;
  /// The options the layer was built with.
  TransformerEncoderLayerOptions options;
  /// Submodules, under PyTorch's names.
  ///@{
  MultiheadAttention self_attn{nullptr};
  Linear linear1{nullptr}, linear2{nullptr};
  Dropout dropout{nullptr}, dropout1{nullptr}, dropout2{nullptr};
  LayerNorm norm1{nullptr}, norm2{nullptr};
  ///@}
};
/// The holder of TransformerEncoderLayerImpl.
VNN_MODULE(TransformerEncoderLayer);

/// Self-attention, attention over the encoder's memory and a feed-forward block (torch.nn.TransformerDecoderLayer).
class TransformerDecoderLayerImpl : public Cloneable<TransformerDecoderLayerImpl> {
 public:
  /// From options.
  explicit TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& options);
  /// TransformerDecoderLayer(d_model, nhead) with the default options.
  TransformerDecoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerDecoderLayerImpl(TransformerDecoderLayerOptions(d_model, nhead)) {}
  void reset() override;
  /// tgt [T, N, E] and memory [S, N, E] ([N, ., E] with batch_first); masks as MultiheadAttention's.
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {},
                 const Tensor& memory_mask = {}, const Tensor& tgt_key_padding_mask = {},
                 const Tensor& memory_key_padding_mask = {}, bool tgt_is_causal = false,
                 bool memory_is_causal = false);
  std::string describe() const override;
  /// The options the layer was built with.
  TransformerDecoderLayerOptions options;
  /// Submodules, under PyTorch's names.
  ///@{
  MultiheadAttention self_attn{nullptr}, multihead_attn{nullptr};
  Linear linear1{nullptr}, linear2{nullptr};
  Dropout dropout{nullptr}, dropout1{nullptr}, dropout2{nullptr}, dropout3{nullptr};
  LayerNorm norm1{nullptr}, norm2{nullptr}, norm3{nullptr};
  ///@}
 private:
};
/// The holder of TransformerDecoderLayerImpl.
VNN_MODULE(TransformerDecoderLayer);

/// Options of TransformerEncoder: the layer cloned num_layers times and an optional final norm.
struct TransformerEncoderOptions {
  /// num_layers clones of `encoder_layer` (each starts with its parameters).
  TransformerEncoderOptions(TransformerEncoderLayer encoder_layer, int64_t num_layers)
      : encoder_layer_(std::move(encoder_layer)), num_layers_(num_layers) {}
  /// num_layers layers built from `encoder_layer_options`.
  TransformerEncoderOptions(const TransformerEncoderLayerOptions& encoder_layer_options, int64_t num_layers)
      : encoder_layer_(TransformerEncoderLayer(encoder_layer_options)), num_layers_(num_layers) {}
  /// The layer every layer is cloned from.
  VNN_ARG(TransformerEncoderLayer, encoder_layer) = nullptr;
  /// Number of layers.
  VNN_ARG(int64_t, num_layers);
  /// A module applied after the last layer (a LayerNorm, cloned), or null.
  VNN_ARG(ModulePtr, norm) = nullptr;
};

/// A stack of encoder layers (torch.nn.TransformerEncoder): keys layers.N.* and norm.*.
class TransformerEncoderImpl : public Cloneable<TransformerEncoderImpl> {
 public:
  /// From options (ValueError for num_layers < 1 or an empty layer).
  explicit TransformerEncoderImpl(const TransformerEncoderOptions& options);
  void reset() override;
  /// forward(src) without masks.
  Tensor forward(const Tensor& src) { return forward(src, Tensor()); }
  /// Every layer in turn with the same masks, then the norm.
  Tensor forward(const Tensor& src, const Tensor& mask, const Tensor& src_key_padding_mask = {},
                 bool is_causal = false);
  /// The options the stack was built with.
  TransformerEncoderOptions options;
  /// The layers (TransformerEncoderLayerImpl), children "0", "1", ...
  ModuleList layers{nullptr};
  /// The final norm, or null.
  ModulePtr norm;
};
/// The holder of TransformerEncoderImpl.
VNN_MODULE(TransformerEncoder);

/// Options of TransformerDecoder: the layer cloned num_layers times and an optional final norm.
struct TransformerDecoderOptions {
  /// num_layers clones of `decoder_layer`.
  TransformerDecoderOptions(TransformerDecoderLayer decoder_layer, int64_t num_layers)
      : decoder_layer_(std::move(decoder_layer)), num_layers_(num_layers) {}
  /// num_layers layers built from `decoder_layer_options`.
  TransformerDecoderOptions(const TransformerDecoderLayerOptions& decoder_layer_options, int64_t num_layers)
      : decoder_layer_(TransformerDecoderLayer(decoder_layer_options)), num_layers_(num_layers) {}
  /// The layer every layer is cloned from.
  VNN_ARG(TransformerDecoderLayer, decoder_layer) = nullptr;
  /// Number of layers.
  VNN_ARG(int64_t, num_layers);
  /// A module applied after the last layer (a LayerNorm, cloned), or null.
  VNN_ARG(ModulePtr, norm) = nullptr;
};

/// A stack of decoder layers (torch.nn.TransformerDecoder): keys layers.N.* and norm.*.
class TransformerDecoderImpl : public Cloneable<TransformerDecoderImpl> {
 public:
  /// From options (ValueError for num_layers < 1 or an empty layer).
  explicit TransformerDecoderImpl(const TransformerDecoderOptions& options);
  void reset() override;
  /// Every layer in turn with the same memory and masks, then the norm.
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {},
                 const Tensor& memory_mask = {}, const Tensor& tgt_key_padding_mask = {},
                 const Tensor& memory_key_padding_mask = {}, bool tgt_is_causal = false,
                 bool memory_is_causal = false);
  /// The options the stack was built with.
  TransformerDecoderOptions options;
  /// The layers (TransformerDecoderLayerImpl), children "0", "1", ...
  ModuleList layers{nullptr};
  /// The final norm, or null.
  ModulePtr norm;
 private:
};
/// The holder of TransformerDecoderImpl.
VNN_MODULE(TransformerDecoder);

/// Options of Transformer (torch::nn::TransformerOptions, plus Python's layer_norm_eps, batch_first, norm_first).
struct TransformerOptions {
  /// PyTorch's defaults: d_model 512, nhead 8, 6 + 6 layers.
  TransformerOptions() = default;
  /// d_model and nhead, 6 + 6 layers.
  TransformerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  /// Every size.
  TransformerOptions(int64_t d_model, int64_t nhead, int64_t num_encoder_layers, int64_t num_decoder_layers)
      : d_model_(d_model), nhead_(nhead), num_encoder_layers_(num_encoder_layers),
        num_decoder_layers_(num_decoder_layers) {}
  /// Model width.
  VNN_ARG(int64_t, d_model) = 512;
  /// Attention heads.
  VNN_ARG(int64_t, nhead) = 8;
  /// Encoder layers.
  VNN_ARG(int64_t, num_encoder_layers) = 6;
  /// Decoder layers.
  VNN_ARG(int64_t, num_decoder_layers) = 6;
  /// Hidden width of the feed-forward blocks.
  VNN_ARG(int64_t, dim_feedforward) = 2048;
  /// Dropout probability (training only).
  VNN_ARG(double, dropout) = 0.1;
  /// Feed-forward activation.
  VNN_ARG(TransformerActivation, activation) = kReLU;
  /// LayerNorm eps.
  VNN_ARG(double, layer_norm_eps) = 1e-5;
  /// Sequences are [N, L, E] (true) or [L, N, E] (false, the default).
  VNN_ARG(bool, batch_first) = false;
  /// Pre-norm layers.
  VNN_ARG(bool, norm_first) = false;
};

/// The encoder-decoder model of "Attention Is All You Need" (torch.nn.Transformer): keys encoder.* and decoder.*,
/// each stack with a final LayerNorm; every parameter of two or more dims starts xavier-uniform, as PyTorch's.
class TransformerImpl : public Cloneable<TransformerImpl> {
 public:
  /// From options.
  explicit TransformerImpl(const TransformerOptions& options = {});
  void reset() override;
  /// The decoder's output for src [S, N, E] and tgt [T, N, E] ([N, ., E] with batch_first).
  Tensor forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask = {}, const Tensor& tgt_mask = {},
                 const Tensor& memory_mask = {}, const Tensor& src_key_padding_mask = {},
                 const Tensor& tgt_key_padding_mask = {}, const Tensor& memory_key_padding_mask = {},
                 bool src_is_causal = false, bool tgt_is_causal = false, bool memory_is_causal = false);
  /// A float [sz, sz] mask: -inf above the diagonal, 0 on and below it.
  static Tensor generate_square_subsequent_mask(int64_t sz, const TensorOptions& options = {});
  /// The options the model was built with.
  TransformerOptions options;
  /// The encoder and decoder stacks.
  ///@{
  TransformerEncoder encoder{nullptr};
  TransformerDecoder decoder{nullptr};
  ///@}
 private:
};
/// The holder of TransformerImpl; Transformer::generate_square_subsequent_mask(sz) as PyTorch's static method.
class Transformer : public ModuleHolder<TransformerImpl> {
 public:
  using ModuleHolder<TransformerImpl>::ModuleHolder;
  /// A float [sz, sz] mask: -inf above the diagonal, 0 on and below it.
  static Tensor generate_square_subsequent_mask(int64_t sz, const TensorOptions& options = {}) {
    return TransformerImpl::generate_square_subsequent_mask(sz, options);
  }
};

}  // namespace vnn::nn
