// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn modules, losses and optimizers against LibTorch's: each torch::nn
// module is built with the same hyper-parameters as the vnn one, its
// parameters (and buffers) are copied into the vnn module through
// load_state_dict, both run the same input (vnn on the device under test,
// LibTorch on the CPU), and outputs, the input gradient and every parameter
// gradient of sum(output * r) (r a fixed random weighting) must agree.
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"

using vnn::test::device_under_test;
namespace F = torch::nn::functional;

namespace {

const vnn::Device kCpu("cpu", 0);

vnn::DType from_torch(c10::ScalarType t) {
  switch (t) {
    case torch::kFloat32: return vnn::kFloat32;
    case torch::kFloat64: return vnn::kFloat64;
    case torch::kInt64: return vnn::kInt64;
    default: return vnn::kInt32;
  }
}

std::vector<int64_t> sizes_of(const torch::Tensor& t) { return std::vector<int64_t>(t.sizes().begin(), t.sizes().end()); }

// A torch tensor's values (copied through a host vector) as a vnn tensor of
// the same dtype on dev; a leaf without history.
vnn::Tensor to_vnn(const torch::Tensor& t, const vnn::Device& dev) {
  vnn::Shape shape;
  for (int64_t s : t.sizes()) shape.push_back(s);
  torch::Tensor c = t.detach().contiguous();
  if (t.scalar_type() == torch::kInt64) {
    std::vector<int64_t> d(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
    return vnn::from_vector(d, shape).to(dev);
  }
  torch::Tensor c64 = c.to(torch::kFloat64).contiguous();
  std::vector<double> d(c64.data_ptr<double>(), c64.data_ptr<double>() + c64.numel());
  return vnn::from_vector(d, shape).to(dev, from_torch(t.scalar_type()));
}

// Deterministic values in [lo, hi) (an LCG, independent of either library's
// generator) as a torch tensor of dtype.
torch::Tensor values(const std::vector<int64_t>& shape, int salt, double lo, double hi,
                     c10::ScalarType dtype = torch::kFloat32) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> d(static_cast<size_t>(n));
  uint64_t x = uint64_t(salt) * 0x9E3779B97F4A7C15ull + 12345;
  for (auto& e : d) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    e = lo + (hi - lo) * double(x >> 11) / double(1ull << 53);
  }
  return torch::from_blob(d.data(), shape, torch::kFloat64).clone().to(dtype);
}

// Relative error |got - want| / (|want| + 1), worst over the elements.
void compare(const std::string& what, const vnn::Tensor& got, const torch::Tensor& want, double tol) {
  INFO(what);
  REQUIRE(got.defined());
  REQUIRE(want.defined());
  std::vector<int64_t> gs;
  for (int i = 0; i < got.dim(); ++i) gs.push_back(got.size(i));
  REQUIRE(gs == sizes_of(want));
  CHECK(vnn::name(got.dtype()) == std::string(vnn::name(from_torch(want.scalar_type()))));
  auto g = got.to(kCpu).to_vector<double>();
  torch::Tensor w = want.detach().to(torch::kFloat64).contiguous();
  const double* wp = w.data_ptr<double>();
  double worst = 0;
  size_t bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    double err = std::fabs(g[i] - wp[i]) / (std::fabs(wp[i]) + 1.0);
    if (!(err <= worst)) worst = err, bad = i;
  }
  INFO("worst relative error " << worst << " at element " << bad << ": vnn " << (g.empty() ? 0 : g[bad])
                               << ", LibTorch " << (g.empty() ? 0 : wp[bad]));
  CHECK(worst <= tol);
}

double tol_for(c10::ScalarType t) { return t == torch::kFloat64 ? 1e-10 : 1e-5; }

// Torch's parameters then buffers, by name, as a vnn state dict on dev.
vnn::nn::StateDict torch_state(torch::nn::Module& tm, const vnn::Device& dev) {
  vnn::nn::StateDict sd;
  for (const auto& kv : tm.named_parameters()) sd.emplace_back(kv.key(), to_vnn(kv.value(), dev));
  for (const auto& kv : tm.named_buffers()) sd.emplace_back(kv.key(), to_vnn(kv.value(), dev));
  return sd;
}

