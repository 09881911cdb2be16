// float32 matmul through oneDNN's sgemm where it beats OpenBLAS (built only
// with both). The rule, from tensor_bench (a) in one run with both
// libraries called directly (docs/benchmarks.md, "oneDNN"):
//  - OpenBLAS running a core without AVX-512 on a CPU that has it (what
//    OPENBLAS_CORETYPE=Haswell does on these AVX-512 machines): oneDNN
//    for GEMMs of at least kMinWork = 512^3 multiply-adds (n = 2048: 32.2
//    against 24.7 GFLOP/s); below that the two were within the noise.
//  - OpenBLAS on its widest core (OPENBLAS_CORETYPE unset here): OpenBLAS
//    everywhere (n = 2048: 29.1 against 28.7 GFLOP/s, a tie).
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

constexpr int64_t kMinWork = int64_t(512) * 512 * 512;

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
    } else if (dnnl_avx512 && !avx512_core_name(core)) {
      r.on = true;
      r.why = "yes, m*n*k >= 512^3 (OpenBLAS core " + core + " lacks the CPU's AVX-512)";
    } else {
      r.why = "no (OpenBLAS core " + core + ")";
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

std::string sgemm_describe() { return "matmul_onednn=" + decision().why; }

bool sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  return dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) == dnnl_success;
}

}  // namespace vnn::openmp_backend::onednn
