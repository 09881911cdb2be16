// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Profiles a few training steps of the Fashion-MNIST CNN (the model of
// train_fashion_mnist) on the best device: prints the op table sorted by
// device time, the per-phase split, memory statistics, and writes a Chrome
// trace (open it in ui.perfetto.dev or chrome://tracing).
//
//   profile_training [--device opencl:0] [--steps 5] [--batch-size 64]
//                    [--workers 2] [--trace profile_trace.json] [--data DIR]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include "vnn/vnn.h"

namespace {

struct Config {
  std::string device, data, trace = "profile_trace.json";
  int steps = 5, workers = 2, rows = 25;
  int64_t batch = 64;
};

Config parse(int argc, char** argv) {
  Config c;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw vnn::ValueError("option " + a + " needs a value");
      return argv[++i];
    };
    if (a == "--device") c.device = value();
    else if (a == "--steps") c.steps = std::stoi(value());
    else if (a == "--batch-size") c.batch = std::stoll(value());
    else if (a == "--workers") c.workers = std::stoi(value());
    else if (a == "--trace") c.trace = value();
    else if (a == "--data") c.data = value();
    else if (a == "--rows") c.rows = std::stoi(value());
    else {
      std::cout << "usage: profile_training [--device D] [--steps N] [--batch-size B] [--workers W] "
                   "[--trace FILE] [--data DIR] [--rows N]\n";
      throw vnn::ValueError("unknown option " + a);
    }
  }
  if (c.steps < 1) throw vnn::ValueError("--steps must be >= 1");
  return c;
}

// The CNN of train_fashion_mnist.
vnn::nn::Sequential make_cnn() {
  using namespace vnn::nn;
  return Sequential(Conv2d(Conv2dOptions(1, 32, 3).padding(1)), ReLU(), MaxPool2d(2),
                    Conv2d(Conv2dOptions(32, 64, 3).padding(1)), ReLU(), MaxPool2d(2),
                    Flatten(), Linear(64 * 7 * 7, 128), ReLU(), Dropout(0.25), Linear(128, 10));
}

}  // namespace

int main(int argc, char** argv) {
  namespace prof = vnn::profiler;
  try {
    Config cfg = parse(argc, argv);
    vnn::Device device = cfg.device.empty() ? vnn::best_device() : vnn::Device(cfg.device);
    const auto& info = vnn::device_info(device);
    std::cout << "Profiling on " << device << " (" << info.name << ")\n";

    vnn::manual_seed(0);
    // One batch more than profiled (the first step warms up kernel builds
    // and allocator blocks outside the profile), plus enough that the
    // workers still build batches while profiling (their trace tracks).
    const int64_t batches = cfg.steps + 1 + 4 * std::max(1, cfg.workers);
    auto train_set = std::make_shared<vnn::data::FashionMNIST>(cfg.data, true, cfg.batch * batches);
    vnn::data::DataLoaderOptions lo;
    lo.batch_size = cfg.batch;
    lo.shuffle = true;
    lo.num_workers = cfg.workers;
    lo.device = device;
    lo.pin_memory = !info.host_accessible;
    lo.non_blocking = !info.host_accessible;
    vnn::data::DataLoader loader(train_set, lo);

    auto model = make_cnn();
    model->to(device);
    vnn::optim::Adam opt(model->parameters(), vnn::optim::AdamOptions(1e-3));

    std::unique_ptr<prof::Profile> profile;
    int step = 0;
    double last_loss = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (auto& batch : loader) {
      if (step == 1) {
        vnn::synchronize(device);
        vnn::reset_peak_memory_stats(device);
        profile = std::make_unique<prof::Profile>();
        t0 = std::chrono::steady_clock::now();
      }
      prof::Range r("train_step");
      opt.zero_grad();
      vnn::Tensor loss = vnn::nn::cross_entropy(model(batch.data), batch.target);
      loss.backward();
      opt.step();
      ++step;
      if (step == cfg.steps + 1) {
        last_loss = loss.item();
        break;
      }
    }
    if (!profile) throw vnn::ValueError("profile_training: the data set gave fewer than 2 batches");
    profile->stop();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%d profiled steps in %.3f s, last loss %.4f\n\n", step - 1, wall, last_loss);

    prof::TableOptions by_device;
    by_device.sort = prof::SortBy::device_total;
    by_device.row_limit = cfg.rows;
    std::cout << "Ops sorted by device time (device times from " << info.name << " events):\n"
              << profile->table(by_device) << "\n";

    // Where the step goes by phase.
    double phase_host[3] = {0, 0, 0}, phase_dev[3] = {0, 0, 0};
    for (const auto& e : profile->events())
      if (e.kind == prof::EventKind::op) {
        phase_host[int(e.phase)] += e.host_us;
        phase_dev[int(e.phase)] += e.device_us > 0 ? e.device_us : 0;
      }
    std::cout << "By autograd phase:\n";
    for (int ph = 0; ph < 3; ++ph)
      std::printf("  %-10s host %10.3f ms   device %10.3f ms\n", prof::phase_name(prof::Phase(ph)),
                  phase_host[ph] * 1e-3, phase_dev[ph] * 1e-3);

    for (const auto& m : profile->memory())
      std::printf("\nMemory on %s during the profile: peak %.2f MiB allocated, %.2f MiB reserved now\n",
                  m.device.c_str(), double(m.peak_allocated) / (1024.0 * 1024.0),
                  double(m.reserved) / (1024.0 * 1024.0));
    std::cout << vnn::memory_summary(device);

    profile->export_chrome_trace(cfg.trace);
    std::cout << "\nWrote trace " << cfg.trace << " (" << profile->events().size()
              << " events): open it in ui.perfetto.dev or chrome://tracing\n";
    return 0;
  } catch (const vnn::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