vnn::Tensor find(const vnn::nn::StateDict& sd, const std::string& key) {
  for (const auto& kv : sd)
    if (kv.first == key) return kv.second;
  return vnn::Tensor();
}

// Copies tm's state into vm (on dev, in dtype), runs x through both, and
// compares the outputs, the gradients of sum(y * r) with respect to x (when
// x is floating) and every parameter, and the buffers after the forward.
template <class TorchModule>
void check_module(const std::string& what, TorchModule& tm, vnn::nn::Module& vm, torch::Tensor x,
                  const vnn::Device& dev, c10::ScalarType dtype = torch::kFloat32) {
  INFO(what << " (" << c10::toString(dtype) << ") on " << dev);
  const double tol = tol_for(dtype);
  // Floating tensors only, as vnn's Module::to(DType) and Python's
  // Module.to(dtype) (LibTorch's C++ Module::to(dtype) would also convert
  // BatchNorm's int64 num_batches_tracked).
  {
    torch::NoGradGuard g;
    for (torch::Tensor& t : tm->parameters())
      if (t.is_floating_point()) t.set_data(t.to(dtype));
    for (torch::Tensor& t : tm->buffers())
      if (t.is_floating_point()) t.set_data(t.to(dtype));
  }
  vm.to(from_torch(dtype));
  vm.to(dev);
  vm.load_state_dict(torch_state(*tm.ptr(), dev));
  const bool floating = x.is_floating_point();
  x = x.detach().clone();  // a fresh leaf: callers reuse one input for several modules
  if (floating) x = x.to(dtype);
  vnn::Tensor xv = to_vnn(x, dev);
  if (floating) {
    x.requires_grad_(true);
    xv.requires_grad_(true);
  }
  torch::Tensor y = tm->forward(x);
  vnn::Tensor yv = vm.forward(xv);
  compare("output", yv, y, tol);
  torch::Tensor r = values(sizes_of(y), 99, -1, 1, dtype);
  (y * r).sum().backward();
  vnn::sum(yv * to_vnn(r, dev)).backward();
  if (floating) compare("input gradient", xv.grad(), x.grad(), tol);
  vnn::nn::StateDict vp = vm.named_parameters();
  CHECK(vp.size() == tm->named_parameters().size());
  for (const auto& kv : tm->named_parameters()) {
    vnn::Tensor p = find(vp, kv.key());
    INFO("parameter " << kv.key());
    REQUIRE(p.defined());
    compare("gradient of " + kv.key(), p.grad(), kv.value().grad(), tol);
  }
  vnn::nn::StateDict vb = vm.named_buffers();
  for (const auto& kv : tm->named_buffers()) {
    vnn::Tensor b = find(vb, kv.key());
    INFO("buffer " << kv.key());
    REQUIRE(b.defined());
    compare("buffer " + kv.key() + " after forward", b, kv.value(), tol);
  }
}

// The same for a vnn holder (vnn::nn::Linear, ...): its module.
template <class TorchModule, class Impl>
void check_module(const std::string& what, TorchModule& tm, vnn::nn::ModuleHolder<Impl>& vm, torch::Tensor x,
                  const vnn::Device& dev, c10::ScalarType dtype = torch::kFloat32) {
  check_module(what, tm, *vm, std::move(x), dev, dtype);
}

// The CNN of the brief, on both sides.
torch::nn::Sequential torch_cnn() {
  return torch::nn::Sequential(
      torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 4, 3).padding(1)), torch::nn::ReLU(),
      torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2)),
      torch::nn::Conv2d(torch::nn::Conv2dOptions(4, 8, 3).padding(1)), torch::nn::ReLU(),
      torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2)), torch::nn::Flatten(), torch::nn::Linear(8 * 2 * 2, 10));
}

vnn::nn::Sequential vnn_cnn() {
  using namespace vnn::nn;
  return Sequential{Conv2d(Conv2dOptions(1, 4, 3).padding(1)), ReLU(), MaxPool2d(2),
                    Conv2d(Conv2dOptions(4, 8, 3).padding(1)), ReLU(), MaxPool2d(2),
                    Flatten(), Linear(8 * 2 * 2, 10)};
}

}  // namespace

