// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Issue 31, items 3 and 6: the Tensor method forms (their block in vnn/tensor.h)
// each equal to their free function, the new free functions behind them
// (bmm, linear, isclose / allclose / equal), TensorOptions chains, the dtype
// aliases and the generator-first creation spellings, on the device under
// test.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "support/device_under_test.hpp"
#include "vnn/vnn.h"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::max_abs_diff;

namespace {

Tensor values(const std::vector<float>& v, const Shape& s, const Device& dev) { return from_vector(v, s, dev); }

// Bitwise-equal results (same dtype, same shape, same values).
void same(const Tensor& a, const Tensor& b) {
  REQUIRE(a.dtype() == b.dtype());
  REQUIRE(a.sizes() == b.sizes());
  CHECK(max_abs_diff(a, b) == 0);
}

}  // namespace

TEST_CASE("Tensor methods: each is its free function") {
  Device dev = device_under_test();
  Tensor a = values({0.5f, -1.5f, 2.0f, 3.0f, -0.25f, 1.0f}, {2, 3}, dev);
  Tensor b = values({1.0f, 2.0f, -1.0f, 0.5f, 4.0f, -2.0f}, {2, 3}, dev);
  Tensor p = values({0.5f, 1.5f, 2.0f, 3.0f, 0.25f, 1.0f}, {2, 3}, dev);
  same(a.add(b), add(a, b));
  same(a.add(b, 2.0), add(a, b, 2.0));
  same(a.add(1.5), add(a, 1.5));
  same(a.sub(b, 0.5), sub(a, b, 0.5));
  same(a.sub(1.0), sub(a, 1.0));
  same(a.mul(b), mul(a, b));
  same(a.mul(3.0), mul(a, 3.0));
  same(a.div(b), div(a, b));
  same(a.div(4.0), div(a, 4.0));
  same(a.neg(), neg(a));
  same(p.pow(b), pow(p, b));
  same(p.pow(2.0), pow(p, 2.0));
  same(a.square(), mul(a, a));
  same(a.maximum(b), maximum(a, b));
  same(a.minimum(b), minimum(a, b));
  same(a.max(b), maximum(a, b));
  same(a.min(b), minimum(a, b));
  same(a.clamp(-1.0, 1.0), clamp(a, -1.0, 1.0));
  same(a.clamp_min(0.0), clamp_min(a, 0.0));
  same(a.clamp_max(0.0), clamp_max(a, 0.0));
  same(a.abs(), abs(a));
  same(a.exp(), exp(a));
  same(p.log(), log(p));
  same(p.log1p(), log1p(p));
  same(p.sqrt(), sqrt(p));
  same(p.rsqrt(), rsqrt(p));
  same(a.sin(), sin(a));
  same(a.cos(), cos(a));
  same(a.tanh(), tanh(a));
  same(a.sigmoid(), sigmoid(a));
  same(a.relu(), relu(a));
  same(a.erf(), erf(a));
  same(p.reciprocal(), reciprocal(p));
  same(a.floor(), floor(a));
  same(a.ceil(), ceil(a));
  same(a.round(), round(a));
  same(a.sign(), sign(a));
  same(a.eq(b), eq(a, b));
  same(a.ne(1.0), ne(a, 1.0));
  same(a.lt(b), lt(a, b));
  same(a.le(0.5), le(a, 0.5));
  same(a.gt(b), gt(a, b));
  same(a.ge(1.0), ge(a, 1.0));
  Tensor m = a.gt(0.0), n = b.gt(0.0);
  same(m.logical_and(n), logical_and(m, n));
  same(m.logical_or(n), logical_or(m, n));
  same(m.logical_xor(n), logical_xor(m, n));
  same(m.logical_not(), logical_not(m));
  same(a.where(m, b), where(m, a, b));
  same(a.where(m, -7.0), where(m, a, -7.0));
  same(a.masked_fill(m, 9.0), masked_fill(a, m, 9.0));
  same(a.tril(), tril(a));
  same(a.triu(1), triu(a, 1));
  same(a.tril(-1), tril(a, -1));
}

