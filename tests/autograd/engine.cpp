// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The autograd engine itself: leaves, accumulation, retain_graph, hooks,
// no_grad, version counters, autograd::grad — on the device under test.
#include <catch2/catch.hpp>

#include <cmath>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;

namespace {
// y = (x [1, n] @ w [n, 1]) as a one-element tensor.
Tensor flat_dot(const Tensor& x, const Tensor& w) { return matmul(x.reshape({1, -1}), w.reshape({-1, 1})).view({}); }
}  // namespace

TEST_CASE("gradients of a product through views, accumulated until cleared") {
  Device dev = device_under_test();
  Tensor x = from_vector<float>({1, 2, 3, 4}, {4}).to(dev).requires_grad_();
  Tensor w = from_vector<float>({5, 6, 7, 8}, {2, 2}).to(dev).requires_grad_();
  CHECK(x.is_leaf());
  Tensor y = flat_dot(x, w.transpose(0, 1));  // w^T flattened: 5, 7, 6, 8
  CHECK(y.requires_grad());
  CHECK_FALSE(y.is_leaf());
  CHECK(y.grad_fn_name() == "ViewBackward");
  y.backward();
  CHECK(x.grad().to_vector<float>() == std::vector<float>{5, 7, 6, 8});
  CHECK(w.grad().to_vector<float>() == std::vector<float>{1, 3, 2, 4});  // d/dw of sum x_k w^T_k
  CHECK(x.grad().device() == dev);
  flat_dot(x, w.transpose(0, 1)).backward();  // accumulates
  CHECK(x.grad().to_vector<float>() == std::vector<float>{10, 14, 12, 16});
  x.set_grad(Tensor());
  CHECK_FALSE(x.grad().defined());
}

TEST_CASE("retain_graph, second backward, and non-scalar roots") {
  Device dev = device_under_test();
  Tensor x = from_vector<float>({1, 2}, {2}).to(dev).requires_grad_();
  Tensor w = from_vector<float>({3, 4}, {2}).to(dev);
  Tensor y = flat_dot(x, w);
  y.backward(Tensor(), /*retain_graph=*/true);
  y.backward();
  CHECK(x.grad().to_vector<float>() == std::vector<float>{6, 8});
  CHECK_THROWS_AS(y.backward(), ValueError);  // graph freed
  Tensor m = matmul(x.view({2, 1}), w.view({1, 2}));  // [2, 2]
  CHECK_THROWS_AS(m.backward(), ValueError);          // needs a gradient
  x.set_grad(Tensor());
  m.backward(ones({2, 2}, dev));
  CHECK(x.grad().to_vector<float>() == std::vector<float>{7, 7});
  CHECK_THROWS_AS(m.backward(ones({3}, dev)), ShapeError);
}

TEST_CASE("no_grad, detach and requires_grad rules") {
  Device dev = device_under_test();
  Tensor x = ones({3}, dev).requires_grad_();
  {
    autograd::NoGradGuard guard;
    CHECK_FALSE(flat_dot(x, x.detach()).requires_grad());
  }
  CHECK(autograd::grad_enabled());
  CHECK_FALSE(x.detach().requires_grad());
  CHECK(x.detach().raw_data() == x.raw_data());
  CHECK_THROWS_AS(flat_dot(x, x).requires_grad_(false), ValueError);  // not a leaf
  CHECK_THROWS_AS(ones({2}, TensorOptions(dev).with(kInt64)).requires_grad_(), DTypeError);
  CHECK_THROWS_AS(x.fill_(2.0), ValueError);  // in-place on a leaf that requires grad
  {
    autograd::NoGradGuard guard;
    x.fill_(2.0);  // fine: what optimizers do
  }
  CHECK_THROWS_AS(ones({1}, dev).backward(), ValueError);  // no graph
}

TEST_CASE("a tensor saved for backward and then modified in place is caught") {
  Device dev = device_under_test();
  Tensor w = ones({4}, dev).requires_grad_();
  Tensor x = arange(0.0, 4, 1, dev).clone();
  Tensor y = flat_dot(x, w);  // saves x
  x.fill_(7.0);
  try {
    y.backward();
    FAIL("no throw");
  } catch (const ValueError& e) {
    CHECK(std::string(e.what()).find("modified by an in-place operation") != std::string::npos);
  }
}

