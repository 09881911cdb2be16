// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// OpenCL GEMM benchmark: one program, one run, vnn's OpenCL backend and
// CLBlast side by side on the same context, queue and buffers.
//   (a) SGEMM GFLOP/s at n = 256, 512, 1024 (2048 with --big): the plugin's
//       VNN_OP_MATMUL (whatever path it takes, printed from gemm_last) vs
//       CLBlastSgemm called directly on the plugin's own queue, and the
//       plugin's tiled kernel on the same operands (VNN_OPENCL_GEMM=tiled)
//   (b) per-op overhead of a 64-element float add: enqueue only, and with a
//       queue synchronize after every op
// The plugin is dlopen()ed through the C ABI as the core does.
//   (c) the CNN and MLP training steps' GEMM shapes: CLBlast, vnn tiled, long-k, wide-n, auto
//   usage: opencl_gemm_bench [--big] [--no-square] [--no-shapes] [--samples N] [--plugin path/libvnn-backend-opencl.so]
#include "timing.hpp"
#include <CL/cl.h>
#include <clblast_c.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "vnn/backend_abi.h"

namespace {

using clk = std::chrono::steady_clock;
const vnn_backend* B = nullptr;
const int32_t DEV = 0;
int g_samples = 5;

void check(vnn_status st, const char* what) {
  if (st != VNN_STATUS_OK) {
    std::fprintf(stderr, "%s failed (%d): %s\n", what, static_cast<int>(st), B->last_error());
    std::exit(1);
  }
}

vnn_tensor_desc mat(void* h, int64_t rows, int64_t cols) {
  vnn_tensor_desc d{};
  d.data = h;
  d.dtype = VNN_FLOAT32;
  d.ndim = 2;
  d.sizes[0] = rows;
  d.sizes[1] = cols;
  d.strides[0] = cols;
  d.strides[1] = 1;
  return d;
}

vnn_status run_op(int kind, const vnn_tensor_desc* in, int nin, const vnn_tensor_desc& out,
                  std::vector<double> scalars, std::vector<int64_t> ints, void* queue) {
  vnn_op op{};
  op.struct_size = sizeof op;
  op.kind = kind;
  op.num_inputs = nin;
  op.num_outputs = 1;
  op.num_scalars = static_cast<int32_t>(scalars.size());
  op.num_ints = static_cast<int32_t>(ints.size());
  op.inputs = in;
  op.outputs = &out;
  op.scalars = scalars.data();
  op.ints = ints.data();
  op.queue = queue;
  return B->run(DEV, &op);
}

// Median over g_samples repetitions (bench/timing.hpp).
double median_seconds(int iters, const std::function<void()>& body, const std::function<void()>& sync) {
  return vnn_bench::median_seconds(g_samples, iters, body, sync);
}

std::string gemm_last() {
  vnn_device_info info{};
  info.struct_size = sizeof info;
  check(B->device_info(DEV, &info), "device_info");
  const char* p = std::strstr(info.properties, "gemm_last=");
  if (!p) return "?";
  p += 10;
  return std::string(p, std::strcspn(p, "\n"));
}

}  // namespace