TEST_CASE("Tensor methods: reductions, products, indexing") {
  Device dev = device_under_test();
  Tensor a = values({0.5f, -1.5f, 2.0f, 3.0f, -0.25f, 1.0f}, {2, 3}, dev);
  same(a.sum(), sum(a));
  same(a.sum(1), sum(a, 1));
  same(a.sum(0, true), sum(a, 0, true));
  same(a.sum({0, 1}), sum(a, std::vector<int64_t>{0, 1}));
  same(a.mean(), mean(a));
  same(a.mean(-1, true), mean(a, -1, true));
  same(a.mean({1}), mean(a, std::vector<int64_t>{1}));
  same(a.prod(), prod(a));
  same(a.prod(1), prod(a, 1));
  same(a.max(), max(a));
  same(a.min(), min(a));
  auto [mv, mi] = a.max(1);
  auto [fv, fi] = max(a, 1);
  same(mv, fv);
  same(mi, fi);
  auto [nv, ni] = a.min(0, true);
  auto [gv, gi] = min(a, 0, true);
  same(nv, gv);
  same(ni, gi);
  CHECK(a.max().item<float>() == 3.0f);
  CHECK(std::get<1>(a.max(1)).to_vector<int64_t>() == std::vector<int64_t>{2, 0});
  same(a.amax({1}), amax(a, {1}));
  same(a.amin(), amin(a));
  same(a.argmax(), argmax(a));
  same(a.argmax(1), argmax(a, 1));
  same(a.argmin(), argmin(a));
  same(a.argmin(0, true), argmin(a, 0, true));
  CHECK(a.argmax().item<int64_t>() == 3);
  same(a.var(), vnn::var(a));
  same(a.var(1, 0), vnn::var(a, 1, 0));
  same(a.std(), vnn::std(a));
  same(a.std({0}, 1, true), vnn::std(a, {0}, 1, true));
  same(a.norm(), norm(a));
  same(a.norm(1.0, {1}), norm(a, 1.0, {1}));
  same(a.logsumexp(1), logsumexp(a, 1));
  same(a.logsumexp({0, 1}), logsumexp(a, {0, 1}));
  same(a.any(), any(a));
  same(a.all(1), all(a, 1));
  auto [tv, ti] = a.topk(2);
  auto [fv2, fi2] = topk(a, 2);
  same(tv, fv2);
  same(ti, fi2);
  CHECK(std::get<0>(a.topk(1, 0, false)).to_vector<float>() == std::vector<float>{0.5f, -1.5f, 1.0f});
  same(a.softmax(1), softmax(a, 1));
  same(a.log_softmax(0), log_softmax(a, 0));

  Tensor w = values({1, 0, -1, 2, 0.5f, 1}, {3, 2}, dev);
  same(a.matmul(w), matmul(a, w));
  same(a.mm(w), mm(a, w));
  Tensor ba = a.unsqueeze(0).expand({2, 2, 3}).contiguous(), bw = w.unsqueeze(0).expand({2, 3, 2}).contiguous();
  same(ba.bmm(bw), matmul(ba, bw));

  Tensor idx = from_vector(std::vector<int64_t>{2, 0}, {2}, dev);
  same(a.index_select(1, idx), index_select(a, 1, idx));
  Tensor gidx = from_vector(std::vector<int64_t>{0, 2, 1, 1}, {2, 2}, dev);
  same(a.gather(1, gidx), gather(a, 1, gidx));
  Tensor src = ones({2, 2}, dev);
  same(a.scatter(1, gidx, src), scatter(a, 1, gidx, src));
  same(a.scatter_add(1, gidx, src), scatter_add(a, 1, gidx, src));
  same(a.index_add(1, idx, ones({2, 2}, dev), 2.0), index_add(a, 1, idx, ones({2, 2}, dev), 2.0));
  Tensor c = a.clone();
  c.scatter_add_(1, gidx, src);
  same(c, scatter_add(a, 1, gidx, src));
  Tensor c2 = a.clone();
  c2.index_add_(1, idx, ones({2, 2}, dev));
  same(c2, index_add(a, 1, idx, ones({2, 2}, dev)));
  Tensor c3 = a.clone();
  c3.scatter_(1, gidx, src);
  same(c3, scatter(a, 1, gidx, src));
}

