// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// MultiheadAttention and the Transformer layers on the device under test:
// PyTorch's state-dict keys (hard-coded lists), shapes in every layout,
// masks, the need_weights and scaled_dot_product_attention paths against
// each other, gradients to every parameter, cloning, and the device against
// the CPU. Numerical parity with torch.nn is test_nn_transformer_parity.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;

namespace {

std::vector<std::string> keys(const nn::Module& m) {
  std::vector<std::string> out;
  for (auto& [k, v] : m.state_dict()) out.push_back(k);
  return out;
}

std::vector<std::string> prefixed(const std::string& prefix, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (auto& n : names) out.push_back(prefix + n);
  return out;
}

const std::vector<std::string> kMha = {"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"};
const std::vector<std::string> kEncoderLayer = {
    "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight", "self_attn.out_proj.bias",
    "linear1.weight",           "linear1.bias",           "linear2.weight",            "linear2.bias",
    "norm1.weight",             "norm1.bias",             "norm2.weight",              "norm2.bias"};
const std::vector<std::string> kDecoderLayer = {
    "self_attn.in_proj_weight",      "self_attn.in_proj_bias",      "self_attn.out_proj.weight",
    "self_attn.out_proj.bias",       "multihead_attn.in_proj_weight", "multihead_attn.in_proj_bias",
    "multihead_attn.out_proj.weight", "multihead_attn.out_proj.bias", "linear1.weight",
    "linear1.bias",                  "linear2.weight",              "linear2.bias",
    "norm1.weight",                  "norm1.bias",                  "norm2.weight",
    "norm2.bias",                    "norm3.weight",                "norm3.bias"};

Tensor randn_on(const Shape& s, uint64_t seed, const Device& dev) {
  Generator g(seed);
  return randn(s, TensorOptions(dev), &g);
}

// Parameters drawn from one seed, so two modules of one structure match.
void fill_params(nn::Module& m, uint64_t seed) {
  Generator g(seed);
  autograd::NoGradGuard ng;
  for (auto& [k, p] : m.named_parameters()) {
    Tensor t = p;
    normal_(t, 0.0, 0.3, &g);
  }
}

}  // namespace

TEST_CASE("state-dict keys are PyTorch's, in PyTorch's order") {
  CHECK(keys(*nn::MultiheadAttention(16, 4)) == kMha);
  CHECK(keys(*nn::MultiheadAttention(nn::MultiheadAttentionOptions(16, 2).kdim(12).vdim(8))) ==
        std::vector<std::string>{"q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias", "out_proj.weight",
                                 "out_proj.bias"});
  CHECK(keys(*nn::MultiheadAttention(nn::MultiheadAttentionOptions(8, 2).bias(false))) ==
        std::vector<std::string>{"in_proj_weight", "out_proj.weight"});
  CHECK(keys(*nn::TransformerEncoderLayer(16, 4)) == kEncoderLayer);
  CHECK(keys(*nn::TransformerDecoderLayer(16, 4)) == kDecoderLayer);

  nn::TransformerEncoder enc(nn::TransformerEncoderOptions(nn::TransformerEncoderLayer(8, 2), 2)
                                 .norm(nn::LayerNorm(nn::LayerNormOptions({8}))));
  std::vector<std::string> want = prefixed("layers.0.", kEncoderLayer), l1 = prefixed("layers.1.", kEncoderLayer);
  want.insert(want.end(), l1.begin(), l1.end());
  want.push_back("norm.weight");
  want.push_back("norm.bias");
  CHECK(keys(*enc) == want);

  nn::Transformer model(nn::TransformerOptions(8, 2, 2, 1).dim_feedforward(16));
  want.clear();
  for (auto& k : prefixed("encoder.layers.0.", kEncoderLayer)) want.push_back(k);
  for (auto& k : prefixed("encoder.layers.1.", kEncoderLayer)) want.push_back(k);
  want.push_back("encoder.norm.weight");
  want.push_back("encoder.norm.bias");
  for (auto& k : prefixed("decoder.layers.0.", kDecoderLayer)) want.push_back(k);
  want.push_back("decoder.norm.weight");
  want.push_back("decoder.norm.bias");
  CHECK(keys(*model) == want);
  // Shapes as PyTorch's.
  auto sd = model->state_dict();
  for (auto& [k, v] : sd) {
    if (k == "encoder.layers.0.self_attn.in_proj_weight") CHECK(v.sizes() == Shape{24, 8});
    if (k == "encoder.layers.0.self_attn.in_proj_bias") CHECK(v.sizes() == Shape{24});
    if (k == "decoder.layers.0.linear1.weight") CHECK(v.sizes() == Shape{16, 8});
  }
  // Cloned layers start equal but share nothing.
  auto* l0 = enc->layers[0]->as<nn::TransformerEncoderLayer>();
  auto* l1p = enc->layers[1]->as<nn::TransformerEncoderLayer>();
  REQUIRE(l0);
  REQUIRE(l1p);
  CHECK(max_abs_diff(l0->linear1->weight, l1p->linear1->weight) == 0);
  CHECK(l0->linear1->weight.raw_data() != l1p->linear1->weight.raw_data());
}

