// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Second derivatives (create_graph): known closed forms, gradgradcheck of
// the op families whose backward is differentiable, a gradient penalty and a
// Hessian-vector product, and the typed error of a once-differentiable op,
// on the device under test.
#include <catch2/catch.hpp>

#include <cmath>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;

namespace {
Tensor leaf(std::vector<double> v, Shape shape, const Device& dev) {
  return from_vector(v, shape).to(dev).requires_grad_();
}
Tensor random_leaf(Shape shape, const Device& dev, uint64_t seed, double lo = -1.0, double hi = 1.0) {
  Generator gen(seed);
  Tensor t = rand(shape, TensorOptions(dev).with(kFloat64), &gen);
  return mul(t, hi - lo).add(lo).detach().requires_grad_();
}
void require_gradgrad(const std::function<Tensor(const std::vector<Tensor>&)>& f, const std::vector<Tensor>& in) {
  autograd::GradcheckResult r = autograd::gradgradcheck(f, in);
  INFO(r.message);
  CHECK(r.ok);
}
}  // namespace

TEST_CASE("create_graph gives the second derivative of x^3 and of sin") {
  Device dev = device_under_test();
  Tensor x = leaf({0.5, -1.5, 2.0}, {3}, dev);
  Tensor y = sum(mul(mul(x, x), x));
  Tensor g = autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
  CHECK(g.requires_grad());
  std::vector<double> gv = g.to_vector<double>();
  CHECK(gv[0] == Approx(0.75));  // 3 x^2
  CHECK(gv[2] == Approx(12.0));
  Tensor h = autograd::grad({sum(g)}, {x})[0];  // 6 x
  std::vector<double> hv = h.to_vector<double>();
  CHECK(hv[0] == Approx(3.0));
  CHECK(hv[1] == Approx(-9.0));
  CHECK(hv[2] == Approx(12.0));

  Tensor s = leaf({0.3, 1.1}, {2}, dev);
  Tensor ds = autograd::grad({sum(sin(s))}, {s}, {}, true, true)[0];  // cos
  Tensor dds = autograd::grad({sum(ds)}, {s})[0];                       // -sin
  CHECK(dds.to_vector<double>()[0] == Approx(-std::sin(0.3)));
  CHECK(dds.to_vector<double>()[1] == Approx(-std::sin(1.1)));
}

TEST_CASE("backward(create_graph) leaves a differentiable .grad") {
  Device dev = device_under_test();
  Tensor x = leaf({1.0, 2.0}, {2}, dev);
  sum(exp(x)).backward(Tensor(), std::nullopt, /*create_graph=*/true);
  Tensor g = x.grad();  // exp(x), with a graph
  REQUIRE(g.requires_grad());
  Tensor x2 = leaf({1.0, 2.0}, {2}, dev);
  Tensor g2 = autograd::grad({sum(exp(x2))}, {x2}, {}, true, true)[0];
  Tensor gg = autograd::grad({sum(mul(g2, g2))}, {x2})[0];  // d sum(e^{2x}) = 2 e^{2x}
  CHECK(gg.to_vector<double>()[1] == Approx(2 * std::exp(4.0)));
  x.mutable_grad() = Tensor();  // a .grad with a graph refers back to x (docs/autograd.md): drop it
}

TEST_CASE("gradgradcheck passes for the op families with double backward") {
  Device dev = device_under_test();
  Tensor a = random_leaf({3, 4}, dev, 1), b = random_leaf({4, 2}, dev, 2), p = random_leaf({3, 4}, dev, 3, 0.5, 2.0);
  SECTION("unary and binary tables") {
    Tensor c = random_leaf({3, 4}, dev, 4);
    require_gradgrad([](const std::vector<Tensor>& in) { return tanh(mul(in[0], in[1])); }, {a, c});
    require_gradgrad([](const std::vector<Tensor>& in) { return div(log(in[0]), add(in[1], 3.0)); }, {p, a});
    require_gradgrad([](const std::vector<Tensor>& in) { return pow(in[0], 2.5); }, {p});
    require_gradgrad([](const std::vector<Tensor>& in) { return sigmoid(in[0]) * gelu(in[0]); }, {a});
    require_gradgrad([](const std::vector<Tensor>& in) { return atan2(in[0], in[1]); }, {a, p});
  }
  SECTION("matmul, reductions, softmax, views and indexing") {
    require_gradgrad([](const std::vector<Tensor>& in) { return matmul(tanh(in[0]), in[1]); }, {a, b});
    require_gradgrad([](const std::vector<Tensor>& in) { return mul(sum(mul(in[0], in[0]), {1}), mean(in[0])); }, {a});
    require_gradgrad([](const std::vector<Tensor>& in) { return prod(in[0], 1); }, {p});
    require_gradgrad([](const std::vector<Tensor>& in) { return softmax(mul(in[0], 2.0), 1); }, {a});
    require_gradgrad([](const std::vector<Tensor>& in) { return log_softmax(in[0], 0); }, {a});
    require_gradgrad(
        [](const std::vector<Tensor>& in) {
          Tensor t = mul(in[0], in[0]);
          Tensor row = t.select(0, 2).unsqueeze(0).expand({2, 4}).transpose(0, 1);
          return cat({t.narrow(1, 1, 2).reshape({-1}), row.reshape({-1}),
                      t.slice(1, 0, 4, 2).reshape({2, 3}).permute({1, 0}).reshape({-1})},
                     0);
        },
        {a});
    Tensor idx = from_vector<int64_t>({2, 0, 2}, {3}).to(dev);
    require_gradgrad([idx](const std::vector<Tensor>& in) { return exp(index_select(in[0], 1, idx)); }, {a});
    Tensor gi = from_vector<int64_t>({0, 3, 1, 1, 2, 0}, {3, 2}).to(dev);
    require_gradgrad([gi](const std::vector<Tensor>& in) { Tensor t = gather(in[0], 1, gi);
      return mul(t, t); }, {a});
    require_gradgrad([](const std::vector<Tensor>& in) { return cumsum(mul(in[0], in[0]), 1); }, {a});
    require_gradgrad([](const std::vector<Tensor>& in) { return where(gt(in[0], 0.0), in[0] * in[0], exp(in[0])); },
                     {a});
  }
}

