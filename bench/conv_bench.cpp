// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Conv1d, Conv3d and ConvTranspose2d forward + backward (input, weight and
// bias gradients) in float32 on each device given (default cpu:0), beside a
// plain copy of the input on that device in the same run.
// bench/conv_compare.sh puts PyTorch 2.x's CPU beside it
// (bench/conv_bench_torch.py, the same shapes).
//   conv_bench [--samples S] [--device cpu:0 ...]
// Prints one line per (device, op, case): device op case ms GFLOP/s copy_GB/s,
// where GFLOP/s counts 3x the forward's multiply-adds (2 flops each): forward,
// input gradient and weight gradient.
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "options.hpp"
#include "timing.hpp"
#include "vnn/nn.h"

namespace {

namespace F = vnn::nn::functional;

struct Case {
  const char* op;
  const char* name;
  std::vector<int64_t> x, w;
  double fwd_macs;  // multiply-adds of the forward
  std::function<vnn::Tensor(const vnn::Tensor&, const vnn::Tensor&, const vnn::Tensor&)> f;
};

std::vector<Case> cases() {
  return {
      {"conv1d", "N8_C32_L2048_O64_k5", {8, 32, 2048}, {64, 32, 5}, 8.0 * 64 * 2048 * 32 * 5,
       [](const vnn::Tensor& x, const vnn::Tensor& w, const vnn::Tensor& b) {
         return F::conv1d(x, w, F::Conv1dFuncOptions().bias(b).padding(2));
       }},
      {"conv3d", "N2_C16_D16_H32_W32_O32_k3", {2, 16, 16, 32, 32}, {32, 16, 3, 3, 3}, 2.0 * 32 * 16384 * 16 * 27,
       [](const vnn::Tensor& x, const vnn::Tensor& w, const vnn::Tensor& b) {
         return F::conv3d(x, w, F::Conv3dFuncOptions().bias(b).padding(1));
       }},
      {"conv_transpose2d", "N8_C32_H32_W32_O16_k4_s2", {8, 32, 32, 32}, {32, 16, 4, 4}, 8.0 * 32 * 1024 * 16 * 16,
       [](const vnn::Tensor& x, const vnn::Tensor& w, const vnn::Tensor& b) {
         return F::conv_transpose2d(x, w, F::ConvTranspose2dFuncOptions().bias(b).stride(2).padding(1));
       }},
  };
}

void run_device(const vnn::Device& dev, int samples) {
  const std::string name = dev.str();
  auto sync = [&] { vnn::synchronize(dev); };
  for (const Case& c : cases()) {
    vnn::Generator gen(7);
    vnn::TensorOptions o(dev);
    vnn::Tensor x = vnn::rand(vnn::Shape(c.x), o, &gen).requires_grad_();
    vnn::Tensor w = vnn::rand(vnn::Shape(c.w), o, &gen).requires_grad_();
    const int64_t out_channels = c.op == std::string("conv_transpose2d") ? c.w[1] : c.w[0];
    vnn::Tensor b = vnn::rand({out_channels}, o, &gen).requires_grad_();
    vnn::Tensor grad = vnn::rand(c.f(x, w, b).sizes(), o, &gen);
    vnn::Tensor dst = vnn::empty(x.sizes(), o);
    const double xbytes = 4.0 * double(x.numel());
    const double copy_s = vnn_bench::median_seconds(samples, 10, [&] { dst.copy_(x.detach()); }, sync);
    const double s = vnn_bench::median_seconds(samples, 3, [&] {
      x.mutable_grad() = vnn::Tensor(), w.mutable_grad() = vnn::Tensor(), b.mutable_grad() = vnn::Tensor();
      c.f(x, w, b).backward(grad);
    }, sync);
    std::printf("%s %s %s %.3f %.2f %.2f\n", name.c_str(), c.op, c.name, s * 1e3, 3 * 2 * c.fwd_macs / s / 1e9,
                2 * xbytes / copy_s / 1e9);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    int samples = 5;
    std::vector<std::string> devices;
    std::vector<char*> rest{argv[0]};
    for (int i = 1; i < argc; ++i) {
      if (std::string(argv[i]) == "--device" && i + 1 < argc) devices.push_back(argv[++i]);
      else rest.push_back(argv[i]);
    }
    vnn_bench::parse_options(int(rest.size()), rest.data(), {{"--samples", &samples}});
    if (devices.empty()) devices = {"cpu:0"};
    std::printf("# conv_bench: device op case ms GFLOP/s copy_GB/s (float32 forward + backward; GFLOP/s counts "
                "3 x 2 x the forward's multiply-adds)\n");
    for (const std::string& d : devices) {
      try {
        run_device(vnn::Device(d), samples);
      } catch (const vnn::DeviceNotFound& e) {
        std::printf("# %s skipped: %s\n", d.c_str(), e.what());
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "conv_bench: %s\n", e.what());
    return 1;
  }
}
