// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// float32 matmul through oneDNN's sgemm where it beats OpenBLAS (built only
// with both). The rule, from tensor_bench (a) with both libraries called
// directly in the same run (docs/benchmarks/cpu-training.md, "oneDNN", and docs/benchmarks.md):
//  - oneDNN's JIT has AVX-512 (this day's Xeons): oneDNN for every GEMM
//    that reaches the BLAS (at least kMinWork = 32^3 multiply-adds, the
//    plugin's inline grain), whichever core OpenBLAS runs.
//    - OpenBLAS on a core without AVX-512 (OPENBLAS_CORETYPE=Haswell on
//      these machines): n = 2048, 32.2 against 24.7 GFLOP/s.
//    - OpenBLAS on its AVX-512 core (SkylakeX, CORETYPE unset): idle
//      machine, n = 1024 249.5 against 229.1, n = 2048 219.7 against 174.0;
//      a loaded one gave a tie (28.7 against 29.1). oneDNN never lost by
//      more than the noise, OpenBLAS did (0.94x of the best at n = 1024).
//    Below 512^3 (the GPT example's Linear layers: 2048 x 128 x 384 and
//    the like, and their gradients) oneDNN's AVX-512 kernels won too, by
//    1.3-8x at 2 threads against OpenBLAS held to AVX2 (from 32^3 up;
//    2026-12-03, /tmp gemm bench of both libraries, one process), so the
//    512^3 floor of the first measurement is gone.
//  - No AVX-512 in oneDNN's JIT (AVX2 CPUs): OpenBLAS everywhere, not
//    measured against oneDNN on such a CPU.
#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cctype>
#include <string>

#include "openmp/onednn_common.hpp"
#include "vnn/checked_size.h"

namespace vnn::openmp_backend::onednn {
namespace {

constexpr int64_t kMinWork = int64_t(32) * 32 * 32;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

// OpenBLAS's AVX-512 cores (OpenBLAS 0.3.21 names).
bool avx512_core_name(const std::string& core) {
  const std::string c = lower(core);
  return c.find("skylakex") != std::string::npos || c.find("cooperlake") != std::string::npos ||
         c.find("sapphirerapids") != std::string::npos;
}

struct Decision {
  bool on = false;
  std::string why;
};

const Decision& decision() {
  static const Decision d = [] {
    Decision r;
    const char* name = openblas_get_corename();
    const std::string core = name ? name : "unknown";
    const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
    const bool dnnl_avx512 = isa == dnnl::cpu_isa::avx512_core || isa == dnnl::cpu_isa::avx512_core_vnni ||
                             isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
    if (!enabled()) {
      r.why = "no (oneDNN off)";
    } else if (dnnl_avx512) {
      r.on = true;
      r.why = "yes, m*n*k >= 32^3 (oneDNN JIT AVX-512; OpenBLAS core " + core +
              (avx512_core_name(core) ? ", AVX-512)" : ", without the CPU's AVX-512)");
    } else {
      r.why = "no (oneDNN's JIT has no AVX-512; OpenBLAS core " + core + ")";
    }
    return r;
  }();
  return d;
}

}  // namespace

bool sgemm_selected(int64_t m, int64_t n, int64_t k) {
  int64_t work;
  return decision().on && checked::mul(m, n, &work) && checked::mul(work, k, &work) && work >= kMinWork;
}

bool tile_sgemm_selected() { return decision().on; }

std::string sgemm_describe() { return "matmul_onednn=" + decision().why; }

bool sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  return dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) == dnnl_success;
}

}  // namespace vnn::openmp_backend::onednn
