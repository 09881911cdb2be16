// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn::autograd::Function<T>: LibTorch's custom-op examples ported by
// renaming, saved tensors and data, several outputs, non-differentiable
// outputs, in-place forwards, double backward and the typed errors, on the
// device under test.
#include <catch2/catch.hpp>

#include <cmath>

#include "support/device_under_test.hpp"

using namespace vnn;
using namespace vnn::autograd;
using vnn::test::device_under_test;

namespace {
// LibTorch's documentation example: y = x @ w^T + b.
struct LinearFunction : public Function<LinearFunction> {
  static Tensor forward(AutogradContext* ctx, Tensor input, Tensor weight, Tensor bias = Tensor()) {
    ctx->save_for_backward({input, weight, bias});
    Tensor output = input.mm(weight.t());
    if (bias.defined()) output += bias.unsqueeze(0).expand_as(output);
    return output;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    Tensor input = saved[0], weight = saved[1], bias = saved[2];
    Tensor grad_output = grad_outputs[0];
    Tensor grad_input = grad_output.mm(weight);
    Tensor grad_weight = grad_output.t().mm(input);
    Tensor grad_bias;
    if (bias.defined()) grad_bias = grad_output.sum(0);
    return {grad_input, grad_weight, grad_bias};
  }
};

// LibTorch's second example: a non-tensor argument kept in saved_data.
struct MulConstant : public Function<MulConstant> {
  static Tensor forward(AutogradContext* ctx, Tensor tensor, double constant) {
    ctx->saved_data["constant"] = constant;
    return tensor * constant;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    return {grad_outputs[0] * ctx->saved_data["constant"].toDouble(), Tensor()};
  }
};

// exp with its output saved: differentiable again under create_graph.
struct Exp : public Function<Exp> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    Tensor y = exp(x);
    ctx->save_for_backward({y});
    return y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    return {g[0] * ctx->get_saved_variables()[0]};
  }
};

// Two outputs, the second an integer index marked non-differentiable.
struct MaxWithIndex : public Function<MaxWithIndex> {
  static variable_list forward(AutogradContext* ctx, Tensor x) {
    auto [values, indices] = max(x, 1);
    ctx->save_for_backward({indices});
    ctx->saved_data["shape"] = std::vector<int64_t>(x.sizes().begin(), x.sizes().end());
    ctx->mark_non_differentiable({indices});
    Tensor doubled = values * 2.0;
    return {values, indices, doubled};
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    Tensor idx = ctx->get_saved_variables()[0];
    std::vector<int64_t> shape = ctx->saved_data["shape"].toIntVector();
    Tensor total = g[0] + g[2] * 2.0;  // g[2] materialized as zeros when unused
    Tensor grad = zeros(Shape(shape), TensorOptions(total.device()).with(total.dtype()));
    return {grad.scatter(1, idx.unsqueeze(1), total.unsqueeze(1))};
  }
};

// Doubles its input in place and says so.
struct DoubleInPlace : public Function<DoubleInPlace> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    x.mul_(2.0);
    ctx->mark_dirty({x});
    return x;
  }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0] * 2.0}; }
};

struct WrongCount : public Function<WrongCount> {
  static Tensor forward(AutogradContext*, Tensor x, double) { return x * 3.0; }
  static variable_list backward(AutogradContext*, variable_list g) { return {g[0]}; }
};

struct NeedsGrad : public Function<NeedsGrad> {
  static Tensor forward(AutogradContext* ctx, Tensor a, Tensor b) {
    ctx->saved_data["a"] = ctx->needs_input_grad(0);
    ctx->saved_data["b"] = ctx->needs_input_grad(1);
    return a * b;
  }
  static variable_list backward(AutogradContext* ctx, variable_list g) {
    CHECK(ctx->saved_data["a"].toBool());
    CHECK_FALSE(ctx->saved_data["b"].toBool());
    return {g[0], Tensor()};
  }
};

Tensor random_leaf(Shape shape, const Device& dev, uint64_t seed) {
  Generator gen(seed);
  return rand(shape, TensorOptions(dev).with(kFloat64), &gen).sub(0.5).detach().requires_grad_();
}
}  // namespace