// vnn::Dims takes a reduction's dims as LibTorch's IntArrayRef is passed: one
// dim, a braced list, a vector; `{1}` must be the same reduction as `1` (it
// used to pick the one-dim overload through braces clang warns about).
TEST_CASE("Dims: one dim, a braced list and a vector name the same reduction") {
  Device dev = device_under_test();
  Tensor a = values({0.5f, -1.5f, 2.0f, 3.0f, -0.25f, 1.0f}, {2, 3}, dev);
  const std::vector<int64_t> last{-1};
  const int one = 1;
  for (const Tensor& t : {a.sum(1), a.sum({1}), a.sum(last), sum(a, {one}), sum(a, int64_t(1))})
    CHECK(t.to_vector<float>() == std::vector<float>{1.0f, 3.75f});
  CHECK(a.mean({0}, true).sizes() == Shape{1, 3});
  CHECK(a.mean(0, true).to_vector<float>() == a.mean({0}, true).to_vector<float>());
  same(a.var({1}, 0), vnn::var(a, 1, 0));
  CHECK(vnn::var(a, {1}, 0, true).sizes() == Shape{2, 1});
  same(a.std(size_t(0)), vnn::std(a, {0}));
  same(a.amax(1), amax(a, {1}));
  CHECK(a.amax({}).item<float>() == 3.0f);  // {}: every dim
  same(a.logsumexp(-1), logsumexp(a, last));
  same(a.any(1), any(a, {1}));
  same(a.all({0, 1}), all(a));
  same(a.norm(2.0, 1), norm(a, 2.0, {1}));
}

TEST_CASE("Tensor methods: shape and type helpers, random fills") {
  Device dev = device_under_test();
  Tensor a = arange(0.0, 6.0, 1.0, dev).view({2, 3});
  Tensor like = zeros({3, 2}, dev);
  CHECK(a.view_as(like).sizes() == Shape{3, 2});
  CHECK(a.t().reshape_as(zeros({6}, dev)).sizes() == Shape{6});
  CHECK(ones({1, 3}, dev).expand_as(a).sizes() == Shape{2, 3});
  CHECK(a.type_as(zeros({1}, TensorOptions(dev).dtype(kLong))).dtype() == kLong);
  TensorOptions o = a.to(kDouble).options();
  CHECK(o.dtype() == kFloat64);
  CHECK(o.device() == dev);
  CHECK(zeros({2}, a.options()).device() == dev);
  CHECK(a.scalar_type() == kFloat);
  CHECK(a.ndimension() == 2);
  CHECK(a.element_size() == 4);
  CHECK(a.is_floating_point());
  CHECK_FALSE(a.to(kInt).is_floating_point());
  Tensor host = a.cpu().contiguous();
  CHECK(host.data_ptr<float>()[4] == 4.0f);

  Generator g1(7), g2(7);
  Tensor u = empty({64}, dev);
  u.uniform_(-2.0, 2.0, &g1);
  Tensor u2 = empty({64}, dev);
  uniform_(u2, -2.0, 2.0, &g2);
  same(u, u2);
  CHECK(u.min().item<float>() >= -2.0f);
  CHECK(u.max().item<float>() < 2.0f);
  Tensor nrm = empty({4096}, dev);
  nrm.normal_(3.0, 0.5);
  Tensor probs = values({0.0f, 1.0f, 0.0f, 3.0f}, {4}, dev);
  Generator m1(3), m2(3);
  Tensor draws = probs.multinomial(8, true, &m1);
  same(draws, multinomial(probs, 8, true, &m2));
  CHECK(draws.dtype() == kLong);
  CHECK(logical_or(draws.eq(1.0), draws.eq(3.0)).all().item<bool>());
  CHECK(std::abs(nrm.mean().item<double>() - 3.0) < 0.05);
}

