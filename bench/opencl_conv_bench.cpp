// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// opencl_conv_bench: the CNN's two conv2d layers on opencl:0 against cpu:0
// in the same run (forward; backward = input + weight + bias gradients, ms
// per call), then where opencl:0's time goes: device time per op from
// vnn's profiler (OpenCL events), one forward and one backward per layer.
// VNN_OPENCL_CONV=<variant> forces a conv2d path (backends/opencl/ops_conv.cpp).
//   usage: opencl_conv_bench [--samples N] [--no-profile]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "timing.hpp"
#include "vnn/vnn.h"

namespace {

std::vector<float> values(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 1;
  for (float& f : v) {
    s = s * 1664525u + 1013904223u;
    f = float(s >> 8) / float(1u << 24) * 2.0f - 1.0f;
  }
  return v;
}

struct Layer {
  int64_t n, c, h, w, o;
  const char* name;
};

struct Operands {
  vnn::Tensor x, w, b, gy;
};

Operands operands(const Layer& l, const vnn::Device& dev) {
  auto t = [&](const std::vector<float>& v, vnn::Shape s) { return vnn::from_vector(v, s).to(dev); };
  return {t(values(size_t(l.n * l.c * l.h * l.w), 1), {l.n, l.c, l.h, l.w}),
          t(values(size_t(l.o * l.c * 9), 2), {l.o, l.c, 3, 3}), t(values(size_t(l.o), 3), {l.o}),
          t(values(size_t(l.n * l.o * l.h * l.w), 4), {l.n, l.o, l.h, l.w})};
}

void backward(const Operands& a) {
  vnn::Tensor gx = vnn::conv2d_backward_input(a.gy, a.w, a.x.sizes(), 1, 1);
  vnn::Tensor gw = vnn::conv2d_backward_weight(a.gy, a.x, a.w.sizes(), 1, 1);
  vnn::Tensor gb = vnn::conv2d_backward_bias(a.gy);
}

}  // namespace

int main(int argc, char** argv) {
  int samples = 3;
  bool profile = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--samples") && i + 1 < argc) samples = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--no-profile")) profile = false;
    else {
      std::fprintf(stderr, "usage: %s [--samples N] [--no-profile]\n", argv[0]);
      return 2;
    }
  }
  const vnn::Device cl("opencl", 0), cpu("cpu", 0);
  if (!vnn::is_available(cl)) {
    std::printf("no OpenCL device: nothing to measure\n");
    return 0;
  }
  const char* force = std::getenv("VNN_OPENCL_CONV");
  std::printf("## conv2d float32, opencl:0 (%s, VNN_OPENCL_CONV=%s) vs cpu:0, ms per call, same run\n\n",
              vnn::device_info(cl).name.c_str(), force ? force : "(tuned)");
  std::printf("| layer | cpu fwd | opencl fwd | opencl / cpu | cpu bwd | opencl bwd | opencl / cpu |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  const Layer layers[2] = {{64, 1, 28, 28, 32, "64x1x28x28, 32 3x3 pad 1"},
                           {64, 32, 14, 14, 64, "64x32x14x14, 64 3x3 pad 1"}};
  for (const Layer& l : layers) {
    double t[2][2];
    int col = 0;
    for (const vnn::Device& dev : {cpu, cl}) {
      Operands a = operands(l, dev);
      auto sync = [&] { vnn::synchronize(dev); };
      vnn::Tensor y;
      t[col][0] = vnn_bench::median_seconds(samples, 1, [&] { y = vnn::conv2d(a.x, a.w, a.b, 1, 1); }, sync);
      t[col][1] = vnn_bench::median_seconds(samples, 1, [&] { backward(a); }, sync);
      ++col;
    }
    std::printf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", l.name, t[0][0] * 1e3, t[1][0] * 1e3,
                t[1][0] / t[0][0], t[0][1] * 1e3, t[1][1] * 1e3, t[1][1] / t[0][1]);
    std::fflush(stdout);
  }
  if (!profile) return 0;
  // Device time per op (kernel) on opencl:0, one pass each after a warm-up.
  vnn::profiler::TableOptions opts;
  opts.group_by_shape = true;
  for (const Layer& l : layers) {
    Operands a = operands(l, cl);
    vnn::conv2d(a.x, a.w, a.b, 1, 1);
    backward(a);
    vnn::synchronize(cl);
    for (int pass = 0; pass < 2; ++pass) {
      vnn::profiler::Profile p;
      if (pass == 0) vnn::conv2d(a.x, a.w, a.b, 1, 1);
      else backward(a);
      p.stop();
      std::printf("\n### %s, %s on opencl:0: device time per op\n\n%s", l.name, pass ? "backward" : "forward",
                  p.table(opts).c_str());
    }
  }
  return 0;
}
