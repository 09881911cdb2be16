// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Issue 31, item 4: vnn::nn::functional with LibTorch's *FuncOptions, on the
// device under test: each function against its core op or a hand-computed
// (PyTorch-checked) result, the composed ones (pad, interpolate, normalize,
// embedding's padding_idx) through gradcheck, and their typed errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "support/device_under_test.hpp"
#include "vnn/vnn.h"

using namespace vnn;
namespace F = vnn::nn::functional;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;

namespace {

Tensor values(const std::vector<float>& v, const Shape& s, const Device& dev) { return from_vector(v, s, dev); }

std::vector<float> host(const Tensor& t) { return t.to_vector<float>(); }

bool near(const std::vector<float>& got, const std::vector<float>& want, double tol = 1e-5) {
  if (got.size() != want.size()) return false;
  for (size_t i = 0; i < got.size(); ++i)
    if (std::abs(double(got[i]) - double(want[i])) > tol) return false;
  return true;
}

TensorOptions f64(const Device& dev) { return TensorOptions(dev).dtype(kDouble).requires_grad(true); }

}  // namespace

TEST_CASE("functional: linear, conv2d, pooling, activations match the core ops") {
  Device dev = device_under_test();
  Generator gen(5);
  Tensor x = randn({2, 3, 6, 6}, gen, dev);
  Tensor w = randn({4, 3, 3, 3}, gen, dev);
  Tensor b = randn({4}, gen, dev);
  CHECK(max_abs_diff(F::conv2d(x, w, F::Conv2dFuncOptions().stride(1).padding(1)), conv2d(x, w, Tensor(), 1, 1)) ==
        0);
  CHECK(max_abs_diff(F::conv2d(x, w, F::Conv2dFuncOptions().bias(b).stride({2, 1}).padding(1)),
                     conv2d(x, w, b, Size2(2, 1), 1)) == 0);
  CHECK(F::conv2d(x, w).sizes() == Shape{2, 4, 4, 4});
  CHECK(max_abs_diff(F::max_pool2d(x, F::MaxPool2dFuncOptions(2).stride(2)), max_pool2d(x, 2, 2)) == 0);
  CHECK(max_abs_diff(F::avg_pool2d(x, F::AvgPool2dFuncOptions(3).stride(1).padding(1)), avg_pool2d(x, 3, 1, 1)) == 0);
  CHECK(F::adaptive_avg_pool2d(x, F::AdaptiveAvgPool2dFuncOptions({1, 1})).sizes() == Shape{2, 3, 1, 1});
  // An unbatched [C, H, W] input runs as a batch of one, as LibTorch's; other ranks are a ShapeError.
  Tensor x1 = x.select(0, 1);
  CHECK(max_abs_diff(F::conv2d(x1, w, F::Conv2dFuncOptions().bias(b).padding(1)),
                     conv2d(x, w, b, 1, 1).select(0, 1)) == 0);
  CHECK(max_abs_diff(F::max_pool2d(x1, F::MaxPool2dFuncOptions(2)), max_pool2d(x, 2).select(0, 1)) == 0);
  CHECK(max_abs_diff(F::avg_pool2d(x1, F::AvgPool2dFuncOptions(3).padding(1)), avg_pool2d(x, 3, 3, 1).select(0, 1)) ==
        0);
  CHECK(max_abs_diff(F::adaptive_avg_pool2d(x1, F::AdaptiveAvgPool2dFuncOptions({2, 3})),
                     adaptive_avg_pool2d(x, Size2(2, 3)).select(0, 1)) == 0);
  CHECK_THROWS_AS(F::conv2d(x1.select(0, 0), w), ShapeError);
  CHECK_THROWS_WITH(F::max_pool2d(x.unsqueeze(0), F::MaxPool2dFuncOptions(2)),
                    Catch::Contains("max_pool2d") && Catch::Contains("3-D (unbatched)"));

  Tensor in = randn({5, 3}, gen, dev), lw = randn({2, 3}, gen, dev), lb = randn({2}, gen, dev);
  CHECK(max_abs_diff(F::linear(in, lw, lb), add(matmul(in, lw.t()), lb)) < 1e-6);

  Tensor a = values({-2, -0.5f, 0, 0.5f, 3}, {5}, dev);
  CHECK(host(F::relu(a)) == std::vector<float>{0, 0, 0, 0.5f, 3});
  Tensor a2 = a.clone();
  Tensor r = F::relu(a2, F::ReLUFuncOptions().inplace(true));
  CHECK(host(a2) == std::vector<float>{0, 0, 0, 0.5f, 3});  // written in place
  CHECK(r.impl() == a2.impl());
  Tensor a3 = a.clone();
  F::relu(a3, F::ReLUFuncOptions(true));
  CHECK(host(a3) == std::vector<float>{0, 0, 0, 0.5f, 3});
  CHECK(max_abs_diff(F::gelu(a), gelu(a)) == 0);
  std::vector<float> tanh_ref;
  for (float v : host(a))
    tanh_ref.push_back(float(0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)))));
  CHECK(near(host(F::gelu(a, F::GELUFuncOptions().approximate("tanh"))), tanh_ref));
  CHECK_THROWS_AS(F::gelu(a, F::GELUFuncOptions().approximate("cubic")), ValueError);
  CHECK(max_abs_diff(F::silu(a), silu(a)) == 0);
  CHECK(max_abs_diff(F::leaky_relu(a, F::LeakyReLUFuncOptions().negative_slope(0.2)), leaky_relu(a, 0.2)) == 0);

  Tensor s = randn({3, 4}, gen, dev);
  CHECK(max_abs_diff(F::softmax(s, F::SoftmaxFuncOptions(1)), softmax(s, 1)) == 0);
  CHECK(max_abs_diff(F::softmax(s, 0), softmax(s, 0)) == 0);
  CHECK(F::softmax(s, F::SoftmaxFuncOptions(-1).dtype(kDouble)).dtype() == kDouble);
  CHECK(max_abs_diff(F::log_softmax(s, F::LogSoftmaxFuncOptions(1)), log_softmax(s, 1)) == 0);
  CHECK(F::one_hot(from_vector(std::vector<int64_t>{0, 2}, {2}, dev), 3).to_vector<int64_t>() ==
        std::vector<int64_t>{1, 0, 0, 0, 0, 1});
}