TEST_CASE("bmm and linear: values, autograd, errors") {
  Device dev = device_under_test();
  // [2, 2, 3] @ [2, 3, 1]
  Tensor x = values({1, 2, 3, 4, 5, 6, -1, 0, 1, 2, 2, 2}, {2, 2, 3}, dev);
  Tensor y = values({1, 1, 1, 0, 1, 2}, {2, 3, 1}, dev);
  Tensor z = bmm(x, y);
  CHECK(z.sizes() == Shape{2, 2, 1});
  CHECK(z.to_vector<float>() == std::vector<float>{6, 15, 2, 6});
  CHECK_THROWS_AS(bmm(x, y[0]), ShapeError);                                  // mat2 not 3-D
  CHECK_THROWS_AS(bmm(x, zeros({3, 3, 1}, dev)), ShapeError);                  // batch sizes differ
  CHECK_THROWS_AS(bmm(x, zeros({2, 2, 1}, dev)), ShapeError);                  // inner sizes differ
  CHECK_THROWS_AS(bmm(x, zeros({2, 3, 1}, TensorOptions(dev).dtype(kDouble))), DTypeError);
  CHECK_THROWS_WITH(bmm(x, zeros({3, 3, 1}, dev)), Catch::Contains("bmm") && Catch::Contains("[3, 3, 1]"));

  Tensor in = values({1, 2, 3, -1, 0, 1}, {2, 3}, dev);
  Tensor w = values({1, 0, 0, 0, 1, 1}, {2, 3}, dev);
  Tensor b = values({10, 20}, {2}, dev);
  CHECK(linear(in, w, b).to_vector<float>() == std::vector<float>{11, 25, 9, 21});
  CHECK(linear(in, w).to_vector<float>() == std::vector<float>{1, 5, -1, 1});
  CHECK(linear(in.unsqueeze(0), w, b).sizes() == Shape{1, 2, 2});
  // addmm: the C++ frontend tutorial's torch::addmm(b, input, W).
  CHECK(addmm(b, in, w.t()).to_vector<float>() == std::vector<float>{11, 25, 9, 21});
  CHECK(b.addmm(in, w.t(), 0.5, 2.0).to_vector<float>() == std::vector<float>{7, 20, 3, 12});
  CHECK(addmm(full({1}, NAN, dev), in, w.t(), 0.0).to_vector<float>() == std::vector<float>{1, 5, -1, 1});
  CHECK_THROWS_AS(addmm(ones({3}, dev), in, w.t()), ShapeError);
  CHECK_THROWS_AS(addmm(b, in, w), ShapeError);
  if (!dev.is_cpu()) {  // operands on two devices: DeviceMismatch naming the op and the argument
    CHECK_THROWS_AS(linear(in, w.cpu()), DeviceMismatch);
    CHECK_THROWS_WITH(linear(in, w.cpu(), b), Catch::Contains("linear") && Catch::Contains("weight"));
    CHECK_THROWS_WITH(addmm(b.cpu(), in, w.t()), Catch::Contains("addmm"));
    CHECK_THROWS_WITH(bmm(x, y.cpu()), Catch::Contains("bmm"));
    CHECK_THROWS_WITH(isclose(in, in.cpu()), Catch::Contains("isclose"));
    CHECK_THROWS_AS(equal(in, in.cpu()), DeviceMismatch);
  }
  CHECK_THROWS_AS(linear(in, w.t()), ShapeError);
  CHECK_THROWS_AS(linear(in, w, ones({3}, dev)), ShapeError);
  CHECK_THROWS_WITH(linear(in, w, ones({3}, dev)), Catch::Contains("linear") && Catch::Contains("bias"));
  // The same parameters through nn::Linear give the same values and gradients.
  nn::Linear fc(3, 2);
  fc->to(dev);
  Tensor xin = randn({4, 3}, dev);
  Tensor l1 = linear(xin, fc->weight, fc->bias).sum();
  l1.backward();
  Tensor gw = fc->weight.grad().clone();
  fc->zero_grad();
  fc(xin).sum().backward();
  CHECK(max_abs_diff(gw, fc->weight.grad()) < 1e-6);

  Tensor xa = randn({2, 3, 4}, TensorOptions(dev).dtype(kDouble).requires_grad(true));
  Tensor ya = randn({2, 4, 2}, TensorOptions(dev).dtype(kDouble).requires_grad(true));
  auto r = autograd::gradcheck([](const std::vector<Tensor>& v) { return bmm(v[0], v[1]); }, {xa, ya});
  CHECK(r.ok);
}

TEST_CASE("isclose, allclose, equal") {
  Device dev = device_under_test();
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  Tensor a = values({1.0f, 2.0f, inf, -inf, nan, 100.0f}, {6}, dev);
  Tensor b = values({1.0f + 1e-6f, 2.1f, inf, inf, nan, 100.0005f}, {6}, dev);
  CHECK(isclose(a, b).to_vector<uint8_t>() == std::vector<uint8_t>{1, 0, 1, 0, 0, 1});
  CHECK(a.isclose(b, 1e-5, 1e-8, true).to_vector<uint8_t>() == std::vector<uint8_t>{1, 0, 1, 0, 1, 1});
  CHECK(isclose(a, b, 0.1, 0.0).to_vector<uint8_t>() == std::vector<uint8_t>{1, 1, 1, 0, 0, 1});
  Tensor x = values({1, 2, 3}, {3}, dev);
  CHECK(x.allclose(x + 1e-7));
  CHECK_FALSE(x.allclose(x + 1e-3));
  CHECK(allclose(x, x + 1e-3, 1e-3));
  CHECK(allclose(x, values({1, 2, 3}, {1, 3}, dev)));  // broadcast
  CHECK_FALSE(allclose(a, a));                         // NaN
  CHECK(allclose(a, a, 1e-5, 1e-8, true));
  CHECK(x.equal(x.clone()));
  CHECK_FALSE(x.equal(x + 1));
  CHECK_FALSE(x.equal(x.view({1, 3})));  // sizes differ
  CHECK_FALSE(equal(a, a));              // NaN is unequal
  Tensor i = arange(0, 5, 1, dev);
  CHECK(equal(i, arange(0, 5, 1, dev)));
  Tensor i1 = add(i, ones_like(i));  // int64 too
  CHECK(isclose(i, i1, 0.0, 1.0).all().item<bool>());
  CHECK_FALSE(isclose(i, i1).any().item<bool>());
  CHECK_THROWS_AS(isclose(x, x.to(kDouble)), DTypeError);
  CHECK_THROWS_AS(allclose(x, x, -1.0), ValueError);
  CHECK_THROWS_WITH(isclose(x, x.to(kDouble)), Catch::Contains("isclose") && Catch::Contains("float64"));
  CHECK_THROWS_AS(equal(x, Tensor()), ValueError);
}

