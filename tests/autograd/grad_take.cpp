// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Leaf gradients taken without a copy (engine.cpp, can_take) must still
// never alias another tensor, and a Linear weight's gradient arrives in the
// weight's own contiguous layout (linalg.cpp, product_like).
#include <catch2/catch.hpp>

#include "support/device_under_test.hpp"
#include "vnn/vnn.h"

using namespace vnn;
using vnn::test::device_under_test;

TEST_CASE("one gradient reaching two leaves gives each its own .grad") {
  Device dev = device_under_test();
  Tensor a = ones({4}, TensorOptions(dev)).requires_grad_(), b = ones({4}, TensorOptions(dev)).requires_grad_();
  sum(add(a, b)).backward();  // add's backward hands the same gradient to both
  REQUIRE(a.grad().defined());
  REQUIRE(b.grad().defined());
  {
    autograd::NoGradGuard ng;
    Tensor ga = a.grad();
    ga.mul_(5.0);
  }
  CHECK(a.grad().cpu().to_vector<float>() == std::vector<float>(4, 5.f));
  CHECK(b.grad().cpu().to_vector<float>() == std::vector<float>(4, 1.f));
}

TEST_CASE("a gradient the caller still holds is copied into .grad") {
  Device dev = device_under_test();
  Tensor x = ones({3}, TensorOptions(dev)).requires_grad_();
  Tensor g = full({3}, 2.0, TensorOptions(dev));
  x.backward(g);
  {
    autograd::NoGradGuard ng;
    g.fill_(7.0);
  }
  CHECK(x.grad().cpu().to_vector<float>() == std::vector<float>(3, 2.f));
}

TEST_CASE("Linear weight and bias gradients are contiguous and match the formulas") {
  Device dev = device_under_test();
  manual_seed(3);
  nn::Linear fc(5, 3);
  fc->to(dev);
  Tensor x = randn({4, 5}).to(dev);
  Tensor y = fc(x);
  sum(mul(y, y)).backward();
  Tensor gw = fc->weight.grad(), gb = fc->bias.grad();
  REQUIRE(gw.sizes() == fc->weight.sizes());
  CHECK(gw.is_contiguous());
  CHECK(gb.is_contiguous());
  std::vector<float> ww, wb;
  {
    autograd::NoGradGuard ng;
    Tensor dy = mul(y, 2.0);  // d sum(y^2) / dy
    ww = matmul(dy.transpose(0, 1), x).cpu().contiguous().to_vector<float>();
    wb = sum(dy, 0).cpu().to_vector<float>();
  }
  auto w = gw.cpu().to_vector<float>(), bb = gb.cpu().to_vector<float>();
  REQUIRE(w.size() == ww.size());
  for (size_t i = 0; i < w.size(); ++i) CHECK(w[i] == Approx(ww[i]).epsilon(1e-5).margin(1e-6));
  for (size_t i = 0; i < bb.size(); ++i) CHECK(bb[i] == Approx(wb[i]).epsilon(1e-5).margin(1e-6));
  // A second backward accumulates into the gradient taken the first time.
  Tensor y2 = fc(x);
  sum(mul(y2, y2)).backward();
  auto w2 = fc->weight.grad().cpu().to_vector<float>();
  for (size_t i = 0; i < w2.size(); ++i) CHECK(w2[i] == Approx(2 * ww[i]).epsilon(1e-5).margin(1e-6));
}