TEST_CASE("functional: dropout") {
  Device dev = device_under_test();
  Tensor x = ones({10000}, dev);
  CHECK(F::dropout(x, F::DropoutFuncOptions().p(0.5).training(false)).impl() == x.impl());
  CHECK(max_abs_diff(F::dropout(x, F::DropoutFuncOptions().p(0.0)), x) == 0);
  CHECK(F::dropout(x, F::DropoutFuncOptions().p(1.0)).sum().item<double>() == 0);
  Tensor y = F::dropout(x, F::DropoutFuncOptions().p(0.2).training(true));
  double kept = y.ne(0.0).to(kDouble).mean().item<double>();
  CHECK(std::abs(kept - 0.8) < 0.03);
  CHECK(max_abs_diff(y.masked_fill(y.eq(0.0), 1.25), full({10000}, 1.25, dev)) < 1e-6);  // kept ones scaled 1/0.8
  Tensor z = ones({100}, dev);
  F::dropout(z, F::DropoutFuncOptions().p(0.5).inplace(true));
  CHECK(z.eq(0.0).any().item<bool>());
  CHECK_THROWS_AS(F::dropout(x, F::DropoutFuncOptions().p(1.5)), ValueError);
}

TEST_CASE("functional: normalization and embedding") {
  Device dev = device_under_test();
  Generator gen(9);
  Tensor x = randn({4, 3, 5}, gen, dev);
  Tensor w = randn({5}, gen, dev), b = randn({5}, gen, dev);
  CHECK(max_abs_diff(F::layer_norm(x, F::LayerNormFuncOptions({5}).weight(w).bias(b).eps(1e-5)),
                     std::get<0>(layer_norm(x, {5}, w, b))) == 0);
  Tensor rm = zeros({3}, dev), rv = ones({3}, dev);
  Tensor bn = F::batch_norm(x, rm, rv, F::BatchNormFuncOptions().training(true).momentum(0.5));
  CHECK(max_abs_diff(bn, std::get<0>(batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), true))) < 1e-5);
  CHECK(rm.abs().sum().item<double>() > 0);  // running stats updated
  Tensor ev = F::batch_norm(x, rm, rv);       // training false by default: the running stats
  CHECK(max_abs_diff(ev, div(sub(x, rm.view({1, 3, 1})), sqrt(add(rv.view({1, 3, 1}), 1e-5)))) < 1e-5);
  CHECK_THROWS_AS(F::batch_norm(x, Tensor(), Tensor()), ValueError);
  CHECK_THROWS_WITH(F::batch_norm(x, Tensor(), Tensor()), Catch::Contains("batch_norm") &&
                                                              Catch::Contains("running_mean"));
  Tensor g = randn({2, 4, 3}, gen, dev);
  CHECK(max_abs_diff(F::group_norm(g, F::GroupNormFuncOptions(2)), std::get<0>(group_norm(g, 2))) == 0);

  Tensor v = values({3, 4, 0, 0, 1, 0}, {3, 2}, dev);
  CHECK(near(host(F::normalize(v, F::NormalizeFuncOptions().p(2).dim(1))), {0.6f, 0.8f, 0, 0, 1, 0}));
  CHECK(near(host(F::normalize(v, F::NormalizeFuncOptions().p(1).dim(0))), {0.75f, 1, 0, 0, 0.25f, 0}));
  CHECK_THROWS_AS(F::normalize(arange(0, 4, 1, dev)), DTypeError);
  CHECK_THROWS_AS(F::normalize(v, F::NormalizeFuncOptions().dim(2)), IndexError);

  Tensor table = randn({4, 2}, TensorOptions(dev).requires_grad(true));
  Tensor idx = from_vector(std::vector<int64_t>{0, 2, 0, 3}, {4}, dev);
  Tensor e = F::embedding(idx, table, F::EmbeddingFuncOptions().padding_idx(0));
  CHECK(max_abs_diff(e, embedding(table, idx)) == 0);
  e.sum().backward();
  CHECK(table.grad().to_vector<float>() == std::vector<float>{0, 0, 0, 0, 1, 1, 1, 1});
  CHECK(max_abs_diff(F::embedding(idx, table), embedding(table, idx)) == 0);
  CHECK_THROWS_AS(F::embedding(idx, table, F::EmbeddingFuncOptions().padding_idx(4)), IndexError);
  Tensor ns = randn({3, 4}, f64(dev));
  auto r = autograd::gradcheck([](const std::vector<Tensor>& t) { return F::normalize(t[0]); }, {ns});
  CHECK(r.ok);
}

