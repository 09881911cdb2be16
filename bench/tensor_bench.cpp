// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn tensor benchmark: one program, one run, peers measured side by side.
//   (a) SGEMM GFLOP/s: vnn::matmul on cpu:0 vs cblas_sgemm called directly,
//       oneDNN's dnnl_sgemm (when found) and torch::mm (when built with
//       LibTorch)
//   (b) per-op overhead of a 64-element float add, in place and out of place
//   (b2) the profiler's cost per op: off (must match (b)), on without
//       device events, on with device events and shapes
//   (c) bandwidth: a STREAM-like triad (plain C++ OpenMP), vnn add(a, b,
//       alpha) and vnn sum on 16M floats
// Every figure is the median of several timed repetitions.
//   usage: tensor_bench [--big] [--conv-only] [--profiler-only] [--samples N]
//     --big      adds n = 4096 to the SGEMM sizes
#include "timing.hpp"
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "vnn/nn_ops.h"
#include "vnn/vnn.h"

#ifdef VNN_BENCH_TORCH
#include <torch/torch.h>
#endif
#ifdef VNN_BENCH_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#endif

namespace {

using clk = std::chrono::steady_clock;

int g_samples = 7;

// Median over g_samples repetitions (bench/timing.hpp).
double median_seconds(int iters, const std::function<void()>& body, const std::function<void()>& sync) {
  return vnn_bench::median_seconds(g_samples, iters, body, sync);
}

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& f : v) {
    x = x * 1664525u + 1013904223u;
    f = float(x >> 8) / float(1u << 24) - 0.5f;
  }
  return v;
}

void sync_cpu() { vnn::synchronize(vnn::Device("cpu", 0)); }
void no_sync() {}

std::string fmt(double v, const char* f = "%.1f") {
  if (v <= 0) return "-";
  char b[64];
  std::snprintf(b, sizeof(b), f, v);
  return b;
}

void gemm_table(const std::vector<int>& sizes) {
  std::printf("\n## (a) SGEMM, GFLOP/s (higher is better)\n\n");
  std::printf("| n | vnn matmul | OpenBLAS cblas_sgemm | vnn / OpenBLAS | oneDNN dnnl_sgemm | vnn / best BLAS | LibTorch mm | vnn / LibTorch |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (int n : sizes) {
    size_t nn = size_t(n) * size_t(n);
    auto av = random_floats(nn, 1), bv = random_floats(nn, 2);
    std::vector<float> cv(nn);
    int iters = n <= 256 ? 20 : n <= 512 ? 5 : 1;
    double flop = 2.0 * double(n) * n * n;
    vnn::Tensor a = vnn::from_vector(av, {n, n}), b = vnn::from_vector(bv, {n, n});
    vnn::Tensor c;
    // Every library of the row in one interleaved measurement (timing.hpp).
    std::vector<vnn_bench::Contender> cs{
        {[&] { c = vnn::matmul(a, b); }, sync_cpu},
        {[&] {
           cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f, av.data(), n, bv.data(), n, 0.f,
                       cv.data(), n);
         },
         no_sync}};
#ifdef VNN_BENCH_ONEDNN
    const size_t i_dnnl = cs.size();
    cs.push_back({[&] { dnnl_sgemm('N', 'N', n, n, n, 1.f, av.data(), n, bv.data(), n, 0.f, cv.data(), n); }, no_sync});
#endif
#ifdef VNN_BENCH_TORCH
    auto ta = torch::from_blob(av.data(), {n, n}).clone(), tb = torch::from_blob(bv.data(), {n, n}).clone();
    torch::Tensor tc;
    const size_t i_torch = cs.size();
    cs.push_back({[&] { tc = torch::mm(ta, tb); }, no_sync});
#endif
    const std::vector<double> t = vnn_bench::interleaved_median_seconds(g_samples, iters, cs);
    double g_vnn = flop / t[0] / 1e9, g_blas = flop / t[1] / 1e9, g_torch = 0, g_dnnl = 0;
#ifdef VNN_BENCH_ONEDNN
    g_dnnl = flop / t[i_dnnl] / 1e9;
#endif
#ifdef VNN_BENCH_TORCH
    g_torch = flop / t[i_torch] / 1e9;
#endif
    std::printf("| %d | %s | %s | %s | %s | %s | %s | %s |\n", n, fmt(g_vnn).c_str(), fmt(g_blas).c_str(),
                fmt(g_vnn / g_blas, "%.2f").c_str(), fmt(g_dnnl).c_str(),
                fmt(g_vnn / std::max(g_blas, g_dnnl), "%.2f").c_str(), fmt(g_torch).c_str(),
                g_torch > 0 ? fmt(g_vnn / g_torch, "%.2f").c_str() : "-");
    std::fflush(stdout);
  }
}