TEST_CASE("a gradient penalty and a Hessian-vector product train as in PyTorch") {
  Device dev = device_under_test();
  // WGAN-GP's penalty (|d critic / d x| - 1)^2 for a small MLP critic; its
  // gradient with respect to the weights by backward, checked against
  // finite differences of the penalty itself.
  Tensor x = random_leaf({5, 3}, dev, 7);
  Tensor w1 = random_leaf({3, 4}, dev, 8), w2 = random_leaf({4, 1}, dev, 9);
  auto penalty = [&](const std::vector<Tensor>& w) {
    Tensor h = leaky_relu(matmul(x, w[0]), 0.2);
    Tensor critic = matmul(tanh(h), w[1]);
    Tensor gx = autograd::grad({sum(critic)}, {x}, {}, true, /*create_graph=*/true)[0];
    Tensor norm = sqrt(add(sum(mul(gx, gx), {1}), 1e-12));
    Tensor off = sub(norm, 1.0);
    return mean(mul(off, off)).reshape({1});
  };
  autograd::GradcheckResult r = autograd::gradcheck(penalty, {w1, w2});
  INFO(r.message);
  CHECK(r.ok);

  // Hessian-vector product of f(w) = sum(softplus-like log(1 + exp(Aw))):
  // H v by double backward against finite differences of the gradient.
  Tensor A = random_leaf({6, 3}, dev, 10).detach();
  Tensor w = random_leaf({3}, dev, 11), v = from_vector<double>({0.3, -0.2, 0.5}, {3}).to(dev);
  auto gradient_at = [&](const Tensor& wt) {
    Tensor f = sum(log1p(exp(matmul(A, wt))));
    return autograd::grad({f}, {wt}, {}, true, true)[0];
  };
  Tensor hv = autograd::grad({sum(mul(gradient_at(w), v))}, {w})[0];
  const double eps = 1e-6;
  Tensor wp = add(w.detach(), mul(v, eps)).requires_grad_(), wm = sub(w.detach(), mul(v, eps)).requires_grad_();
  std::vector<double> fd = div(sub(gradient_at(wp), gradient_at(wm)), 2 * eps).to_vector<double>();
  std::vector<double> got = hv.to_vector<double>();
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(fd[i]).epsilon(1e-5).margin(1e-8));
}

TEST_CASE("a second backward through a once-differentiable op throws, naming it") {
  Device dev = device_under_test();
  Tensor x = random_leaf({2, 3, 4}, dev, 12);
  Tensor w = random_leaf({4}, dev, 13), b = random_leaf({4}, dev, 14);
  Tensor y = sum(mul(std::get<0>(layer_norm(x, {4}, w, b)), x));
  Tensor g = autograd::grad({y}, {x}, {}, true, /*create_graph=*/true)[0];
  REQUIRE(g.requires_grad());
  CHECK_THROWS_AS(autograd::grad({sum(g)}, {w}, {}, /*retain_graph=*/true), Unsupported);
  try {
    autograd::grad({sum(g)}, {w});
  } catch (const Unsupported& e) {
    CHECK(std::string(e.what()).find("layer_norm") != std::string::npos);
  }
  // Without create_graph, nothing changes: first derivatives as before.
  Tensor x2 = x.detach().requires_grad_();
  sum(std::get<0>(layer_norm(x2, {4}, w, b))).backward();
  CHECK(x2.grad().defined());
}

TEST_CASE("autograd::grad's allow_unused and autograd::backward over several roots") {
  Device dev = device_under_test();
  Tensor x = leaf({1.0, 2.0}, {2}, dev), unused = leaf({3.0}, {1}, dev);
  Tensor y = sum(mul(x, x));
  CHECK_THROWS_AS(autograd::grad({y}, {x, unused}, {}, true), ValueError);
  std::vector<Tensor> g = autograd::grad({y}, {x, unused}, {}, true, false, /*allow_unused=*/true);
  CHECK(g[0].to_vector<double>() == std::vector<double>{2.0, 4.0});
  CHECK_FALSE(g[1].defined());
  autograd::backward({y, sum(x)});
  CHECK(x.grad().to_vector<double>() == std::vector<double>{3.0, 5.0});
  Tensor d = mul(x, 2.0);
  d.detach_();
  CHECK_FALSE(d.requires_grad());
  CHECK(d.is_leaf());
}