TEST_CASE("Linear and Conv2d agree with LibTorch in float32 and float64") {
  vnn::Device dev = device_under_test();
  torch::manual_seed(1);
  for (auto dt : {torch::kFloat32, torch::kFloat64}) {
    {
      torch::nn::Linear tm(5, 7);
      vnn::nn::Linear vm(5, 7);
      check_module("Linear 2d input", tm, vm, values({4, 5}, 1, -2, 2), dev, dt);
    }
    {
      torch::nn::Linear tm(torch::nn::LinearOptions(6, 3).bias(false));
      vnn::nn::Linear vm(6, 3, false);
      check_module("Linear without bias, 3d input", tm, vm, values({2, 3, 6}, 2, -2, 2), dev, dt);
    }
    {
      torch::nn::Conv2d tm(torch::nn::Conv2dOptions(3, 4, 3).stride(2).padding(1));
      vnn::nn::Conv2d vm(vnn::nn::Conv2dOptions(3, 4, 3).stride(2).padding(1));
      check_module("Conv2d stride 2 padding 1", tm, vm, values({2, 3, 7, 6}, 3, -1, 1), dev, dt);
    }
    {
      torch::nn::Conv2d tm(
          torch::nn::Conv2dOptions(4, 6, {3, 2}).stride({1, 2}).padding({2, 1}).dilation({2, 1}).groups(2).bias(false));
      vnn::nn::Conv2d vm(
          vnn::nn::Conv2dOptions(4, 6, {3, 2}).stride({1, 2}).padding({2, 1}).dilation({2, 1}).groups(2).bias(false));
      check_module("Conv2d grouped, dilated, rectangular, no bias", tm, vm, values({2, 4, 6, 5}, 4, -1, 1), dev, dt);
    }
  }
}

TEST_CASE("pooling modules agree with LibTorch") {
  vnn::Device dev = device_under_test();
  torch::Tensor x = values({2, 3, 7, 5}, 10, -3, 3);
  {
    torch::nn::MaxPool2d tm(torch::nn::MaxPool2dOptions(3).stride(2).padding(1));
    vnn::nn::MaxPool2d vm(3, 2, 1);
    check_module("MaxPool2d 3/2/1", tm, vm, x, dev);
  }
  {
    torch::nn::MaxPool2d tm(torch::nn::MaxPool2dOptions({2, 3}).stride({1, 2}).dilation({2, 1}));
    vnn::nn::MaxPool2d vm(vnn::Size2(2, 3), vnn::Size2(1, 2), 0, vnn::Size2(2, 1));
    check_module("MaxPool2d dilated, rectangular", tm, vm, x, dev);
  }
  for (bool include_pad : {true, false}) {
    torch::nn::AvgPool2d tm(torch::nn::AvgPool2dOptions(3).stride(2).padding(1).count_include_pad(include_pad));
    vnn::nn::AvgPool2d vm(3, 2, 1, include_pad);
    check_module(include_pad ? "AvgPool2d count_include_pad" : "AvgPool2d without pad count", tm, vm, x, dev);
  }
  {
    torch::nn::AdaptiveAvgPool2d tm(torch::nn::AdaptiveAvgPool2dOptions({3, 2}));
    vnn::nn::AdaptiveAvgPool2d vm(vnn::Size2(3, 2));
    check_module("AdaptiveAvgPool2d 7x5 -> 3x2", tm, vm, x, dev);
  }
}

