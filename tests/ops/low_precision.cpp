// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Low-precision sweep (issue 14): every floating op, layer and loss in
// float16 and bfloat16 against the same op in float32 on the same device,
// on inputs that both dtypes hold exactly (float32 copies of the rounded
// 16-bit values), so the difference is the 16-bit arithmetic alone. Also:
// the result dtypes follow PyTorch's promotion (docs/dtypes.md), the
// backward formulas in 16 bits match float32's gradients, and a bfloat16
// model (Module::to(kBFloat16)) trains end to end with plain SGD.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"
#include "vnn/nn.h"

using namespace vnn;
using vnn::test::device_under_test;

namespace {

const DType kLow[] = {kFloat16, kBFloat16};

// The tolerances, in one place: |low - f32| <= tol * (1 + max|f32|).
// About 5 units in the last place of the 16-bit result (2^-8 / 2^-11
// relative), which covers the one rounding of a fused op and the few
// roundings of composed ones (a loss is a handful of elementwise ops and a
// reduction). On cpu the worst case uses 0.75 of it (float16 batch_norm
// weight gradient), the median case 0.1.
double tolerance(DType t) { return t == kBFloat16 ? 2e-2 : 2.5e-3; }

double max_abs(const Tensor& t) { return amax(abs(t.to(kFloat64))).item(); }

void check_close(const Tensor& low, const Tensor& ref, DType t, const std::string& what) {
  INFO(what << " in " << name(t));
  REQUIRE(low.sizes() == ref.sizes());
  double err = vnn::test::max_abs_diff(low.to(kFloat32), ref);
  double bound = tolerance(t) * (1.0 + max_abs(ref));
  INFO("max |low - float32| = " << err << ", bound " << bound);
  CHECK(err <= bound);
}

// n deterministic values in [lo, hi) as a float32 tensor of `shape`.
Tensor input(const Shape& shape, uint32_t salt, double lo = -2.0, double hi = 2.0) {
  auto v = vnn::test::lcg_values(size_t(shape.numel()), 14, salt, lo, hi);
  return from_vector(v, shape).to(kFloat32);
}

struct Case {
  std::string name;
  std::vector<Tensor> inputs;  // float32 values; each is rounded to the low dtype first
  std::function<Tensor(const std::vector<Tensor>&)> fn;
  bool differentiable = true;  // gradcheck against float32 too
};

Tensor labels(int64_t n, int64_t classes) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = (i * 7 + 3) % classes;
  return from_vector(v, {n});
}

