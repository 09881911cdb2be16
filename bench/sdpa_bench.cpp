// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// sdpa_bench: scaled_dot_product_attention on one device, float32,
// (B, H, E) = (8, 12, 64), L = S from 128 to 8192, causal and not, forward
// and forward + backward (autograd), the fused kernel (SDPBackend::flash)
// against vnn's math path (SDPBackend::math, where its L x S scores fit),
// with the peak memory the caching allocator handed out per call beyond
// the inputs. bench/sdpa_bench_torch.py times PyTorch's
// F.scaled_dot_product_attention on the same shapes; bench/sdpa_compare.sh
// runs both and prints the ratios.
//   sdpa_bench [--device cpu:0] [--l L]... [--max-l 8192] [--math-max-l 2048]
//              [--samples 3] [--math-samples 1] [--no-backward] [--no-sgemm]
// Prints one line per (L, causal):
//   L causal flash_fwd_ms flash_fb_ms math_fwd_ms math_fb_ms flash_fwd_mib flash_fb_mib math_fwd_mib math_fb_mib max_diff
// (times in ms, median of --samples calls after one warm-up call, the math
// path's of --math-samples; 0 where not run; max_diff = max |flash - math|
// of the forward, -1 where math did not run), and '#' lines with the GFLOP/s: forward 4 B H L S E (halved
// for causal), forward + backward 3.5 times that (FlashAttention's
// count: the backward does five products to the forward's two).
#include <cblas.h>
#include <omp.h>
#ifdef VNN_BENCH_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "vnn/attention.h"
#include "vnn/vnn.h"

using namespace vnn;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Median seconds of `samples` calls after a warm-up call (skipped for calls
// of several seconds, where the first is as good a sample as any).
double median_call(int samples, const std::function<void()>& body, const Device& dev) {
  auto t0 = std::chrono::steady_clock::now();
  body();
  synchronize(dev);
  const double first = seconds_since(t0);
  std::vector<double> t;
  if (first > 3.0) t.push_back(first), samples -= 1;
  for (int s = 0; s < samples; ++s) {
    t0 = std::chrono::steady_clock::now();
    body();
    synchronize(dev);
    t.push_back(seconds_since(t0));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Bytes the caching allocator had out at its peak during one call, beyond
// what was out before it (the inputs).
uint64_t peak_during(const std::function<void()>& body, const Device& dev) {
  synchronize(dev);
  const uint64_t before = memory_stats(dev).allocated;
  reset_peak_memory_stats(dev);
  body();
  synchronize(dev);
  const uint64_t peak = memory_stats(dev).peak_allocated;
  return peak > before ? peak - before : 0;
}

using Sgemm = std::function<void(bool tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                                  float* c, int ldc)>;

// A library's sgemm GFLOP/s: n^3 on every thread, and the tile the fused
// kernel's forward multiplies (256 x 512 x 64, q k^T) single-threaded on
// each thread at once, as inside the kernel's parallel region.
void sgemm_peak(const char* name, const Sgemm& gemm) {
  const int n = 2048;
  std::vector<float> a(size_t(n) * n, 0.5f), b(size_t(n) * n, 0.25f), c(size_t(n) * n);
  auto big = [&] { gemm(false, n, n, n, a.data(), n, b.data(), n, c.data(), n); };
  big();
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    big();
    best = std::min(best, seconds_since(t0));
  }
  const double big_gflops = 2.0 * n * n * n / best / 1e9;
  const int m = 256, tn = 512, k = 64, reps = 200;
  const int threads = omp_get_max_threads();
  std::vector<std::vector<float>> cs(size_t(threads), std::vector<float>(size_t(m) * tn));
  double tile_best = 1e30;
  for (int r = 0; r < 4; ++r) {
    auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel
    {
      float* cc = cs[size_t(omp_get_thread_num())].data();
      for (int i = 0; i < reps; ++i) gemm(true, m, tn, k, a.data(), k, b.data(), k, cc, tn);
    }
    if (r > 0) tile_best = std::min(tile_best, seconds_since(t0));
  }
  const double tile_gflops = 2.0 * m * tn * k * reps * threads / tile_best / 1e9;
  std::printf("# %s sgemm, %d threads: %d^3 %.1f GFLOP/s; %dx%dx%d tiles, one per thread: %.1f GFLOP/s\n", name,
              threads, n, big_gflops, m, tn, k, tile_gflops);
}

// The practical peaks: OpenBLAS (its core as OPENBLAS_CORETYPE or its
// probe says) and, where built with it, oneDNN, whose sgemm the CPU
// plugin's fused kernel calls on CPUs where its JIT has AVX-512.
void sgemm_peaks() {
  const char* core = openblas_get_corename();
  const std::string name = std::string("OpenBLAS (") + (core ? core : "?") + " core)";
  sgemm_peak(name.c_str(), [](bool tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                              int ldc) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, 1.f, a, lda, b, ldb, 0.f, c,
                ldc);
  });
#ifdef VNN_BENCH_ONEDNN
  sgemm_peak("oneDNN", [](bool tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                          int ldc) { dnnl_sgemm('N', tb ? 'T' : 'N', m, n, k, 1.f, a, lda, b, ldb, 0.f, c, ldc); });
#endif
}

struct Row {
  double fwd = 0, fb = 0, math_fwd = 0, math_fb = 0;
  uint64_t fwd_mem = 0, fb_mem = 0, math_fwd_mem = 0, math_fb_mem = 0;
  double max_diff = -1;
};

}  // namespace