TEST_CASE("normalization modules agree with LibTorch, training and eval") {
  vnn::Device dev = device_under_test();
  torch::manual_seed(2);
  for (bool training : {true, false}) {
    INFO((training ? "training" : "eval"));
    {
      torch::nn::BatchNorm1d tm(6);
      vnn::nn::BatchNorm1d vm(6);
      // Non-trivial affine parameters and running statistics.
      torch::NoGradGuard g;
      tm->weight.copy_(values({6}, 20, 0.5, 1.5));
      tm->bias.copy_(values({6}, 21, -0.5, 0.5));
      tm->running_mean.copy_(values({6}, 22, -0.3, 0.3));
      tm->running_var.copy_(values({6}, 23, 0.5, 2.0));
      tm->train(training);
      vm->train(training);
      torch::AutoGradMode on(true);
      check_module("BatchNorm1d", tm, vm, values({8, 6}, 24, -2, 3), dev);
    }
    {
      torch::nn::BatchNorm2d tm(torch::nn::BatchNorm2dOptions(3).momentum(0.3).eps(1e-3));
      vnn::nn::BatchNorm2d vm(3, 1e-3, 0.3);
      torch::NoGradGuard g;
      tm->weight.copy_(values({3}, 25, 0.5, 1.5));
      tm->bias.copy_(values({3}, 26, -0.5, 0.5));
      tm->running_mean.copy_(values({3}, 27, -0.3, 0.3));
      tm->running_var.copy_(values({3}, 28, 0.5, 2.0));
      tm->train(training);
      vm->train(training);
      torch::AutoGradMode on(true);
      check_module("BatchNorm2d momentum 0.3 eps 1e-3", tm, vm, values({4, 3, 5, 5}, 29, -2, 3), dev);
    }
  }
  {
    torch::nn::LayerNorm tm(torch::nn::LayerNormOptions({4, 5}));
    vnn::nn::LayerNorm vm(vnn::nn::LayerNormOptions({4, 5}));
    {
      torch::NoGradGuard g;
      tm->weight.copy_(values({4, 5}, 30, 0.5, 1.5));
      tm->bias.copy_(values({4, 5}, 31, -0.5, 0.5));
    }
    check_module("LayerNorm [4, 5]", tm, vm, values({3, 4, 5}, 32, -2, 3), dev);
  }
  {
    torch::nn::GroupNorm tm(torch::nn::GroupNormOptions(2, 6));
    vnn::nn::GroupNorm vm(2, 6);
    {
      torch::NoGradGuard g;
      tm->weight.copy_(values({6}, 33, 0.5, 1.5));
      tm->bias.copy_(values({6}, 34, -0.5, 0.5));
    }
    check_module("GroupNorm 2 groups of 3", tm, vm, values({2, 6, 3, 4}, 35, -2, 3), dev);
  }
}

TEST_CASE("Embedding and activations agree with LibTorch") {
  vnn::Device dev = device_under_test();
  torch::manual_seed(3);
  {
    torch::nn::Embedding tm(10, 4);
    vnn::nn::Embedding vm(10, 4);
    // Repeated indices: their gradients accumulate.
    torch::Tensor idx = torch::tensor({1, 3, 3, 9, 0, 1, 7, 3}, torch::kInt64).view({2, 4});
    check_module("Embedding", tm, vm, idx, dev);
  }
  torch::Tensor x = values({3, 7}, 40, -3, 3);
  {
    torch::nn::ReLU tm;
    vnn::nn::ReLU vm;
    check_module("ReLU", tm, vm, x, dev);
  }
  {
    torch::nn::LeakyReLU tm(torch::nn::LeakyReLUOptions().negative_slope(0.2));
    vnn::nn::LeakyReLU vm(0.2);
    check_module("LeakyReLU 0.2", tm, vm, x, dev);
  }
  {
    torch::nn::GELU tm;
    vnn::nn::GELU vm;
    check_module("GELU", tm, vm, x, dev);
  }
  {
    torch::nn::SiLU tm;
    vnn::nn::SiLU vm;
    check_module("SiLU", tm, vm, x, dev);
  }
  {
    torch::nn::Sigmoid tm;
    vnn::nn::Sigmoid vm;
    check_module("Sigmoid", tm, vm, x, dev);
  }
  {
    torch::nn::Tanh tm;
    vnn::nn::Tanh vm;
    check_module("Tanh", tm, vm, x, dev);
  }
  {
    torch::nn::Softmax tm(1);
    vnn::nn::Softmax vm(1);
    check_module("Softmax dim 1", tm, vm, x, dev);
  }
  {
    torch::nn::LogSoftmax tm(0);
    vnn::nn::LogSoftmax vm(0);
    check_module("LogSoftmax dim 0", tm, vm, x, dev);
  }
}

