// DataLoader throughput on Fashion-MNIST: batches/s and MB/s for
// workers in {0, 1, 2} x pin_memory x non_blocking, delivering onto the
// best device. usage: dataloader_tuning [--samples N] [--batch-size B] [--root DIR]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "vnn/vnn.h"

int main(int argc, char** argv) {
  int64_t samples = 20000, batch = 64;
  std::string root;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--samples")) samples = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--batch-size")) batch = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--root")) root = argv[i + 1];
    else { std::fprintf(stderr, "unknown option %s\n", argv[i]); return 2; }
  }
  try {
    vnn::Device dev = vnn::best_device();
    auto train = std::make_shared<vnn::data::FashionMNIST>(root, true, samples);
    std::printf("Fashion-MNIST from %s: %lld samples, batch %lld, delivering to %s\n",
                vnn::data::fashion_mnist_root(root).c_str(), (long long)train->size(), (long long)batch,
                dev.str().c_str());
    std::printf("%-8s %-6s %-13s %12s %10s\n", "workers", "pin", "non_blocking", "batches/s", "MB/s");
    for (int workers : {0, 1, 2})
      for (bool pin : {false, true})
        for (bool nb : {false, true}) {
          vnn::data::DataLoaderOptions o;
          o.batch_size = batch;
          o.shuffle = true;
          o.num_workers = workers;
          o.pin_memory = pin;
          o.non_blocking = nb;
          o.device = dev;
          vnn::data::DataLoader loader(train, o);
          auto t0 = std::chrono::steady_clock::now();
          int64_t batches = 0;
          double bytes = 0;
          for (auto& b : loader) {
            ++batches;
            bytes += double(b.data.nbytes() + b.target.nbytes());
          }
          vnn::synchronize(dev);
          double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          std::printf("%-8d %-6s %-13s %12.1f %10.1f\n", workers, pin ? "yes" : "no", nb ? "yes" : "no",
                      double(batches) / s, bytes / s / 1e6);
        }
  } catch (const vnn::Error& e) {
    std::fprintf(stderr, "dataloader_tuning: %s\n", e.what());
    return 1;
  }
  return 0;
}