TEST_CASE("functional: losses with FuncOptions and vnn::kSum") {
  Device dev = device_under_test();
  Generator gen(11);
  Tensor logits = randn({6, 4}, gen, dev);
  Tensor target = randint(0, 4, {6}, gen, dev);
  Tensor ce = F::cross_entropy(logits, target, F::CrossEntropyFuncOptions().reduction(vnn::kSum));
  CHECK(std::abs(ce.item<double>() - nn::cross_entropy(logits, target).item<double>() * 6) < 1e-4);
  CHECK(max_abs_diff(F::cross_entropy(logits, target), nn::cross_entropy(logits, target)) == 0);
  CHECK(F::cross_entropy(logits, target, F::CrossEntropyFuncOptions().reduction(vnn::kNone)).sizes() == Shape{6});
  Tensor lp = log_softmax(logits, 1);
  CHECK(max_abs_diff(F::nll_loss(lp, target, F::NLLLossFuncOptions().ignore_index(1)),
                     nn::nll_loss(lp, target, nn::NLLLossOptions().ignore_index(1))) == 0);
  Tensor p = values({1, 2, 3}, {3}, dev), q = values({1, 0, 5}, {3}, dev);
  CHECK(F::mse_loss(p, q).item<float>() == Approx(8.0 / 3));
  CHECK(F::mse_loss(p, q, F::MSELossFuncOptions().reduction(vnn::kSum)).item<float>() == 8.0f);
  CHECK(F::l1_loss(p, q, F::L1LossFuncOptions(vnn::kSum)).item<float>() == 4.0f);
  CHECK(F::smooth_l1_loss(p, q, F::SmoothL1LossFuncOptions().beta(1.0)).item<float>() == Approx((0 + 1.5 + 1.5) / 3));
  Tensor prob = values({0.25f, 0.5f}, {2}, dev), t01 = values({0, 1}, {2}, dev);
  CHECK(F::binary_cross_entropy(prob, t01).item<float>() == Approx(-(std::log(0.75) + std::log(0.5)) / 2));
  CHECK(max_abs_diff(F::binary_cross_entropy_with_logits(prob, t01),
                     nn::binary_cross_entropy_with_logits(prob, t01)) == 0);
}

