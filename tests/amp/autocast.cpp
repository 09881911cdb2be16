// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Autocast on the device under test: the dtype each listed op returns, the
// nesting / enabled / thread-local rules, the weight-cast cache, gradients
// through the casts and the typed errors.
#include <catch2/catch.hpp>
#include <thread>

#include "support/device_under_test.hpp"

using namespace vnn;
using vnn::test::device_under_test;
using vnn::test::lcg_values;
using vnn::test::max_abs_diff;

namespace {

Tensor input(const Shape& shape, uint32_t salt, const Device& dev, double lo = -1, double hi = 1) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return from_vector(lcg_values(size_t(n), 14, salt, lo, hi), shape).to(dev).to(kFloat32);
}

}  // namespace

TEST_CASE("autocast: matmul, mm, linear and conv2d run in the autocast dtype") {
  Device dev = device_under_test();
  Tensor a = input({4, 8}, 1, dev), b = input({8, 3}, 2, dev);
  for (DType low : {kBFloat16, kFloat16}) {
    INFO(name(low));
    AutocastGuard guard(dev, low);
    CHECK(matmul(a, b).dtype() == low);
    CHECK(mm(a, b).dtype() == low);
    CHECK(matmul(input({2, 4, 8}, 3, dev), input({2, 8, 5}, 4, dev)).dtype() == low);  // batched (bmm)
    nn::Linear lin(8, 3);
    lin->to(dev);
    CHECK(lin(a).dtype() == low);
    Tensor x = input({1, 2, 5, 5}, 5, dev), w = input({3, 2, 3, 3}, 6, dev), bias = input({3}, 7, dev);
    CHECK(conv2d(x, w, bias, 1, 1).dtype() == low);
  }
  // Outside the scope nothing changes.
  CHECK(matmul(a, b).dtype() == kFloat32);
}

TEST_CASE("autocast: softmax, losses, norms, reductions and exp/log/pow run in float32") {
  Device dev = device_under_test();
  AutocastGuard guard(dev, kBFloat16);
  Tensor h = input({4, 6}, 8, dev).to(kBFloat16);  // a lowered op's output
  Tensor pos = input({4, 6}, 9, dev, 0.1, 0.9).to(kBFloat16);
  Tensor target = from_vector(std::vector<int64_t>{0, 5, 2, 3}, Shape{4}).to(dev);
  CHECK(softmax(h, 1).dtype() == kFloat32);
  CHECK(log_softmax(h, 1).dtype() == kFloat32);
  CHECK(nn::cross_entropy(h, target).dtype() == kFloat32);
  CHECK(nn::nll_loss(log_softmax(h, 1).to(kBFloat16), target).dtype() == kFloat32);
  CHECK(nn::mse_loss(h, pos).dtype() == kFloat32);
  CHECK(nn::l1_loss(h, pos).dtype() == kFloat32);
  CHECK(nn::smooth_l1_loss(h, pos).dtype() == kFloat32);
  CHECK(nn::binary_cross_entropy(pos, pos).dtype() == kFloat32);
  CHECK(nn::binary_cross_entropy_with_logits(h, pos).dtype() == kFloat32);
  CHECK(sum(h).dtype() == kFloat32);
  CHECK(sum(h, 1).dtype() == kFloat32);
  CHECK(mean(h).dtype() == kFloat32);
  CHECK(mean(h, {0, 1}).dtype() == kFloat32);
  CHECK(var(h, 1).dtype() == kFloat32);
  CHECK(exp(h).dtype() == kFloat32);
  CHECK(log(pos).dtype() == kFloat32);
  CHECK(pow(h, 2.0).dtype() == kFloat32);
  Tensor x = input({2, 3, 4, 4}, 10, dev).to(kBFloat16);
  CHECK(std::get<0>(layer_norm(x, {4, 4}, Tensor(), Tensor(), 1e-5)).dtype() == kFloat32);
  CHECK(std::get<0>(group_norm(x, 3, Tensor(), Tensor(), 1e-5)).dtype() == kFloat32);
  Tensor rm = zeros({3}, TensorOptions(dev)), rv = ones({3}, TensorOptions(dev));
  CHECK(std::get<0>(batch_norm(x, Tensor(), Tensor(), rm, rv, true, 0.1, 1e-5)).dtype() == kFloat32);
  // The running statistics were updated in place, not in a cast copy.
  CHECK(max_abs_diff(rm, zeros({3})) > 0);
  // Binary ops on mixed inputs promote to the widest.
  CHECK(add(h, input({4, 6}, 11, dev)).dtype() == kFloat32);
  CHECK(mul(input({4, 6}, 12, dev), h).dtype() == kFloat32);
  // float64 is never lowered.
  Tensor d = input({4, 8}, 13, dev).to(kFloat64);
  CHECK(matmul(d, d.transpose(0, 1)).dtype() == kFloat64);
}