void overhead_table() {
  std::printf("\n## (b) per-op overhead, 64-element float32 add, us/op (lower is better)\n\n");
  std::printf("| op | vnn | LibTorch | vnn / LibTorch |\n|---|---|---|---|\n");
  const int iters = 50000;
  auto av = random_floats(64, 3), bv = random_floats(64, 4);
  vnn::Tensor a = vnn::from_vector(av, {64}), b = vnn::from_vector(bv, {64}), c;
  std::vector<vnn_bench::Contender> in{{[&] { a.add_(b); }, sync_cpu}}, out{{[&] { c = a + b; }, sync_cpu}};
#ifdef VNN_BENCH_TORCH
  auto x = torch::from_blob(av.data(), {64}).clone(), y = torch::from_blob(bv.data(), {64}).clone();
  torch::Tensor z;
  in.push_back({[&] { x.add_(y); }, no_sync});
  out.push_back({[&] { z = x + y; }, no_sync});
#endif
  const std::vector<double> tin = vnn_bench::interleaved_median_seconds(g_samples, iters, in);
  const std::vector<double> tout = vnn_bench::interleaved_median_seconds(g_samples, iters, out);
  double in_vnn = tin[0] * 1e6, out_vnn = tout[0] * 1e6, in_t = 0, out_t = 0;
#ifdef VNN_BENCH_TORCH
  in_t = tin[1] * 1e6;
  out_t = tout[1] * 1e6;
#endif
  std::printf("| in-place a.add_(b) | %s | %s | %s |\n", fmt(in_vnn, "%.3f").c_str(), fmt(in_t, "%.3f").c_str(),
              in_t > 0 ? fmt(in_vnn / in_t, "%.2f").c_str() : "-");
  std::printf("| out-of-place a + b | %s | %s | %s |\n", fmt(out_vnn, "%.3f").c_str(),
              fmt(out_t, "%.3f").c_str(), out_t > 0 ? fmt(out_vnn / out_t, "%.2f").c_str() : "-");
  std::fflush(stdout);
}

// (b2) The same 64-element add under the profiler. Off is the plain
// dispatch path (one relaxed load); on records one event per op.
void profiler_overhead_table() {
  std::printf("\n## (b2) profiler overhead per op, 64-element float32 add a + b, us/op\n\n");
  std::printf("| profiler | us/op | added us/op |\n|---|---|---|\n");
  const int iters = 20000;
  auto av = random_floats(64, 3), bv = random_floats(64, 4);
  vnn::Tensor a = vnn::from_vector(av, {64}), b = vnn::from_vector(bv, {64}), c;
  auto body = [&] { c = a + b; };
  double off = median_seconds(iters, body, sync_cpu) * 1e6;
  auto on = [&](bool device_time, bool shapes) {
    vnn::profiler::Options o;
    o.device_time = device_time;
    o.record_shapes = shapes;
    vnn::profiler::Profile p(o);
    double t = median_seconds(iters, body, sync_cpu) * 1e6;
    p.stop();
    return t;
  };
  double host_only = on(false, false);
  double with_shapes = on(false, true);
  double full = on(true, true);
  double ranged = 0;
  {
    vnn::profiler::Profile p;
    ranged = median_seconds(iters, [&] {
      vnn::profiler::Range r("user range");
      c = a + b;
    }, sync_cpu) * 1e6;
    p.stop();
  }
  double off_again = median_seconds(iters, body, sync_cpu) * 1e6;
  std::printf("| off | %.3f | - |\n", off);
  std::printf("| on, host time only | %.3f | %+.3f |\n", host_only, host_only - off);
  std::printf("| on, host time + input shapes | %.3f | %+.3f |\n", with_shapes, with_shapes - off);
  std::printf("| on, host + device events + shapes (default) | %.3f | %+.3f |\n", full, full - off);
  std::printf("| on (default) + a user Range around each op | %.3f | %+.3f |\n", ranged, ranged - off);
  std::printf("| off again, after profiling | %.3f | %+.3f |\n", off_again, off_again - off);
  std::fflush(stdout);
}

