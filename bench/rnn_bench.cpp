// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// rnn_bench: LSTM and GRU (2 layers, input and hidden 512, sequence 128,
// batch 32) on one device, float32: one training step (forward, a sum loss,
// backward, SGD) and the batch-1 inference latency (eval, no grad, the same
// 128 steps), through the fused RNN_CELL kernel and through the composed
// path backends without it take. bench/rnn_bench_torch.py times PyTorch's
// torch.nn.LSTM / GRU on the same shapes; bench/rnn_compare.sh runs both.
//   rnn_bench [--device cpu:0] [--samples 5] [--seq 128] [--batch 32] [--hidden 512]
// Prints one line per module: kind train_ms infer_ms composed_train_ms
// composed_infer_ms (medians, bench/timing.hpp's rule), and '#' lines.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

#include "timing.hpp"
#include "vnn/nn/rnn.h"
#include "vnn/optim.h"
#include "vnn/vnn.h"

using namespace vnn;

namespace {

struct Sizes {
  int64_t seq = 128, batch = 32, hidden = 512, layers = 2;
};

// Median ms of a training step and of a batch-1 inference of `forward`.
std::pair<double, double> time_module(nn::Module& m, const std::function<Tensor(const Tensor&)>& forward,
                                      const Sizes& s, const Device& dev, int samples) {
  Generator gen(1);
  Tensor x = rand({s.seq, s.batch, s.hidden}, TensorOptions(dev), &gen);
  Tensor x1 = rand({s.seq, 1, s.hidden}, TensorOptions(dev), &gen);
  optim::SGD opt(m.parameters(), optim::SGDOptions(1e-3));
  auto sync = [&] { synchronize(dev); };
  m.train();
  const double train = vnn_bench::median_seconds(samples, 1, [&] {
    opt.zero_grad();
    sum(forward(x)).backward();
    opt.step();
  }, sync);
  m.eval();
  NoGradGuard no_grad;
  const double infer = vnn_bench::median_seconds(samples, 3, [&] { forward(x1); }, sync);
  return {train * 1e3, infer * 1e3};
}

}  // namespace

int main(int argc, char** argv) {
  std::string device = "cpu:0";
  int samples = 5;
  Sizes s;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--device")) device = argv[i + 1];
    else if (!std::strcmp(argv[i], "--samples")) samples = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--seq")) s.seq = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--batch")) s.batch = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--hidden")) s.hidden = std::atoll(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: rnn_bench [--device cpu:0] [--samples 5] [--seq 128] [--batch 32] [--hidden 512]\n");
      return 2;
    }
  }
  const Device dev(device);
  std::printf("# rnn_bench on %s: 2 layers, input = hidden = %lld, seq %lld, train batch %lld, inference batch 1, "
              "float32, median of %d\n",
              device.c_str(), (long long)s.hidden, (long long)s.seq, (long long)s.batch, samples);
  std::printf("# kind train_ms infer_ms composed_train_ms composed_infer_ms\n");
  Generator gen(0);
  nn::LSTM lstm(nn::LSTMOptions(s.hidden, s.hidden).num_layers(s.layers), &gen);
  nn::GRU gru(nn::GRUOptions(s.hidden, s.hidden).num_layers(s.layers), &gen);
  lstm->to(dev);
  gru->to(dev);
  auto run_lstm = [&](const Tensor& x) { return std::get<0>(lstm(x)); };
  auto run_gru = [&](const Tensor& x) { return std::get<0>(gru(x)); };
  for (int k = 0; k < 2; ++k) {
    nn::Module& m = k == 0 ? static_cast<nn::Module&>(*lstm) : static_cast<nn::Module&>(*gru);
    std::function<Tensor(const Tensor&)> f = k == 0 ? std::function<Tensor(const Tensor&)>(run_lstm) : run_gru;
    nn::detail::set_fused_rnn_cell(true);
    auto [train, infer] = time_module(m, f, s, dev, samples);
    nn::detail::set_fused_rnn_cell(false);
    auto [ctrain, cinfer] = time_module(m, f, s, dev, samples);
    nn::detail::set_fused_rnn_cell(true);
    std::printf("%s %.2f %.3f %.2f %.3f\n", k == 0 ? "LSTM" : "GRU", train, infer, ctrain, cinfer);
    std::fflush(stdout);
  }
  return 0;
}
