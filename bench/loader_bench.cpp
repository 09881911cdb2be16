// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// loader_bench: does the DataLoader keep up with the step it feeds? In one
// run, on cpu:0, Fashion-MNIST, batch 64:
//  (a) the loader alone, batches/s, for 0 / 1 / 2 workers, on FashionMNIST
//      itself (its rows are copied straight into the batch) and through a
//      Subset of all its examples (the example-by-example path any other
//      dataset takes: the loader's cost before the row path existed);
//  (b) the MLP 784-256-128-10 training step alone (Adam, cross entropy) on
//      batches already built, batches/s: the fastest step it feeds;
//  (c) the step fed by the loader (2 workers), batches/s.
// The target (issue 13): (a) at least 3x (b). Every figure is the median
// of 3 runs.
//   loader_bench [--batches N] [--data DIR]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "vnn/vnn.h"

namespace {

using clk = std::chrono::steady_clock;
double secs(clk::time_point a, clk::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// CPU seconds of the whole process (all threads): on a shared machine the
// CPU cost per batch is stable where wall time is not.
double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// A rate measured both ways: batches per wall second and per CPU second.
struct Rate {
  double wall = 0, cpu = 0;
};

vnn::data::DataLoaderOptions options(int workers) {
  vnn::data::DataLoaderOptions o;
  o.batch_size = 64;
  o.shuffle = true;
  o.num_workers = workers;
  o.device = vnn::Device("cpu");
  return o;
}

// Batches/s of one pass over at most `batches` batches, only touching them.
Rate loader_rate(const vnn::data::DatasetPtr& ds, int workers, int64_t batches) {
  vnn::data::DataLoader loader(ds, options(workers));
  int64_t n = 0;
  double checksum = 0;
  double c0 = cpu_now();
  auto t0 = clk::now();
  for (auto& b : loader) {
    checksum += double(b.target.numel());
    if (++n == batches) break;
  }
  double s = secs(t0, clk::now()), c = cpu_now() - c0;
  if (checksum <= 0) std::fprintf(stderr, "loader_bench: empty batches\n");
  return {double(n) / s, double(n) / c};
}

struct Mlp : vnn::nn::Module {
  vnn::nn::Linear l1{nullptr}, l2{nullptr}, l3{nullptr};
  Mlp() {
    l1 = register_module("l1", vnn::nn::Linear(784, 256));
    l2 = register_module("l2", vnn::nn::Linear(256, 128));
    l3 = register_module("l3", vnn::nn::Linear(128, 10));
  }
  vnn::Tensor forward(const vnn::Tensor& x) {
    vnn::Tensor h = x.reshape({x.sizes()[0], 784});
    return l3->forward(vnn::relu(l2->forward(vnn::relu(l1->forward(h)))));
  }
};

// Batches/s of the MLP step, on `pre` (batches built beforehand) or fed by
// `loader` when it is given.
Rate step_rate(const std::vector<vnn::data::Batch>& pre, vnn::data::DataLoader* loader, int64_t batches) {
  vnn::manual_seed(0);
  auto net = std::make_shared<Mlp>();
  vnn::optim::Adam opt(net->parameters(), vnn::optim::AdamOptions(1e-3));
  auto step = [&](const vnn::data::Batch& b) {
    opt.zero_grad();
    vnn::Tensor loss = vnn::nn::cross_entropy(net->forward(b.data), b.target);
    loss.backward();
    opt.step();
    return loss;
  };
  step(pre[0]);  // warm the allocator
  vnn::Tensor loss;
  int64_t n = 0;
  double c0 = cpu_now();
  auto t0 = clk::now();
  if (loader) {
    for (auto& b : *loader) {
      loss = step(b);
      if (++n == batches) break;
    }
  } else {
    for (; n < batches; ++n) loss = step(pre[size_t(n) % pre.size()]);
  }
  (void)loss.item();
  return {double(n) / secs(t0, clk::now()), double(n) / (cpu_now() - c0)};
}

// The median of three runs of f, each way: one run on a shared machine can
// lose a scheduler slice anywhere.
Rate median3(const std::function<Rate()>& f) {
  Rate r[3] = {f(), f(), f()};
  double w[3] = {r[0].wall, r[1].wall, r[2].wall}, c[3] = {r[0].cpu, r[1].cpu, r[2].cpu};
  std::sort(w, w + 3);
  std::sort(c, c + 3);
  return {w[1], c[1]};
}

}  // namespace

int main(int argc, char** argv) {
  int64_t batches = 400;
  std::string root;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--batches") && i + 1 < argc) batches = std::max(10, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--data") && i + 1 < argc) root = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--batches N] [--data DIR]\n", argv[0]);
      return 2;
    }
  }
  try {
    auto train = std::make_shared<vnn::data::FashionMNIST>(root, true);
    std::vector<int64_t> all(size_t(train->size()));
    std::iota(all.begin(), all.end(), 0);
    auto subset = std::make_shared<vnn::data::Subset>(train, all);
    std::printf("# loader_bench: Fashion-MNIST (%lld train), batch 64, %lld batches per figure, cpu:0\n\n",
                (long long)train->size(), (long long)batches);
    std::printf("## (a) loader alone, batches per wall second / per CPU second of the process\n\n| workers | "
                "FashionMNIST (row copies) | Subset of it (example by example) | row / example (CPU) |\n|---|---|---|---|\n");
    Rate rows0;
    for (int w : {0, 1, 2}) {
      Rate r = median3([&] { return loader_rate(train, w, batches); });
      Rate e = median3([&] { return loader_rate(subset, w, batches); });
      if (w == 0) rows0 = r;
      std::printf("| %d | %.0f / %.0f | %.0f / %.0f | %.1f |\n", w, r.wall, r.cpu, e.wall, e.cpu, r.cpu / e.cpu);
      std::fflush(stdout);
    }
    std::vector<vnn::data::Batch> pre;
    {
      vnn::data::DataLoader l(train, options(0));
      for (auto& b : l) {
        pre.push_back(b);
        if (pre.size() == 64) break;
      }
    }
    Rate alone = median3([&] { return step_rate(pre, nullptr, batches); });
    std::printf("\n## (b, c) MLP 784-256-128-10 step, Adam, batches per wall second / per CPU second\n\n| step alone "
                "(batches built before) | fed by the loader, 0 workers | 1 worker | 2 workers |\n|---|---|---|---|\n"
                "| %.0f / %.0f |", alone.wall, alone.cpu);
    for (int w : {0, 1, 2}) {
      Rate fed = median3([&] {
        vnn::data::DataLoader fed_loader(train, options(w));
        return step_rate(pre, &fed_loader, batches);
      });
      std::printf(" %.0f / %.0f |", fed.wall, fed.cpu);
    }
    std::printf("\n\nloader (row copies, 0 workers: one thread) / step, per CPU second: %.1f (target >= 3; with "
                "OMP_NUM_THREADS=1 both figures are one thread's work)\n", rows0.cpu / alone.cpu);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "loader_bench: %s\n", e.what());
    return 1;
  }
}
