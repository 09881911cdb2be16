// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DataLoader throughput on Fashion-MNIST: batches/s and MB/s for
// workers in {0, 1, 2} x pin_memory x non_blocking, delivering onto the
// best device (or --device; VNN_DEVICE also picks it), with the pinned host
// blocks each pass took from the backend and the peak pinned bytes.
// usage: dataloader_tuning [--samples N] [--batch-size B] [--root DIR] [--device D] [--workers W]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "vnn/vnn.h"

int main(int argc, char** argv) {
  int64_t samples = 20000, batch = 64;
  int only_workers = -1;  // -1: 0, 1 and 2
  std::string root, device;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--samples")) samples = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--batch-size")) batch = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--root")) root = argv[i + 1];
    else if (!std::strcmp(argv[i], "--device")) device = argv[i + 1];
    else if (!std::strcmp(argv[i], "--workers")) only_workers = std::atoi(argv[i + 1]);
    else { std::fprintf(stderr, "unknown option %s\n", argv[i]); return 2; }
  }
  try {
    vnn::Device dev = device.empty() ? vnn::best_device() : vnn::Device(device);
    auto train = std::make_shared<vnn::data::FashionMNIST>(root, true, samples);
    std::printf("Fashion-MNIST from %s: %lld samples, batch %lld, delivering to %s\n",
                vnn::data::fashion_mnist_root(root).c_str(), (long long)train->size(), (long long)batch,
                dev.str().c_str());
    std::printf("%-8s %-6s %-13s %12s %10s %14s %12s\n", "workers", "pin", "non_blocking", "batches/s", "MB/s",
                "pinned allocs", "pinned MiB");
    for (int workers : {0, 1, 2})
      for (bool pin : {false, true})
        for (bool nb : {false, true}) {
          if (only_workers >= 0 && workers != only_workers) continue;
          vnn::data::DataLoaderOptions o;
          o.batch_size = batch;
          o.shuffle = true;
          o.num_workers = workers;
          o.pin_memory = pin;
          o.non_blocking = nb;
          o.device = dev;
          vnn::data::DataLoader loader(train, o);
          const vnn::HostMemoryStats h0 = vnn::host_memory_stats();
          vnn::reset_peak_host_memory_stats();
          auto t0 = std::chrono::steady_clock::now();
          int64_t batches = 0;
          double bytes = 0;
          for (auto& b : loader) {
            ++batches;
            bytes += double(b.data.nbytes() + b.target.nbytes());
          }
          vnn::synchronize(dev);
          double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          const vnn::HostMemoryStats h1 = vnn::host_memory_stats();
          std::printf("%-8d %-6s %-13s %12.1f %10.1f %14llu %12.2f\n", workers, pin ? "yes" : "no", nb ? "yes" : "no",
                      double(batches) / s, bytes / s / 1e6,
                      (unsigned long long)(h1.backend_allocations - h0.backend_allocations),
                      double(h1.peak_reserved) / (1024.0 * 1024.0));
        }
  } catch (const vnn::Error& e) {
    std::fprintf(stderr, "dataloader_tuning: %s\n", e.what());
    return 1;
  }
  return 0;
}
