// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// module_db mappings of the recurrent layers and cells, MultiheadAttention
// and the Transformer layers. Positions follow torch.nn's constructors and
// forwards.
#include "moddb.hpp"

namespace vnn::moddb {
namespace {

Tensor maybe_tensor(Call& f, size_t i, const char* name) { return f.has(i, name) ? f.tensor(i, name) : Tensor(); }
// LSTM's (h0, c0) argument, absent or None: nullopt.
std::optional<std::tuple<Tensor, Tensor>> lstm_state(Call& f) {
  const Arg* hx = f.get(1, "hx");
  if (!hx) return std::nullopt;
  auto t = hx->tensors();
  if (t.size() != 2) throw std::invalid_argument("module_db: LSTM hx with " + std::to_string(t.size()) + " tensors");
  return std::make_tuple(t[0], t[1]);
}

// ---- recurrent layers ----------------------------------------------------------------
// The options every recurrent layer shares (positions as PyTorch's RNN(...) without nonlinearity).
template <class O>
O recurrent_options(Call& c, size_t after_layers) {
  O o(c.integer(0, "input_size"), c.integer(1, "hidden_size"));
  o.num_layers(c.integer(2, "num_layers", 1)).bias(c.boolean(after_layers, "bias", true));
  o.batch_first(c.boolean(after_layers + 1, "batch_first", false)).dropout(c.number(after_layers + 2, "dropout", 0.0));
  return o.bidirectional(c.boolean(after_layers + 3, "bidirectional", false));
}
// RNN and GRU: forward(input, hx=None) -> (output, h_n).
template <class Holder>
Built with_state(Holder m) {
  auto p = m.ptr();
  return {p, [p](Call& f) -> Arg { return p->forward(f.tensor(0, "input"), maybe_tensor(f, 1, "hx")); }};
}
MODDB("nn.RNN") {
  auto o = recurrent_options<nn::RNNOptions>(c, 4);
  return with_state(nn::RNN(o.nonlinearity(c.str(3, "nonlinearity", "tanh"))));
};
MODDB("nn.GRU") { return with_state(nn::GRU(recurrent_options<nn::GRUOptions>(c, 3))); };
MODDB("nn.LSTM") {
  auto o = recurrent_options<nn::LSTMOptions>(c, 3);
  auto p = nn::LSTM(o.proj_size(c.integer(7, "proj_size", 0))).ptr();
  return {p, [p](Call& f) -> Arg { return p->forward(f.tensor(0, "input"), lstm_state(f)); }};
};
MODDB("nn.RNNCell") {
  nn::RNNCellOptions o(c.integer(0, "input_size"), c.integer(1, "hidden_size"));
  o.bias(c.boolean(2, "bias", true)).nonlinearity(c.str(3, "nonlinearity", "tanh"));
  return with_state(nn::RNNCell(o));
};
MODDB("nn.GRUCell") {
  nn::GRUCellOptions o(c.integer(0, "input_size"), c.integer(1, "hidden_size"));
  return with_state(nn::GRUCell(o.bias(c.boolean(2, "bias", true))));
};
MODDB("nn.LSTMCell") {
  nn::LSTMCellOptions o(c.integer(0, "input_size"), c.integer(1, "hidden_size"));
  auto p = nn::LSTMCell(o.bias(c.boolean(2, "bias", true))).ptr();
  return {p, [p](Call& f) -> Arg { return p->forward(f.tensor(0, "input"), lstm_state(f)); }};
};

// ---- attention -------------------------------------------------------------------------
MODDB("nn.MultiheadAttention") {
  nn::MultiheadAttentionOptions o(c.integer(0, "embed_dim"), c.integer(1, "num_heads"));
  o.dropout(c.number(2, "dropout", 0.0))
      .bias(c.boolean(3, "bias", true))
      .add_bias_kv(c.boolean(4, "add_bias_kv", false));
  o.add_zero_attn(c.boolean(5, "add_zero_attn", false)).batch_first(c.boolean(8, "batch_first", false));
  if (o.add_bias_kv() || o.add_zero_attn()) gap("MultiheadAttention(add_bias_kv / add_zero_attn = True)");
  if (c.has(6, "kdim")) o.kdim(c.integer(6, "kdim"));
  if (c.has(7, "vdim")) o.vdim(c.integer(7, "vdim"));
  auto p = nn::MultiheadAttention(o).ptr();
  return {p, [p](Call& f) -> Arg {
            auto [out, weights] = p->forward(
                f.tensor(0, "query"), f.tensor(1, "key"), f.tensor(2, "value"), maybe_tensor(f, 3, "key_padding_mask"),
                f.boolean(4, "need_weights", true), maybe_tensor(f, 5, "attn_mask"),
                f.boolean(6, "average_attn_weights", true), f.boolean(7, "is_causal", false));
            std::vector<Arg> items{Arg(out), weights.defined() ? Arg(weights) : Arg()};
            Arg a;
            a.kind = Arg::Kind::list;
            a.items = std::move(items);
            return a;
          }};
};

// ---- Transformer layers ------------------------------------------------------------------
// The options a Transformer layer takes after d_model and nhead, from
// position `first` on, or from keywords "prefix.name".
template <class O>
O layer_options(Call& c, const std::string& prefix, size_t first) {
  auto key = [&](const char* name) { return prefix + name; };
  auto pos = [&](size_t k) { return first == SIZE_MAX ? SIZE_MAX : first + k; };
  O o(c.integer(pos(0), key("d_model").c_str()), c.integer(pos(1), key("nhead").c_str()));
  o.dim_feedforward(c.integer(pos(2), key("dim_feedforward").c_str(), 2048));
  o.dropout(c.number(pos(3), key("dropout").c_str(), 0.1));
  o.activation(c.str(pos(4), key("activation").c_str(), "relu"));
  o.layer_norm_eps(c.number(pos(5), key("layer_norm_eps").c_str(), 1e-5));
  o.batch_first(c.boolean(pos(6), key("batch_first").c_str(), false));
  o.norm_first(c.boolean(pos(7), key("norm_first").c_str(), false));
  if (!c.boolean(pos(8), key("bias").c_str(), true)) gap("Transformer layers with bias=False");
  return o;
}
MODDB("nn.TransformerEncoderLayer") {
  auto p = nn::TransformerEncoderLayer(layer_options<nn::TransformerEncoderLayerOptions>(c, "", 0)).ptr();
  return {p, [p](Call& f) -> Arg {
            return p->forward(f.tensor(0, "src"), maybe_tensor(f, 1, "src_mask"),
                              maybe_tensor(f, 2, "src_key_padding_mask"), f.boolean(3, "is_causal", false));
          }};
};
MODDB("nn.TransformerDecoderLayer") {
  auto p = nn::TransformerDecoderLayer(layer_options<nn::TransformerDecoderLayerOptions>(c, "", 0)).ptr();
  return {p, [p](Call& f) -> Arg {
            return p->forward(f.tensor(0, "tgt"), f.tensor(1, "memory"), maybe_tensor(f, 2, "tgt_mask"),
                              maybe_tensor(f, 3, "memory_mask"), maybe_tensor(f, 4, "tgt_key_padding_mask"),
                              maybe_tensor(f, 5, "memory_key_padding_mask"), f.boolean(6, "tgt_is_causal", false),
                              f.boolean(7, "memory_is_causal", false));
          }};
};
MODDB("nn.TransformerEncoder") {
  // export_moduledb.py passes the layer as its class name, its options as "args[0].name".
  const bool positional = c.given(0);
  const std::string layer = c.str(0, "encoder_layer", "");
  if (layer != "TransformerEncoderLayer") gap("TransformerEncoder of a " + layer);
  auto lo = layer_options<nn::TransformerEncoderLayerOptions>(c, positional ? "args[0]." : "encoder_layer.", SIZE_MAX);
  nn::TransformerEncoderOptions o(lo, c.integer(1, "num_layers"));
  if (c.has(2, "norm")) gap("TransformerEncoder(norm=...)");
  c.boolean(3, "enable_nested_tensor", true);  // a PyTorch fast path: the values are the same
  c.boolean(4, "mask_check", true);            // ditto
  auto p = nn::TransformerEncoder(o).ptr();
  return {p, [p](Call& f) -> Arg {
            return p->forward(f.tensor(0, "src"), maybe_tensor(f, 1, "mask"),
                              maybe_tensor(f, 2, "src_key_padding_mask"), f.boolean(3, "is_causal", false));
          }};
};
MODDB("nn.Transformer") {
  nn::TransformerOptions o(c.integer(0, "d_model", 512), c.integer(1, "nhead", 8),
                           c.integer(2, "num_encoder_layers", 6), c.integer(3, "num_decoder_layers", 6));
  o.dim_feedforward(c.integer(4, "dim_feedforward", 2048)).dropout(c.number(5, "dropout", 0.1));
  o.activation(c.str(6, "activation", "relu"));
  if (c.has(7, "custom_encoder") || c.has(8, "custom_decoder")) gap("Transformer(custom_encoder / custom_decoder)");
  o.layer_norm_eps(c.number(9, "layer_norm_eps", 1e-5)).batch_first(c.boolean(10, "batch_first", false));
  o.norm_first(c.boolean(11, "norm_first", false));
  if (!c.boolean(12, "bias", true)) gap("Transformer layers with bias=False");
  auto p = nn::Transformer(o).ptr();
  return {p, [p](Call& f) -> Arg {
            return p->forward(f.tensor(0, "src"), f.tensor(1, "tgt"), maybe_tensor(f, 2, "src_mask"),
                              maybe_tensor(f, 3, "tgt_mask"), maybe_tensor(f, 4, "memory_mask"),
                              maybe_tensor(f, 5, "src_key_padding_mask"), maybe_tensor(f, 6, "tgt_key_padding_mask"),
                              maybe_tensor(f, 7, "memory_key_padding_mask"), f.boolean(8, "src_is_causal", false),
                              f.boolean(9, "tgt_is_causal", false), f.boolean(10, "memory_is_causal", false));
          }};
};

}  // namespace
}  // namespace vnn::moddb
