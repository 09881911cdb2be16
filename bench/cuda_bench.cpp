// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// cuda_bench: vnn on cuda:0 against the CUDA libraries called directly, in
// one program and one run (ci/gpu-check.sh runs it; PyTorch's figures for
// the same work come from bench/torch_gpu_bench.py in the same script):
//  (a) GEMM float32 / bfloat16 TFLOP/s: vnn::mm vs cublasGemmEx on the same
//      sizes and compute type (float32 accumulation, no TF32: PyTorch's
//      default), and the floor: the device's dense peak from the spec sheet
//      is not known to the program, so the ratio to cuBLAS is the figure;
//  (b) per-op overhead of a 64-element add (enqueue only, and drained);
//  (c) host<->device copies GB/s, pinned and pageable, vnn vs cudaMemcpy
//      (cudaMemcpy of pinned memory is the link's measured peak).
// Exit 77 (skipped) when vnn finds no cuda device.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "timing.hpp"
#include "vnn/vnn.h"

namespace {

void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(rc));
    std::exit(1);
  }
}
void check(cublasStatus_t rc, const char* what) {
  if (rc != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "%s: %s\n", what, cublasGetStatusString(rc));
    std::exit(1);
  }
}

std::string ratio(double a, double b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", b > 0 ? a / b : 0.0);
  return buf;
}

