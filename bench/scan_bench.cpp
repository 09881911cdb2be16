// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// cumsum and nonzero on 1M and 16M float32 elements, on each device given
// (default cpu:0 and opencl:0), beside a plain copy of the same bytes on
// that device in the same run: the copy's GB/s is the machine's practical
// bandwidth, and each op's GB/s (bytes it must read and write over its
// time) says how close to it the op runs. bench/scan_compare.sh puts
// PyTorch 2.x's CPU beside it (bench/scan_bench_torch.py).
//   scan_bench [--samples S] [--max-n N] [--device cpu:0 ...]
// Prints one line per (device, op, n): device op n ms GB/s copy_GB/s.
#include <cstdio>
#include <string>
#include <vector>

#include "options.hpp"
#include "timing.hpp"
#include "vnn/vnn.h"

namespace {

// ms and GB/s of `body` moving `bytes` per call on dev (median rule of timing.hpp).
void report(const std::string& dev_name, const char* op, int64_t n, double seconds, double bytes, double copy_gbs) {
  std::printf("%s %s %lld %.3f %.2f %.2f\n", dev_name.c_str(), op, static_cast<long long>(n), seconds * 1e3,
              bytes / seconds / 1e9, copy_gbs);
  std::fflush(stdout);
}

void run_device(const vnn::Device& dev, int samples, int64_t max_n) {
  const std::string name = dev.str();
  auto sync = [&] { vnn::synchronize(dev); };
  for (int64_t n : {int64_t(1) << 20, int64_t(1) << 24}) {
    if (n > max_n) continue;
    const int iters = n <= (int64_t(1) << 20) ? 20 : 3;
    vnn::Generator gen(7);
    // Values in [-1, 1); about half of them 0 after the relu, for nonzero.
    vnn::Tensor x = vnn::sub(vnn::mul(vnn::rand({n}, vnn::TensorOptions(dev), &gen), 2.0), 1.0);
    vnn::Tensor sparse = vnn::relu(x);
    vnn::Tensor dst = vnn::empty({n}, vnn::TensorOptions(dev));
    const double fbytes = double(n) * 4;
    const double copy_s = vnn_bench::median_seconds(samples, iters, [&] { dst.copy_(x); }, sync);
    const double copy_gbs = 2 * fbytes / copy_s / 1e9;
    report(name, "copy", n, copy_s, 2 * fbytes, copy_gbs);
    vnn::Tensor out;
    const double cs = vnn_bench::median_seconds(samples, iters, [&] { out = vnn::cumsum(x, 0); }, sync);
    report(name, "cumsum", n, cs, 2 * fbytes, copy_gbs);
    vnn::Tensor rows = x.view({n / 1024, 1024});
    const double cr = vnn_bench::median_seconds(samples, iters, [&] { out = vnn::cumsum(rows, 1); }, sync);
    report(name, "cumsum_rows1024", n, cr, 2 * fbytes, copy_gbs);
    const double nz = vnn_bench::median_seconds(samples, iters, [&] { out = vnn::nonzero(sparse); }, sync);
    report(name, "nonzero", n, nz, fbytes + 8.0 * double(out.size(0)), copy_gbs);
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
    std::printf("# scan_bench: device op n ms GB/s copy_GB/s (bytes: cumsum reads and writes 4n, nonzero reads 4n "
                "and writes 8 per hit)\n");
    for (const std::string& d : devices) {
      try {
        run_device(vnn::Device(d), samples, max_n);
      } catch (const vnn::DeviceNotFound& e) {
        std::printf("# %s skipped: %s\n", d.c_str(), e.what());
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scan_bench: %s\n", e.what());
    return 1;
  }
}
