// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// MultiheadAttention with PyTorch's parameters and semantics
// (torch.nn.functional.multi_head_attention_forward of PyTorch 2.x): the
// inputs are brought to [N, L, E] once, projected, split into heads
// [N, H, L, E / H], attended, merged and projected back. torch.nn's masks
// (bool true = masked, float = added; attn_mask [L, S] or [N * H, L, S],
// key_padding_mask [N, S]) are merged into one additive mask broadcast to
// [N, H, L, S]. Without need_weights the heads go to
// scaled_dot_product_attention (the fused kernel where there is one); with
// it the weights are formed explicitly, as PyTorch does.
#include <cmath>
#include <string>
#include <vector>

#include "vnn/attention.h"
#include "vnn/detail/message.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/linalg.h"
#include "vnn/nn/init.h"
#include "vnn/nn/transformer.h"
#include "vnn/random.h"
#include "vnn/reduction.h"

namespace vnn::nn {

namespace {

// Dropout as DropoutImpl's (float32 uniforms for 16-bit x, scale applied once).
Tensor dropout(const Tensor& x, double p) {
  if (p <= 0.0) return x;
  if (p >= 1.0) return mul(x, 0.0);
  DType u = x.dtype() == kFloat64 ? kFloat64 : kFloat32;
  Tensor keep = lt(rand(x.sizes(), TensorOptions(x.device()).with(u)), 1.0 - p);
  return mul(mul(x, keep.to(x.dtype())), 1.0 / (1.0 - p));
}

// A torch.nn mask as an additive mask of `dtype`: bool true -> -inf, float -> itself.
Tensor additive(const Tensor& m, DType dtype, const char* what) {
  if (m.dtype() == kBool) {
    Tensor z = zeros(m.sizes(), TensorOptions(m.device()).with(dtype));
    return masked_fill(z, m, -INFINITY);
  }
  VNN_CHECK(DTypeError, is_floating(m.dtype()), "MultiheadAttention: ", what, " must be bool or floating, got ",
            name(m.dtype()));
  return m.to(dtype);
}

}  // namespace

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& opt)
    : Cloneable("MultiheadAttention"), options(opt) {
  const int64_t e = opt.embed_dim(), h = opt.num_heads();
  VNN_CHECK(ValueError, e > 0 && h > 0, "MultiheadAttention: embed_dim and num_heads must be positive, got ", e,
            " and ", h);
  VNN_CHECK(ValueError, e % h == 0, "MultiheadAttention: embed_dim ", e, " must be divisible by num_heads ", h);
  VNN_CHECK(ValueError, opt.kdim() > 0 && opt.vdim() > 0, "MultiheadAttention: kdim and vdim must be positive, got ",
            opt.kdim(), " and ", opt.vdim());
  VNN_CHECK(ValueError, opt.dropout() >= 0.0 && opt.dropout() <= 1.0,
            "MultiheadAttention: dropout must be in [0, 1], got ", opt.dropout());
  if (opt.add_bias_kv() || opt.add_zero_attn())
    VNN_THROW(Unsupported, "MultiheadAttention: add_bias_kv and add_zero_attn are not supported; leave them false");
  reset();
}

