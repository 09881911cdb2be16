// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The tutorial's "CPU vs GPU" matmul timing, on every device found:
// n x n float32 products, GFLOP/s after a warm-up, timed to completion.
#include <vnn/vnn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>

int main(int argc, char** argv) {
  try {
    int64_t n = argc > 1 ? std::atoll(argv[1]) : 1024;
    int reps = argc > 2 ? std::atoi(argv[2]) : 5;
    std::printf("%-10s %8s %12s %10s\n", "device", "n", "ms/matmul", "GFLOP/s");
    for (const auto& d : vnn::devices()) {
      vnn::Tensor a = vnn::randn({n, n}, d.device), b = vnn::randn({n, n}, d.device);
      vnn::Tensor c = vnn::matmul(a, b);  // warm-up: kernel builds, caches
      vnn::synchronize(d.device);
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < reps; ++i) c = vnn::matmul(a, b);
      vnn::synchronize(d.device);
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / reps;
      std::printf("%-10s %8lld %12.3f %10.1f\n", d.device.str().c_str(), static_cast<long long>(n), ms,
                  2.0 * double(n) * double(n) * double(n) / (ms * 1e6));
    }
    return 0;
  } catch (const vnn::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