TEST_CASE("TensorOptions chains, dtype aliases, generator-first creation") {
  Device dev = device_under_test();
  CHECK(kLong == kInt64);
  CHECK(kInt == kInt32);
  CHECK(kFloat == kFloat32);
  CHECK(kDouble == kFloat64);
  CHECK(kHalf == kFloat16);
  CHECK(kByte == kUInt8);
  CHECK(name(kBFloat16) == std::string("bfloat16"));
  CHECK(name(kBool) == std::string("bool"));

  TensorOptions o = TensorOptions().dtype(kLong).device(dev).requires_grad(false);
  CHECK(o.dtype() == kInt64);
  CHECK(o.device() == dev);
  CHECK_FALSE(o.requires_grad());
  CHECK(o.has_dtype());
  CHECK_FALSE(TensorOptions().has_dtype());
  Tensor t = zeros({2, 3}, o);
  CHECK(t.dtype() == kLong);
  CHECK(t.device() == dev);
  Tensor g = ones({3}, TensorOptions().dtype(kDouble).device(dev).requires_grad(true));
  CHECK(g.requires_grad());
  CHECK(g.is_leaf());
  CHECK(g.dtype() == kDouble);
  CHECK(full({2}, 1.5, vnn::dtype(kHalf).device(dev)).dtype() == kHalf);
  CHECK(empty({1}, vnn::dtype<int32_t>()).dtype() == kInt);
  CHECK(arange(0, 4, 1, vnn::device(dev)).dtype() == kLong);  // a device keeps arange's int64
  CHECK(rand({2}, vnn::device(dev).dtype(kDouble)).dtype() == kDouble);
  CHECK(zeros({1}, vnn::requires_grad()).requires_grad());
  CHECK(TensorOptions().dtype<float>().dtype() == kFloat);
  CHECK(TensorOptions(kBool).pinned_memory(true).pinned_memory());

  // The generator before the options, as LibTorch's randint(low, high, size, generator, options).
  Generator g1(123), g2(123);
  Tensor r1 = randint(0, 10, {16}, g1, vnn::device(dev));
  Tensor r2 = randint(0, 10, {16}, TensorOptions(dev), &g2);
  CHECK(r1.dtype() == kLong);
  CHECK(r1.device() == dev);
  CHECK(equal(r1, r2));
  CHECK(equal(randint(5, {8}, g1, dev), randint(5, {8}, dev, &g2)));
  CHECK(equal(randn({8}, g1, dev), randn({8}, dev, &g2)));
  CHECK(equal(rand({8}, g1, vnn::dtype(kDouble).device(dev)), rand({8}, vnn::dtype(kDouble).device(dev), &g2)));
  CHECK(equal(randperm(9, g1), randperm(9, {}, &g2)));
  CHECK(randint(0, 10, {16}, g1, vnn::dtype(kInt)).dtype() == kInt);
  CHECK(where(gt(r1, 4.0), r1.to(kFloat), 0.0).dtype() == kFloat);
  CHECK(where(gt(r1, 4.0), 1.0, r1.to(kFloat)).sizes() == Shape{16});
  Tensor both = where(gt(r1, 4.0), 1.0, 0.0);
  CHECK(both.dtype() == kFloat);
  CHECK(both.device() == dev);
  CHECK(both.sum().item<double>() == gt(r1, 4.0).sum().item<double>());
  CHECK_THROWS_AS(where(r1, 1.0, 0.0), DTypeError);  // the condition must be bool
}