std::vector<Case> cases() {
  using V = const std::vector<Tensor>&;
  Tensor a = input({6, 33}, 1), b = input({6, 33}, 2), p = input({6, 33}, 3, 0.25, 3.0);
  Tensor img = input({2, 4, 9, 9}, 4), w = input({6, 4, 3, 3}, 5, -0.5, 0.5), bias = input({6}, 6);
  Tensor gw = input({6, 2, 3, 3}, 7, -0.5, 0.5);
  Tensor ch = input({4}, 8, 0.5, 1.5), chb = input({4}, 9);
  Tensor m1 = input({2, 7, 40}, 10, -1.0, 1.0), m2 = input({2, 40, 5}, 11, -1.0, 1.0);
  Tensor prob = input({6, 33}, 12, 0.05, 0.95), target01 = input({6, 33}, 13, 0.0, 1.0);
  Tensor table = input({10, 8}, 15);
  std::vector<Case> c = {
      // elementwise: 16-bit operands stay 16-bit
      {"add", {a, b}, [](V x) { return add(x[0], x[1]); }},
      {"sub_alpha", {a, b}, [](V x) { return sub(x[0], x[1], 0.5); }},
      {"mul", {a, b}, [](V x) { return mul(x[0], x[1]); }},
      {"div", {a, p}, [](V x) { return div(x[0], x[1]); }},
      {"mul_scalar", {a}, [](V x) { return mul(x[0], 0.1); }},
      {"add_broadcast", {a, b}, [](V x) { return add(x[0], x[1].narrow(0, 0, 1)); }},
      {"maximum", {a, b}, [](V x) { return maximum(x[0], x[1]); }},
      {"pow", {p}, [](V x) { return pow(x[0], 1.5); }},
      {"exp", {a}, [](V x) { return exp(x[0]); }},
      {"log", {p}, [](V x) { return log(x[0]); }},
      {"sqrt", {p}, [](V x) { return sqrt(x[0]); }},
      {"tanh", {a}, [](V x) { return tanh(x[0]); }},
      {"sigmoid", {a}, [](V x) { return sigmoid(x[0]); }},
      {"relu", {a}, [](V x) { return relu(x[0]); }},
      {"gelu", {a}, [](V x) { return gelu(x[0]); }},
      {"silu", {a}, [](V x) { return silu(x[0]); }},
      {"leaky_relu", {a}, [](V x) { return leaky_relu(x[0], 0.1); }},
      {"clamp", {a}, [](V x) { return clamp(x[0], -1.0, 1.0); }},
      {"where", {a, b}, [](V x) { return where(gt(x[0], 0.0), x[0], x[1]); }},
      // reductions (float32 accumulation)
      {"sum", {a}, [](V x) { return sum(x[0]); }},
      {"sum_dim", {a}, [](V x) { return sum(x[0], 1); }},
      {"mean_dim", {a}, [](V x) { return mean(x[0], 0, true); }},
      {"var", {a}, [](V x) { return var(x[0], 1); }},
      {"amax", {a}, [](V x) { return amax(x[0], {1}); }},
      {"logsumexp", {a}, [](V x) { return logsumexp(x[0], 1); }},
      {"norm", {a}, [](V x) { return norm(x[0]); }},
      // matmul and the layers built on it
      {"matmul", {m1, m2}, [](V x) { return matmul(x[0], x[1]); }},
      {"linear", {a, input({5, 33}, 16, -0.3, 0.3), input({5}, 17)},
       [](V x) { return add(matmul(x[0], x[1].transpose(0, 1)), x[2]); }},
      {"conv2d", {img, w, bias}, [](V x) { return conv2d(x[0], x[1], x[2], 1, 1); }},
      {"conv2d_strided_groups", {img, gw}, [](V x) { return conv2d(x[0], x[1], Tensor(), 2, 0, 1, 2); }},
      // pooling
      {"max_pool2d", {img}, [](V x) { return max_pool2d(x[0], 2); }},
      {"max_pool2d_pad", {img}, [](V x) { return max_pool2d(x[0], 3, 2, 1); }},
      {"avg_pool2d", {img}, [](V x) { return avg_pool2d(x[0], 3, 2, 1); }},
      {"adaptive_avg_pool2d", {img}, [](V x) { return adaptive_avg_pool2d(x[0], {4, 3}); }},
      {"adaptive_max_pool2d", {img}, [](V x) { return std::get<0>(adaptive_max_pool2d(x[0], {2, 2})); }},
      // norms (float32 statistics)
      {"batch_norm", {img, ch, chb},
       [](V x) { return std::get<0>(batch_norm(x[0], x[1], x[2], Tensor(), Tensor(), true, 0.1, 1e-5)); }},
      {"layer_norm", {img, input({9, 9}, 18, 0.5, 1.5), input({9, 9}, 19)},
       [](V x) { return std::get<0>(layer_norm(x[0], {9, 9}, x[1], x[2], 1e-5)); }},
      {"group_norm", {img, ch, chb}, [](V x) { return std::get<0>(group_norm(x[0], 2, x[1], x[2], 1e-5)); }},
      // softmax
      {"softmax", {a}, [](V x) { return softmax(x[0], 1); }},
      {"log_softmax", {a}, [](V x) { return log_softmax(x[0], 0); }},
      // embedding: a gather of rows (exact) and an index_add backward
      {"embedding", {table}, [](V x) {
         return index_select(x[0], 0, from_vector<int64_t>({3, 1, 3, 9, 0}, {5}).to(x[0].device()));
       }},
      // losses
      {"cross_entropy", {a}, [](V x) { return nn::cross_entropy(x[0], labels(6, 33).to(x[0].device())); }},
      {"cross_entropy_smooth", {a}, [](V x) {
         return nn::cross_entropy(x[0], labels(6, 33).to(x[0].device()), nn::CrossEntropyLossOptions().label_smoothing(0.1));
       }},
      {"nll_loss", {a}, [](V x) { return nn::nll_loss(log_softmax(x[0], 1), labels(6, 33).to(x[0].device())); }},
      {"mse_loss", {a, b}, [](V x) { return nn::mse_loss(x[0], x[1]); }},
      {"l1_loss", {a, b}, [](V x) { return nn::l1_loss(x[0], x[1]); }},
      {"smooth_l1_loss", {a, b}, [](V x) { return nn::smooth_l1_loss(x[0], x[1]); }},
      {"binary_cross_entropy", {prob, target01}, [](V x) { return nn::binary_cross_entropy(x[0], x[1]); }},
      {"bce_with_logits", {a, target01}, [](V x) { return nn::binary_cross_entropy_with_logits(x[0], x[1]); }},
  };
  return c;
}

