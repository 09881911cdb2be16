// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One optimizer step on a float32 parameter of n elements (default 4M), on
// cpu:0 and opencl:0: the fused rules (SGD momentum, Adam, RMSprop,
// Adagrad: one kernel each) beside the composed ones (Adamax, NAdam, RAdam,
// Adadelta, ASGD, Rprop: a chain of vnn ops), and a plain copy of the
// parameter for the device's bandwidth.
//   optim_bench [--samples S] [--n N]
// Prints one line per (device, optimizer): device name n ms_per_step.
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "options.hpp"
#include "timing.hpp"
#include "vnn/optim.h"
#include "vnn/vnn.h"

namespace opt = vnn::optim;

namespace {

using Factory = std::function<std::unique_ptr<opt::Optimizer>(std::vector<vnn::Tensor>)>;

template <class O, class Options>
std::pair<const char*, Factory> entry(const char* name, Options o) {
  return {name, [o](std::vector<vnn::Tensor> p) { return std::unique_ptr<opt::Optimizer>(new O(std::move(p), o)); }};
}

void run_device(const vnn::Device& dev, int samples, int64_t n) {
  auto sync = [&] { vnn::synchronize(dev); };
  vnn::Generator gen(3);
  vnn::Tensor p = vnn::rand({n}, vnn::TensorOptions(dev), &gen);
  p.requires_grad_();
  p.set_grad(vnn::rand({n}, vnn::TensorOptions(dev), &gen).sub(0.5));
  vnn::Tensor dst = vnn::empty({n}, vnn::TensorOptions(dev));
  std::printf("%s copy %lld %.3f\n", dev.str().c_str(), static_cast<long long>(n),
              1e3 * vnn_bench::median_seconds(samples, 10, [&] { dst.copy_(p.detach()); }, sync));
  const std::vector<std::pair<const char*, Factory>> optimizers = {
      entry<opt::SGD>("SGD(momentum)", opt::SGDOptions(1e-3).momentum(0.9)),
      entry<opt::Adam>("Adam", opt::AdamOptions(1e-3)),
      entry<opt::RMSprop>("RMSprop", opt::RMSpropOptions(1e-3)),
      entry<opt::Adagrad>("Adagrad", opt::AdagradOptions(1e-3)),
      entry<opt::Adamax>("Adamax", opt::AdamaxOptions(1e-3)),
      entry<opt::NAdam>("NAdam", opt::NAdamOptions(1e-3)),
      entry<opt::RAdam>("RAdam", opt::RAdamOptions(1e-3)),
      entry<opt::Adadelta>("Adadelta", opt::AdadeltaOptions()),
      entry<opt::ASGD>("ASGD", opt::ASGDOptions(1e-3)),
      entry<opt::Rprop>("Rprop", opt::RpropOptions(1e-3)),
  };
  for (auto& [name, make] : optimizers) {
    auto o = make({p});
    const double s = vnn_bench::median_seconds(samples, 10, [&] { o->step(); }, sync);
    std::printf("%s %s %lld %.3f\n", dev.str().c_str(), name, static_cast<long long>(n), s * 1e3);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int samples = 5;
  int64_t n = int64_t(1) << 22;
  try {
    vnn_bench::parse_options(argc, argv, {{"--samples", &samples}, {"--n", &n}});
    for (const char* d : {"cpu:0", "opencl:0"}) {
      vnn::Device dev(d);
      if (!vnn::is_available(dev)) continue;
      run_device(dev, samples, n);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "optim_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
