// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The ops a Transformer port and its sampling loop need, on the device under
// test: tril / triu, topk, multinomial, split / chunk views, masked_fill
// with a scalar and the tanh GELU; values against plain loops and
// gradients against finite differences (float64).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <vector>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;

namespace {

Tensor iota(const Shape& shape, const Device& dev) { return arange(0, double(shape.numel())).view(shape).to(dev); }

Tensor input64(const Shape& shape, uint64_t seed = 7) {
  Generator gen(seed);
  Tensor t = add(mul(rand(shape, TensorOptions(device_under_test()).with(kFloat64), &gen), 2.0), -1.0);
  return t.requires_grad_();
}

void gradcheck(const char* name, const std::function<Tensor(const std::vector<Tensor>&)>& f,
               const std::vector<Tensor>& inputs) {
  INFO("op " << name << " on " << device_under_test());
  auto r = autograd::gradcheck(f, inputs);
  INFO(r.message);
  CHECK(r.ok);
}

}  // namespace

TEST_CASE("tril and triu keep the triangles of the last two dims, any diagonal, batched") {
  Device dev = device_under_test();
  Tensor x = add(iota({2, 3, 4}, dev), 1.0);  // no zeros of its own
  for (int64_t diag : {-4, -1, 0, 1, 2, 5}) {
    INFO("diagonal " << diag);
    auto lo = tril(x, diag).to_vector<float>(), up = triu(x, diag).to_vector<float>();
    auto v = x.to_vector<float>();
    for (int b = 0; b < 2; ++b)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j) {
          size_t k = size_t(b * 12 + i * 4 + j);
          CHECK(lo[k] == (j - i <= diag ? v[k] : 0.0f));
          CHECK(up[k] == (j - i >= diag ? v[k] : 0.0f));
        }
  }
  CHECK(tril(x).dtype() == kFloat32);
  CHECK(tril(x).device() == dev);
  // Other dtypes keep theirs; strided inputs work.
  Tensor xi = iota({4, 3}, dev).to(kInt64).transpose(0, 1);  // [3, 4], not contiguous
  CHECK(triu(xi).dtype() == kInt64);
  CHECK(triu(xi).to_vector<int64_t>() == std::vector<int64_t>{0, 3, 6, 9, 0, 4, 7, 10, 0, 0, 8, 11});
  Tensor xb = gt(iota({3, 3}, dev), -1.0);  // all true
  CHECK(tril(xb).dtype() == kBool);
  CHECK(tril(xb).to_vector<int>() == std::vector<int>{1, 0, 0, 1, 1, 0, 1, 1, 1});
  // The causal mask of PyTorch's generate_square_subsequent_mask.
  Tensor m = triu(full({3, 3}, -INFINITY, TensorOptions(dev)), 1);
  auto mv = m.to_vector<float>();
  CHECK(mv == std::vector<float>{0, -INFINITY, -INFINITY, 0, 0, -INFINITY, 0, 0, 0});
  CHECK(tril(empty({0, 3}, TensorOptions(dev))).sizes() == Shape{0, 3});
  CHECK_THROWS_AS(tril(iota({3}, dev)), ShapeError);
  gradcheck("tril", [](auto& v) { return tril(v[0], -1); }, {input64({2, 3, 4})});
  gradcheck("triu", [](auto& v) { return triu(v[0], 1); }, {input64({4, 3})});
}

TEST_CASE("topk: values and indices along any dim, largest and smallest, NaN first, ties to the lower index") {
  Device dev = device_under_test();
  Tensor x = from_vector<float>({3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8}, {3, 4}).to(dev);
  auto [v, i] = topk(x, 2);
  CHECK(v.device() == dev);
  CHECK(i.dtype() == kInt64);
  CHECK(v.sizes() == Shape{3, 2});
  CHECK(v.to_vector<float>() == std::vector<float>{4, 3, 9, 6, 8, 5});
  CHECK(i.to_vector<int64_t>() == std::vector<int64_t>{2, 0, 1, 3, 3, 0});
  auto [vs, is] = topk(x, 3, -1, /*largest=*/false);
  CHECK(vs.to_vector<float>() == std::vector<float>{1, 1, 3, 2, 5, 6, 3, 5, 5});
  CHECK(is.to_vector<int64_t>() == std::vector<int64_t>{1, 3, 0, 2, 0, 3, 1, 0, 2});  // ties: lower index first
  auto [v0, i0] = topk(x, 1, 0);
  CHECK(v0.sizes() == Shape{1, 4});
  CHECK(v0.to_vector<float>() == std::vector<float>{5, 9, 5, 8});
  CHECK(i0.to_vector<int64_t>() == std::vector<int64_t>{1, 1, 2, 2});  // the tie in column 0: the lower index
  // A strided input and k = the whole dim sorts it.
  auto [vt, it] = topk(x.transpose(0, 1), 3, 1);
  CHECK(vt.sizes() == Shape{4, 3});
  CHECK(vt.to_vector<float>() == std::vector<float>{5, 5, 3, 9, 3, 1, 5, 4, 2, 8, 6, 1});
  CHECK(it.to_vector<int64_t>() == std::vector<int64_t>{1, 2, 0, 1, 2, 0, 2, 0, 1, 2, 1, 0});
  // NaN counts as the largest.
  Tensor n = from_vector<float>({1, NAN, 3}, {3}).to(dev);
  CHECK(std::get<1>(topk(n, 1)).item<int64_t>() == 1);
  CHECK(std::get<1>(topk(n, 2, 0, false)).to_vector<int64_t>() == std::vector<int64_t>{0, 2});
  // Integers keep their dtype and exact values.
  Tensor xi = from_vector<int64_t>({(int64_t(1) << 60) + 1, int64_t(1) << 60, -5}, {3}).to(dev);
  auto [vi, ii] = topk(xi, 2);
  CHECK(vi.dtype() == kInt64);
  CHECK(vi.to_vector<int64_t>() == std::vector<int64_t>{(int64_t(1) << 60) + 1, int64_t(1) << 60});
  CHECK(std::get<0>(topk(x, 0)).sizes() == Shape{3, 0});
  CHECK_THROWS_AS(topk(x, 5), IndexError);
  // Values are differentiable: the gradient lands on the picked elements.
  Tensor w = from_vector<double>({0.3, -0.2, 0.9, 0.1, 0.5, -0.7}, {2, 3}).to(dev).requires_grad_();
  sum(std::get<0>(topk(w, 2))).backward();
  CHECK(w.grad().to_vector<double>() == std::vector<double>{1, 0, 1, 1, 1, 0});
  gradcheck("topk", [](auto& v) { return std::get<0>(topk(v[0], 2, 1)); }, {input64({3, 5})});
}