// The inputs of a case in dtype t on dev (requires_grad when asked), and
// float32 copies of exactly those values.
std::vector<Tensor> prepare(const std::vector<Tensor>& in, DType t, const Device& dev, bool grad) {
  std::vector<Tensor> out;
  for (const Tensor& x : in) {
    Tensor y = x.to(t).to(dev).detach();
    if (grad) y.requires_grad_(true);
    out.push_back(y);
  }
  return out;
}

// A fixed, non-uniform weighting so that every output element's gradient
// differs (a plain sum would hide a transposed or permuted gradient).
Tensor weighted_sum(const Tensor& y) {
  Tensor w = input(y.sizes(), 99, 0.5, 1.5).to(y.device()).to(y.dtype());
  return sum(mul(y, w));
}

}  // namespace

TEST_CASE("low-precision sweep: every op in float16 and bfloat16 against float32", "[lowp]") {
  Device dev = device_under_test();
  for (DType t : kLow)
    for (const Case& c : cases()) {
      std::vector<Tensor> low = prepare(c.inputs, t, dev, false);
      std::vector<Tensor> ref;
      for (const Tensor& x : low) ref.push_back(x.to(kFloat32));
      Tensor got = c.fn(low), want = c.fn(ref);
      INFO(c.name);
      CHECK(got.dtype() == t);  // PyTorch: 16-bit operands give a 16-bit result
      CHECK(got.device() == dev);
      check_close(got, want, t, c.name);
    }
}

TEST_CASE("low-precision gradients: the backward formulas in 16 bits match float32's", "[lowp][autograd]") {
  Device dev = device_under_test();
  for (DType t : kLow)
    for (const Case& c : cases()) {
      if (!c.differentiable) continue;
      std::vector<Tensor> low = prepare(c.inputs, t, dev, true);
      std::vector<Tensor> ref;
      for (const Tensor& x : low) ref.push_back(x.detach().to(kFloat32).requires_grad_(true));
      weighted_sum(c.fn(low)).backward();
      weighted_sum(c.fn(ref)).backward();
      for (size_t i = 0; i < low.size(); ++i) {
        INFO(c.name << ": gradient of input " << i);
        REQUIRE(low[i].grad().defined());
        CHECK(low[i].grad().dtype() == t);
        check_close(low[i].grad(), ref[i].grad(), t, c.name + " grad " + std::to_string(i));
      }
    }
}

TEST_CASE("low-precision promotion follows PyTorch", "[lowp]") {
  Device dev = device_under_test();
  Tensor h = ones({3}, TensorOptions(dev).with(kFloat16)), bf = ones({3}, TensorOptions(dev).with(kBFloat16));
  Tensor f = ones({3}, TensorOptions(dev)), f0 = ones({}, TensorOptions(dev)), i = ones({3}, TensorOptions(dev).with(kInt64));
  CHECK(add(bf, bf).dtype() == kBFloat16);
  CHECK(add(h, h).dtype() == kFloat16);
  CHECK(add(h, bf).dtype() == kFloat32);   // neither holds the other
  CHECK(add(bf, f).dtype() == kFloat32);   // a dimensioned float32 widens
  CHECK(add(bf, f0).dtype() == kBFloat16); // a 0-dim one of the same category does not
  CHECK(add(bf, 2.5).dtype() == kBFloat16);
  CHECK(add(i, bf).dtype() == kBFloat16);  // floating beats integer
  CHECK(add(i, ones({}, TensorOptions(dev).with(kFloat16))).dtype() == kFloat16);  // a 0-dim of a higher category
  CHECK(gt(bf, 0.5).dtype() == kBool);
  CHECK(argmax(bf).dtype() == kInt64);
  CHECK(exp(h).dtype() == kFloat16);
  CHECK(sum(bf).dtype() == kBFloat16);
  // A float32 scalar is not rounded to bfloat16 first: 1 + 2^-9 rounds once.
  Tensor one = ones({1}, TensorOptions(dev).with(kBFloat16));
  CHECK(mul(one, 1.0 + 1.0 / 512).to(kFloat64).item() == 1.0);
  CHECK(mul(add(one, 1.0), 1.0 + 3.0 / 512).to(kFloat64).item() == Approx(2.0 + 2.0 / 128));
  // 2^-9 under the bfloat16 ulp of 2: a sum of many of them accumulates in float32.
  Tensor small = full({1024}, 1.0 / 512, TensorOptions(dev).with(kBFloat16));
  CHECK(sum(add(small, 0.0)).to(kFloat64).item() == Approx(2.0));
  // The same for matmul, conv2d and softmax's sum: a 16-bit running sum
  // would stall at 1 + 2^-7 (or 1.0 in bfloat16).
  Tensor col = ones({1024, 1}, TensorOptions(dev).with(kBFloat16));
  CHECK(matmul(small.view({1, 1024}), col).to(kFloat64).item() == Approx(2.0));
  Tensor img = small.view({1, 1, 32, 32}), w = ones({1, 1, 32, 32}, TensorOptions(dev).with(kBFloat16));
  CHECK(conv2d(img, w).to(kFloat64).item() == Approx(2.0));
  Tensor row = zeros({1, 1024}, TensorOptions(dev).with(kBFloat16));
  CHECK(softmax(row, 1).select(1, 0).to(kFloat64).item() == Approx(1.0 / 1024).epsilon(4e-3));
}

