// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The LibTorch half of train_bench, as a module that train_bench dlopens
// after vnn's CPU plugin is loaded. Linked into train_bench directly,
// LibTorch would load the pthread OpenBLAS (libopenblas.so.0) at start-up
// and the plugin, asking for the same soname, would get that one instead of
// the OpenMP build it links: vnn would then be measured with two competing
// thread pools, which no vnn-only program has. Loaded later, both sides use
// the OpenMP build on one libgomp pool. C entry points only (train_bench.h
// style: plain structs), so no LibTorch header reaches train_bench.cpp.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "train_bench_torch.h"

namespace {

using clk = std::chrono::steady_clock;
double secs(clk::time_point a, clk::time_point b) { return std::chrono::duration<double>(b - a).count(); }
double secs_since(clk::time_point a) { return secs(a, clk::now()); }

double rss_hwm_mib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::atof(line.c_str() + 6) / 1024.0;
  return 0;
}
void reset_rss_hwm() { std::ofstream("/proc/self/clear_refs") << "5"; }

double per_call(int inner, const std::function<void()>& f) {
  f();
  std::vector<double> t;
  for (int r = 0; r < 5; ++r) {
    auto t0 = clk::now();
    for (int i = 0; i < inner; ++i) f();
    t.push_back(secs(t0, clk::now()) / inner);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct TMlp : torch::nn::Module {
  torch::nn::Linear l1{784, 256}, l2{256, 128}, l3{128, 10};
  TMlp() { register_module("l1", l1); register_module("l2", l2); register_module("l3", l3); }
  torch::Tensor forward(torch::Tensor x) {
    x = x.view({x.size(0), 784});
    return l3(torch::relu(l2(torch::relu(l1(x)))));
  }
};
struct TCnn : torch::nn::Module {
  torch::nn::Conv2d c1{torch::nn::Conv2dOptions(1, 32, 3)}, c2{torch::nn::Conv2dOptions(32, 64, 3)};
  torch::nn::Linear f1{64 * 5 * 5, 128}, f2{128, 10};
  TCnn() { register_module("c1", c1); register_module("c2", c2); register_module("f1", f1); register_module("f2", f2); }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::max_pool2d(torch::relu(c1(x)), 2);
    x = torch::max_pool2d(torch::relu(c2(x)), 2);
    x = x.view({x.size(0), -1});
    return f2(torch::relu(f1(x)));
  }
};

template <class Net>
void train_torch(const TorchData& d, int64_t batches, bool breakdown, TorchResult* r) {
  torch::manual_seed(0);
  auto net = std::make_shared<Net>();
  torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(1e-3));
  const int64_t n_train = d.n_train, n_test = d.n_test;
  auto X = torch::from_blob(const_cast<float*>(d.train_x), {n_train, 1, 28, 28}).clone();
  auto Y = torch::from_blob(const_cast<int64_t*>(d.train_y), {n_train}, torch::kInt64).clone();
  auto order = torch::from_blob(const_cast<int64_t*>(d.order), {d.n_order}, torch::kInt64).clone();
  reset_rss_hwm();
  const double c0 = vnn_tb_cpu_now();
  auto t0 = clk::now();
  int64_t seen = 0;
  torch::Tensor loss;
  for (int i = 0; i < kTbPhases; ++i) r->phase_s[i] = 0;
  for (int64_t b = 0; b < batches; ++b) {
    clk::time_point t[kTbPhases + 1];
    if (breakdown) t[0] = clk::now();
    int64_t start = (b * 64) % (n_train - 63);
    auto idx = order.narrow(0, start, 64);
    auto x = X.index_select(0, idx), y = Y.index_select(0, idx);
    if (breakdown) t[1] = clk::now();
    opt.zero_grad();
    if (breakdown) t[2] = clk::now();
    auto out = net->forward(x);
    if (breakdown) t[3] = clk::now();
    loss = torch::nn::functional::cross_entropy(out, y);
    if (breakdown) t[4] = clk::now();
    loss.backward();
    if (breakdown) t[5] = clk::now();
    opt.step();
    if (breakdown) {
      t[6] = clk::now();
      for (int i = 0; i < kTbPhases; ++i) r->phase_s[i] += secs(t[i], t[i + 1]);
    }
    seen += 64;
  }
  r->loss = loss.template item<double>();
  r->samples_per_s = seen / secs(t0, clk::now());
  r->cpu_samples_per_s = seen / (vnn_tb_cpu_now() - c0);
  r->rss_mib = rss_hwm_mib();
  torch::NoGradGuard ng;
  auto TX = torch::from_blob(const_cast<float*>(d.test_x), {n_test, 1, 28, 28});
  auto TY = torch::from_blob(const_cast<int64_t*>(d.test_y), {n_test}, torch::kInt64);
  r->accuracy = net->forward(TX).argmax(1).eq(TY).to(torch::kFloat).mean().template item<double>();
}