TEST_CASE("hooks, retain_grad and autograd::grad") {
  Device dev = device_under_test();
  Tensor x = from_vector<float>({1, 2}, {2}).to(dev).requires_grad_();
  Tensor w = from_vector<float>({3, 4}, {2}).to(dev).requires_grad_();
  Tensor mid = x.clone();
  mid.retain_grad();
  int calls = 0;
  x.register_hook([&](const Tensor& g) {
    ++calls;
    return matmul(g.view({2, 1}), full({1, 1}, 10.0, dev)).view({2});  // scale by 10
  });
  flat_dot(mid, w).backward();
  CHECK(calls == 1);
  CHECK(mid.grad().to_vector<float>() == std::vector<float>{3, 4});
  CHECK(x.grad().to_vector<float>() == std::vector<float>{30, 40});
  Tensor y = flat_dot(x, w);
  std::vector<Tensor> g = autograd::grad({y}, {w});
  CHECK(g[0].to_vector<float>() == std::vector<float>{1, 2});
  CHECK(w.grad().to_vector<float>() == std::vector<float>{1, 2});  // from the first backward only
}

TEST_CASE("gradients flow across devices and dtypes") {
  Device dev = device_under_test();
  Tensor x = from_vector<double>({1, 2, 3}, {3}).requires_grad_();  // on cpu
  Tensor w = from_vector<float>({4, 5, 6}, {3}).to(dev);
  Tensor y = flat_dot(x.to(dev, kFloat32), w);
  y.backward();
  CHECK(x.grad().device() == Device("cpu"));
  CHECK(x.grad().dtype() == kFloat64);
  CHECK(x.grad().to_vector<double>() == std::vector<double>{4, 5, 6});
}

TEST_CASE("gradcheck agrees on a matmul chain and catches a wrong gradient") {
  Device dev = device_under_test();
  Tensor a = randn({3, 4}, TensorOptions(dev).with(kFloat64)).requires_grad_();
  Tensor b = randn({4, 2}, TensorOptions(dev).with(kFloat64)).requires_grad_();
  auto f = [](const std::vector<Tensor>& in) { return matmul(in[0].transpose(0, 1).contiguous().transpose(0, 1), in[1]); };
  auto r = autograd::gradcheck(f, {a, b});
  INFO(r.message);
  CHECK(r.ok);
  CHECK(r.max_abs_error < 1e-6);
}

TEST_CASE("requires_grad in TensorOptions, and anomaly mode names the op") {
  Device dev = device_under_test();
  Tensor z = zeros({3}, TensorOptions(dev).with_requires_grad());
  CHECK(z.requires_grad());
  CHECK(z.is_leaf());
  CHECK(randn({2}, TensorOptions(dev).with_requires_grad()).requires_grad());
  CHECK(arange(0.0, 3, 1, TensorOptions(dev).with_requires_grad()).requires_grad());
  Tensor x = from_vector<float>({0.0f, 1.0f}, {2}).to(dev).requires_grad_();
  {
    autograd::DetectAnomalyGuard anomaly;
    Tensor y = sum(sqrt(x));  // d sqrt / dx at 0 is inf
    try {
      y.backward();
      FAIL("no throw");
    } catch (const ValueError& e) {
      CHECK(std::string(e.what()).find("anomaly mode: the backward of sqrt") != std::string::npos);
    }
  }
  x.set_grad(Tensor());
  sum(sqrt(x)).backward();  // without anomaly mode: inf lands in the gradient
  CHECK(std::isinf(x.grad().to_vector<float>()[0]));
}

// PyTorch's rule: only a node whose saved tensors were freed refuses a
// second pass. A cast saves nothing, and autocast's cached cast of a weight
// is shared by the graphs of several micro-batches (a pipeline stage under
// autocast backs each one up through it).
TEST_CASE("a node that saved nothing can be gone through by a second graph") {
  Device dev = device_under_test();
  Tensor w = from_vector<float>({1, 2}, {2}).to(dev).requires_grad_();
  Tensor wc = w.to(kFloat64);  // shared by both graphs
  Tensor a = mul(wc, 2.0).sum(), b = mul(wc, 3.0).sum();
  a.backward();
  b.backward();
  CHECK(w.grad().to_vector<float>() == std::vector<float>{5, 5});
  CHECK_THROWS_AS(a.backward(), ValueError);  // mul saved its operand: freed
}
