// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Unflatten, Functional (vnn/nn/layers.h), Bilinear, CosineSimilarity,
// PairwiseDistance (vnn/nn/two_input.h), RReLU, Softmax2d
// (vnn/nn/activation.h), ParameterList and ParameterDict
// (vnn/nn/parameter_container.h), EmbeddingBag (vnn/nn/embedding_bag.h): values against float64 loops on the device
// under test, keys, clone, float64 finite-difference gradients, typed errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"
#include "support/op_checks.hpp"
#include "vnn/nn.h"

using namespace vnn;
using namespace vnn::nn;
namespace F = vnn::nn::functional;
using vnn::test::check_grad;
using vnn::test::device_under_test;

namespace {

Tensor values_on(size_t n, uint32_t seed, const Shape& s, Device dev) {
  return from_vector(test::lcg_values(n, seed, 1, -1.5, 1.5), s, dev);
}

}  // namespace

TEST_CASE("Unflatten and Functional") {
  Device dev = device_under_test();
  Tensor x = values_on(24, 1, {2, 12}, dev);
  Unflatten u(1, std::vector<int64_t>{3, -1});
  Tensor y = u(x);
  CHECK(y.sizes() == Shape{2, 3, 4});
  CHECK(y.to_vector<double>() == x.to_vector<double>());
  CHECK(Unflatten(UnflattenOptions(-1, {2, 6}))(x).sizes() == Shape{2, 2, 6});
  CHECK_THROWS_AS(Unflatten(1, std::vector<int64_t>{5, 5})(x), ShapeError);
  Functional relu_layer([](Tensor t) { return relu(t); });
  std::vector<double> r = relu_layer(x).to_vector<double>(), xv = x.to_vector<double>();
  for (size_t i = 0; i < xv.size(); ++i) CHECK(r[i] == std::max(xv[i], 0.0));
  // Extra arguments are bound after the input, as LibTorch's Functional(f, args...).
  Functional elu2(F::elu, F::ELUFuncOptions().alpha(2.0));
  std::vector<double> e = elu2(x).to_vector<double>();
  for (size_t i = 0; i < xv.size(); ++i) CHECK(e[i] == Approx(xv[i] > 0 ? xv[i] : 2.0 * std::expm1(xv[i])));
  Sequential seq(Functional([](Tensor t) { return mul(t, 2.0); }), Unflatten(1, std::vector<int64_t>{4, 3}));
  CHECK(seq(x).sizes() == Shape{2, 4, 3});
  CHECK_THROWS_AS(Functional(FunctionalImpl::Function()), ValueError);
}

