// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// torch::nn::functional spellings, from the examples of LibTorch's C++ API
// reference (each function's page shows `namespace F = torch::nn::functional;`
// and a call with its *FuncOptions), ported by renaming torch:: to vnn::.
#include "conformance.hpp"

namespace F = vnn::nn::functional;

int main() {
  return conformance::run("functional", [](const vnn::Device& device) {
    vnn::manual_seed(3);
    auto opts = vnn::TensorOptions().device(device);
    vnn::Tensor input = vnn::randn({2, 3, 8, 8}, opts);

    // F::conv2d(x, weight, F::Conv2dFuncOptions().stride(1));
    vnn::Tensor weight = vnn::randn({4, 3, 3, 3}, opts);
    vnn::Tensor bias = vnn::randn({4}, opts);
    vnn::Tensor y = F::conv2d(input, weight, F::Conv2dFuncOptions().bias(bias).stride(1).padding(1));
    CHECK(y.sizes() == vnn::Shape({2, 4, 8, 8}));
    CHECK(y.allclose(vnn::conv2d(input, weight, bias, 1, 1), 1e-5, 1e-5));
    CHECK(F::conv2d(input, weight, F::Conv2dFuncOptions().stride(2)).sizes() == vnn::Shape({2, 4, 3, 3}));

    // F::max_pool2d(x, F::MaxPool2dFuncOptions(3).stride(2)); F::avg_pool2d; F::adaptive_avg_pool2d
    CHECK(F::max_pool2d(input, F::MaxPool2dFuncOptions(3).stride(2)).sizes() == vnn::Shape({2, 3, 3, 3}));
    CHECK(F::avg_pool2d(input, F::AvgPool2dFuncOptions(2)).allclose(vnn::avg_pool2d(input, 2)));
    CHECK(F::adaptive_avg_pool2d(input, F::AdaptiveAvgPool2dFuncOptions({1, 1})).allclose(input.mean({2, 3}, true)));

    // F::linear(input, weight, bias)
    vnn::Tensor x = vnn::randn({5, 3}, opts), lw = vnn::randn({2, 3}, opts), lb = vnn::randn({2}, opts);
    CHECK(F::linear(x, lw, lb).allclose(x.matmul(lw.t()) + lb, 1e-5, 1e-6));

    // Activations: F::relu(x, F::ReLUFuncOptions(false)), F::gelu(x, F::GELUFuncOptions().approximate("tanh")),
    // F::silu(x), F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.42))
    CHECK(F::relu(x, F::ReLUFuncOptions(false)).equal(x.relu()));
    CHECK(F::relu(x).ge(0).all().item<bool>());
    CHECK(F::gelu(x).allclose(vnn::gelu(x)));
    CHECK(F::gelu(x, F::GELUFuncOptions().approximate("tanh")).allclose(vnn::gelu(x), 1e-3, 1e-3));
    CHECK(F::silu(x).allclose(x * x.sigmoid()));
    vnn::Tensor lr = F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.42));
    CHECK(lr.allclose(vnn::where(x.gt(0), x, x * 0.42)));

    // F::softmax(input, F::SoftmaxFuncOptions(1)); F::log_softmax(input, F::LogSoftmaxFuncOptions(1))
    CHECK(F::softmax(x, F::SoftmaxFuncOptions(1)).sum(1).allclose(vnn::ones({5}, opts)));
    CHECK(F::log_softmax(x, F::LogSoftmaxFuncOptions(1)).allclose(x.log_softmax(1)));
    CHECK(F::softmax(x, F::SoftmaxFuncOptions(0).dtype(vnn::kDouble)).dtype() == vnn::kDouble);

    // F::dropout(input, F::DropoutFuncOptions().p(0.5)); training defaults to true
    vnn::Tensor big = vnn::ones({4000}, opts);
    vnn::Tensor dropped = F::dropout(big, F::DropoutFuncOptions().p(0.5));
    double kept = dropped.ne(0).to(vnn::kDouble).mean().item<double>();
    CHECK(kept > 0.45 && kept < 0.55 && dropped.max().item<float>() == 2.0f);
    CHECK(F::dropout(big, F::DropoutFuncOptions().p(0.5).training(false)).equal(big));

    // F::layer_norm(input, F::LayerNormFuncOptions({2, 2}).eps(2e-5))
    vnn::Tensor ln = F::layer_norm(input, F::LayerNormFuncOptions({8, 8}).eps(2e-5));
    CHECK(ln.mean({2, 3}).abs().max().item<float>() < 1e-4);
    // F::batch_norm(input, mean, variance, F::BatchNormFuncOptions().weight(w).bias(b).momentum(0.1).eps(1e-05)
    //               .training(false))
    vnn::Tensor mean = vnn::zeros({3}, opts), var = vnn::ones({3}, opts);
    vnn::Tensor bn = F::batch_norm(input, mean, var,
                                   F::BatchNormFuncOptions()
                                       .weight(vnn::ones({3}, opts))
                                       .bias(vnn::zeros({3}, opts))
                                       .momentum(0.1)
                                       .eps(1e-05)
                                       .training(false));
    CHECK(bn.allclose(input / std::sqrt(1 + 1e-5), 1e-5, 1e-5));
    F::batch_norm(input, mean, var, F::BatchNormFuncOptions().training(true));
    CHECK(mean.abs().sum().item<float>() > 0);  // running statistics updated
    // F::group_norm(input, F::GroupNormFuncOptions(1).eps(1e-5))
    CHECK(F::group_norm(input, F::GroupNormFuncOptions(1)).mean({1, 2, 3}).abs().max().item<float>() < 1e-4);
    // F::normalize(input, F::NormalizeFuncOptions().p(1).dim(-1))
    CHECK(F::normalize(x, F::NormalizeFuncOptions().p(1).dim(-1)).abs().sum(-1).allclose(vnn::ones({5}, opts)));
    CHECK(F::normalize(x).pow(2).sum(1).allclose(vnn::ones({5}, opts)));

    // F::embedding(input, weight, F::EmbeddingFuncOptions().padding_idx(0)); F::one_hot(tensor, num_classes)
    vnn::Tensor table = vnn::randn({6, 4}, opts);
    vnn::Tensor ids = vnn::tensor({1, 0, 5}, opts).to(vnn::kLong);
    CHECK(F::embedding(ids, table).equal(vnn::index_select(table, 0, ids)));
    CHECK(F::embedding(ids, table, F::EmbeddingFuncOptions().padding_idx(0)).sizes() == vnn::Shape({3, 4}));
    vnn::Tensor oh = F::one_hot(ids, 6);
    CHECK(oh.sizes() == vnn::Shape({3, 6}) && oh.sum().item<int64_t>() == 3 && oh[2][5].item<int64_t>() == 1);

    // Losses: F::cross_entropy(input, target, F::CrossEntropyFuncOptions().ignore_index(-100).reduction(torch::kMean))
    vnn::Tensor logits = vnn::randn({4, 6}, opts), target = vnn::tensor({0, 5, 2, 2}, opts).to(vnn::kLong);
    vnn::Tensor ce =
        F::cross_entropy(logits, target, F::CrossEntropyFuncOptions().ignore_index(-100).reduction(vnn::kMean));
    vnn::Tensor by_hand = -logits.log_softmax(1).gather(1, target.unsqueeze(1)).mean();
    CHECK(ce.allclose(by_hand, 1e-5, 1e-6));
    CHECK(F::nll_loss(logits.log_softmax(1), target, F::NLLLossFuncOptions().reduction(vnn::kSum))
              .allclose(by_hand * 4, 1e-5, 1e-5));
    vnn::Tensor a = vnn::tensor({1, 2, 3}, opts), b = vnn::tensor({1, 1, 1}, opts);
    CHECK(F::mse_loss(a, b, F::MSELossFuncOptions(vnn::kNone)).equal(vnn::tensor({0, 1, 4}, opts)));
    CHECK(std::abs(F::mse_loss(a, b).item<double>() - 5.0 / 3.0) < 1e-6);
    CHECK(F::l1_loss(a, b, F::L1LossFuncOptions(vnn::kSum)).item<float>() == 3.0f);
    CHECK(std::abs(F::binary_cross_entropy(vnn::full({2}, 0.5, opts), vnn::ones({2}, opts)).item<double>() -
                   std::log(2.0)) < 1e-6);
    CHECK(std::abs(F::binary_cross_entropy_with_logits(vnn::zeros({2}, opts), vnn::ones({2}, opts)).item<double>() -
                   std::log(2.0)) < 1e-6);

    // F::pad(input, F::PadFuncOptions({1, 2, 2, 1, 1, 2}).mode(torch::kReplicate))
    vnn::Tensor vol = vnn::randn({1, 2, 3, 3, 3}, opts);
    vnn::Tensor padded = F::pad(vol, F::PadFuncOptions({1, 2, 2, 1, 1, 2}).mode(vnn::kReplicate));
    CHECK(padded.sizes() == vnn::Shape({1, 2, 6, 6, 6}));
    CHECK(padded.index({0, 0, 0, 0, 0}).item<float>() == vol.index({0, 0, 0, 0, 0}).item<float>());
    CHECK(F::pad(a, F::PadFuncOptions({1, 1}).value(9)).equal(vnn::tensor({9, 1, 2, 3, 9}, opts)));
    CHECK(F::pad(a, F::PadFuncOptions({2, 0}).mode(vnn::kReflect)).equal(vnn::tensor({3, 2, 1, 2, 3}, opts)));
    CHECK(F::pad(a, F::PadFuncOptions({1, 1}).mode(vnn::kCircular)).equal(vnn::tensor({3, 1, 2, 3, 1}, opts)));

    // F::interpolate(input, F::InterpolateFuncOptions().size({4}).mode(torch::kNearest))
    vnn::Tensor seq = vnn::tensor({1, 2}, opts).view({1, 1, 2});
    CHECK(F::interpolate(seq, F::InterpolateFuncOptions().size({4}).mode(vnn::kNearest))
              .equal(vnn::tensor({1, 1, 2, 2}, opts).view({1, 1, 4})));
    vnn::Tensor img = vnn::tensor({{1, 2}, {3, 4}}, opts).view({1, 1, 2, 2});
    vnn::Tensor up =
        F::interpolate(img, F::InterpolateFuncOptions().scale_factor({2, 2}).mode(vnn::kBilinear).align_corners(false));
    CHECK(conformance::close(up, {1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4}));
    CHECK(F::interpolate(img, F::InterpolateFuncOptions().size({3, 3}).mode(vnn::kBilinear).align_corners(true))
              .index({0, 0, 1, 1})
              .item<float>() == 2.5f);

    // F::scaled_dot_product_attention(q, k, v, mask, dropout_p, is_causal)
    vnn::Tensor q = vnn::randn({2, 3, 5, 4}, opts), k = vnn::randn({2, 3, 5, 4}, opts),
                v = vnn::randn({2, 3, 5, 4}, opts);
    vnn::Tensor att = F::scaled_dot_product_attention(q, k, v, vnn::Tensor(), 0.0, /*is_causal=*/true);
    vnn::Tensor scores = q.matmul(k.transpose(-2, -1)) / 2.0;
    vnn::Tensor causal = vnn::ones({5, 5}, vnn::dtype(vnn::kBool).device(device));
    for (int64_t i = 0; i < 5; ++i) causal.index_put_({i, vnn::indexing::Slice(i + 1, vnn::indexing::None)}, 0);
    vnn::Tensor reference = scores.masked_fill(causal.logical_not(), -INFINITY).softmax(-1).matmul(v);
    CHECK(att.allclose(reference, 1e-4, 1e-5));
  });
}