TEST_CASE("multinomial draws from Philox: one seed, one draw on every device; the law of the weights") {
  Device dev = device_under_test();
  Tensor p = from_vector<float>({0.1f, 0.0f, 0.6f, 0.3f, 1.0f, 1.0f, 0.0f, 2.0f}, {2, 4});
  for (bool replacement : {true, false}) {
    INFO("replacement " << replacement);
    Generator a(123), b(123);
    Tensor here = multinomial(p.to(dev), 3, replacement, &a);
    Tensor ref = multinomial(p, 3, replacement, &b);
    CHECK(here.device() == dev);
    CHECK(here.dtype() == kInt64);
    CHECK(here.sizes() == Shape{2, 3});
    CHECK(here.to_vector<int64_t>() == ref.to_vector<int64_t>());
    CHECK(a.offset() == b.offset());
    auto s = here.to_vector<int64_t>();
    for (size_t j = 0; j < 3; ++j) {  // zero-weight categories are never drawn
      CHECK(s[j] != 1);
      CHECK(s[3 + j] != 2);
    }
    if (!replacement) {
      CHECK(std::set<int64_t>(s.begin(), s.begin() + 3).size() == 3);
      CHECK(std::set<int64_t>(s.begin() + 3, s.end()).size() == 3);
    }
  }
  // With replacement, the frequencies follow the weights (20000 draws: within 0.02).
  Generator g(7);
  auto many = multinomial(from_vector<double>({1, 2, 0, 5}, {4}).to(dev), 20000, true, &g).to_vector<int64_t>();
  std::vector<double> freq(4, 0.0);
  for (int64_t c : many) freq[size_t(c)] += 1.0 / 20000;
  CHECK(std::fabs(freq[0] - 0.125) < 0.02);
  CHECK(std::fabs(freq[1] - 0.25) < 0.02);
  CHECK(freq[2] == 0.0);
  CHECK(std::fabs(freq[3] - 0.625) < 0.02);
  // Without replacement the first pick follows the weights too.
  std::vector<double> first(4, 0.0);
  Tensor rows = from_vector<double>({1, 2, 0, 5}, {1, 4}).expand({4000, 4}).to(dev);
  auto picks = multinomial(rows, 2, false, &g).to_vector<int64_t>();
  for (size_t r = 0; r < 4000; ++r) first[size_t(picks[2 * r])] += 1.0 / 4000;
  CHECK(std::fabs(first[0] - 0.125) < 0.03);
  CHECK(std::fabs(first[3] - 0.625) < 0.03);
  // The default generator is used (and advanced) without one.
  manual_seed(5);
  auto d1 = multinomial(p.to(dev), 2, true).to_vector<int64_t>();
  manual_seed(5);
  CHECK(multinomial(p.to(dev), 2, true).to_vector<int64_t>() == d1);
  CHECK_THROWS_AS(multinomial(from_vector<float>({1, 0, 0}, {3}).to(dev), 2, false), ValueError);
  CHECK_THROWS_AS(multinomial(from_vector<float>({1, -1}, {2}).to(dev), 1), ValueError);
  CHECK_THROWS_AS(multinomial(from_vector<float>({0, 0}, {2}).to(dev), 1), ValueError);
  CHECK_THROWS_AS(multinomial(p.to(dev), 5, false), ValueError);
}