TEST_CASE("MultiheadAttention: layouts, paths and masks agree; device matches the CPU") {
  Device dev = device_under_test();
  nn::MultiheadAttention ref(nn::MultiheadAttentionOptions(16, 4));
  fill_params(*ref, 1);
  ref->eval();
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(16, 4));
  mha->load_state_dict(ref->state_dict());
  mha->to(dev);
  mha->eval();
  Tensor x = randn_on({5, 3, 16}, 2, dev);  // [L, N, E]
  Tensor kv = randn_on({7, 3, 16}, 3, dev);

  // Shapes.
  auto [o, w] = mha(x, kv, kv);
  CHECK(o.sizes() == Shape{5, 3, 16});
  CHECK(w.sizes() == Shape{3, 5, 7});
  auto [o2, w2] = mha(x, kv, kv, Tensor(), true, Tensor(), /*average_attn_weights=*/false);
  CHECK(w2.sizes() == Shape{3, 4, 5, 7});
  CHECK(max_abs_diff(mean(w2, 1), w) < 1e-6);
  CHECK(max_abs_diff(sum(w, -1), ones({3, 5}, TensorOptions(dev))) < 1e-5);
  auto [o3, w3] = mha(x, kv, kv, Tensor(), /*need_weights=*/false);
  CHECK(!w3.defined());
  CHECK(max_abs_diff(o3, o) < 1e-5);  // scaled_dot_product_attention vs the explicit softmax

  // The device against the CPU.
  auto [oc, wc] = ref(x.cpu(), kv.cpu(), kv.cpu());
  CHECK(max_abs_diff(o, oc) < 1e-5);
  CHECK(max_abs_diff(w, wc) < 1e-5);

  // batch_first: the same module on [N, L, E].
  nn::MultiheadAttention bf(nn::MultiheadAttentionOptions(16, 4).batch_first(true));
  bf->load_state_dict(ref->state_dict());
  bf->to(dev);
  auto [ob, wb] = bf(x.transpose(0, 1), kv.transpose(0, 1), kv.transpose(0, 1));
  CHECK(ob.sizes() == Shape{3, 5, 16});
  CHECK(max_abs_diff(ob.transpose(0, 1), o) < 1e-5);
  CHECK(max_abs_diff(wb, w) < 1e-6);

  // Unbatched [L, E] is batch 1.
  auto [ou, wu] = mha(x.select(1, 2), kv.select(1, 2), kv.select(1, 2));
  CHECK(ou.sizes() == Shape{5, 16});
  CHECK(wu.sizes() == Shape{5, 7});
  CHECK(max_abs_diff(ou, o.select(1, 2)) < 1e-5);

  // is_causal without a mask is the float causal mask, on both paths; a bool mask (true = masked) is the same.
  Tensor causal = nn::Transformer::generate_square_subsequent_mask(5, TensorOptions(dev));
  Tensor causal_bool = gt(triu(ones({5, 5}, TensorOptions(dev)), 1), 0.5);
  auto [s1, sw1] = mha(x, x, x, Tensor(), true, causal);
  auto [s2, sw2] = mha(x, x, x, Tensor(), true, Tensor(), true, /*is_causal=*/true);
  auto [s3, sw3] = mha(x, x, x, Tensor(), false, Tensor(), true, /*is_causal=*/true);
  auto [s4, sw4] = mha(x, x, x, Tensor(), false, causal_bool);
  CHECK(max_abs_diff(s1, s2) < 1e-6);
  CHECK(max_abs_diff(s1, s3) < 1e-5);
  CHECK(max_abs_diff(s1, s4) < 1e-5);
  CHECK(max_abs_diff(sw1, sw2) == 0);
  auto swv = sw1.cpu().to_vector<float>();  // [N, L, S]: nothing above the diagonal
  for (int n = 0; n < 3; ++n)
    for (int i = 0; i < 5; ++i)
      for (int j = i + 1; j < 5; ++j) CHECK(swv[size_t(n * 25 + i * 5 + j)] == 0.0f);

  // key_padding_mask: padded keys do not matter, float and bool forms agree, with is_causal too.
  // Batch 0 pads nothing, batch 1 keys 5 and 6, batch 2 key 6.
  Tensor kpm = from_vector<int>({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1}, {3, 7}).to(dev);
  Tensor kpm_bool = gt(kpm, 0.5);
  Tensor kpm_float = masked_fill(zeros({3, 7}, TensorOptions(dev)), kpm_bool, -INFINITY);
  Tensor kv2 = kv.clone();
  kv2.select(0, 6).fill_(100.0);  // key 6 of every batch changes
  auto [p1, pw1] = mha(x, kv, kv, kpm_bool);
  auto [p2, pw2] = mha(x, kv, kv, kpm_float, false);
  CHECK(max_abs_diff(p1, p2) < 1e-5);
  auto [p3, pw3] = mha(x, kv2, kv2, kpm_bool);
  CHECK(max_abs_diff(p1.select(1, 1), p3.select(1, 1)) < 1e-5);  // padded there
  CHECK(max_abs_diff(p1.select(1, 2), p3.select(1, 2)) < 1e-5);
  CHECK(max_abs_diff(p1.select(1, 0), p3.select(1, 0)) > 1e-3);  // batch 0 does attend to key 6
  auto pwv = pw1.cpu().to_vector<float>();  // [N, L, S]
  CHECK(pwv[size_t(1 * 35 + 0 * 7 + 5)] == 0.0f);
  CHECK(pwv[size_t(2 * 35 + 3 * 7 + 6)] == 0.0f);
  CHECK(pwv[size_t(0 * 35 + 3 * 7 + 6)] > 0.0f);
  Tensor self_kpm = gt(from_vector<int>({0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1}, {3, 5}).to(dev), 0.5);
  auto [c1, cw1] = mha(x, x, x, self_kpm, true, Tensor(), true, true);
  auto [c2, cw2] = mha(x, x, x, self_kpm, false, Tensor(), true, true);
  auto [c3, cw3] = mha(x, x, x, self_kpm, true, causal);
  CHECK(max_abs_diff(c1, c2) < 1e-5);
  CHECK(max_abs_diff(c1, c3) < 1e-6);

  // A per-head [N * H, L, S] mask equals the [L, S] one broadcast.
  auto [h1, hw1] = mha(x, x, x, Tensor(), true, causal.unsqueeze(0).expand({12, 5, 5}).contiguous());
  CHECK(max_abs_diff(h1, s1) < 1e-6);

  // kdim / vdim.
  nn::MultiheadAttention kvd(nn::MultiheadAttentionOptions(16, 2).kdim(6).vdim(10).batch_first(true));
  kvd->to(dev);
  auto [ok, wk] = kvd(randn_on({2, 3, 16}, 4, dev), randn_on({2, 4, 6}, 5, dev), randn_on({2, 4, 10}, 6, dev));
  CHECK(ok.sizes() == Shape{2, 3, 16});
  CHECK(wk.sizes() == Shape{2, 3, 4});

  // Errors name the problem.
  CHECK_THROWS_AS(nn::MultiheadAttention(10, 3), ValueError);
  CHECK_THROWS_AS(nn::MultiheadAttention(nn::MultiheadAttentionOptions(8, 2).add_bias_kv(true)), Unsupported);
  CHECK_THROWS_AS(mha(x, x, x, Tensor(), true, ones({4, 5}, TensorOptions(dev))), ShapeError);
  CHECK_THROWS_AS(mha(x, x, x, ones({3, 4}, TensorOptions(dev))), ShapeError);
  CHECK_THROWS_AS(mha(randn_on({5, 3, 8}, 1, dev), x, x), ShapeError);
}