// The quick start's CNN, as examples/train_fashion_mnist.cpp builds it.
torch::nn::Sequential example_cnn() {
  namespace tn = torch::nn;
  return tn::Sequential(tn::Conv2d(tn::Conv2dOptions(1, 32, 3).padding(1)), tn::ReLU(), tn::MaxPool2d(2),
                        tn::BatchNorm2d(32), tn::Conv2d(tn::Conv2dOptions(32, 64, 3).padding(1)), tn::ReLU(),
                        tn::MaxPool2d(2), tn::BatchNorm2d(64), tn::Flatten(), tn::Linear(64 * 7 * 7, 128), tn::ReLU(),
                        tn::Linear(128, 10));
}

}  // namespace

extern "C" {

const char* vnn_tb_torch_version(int threads) {
  torch::set_num_threads(threads);
  return TORCH_VERSION;
}

double vnn_tb_torch_op(int kind, const int64_t* a, int na, const int64_t* b, int nb, int inner) {
  std::vector<int64_t> sa(a, a + na), sb(b, b + nb);
  torch::Tensor x = torch::randn(sa), y = sb.empty() ? torch::Tensor() : torch::randn(sb), z;
  std::function<void()> g;
  if (kind == 0) g = [&] { x.add_(y); };
  else if (kind == 2) g = [&] { z = x + y; };
  else if (kind == 1) g = [&] { z = x.permute({1, 0, 2}).contiguous(); };
  else g = [&] { z = x.t().contiguous(); };
  return per_call(inner, g);
}

double vnn_tb_torch_tiny_step(int inner) {
  auto tw = torch::randn({64, 64}, torch::requires_grad()), tin = torch::randn({1, 64});
  return per_call(inner, [&] {
    auto l = torch::relu(torch::mm(tin, tw)).sum();
    l.backward();
  });
}

double vnn_tb_torch_optim(int kind, const int64_t* numels, int n, int inner, double* cpu_s) {
  std::vector<torch::Tensor> ps;
  for (int i = 0; i < n; ++i) {
    auto p = torch::randn({numels[i]}, torch::requires_grad());
    p.mutable_grad() = torch::randn({numels[i]});
    ps.push_back(p);
  }
  std::unique_ptr<torch::optim::Optimizer> opt;
  if (kind == 0) opt = std::make_unique<torch::optim::Adam>(ps, torch::optim::AdamOptions(1e-3));
  else if (kind == 1) opt = std::make_unique<torch::optim::AdamW>(ps, torch::optim::AdamWOptions(1e-3).weight_decay(1e-2));
  else opt = std::make_unique<torch::optim::SGD>(ps, torch::optim::SGDOptions(1e-2).momentum(0.9));
  const double c0 = vnn_tb_cpu_now();
  const double wall = per_call(inner, [&] { opt->step(); });
  *cpu_s = (vnn_tb_cpu_now() - c0) / (5 * inner + 1);  // per_call's calls
  return wall;
}

void vnn_tb_torch_example(const TorchExample* e, double* acc, double* secs) {
  torch::manual_seed(0);
  auto net = example_cnn();
  torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(e->lr[0]));
  std::vector<float> x(size_t(e->batch) * 784);
  std::vector<int64_t> y(size_t(e->batch));
  int64_t step = 0;
  for (int ep = 0; ep < e->epochs; ++ep) {
    net->train();
    auto t0 = clk::now();
    for (int64_t b = 0; b < e->steps_per_epoch; ++b, ++step) {
      int64_t n = 0;
      e->next_batch(e->ctx, step, x.data(), y.data(), &n);
      auto xb = torch::from_blob(x.data(), {n, 1, 28, 28}), yb = torch::from_blob(y.data(), {n}, torch::kInt64);
      for (auto& g : opt.param_groups()) {
        auto& o = static_cast<torch::optim::AdamOptions&>(g.options());
        o.lr(e->lr[step]);
        o.betas({e->beta1[step], std::get<1>(o.betas())});
      }
      opt.zero_grad();
      torch::nn::functional::cross_entropy(net->forward(xb), yb).backward();
      opt.step();
    }
    secs[ep] = secs_since(t0);
    torch::NoGradGuard ng;
    net->eval();
    int64_t correct = 0;
    for (int64_t s0 = 0; s0 < e->n_test; s0 += 1000) {
      const int64_t len = std::min<int64_t>(1000, e->n_test - s0);
      auto tx = torch::from_blob(const_cast<float*>(e->test_x) + s0 * 784, {len, 1, 28, 28});
      auto ty = torch::from_blob(const_cast<int64_t*>(e->test_y) + s0, {len}, torch::kInt64);
      correct += net->forward(tx).argmax(1).eq(ty).sum().template item<int64_t>();
    }
    acc[ep] = double(correct) / double(e->n_test);
  }
}

void vnn_tb_torch_train(int cnn, const TorchData* d, int64_t batches, int breakdown, TorchResult* r) {
  if (cnn) train_torch<TCnn>(*d, batches, breakdown != 0, r);
  else train_torch<TMlp>(*d, batches, breakdown != 0, r);
}

}  // extern "C"