TEST_CASE("functional: pad, its modes and errors") {
  Device dev = device_under_test();
  Tensor row = values({1, 2, 3, 4}, {1, 4}, dev);
  CHECK(host(F::pad(row, F::PadFuncOptions({1, 2}).value(-1))) == std::vector<float>{-1, 1, 2, 3, 4, -1, -1});
  CHECK(host(F::pad(row, F::PadFuncOptions({-1, 0}))) == std::vector<float>{2, 3, 4});
  CHECK(host(F::pad(row, F::PadFuncOptions({2, 1}).mode(vnn::kReflect))) ==
        std::vector<float>{3, 2, 1, 2, 3, 4, 3});
  CHECK(host(F::pad(row, F::PadFuncOptions({2, 1}).mode(vnn::kReplicate))) ==
        std::vector<float>{1, 1, 1, 2, 3, 4, 4});
  CHECK(host(F::pad(row, F::PadFuncOptions({2, 1}).mode(vnn::kCircular))) ==
        std::vector<float>{3, 4, 1, 2, 3, 4, 1});
  Tensor sq = values({1, 2, 3, 4}, {1, 1, 2, 2}, dev);
  Tensor p2 = F::pad(sq, F::PadFuncOptions({1, 0, 0, 1}));
  CHECK(p2.sizes() == Shape{1, 1, 3, 3});
  CHECK(host(p2) == std::vector<float>{0, 1, 2, 0, 3, 4, 0, 0, 0});
  CHECK(F::pad(arange(0, 4, 1, dev).view({2, 2}), F::PadFuncOptions({1, 1}).mode(vnn::kReflect)).dtype() == kLong);
  CHECK_THROWS_AS(F::pad(row, F::PadFuncOptions({1})), ValueError);
  CHECK_THROWS_AS(F::pad(row, F::PadFuncOptions({1, 1, 1, 1, 1, 1})), ValueError);
  CHECK_THROWS_AS(F::pad(row, F::PadFuncOptions({4, 0}).mode(vnn::kReflect)), ValueError);
  CHECK_THROWS_AS(F::pad(row, F::PadFuncOptions({-1, 0}).mode(vnn::kReplicate)), ValueError);
  CHECK_THROWS_WITH(F::pad(row, F::PadFuncOptions({4, 0}).mode(vnn::kReflect)),
                    Catch::Contains("pad") && Catch::Contains("reflect") && Catch::Contains("[1, 4]"));
  Tensor g = randn({2, 3, 4}, f64(dev));
  for (PadMode m : {vnn::kConstant, vnn::kReflect, vnn::kReplicate, vnn::kCircular}) {
    auto r = autograd::gradcheck(
        [m](const std::vector<Tensor>& t) { return F::pad(t[0], F::PadFuncOptions({2, 1, 1, 2}).mode(m)); }, {g});
    CHECK(r.ok);
  }
}