TEST_CASE("a Sequential CNN agrees with LibTorch") {
  vnn::Device dev = device_under_test();
  torch::manual_seed(4);
  torch::nn::Sequential tm = torch_cnn();
  auto vm = vnn_cnn();
  check_module("Sequential conv-relu-pool-conv-relu-pool-flatten-linear", tm, *vm, values({3, 1, 8, 8}, 50, -1, 1),
               dev);
}

TEST_CASE("losses agree with LibTorch: values and input gradients") {
  vnn::Device dev = device_under_test();
  using vnn::nn::Reduction;
  const double tol = 1e-5;
  // Scalar losses backpropagate 1; reduction none backpropagates a weighting.
  auto run = [&](const std::string& what, torch::Tensor x, const std::function<torch::Tensor(torch::Tensor)>& tf,
                 const std::function<vnn::Tensor(vnn::Tensor)>& vf) {
    INFO(what << " on " << dev);
    vnn::Tensor xv = to_vnn(x, dev);
    x = x.detach().clone().requires_grad_(true);
    xv.requires_grad_(true);
    torch::Tensor l = tf(x);
    vnn::Tensor lv = vf(xv);
    compare("loss", lv, l, tol);
    torch::Tensor r = values(sizes_of(l), 77, 0.5, 1.5);
    (l * r).sum().backward();
    vnn::sum(lv * to_vnn(r, dev)).backward();
    compare("input gradient", xv.grad(), x.grad(), tol);
  };
  torch::Tensor logits = values({6, 5}, 60, -3, 3);
  torch::Tensor target = torch::tensor({0, 4, 2, 2, 1, 3}, torch::kInt64);
  torch::Tensor target_ignored = torch::tensor({0, 4, -100, 2, 1, -100}, torch::kInt64);
  torch::Tensor cw = values({5}, 61, 0.2, 2.0);
  vnn::Tensor tv = to_vnn(target, dev), tiv = to_vnn(target_ignored, dev), cwv = to_vnn(cw, dev);
  struct CE {
    const char* what;
    bool weighted;
    double smoothing;
    bool ignored;
    torch::nn::functional::CrossEntropyFuncOptions::reduction_t tr;
    Reduction vr;
  };
  for (const CE& c : {CE{"cross_entropy mean", false, 0.0, false, torch::kMean, Reduction::mean},
                      CE{"cross_entropy sum", false, 0.0, false, torch::kSum, Reduction::sum},
                      CE{"cross_entropy none", false, 0.0, false, torch::kNone, Reduction::none},
                      CE{"cross_entropy class weights", true, 0.0, false, torch::kMean, Reduction::mean},
                      CE{"cross_entropy label_smoothing 0.1", false, 0.1, false, torch::kMean, Reduction::mean},
                      CE{"cross_entropy weights + smoothing 0.2", true, 0.2, false, torch::kMean, Reduction::mean},
                      CE{"cross_entropy weights + smoothing, none", true, 0.2, false, torch::kNone, Reduction::none},
                      CE{"cross_entropy weights + ignore_index", true, 0.0, true, torch::kMean, Reduction::mean},
                      CE{"cross_entropy weights + smoothing + ignore_index", true, 0.15, true, torch::kMean,
                         Reduction::mean}}) {
    torch::Tensor t = c.ignored ? target_ignored : target;
    vnn::Tensor tvv = c.ignored ? tiv : tv;
    run(
        c.what, logits,
        [&](torch::Tensor x) {
          auto o = F::CrossEntropyFuncOptions().label_smoothing(c.smoothing).reduction(c.tr);
          if (c.weighted) o.weight(cw);
          return F::cross_entropy(x, t, o);
        },
        [&](vnn::Tensor x) {
          vnn::nn::CrossEntropyOptions o;
          if (c.weighted) o.weight = cwv;
          o.label_smoothing = c.smoothing;
          o.reduction = c.vr;
          return vnn::nn::cross_entropy(x, tvv, o);
        });
  }
  {
    // Spatial targets: logits [N, C, H, W], target [N, H, W].
    torch::Tensor x4 = values({2, 4, 3, 2}, 62, -2, 2);
    torch::Tensor t4 = torch::tensor({0, 3, 1, 1, 2, 0, 3, 3, 2, 1, 0, 2}, torch::kInt64).view({2, 3, 2});
    torch::Tensor w4 = values({4}, 63, 0.2, 2.0);
    vnn::Tensor t4v = to_vnn(t4, dev), w4v = to_vnn(w4, dev);
    run(
        "cross_entropy spatial, weights + smoothing", x4,
        [&](torch::Tensor x) {
          return F::cross_entropy(x, t4, F::CrossEntropyFuncOptions().weight(w4).label_smoothing(0.1));
        },
        [&](vnn::Tensor x) {
          vnn::nn::CrossEntropyOptions o;
          o.weight = w4v;
          o.label_smoothing = 0.1;
          return vnn::nn::cross_entropy(x, t4v, o);
        });
  }
  torch::Tensor lp = torch::log_softmax(values({6, 5}, 64, -3, 3), 1);
  run(
      "nll_loss mean", lp, [&](torch::Tensor x) { return F::nll_loss(x, target); },
      [&](vnn::Tensor x) { return vnn::nn::nll_loss(x, tv); });
  run(
      "nll_loss class weights + ignore_index", lp,
      [&](torch::Tensor x) { return F::nll_loss(x, target_ignored, F::NLLLossFuncOptions().weight(cw)); },
      [&](vnn::Tensor x) {
        vnn::nn::CrossEntropyOptions o;
        o.weight = cwv;
        return vnn::nn::nll_loss(x, tiv, o);
      });
  run(
      "nll_loss sum", lp, [&](torch::Tensor x) { return F::nll_loss(x, target, F::NLLLossFuncOptions().reduction(torch::kSum)); },
      [&](vnn::Tensor x) {
        vnn::nn::CrossEntropyOptions o;
        o.reduction = Reduction::sum;
        return vnn::nn::nll_loss(x, tv, o);
      });

  torch::Tensor a = values({4, 6}, 65, -3, 3), b = values({4, 6}, 66, -3, 3);
  vnn::Tensor bv = to_vnn(b, dev);
  run(
      "mse_loss mean", a, [&](torch::Tensor x) { return F::mse_loss(x, b); },
      [&](vnn::Tensor x) { return vnn::nn::mse_loss(x, bv); });
  run(
      "mse_loss sum", a, [&](torch::Tensor x) { return F::mse_loss(x, b, F::MSELossFuncOptions().reduction(torch::kSum)); },
      [&](vnn::Tensor x) { return vnn::nn::mse_loss(x, bv, Reduction::sum); });
  run(
      "mse_loss none", a,
      [&](torch::Tensor x) { return F::mse_loss(x, b, F::MSELossFuncOptions().reduction(torch::kNone)); },
      [&](vnn::Tensor x) { return vnn::nn::mse_loss(x, bv, Reduction::none); });
  for (double beta : {1.0, 0.5, 2.5}) {
    run(
        "smooth_l1_loss mean, beta " + std::to_string(beta), a,
        // LibTorch 1.13's F::smooth_l1_loss ignores SmoothL1LossFuncOptions::beta (it takes beta as a
        // separate argument); ATen's form takes it directly.
        [&](torch::Tensor x) { return torch::smooth_l1_loss(x, b, at::Reduction::Mean, beta); },
        [&](vnn::Tensor x) { return vnn::nn::smooth_l1_loss(x, bv, Reduction::mean, beta); });
  }
  run(
      "smooth_l1_loss none", a,
      [&](torch::Tensor x) {
        return F::smooth_l1_loss(x, b, F::SmoothL1LossFuncOptions().reduction(torch::kNone));
      },
      [&](vnn::Tensor x) { return vnn::nn::smooth_l1_loss(x, bv, Reduction::none); });

  torch::Tensor p = values({4, 6}, 67, 0, 1);  // soft targets
  torch::Tensor bw = values({4, 6}, 68, 0.5, 1.5), pw = values({6}, 69, 0.5, 3.0);
  vnn::Tensor pv = to_vnn(p, dev), bwv = to_vnn(bw, dev), pwv = to_vnn(pw, dev);
  run(
      "binary_cross_entropy_with_logits mean", a,
      [&](torch::Tensor x) { return F::binary_cross_entropy_with_logits(x, p); },
      [&](vnn::Tensor x) { return vnn::nn::binary_cross_entropy_with_logits(x, pv); });
  run(
      "binary_cross_entropy_with_logits weight + pos_weight", a,
      [&](torch::Tensor x) {
        return F::binary_cross_entropy_with_logits(
            x, p, F::BinaryCrossEntropyWithLogitsFuncOptions().weight(bw).pos_weight(pw));
      },
      [&](vnn::Tensor x) { return vnn::nn::binary_cross_entropy_with_logits(x, pv, bwv, pwv); });
  run(
      "binary_cross_entropy_with_logits pos_weight, none", a * 10,  // large logits: the stable form matters
      [&](torch::Tensor x) {
        return F::binary_cross_entropy_with_logits(
            x, p, F::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(pw).reduction(torch::kNone));
      },
      [&](vnn::Tensor x) {
        return vnn::nn::binary_cross_entropy_with_logits(x, pv, vnn::Tensor(), pwv, Reduction::none);
      });
}