void MultiheadAttentionImpl::reset() {
  const int64_t e = options.embed_dim();
  head_dim = e / options.num_heads();
  qkv_same_embed_dim = options.kdim() == e && options.vdim() == e;
  in_proj_weight = q_proj_weight = k_proj_weight = v_proj_weight = in_proj_bias = Tensor();
  // Registration order gives PyTorch's state-dict order.
  if (qkv_same_embed_dim) {
    Tensor w = empty({3 * e, e});
    init::xavier_uniform_(w);
    in_proj_weight = register_parameter("in_proj_weight", w);
  } else {
    Tensor q = empty({e, e}), k = empty({e, options.kdim()}), v = empty({e, options.vdim()});
    init::xavier_uniform_(q);
    init::xavier_uniform_(k);
    init::xavier_uniform_(v);
    q_proj_weight = register_parameter("q_proj_weight", q);
    k_proj_weight = register_parameter("k_proj_weight", k);
    v_proj_weight = register_parameter("v_proj_weight", v);
  }
  if (options.bias()) in_proj_bias = register_parameter("in_proj_bias", zeros({3 * e}));
  out_proj = register_module("out_proj", Linear(LinearOptions(e, e).bias(options.bias())));
  if (options.bias()) init::zeros_(out_proj->bias);
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(const Tensor& query, const Tensor& key,
                                                           const Tensor& value, const Tensor& key_padding_mask,
                                                           bool need_weights, const Tensor& attn_mask,
                                                           bool average_attn_weights, bool is_causal) {
  const char* op = "MultiheadAttention";
  VNN_CHECK(ValueError, query.defined() && key.defined() && value.defined(), op,
            ": query, key and value must be defined tensors");
  const bool batched = query.dim() == 3;
  VNN_CHECK(ShapeError, (query.dim() == 2 || batched) && key.dim() == query.dim() && value.dim() == query.dim(), op,
            ": query, key and value must all be 3-D (batched) or all 2-D (unbatched), got shapes ", query.sizes(),
            ", ", key.sizes(), " and ", value.sizes());
  const bool bf = options.batch_first();
  auto to_nle = [&](const Tensor& t) { return !batched ? t.unsqueeze(0) : bf ? t : t.transpose(0, 1); };
  Tensor q = to_nle(query), k = to_nle(key), v = to_nle(value);
  const int64_t E = options.embed_dim(), H = options.num_heads(), hd = head_dim;
  const int64_t N = q.size(0), L = q.size(1), S = k.size(1);
  VNN_CHECK(ShapeError, q.size(2) == E && k.size(2) == options.kdim() && v.size(2) == options.vdim(), op,
            ": query, key and value must end in embed_dim ", E, ", kdim ", options.kdim(), " and vdim ",
            options.vdim(), ", got shapes ", query.sizes(), ", ", key.sizes(), " and ", value.sizes());
  VNN_CHECK(ShapeError, k.size(0) == N && v.size(0) == N && v.size(1) == S, op, ": key ", key.sizes(), " and value ",
            value.sizes(), " must have the query's batch size (", N, ") and one sequence length; batch_first is ",
            bf ? "true" : "false");

  // Projections. Self-attention (one tensor passed three times) takes one
  // GEMM with the packed weight, and attention over one memory passed as key
  // and value one GEMM for both, as PyTorch's.
  auto bias_part = [&](int64_t i) { return in_proj_bias.defined() ? in_proj_bias.narrow(0, i * E, E) : Tensor(); };
  Tensor qp, kp, vp;
  if (qkv_same_embed_dim && query.impl() == key.impl() && key.impl() == value.impl()) {
    std::vector<Tensor> qkv = vnn::linear(q, in_proj_weight, in_proj_bias).chunk(3, -1);
    qp = qkv[0];
    kp = qkv[1];
    vp = qkv[2];
  } else if (qkv_same_embed_dim && key.impl() == value.impl()) {
    qp = vnn::linear(q, in_proj_weight.narrow(0, 0, E), bias_part(0));
    std::vector<Tensor> kv = vnn::linear(k, in_proj_weight.narrow(0, E, 2 * E),
                                         in_proj_bias.defined() ? in_proj_bias.narrow(0, E, 2 * E) : Tensor())
                                 .chunk(2, -1);
    kp = kv[0];
    vp = kv[1];
  } else {
    const Tensor& wq = qkv_same_embed_dim ? in_proj_weight.narrow(0, 0, E) : q_proj_weight;
    const Tensor& wk = qkv_same_embed_dim ? in_proj_weight.narrow(0, E, E) : k_proj_weight;
    const Tensor& wv = qkv_same_embed_dim ? in_proj_weight.narrow(0, 2 * E, E) : v_proj_weight;
    qp = vnn::linear(q, wq, bias_part(0));
    kp = vnn::linear(k, wk, bias_part(1));
    vp = vnn::linear(v, wv, bias_part(2));
  }
  auto heads = [&](const Tensor& t, int64_t len) { return t.reshape({N, len, H, hd}).transpose(1, 2); };
  Tensor qh = heads(qp, L), kh = heads(kp, S), vh = heads(vp, S);

  // One additive mask broadcastable to [N, H, L, S], or none.
  const DType dt = qh.dtype();
  Tensor mask;
  if (attn_mask.defined()) {
    Tensor m = additive(attn_mask, dt, "attn_mask");
    if (m.dim() == 2) {
      VNN_CHECK(ShapeError, m.size(0) == L && m.size(1) == S, op, ": a 2-D attn_mask must be [L, S] = [", L, ", ", S,
                "], got ", attn_mask.sizes());
      mask = m.view({1, 1, L, S});
    } else {
      VNN_CHECK(ShapeError, m.dim() == 3 && m.size(0) == N * H && m.size(1) == L && m.size(2) == S, op,
                ": attn_mask must be [L, S] = [", L, ", ", S, "] or [N * num_heads, L, S] = [", N * H, ", ", L, ", ",
                S, "], got ", attn_mask.sizes());
      mask = m.reshape({N, H, L, S});
    }
  }
  const bool causal = is_causal && !attn_mask.defined();
  if (key_padding_mask.defined()) {
    const bool ok = batched ? key_padding_mask.dim() == 2 && key_padding_mask.size(0) == N &&
                                  key_padding_mask.size(1) == S
                            : key_padding_mask.dim() == 1 && key_padding_mask.size(0) == S;
    VNN_CHECK(ShapeError, ok, op, ": key_padding_mask must be [N, S] = [", N, ", ", S, "] (unbatched: [S]), got ",
              key_padding_mask.sizes());
    Tensor p = additive(key_padding_mask, dt, "key_padding_mask").reshape({N, 1, 1, S});
    if (causal)  // the merged mask is no longer causal alone
      mask = triu(full({L, S}, -INFINITY, TensorOptions(qh.device()).with(dt)), 1).view({1, 1, L, S});
    mask = mask.defined() ? add(mask, p) : p;
  }
  const double p_drop = is_training() ? options.dropout() : 0.0;

  Tensor o, weights;
  if (!need_weights) {
    o = scaled_dot_product_attention(qh, kh, vh, mask, p_drop, causal && !key_padding_mask.defined());
  } else {
    if (causal && !mask.defined())
      mask = triu(full({L, S}, -INFINITY, TensorOptions(qh.device()).with(dt)), 1).view({1, 1, L, S});
    Tensor scores = matmul(mul(qh, 1.0 / std::sqrt(double(hd))), kh.transpose(-2, -1));  // [N, H, L, S]
    if (mask.defined()) scores = add(scores, mask);
    Tensor w = dropout(softmax(scores, -1), p_drop);
    o = matmul(w, vh);
    weights = average_attn_weights ? mean(w, 1) : w;
    if (!batched) weights = weights.squeeze(0);
  }
  // Heads merged straight into the caller's layout, so the output is contiguous in it.
  if (!batched) return {out_proj(o.squeeze(0).transpose(0, 1).reshape({L, E})), weights};
  if (bf) return {out_proj(o.transpose(1, 2).reshape({N, L, E})), weights};
  return {out_proj(o.permute({2, 0, 1, 3}).reshape({L, N, E})), weights};
}

std::string MultiheadAttentionImpl::describe() const {
  std::string s = "MultiheadAttention(embed_dim=" + std::to_string(options.embed_dim()) +
                  ", num_heads=" + std::to_string(options.num_heads());
  if (!qkv_same_embed_dim) s += ", kdim=" + std::to_string(options.kdim()) + ", vdim=" + std::to_string(options.vdim());
  if (options.dropout() > 0) s += ", dropout=" + std::to_string(options.dropout());
  if (!options.bias()) s += ", bias=false";
  if (options.batch_first()) s += ", batch_first=true";
  return s + ")";
}

}  // namespace vnn::nn