TEST_CASE("Bilinear: values against a loop, keys, init bound, gradients, shape errors") {
  Device dev = device_under_test();
  const int64_t b = 3, i1 = 4, i2 = 2, o = 5;
  Bilinear bl(BilinearOptions(i1, i2, o));
  auto sd = bl->state_dict();
  CHECK(sd.keys() == std::vector<std::string>{"weight", "bias"});
  CHECK(bl->weight.sizes() == Shape{o, i1, i2});
  for (double w : bl->weight.to_vector<double>()) CHECK(std::abs(w) <= 0.5);  // 1 / sqrt(in1)
  bl->to(dev);
  Tensor x1 = values_on(size_t(b * i1), 2, {b, i1}, dev), x2 = values_on(size_t(b * i2), 3, {b, i2}, dev);
  std::vector<double> got = bl(x1.to(kFloat32), x2.to(kFloat32)).to_vector<double>();
  std::vector<double> w = bl->weight.to_vector<double>(), bv = bl->bias.to_vector<double>();
  std::vector<double> a = x1.to_vector<double>(), c = x2.to_vector<double>();
  for (int64_t n = 0; n < b; ++n)
    for (int64_t k = 0; k < o; ++k) {
      double s = bv[size_t(k)];
      for (int64_t i = 0; i < i1; ++i)
        for (int64_t j = 0; j < i2; ++j) s += a[size_t(n * i1 + i)] * w[size_t((k * i1 + i) * i2 + j)] * c[size_t(n * i2 + j)];
      CHECK(got[size_t(n * o + k)] == Approx(s).margin(1e-5));
    }
  CHECK(Bilinear(BilinearOptions(i1, i2, o).bias(false))->state_dict().keys() == std::vector<std::string>{"weight"});
  CHECK(F::bilinear(values_on(2 * 3 * i1, 4, {2, 3, i1}, dev), values_on(2 * 3 * i2, 5, {2, 3, i2}, dev),
                    values_on(size_t(o * i1 * i2), 6, {o, i1, i2}, dev))
            .sizes() == Shape{2, 3, o});
  // Integer inputs keep their dtype (the sum inside would widen them to int64), as PyTorch's.
  Tensor xi = arange(0, 6, 1, dev).reshape({2, 3}).to(kInt32);
  Tensor yi = F::bilinear(xi, xi, ones({2, 3, 3}, TensorOptions(dev).dtype(kInt32)));
  CHECK(yi.dtype() == kInt32);
  CHECK(yi.to_vector<double>() == std::vector<double>{9, 9, 144, 144});  // (sum of the row)^2 per output
  Tensor wg = values_on(size_t(o * i1 * i2), 6, {o, i1, i2}, dev).requires_grad_();
  Tensor bg = values_on(size_t(o), 7, {o}, dev).requires_grad_();
  check_grad([](const std::vector<Tensor>& t) { return F::bilinear(t[0], t[1], t[2], t[3]); },
             {x1.detach().requires_grad_(), x2.detach().requires_grad_(), wg, bg});
  CHECK_THROWS_WITH(F::bilinear(x1, x2.narrow(0, 0, 2), wg.detach()),
                    Catch::Contains("bilinear") && Catch::Contains("every dim but the last"));
  CHECK_THROWS_AS(F::bilinear(x2, x1, wg.detach()), ShapeError);
  CHECK_THROWS_AS(F::bilinear(x1, x2, wg.detach().reshape({o, i1 * i2})), ShapeError);
  CHECK_THROWS_AS(F::bilinear(x1, x2, wg.detach(), zeros({o + 1}, TensorOptions(dev).dtype(kFloat64))), ShapeError);
  CHECK_THROWS_AS(Bilinear(0, 2, 3), ValueError);
}

TEST_CASE("CosineSimilarity and PairwiseDistance against loops, broadcasting, gradients") {
  Device dev = device_under_test();
  Tensor x1 = values_on(12, 8, {3, 4}, dev), x2 = values_on(4, 9, {1, 4}, dev);
  std::vector<double> a = x1.to_vector<double>(), c = x2.to_vector<double>();
  std::vector<double> cs = CosineSimilarity(CosineSimilarityOptions().dim(1))(x1, x2).to_vector<double>();
  std::vector<double> pd2 = PairwiseDistance()(x1, x2).to_vector<double>();
  std::vector<double> pd1 = F::pairwise_distance(x1, x2, F::PairwiseDistanceFuncOptions().norm_degree(1).eps(0.0))
                                .to_vector<double>();
  REQUIRE(cs.size() == 3);
  for (size_t r = 0; r < 3; ++r) {
    double dot = 0, na = 0, nc = 0, d2 = 0, d1 = 0;
    for (size_t j = 0; j < 4; ++j) {
      dot += a[r * 4 + j] * c[j];
      na += a[r * 4 + j] * a[r * 4 + j];
      nc += c[j] * c[j];
      d2 += std::pow(a[r * 4 + j] - c[j] + 1e-6, 2);
      d1 += std::abs(a[r * 4 + j] - c[j]);
    }
    CHECK(cs[r] == Approx(dot / std::sqrt(na) / std::sqrt(nc)).epsilon(1e-12));
    CHECK(pd2[r] == Approx(std::sqrt(d2)).epsilon(1e-12));
    CHECK(pd1[r] == Approx(d1).epsilon(1e-12));
  }
  CHECK(PairwiseDistance(PairwiseDistanceOptions().keepdim(true))(x1, x2).sizes() == Shape{3, 1});
  CHECK(F::cosine_similarity(x1, x2, F::CosineSimilarityFuncOptions().dim(0)).sizes() == Shape{4});
  // A zero vector: the norm is clamped to eps, so the similarity is 0, not NaN.
  Tensor z = zeros({1, 4}, TensorOptions(dev).dtype(kFloat64));
  CHECK(F::cosine_similarity(z, x2).to_vector<double>() == std::vector<double>{0.0});
  check_grad([](const std::vector<Tensor>& t) { return F::cosine_similarity(t[0], t[1]); },
             {x1.detach().requires_grad_(), x2.detach().requires_grad_()});
  check_grad([](const std::vector<Tensor>& t) { return F::pairwise_distance(t[0], t[1]); },
             {x1.detach().requires_grad_(), x2.detach().requires_grad_()});
  CHECK_THROWS_AS(F::cosine_similarity(x1, values_on(3, 1, {3}, dev)), ShapeError);
  CHECK_THROWS_AS(F::pairwise_distance(arange(0, 4, 1, dev), arange(0, 4, 1, dev)), DTypeError);
}