TEST_CASE("LibTorch's custom-function examples run and pass gradcheck") {
  Device dev = device_under_test();
  Tensor x = random_leaf({4, 3}, dev, 1), w = random_leaf({2, 3}, dev, 2), b = random_leaf({2}, dev, 3);
  Tensor y = LinearFunction::apply(x, w, b);
  CHECK(y.sizes() == Shape({4, 2}));
  CHECK(y.requires_grad());
  CHECK(allclose(y, add(matmul(x, w.t()), b)));
  auto r = gradcheck([](const std::vector<Tensor>& in) { return LinearFunction::apply(in[0], in[1], in[2]); },
                     {x, w, b});
  INFO(r.message);
  CHECK(r.ok);
  Tensor no_bias = LinearFunction::apply(x, w);  // an undefined optional argument
  CHECK(allclose(no_bias, matmul(x, w.t())));
  sum(no_bias).backward();
  CHECK(x.grad().defined());

  Tensor m = random_leaf({3}, dev, 4);
  Tensor z = MulConstant::apply(m, 5.5);
  sum(z).backward();
  CHECK(allclose(m.grad(), full({3}, 5.5, TensorOptions(dev).with(kFloat64))));
}

TEST_CASE("a Function's saved output is differentiable again under create_graph") {
  Device dev = device_under_test();
  Tensor x = random_leaf({5}, dev, 5);
  Tensor g = grad({sum(Exp::apply(x))}, {x}, {}, true, /*create_graph=*/true)[0];
  CHECK(allclose(g, exp(x)));
  Tensor gg = grad({sum(g)}, {x})[0];
  CHECK(allclose(gg, exp(x)));
  auto r = gradgradcheck([](const std::vector<Tensor>& in) { return Exp::apply(in[0]); }, {x});
  INFO(r.message);
  CHECK(r.ok);
}

TEST_CASE("several outputs, non-differentiable ones and materialized gradients") {
  Device dev = device_under_test();
  Tensor x = random_leaf({3, 4}, dev, 6);
  variable_list out = MaxWithIndex::apply(x);
  REQUIRE(out.size() == 3);
  CHECK(out[0].requires_grad());
  CHECK_FALSE(out[1].requires_grad());
  CHECK(out[2].requires_grad());
  sum(out[0]).backward();  // out[2] gets no gradient: zeros reach backward
  auto [values, indices] = max(x.detach(), 1);
  const TensorOptions f64 = TensorOptions(dev).with(kFloat64);
  Tensor expect = zeros({3, 4}, f64).scatter(1, indices.unsqueeze(1), ones({3, 1}, f64));
  CHECK(allclose(x.grad(), expect));
  x.mutable_grad() = Tensor();
  variable_list again = MaxWithIndex::apply(x);
  sum(add(again[0], again[2])).backward();  // 1 + 2 per maximum
  CHECK(allclose(x.grad(), mul(expect, 3.0)));
}

TEST_CASE("mark_dirty, needs_input_grad and the typed errors") {
  Device dev = device_under_test();
  Tensor base = random_leaf({3}, dev, 7);
  Tensor x = mul(base, 1.0);  // a non-leaf, so it may change in place
  Tensor y = DoubleInPlace::apply(x);
  CHECK(y.impl() == x.impl());
  sum(y).backward();
  CHECK(allclose(base.grad(), full({3}, 2.0, TensorOptions(dev).with(kFloat64))));
  CHECK_THROWS_AS(DoubleInPlace::apply(random_leaf({3}, dev, 8)), ValueError);

  Tensor a = random_leaf({2}, dev, 9), b = random_leaf({2}, dev, 10).detach();
  sum(NeedsGrad::apply(a, b)).backward();
  CHECK(a.grad().defined());

  Tensor c = random_leaf({2}, dev, 11);
  CHECK_THROWS_AS(sum(WrongCount::apply(c, 1.0)).backward(), ValueError);

  SavedValue v(3.0);
  CHECK(v.toDouble() == 3.0);
  CHECK_THROWS_AS(v.toTensor(), ValueError);
  // No input requires grad: the result is a plain tensor.
  CHECK_FALSE(MulConstant::apply(b, 2.0).requires_grad());
}