// cuBLAS directly: C[n,n] = A @ B, row-major as vnn sees it (the column-major
// call with operands swapped, as vnn's plugin makes it).
double cublas_tflops(cublasHandle_t h, int n, cudaDataType_t type, size_t elem) {
  void *a = nullptr, *b = nullptr, *c = nullptr;
  size_t bytes = size_t(n) * n * elem;
  check(cudaMalloc(&a, bytes), "cudaMalloc");
  check(cudaMalloc(&b, bytes), "cudaMalloc");
  check(cudaMalloc(&c, bytes), "cudaMalloc");
  check(cudaMemset(a, 0x3c, bytes), "cudaMemset");  // ~1.0 in half types, small floats otherwise
  check(cudaMemset(b, 0x3c, bytes), "cudaMemset");
  const float one = 1.f, zero = 0.f;
  auto body = [&] {
    check(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, type, n, a, type, n, &zero, c, type, n,
                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
  };
  double s = vnn_bench::median_seconds(5, n >= 4096 ? 5 : 20, body, [] { check(cudaDeviceSynchronize(), "sync"); });
  cudaFree(a), cudaFree(b), cudaFree(c);
  return 2.0 * n * n * double(n) / s / 1e12;
}

double vnn_tflops(const vnn::Device& dev, int n, vnn::DType t) {
  vnn::Tensor a = vnn::ones({n, n}, vnn::TensorOptions(dev).with(t));
  vnn::Tensor b = vnn::ones({n, n}, vnn::TensorOptions(dev).with(t));
  vnn::Tensor c;
  double s = vnn_bench::median_seconds(5, n >= 4096 ? 5 : 20, [&] { c = vnn::mm(a, b); },
                                       [&] { vnn::synchronize(dev); });
  return 2.0 * n * n * double(n) / s / 1e12;
}

double copy_gbs(size_t bytes, bool pinned, bool to_device) {
  void* host = nullptr;
  void* dev = nullptr;
  std::vector<char> pageable;
  if (pinned) check(cudaMallocHost(&host, bytes), "cudaMallocHost");
  else pageable.assign(bytes, 1), host = pageable.data();
  check(cudaMalloc(&dev, bytes), "cudaMalloc");
  double s = vnn_bench::median_seconds(5, 3, [&] {
    if (to_device) check(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    else check(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  }, [] {});
  cudaFree(dev);
  if (pinned) cudaFreeHost(host);
  return double(bytes) / s / 1e9;
}

double vnn_copy_gbs(const vnn::Device& dev, int64_t floats, bool pinned, bool to_device) {
  vnn::Tensor host = vnn::ones({floats});
  if (pinned) host = host.pin_memory();
  vnn::Tensor on_dev = host.to(dev);
  double s = vnn_bench::median_seconds(5, 3, [&] {
    if (to_device) on_dev.copy_(host, /*non_blocking=*/pinned);
    else host.copy_(on_dev, /*non_blocking=*/pinned);
  }, [&] { vnn::synchronize(dev); });
  return double(floats) * 4 / s / 1e9;
}

}  // namespace

int main() {
  const vnn::Device dev("cuda:0");
  if (!vnn::is_available(dev)) {
    std::printf("cuda_bench: skipped: vnn found no cuda device\n");
    for (const vnn::BackendReport& r : vnn::backend_report())
      std::printf("  %s: %s %s\n", r.backend.c_str(), r.status.c_str(), r.detail.c_str());
    return 77;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("# cuda_bench: vnn %s on %s (%s, sm_%d%d, %d SMs)\n", VNN_VERSION_STRING, dev.str().c_str(), prop.name,
              prop.major, prop.minor, prop.multiProcessorCount);
  cublasHandle_t h = nullptr;
  check(cublasCreate(&h), "cublasCreate");

  std::printf("\n## (a) GEMM n x n x n, TFLOP/s (float32 accumulation, no TF32)\n\n");
  std::printf("| dtype | n | vnn | cuBLAS direct | vnn / cuBLAS |\n|---|---|---|---|---|\n");
  for (auto [t, type, elem, label] : {std::tuple{vnn::kFloat32, CUDA_R_32F, size_t(4), "float32"},
                                      std::tuple{vnn::kBFloat16, CUDA_R_16BF, size_t(2), "bfloat16"}}) {
    for (int n : {1024, 2048, 4096, 8192}) {
      double v = vnn_tflops(dev, n, t), c = cublas_tflops(h, n, type, elem);
      std::printf("| %s | %d | %.1f | %.1f | %s |\n", label, n, v, c, ratio(v, c).c_str());
      std::fflush(stdout);
    }
  }

  std::printf("\n## (b) per-op overhead, 64-float add, microseconds per op\n\n");
  {
    vnn::Tensor a = vnn::ones({64}, vnn::TensorOptions(dev)), b = vnn::ones({64}, vnn::TensorOptions(dev));
    vnn::Tensor c;
    const int iters = 20000;
    double out_of_place = vnn_bench::median_seconds(5, iters, [&] { c = a + b; }, [&] { vnn::synchronize(dev); });
    double in_place = vnn_bench::median_seconds(5, iters, [&] { a.add_(b); }, [&] { vnn::synchronize(dev); });
    double synced = vnn_bench::median_seconds(5, 2000, [&] { a.add_(b), vnn::synchronize(dev); }, [] {});
    std::printf("| op | vnn us |\n|---|---|\n| a + b (queued) | %.2f |\n| a.add_(b) (queued) | %.2f |\n"
                "| a.add_(b) + synchronize | %.2f |\n",
                out_of_place * 1e6, in_place * 1e6, synced * 1e6);
  }

  std::printf("\n## (c) copies of 256 MiB, GB/s\n\n");
  std::printf("| direction | memory | vnn | cudaMemcpy | vnn / cudaMemcpy |\n|---|---|---|---|---|\n");
  const int64_t floats = int64_t(64) << 20;
  for (bool to_device : {true, false})
    for (bool pinned : {true, false}) {
      double v = vnn_copy_gbs(dev, floats, pinned, to_device), c = copy_gbs(size_t(floats) * 4, pinned, to_device);
      std::printf("| %s | %s | %.1f | %.1f | %s |\n", to_device ? "host->device" : "device->host",
                  pinned ? "pinned" : "pageable", v, c, ratio(v, c).c_str());
    }
  cublasDestroy(h);
  return 0;
}
