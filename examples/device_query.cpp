// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// "Using device: ..." and a table of every device vnn found, with the
// backends that were skipped and why (the PyTorch tutorial's first cell).
#include <vnn/vnn.h>

#include <cstdio>
#include <iostream>

int main() {
  try {
    vnn::Device device = vnn::best_device();
    std::cout << "Using device: " << device << "\n\n";
    std::printf("%-10s %-40s %-12s %-8s %6s %10s\n", "device", "name", "type", "backend", "units", "memory");
    for (const auto& d : vnn::devices())
      std::printf("%-10s %-40.40s %-12s %-8s %6d %8.1f GiB\n", d.device.str().c_str(), d.name.c_str(),
                  vnn::name(d.type), d.plugin.c_str(), d.compute_units, double(d.total_memory) / (1 << 30));
    std::cout << "\n";
    for (const auto& r : vnn::backend_report())
      if (r.status != "ok") std::cout << r.backend << ": " << r.status << (r.detail.empty() ? "" : " - " + r.detail) << "\n";
    return 0;
  } catch (const vnn::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