void bandwidth_table() {
  const int64_t n = int64_t(1) << 24;  // 16M floats, 64 MiB per array
  std::printf("\n## (c) bandwidth on %lld floats, GB/s (higher is better)\n\n", static_cast<long long>(n));
  std::printf("| kernel | bytes/elt | GB/s | vs C++ triad |\n|---|---|---|---|\n");
  auto bv = random_floats(size_t(n), 5), cv = random_floats(size_t(n), 6);
  std::vector<float> av(static_cast<size_t>(n));
  const float s = 0.5f;
  float* A = av.data();
  const float* B = bv.data();
  const float* C = cv.data();
  const int iters = 3;
  double t_triad = median_seconds(iters, [&] {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) A[i] = B[i] + s * C[i];
  }, no_sync);
  double sink = 0;
  double t_rsum = median_seconds(iters, [&] {
    double acc = 0;
#pragma omp parallel for schedule(static) reduction(+ : acc)
    for (int64_t i = 0; i < n; ++i) acc += double(B[i]);
    sink += acc;
  }, no_sync);
  vnn::Tensor b = vnn::from_vector(bv, {n}), c = vnn::from_vector(cv, {n}), a;
  double t_add = median_seconds(iters, [&] { a = vnn::add(b, c, double(s)); }, sync_cpu);
  vnn::Tensor r;
  double t_sum = median_seconds(iters, [&] { r = vnn::sum(b); }, sync_cpu);
  double gb = 1e-9;
  double triad = 12.0 * n / t_triad * gb;
  auto row = [&](const char* name, double bytes, double t) {
    double bw = bytes * n / t * gb;
    std::printf("| %s | %.0f | %.1f | %.2f |\n", name, bytes, bw, bw / triad);
  };
  row("C++ OpenMP triad a = b + s*c", 12, t_triad);
  row("vnn add(b, c, s) (allocates out)", 12, t_add);
  row("C++ OpenMP sum (double acc)", 4, t_rsum);
  row("vnn sum(b)", 4, t_sum);
#ifdef VNN_BENCH_TORCH
  {
    auto tb = torch::from_blob(bv.data(), {n}).clone(), tc = torch::from_blob(cv.data(), {n}).clone();
    torch::Tensor ta, ts;
    row("LibTorch add(b, c, s)", 12, median_seconds(iters, [&] { ta = torch::add(tb, tc, s); }, no_sync));
    row("LibTorch sum(b)", 4, median_seconds(iters, [&] { ts = tb.sum(); }, no_sync));
  }
#endif
  if (sink == 12345.678) std::printf(" ");
  std::fflush(stdout);
}