TEST_CASE("dropout acts in training only") {
  Device dev = device_under_test();
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2).dropout(0.5));
  mha->to(dev);
  Tensor x = randn_on({4, 2, 8}, 9, dev);
  mha->eval();
  auto [e1, ew1] = mha(x, x, x);
  auto [e2, ew2] = mha(x, x, x, Tensor(), false);
  CHECK(max_abs_diff(e1, e2) < 1e-5);
  mha->train();
  manual_seed(3);
  auto [t1, tw1] = mha(x, x, x, Tensor(), true, Tensor(), /*average_attn_weights=*/false);
  CHECK(max_abs_diff(t1, e1) > 1e-3);
  auto twv = tw1.cpu().to_vector<float>();  // dropped weights are 0, kept ones doubled
  int zeros_seen = 0;
  for (float v : twv) zeros_seen += v == 0.0f;
  CHECK(zeros_seen > 0);
}

TEST_CASE("encoder and decoder layers: shapes, layouts, the device against the CPU") {
  Device dev = device_under_test();
  for (bool norm_first : {false, true})
    for (const char* act : {"relu", "gelu"}) {
      INFO("norm_first " << norm_first << " activation " << act);
      nn::TransformerEncoderLayer ref(
          nn::TransformerEncoderLayerOptions(16, 4).dim_feedforward(32).dropout(0.0).activation(act).norm_first(
              norm_first));
      fill_params(*ref, 11);
      nn::TransformerEncoderLayer bf(nn::TransformerEncoderLayerOptions(16, 4)
                                         .dim_feedforward(32)
                                         .dropout(0.0)
                                         .activation(act)
                                         .norm_first(norm_first)
                                         .batch_first(true));
      bf->load_state_dict(ref->state_dict());
      bf->to(dev);
      Tensor src = randn_on({6, 2, 16}, 12, dev);
      Tensor mask = nn::Transformer::generate_square_subsequent_mask(6);
      Tensor y_ref = ref(src.cpu(), mask);
      Tensor y = bf(src.transpose(0, 1), mask.to(dev));
      CHECK(y.sizes() == Shape{2, 6, 16});
      CHECK(max_abs_diff(y.transpose(0, 1), y_ref) < 1e-4);
      CHECK(max_abs_diff(bf(src.transpose(0, 1), Tensor(), Tensor(), /*is_causal=*/true), y) < 1e-4);
    }
  nn::TransformerDecoderLayer dec(nn::TransformerDecoderLayerOptions(16, 2).dim_feedforward(24).activation(nn::kGELU));
  dec->to(dev);
  dec->eval();
  Tensor tgt = randn_on({5, 2, 16}, 13, dev), memory = randn_on({7, 2, 16}, 14, dev);
  Tensor y = dec(tgt, memory, nn::Transformer::generate_square_subsequent_mask(5, TensorOptions(dev)));
  CHECK(y.sizes() == Shape{5, 2, 16});
  CHECK(max_abs_diff(dec(tgt, memory, Tensor(), Tensor(), Tensor(), Tensor(), /*tgt_is_causal=*/true), y) < 1e-4);
  // A custom activation.
  nn::TransformerEncoderLayer custom(
      nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(8).dropout(0.0).activation(
          [](const Tensor& t) { return tanh(t); }));
  CHECK(custom->options.activation().name() == "custom");
  CHECK(custom(randn_on({3, 1, 8}, 1, Device("cpu", 0))).sizes() == Shape{3, 1, 8});
  CHECK_THROWS_AS(nn::TransformerEncoderLayerOptions(8, 2).activation("swish"), ValueError);
}