TEST_CASE("low-precision layers: Linear, Conv2d, BatchNorm2d, Dropout and Embedding keep bfloat16", "[lowp]") {
  Device dev = device_under_test();
  Generator g(5);
  nn::Sequential net{nn::Conv2d(nn::Conv2dOptions(2, 4, 3).padding(1), &g), nn::BatchNorm2d(4), nn::ReLU(),
                     nn::MaxPool2d(2), nn::Flatten(), nn::Dropout(0.25), nn::Linear(4 * 4 * 4, 3, true, &g)};
  net->to(dev, kBFloat16);
  for (const Tensor& p : net->parameters()) CHECK(p.dtype() == kBFloat16);
  Tensor x = input({5, 2, 8, 8}, 20).to(dev).to(kBFloat16);
  Tensor y = net->forward(x);
  CHECK(y.dtype() == kBFloat16);
  nn::cross_entropy(y, labels(5, 3).to(dev)).backward();
  for (const Tensor& p : net->parameters()) {
    REQUIRE(p.grad().defined());
    CHECK(p.grad().dtype() == kBFloat16);
    CHECK(std::isfinite(amax(abs(p.grad())).to(kFloat64).item()));
  }
  // BatchNorm's running statistics stay bfloat16 and moved off their init.
  for (const Tensor& b : net->buffers())
    if (is_floating(b.dtype())) CHECK(b.dtype() == kBFloat16);
  nn::Embedding emb(10, 4);
  emb->to(dev, kFloat16);
  Tensor e = emb->forward(from_vector<int64_t>({1, 1, 7}, {3}).to(dev));
  CHECK(e.dtype() == kFloat16);
  sum(e).backward();
  Tensor ge = emb->weight.grad().to(kFloat32).to(Device("cpu", 0));
  CHECK(ge.select(0, 1).to_vector<float>() == std::vector<float>(4, 2.f));  // two lookups of row 1
  CHECK(ge.select(0, 0).to_vector<float>() == std::vector<float>(4, 0.f));
}

TEST_CASE("low-precision bad input: a non-floating image names the op and the dtype", "[lowp]") {
  Device dev = device_under_test();
  Tensor xi = ones({1, 1, 4, 4}, TensorOptions(dev).with(kInt32));
  CHECK_THROWS_AS(conv2d(xi, xi), DTypeError);
  CHECK_THROWS_WITH(max_pool2d(xi, 2), Catch::Contains("max_pool2d") && Catch::Contains("int32"));
  Tensor xb = ones({1, 1, 4, 4}, TensorOptions(dev).with(kBFloat16));
  Tensor wh = ones({1, 1, 3, 3}, TensorOptions(dev).with(kFloat16));
  CHECK_THROWS_WITH(conv2d(xb, wh), Catch::Contains("bfloat16") && Catch::Contains("float16"));
  // Norms take 16-bit input with parameters of its dtype or float32, nothing else.
  Tensor c1 = ones({1}, TensorOptions(dev)), c1h = ones({1}, TensorOptions(dev).with(kFloat16));
  CHECK(std::get<0>(batch_norm(xb, c1, c1, Tensor(), Tensor(), true, 0.1, 1e-5)).dtype() == kBFloat16);
  CHECK_THROWS_WITH(batch_norm(xb, c1h, c1, Tensor(), Tensor(), true, 0.1, 1e-5),
                    Catch::Contains("batch_norm") && Catch::Contains("weight") && Catch::Contains("float16"));
  CHECK_THROWS_AS(group_norm(xb, 1, c1.to(kFloat64), Tensor(), 1e-5), DTypeError);
}

