// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// lowp_bench: float16 / bfloat16 against float32 on one device, same run
// (issue 14): matmul n x n x n and one training step (forward, backward,
// plain SGD) of an MLP and a small CNN. The CPUs this runs on have no
// 16-bit arithmetic units: the 16-bit paths convert to float32 around the
// float32 kernels (or compute in float32 on 16-bit storage), so the figures
// measure the overhead of correctness, not a speed-up.
//   lowp_bench [device] [rounds]      (default cpu:0, 7)
#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "timing.hpp"
#include "vnn/nn.h"
#include "vnn/vnn.h"

using namespace vnn;

namespace {

void sgd(const std::vector<Tensor>& params, double lr) {
  autograd::NoGradGuard no_grad;
  for (Tensor p : params)
    if (p.grad().defined()) {
      p.sub_(mul(p.grad(), lr));
      p.grad().zero_();
    }
}

// The machine is shared: the dtypes are timed interleaved (round r times
// each dtype once, `iters` calls), and the minimum over rounds is reported
// (the least disturbed round), with the median beside it.
struct Stat {
  double min = 0, median = 0;
};
std::vector<Stat> interleaved(int rounds, int iters, const std::vector<std::function<void()>>& bodies,
                              const Device& dev) {
  std::vector<std::vector<double>> t(bodies.size());
  for (const auto& b : bodies) b(), synchronize(dev);  // warm up
  for (int r = 0; r < rounds; ++r)
    for (size_t k = 0; k < bodies.size(); ++k)
      t[k].push_back(vnn_bench::median_seconds(1, iters, bodies[k], [&] { synchronize(dev); }));
  std::vector<Stat> out;
  for (auto& v : t) {
    std::sort(v.begin(), v.end());
    out.push_back({v.front(), v[v.size() / 2]});
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Device dev(argc > 1 ? argv[1] : "cpu:0");
  const int rounds = argc > 2 ? std::stoi(argv[2]) : 7;
  const DType types[] = {kFloat32, kBFloat16, kFloat16};
  std::printf("device %s, %d interleaved rounds, min (median) per dtype; same run, shared machine\n",
              dev.str().c_str(), rounds);
  std::printf("matmul n x n x n, ms per call            float32             bfloat16             float16\n");
  for (int64_t n : {128, 256, 512, 1024}) {
    std::vector<Tensor> a, b;
    std::vector<std::function<void()>> bodies;
    for (DType t : types) {
      a.push_back(randn({n, n}, TensorOptions(dev)).to(t));
      b.push_back(randn({n, n}, TensorOptions(dev)).to(t));
    }
    for (size_t k = 0; k < 3; ++k) bodies.push_back([&, k] { (void)matmul(a[k], b[k]); });
    auto st = interleaved(rounds, n <= 256 ? 10 : n <= 512 ? 3 : 1, bodies, dev);
    std::printf("  n=%-5lld (GFLOP/s of the min)     ", static_cast<long long>(n));
    for (const Stat& x : st)
      std::printf("%8.3f (%7.3f) %5.1f  ", x.min * 1e3, x.median * 1e3,
                  2.0 * double(n) * double(n) * double(n) / x.min * 1e-9);
    std::printf("\n");
  }
  std::printf("training step (forward + backward + SGD), ms\n");
  {
    Tensor x32 = randn({128, 784}, TensorOptions(dev));
    Tensor y = randint(0, 10, {128}, TensorOptions(dev).with(kInt64));
    std::vector<nn::Sequential> nets;
    std::vector<Tensor> xs;
    std::vector<std::function<void()>> bodies;
    for (DType t : types) {
      Generator g(1);
      nets.push_back(nn::Sequential{nn::Linear(784, 256, true, &g), nn::ReLU(), nn::Linear(256, 10, true, &g)});
      nets.back()->to(dev, t);
      xs.push_back(x32.to(t));
    }
    for (size_t k = 0; k < 3; ++k)
      bodies.push_back([&, k] {
        nn::cross_entropy(nets[k]->forward(xs[k]), y).backward();
        sgd(nets[k]->parameters(), 0.01);
      });
    std::printf("  MLP 784-256-10, batch 128            ");
    for (const Stat& x : interleaved(rounds, 3, bodies, dev)) std::printf("%8.2f (%7.2f)        ", x.min * 1e3, x.median * 1e3);
    std::printf("\n");
  }
  {
    Tensor x32 = randn({64, 1, 28, 28}, TensorOptions(dev));
    Tensor y = randint(0, 10, {64}, TensorOptions(dev).with(kInt64));
    std::vector<nn::Sequential> nets;
    std::vector<Tensor> xs;
    std::vector<std::function<void()>> bodies;
    for (DType t : types) {
      Generator g(2);
      nets.push_back(nn::Sequential{nn::Conv2d(nn::Conv2dOptions(1, 8, 3).padding(1), &g), nn::BatchNorm2d(8),
                                    nn::ReLU(), nn::MaxPool2d(2), nn::Conv2d(nn::Conv2dOptions(8, 16, 3).padding(1), &g),
                                    nn::ReLU(), nn::MaxPool2d(2), nn::Flatten(), nn::Linear(16 * 7 * 7, 10, true, &g)});
      nets.back()->to(dev, t);
      xs.push_back(x32.to(t));
    }
    for (size_t k = 0; k < 3; ++k)
      bodies.push_back([&, k] {
        nn::cross_entropy(nets[k]->forward(xs[k]), y).backward();
        sgd(nets[k]->parameters(), 0.01);
      });
    std::printf("  CNN (conv8-bn-pool-conv16-pool-fc), 64");
    for (const Stat& x : interleaved(rounds, 2, bodies, dev)) std::printf("%8.2f (%7.2f)        ", x.min * 1e3, x.median * 1e3);
    std::printf("\n");
  }
  return 0;
}