TEST_CASE("autocast: nesting, enabled = false, per backend and per thread") {
  Device dev = device_under_test();
  Tensor a = input({3, 3}, 14, dev);
  CHECK_FALSE(autocast::is_enabled(dev));
  {
    AutocastGuard outer(dev, kBFloat16);
    CHECK(autocast::is_enabled(dev));
    CHECK(autocast::get_dtype(dev) == kBFloat16);
    {
      AutocastGuard inner(dev, kFloat16);
      CHECK(matmul(a, a).dtype() == kFloat16);
      {
        AutocastGuard off(dev, kBFloat16, false);
        CHECK_FALSE(autocast::is_enabled(dev));
        CHECK(matmul(a, a).dtype() == kFloat32);
      }
      CHECK(matmul(a, a).dtype() == kFloat16);
    }
    CHECK(matmul(a, a).dtype() == kBFloat16);
    // Another thread has its own (off) state.
    DType other = kFloat64;
    std::thread t([&] { other = matmul(a, a).dtype(); });
    t.join();
    CHECK(other == kFloat32);
    // A scope for another backend leaves this one's ops alone.
    if (!dev.is_cpu()) {
      AutocastGuard cpu_only(Device("cpu"), kFloat16);
      CHECK(matmul(a, a).dtype() == kBFloat16);
    }
  }
  CHECK_FALSE(autocast::is_enabled(dev));
  CHECK(matmul(a, a).dtype() == kFloat32);
}

TEST_CASE("autocast: each weight is cast once per scope, and again after an in-place change") {
  Device dev = device_under_test();
  nn::Linear lin(6, 4);
  lin->to(dev);
  Tensor x = input({2, 6}, 15, dev);
  {
    AutocastGuard guard(dev, kBFloat16);
    Tensor y1 = lin(x), y2 = lin(x);
    CHECK(autocast::cache_size() == 2);  // weight and bias, once each
    CHECK(max_abs_diff(y1, y2) == 0);
    {
      autograd::NoGradGuard no_grad;
      lin->weight.mul_(2.0);
    }
    Tensor y3 = lin(x);
    CHECK(autocast::cache_size() == 2);  // the stale cast was replaced
    CHECK(max_abs_diff(y3, y1) > 0);
    // Inputs that are not leaves requiring grad are never cached.
    matmul(x, x.transpose(0, 1));
    CHECK(autocast::cache_size() == 2);
  }
  CHECK(autocast::cache_size() == 0);  // the outermost scope's end clears it
}

TEST_CASE("autocast: gradients flow through the casts in the parameters' dtype") {
  Device dev = device_under_test();
  nn::Linear lin(5, 3);
  lin->to(dev);
  Tensor x = input({4, 5}, 16, dev);
  Tensor target = from_vector(std::vector<int64_t>{0, 2, 1, 2}, Shape{4}).to(dev);
  // Reference: float32 throughout.
  nn::cross_entropy(lin(x), target).backward();
  Tensor gw = lin->weight.grad().clone(), gb = lin->bias.grad().clone();
  lin->zero_grad();
  Tensor loss;
  {
    AutocastGuard guard(dev, kBFloat16);
    Tensor logits = lin(x);
    CHECK(logits.dtype() == kBFloat16);
    loss = nn::cross_entropy(logits, target);
    CHECK(loss.dtype() == kFloat32);
  }
  loss.backward();
  REQUIRE(lin->weight.grad().defined());
  CHECK(lin->weight.grad().dtype() == kFloat32);
  CHECK(lin->bias.grad().dtype() == kFloat32);
  // bf16 keeps 8 bits of mantissa: agreement to a few parts in 100.
  CHECK(max_abs_diff(lin->weight.grad(), gw) < 0.03);
  CHECK(max_abs_diff(lin->bias.grad(), gb) < 0.03);
}

TEST_CASE("autocast: gradcheck of the cast op in float64 master math") {
  Device dev = device_under_test();
  Tensor w = input({3, 2}, 17, dev).to(kFloat64).requires_grad_();
  Tensor x = input({4, 3}, 18, dev).to(kFloat64).requires_grad_();
  // A float64 -> float32 -> float64 round trip around the matmul: the cast
  // op's backward casts the gradient back. eps is large against float32's
  // rounding, so the finite differences see the function, not the rounding.
  auto f = [](const std::vector<Tensor>& in) {
    return matmul(in[0].to(kFloat32), in[1].to(kFloat32)).to(kFloat64);
  };
  auto r = autograd::gradcheck(f, {x, w}, 1e-2, 1e-3, 1e-2);
  INFO(r.message);
  CHECK(r.ok);
}

TEST_CASE("autocast: unsupported dtypes throw ValueError naming the dtype") {
  Device dev = device_under_test();
  for (DType bad : {kFloat64, kFloat32, kInt32, kUInt8, kInt64}) {
    INFO(name(bad));
    try {
      AutocastGuard guard(dev, bad);
      FAIL("no throw");
    } catch (const ValueError& e) {
      CHECK(std::string(e.what()).find(name(bad)) != std::string::npos);
      CHECK(std::string(e.what()).find("bfloat16") != std::string::npos);
    }
  }
  // A failed guard leaves the state as it was.
  CHECK_FALSE(autocast::is_enabled(dev));
  // enabled = false takes any dtype (nothing is lowered).
  AutocastGuard off(dev, kFloat64, false);
  CHECK_FALSE(autocast::is_enabled(dev));
}
