// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// train_bench: training throughput of vnn on cpu:0 against LibTorch built
// from the same model definitions, in one program and one run.
//  (a) elementwise / copy shapes typical of training (strided paths)
//  (b) tiny-step overhead: 1x64 @ 64x64, relu, sum, backward
//  (c) MLP 784-256-128-10 and CNN conv32-pool-conv64-pool-fc128-fc10 on
//      Fashion-MNIST, Adam lr 1e-3, batch 64, cross entropy, a bounded
//      number of batches each: samples/s, test accuracy, peak memory.
// Both sides see the same normalised data and the same batch order; each
// gathers its own batches with its own index_select, as a loader would.
//   train_bench [--batches N] [--data DIR] [--skip-torch] [--only mlp|cnn|ops|optim|example|none]
//               [--epochs N] [--breakdown] [--device DEV] [--unknown-bounds]
// --unknown-bounds keeps the data set's index bounds unknown to the host
// (device-side clones of X, Y and the batch order), so every index check
// reads its indices back: the step as it was before host-known bounds.
// --only example (g): the quick start's CNN for --epochs (5) epochs on both
// sides, test accuracy per epoch.
// (f) (also --only optim) times one optimizer step (Adam, AdamW, SGD with
// momentum) over the MLP's parameter set on both sides.
// --breakdown adds (d) the MLP step timed by phase on both sides and (e)
// vnn's profiler table of it (--only none: only these).
// --device trains vnn on another device (e.g. cuda:0; the data set sits on
// it, batches are gathered there, 5 warm-up batches are not timed); the
// LibTorch peer is CPU-only, so there ci/gpu-check.sh runs PyTorch's
// bench/torch_gpu_bench.py as the peer instead.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "vnn/vnn.h"

#include <dlfcn.h>

#include "train_bench_torch.h"

namespace {

// The LibTorch module (train_bench_torch.cpp), loaded after vnn's plugin.
struct Torch {
  vnn_tb_torch_version_fn version = nullptr;
  vnn_tb_torch_op_fn op = nullptr;
  vnn_tb_torch_tiny_step_fn tiny_step = nullptr;
  vnn_tb_torch_train_fn train = nullptr;
  vnn_tb_torch_optim_fn optim = nullptr;
  vnn_tb_torch_example_fn example = nullptr;
  bool on() const { return train != nullptr; }
};
Torch g_torch;

void load_torch() {
#ifdef VNN_TRAIN_BENCH_TORCH_MODULE
  void* h = dlopen(VNN_TRAIN_BENCH_TORCH_MODULE, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    std::fprintf(stderr, "train_bench: cannot load the LibTorch module: %s\n", dlerror());
    return;
  }
  g_torch.version = reinterpret_cast<vnn_tb_torch_version_fn>(dlsym(h, "vnn_tb_torch_version"));
  g_torch.op = reinterpret_cast<vnn_tb_torch_op_fn>(dlsym(h, "vnn_tb_torch_op"));
  g_torch.tiny_step = reinterpret_cast<vnn_tb_torch_tiny_step_fn>(dlsym(h, "vnn_tb_torch_tiny_step"));
  g_torch.train = reinterpret_cast<vnn_tb_torch_train_fn>(dlsym(h, "vnn_tb_torch_train"));
  g_torch.optim = reinterpret_cast<vnn_tb_torch_optim_fn>(dlsym(h, "vnn_tb_torch_optim"));
  g_torch.example = reinterpret_cast<vnn_tb_torch_example_fn>(dlsym(h, "vnn_tb_torch_example"));
  if (!g_torch.version || !g_torch.op || !g_torch.tiny_step || !g_torch.optim || !g_torch.example)
    g_torch.train = nullptr;
#endif
}

using clk = std::chrono::steady_clock;
double secs(clk::time_point a, clk::time_point b) { return std::chrono::duration<double>(b - a).count(); }

const vnn::Device kCpu("cpu");
void sync_cpu() { vnn::synchronize(kCpu); }
vnn::Device g_dev("cpu");  // where train_vnn trains (--device)
bool g_unknown_bounds = false;  // --unknown-bounds

// Resident-set high-water mark (VmHWM, MiB). Writing 5 to clear_refs resets
// it, so each framework's run gets its own figure.
double rss_hwm_mib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::atof(line.c_str() + 6) / 1024.0;
  return 0;
}
void reset_rss_hwm() { std::ofstream("/proc/self/clear_refs") << "5"; }