TEST_CASE("functional: interpolate (PyTorch's values), gradients, errors") {
  Device dev = device_under_test();
  Tensor sq = values({1, 2, 3, 4}, {1, 1, 2, 2}, dev);
  CHECK(host(F::interpolate(sq, F::InterpolateFuncOptions().size({4, 4}).mode(vnn::kNearest))) ==
        std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  Tensor line = values({0, 1, 2, 3, 4}, {1, 1, 5}, dev);
  CHECK(host(F::interpolate(line, F::InterpolateFuncOptions().size({3}))) == std::vector<float>{0, 1, 3});
  CHECK(host(F::interpolate(line, F::InterpolateFuncOptions().size({3}).mode(vnn::kNearestExact))) ==
        std::vector<float>{0, 2, 4});
  // torch.nn.functional.interpolate(torch.tensor([[1., 2.], [4., 5.]]).view(1, 1, 2, 2), scale_factor=2,
  // mode='bilinear', align_corners=False / True).
  Tensor a = values({1, 2, 4, 5}, {1, 1, 2, 2}, dev);
  Tensor up = F::interpolate(a, F::InterpolateFuncOptions().scale_factor({2, 2}).mode(vnn::kBilinear));
  CHECK(up.sizes() == Shape{1, 1, 4, 4});
  CHECK(near(host(up), {1, 1.25f, 1.75f, 2, 1.75f, 2, 2.5f, 2.75f, 3.25f, 3.5f, 4, 4.25f, 4, 4.25f, 4.75f, 5}));
  Tensor upc =
      F::interpolate(a, F::InterpolateFuncOptions().size({4, 4}).mode(vnn::kBilinear).align_corners(true));
  CHECK(near(host(upc), {1, 4 / 3.f, 5 / 3.f, 2, 2, 7 / 3.f, 8 / 3.f, 3, 3, 10 / 3.f, 11 / 3.f, 4, 4, 13 / 3.f,
                         14 / 3.f, 5}));
  CHECK(near(host(F::interpolate(values({0, 10}, {1, 1, 2}, dev),
                                 F::InterpolateFuncOptions().size({5}).mode(vnn::kLinear))),
             {0, 1, 5, 9, 10}));
  Tensor img = arange(0.0, 16.0, 1.0, dev).view({1, 1, 4, 4});
  CHECK(host(F::interpolate(img, F::InterpolateFuncOptions().size({2, 2}).mode(vnn::kArea))) ==
        std::vector<float>{2.5f, 4.5f, 10.5f, 12.5f});
  Tensor vol = randn({1, 2, 2, 3, 2}, dev);
  CHECK(F::interpolate(vol, F::InterpolateFuncOptions().scale_factor({2}).mode(vnn::kTrilinear)).sizes() ==
        Shape{1, 2, 4, 6, 4});

  Tensor g = randn({1, 2, 3, 3}, f64(dev));
  for (bool align : {false, true}) {
    auto r = autograd::gradcheck(
        [align](const std::vector<Tensor>& t) {
          return F::interpolate(t[0],
                                F::InterpolateFuncOptions().size({5, 4}).mode(vnn::kBilinear).align_corners(align));
        },
        {g});
    CHECK(r.ok);
  }
  auto rn = autograd::gradcheck(
      [](const std::vector<Tensor>& t) { return F::interpolate(t[0], F::InterpolateFuncOptions().size({6, 2})); },
      {g});
  CHECK(rn.ok);

  CHECK_THROWS_AS(F::interpolate(line, F::InterpolateFuncOptions().size({4}).mode(vnn::kBilinear)), ShapeError);
  CHECK_THROWS_AS(F::interpolate(sq, F::InterpolateFuncOptions().size({4}).scale_factor({2})), ValueError);
  CHECK_THROWS_AS(F::interpolate(sq, F::InterpolateFuncOptions()), ValueError);
  CHECK_THROWS_AS(F::interpolate(sq, F::InterpolateFuncOptions().size({4, 4}).align_corners(true)), ValueError);
  CHECK_THROWS_AS(F::interpolate(sq, F::InterpolateFuncOptions().size({4, 4, 4})), ValueError);
  CHECK_THROWS_AS(
      F::interpolate(sq.to(kLong), F::InterpolateFuncOptions().size({4, 4}).mode(vnn::kBilinear)), DTypeError);
  CHECK_THROWS_WITH(F::interpolate(line, F::InterpolateFuncOptions().size({4}).mode(vnn::kBilinear)),
                    Catch::Contains("interpolate") && Catch::Contains("bilinear") && Catch::Contains("[1, 1, 5]"));
}