// (d) conv2d forward and forward+backward (input, weight and bias
// gradients) on cpu:0, Fashion-MNIST-sized layers, against LibTorch's
// conv2d in the same run, interleaved.
void conv_table() {
  std::printf("\n## (d) conv2d float32 on cpu:0, ms per call (lower is better)\n\n");
  std::printf("| layer | vnn fwd | LibTorch fwd | vnn / LibTorch | vnn fwd+bwd | LibTorch fwd+bwd | vnn / LibTorch |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  struct L { int64_t n, c, h, w, o; const char* name; };
  for (L l : {L{64, 1, 28, 28, 32, "64x1x28x28, 32 3x3 pad 1"}, L{64, 32, 14, 14, 64, "64x32x14x14, 64 3x3 pad 1"}}) {
    auto xv = random_floats(size_t(l.n * l.c * l.h * l.w), 11), wv = random_floats(size_t(l.o * l.c * 9), 12),
         bv = random_floats(size_t(l.o), 13), gv = random_floats(size_t(l.n * l.o * l.h * l.w), 14);
    vnn::Tensor x = vnn::from_vector(xv, {l.n, l.c, l.h, l.w}), w = vnn::from_vector(wv, {l.o, l.c, 3, 3}),
                b = vnn::from_vector(bv, {l.o}), gy = vnn::from_vector(gv, {l.n, l.o, l.h, l.w});
    vnn::Tensor y;
    const int iters = 3;
    // vnn and LibTorch interleaved (timing.hpp), forward first, then
    // forward and backward through each library's autograd, as training
    // runs it: the conv2d node computes the input gradient, then the weight
    // gradient with the bias gradient in the same oneDNN pass.
    std::vector<vnn_bench::Contender> f{{[&] { y = vnn::conv2d(x, w, b, 1, 1); }, sync_cpu}}, fb;
#ifdef VNN_BENCH_TORCH
    auto tx = torch::from_blob(xv.data(), {l.n, l.c, l.h, l.w}).clone().requires_grad_(true);
    auto tw = torch::from_blob(wv.data(), {l.o, l.c, 3, 3}).clone().requires_grad_(true);
    auto tbias = torch::from_blob(bv.data(), {l.o}).clone().requires_grad_(true);
    auto tg = torch::from_blob(gv.data(), {l.n, l.o, l.h, l.w}).clone();
    torch::Tensor ty;
    f.push_back({[&] {
                   torch::NoGradGuard ng;
                   ty = torch::conv2d(tx, tw, tbias, 1, 1);
                 },
                 no_sync});
#endif
    const std::vector<double> tf_all = vnn_bench::interleaved_median_seconds(g_samples, iters, f);
    x.requires_grad_(true);
    w.requires_grad_(true);
    b.requires_grad_(true);
    fb.push_back({[&] {
                    for (vnn::Tensor* t : {&x, &w, &b}) t->set_grad(vnn::Tensor());
                    vnn::conv2d(x, w, b, 1, 1).backward(gy);
                  },
                  sync_cpu});
#ifdef VNN_BENCH_TORCH
    fb.push_back({[&] {
                    tx.mutable_grad() = torch::Tensor();
                    tw.mutable_grad() = torch::Tensor();
                    tbias.mutable_grad() = torch::Tensor();
                    ty = torch::conv2d(tx, tw, tbias, 1, 1);
                    ty.backward(tg);
                  },
                  no_sync});
#endif
    const std::vector<double> tb_all = vnn_bench::interleaved_median_seconds(g_samples, iters, fb);
    const double fwd = tf_all[0], both = tb_all[0];
    const double tf = tf_all.size() > 1 ? tf_all[1] : 0, tb = tb_all.size() > 1 ? tb_all[1] : 0;
    std::printf("| %s | %s | %s | %s | %s | %s | %s |\n", l.name, fmt(fwd * 1e3, "%.2f").c_str(),
                fmt(tf * 1e3, "%.2f").c_str(), tf > 0 ? fmt(fwd / tf, "%.2f").c_str() : "-",
                fmt(both * 1e3, "%.2f").c_str(), fmt(tb * 1e3, "%.2f").c_str(),
                tb > 0 ? fmt(both / tb, "%.2f").c_str() : "-");
    std::fflush(stdout);
  }
}

// (e) the same conv2d layers on opencl:0 against cpu:0, same run: forward,
// and the three backward ops (input, weight, bias gradients) on their own.
void conv_device_table() {
  const vnn::Device cl("opencl", 0), cpu("cpu", 0);
  if (!vnn::is_available(cl)) {
    std::printf("\n## (e) conv2d opencl:0 vs cpu:0: no OpenCL device, skipped\n");
    return;
  }
  std::printf("\n## (e) conv2d float32, opencl:0 (%s) vs cpu:0, ms per call, same run\n\n",
              vnn::device_info(cl).name.c_str());
  std::printf("| layer | cpu fwd | opencl fwd | opencl / cpu | cpu bwd | opencl bwd | opencl / cpu |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  struct L { int64_t n, c, h, w, o; const char* name; };
  for (L l : {L{64, 1, 28, 28, 32, "64x1x28x28, 32 3x3 pad 1"}, L{64, 32, 14, 14, 64, "64x32x14x14, 64 3x3 pad 1"}}) {
    auto xv = random_floats(size_t(l.n * l.c * l.h * l.w), 11), wv = random_floats(size_t(l.o * l.c * 9), 12),
         bv = random_floats(size_t(l.o), 13), gv = random_floats(size_t(l.n * l.o * l.h * l.w), 14);
    double t[2][2];
    int col = 0;
    for (const vnn::Device& dev : {cpu, cl}) {
      vnn::Tensor x = vnn::from_vector(xv, {l.n, l.c, l.h, l.w}).to(dev), w = vnn::from_vector(wv, {l.o, l.c, 3, 3}).to(dev),
                  b = vnn::from_vector(bv, {l.o}).to(dev), gy = vnn::from_vector(gv, {l.n, l.o, l.h, l.w}).to(dev);
      auto sync = [&] { vnn::synchronize(dev); };
      vnn::Tensor y = vnn::conv2d(x, w, b, 1, 1);  // warm-up: kernels built, GEMM shapes tuned
      vnn::conv2d_backward_weight(gy, x, w.sizes(), 1, 1);
      vnn::conv2d_backward_input(gy, w, x.sizes(), 1, 1);
      sync();
      t[col][0] = median_seconds(3, [&] { y = vnn::conv2d(x, w, b, 1, 1); }, sync);
      t[col][1] = median_seconds(3, [&] {
        vnn::Tensor gx = vnn::conv2d_backward_input(gy, w, x.sizes(), 1, 1);
        vnn::Tensor gw = vnn::conv2d_backward_weight(gy, x, w.sizes(), 1, 1);
        vnn::Tensor gb = vnn::conv2d_backward_bias(gy);
      }, sync);
      ++col;
    }
    std::printf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", l.name, t[0][0] * 1e3, t[1][0] * 1e3,
                t[1][0] / t[0][0], t[0][1] * 1e3, t[1][1] * 1e3, t[1][1] / t[0][1]);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes = {256, 512, 1024, 2048};
  bool conv_only = false, profiler_only = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--big")) sizes.push_back(4096);
    else if (!std::strcmp(argv[i], "--conv-only")) conv_only = true;
    else if (!std::strcmp(argv[i], "--profiler-only")) profiler_only = true;
    else if (!std::strcmp(argv[i], "--samples") && i + 1 < argc) g_samples = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: %s [--big] [--conv-only] [--profiler-only] [--samples N]\n", argv[0]);
      return 2;
    }
  }
  int threads = omp_get_max_threads();
  const char* core = std::getenv("OPENBLAS_CORETYPE");
#ifdef VNN_BENCH_TORCH
  torch::set_num_threads(threads);
  std::printf("# vnn tensor_bench: %d OpenMP threads, OPENBLAS_CORETYPE=%s, LibTorch %s, median of %d\n", threads,
              core ? core : "(unset)", TORCH_VERSION, g_samples);
#else
  std::printf("# vnn tensor_bench: %d OpenMP threads, OPENBLAS_CORETYPE=%s, LibTorch not built in, median of %d\n",
              threads, core ? core : "(unset)", g_samples);
#endif
  std::printf("# cpu:0 = %s (%s)\n", vnn::device_info(vnn::Device("cpu", 0)).name.c_str(),
              vnn::device_info(vnn::Device("cpu", 0)).plugin.c_str());
  if (profiler_only) {
    overhead_table();
    profiler_overhead_table();
    return 0;
  }
  if (!conv_only) {
    gemm_table(sizes);
    overhead_table();
    profiler_overhead_table();
    bandwidth_table();
  }
  conv_table();
  conv_device_table();
  return 0;
}