TEST_CASE("Transformer: the whole model trains; gradients reach every parameter") {
  Device dev = device_under_test();
  nn::Transformer model(nn::TransformerOptions(8, 2, 2, 2).dim_feedforward(16).dropout(0.0).batch_first(true));
  model->to(dev);
  Tensor src = randn_on({2, 6, 8}, 21, dev), tgt = randn_on({2, 4, 8}, 22, dev);
  Tensor tgt_mask = nn::Transformer::generate_square_subsequent_mask(4, TensorOptions(dev));
  Tensor src_kpm = gt(from_vector<int>({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1}, {2, 6}).to(dev), 0.5);
  Tensor out = model(src, tgt, Tensor(), tgt_mask, Tensor(), src_kpm, Tensor(), src_kpm);
  CHECK(out.sizes() == Shape{2, 4, 8});
  sum(mul(out, randn_on({2, 4, 8}, 23, dev))).backward();
  int checked = 0;
  for (auto& [k, p] : model->named_parameters()) {
    INFO(k);
    REQUIRE(p.grad().defined());
    CHECK(sum(abs(p.grad())).item() > 0);
    ++checked;
  }
  CHECK(checked == 2 * 12 + 2 + 2 * 18 + 2);
  // generate_square_subsequent_mask: -inf above the diagonal.
  auto m = nn::Transformer::generate_square_subsequent_mask(3).to_vector<float>();
  CHECK(m == std::vector<float>{0, -INFINITY, -INFINITY, 0, 0, -INFINITY, 0, 0, 0});
  // A clone computes the same.
  model->eval();
  auto copy = std::dynamic_pointer_cast<nn::TransformerImpl>(model->clone());
  REQUIRE(copy);
  CHECK(max_abs_diff(copy->forward(src, tgt, Tensor(), tgt_mask), model(src, tgt, Tensor(), tgt_mask)) < 1e-6);
  CHECK_THROWS_AS(model(src, randn_on({3, 4, 8}, 1, dev)), ShapeError);
}

