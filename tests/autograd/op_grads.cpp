// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Finite-difference gradient checks (float64) of every differentiable op,
// on the device under test.
#include <catch2/catch.hpp>

#include <functional>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;

namespace {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

Tensor input(const Shape& shape, double lo = -1.0, double hi = 1.0, uint64_t seed = 7) {
  Generator gen(seed);
  Tensor t = add(mul(rand(shape, TensorOptions(device_under_test()).with(kFloat64), &gen), hi - lo), lo);
  return t.requires_grad_();
}

void check(const char* name, const Fn& f, const std::vector<Tensor>& inputs) {
  INFO("op " << name << " on " << device_under_test());
  auto r = autograd::gradcheck(f, inputs);
  INFO(r.message);
  CHECK(r.ok);
}

}  // namespace

TEST_CASE("binary elementwise ops, with broadcasting") {
  Tensor a = input({3, 4}), b = input({4}, 0.5, 2.0, 9), p = input({3, 4}, 0.5, 2.0, 11);
  check("add", [](auto& v) { return add(v[0], v[1], 0.5); }, {a, b});
  check("sub", [](auto& v) { return sub(v[0], v[1], 2.0); }, {a, b});
  check("mul", [](auto& v) { return v[0] * v[1]; }, {a, b});
  check("div", [](auto& v) { return v[0] / v[1]; }, {a, b});
  check("maximum", [](auto& v) { return maximum(v[0], v[1]); }, {a, b});
  check("minimum", [](auto& v) { return minimum(v[0], v[1]); }, {a, b});
  check("pow", [](auto& v) { return pow(v[0], v[1]); }, {p, b});
  check("pow scalar", [](auto& v) { return pow(v[0], 3.0); }, {a});
  // gelu's fused gradient op, differentiated itself (double backward through gelu).
  check("gelu_backward", [](auto& v) { return gelu_backward(v[0], v[1]); }, {a, input({3, 4}, -3.0, 3.0, 13)});
  check("scalar ops", [](auto& v) { return rsub(div(mul(add(v[0], 2.0), 3.0), 4.0), 1.0); }, {a});
}

TEST_CASE("unary elementwise ops") {
  Tensor x = input({2, 5}), pos = input({2, 5}, 0.2, 3.0, 3);
  std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> ops = {
      {"neg", [](auto& t) { return neg(t); }},       {"abs", [](auto& t) { return abs(t); }},
      {"exp", [](auto& t) { return exp(t); }},       {"relu", [](auto& t) { return relu(t); }},
      {"sigmoid", [](auto& t) { return sigmoid(t); }}, {"tanh", [](auto& t) { return tanh(t); }},
      {"sin", [](auto& t) { return sin(t); }},       {"cos", [](auto& t) { return cos(t); }},
      {"leaky_relu", [](auto& t) { return leaky_relu(t, 0.1); }},
      {"gelu", [](auto& t) { return gelu(t); }},     {"silu", [](auto& t) { return silu(t); }},
      {"erf", [](auto& t) { return erf(t); }},       {"clamp", [](auto& t) { return clamp(t, -0.5, 0.5); }},
  };
  for (auto& [name, op] : ops) check(name, [op = op](auto& v) { return op(v[0]); }, {x});
  std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> positive = {
      {"log", [](auto& t) { return log(t); }},     {"sqrt", [](auto& t) { return sqrt(t); }},
      {"log1p", [](auto& t) { return log1p(t); }}, {"rsqrt", [](auto& t) { return rsqrt(t); }},
      {"reciprocal", [](auto& t) { return reciprocal(t); }},
  };
  for (auto& [name, op] : positive) check(name, [op = op](auto& v) { return op(v[0]); }, {pos});
}

TEST_CASE("where, masked_fill and in-place ops on non-leaves") {
  Tensor a = input({3, 3}), b = input({3, 3}, -1, 1, 5);
  check("where", [](auto& v) { return where(gt(v[0], 0.0), v[0], v[1]); }, {a, b});
  check("masked_fill", [](auto& v) { return masked_fill(v[0], lt(v[0], 0.0), 2.0); }, {a});
  check("in-place chain", [](auto& v) {
    Tensor t = v[0] * 2.0;
    t.add_(v[1]).mul_(v[1]).clamp_(-0.8, 0.8);
    return t;
  }, {a, b});
}