TEST_CASE("Softmax2d and RReLU") {
  Device dev = device_under_test();
  Tensor x = values_on(2 * 3 * 2 * 2, 10, {2, 3, 2, 2}, dev);
  std::vector<double> s = Softmax2d()(x).to_vector<double>(), xv = x.to_vector<double>();
  for (size_t n = 0; n < 2; ++n)
    for (size_t e = 0; e < 4; ++e) {
      double den = 0;
      for (size_t ch = 0; ch < 3; ++ch) den += std::exp(xv[(n * 3 + ch) * 4 + e]);
      for (size_t ch = 0; ch < 3; ++ch)
        CHECK(s[(n * 3 + ch) * 4 + e] == Approx(std::exp(xv[(n * 3 + ch) * 4 + e]) / den).epsilon(1e-12));
    }
  CHECK(Softmax2d()(x.select(0, 0)).sizes() == Shape{3, 2, 2});
  CHECK_THROWS_AS(Softmax2d()(x.reshape({2, 12})), ShapeError);
  // Eval: the mean slope; training: one slope in [lower, upper] per negative element.
  RReLU rr(RReLUOptions().lower(0.1).upper(0.3));
  rr->eval();
  std::vector<double> ev = rr(x).to_vector<double>();
  for (size_t i = 0; i < xv.size(); ++i) CHECK(ev[i] == Approx(xv[i] >= 0 ? xv[i] : 0.2 * xv[i]).epsilon(1e-12));
  rr->train();
  manual_seed(4);
  Tensor big = values_on(400, 11, {400}, dev);
  std::vector<double> bv = big.to_vector<double>(), tv = rr(big).to_vector<double>();
  double lo = 1, hi = 0;
  for (size_t i = 0; i < bv.size(); ++i) {
    if (bv[i] >= 0) {
      CHECK(tv[i] == bv[i]);
    } else if (bv[i] < -1e-3) {
      const double slope = tv[i] / bv[i];
      CHECK(slope >= 0.1 - 1e-12);
      CHECK(slope <= 0.3 + 1e-12);
      lo = std::min(lo, slope);
      hi = std::max(hi, slope);
    }
  }
  CHECK(hi - lo > 0.1);  // the slopes vary over the range
  check_grad([](const std::vector<Tensor>& t) {
    manual_seed(6);
    return F::rrelu(t[0], F::RReLUFuncOptions().training(true));
  }, {values_on(10, 12, {2, 5}, dev).requires_grad_()});
  CHECK_THROWS_AS(RReLU(RReLUOptions().lower(0.5).upper(0.2)), ValueError);
  CHECK_THROWS_AS(F::rrelu(x, F::RReLUFuncOptions().lower(-0.1)), ValueError);
}