TEST_CASE("split and chunk are views that share storage and pass gradients back") {
  Device dev = device_under_test();
  Tensor x = iota({2, 7}, dev);
  auto parts = split(x, 3, 1);
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].sizes() == Shape{2, 3});
  CHECK(parts[2].sizes() == Shape{2, 1});
  CHECK(parts[1].to_vector<float>() == std::vector<float>{3, 4, 5, 10, 11, 12});
  auto qkv = chunk(iota({2, 4, 12}, dev), 3, -1);  // the packed projection's q, k, v
  REQUIRE(qkv.size() == 3);
  CHECK(qkv[1].sizes() == Shape{2, 4, 4});
  CHECK(qkv[1].to_vector<float>()[0] == 4.0f);
  // Writing through a view writes the base.
  parts[1].fill_(-1.0);
  CHECK(x.to_vector<float>()[4] == -1.0f);
  CHECK(x.chunk(4, 1).size() == 4);  // sizes 2, 2, 2, 1
  gradcheck("chunk", [](auto& v) {
    auto c = v[0].chunk(3, -1);
    return add(mul(c[0], c[1]), c[2]);
  }, {input64({2, 6})});
  gradcheck("split", [](auto& v) {
    auto s = split(v[0], std::vector<int64_t>{1, 3}, 0);
    return sum(s[1], 0) * s[0];
  }, {input64({4, 3})});
}

TEST_CASE("masked_fill with a scalar and the tanh GELU") {
  Device dev = device_under_test();
  Tensor x = iota({2, 3}, dev);
  Tensor causal = gt(sub(arange(int64_t(0), int64_t(3), int64_t(1), TensorOptions(dev).with(kInt64)).view({1, 3}),
                         arange(int64_t(0), int64_t(2), int64_t(1), TensorOptions(dev).with(kInt64)).view({2, 1})),
                     0.0);
  auto f = masked_fill(x, causal, -INFINITY).to_vector<float>();
  CHECK(f == std::vector<float>{0, -INFINITY, -INFINITY, 3, 4, -INFINITY});
  gradcheck("masked_fill", [causal](auto& v) { return masked_fill(v[0], causal, 2.5); }, {input64({2, 3})});

  Tensor g = from_vector<double>({-3, -1, -0.5, 0, 0.5, 1, 3}, {7}).to(dev);
  auto t = gelu(g, "tanh").to_vector<double>();
  auto gv = g.to_vector<double>();
  for (size_t i = 0; i < gv.size(); ++i) {
    double a = gv[i];
    double want = 0.5 * a * (1 + std::tanh(0.7978845608028654 * (a + 0.044715 * a * a * a)));
    CHECK(std::fabs(t[i] - want) < 1e-12);
  }
  CHECK(max_abs_diff(gelu(g, "none"), gelu(g)) == 0);
  CHECK_THROWS_AS(gelu(g, "sigmoid"), ValueError);
  gradcheck("gelu tanh", [](auto& v) { return gelu(v[0], "tanh"); }, {input64({2, 5})});
  // The module spelling.
  nn::GELU act(nn::GELUOptions().approximate("tanh"));
  CHECK(max_abs_diff(act(g), gelu(g, "tanh")) == 0);
  CHECK(max_abs_diff(nn::GELU()(g), gelu(g)) == 0);
  CHECK_THROWS_AS(nn::GELU(nn::GELUOptions().approximate("fast")), ValueError);
}

TEST_CASE("Embedding's padding_idx: a zero row that gets no gradient") {
  Device dev = device_under_test();
  nn::Embedding emb(nn::EmbeddingOptions(5, 3).padding_idx(-1));  // row 4
  CHECK(emb->options.padding_idx().value() == 4);
  emb->to(dev);
  CHECK(emb->weight.select(0, 4).to_vector<float>() == std::vector<float>{0, 0, 0});
  Tensor idx = from_vector<int64_t>({4, 1, 4, 2}, {2, 2}).to(dev);
  Tensor out = emb(idx);
  CHECK(out.sizes() == Shape{2, 2, 3});
  CHECK(max_abs_diff(out.select(0, 1).select(0, 1), emb->weight.select(0, 2)) == 0);
  sum(mul(out, 2.0)).backward();
  auto g = emb->weight.grad().to_vector<float>();
  CHECK(std::vector<float>(g.begin() + 12, g.end()) == std::vector<float>{0, 0, 0});  // padding row
  CHECK(std::vector<float>(g.begin() + 3, g.begin() + 9) == std::vector<float>{2, 2, 2, 2, 2, 2});
  CHECK(std::vector<float>(g.begin(), g.begin() + 3) == std::vector<float>{0, 0, 0});  // not looked up
  // A loaded row keeps its values in forward (as PyTorch), still without gradient.
  {
    autograd::NoGradGuard ng;
    emb->weight.select(0, 4).fill_(7.0);
  }
  CHECK(emb(from_vector<int64_t>({4}, {1}).to(dev)).to_vector<float>() == std::vector<float>{7, 7, 7});
  CHECK_THROWS_AS(nn::Embedding(nn::EmbeddingOptions(5, 3).padding_idx(5)), ValueError);
}