TEST_CASE("views, copies, matmul and joins") {
  Tensor a = input({2, 3, 4}), m = input({4, 5}, -1, 1, 13);
  check("views", [](auto& v) {
    return v[0].transpose(0, 2).reshape({4, 6}).narrow(1, 1, 4).select(0, 2).unsqueeze(0).expand({3, 4});
  }, {a});
  check("permute+flatten", [](auto& v) { return v[0].permute({2, 0, 1}).flatten(1).squeeze(); }, {a});
  check("matmul batched", [](auto& v) { return matmul(v[0], v[1]); }, {a, m});
  check("matmul vector", [](auto& v) { return matmul(v[0].select(0, 0).select(0, 0), v[1]); }, {a, m});
  check("cat", [](auto& v) { return cat({v[0].select(2, 0), v[0].select(2, 3) * 2.0}, 1); }, {a});
  check("stack", [](auto& v) { return stack({v[0].select(0, 0), v[0].select(0, 1)}, 2); }, {a});
}

TEST_CASE("indexing ops") {
  Device dev = device_under_test();
  Tensor a = input({4, 3});
  Tensor idx = from_vector<int64_t>({2, 0, 2}, {3}).to(dev);
  Tensor g_idx = from_vector<int64_t>({0, 2, 1, 1, 0, 0}, {2, 3}).to(dev);
  Tensor src = input({2, 3}, -1, 1, 17);
  check("index_select", [idx](auto& v) { return index_select(v[0], 0, idx); }, {a});
  check("gather", [g_idx](auto& v) { return gather(v[0], 0, g_idx); }, {a});
  check("scatter_add", [g_idx](auto& v) { return scatter_add(v[0], 0, g_idx, v[1]); }, {a, src});
  check("index_add", [idx](auto& v) { return index_add(v[0], 0, idx, v[1], 0.5); }, {a, input({3, 3}, -1, 1, 19)});
  check("embedding", [](auto& v) {
    return embedding(v[0], from_vector<int64_t>({1, 3, 1}, {3}).to(device_under_test()));
  }, {a});
}

TEST_CASE("reductions and softmax") {
  Tensor a = input({3, 4});
  check("sum", [](auto& v) { return sum(v[0]); }, {a});
  check("sum dim", [](auto& v) { return sum(v[0], 1, true); }, {a});
  check("mean dims", [](auto& v) { return mean(v[0], std::vector<int64_t>{0, 1}); }, {a});
  check("prod", [](auto& v) { return prod(v[0], 1); }, {a});
  check("amax", [](auto& v) { return amax(v[0], {1}); }, {a});
  check("max dim", [](auto& v) { return std::get<0>(max(v[0], 0)); }, {a});
  check("softmax", [](auto& v) { return softmax(v[0], 1); }, {a});
  check("log_softmax", [](auto& v) { return log_softmax(v[0], 0); }, {a});
  check("var", [](auto& v) { return var(v[0], std::vector<int64_t>{1}); }, {a});
  check("logsumexp", [](auto& v) { return logsumexp(v[0], std::vector<int64_t>{1}); }, {a});
}

TEST_CASE("conv2d, pooling and normalization") {
  Tensor x = input({2, 2, 5, 5}), w = input({3, 2, 3, 3}, -1, 1, 21), b = input({3}, -1, 1, 23);
  check("conv2d", [](auto& v) { return conv2d(v[0], v[1], v[2], 1, 1); }, {x, w, b});
  check("conv2d strided grouped", [](auto& v) { return conv2d(v[0], v[1], Tensor(), 2, 0, 1, 2); },
        {x, input({4, 1, 3, 3}, -1, 1, 25)});
  check("max_pool2d", [](auto& v) { return max_pool2d(v[0], 2); }, {x});
  check("avg_pool2d", [](auto& v) { return avg_pool2d(v[0], 3, 1, 1); }, {x});
  check("adaptive_avg_pool2d", [](auto& v) { return adaptive_avg_pool2d(v[0], 2); }, {x});
  Tensor gamma = input({2}, 0.5, 1.5, 27), beta = input({2}, -1, 1, 29);
  check("batch_norm", [](auto& v) { return std::get<0>(batch_norm(v[0], v[1], v[2], Tensor(), Tensor(), true)); },
        {x, gamma, beta});
  check("layer_norm", [](auto& v) { return std::get<0>(layer_norm(v[0], {5, 5})); }, {x});
  check("group_norm", [](auto& v) { return std::get<0>(group_norm(v[0], 2, v[1], v[2])); }, {x, gamma, beta});
}