int main(int argc, char** argv) {
  std::string device = "cpu:0";
  std::vector<int64_t> ls;
  int64_t max_l = 8192, math_max_l = 2048;
  int samples = 3, math_samples = 1;
  bool backward = true, sgemm = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--device" && i + 1 < argc) device = argv[++i];
    else if (a == "--l" && i + 1 < argc) ls.push_back(std::atoll(argv[++i]));
    else if (a == "--max-l" && i + 1 < argc) max_l = std::atoll(argv[++i]);
    else if (a == "--math-max-l" && i + 1 < argc) math_max_l = std::atoll(argv[++i]);
    else if (a == "--samples" && i + 1 < argc) samples = std::max(1, std::atoi(argv[++i]));
    else if (a == "--math-samples" && i + 1 < argc) math_samples = std::max(1, std::atoi(argv[++i]));
    else if (a == "--no-backward") backward = false;
    else if (a == "--no-sgemm") sgemm = false;
    else {
      std::fprintf(stderr,
                   "usage: %s [--device cpu:0] [--l L]... [--max-l 8192] [--math-max-l 2048] [--samples 3] "
                   "[--math-samples 1] [--no-backward] [--no-sgemm]\n",
                   argv[0]);
      return 2;
    }
  }
  if (ls.empty()) ls = {128, 512, 1024, 2048, 4096, 8192};
  const Device dev(device.c_str());
  const int64_t B = 8, H = 12, E = 64;
  std::printf("# sdpa_bench: %s, float32, B %lld, H %lld, E %lld, L = S, %d threads (OMP_NUM_THREADS), median of %d\n",
              dev.str().c_str(), (long long)B, (long long)H, (long long)E, omp_get_max_threads(), samples);
  if (sgemm && dev.str().rfind("cpu", 0) == 0) sgemm_peaks();
  std::printf("# L causal flash_fwd_ms flash_fb_ms math_fwd_ms math_fb_ms flash_fwd_mib flash_fb_mib math_fwd_mib "
              "math_fb_mib max_diff\n");
  const TensorOptions opt = TensorOptions(dev).with(kFloat32);
  for (int64_t L : ls) {
    if (L > max_l) continue;
    Generator gen(1234);
    Tensor q = randn({B, H, L, E}, opt, &gen), k = randn({B, H, L, E}, opt, &gen), v = randn({B, H, L, E}, opt, &gen);
    Tensor grad = randn({B, H, L, E}, opt, &gen);
    for (bool causal : {false, true}) {
      Row r;
      auto fwd = [&] { (void)scaled_dot_product_attention(q, k, v, Tensor(), 0.0, causal); };
      auto fb = [&] {  // fresh leaves: their gradients go with them
        Tensor qg = q.detach().requires_grad_(), kg = k.detach().requires_grad_(), vg = v.detach().requires_grad_();
        Tensor out = scaled_dot_product_attention(qg, kg, vg, Tensor(), 0.0, causal);
        out.backward(grad);
      };
      {
        SdpaKernelGuard guard(SDPBackend::flash);
        r.fwd = median_call(samples, fwd, dev);
        r.fwd_mem = peak_during(fwd, dev);
        if (backward) {
          r.fb = median_call(samples, fb, dev);
          r.fb_mem = peak_during(fb, dev);
        }
      }
      if (L <= math_max_l) {
        SdpaKernelGuard guard(SDPBackend::math);
        r.math_fwd = median_call(math_samples, fwd, dev);
        r.math_fwd_mem = peak_during(fwd, dev);
        if (backward) {
          r.math_fb = median_call(math_samples, fb, dev);
          r.math_fb_mem = peak_during(fb, dev);
        }
        Tensor a, b;
        {
          SdpaKernelGuard g1(SDPBackend::flash);
          a = scaled_dot_product_attention(q, k, v, Tensor(), 0.0, causal);
        }
        b = scaled_dot_product_attention(q, k, v, Tensor(), 0.0, causal);
        r.max_diff = amax(abs(sub(a, b))).item<double>();
      }
      const double flops = 4.0 * B * H * L * L * E * (causal ? 0.5 : 1.0);
      const double mib = 1.0 / (1024.0 * 1024.0);
      std::printf("%lld %d %.3f %.3f %.3f %.3f %.1f %.1f %.1f %.1f %.2e\n", (long long)L, causal ? 1 : 0,
                  r.fwd * 1e3, r.fb * 1e3, r.math_fwd * 1e3, r.math_fb * 1e3, double(r.fwd_mem) * mib,
                  double(r.fb_mem) * mib, double(r.math_fwd_mem) * mib, double(r.math_fb_mem) * mib, r.max_diff);
      std::printf("#   L %lld %s: flash fwd %.1f GFLOP/s, fwd+bwd %.1f GFLOP/s", (long long)L,
                  causal ? "causal" : "full", flops / r.fwd / 1e9, r.fb > 0 ? 3.5 * flops / r.fb / 1e9 : 0.0);
      if (r.math_fwd > 0)
        std::printf("; math fwd %.1f, fwd+bwd %.1f GFLOP/s", flops / r.math_fwd / 1e9,
                    r.math_fb > 0 ? 3.5 * flops / r.math_fb / 1e9 : 0.0);
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  return 0;
}