TEST_CASE("ParameterList and ParameterDict: keys, indexing, clone, errors") {
  Device dev = device_under_test();
  ParameterList pl;
  pl->append(ones({2}));
  pl->extend({zeros({3}), full({1}, 5.0)});
  CHECK(pl->size() == 3);
  CHECK(pl->state_dict().keys() == std::vector<std::string>{"0", "1", "2"});
  CHECK(pl[1].sizes() == Shape{3});
  CHECK(pl[-1].item<double>() == 5.0);
  CHECK(pl[0].requires_grad());
  CHECK_THROWS_AS(pl[3], IndexError);
  CHECK_THROWS_AS(pl(ones({1})), ValueError);
  pl->to(dev);
  auto copy = std::dynamic_pointer_cast<ParameterListImpl>(pl->clone());
  REQUIRE(copy);
  {
    NoGradGuard ng;
    copy->values()[2].fill_(7.0);
  }
  CHECK(pl[2].item<double>() == 5.0);
  CHECK((*copy)[2].item<double>() == 7.0);
  CHECK((*copy)[0].device() == dev);

  ParameterDict pd;
  pd->insert("scale", full({4}, 2.0));
  pd->insert("shift", zeros({4}));
  CHECK(pd->keys() == std::vector<std::string>{"scale", "shift"});
  CHECK(pd->contains("shift"));
  CHECK(!pd->contains("bias"));
  CHECK(pd["scale"].sum().item<double>() == 8.0);
  CHECK_THROWS_WITH(pd["bias"], Catch::Contains("ParameterDict") && Catch::Contains("bias"));
  CHECK_THROWS_AS(pd->insert("scale", ones({1})), ValueError);
  auto outer = std::make_shared<Module>("Outer");
  outer->register_module("p", pd);
  CHECK(outer->state_dict().keys() == std::vector<std::string>{"p.scale", "p.shift"});
  auto pd2 = std::dynamic_pointer_cast<ParameterDictImpl>(pd->clone());
  REQUIRE(pd2);
  CHECK(pd2->keys() == pd->keys());
  CHECK(pd2->get("scale").sum().item<double>() == 8.0);
}