TEST_CASE("Adam and SGD-momentum steps agree with LibTorch") {
  vnn::Device dev = device_under_test();
  torch::manual_seed(5);
  enum Kind { kAdam, kAdamWeightDecay, kSgdMomentum, kSgdNesterovWeightDecay };
  for (Kind kind : {kAdam, kAdamWeightDecay, kSgdMomentum, kSgdNesterovWeightDecay}) {
    INFO("optimizer kind " << int(kind) << " on " << dev);
    torch::nn::Sequential tm = torch_cnn();
    auto vm = vnn_cnn();
    vm->to(dev);
    vm->load_state_dict(torch_state(*tm.ptr(), dev));
    std::unique_ptr<torch::optim::Optimizer> topt;
    std::unique_ptr<vnn::optim::Optimizer> vopt;
    switch (kind) {
      case kAdam:
        topt = std::make_unique<torch::optim::Adam>(tm->parameters(), torch::optim::AdamOptions(0.01));
        vopt = std::make_unique<vnn::optim::Adam>(vm->parameters(), vnn::optim::AdamOptions(0.01));
        break;
      case kAdamWeightDecay:
        topt = std::make_unique<torch::optim::Adam>(
            tm->parameters(), torch::optim::AdamOptions(0.02).betas({0.8, 0.99}).weight_decay(0.1));
        vopt = std::make_unique<vnn::optim::Adam>(
            vm->parameters(), vnn::optim::AdamOptions(0.02).betas(0.8, 0.99).weight_decay(0.1));
        break;
      case kSgdMomentum:
        topt = std::make_unique<torch::optim::SGD>(tm->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
        vopt = std::make_unique<vnn::optim::SGD>(vm->parameters(), vnn::optim::SGDOptions(0.1).momentum(0.9));
        break;
      case kSgdNesterovWeightDecay:
        topt = std::make_unique<torch::optim::SGD>(
            tm->parameters(), torch::optim::SGDOptions(0.05).momentum(0.8).nesterov(true).weight_decay(0.01));
        vopt = std::make_unique<vnn::optim::SGD>(
            vm->parameters(), vnn::optim::SGDOptions(0.05).momentum(0.8).nesterov(true).weight_decay(0.01));
        break;
    }
    torch::Tensor target = torch::tensor({3, 0, 9}, torch::kInt64);
    vnn::Tensor tv = to_vnn(target, dev);
    // Two steps: the first creates the optimizer state, the second uses it.
    for (int step = 1; step <= 2; ++step) {
      INFO("step " << step);
      torch::Tensor x = values({3, 1, 8, 8}, 70 + step, -1, 1);
      topt->zero_grad();
      vopt->zero_grad();
      torch::Tensor l = F::cross_entropy(tm->forward(x), target);
      vnn::Tensor lv = vnn::nn::cross_entropy(vm->forward(to_vnn(x, dev)), tv);
      compare("loss before the step", lv, l, 1e-5);
      l.backward();
      lv.backward();
      topt->step();
      vopt->step();
      vnn::nn::StateDict vp = vm->named_parameters();
      for (const auto& kv : tm->named_parameters()) {
        vnn::Tensor pv = find(vp, kv.key());
        REQUIRE(pv.defined());
        compare("parameter " + kv.key() + " after the step", pv, kv.value(), 1e-5);
      }
    }
  }
}
