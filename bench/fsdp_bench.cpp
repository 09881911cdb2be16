// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// FSDP training step time and peak memory per rank: nanoGPT's model
// (examples/gpt_model.hpp), each block a unit, Adam, float32, on random
// tokens; one rank per process.
//   vnn-run --nproc-per-node 2 build/bin/fsdp_bench --n-layer 4 --n-embd 192 --steps 10
// Rank 0 prints one line (bench/fsdp_compare.sh reads it):
//   vnn fsdp ranks <n> params <P> step_ms <median> peak_rss_mib <max over ranks> peak_alloc_mib <max over ranks>
// peak_rss_mib: the growth of the process's resident set from just before
// the model is built to the end (VmHWM after a reset, minus VmRSS then),
// the figure bench/fsdp_bench_torch.py reports for PyTorch's FSDP2 too;
// peak_alloc_mib: vnn's allocator peak of live tensor bytes.
#include <vnn/distributed.h>
#include <vnn/nn/fsdp.h>
#include <vnn/vnn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "gpt_model.hpp"
#include "options.hpp"

namespace {

// VmRSS or VmHWM of this process, in bytes.
double status_bytes(const char* key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.compare(0, std::string(key).size(), key) == 0) return std::stod(line.substr(line.find(':') + 1)) * 1024;
  return 0;
}

void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }

}  // namespace

int main(int argc, char** argv) {
  try {
    int64_t n_layer = 4, n_embd = 192, n_head = 4, block = 64, batch = 4, vocab = 96;
    int steps = 10, warmup = 2;
    vnn_bench::parse_options(argc, argv,
                             {{"--n-layer", &n_layer}, {"--n-embd", &n_embd}, {"--n-head", &n_head},
                              {"--block-size", &block}, {"--batch", &batch}, {"--steps", &steps},
                              {"--warmup", &warmup}});
    vnn::distributed::init_process_group();
    const int rank = vnn::distributed::rank(), world = vnn::distributed::world_size();
    vnn::Device dev("cpu", 0);
    vnn::manual_seed(uint64_t(100 + rank));
    std::vector<vnn::Tensor> xs, ys;
    for (int k = 0; k < 4; ++k) {
      xs.push_back(vnn::randint(vocab, {batch, block}, vnn::TensorOptions().with(vnn::kInt64)).to(dev));
      ys.push_back(vnn::randint(vocab, {batch, block}, vnn::TensorOptions().with(vnn::kInt64)).to(dev));
    }
    vnn::distributed::barrier();
    const double rss0 = status_bytes("VmRSS");
    reset_peak_rss();
    vnn::reset_peak_memory_stats(dev);

    vnn::manual_seed(0);
    auto model = std::make_shared<gpt::GPTImpl>(gpt::GPTConfig{vocab, block, n_layer, n_head, n_embd, 0.0});
    const int64_t params = model->num_parameters();
    vnn::nn::FSDPOptions o;
    o.auto_wrap_policy = vnn::nn::wrap_module_types<gpt::BlockImpl>();
    auto fsdp = vnn::nn::fully_shard(model, o);
    vnn::optim::Adam opt(fsdp->parameters(), vnn::optim::AdamOptions(1e-3));
    std::vector<double> times;
    for (int s = 0; s < warmup + steps; ++s) {
      auto t0 = std::chrono::steady_clock::now();
      opt.zero_grad();
      vnn::Tensor logits = fsdp->forward(xs[size_t(s) % xs.size()]);
      vnn::nn::cross_entropy(logits.view({-1, vocab}), ys[size_t(s) % ys.size()].view({-1})).backward();
      opt.step();
      vnn::synchronize(dev);
      if (s >= warmup) times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    // The slowest rank's time per step, and the largest peak.
    vnn::Tensor t = vnn::from_vector<double>(times, {int64_t(times.size())});
    vnn::distributed::all_reduce(t, vnn::distributed::ReduceOp::max);
    std::vector<double> v = t.to_vector<double>();
    std::sort(v.begin(), v.end());
    const double rss = status_bytes("VmHWM") - rss0;
    const double alloc = double(vnn::memory_stats(dev).peak_allocated);
    vnn::Tensor peaks = vnn::from_vector<double>({rss, alloc}, {2});
    vnn::distributed::all_reduce(peaks, vnn::distributed::ReduceOp::max);
    auto p = peaks.to_vector<double>();
    if (rank == 0)
      std::printf("vnn fsdp ranks %d params %lld step_ms %.1f peak_rss_mib %.1f peak_alloc_mib %.1f\n", world,
                  (long long)params, 1e3 * v[v.size() / 2], p[0] / 1048576.0, p[1] / 1048576.0);
    vnn::distributed::destroy_process_group();
    return 0;
  } catch (const vnn::Error& e) {
    std::fprintf(stderr, "fsdp_bench: %s\n", e.what());
    return 1;
  }
}