TEST_CASE("EmbeddingBag: sum, mean, max against loops; offsets, padding_idx, per_sample_weights, errors") {
  Device dev = device_under_test();
  const int64_t rows = 6, d = 3;
  std::vector<double> w = test::lcg_values(size_t(rows * d), 13, 1, -2.0, 2.0);
  Tensor weight = from_vector(w, {rows, d}, dev);
  const std::vector<int64_t> idx = {0, 2, 4, 2, 5, 1}, off = {0, 2, 2, 5};
  const std::vector<double> psw = {0.5, -1.0, 2.0, 1.5, 0.25, 3.0};
  Tensor input = from_vector(idx, {6}, dev), offsets = from_vector(off, {4}, dev);
  // bag b covers [starts[b], starts[b + 1]); the padding index, when given, is left out.
  auto ref = [&](EmbeddingBagMode::Kind mode, int64_t pad, bool weighted) {
    std::vector<int64_t> st = off;
    st.push_back(6);
    std::vector<double> out(size_t(4 * d), 0.0);
    for (size_t b = 0; b < 4; ++b)
      for (int64_t k = 0; k < d; ++k) {
        double acc = mode == EmbeddingBagMode::max ? -1e300 : 0.0;
        int n = 0;
        for (int64_t t = st[b]; t < st[b + 1]; ++t) {
          if (idx[size_t(t)] == pad) continue;
          const double v = w[size_t(idx[size_t(t)] * d + k)] * (weighted ? psw[size_t(t)] : 1.0);
          acc = mode == EmbeddingBagMode::max ? std::max(acc, v) : acc + v;
          ++n;
        }
        out[b * size_t(d) + size_t(k)] = n == 0 ? 0.0 : mode == EmbeddingBagMode::mean ? acc / n : acc;
      }
    return out;
  };
  auto check_mode = [&](EmbeddingBagMode mode, std::optional<int64_t> pad, bool weighted) {
    INFO("mode " << int(mode.kind) << " pad " << (pad ? *pad : -1) << " weighted " << weighted);
    auto o = F::EmbeddingBagFuncOptions().offsets(offsets).mode(mode).padding_idx(pad);
    if (weighted) o.per_sample_weights(from_vector(psw, {6}, dev));
    std::vector<double> got = F::embedding_bag(input, weight, o).to_vector<double>();
    std::vector<double> want = ref(mode.kind, pad ? *pad : -1, weighted);
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-12).margin(1e-15));
  };
  for (std::optional<int64_t> pad : {std::optional<int64_t>(), std::optional<int64_t>(2)}) {
    check_mode(kSum, pad, false);
    check_mode(kMean, pad, false);
    check_mode(kMax, pad, false);
    check_mode(kSum, pad, true);
  }
  // A negative padding_idx counts from the end, as PyTorch's; one out of range is a ValueError.
  auto padded = [&](int64_t pad) {
    return F::embedding_bag(input, weight, F::EmbeddingBagFuncOptions().offsets(offsets).mode(kMean).padding_idx(pad));
  };
  CHECK(padded(2 - rows).to_vector<double>() == padded(2).to_vector<double>());
  CHECK_THROWS_AS(padded(-rows - 1), ValueError);
  CHECK_THROWS_AS(padded(rows), ValueError);
  // include_last_offset and a 2-D input give the same bags.
  Tensor last = from_vector<int64_t>({0, 2, 2, 5, 6}, {5}, dev);
  CHECK(F::embedding_bag(input, weight, F::EmbeddingBagFuncOptions().offsets(last).include_last_offset(true))
            .to_vector<double>() == F::embedding_bag(input, weight, F::EmbeddingBagFuncOptions().offsets(offsets))
                                        .to_vector<double>());
  Tensor two = from_vector<int64_t>({0, 2, 4, 2, 5, 1}, {2, 3}, dev);
  std::vector<double> by_rows = F::embedding_bag(two, weight, F::EmbeddingBagFuncOptions().mode(kSum)).to_vector<double>();
  for (int64_t k = 0; k < d; ++k)
    CHECK(by_rows[size_t(d + k)] == Approx(w[size_t(2 * d + k)] + w[size_t(5 * d + k)] + w[size_t(1 * d + k)]));
  // The module: key "weight", the padding row zero, forward(input, offsets).
  EmbeddingBag bag(EmbeddingBagOptions(rows, d).mode(kMax).padding_idx(-1));
  CHECK(bag->state_dict().keys() == std::vector<std::string>{"weight"});
  CHECK(bag->weight.select(0, 5).abs().sum().item<double>() == 0.0);
  bag->to(dev);
  CHECK(bag(input, offsets).sizes() == Shape{4, d});
  // Gradients for the weight (and per_sample_weights) in each mode.
  Tensor wg = from_vector(w, {rows, d}, dev).requires_grad_();
  Tensor pg = from_vector(psw, {6}, dev).requires_grad_();
  check_grad([&](const std::vector<Tensor>& t) {
    return F::embedding_bag(input, t[0], F::EmbeddingBagFuncOptions().offsets(offsets).mode(kSum).per_sample_weights(t[1]));
  }, {wg, pg});
  for (EmbeddingBagMode mode : {EmbeddingBagMode(kMean), EmbeddingBagMode(kMax)})
    check_grad([&](const std::vector<Tensor>& t) {
      return F::embedding_bag(input, t[0], F::EmbeddingBagFuncOptions().offsets(offsets).mode(mode).padding_idx(4));
    }, {wg});
  auto bad = [&](const Tensor& in, F::EmbeddingBagFuncOptions o) { return F::embedding_bag(in, weight, o); };
  CHECK_THROWS_AS(bad(input, F::EmbeddingBagFuncOptions().offsets(offsets).per_sample_weights(pg.detach())), ValueError);
  CHECK_THROWS_AS(bad(two, F::EmbeddingBagFuncOptions().offsets(offsets)), ValueError);
  CHECK_THROWS_AS(bad(input, F::EmbeddingBagFuncOptions()), ValueError);
  CHECK_THROWS_WITH(bad(input, F::EmbeddingBagFuncOptions().offsets(from_vector<int64_t>({1, 3}, {2}, dev))),
                    Catch::Contains("offsets[0] must be 0"));
  CHECK_THROWS_AS(bad(input, F::EmbeddingBagFuncOptions().offsets(from_vector<int64_t>({0, 4, 2}, {3}, dev))),
                  ValueError);
  CHECK_THROWS_AS(bad(input, F::EmbeddingBagFuncOptions().offsets(from_vector<int64_t>({0, 9}, {2}, dev))), ValueError);
  CHECK_THROWS_AS(bad(from_vector<int64_t>({0, 7}, {2}, dev), F::EmbeddingBagFuncOptions().offsets(offsets.narrow(0, 0, 1))),
                  IndexError);
  CHECK_THROWS_AS(bad(input.to(kFloat64), F::EmbeddingBagFuncOptions().offsets(offsets)), DTypeError);
  CHECK_THROWS_AS(bad(two.reshape({1, 2, 3}), F::EmbeddingBagFuncOptions()), ShapeError);
  CHECK_THROWS_AS(EmbeddingBag(EmbeddingBagOptions(rows, d).mode(kNone)), ValueError);
  CHECK_THROWS_AS(EmbeddingBag(EmbeddingBagOptions(rows, d).padding_idx(rows)), ValueError);
}