namespace {

// Two Gaussian blobs per class in 2-D, 3 classes.
std::pair<Tensor, Tensor> blobs(int64_t n) {
  Generator g(42);
  Tensor y = randint(0, 3, {n}, TensorOptions().with(kInt64), &g);
  Tensor centers = from_vector<float>({-2, 0, 2, 2, 0, -2}, {3, 2});
  Tensor x = add(index_select(centers, 0, y), mul(randn({n, 2}, TensorOptions(), &g), 0.5));
  return {x, y};
}

// Plain SGD in tensor ops (the optimizers' low-precision path is issue 14
// part B): p -= lr * grad, in the parameter's dtype.
void sgd_step(const std::vector<Tensor>& params, double lr) {
  autograd::NoGradGuard no_grad;
  for (Tensor p : params)
    if (p.grad().defined()) {
      p.sub_(mul(p.grad(), lr));
      p.grad().zero_();
    }
}

double accuracy(const Tensor& logits, const Tensor& y) {
  return sum(eq(argmax(logits, 1), y).to(kFloat64)).item() / double(y.numel());
}

}  // namespace

TEST_CASE("bfloat16 end to end: an MLP after Module::to(kBFloat16) trains with SGD", "[lowp][training]") {
  Device dev = device_under_test();
  Generator g(7);
  nn::Sequential net{nn::Linear(2, 16, true, &g), nn::LayerNorm(Shape{16}), nn::GELU(),
                     nn::Linear(16, 3, true, &g)};
  net->to(dev, kBFloat16);
  auto [x32, y] = blobs(256);
  Tensor x = x32.to(dev).to(kBFloat16);
  y = y.to(dev);
  double first = 0, last = 0;
  for (int step = 0; step < 150; ++step) {
    Tensor loss = nn::cross_entropy(net->forward(x), y);
    CHECK(loss.dtype() == kBFloat16);
    loss.backward();
    sgd_step(net->parameters(), 0.2);
    (step == 0 ? first : last) = loss.to(kFloat64).item();
  }
  INFO("loss " << first << " -> " << last);
  CHECK(last < 0.25 * first);
  CHECK(accuracy(net->forward(x), y) > 0.9);
  for (const Tensor& p : net->parameters()) CHECK(p.dtype() == kBFloat16);
}

TEST_CASE("bfloat16 end to end: a CNN with BatchNorm trains with SGD", "[lowp][training]") {
  Device dev = device_under_test();
  // Images with a bright bar either horizontal (class 0) or vertical (class 1).
  Generator g(11);
  const int64_t n = 32;
  Tensor yl = randint(0, 2, {n}, TensorOptions().with(kInt64), &g);
  std::vector<float> img(size_t(n * 64), 0.f);
  auto lv = yl.to_vector<int64_t>();
  for (int64_t i = 0; i < n; ++i)
    for (int k = 0; k < 8; ++k) img[size_t(i * 64 + (lv[size_t(i)] ? k * 8 + 3 : 3 * 8 + k))] = 1.f;
  Tensor x = add(from_vector(img, {n, 1, 8, 8}), mul(randn({n, 1, 8, 8}, TensorOptions(), &g), 0.1))
                 .to(dev)
                 .to(kBFloat16);
  Tensor y = yl.to(dev);
  nn::Sequential net{nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1), &g), nn::BatchNorm2d(4), nn::ReLU(),
                     nn::AvgPool2d(2), nn::Flatten(), nn::Linear(64, 2, true, &g)};
  net->to(dev, kBFloat16);
  double first = 0, last = 0;
  for (int step = 0; step < 40; ++step) {
    Tensor loss = nn::cross_entropy(net->forward(x), y);
    loss.backward();
    sgd_step(net->parameters(), 0.1);
    (step == 0 ? first : last) = loss.to(kFloat64).item();
  }
  INFO("loss " << first << " -> " << last);
  CHECK(last < 0.3 * first);
  net->eval();
  CHECK(accuracy(net->forward(x), y) > 0.9);
}