int main(int argc, char** argv) {
  const char* plugin =
#ifdef VNN_OPENCL_PLUGIN_PATH
      VNN_OPENCL_PLUGIN_PATH;
#else
      "libvnn-backend-opencl.so";
#endif
  bool big = false, skip_shapes = false, skip_square = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--big")) big = true;
    else if (!std::strcmp(argv[i], "--no-shapes")) skip_shapes = true;
    else if (!std::strcmp(argv[i], "--no-square")) skip_square = true;
    else if (!std::strcmp(argv[i], "--samples") && i + 1 < argc) g_samples = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--plugin") && i + 1 < argc) plugin = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--big] [--no-square] [--no-shapes] [--samples N] [--plugin libvnn-backend-opencl.so]\n", argv[0]);
      return 2;
    }
  }
  void* lib = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "dlopen %s: %s\n", plugin, dlerror());
    return 1;
  }
  auto entry = reinterpret_cast<vnn_backend_entry_fn>(dlsym(lib, VNN_BACKEND_ENTRY_NAME));
  B = entry ? entry(VNN_BACKEND_ABI_VERSION) : nullptr;
  if (!B) {
    std::fprintf(stderr, "%s: no usable vnn backend table\n", plugin);
    return 1;
  }
  int32_t count = 0;
  if (B->probe(&count) != VNN_STATUS_OK || count < 1) {
    std::printf("SKIP: no OpenCL device: %s\n", B->last_error());
    return 77;
  }
  check(B->init_device(DEV), "init_device");
  vnn_device_info info{};
  info.struct_size = sizeof info;
  check(B->device_info(DEV, &info), "device_info");
  std::printf("opencl:0: %s (%s, %d CUs)\n", info.name, info.driver_version, info.compute_units);

  // The plugin's queue; CLBlast runs on it, in its context, on the same buffers.
  void* qh = nullptr;
  check(B->queue_create(DEV, &qh), "queue_create");
  cl_command_queue q = static_cast<cl_command_queue>(qh);
  auto sync = [&] { check(B->queue_synchronize(DEV, qh), "queue_synchronize"); };

  std::printf("\n(a) SGEMM C = A @ B, n x n x n, float32, median of %d samples\n", g_samples);
  std::printf("%6s %10s %12s %12s %8s %12s\n", "n", "vnn path", "vnn GFLOP/s", "CLBlast", "ratio",
              "vnn tiled");
  std::vector<int64_t> sizes = {256, 512, 1024};
  if (big) sizes.push_back(2048);
  if (skip_square) sizes.clear();
  for (int64_t n : sizes) {
    size_t bytes = size_t(n * n) * 4;
    std::vector<float> ha(size_t(n * n)), hb(size_t(n * n));
    for (size_t i = 0; i < ha.size(); ++i) {
      ha[i] = float(int(i % 13) - 6) * 0.125f;
      hb[i] = float(int(i % 7) - 3) * 0.25f;
    }
    void *a = nullptr, *b = nullptr, *c = nullptr;
    check(B->alloc(DEV, bytes, &a), "alloc");
    check(B->alloc(DEV, bytes, &b), "alloc");
    check(B->alloc(DEV, bytes, &c), "alloc");
    check(B->copy_to_device(DEV, a, 0, ha.data(), bytes, qh, 1), "copy");
    check(B->copy_to_device(DEV, b, 0, hb.data(), bytes, qh, 1), "copy");
    vnn_tensor_desc in[2] = {mat(a, n, n), mat(b, n, n)};
    vnn_tensor_desc out = mat(c, n, n);
    int iters = n <= 256 ? 20 : n <= 512 ? 5 : 1;
    double t_vnn = median_seconds(
        iters, [&] { check(run_op(VNN_OP_MATMUL, in, 2, out, {1.0, 0.0}, {}, qh), "matmul"); }, sync);
    std::string path = gemm_last();
    // The tiled kernel on the same operands (VNN_OPENCL_GEMM=tiled).
    setenv("VNN_OPENCL_GEMM", "tiled", 1);
    double t_tiled = median_seconds(
        std::max(1, iters / 4), [&] { check(run_op(VNN_OP_MATMUL, in, 2, out, {1.0, 0.0}, {}, qh), "matmul"); },
        sync);
    unsetenv("VNN_OPENCL_GEMM");
    cl_mem ma = static_cast<cl_mem>(a), mb = static_cast<cl_mem>(b), mc = static_cast<cl_mem>(c);
    double t_blast = median_seconds(
        iters,
        [&] {
          CLBlastStatusCode st = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo,
                                              size_t(n), size_t(n), size_t(n), 1.0f, ma, 0, size_t(n), mb, 0,
                                              size_t(n), 0.0f, mc, 0, size_t(n), &q, nullptr);
          if (st != CLBlastSuccess) {
            std::fprintf(stderr, "CLBlastSgemm failed: %d\n", static_cast<int>(st));
            std::exit(1);
          }
        },
        sync);
    double flop = 2.0 * double(n) * double(n) * double(n);
    std::printf("%6lld %10s %12.2f %12.2f %8.3f %12.2f\n", static_cast<long long>(n), path.c_str(),
                flop / t_vnn * 1e-9, flop / t_blast * 1e-9, t_blast / t_vnn, flop / t_tiled * 1e-9);
    check(B->free(DEV, a), "free");
    check(B->free(DEV, b), "free");
    check(B->free(DEV, c), "free");
  }

  if (!skip_shapes) {
    // (c) the GEMMs of the CNN training step (conv2d forward, both conv
    // gradients, fc layers), operands as the core hands them over (a
    // transposed operand is a strided view): CLBlast, vnn's tiled GEMM and
    // the path the tuning picks, all through the plugin's MATMUL.
    struct Shape {
      const char* what;
      int64_t m, n, k;
      bool ta, tb;
    };
    const Shape shapes[] = {
        {"conv1 fwd W@col", 32, 50176, 9, false, false},      {"conv1 dW gy@col^T", 32, 9, 50176, false, true},
        {"conv2 fwd W@col", 64, 12544, 288, false, false},    {"conv2 dW gy@col^T", 64, 288, 12544, false, true},
        {"conv2 dcol W^T@gy", 288, 12544, 64, true, false},   {"fc1 fwd x@W^T", 64, 128, 3136, false, true},
        {"fc1 dW gy^T@x", 128, 3136, 64, true, false},        {"fc1 dx gy@W", 64, 3136, 128, false, false},
        // The MLP 784-256-128-10 step (train_bench --only mlp), batch 64.
        {"mlp fc1 fwd x@W^T", 64, 256, 784, false, true},     {"mlp fc2 fwd x@W^T", 64, 128, 256, false, true},
        {"mlp fc1 dW gy^T@x", 256, 784, 64, true, false},     {"mlp fc2 dW gy^T@x", 128, 256, 64, true, false},
        {"mlp fc2 dx gy@W", 64, 256, 128, false, false},
    };
    std::printf("\n(c) CNN training GEMMs through MATMUL, float32, ms per call (median of %d)\n", g_samples);
    std::printf("%-20s %18s %10s %10s %10s %10s %8s %10s %8s\n", "gemm", "m x n x k", "CLBlast", "vnn tiled",
                "vnn longk", "vnn widen", "ratio", "auto", "path");
    for (const Shape& sh : shapes) {
      const int64_t m = sh.m, n = sh.n, k = sh.k;
      void *a = nullptr, *b = nullptr, *c = nullptr;
      check(B->alloc(DEV, size_t(m * k) * 4, &a), "alloc");
      check(B->alloc(DEV, size_t(k * n) * 4, &b), "alloc");
      check(B->alloc(DEV, size_t(m * n) * 4, &c), "alloc");
      vnn_tensor_desc in[2] = {mat(a, m, k), mat(b, k, n)};
      if (sh.ta) in[0].strides[0] = 1, in[0].strides[1] = m;  // [k, m] storage
      if (sh.tb) in[1].strides[0] = 1, in[1].strides[1] = k;  // [n, k] storage
      vnn_tensor_desc out = mat(c, m, n);
      check(run_op(VNN_OP_FILL, nullptr, 0, mat(a, m * k, 1), {0.5}, {}, qh), "fill");
      check(run_op(VNN_OP_FILL, nullptr, 0, mat(b, k * n, 1), {0.25}, {}, qh), "fill");
      auto mm = [&] { check(run_op(VNN_OP_MATMUL, in, 2, out, {1.0, 0.0}, {}, qh), "matmul"); };
      double t_auto = median_seconds(1, mm, sync);
      std::string path = gemm_last();
      setenv("VNN_OPENCL_GEMM", "tiled", 1);
      double t_tiled = median_seconds(1, mm, sync);
      setenv("VNN_OPENCL_GEMM", "longk", 1);
      double t_longk = median_seconds(1, mm, sync);
      setenv("VNN_OPENCL_GEMM", "widen", 1);
      double t_widen = median_seconds(1, mm, sync);
      setenv("VNN_OPENCL_GEMM", "clblast", 1);
      double t_blast = median_seconds(1, mm, sync);
      unsetenv("VNN_OPENCL_GEMM");
      char dims[48];
      std::snprintf(dims, sizeof dims, "%lldx%lldx%lld", (long long)m, (long long)n, (long long)k);
      // ratio: CLBlast over the fastest of vnn's kernels.
      std::printf("%-20s %18s %10.2f %10.2f %10.2f %10.2f %8.2f %10.2f %8s\n", sh.what, dims, t_blast * 1e3,
                  t_tiled * 1e3, t_longk * 1e3, t_widen * 1e3, t_blast / std::min({t_tiled, t_longk, t_widen}),
                  t_auto * 1e3, path.c_str());
      for (void* p : {a, b, c}) check(B->free(DEV, p), "free");
    }
  }

  std::printf("\n(b) per-op overhead, out = a + b on 64 float32 elements\n");
  void *a = nullptr, *b = nullptr, *c = nullptr;
  check(B->alloc(DEV, 256, &a), "alloc");
  check(B->alloc(DEV, 256, &b), "alloc");
  check(B->alloc(DEV, 256, &c), "alloc");
  vnn_tensor_desc vin[2]{}, vout{};
  for (auto* d : {&vin[0], &vin[1], &vout}) {
    d->dtype = VNN_FLOAT32;
    d->ndim = 1;
    d->sizes[0] = 64;
    d->strides[0] = 1;
  }
  vin[0].data = a;
  vin[1].data = b;
  vout.data = c;
  check(run_op(VNN_OP_FILL, nullptr, 0, vin[0], {1.0}, {}, qh), "fill");
  check(run_op(VNN_OP_FILL, nullptr, 0, vin[1], {2.0}, {}, qh), "fill");
  auto add = [&] { check(run_op(VNN_OP_BINARY, vin, 2, vout, {1.0}, {VNN_BINARY_ADD}, qh), "add"); };
  // Enqueue only: the time of the run() calls, the queue drained outside the clock.
  std::vector<double> t;
  const int n_ops = 2000;
  add();
  sync();
  for (int s = 0; s < g_samples; ++s) {
    auto t0 = clk::now();
    for (int i = 0; i < n_ops; ++i) add();
    t.push_back(std::chrono::duration<double>(clk::now() - t0).count() / n_ops);
    sync();
  }
  std::sort(t.begin(), t.end());
  double enqueue_only = t[t.size() / 2];
  double with_sync = median_seconds(200, [&] { add(); sync(); }, sync);
  double drained = median_seconds(n_ops, add, sync);
  std::printf("  enqueue only:            %8.2f us/op\n", enqueue_only * 1e6);
  std::printf("  enqueue, queue drained:  %8.2f us/op (%d ops, then one synchronize)\n", drained * 1e6, n_ops);
  std::printf("  with synchronize per op: %8.2f us/op\n", with_sync * 1e6);
  check(B->free(DEV, a), "free");
  check(B->free(DEV, b), "free");
  check(B->free(DEV, c), "free");
  check(B->queue_destroy(DEV, qh), "queue_destroy");
  return 0;
}