// Median seconds per call of f over `reps` timed batches of `inner` calls.
double per_call(int inner, const std::function<void()>& f, const std::function<void()>& sync) {
  f();
  sync();
  std::vector<double> t;
  for (int r = 0; r < 5; ++r) {
    auto t0 = clk::now();
    for (int i = 0; i < inner; ++i) f();
    sync();
    t.push_back(secs(t0, clk::now()) / inner);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::string ratio(double num, double den) {
  if (num <= 0 || den <= 0) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", num / den);
  return b;
}

// ---------------------------------------------------------------- (a) ops
void ops_table(bool torch_on) {
  std::printf("\n## (a) strided elementwise / copy, float32, us per op (lower is better)\n\n");
  std::printf("| op | vnn | LibTorch | vnn / LibTorch |\n|---|---|---|---|\n");
  struct Case { const char* name; vnn::Shape a, b; int kind; };  // kind 0: add_, 1: permuted copy
  std::vector<Case> cases = {{"[64,32,26,26] += [1,32,1,1]", {64, 32, 26, 26}, {1, 32, 1, 1}, 0},
                             {"[64,128] += [128]", {64, 128}, {128}, 0},
                             {"[64,32,676] + [1,32,1] (out of place)", {64, 32, 676}, {1, 32, 1}, 2},
                             {"[32,64,676] -> permute(1,0,2).contiguous()", {32, 64, 676}, {}, 1},
                             {"[1600,128].t().contiguous()", {1600, 128}, {}, 3}};
  for (const Case& c : cases) {
    vnn::Tensor a = vnn::randn(c.a), b = c.b.size() ? vnn::randn(c.b) : vnn::Tensor(), r;
    int inner = a.numel() > 100000 ? 20 : 2000;
    std::function<void()> f;
    if (c.kind == 0) f = [&] { a.add_(b); };
    else if (c.kind == 2) f = [&] { r = vnn::add(a, b); };
    else if (c.kind == 1) f = [&] { r = a.permute({1, 0, 2}).contiguous(); };
    else f = [&] { r = a.transpose(0, 1).contiguous(); };
    double tv = per_call(inner, f, sync_cpu), tt = 0;
    if (torch_on) {
      std::vector<int64_t> sa(c.a.begin(), c.a.end()), sb(c.b.begin(), c.b.end());
      tt = g_torch.op(c.kind, sa.data(), int(sa.size()), sb.data(), int(sb.size()), inner);
    }
    std::printf("| %s | %.1f | %.1f | %s |\n", c.name, tv * 1e6, tt * 1e6, ratio(tv, tt).c_str());
    std::fflush(stdout);
  }
}

// ------------------------------------------------------- (b) tiny step
void tiny_step(bool torch_on) {
  vnn::Tensor w = vnn::randn({64, 64}).requires_grad_(), in = vnn::randn({1, 64});
  double tv = per_call(2000, [&] {
    vnn::Tensor l = vnn::sum(vnn::relu(vnn::matmul(in, w)));
    l.backward();
  }, sync_cpu), tt = 0;
  if (torch_on) tt = g_torch.tiny_step(2000);
  std::printf("\n## (b) tiny step (1x64 @ 64x64, relu, sum, backward), us per step\n\n");
  std::printf("| vnn | LibTorch | vnn / LibTorch |\n|---|---|---|\n| %.1f | %.1f | %s |\n", tv * 1e6, tt * 1e6,
              ratio(tv, tt).c_str());
}

// ------------------------------------------------ (f) optimizer step
// One step over the MLP's parameter set (784x256, 256x128, 128x10 and the
// biases), flat float32 tensors with fixed random gradients, as
// vnn_tb_torch_optim builds them.
void optim_table(bool torch_on) {
  const std::vector<int64_t> numels = {784 * 256, 256, 256 * 128, 128, 128 * 10, 10};
  int64_t total = 0;
  for (int64_t n : numels) total += n;
  std::printf("\n## (f) optimizer step over the MLP's %lld parameters (6 tensors), float32, us per step "
              "(wall: median of 5; CPU: process CPU time, all threads)\n\n",
              (long long)total);
  std::printf("| optimizer | vnn wall | LibTorch wall | vnn / LibTorch | vnn CPU | LibTorch CPU | vnn / LibTorch (CPU) "
              "| vnn CPU ns per parameter |\n|---|---|---|---|---|---|---|---|\n");
  const char* names[3] = {"Adam lr 1e-3", "AdamW lr 1e-3 wd 1e-2", "SGD lr 1e-2 momentum 0.9"};
  for (int kind = 0; kind < 3; ++kind) {
    vnn::manual_seed(0);
    std::vector<vnn::Tensor> ps;
    for (int64_t n : numels) {
      vnn::Tensor p = vnn::randn({n}).requires_grad_();
      p.set_grad(vnn::randn({n}));
      ps.push_back(p);
    }
    std::unique_ptr<vnn::optim::Optimizer> opt;
    if (kind == 0) opt = std::make_unique<vnn::optim::Adam>(ps, vnn::optim::AdamOptions(1e-3));
    else if (kind == 1) opt = std::make_unique<vnn::optim::AdamW>(ps, vnn::optim::AdamWOptions(1e-3));
    else opt = std::make_unique<vnn::optim::SGD>(ps, vnn::optim::SGDOptions(1e-2).momentum(0.9));
    const int inner = 100;
    const double c0 = vnn_tb_cpu_now();
    double tv = per_call(inner, [&] { opt->step(); }, sync_cpu), tt = 0, ct = 0;
    const double cv = (vnn_tb_cpu_now() - c0) / (5 * inner + 1);  // per_call's calls
    if (torch_on) tt = g_torch.optim(kind, numels.data(), int(numels.size()), inner, &ct);
    std::printf("| %s | %.1f | %.1f | %s | %.1f | %.1f | %s | %.2f |\n", names[kind], tv * 1e6, tt * 1e6,
                ratio(tv, tt).c_str(), cv * 1e6, ct * 1e6, ratio(cv, ct).c_str(), cv * 1e9 / double(total));
    std::fflush(stdout);
  }
}

// ---------------------------------------------------------- (c) models
struct VMlp : vnn::nn::Module {
  vnn::nn::Linear l1{nullptr}, l2{nullptr}, l3{nullptr};
  VMlp() {
    l1 = register_module("l1", vnn::nn::Linear(784, 256));
    l2 = register_module("l2", vnn::nn::Linear(256, 128));
    l3 = register_module("l3", vnn::nn::Linear(128, 10));
  }
  vnn::Tensor forward(const vnn::Tensor& x) {
    vnn::Tensor h = x.reshape({x.sizes()[0], 784});
    return l3->forward(vnn::relu(l2->forward(vnn::relu(l1->forward(h)))));
  }
};

struct VCnn : vnn::nn::Module {
  vnn::nn::Conv2d c1{nullptr}, c2{nullptr};
  vnn::nn::Linear f1{nullptr}, f2{nullptr};
  VCnn() {
    c1 = register_module("c1", vnn::nn::Conv2d(1, 32, 3));
    c2 = register_module("c2", vnn::nn::Conv2d(32, 64, 3));
    f1 = register_module("f1", vnn::nn::Linear(64 * 5 * 5, 128));
    f2 = register_module("f2", vnn::nn::Linear(128, 10));
  }
  vnn::Tensor forward(const vnn::Tensor& x) {
    vnn::Tensor h = vnn::max_pool2d(vnn::relu(c1->forward(x)), 2);
    h = vnn::max_pool2d(vnn::relu(c2->forward(h)), 2);
    h = h.reshape({h.sizes()[0], 64 * 5 * 5});
    return f2->forward(vnn::relu(f1->forward(h)));
  }
};


struct Data {
  std::vector<float> train_x, test_x;  // normalised, [n, 1, 28, 28]
  std::vector<int64_t> train_y, test_y;
  std::vector<int64_t> order;          // batch order, shared by both sides
};

void to_host(const vnn::Tensor& images, const vnn::Tensor& labels, std::vector<float>& x, std::vector<int64_t>& y) {
  vnn::Tensor xi = ((images - 0.2860) / 0.3530).contiguous();
  x.assign(xi.data<float>(), xi.data<float>() + xi.numel());
  vnn::Tensor yl = labels.contiguous();
  y.assign(yl.data<int64_t>(), yl.data<int64_t>() + yl.numel());
}

struct Result { double samples_per_s = 0, accuracy = 0, peak_mib = 0, rss_mib = 0, loss = 0, cpu_samples_per_s = 0; };

// --breakdown: seconds per phase of the step, summed over the timed
// batches (the CPU backend runs ops synchronously, so host timers see
// where the time goes). Same phases as TorchPhases.
struct Phases {
  double s[kTbPhases] = {};
};

template <class Net>
Result train_vnn(const Data& d, int64_t batches, Phases* phases = nullptr, std::unique_ptr<vnn::profiler::Profile>* prof = nullptr) {
  vnn::manual_seed(0);
  auto net = std::make_shared<Net>();
  net->to(g_dev);
  vnn::optim::Adam opt(net->parameters(), vnn::optim::AdamOptions(1e-3));
  int64_t n_train = int64_t(d.train_y.size()), n_test = int64_t(d.test_y.size());
  vnn::Tensor X = vnn::from_vector(d.train_x, {n_train, 1, 28, 28}).to(g_dev);
  vnn::Tensor Y = vnn::from_vector(d.train_y, {n_train}).to(g_dev);
  vnn::Tensor order = vnn::from_vector(d.order, {int64_t(d.order.size())}).to(g_dev);
  if (g_unknown_bounds) X = X.clone(), Y = Y.clone(), order = order.clone();
  auto step = [&](int64_t b) {
    clk::time_point t[kTbPhases + 1];
    const bool timed = phases != nullptr;
    if (timed) t[0] = clk::now();
    int64_t start = (b * 64) % (n_train - 63);
    vnn::Tensor idx = order.narrow(0, start, 64);
    vnn::Tensor x = vnn::index_select(X, 0, idx), y = vnn::index_select(Y, 0, idx);
    if (timed) t[1] = clk::now();
    opt.zero_grad();
    if (timed) t[2] = clk::now();
    vnn::Tensor out = net->forward(x);
    if (timed) t[3] = clk::now();
    vnn::Tensor loss = vnn::nn::cross_entropy(out, y);
    if (timed) t[4] = clk::now();
    loss.backward();
    if (timed) t[5] = clk::now();
    opt.step();
    if (timed) {
      t[6] = clk::now();
      for (int i = 0; i < kTbPhases; ++i) phases->s[i] += secs(t[i], t[i + 1]);
    }
    return loss;
  };
  // Off the CPU, the first steps pay for one-time work (cuBLAS handles,
  // kernel loading): not timed, as in the PyTorch peer script.
  const int64_t warmup = g_dev.is_cpu() ? 0 : 5;
  for (int64_t b = 0; b < warmup; ++b) step(batches + b);
  vnn::synchronize(g_dev);
  reset_rss_hwm();
  vnn::reset_peak_memory_stats(g_dev);
  Result r;
  if (prof) *prof = std::make_unique<vnn::profiler::Profile>();
  const double c0 = vnn_tb_cpu_now();
  auto t0 = clk::now();
  int64_t seen = 0;
  vnn::Tensor loss;
  for (int64_t b = 0; b < batches; ++b) {
    loss = step(b);
    seen += 64;
  }
  r.loss = loss.item();  // waits for the device
  r.samples_per_s = seen / secs(t0, clk::now());
  r.cpu_samples_per_s = seen / (vnn_tb_cpu_now() - c0);
  if (prof) (*prof)->stop();
  r.peak_mib = double(vnn::memory_stats(g_dev).peak_allocated) / (1 << 20);
  r.rss_mib = rss_hwm_mib();
  vnn::autograd::NoGradGuard ng;
  net->eval();
  vnn::Tensor TX = vnn::from_vector(d.test_x, {n_test, 1, 28, 28}).to(g_dev);
  vnn::Tensor TY = vnn::from_vector(d.test_y, {n_test}).to(g_dev);
  int64_t correct = 0;
  for (int64_t s = 0; s < n_test; s += 1000) {
    int64_t len = std::min<int64_t>(1000, n_test - s);
    vnn::Tensor pred = vnn::argmax(net->forward(TX.narrow(0, s, len)), 1);
    correct += int64_t(vnn::sum(vnn::eq(pred, TY.narrow(0, s, len))).item());
  }
  r.accuracy = double(correct) / double(n_test);
  return r;
}


Result run_torch(int cnn, Data& d, int64_t batches, Phases* phases = nullptr) {
  TorchData td{d.train_x.data(), d.train_y.data(), int64_t(d.train_y.size()), d.test_x.data(), d.test_y.data(),
               int64_t(d.test_y.size()), d.order.data(), int64_t(d.order.size())};
  TorchResult tr{};
  g_torch.train(cnn, &td, batches, phases ? 1 : 0, &tr);
  if (phases)
    for (int i = 0; i < kTbPhases; ++i) phases->s[i] = tr.phase_s[i];
  Result r;
  r.samples_per_s = tr.samples_per_s, r.accuracy = tr.accuracy, r.rss_mib = tr.rss_mib, r.loss = tr.loss;
  r.cpu_samples_per_s = tr.cpu_samples_per_s;
  return r;
}

void print_model(const char* name, int64_t batches, const Result& v, const Result& t) {
  std::printf("| %s | %lld | %.0f | %.0f | %s | %.4f | %.4f | %.3f | %.3f | %.1f | %.0f | %.0f | %.0f / %.0f (%s) |\n",
              name, (long long)batches, v.samples_per_s, t.samples_per_s,
              ratio(v.samples_per_s, t.samples_per_s).c_str(), v.accuracy, t.accuracy, v.loss, t.loss, v.peak_mib,
              v.rss_mib, t.rss_mib, v.cpu_samples_per_s, t.cpu_samples_per_s,
              ratio(v.cpu_samples_per_s, t.cpu_samples_per_s).c_str());
  std::fflush(stdout);
}

// ------------------------------------------- (g) the quick start's CNN
// examples/train_fashion_mnist.cpp's model and recipe (images in [0, 1],
// batch 64, a new shuffle each epoch, random horizontal flips, Adam under
// OneCycleLR peaking at 3e-3) trained by both sides for `epochs` epochs on
// the same batches: the same samples, the same flips, and LibTorch (which
// has no OneCycleLR in C++) gets the lr and beta1 that vnn's scheduler set
// at each step.
struct ExampleData {
  std::vector<float> train_x, test_x;  // [n, 784] in [0, 1]
  std::vector<int64_t> train_y, test_y;
  std::vector<int64_t> order;  // epochs * n_train sample indices
  std::vector<uint8_t> flip;   // epochs * n_train: flip sample k of the epoch's order
  int64_t n_train = 0, batch = 64, steps_per_epoch = 0;
};

void example_batch(void* ctx, int64_t step, float* x, int64_t* y, int64_t* n) {
  const ExampleData& d = *static_cast<const ExampleData*>(ctx);
  const int64_t epoch = step / d.steps_per_epoch, b = step % d.steps_per_epoch;
  const int64_t first = b * d.batch, count = std::min(d.batch, d.n_train - first);
  for (int64_t k = 0; k < count; ++k) {
    const int64_t slot = epoch * d.n_train + first + k, i = d.order[size_t(slot)];
    const float* src = d.train_x.data() + i * 784;
    float* dst = x + k * 784;
    if (d.flip[size_t(slot)])
      for (int r = 0; r < 28; ++r)
        for (int c = 0; c < 28; ++c) dst[r * 28 + c] = src[r * 28 + 27 - c];
    else
      std::copy(src, src + 784, dst);
    y[k] = d.train_y[size_t(i)];
  }
  *n = count;
}

void example_table(const std::string& root, int epochs, bool torch_on) {
  ExampleData d;
  {
    vnn::data::FashionMNIST train(root, true), test(root, false);
    vnn::Tensor a = train.images().contiguous(), b = test.images().contiguous();
    d.train_x.assign(a.data<float>(), a.data<float>() + a.numel());
    d.test_x.assign(b.data<float>(), b.data<float>() + b.numel());
    d.train_y = train.labels().contiguous().to_vector<int64_t>();
    d.test_y = test.labels().contiguous().to_vector<int64_t>();
  }
  d.n_train = int64_t(d.train_y.size());
  d.steps_per_epoch = (d.n_train + d.batch - 1) / d.batch;  // the last batch is partial, as the loader's
  std::mt19937_64 rng(11);
  for (int e = 0; e < epochs; ++e) {
    std::vector<int64_t> o(size_t(d.n_train));
    std::iota(o.begin(), o.end(), 0);
    std::shuffle(o.begin(), o.end(), rng);
    d.order.insert(d.order.end(), o.begin(), o.end());
    for (int64_t k = 0; k < d.n_train; ++k) d.flip.push_back(uint8_t(rng() & 1));
  }
  const int64_t n_test = int64_t(d.test_y.size()), steps = epochs * d.steps_per_epoch;
  const size_t ne = static_cast<size_t>(epochs);
  std::vector<double> lr, beta1, va(ne), vs(ne), ta(ne), ts(ne);
  {
    using namespace vnn::nn;
    vnn::manual_seed(0);
    Sequential net{Conv2d(Conv2dOptions(1, 32, 3).padding(1)), ReLU(), MaxPool2d(2), BatchNorm2d(32),
                   Conv2d(Conv2dOptions(32, 64, 3).padding(1)), ReLU(), MaxPool2d(2), BatchNorm2d(64), Flatten(),
                   Linear(64 * 7 * 7, 128), ReLU(), Linear(128, 10)};
    vnn::optim::Adam opt(net->parameters(), vnn::optim::AdamOptions(3e-3));
    vnn::optim::OneCycleOptions oc;
    oc.epochs = epochs;
    oc.steps_per_epoch = d.steps_per_epoch;
    vnn::optim::OneCycleLR sched(opt, 3e-3, oc);
    std::vector<float> x(size_t(d.batch) * 784);
    std::vector<int64_t> y(size_t(d.batch));
    for (int64_t step = 0; step < steps;) {
      net->train();
      auto t0 = clk::now();
      for (int64_t b = 0; b < d.steps_per_epoch; ++b, ++step) {
        int64_t n = 0;
        example_batch(&d, step, x.data(), y.data(), &n);
        vnn::Tensor xb = vnn::from_vector(std::vector<float>(x.begin(), x.begin() + n * 784), {n, 1, 28, 28});
        vnn::Tensor yb = vnn::from_vector(std::vector<int64_t>(y.begin(), y.begin() + n), {n});
        lr.push_back(opt.param_groups()[0].options.at("lr"));
        beta1.push_back(opt.param_groups()[0].options.at("beta1"));
        opt.zero_grad();
        vnn::nn::cross_entropy(net->forward(xb), yb).backward();
        opt.step();
        sched.step();
      }
      const size_t ep = size_t(step / d.steps_per_epoch - 1);
      vs[ep] = secs(t0, clk::now());
      vnn::autograd::NoGradGuard ng;
      net->eval();
      vnn::Tensor TX = vnn::from_vector(d.test_x, {n_test, 1, 28, 28}), TY = vnn::from_vector(d.test_y, {n_test});
      int64_t correct = 0;
      for (int64_t s0 = 0; s0 < n_test; s0 += 1000) {
        const int64_t len = std::min<int64_t>(1000, n_test - s0);
        vnn::Tensor pred = vnn::argmax(net->forward(TX.narrow(0, s0, len)), 1);
        correct += int64_t(vnn::sum(vnn::eq(pred, TY.narrow(0, s0, len))).item());
      }
      va[ep] = double(correct) / double(n_test);
      std::printf("vnn epoch %zu: test accuracy %.4f, %.1f s\n", ep + 1, va[ep], vs[ep]);
      std::fflush(stdout);
    }
  }
  if (torch_on) {
    TorchExample te{epochs, d.steps_per_epoch, d.batch, example_batch, &d, lr.data(), beta1.data(),
                    d.test_x.data(), d.test_y.data(), n_test};
    g_torch.example(&te, ta.data(), ts.data());
  }
  std::printf("\n## (g) the quick start's CNN (BatchNorm, 1cycle 3e-3, flips), %d epochs, same batches on both sides\n\n",
              epochs);
  std::printf("| epoch | vnn test acc | LibTorch test acc | vnn s | LibTorch s |\n|---|---|---|---|---|\n");
  for (int e = 0; e < epochs; ++e)
    std::printf("| %d | %.4f | %.4f | %.1f | %.1f |\n", e + 1, va[size_t(e)], ta[size_t(e)], vs[size_t(e)],
                ts[size_t(e)]);
}

// --breakdown: the MLP step split into its phases on both sides (host
// timers, separate runs from the throughput rows above), then vnn's own
// profiler table of one more run, by self host time.
void mlp_breakdown(Data& d, int64_t batches, bool torch_on) {
  Phases pv, pt;
  Result v = train_vnn<VMlp>(d, batches, &pv), t;
  if (torch_on) t = run_torch(0, d, batches, &pt);
  std::printf("\n## (d) MLP step by phase, us per step, %lld batches (timers around each phase)\n\n",
              (long long)batches);
  std::printf("| phase | vnn | LibTorch | vnn - LibTorch |\n|---|---|---|---|\n");
  double sv = 0, st = 0;
  for (int i = 0; i < kTbPhases; ++i) {
    double a = pv.s[i] / double(batches) * 1e6, b = pt.s[i] / double(batches) * 1e6;
    sv += a, st += b;
    std::printf("| %s | %.1f | %.1f | %+.1f |\n", kTbPhaseNames[i], a, b, a - b);
  }
  std::printf("| **step** | %.1f | %.1f | %+.1f |\n", sv, st, sv - st);
  std::printf("\n(samples/s in these timed runs: vnn %.0f, LibTorch %.0f)\n", v.samples_per_s, t.samples_per_s);
  std::unique_ptr<vnn::profiler::Profile> prof;
  train_vnn<VMlp>(d, batches, nullptr, &prof);
  vnn::profiler::TableOptions o;
  o.sort = vnn::profiler::SortBy::self_host;
  o.row_limit = 25;
  o.group_by_phase = true;
  std::printf("\n## (e) vnn MLP ops by self host time, %lld batches (vnn profiler)\n\n%s\n", (long long)batches,
              prof->table(o).c_str());
}

}  // namespace

int run(int argc, char** argv) {
  int64_t batches = 300;
  std::string root, only;
  bool torch_on = true, breakdown = false;
  int epochs = 5;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--batches") && i + 1 < argc) batches = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--data") && i + 1 < argc) root = argv[++i];
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!std::strcmp(argv[i], "--skip-torch")) torch_on = false;
    else if (!std::strcmp(argv[i], "--unknown-bounds")) g_unknown_bounds = true;
    else if (!std::strcmp(argv[i], "--epochs") && i + 1 < argc) epochs = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--breakdown")) breakdown = true;
    else if (!std::strcmp(argv[i], "--device") && i + 1 < argc) g_dev = vnn::Device(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--batches N] [--data DIR] [--skip-torch] [--only mlp|cnn|ops|optim|example|none] [--epochs N] [--breakdown] [--device DEV] [--unknown-bounds]\n",
                   argv[0]);
      return 2;
    }
  }
  if (!g_dev.is_cpu()) torch_on = false;  // LibTorch here is the CPU build
  // vnn's plugin first (one op loads it), then LibTorch: see train_bench_torch.cpp.
  sync_cpu();
  (void)vnn::zeros({1});
  if (torch_on) load_torch();
  torch_on = torch_on && g_torch.on();
  std::printf("# train_bench: vnn %s on %s vs LibTorch %s, %d threads\n", VNN_VERSION_STRING, g_dev.str().c_str(),
              torch_on ? g_torch.version(omp_get_max_threads()) : "(not loaded)", omp_get_max_threads());
  if (only.empty() || only == "ops") {
    ops_table(torch_on);
    tiny_step(torch_on);
  }
  if (only == "ops") return 0;
  if (only.empty() || only == "optim") optim_table(torch_on);
  if (only == "optim") return 0;
  if (only == "example") {
    example_table(root, epochs, torch_on);
    return 0;
  }
  Data d;
  {
    vnn::data::FashionMNIST train(root, true), test(root, false);
    to_host(train.images(), train.labels(), d.train_x, d.train_y);
    to_host(test.images(), test.labels(), d.test_x, d.test_y);
  }
  d.order.resize(d.train_y.size());
  std::iota(d.order.begin(), d.order.end(), 0);
  std::shuffle(d.order.begin(), d.order.end(), std::mt19937_64(7));
  std::printf("\n## (c) training, Adam lr 1e-3, batch 64, Fashion-MNIST (%zu train, %zu test)\n\n",
              d.train_y.size(), d.test_y.size());
  std::printf("| model | batches | vnn samples/s | LibTorch samples/s | vnn / LibTorch | vnn test acc | LibTorch test acc "
              "| vnn last loss | LibTorch last loss | vnn peak alloc MiB | vnn RSS HWM MiB | LibTorch RSS HWM MiB "
              "| samples per CPU second, vnn / LibTorch (ratio) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  if (only.empty() || only == "mlp") {
    Result v = train_vnn<VMlp>(d, batches), t;
    if (torch_on) t = run_torch(0, d, batches);
    print_model("MLP 784-256-128-10", batches, v, t);
  }
  if (only.empty() || only == "cnn") {
    Result v = train_vnn<VCnn>(d, batches), t;
    if (torch_on) t = run_torch(1, d, batches);
    print_model("CNN c32-p-c64-p-fc128-fc10", batches, v, t);
  }
  if (breakdown) mlp_breakdown(d, batches, torch_on);
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train_bench: %s\n", e.what());
    return 1;
  }
}
