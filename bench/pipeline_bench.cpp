// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Pipeline bubble: the step time of ScheduleGPipe and Schedule1F1B against
// the schedule's ideal, one stage per rank.
//   vnn-run --nproc-per-node 2 build/bin/pipeline_bench [--microbatches 8] [--batch 512]
//           [--hidden 512] [--layers 8] [--steps 10]
// The model is an MLP of --layers Linear+ReLU blocks (float32) cut into
// equal stages, one per rank. `compute` is the time a stage takes for the
// forward and backward of every micro-batch on its own (no communication,
// no waiting, the other ranks idle meanwhile; the largest over the ranks). A pipeline of s stages and n
// micro-batches at best takes compute * (n + s - 1) / n: its bubble is
// (s - 1) / (n + s - 1) of the step. Rank 0 prints one line per schedule:
//   pipeline <schedule> stages S microbatches N step_ms T ideal_ms I bubble_ideal B bubble_measured M efficiency I/T
#include <vnn/distributed.h>
#include <vnn/distributed/pipelining.h>
#include <vnn/vnn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "options.hpp"

namespace {

namespace pp = vnn::distributed::pipelining;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

vnn::Tensor loss_fn(const vnn::Tensor& out, const vnn::Tensor& y) { return vnn::nn::mse_loss(out, y); }

}  // namespace

int main(int argc, char** argv) {
  try {
    int n = 8, layers = 8, steps = 10;
    int64_t batch = 512, hidden = 512;
    vnn_bench::parse_options(argc, argv,
                             {{"--microbatches", &n}, {"--batch", &batch}, {"--hidden", &hidden},
                              {"--layers", &layers}, {"--steps", &steps}});
    vnn::distributed::init_process_group();
    auto& pg = vnn::distributed::group();
    const int rank = pg.rank(), s = pg.size();
    vnn::Device dev = vnn::distributed::local_device();
    vnn::manual_seed(1);
    vnn::nn::Sequential model;
    for (int l = 0; l < layers; ++l) {
      model->push_back(vnn::nn::Linear(hidden, hidden));
      model->push_back(vnn::nn::ReLU());
    }
    std::vector<size_t> cuts;
    for (int k = 1; k < s; ++k) cuts.push_back(size_t(2 * layers * k / s));
    auto parts = pp::split_sequential(model, cuts);
    pp::PipelineStage stage(parts[size_t(rank)], rank, s, dev, pg);
    vnn::Generator g(3);
    vnn::Tensor x = vnn::randn({batch, hidden}, {}, &g), y = vnn::randn({batch, hidden}, {}, &g);
    vnn::optim::SGD opt(stage.module()->parameters(), vnn::optim::SGDOptions(1e-3));

    // This stage alone: the forward and backward of every micro-batch, on
    // inputs and output gradients made beforehand.
    const int64_t rows = batch / n;
    std::vector<vnn::Tensor> ins, grads;
    for (int mb = 0; mb < n; ++mb) {
      ins.push_back(vnn::randn({rows, hidden}, vnn::TensorOptions(dev), &g));
      grads.push_back(vnn::randn({rows, hidden}, vnn::TensorOptions(dev), &g));
    }
    vnn::Tensor y_mb = y.narrow(0, 0, rows).to(dev);
    auto compute_once = [&] {
      vnn::synchronize(dev);
      auto t = Clock::now();
      for (int mb = 0; mb < n; ++mb) {
        vnn::Tensor in = ins[size_t(mb)].detach();
        if (rank > 0) in.requires_grad_(true);
        vnn::Tensor out = stage.module()->forward(in);
        if (stage.is_last()) (loss_fn(out, y_mb) * (1.0 / n)).backward();
        else out.backward(grads[size_t(mb)]);
      }
      vnn::synchronize(dev);
      return ms_since(t);
    };
    const char* names[2] = {"gpipe", "1f1b"};
    std::unique_ptr<pp::PipelineSchedule> scheds[2] = {std::make_unique<pp::ScheduleGPipe>(stage, n, loss_fn),
                                                       std::make_unique<pp::Schedule1F1B>(stage, n, loss_fn)};
    // Alternating, so that a loaded machine's drift hits all three alike.
    std::vector<double> c, t[2];
    int peak[2] = {0, 0};
    for (int k = 0; k < steps + 2; ++k) {
      for (int which = 0; which < 2; ++which) {
        pg.barrier().wait();
        auto t0 = Clock::now();
        opt.zero_grad();
        scheds[which]->step(x, y);
        opt.step();
        vnn::synchronize(dev);
        pg.barrier().wait();
        if (k >= 2) t[which].push_back(ms_since(t0));  // two warm-up steps
        peak[which] = stage.peak_in_flight();
      }
      // The stages' compute-only passes in turn, so that none shares the cores with another.
      for (int turn = 0; turn < s; ++turn) {
        pg.barrier().wait();
        if (turn == rank) {
          opt.zero_grad();
          double ms = compute_once();
          if (k >= 2) c.push_back(ms);
        }
      }
      pg.barrier().wait();
    }
    vnn::Tensor compute = vnn::full({1}, median(c), vnn::TensorOptions().with(vnn::kFloat64));
    pg.allreduce(compute, vnn::distributed::ReduceOp::max).wait();
    const double compute_ms = compute.item();
    const double bubble = double(s - 1) / double(n + s - 1), ideal = compute_ms * double(n + s - 1) / n;
    for (int which = 0; which < 2; ++which) {
      double step_ms = median(t[which]);
      if (rank == 0)
        std::printf("pipeline %s stages %d microbatches %d step_ms %.2f ideal_ms %.2f compute_ms %.2f "
                    "bubble_ideal %.3f bubble_measured %.3f efficiency %.2f peak_in_flight(stage0) %d\n",
                    names[which], s, n, step_ms, ideal, compute_ms, bubble, 1.0 - compute_ms / step_ms,
                    ideal / step_ms, peak[which]);
    }
    vnn::distributed::destroy_process_group();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pipeline_bench: %s\n", e.what());
    return 1;
  }
}