TEST_CASE("under autocast the attention runs in bfloat16; parameters get float32 gradients") {
  Device dev = device_under_test();
  nn::TransformerEncoderLayer layer(
      nn::TransformerEncoderLayerOptions(16, 4).dim_feedforward(32).dropout(0.0).batch_first(true));
  layer->to(dev);
  Tensor x = randn_on({2, 6, 16}, 31, dev);
  Tensor ref = layer(x, Tensor(), Tensor(), true);
  Tensor y, attn;
  {
    autocast::AutocastGuard guard(dev, kBFloat16);
    y = layer(x, Tensor(), Tensor(), true);
    attn = std::get<0>(layer->self_attn(x, x, x, Tensor(), false));
  }
  CHECK(attn.dtype() == kBFloat16);
  CHECK(max_abs_diff(y.to(kFloat32), ref) < 0.1);  // LayerNorm output: unit scale, bfloat16 has 8 bits
  sum(y.to(kFloat32)).backward();
  for (auto& [k, p] : layer->named_parameters()) {
    INFO(k);
    REQUIRE(p.grad().defined());
    CHECK(p.grad().dtype() == kFloat32);
  }
}

TEST_CASE("outputs are contiguous in the caller's layout") {
  Device dev = device_under_test();
  for (bool bf : {false, true}) {
    nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2).batch_first(bf));
    mha->to(dev);
    Tensor x = randn_on({3, 4, 8}, 41, dev);
    for (bool weights : {false, true}) {
      Tensor out = std::get<0>(mha(x, x, x, Tensor(), weights));
      CHECK(out.sizes() == Shape{3, 4, 8});
      CHECK(out.is_contiguous());
      Tensor single = std::get<0>(mha(x.select(bf ? 0 : 1, 0), x.select(bf ? 0 : 1, 0), x.select(bf ? 0 : 1, 0),
                                      Tensor(), weights));
      CHECK(single.is_contiguous());
      CHECK(max_abs_diff(single, out.select(bf ? 0 : 1, 0)) < 1e-5);
    }
  }
}
