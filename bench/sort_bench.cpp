// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// sort and unique on 1M and 16M float32 elements, on each device given
// (default cpu:0 and opencl:0), beside a plain copy of the same bytes on
// that device in the same run (the machine's practical bandwidth).
// bench/sort_compare.sh puts PyTorch 2.x's CPU beside it
// (bench/sort_bench_torch.py).
//   sort_bench [--samples S] [--max-n N] [--device cpu:0 ...]
// Prints one line per (device, op, n): device op n ms Melem/s copy_GB/s.
//   sort: one row of n (values and int64 indices); sort_rows1024: rows of
//   1024; unique: n values with about n / 8 distinct (sorted, no inverse).
#include <cstdio>
#include <string>
#include <vector>

#include "options.hpp"
#include "timing.hpp"
#include "vnn/vnn.h"

namespace {

void report(const std::string& dev_name, const char* op, int64_t n, double seconds, double copy_gbs) {
  std::printf("%s %s %lld %.3f %.1f %.2f\n", dev_name.c_str(), op, static_cast<long long>(n), seconds * 1e3,
              double(n) / seconds / 1e6, copy_gbs);
  std::fflush(stdout);
}

void run_device(const vnn::Device& dev, int samples, int64_t max_n) {
  const std::string name = dev.str();
  auto sync = [&] { vnn::synchronize(dev); };
  for (int64_t n : {int64_t(1) << 20, int64_t(1) << 24}) {
    if (n > max_n) continue;
    const int iters = n <= (int64_t(1) << 20) ? 5 : 1;
    vnn::Generator gen(7);
    vnn::Tensor x = vnn::rand({n}, vnn::TensorOptions(dev), &gen);
    vnn::Tensor repeats = vnn::floor(vnn::mul(x, double(n / 8)));
    vnn::Tensor dst = vnn::empty({n}, vnn::TensorOptions(dev));
    const double copy_s = vnn_bench::median_seconds(samples, iters * 4, [&] { dst.copy_(x); }, sync);
    const double copy_gbs = 8.0 * double(n) / copy_s / 1e9;
    std::tuple<vnn::Tensor, vnn::Tensor> sorted;
    std::tuple<vnn::Tensor, vnn::Tensor, vnn::Tensor> distinct;
    report(name, "sort", n, vnn_bench::median_seconds(samples, iters, [&] { sorted = vnn::sort(x); }, sync),
           copy_gbs);
    vnn::Tensor rows = x.view({n / 1024, 1024});
    report(name, "sort_rows1024", n,
           vnn_bench::median_seconds(samples, iters, [&] { sorted = vnn::sort(rows, 1); }, sync), copy_gbs);
    report(name, "unique", n,
           vnn_bench::median_seconds(samples, iters, [&] { distinct = vnn::unique(repeats); }, sync), copy_gbs);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    int samples = 5;
    int64_t max_n = int64_t(1) << 24;
    std::vector<std::string> devices;
    std::vector<char*> rest{argv[0]};
    for (int i = 1; i < argc; ++i) {
      if (std::string(argv[i]) == "--device" && i + 1 < argc) devices.push_back(argv[++i]);
      else rest.push_back(argv[i]);
    }
    vnn_bench::parse_options(int(rest.size()), rest.data(), {{"--samples", &samples}, {"--max-n", &max_n}});
    if (devices.empty()) devices = {"cpu:0", "opencl:0"};
    std::printf("# sort_bench: device op n ms Melem/s copy_GB/s\n");
    for (const std::string& d : devices) {
      try {
        run_device(vnn::Device(d), samples, max_n);
      } catch (const vnn::DeviceNotFound& e) {
        std::printf("# %s skipped: %s\n", d.c_str(), e.what());
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sort_bench: %s\n", e.what());
    return 1;
  }
}
