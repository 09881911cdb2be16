// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU backend: the generic Kokkos backend on Kokkos::OpenMP, with tiny
// kernels run inline on Kokkos::Serial.
#ifdef VNN_CPU_HAVE_CBLAS
#include <cblas.h>
#endif
#include <omp.h>

#include <cstdio>
#include <cstdlib>

#include "kokkos/plugin.hpp"
#include "openmp/cpu_info.hpp"
#ifdef VNN_CPU_HAVE_ONEDNN
#include "openmp/onednn_common.hpp"
#endif

namespace vnn::openmp_backend {

struct OpenMPTraits : kokkos_backend::HostClockEvents<Kokkos::OpenMP> {
  using ExecSpace = Kokkos::OpenMP;
  using MemSpace = Kokkos::HostSpace;
  using PinnedSpace = Kokkos::HostSpace;
  static constexpr const char* name = "openmp";
  static constexpr int32_t priority = 0;
  static constexpr bool host_accessible = true;
  static constexpr bool inline_small_work = true;

  static std::string description() {
    std::string d = std::string("Kokkos ") + kokkos_compat::version_string();
#ifdef VNN_CPU_HAVE_CBLAS
    d += " OpenMP+Serial, OpenBLAS";
#else
    d += " OpenMP+Serial, no BLAS (tiled kernel)";
#endif
#ifdef VNN_CPU_HAVE_ONEDNN
    d += ", oneDNN";
#endif
    return d;
  }

  // "onednn=..." for the device properties: built or not, on or off.
  static std::string onednn_line() {
#if defined(VNN_CPU_HAVE_ONEDNN) && defined(VNN_CPU_HAVE_CBLAS)
    return onednn::describe() + "\n" + onednn::sgemm_describe();
#elif defined(VNN_CPU_HAVE_ONEDNN)
    return onednn::describe();
#else
    return "onednn=not built";
#endif
  }

  static vnn_status probe(int32_t* count, std::string*) {
    *count = 1;  // the host is always there
    return VNN_STATUS_OK;
  }

  static vnn_status device_info(int32_t device, vnn_device_info* info, std::string* why) {
    if (device != 0) {
      *why = "cpu:" + std::to_string(device) + " does not exist (the CPU backend has one device, cpu:0)";
      return VNN_STATUS_INVALID_ARGUMENT;
    }
    CpuInfo cpu = read_cpu_info();
    int threads = omp_get_max_threads();
    std::snprintf(info->name, sizeof(info->name), "%s", cpu.model.c_str());
    std::snprintf(info->vendor, sizeof(info->vendor), "%s", cpu.vendor.c_str());
    std::snprintf(info->driver_version, sizeof(info->driver_version), "OpenMP %d", _OPENMP);
    std::snprintf(info->arch, sizeof(info->arch), "%s", cpu.isa.c_str());
    info->type = VNN_DEVICE_CPU;
    info->compute_units = threads;
    info->total_memory = cpu.total_memory;
    info->free_memory = cpu.available_memory;
    info->host_accessible = 1;
    info->usable = 1;
    std::snprintf(info->properties, sizeof(info->properties),
                  "threads=%d\nlogical_cores=%d\nkokkos=%s\nexecution_spaces=OpenMP,Serial\n"
                  "inline_grain=%lld elements\n%s\n",
                  threads, cpu.logical_cores, kokkos_compat::version_string(),
                  static_cast<long long>(kokkos_backend::kInlineGrain), onednn_line().c_str());
    return VNN_STATUS_OK;
  }

  static void before_initialize(int32_t) {
    // Kokkos warns when OMP_PROC_BIND is unset; vnn leaves thread binding to
    // the user (set OMP_PROC_BIND / OMP_PLACES to bind), so say so quietly.
    setenv("OMP_PROC_BIND", "false", 0);
  }

  static Kokkos::OpenMP make_queue() { return Kokkos::OpenMP(); }
  static void destroy_queue(Kokkos::OpenMP&) {}

#ifdef VNN_CPU_HAVE_CBLAS
  // float32 / float64 MATMUL above the inline grain goes to OpenBLAS.
  struct HostBlas {
    static constexpr const char* name = "openblas";
    static void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                     const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
#ifdef VNN_CPU_HAVE_ONEDNN
      if (onednn::sgemm_selected(m, n, k) && onednn::sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)) {
        kokkos_backend::last_path_slot() = "onednn";
        return;
      }
#endif
      cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, blasint(m),
                  blasint(n), blasint(k), alpha, a, blasint(lda), b, blasint(ldb), beta, c, blasint(ldc));
    }
    static void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                     int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
      cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, blasint(m),
                  blasint(n), blasint(k), alpha, a, blasint(lda), b, blasint(ldb), beta, c, blasint(ldc));
    }
    // The fused attention's tile products (kernels/attention_host.hpp), one
    // per thread inside the pool's parallel region (both libraries run
    // single-threaded there): float32 through oneDNN where its JIT has
    // AVX-512 (onednn::tile_sgemm_selected), else OpenBLAS.
    static void tile_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
#ifdef VNN_CPU_HAVE_ONEDNN
      if (onednn::tile_sgemm_selected() && onednn::sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))
        return;
#endif
      cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, blasint(m),
                  blasint(n), blasint(k), alpha, a, blasint(lda), b, blasint(ldb), beta, c, blasint(ldc));
    }
    static void tile_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
      gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    }
  };
#endif

#ifdef VNN_CPU_HAVE_ONEDNN
  // oneDNN's scratchpads and temporaries from the core's caching allocator.
  static void set_core_allocator(const vnn_core_allocator* a) { onednn::set_core_allocator(a); }

  // conv2d and pooling (float32) through oneDNN where their selection rules
  // take them (onednn_conv.cpp, onednn_pooling.cpp); everything else stays
  // on the kernels above.
  struct HostOps {
    static constexpr const char* name = "onednn";
    static bool wants(int32_t kind) { return onednn::wants(kind); }
    static kokkos_backend::HostOutcome run(const vnn_op& op, std::string* why) {
      switch (onednn::run(op, why)) {
        case onednn::Outcome::taken: return kokkos_backend::HostOutcome::taken;
        case onednn::Outcome::invalid: return kokkos_backend::HostOutcome::invalid;
        default: return kokkos_backend::HostOutcome::declined;
      }
    }
  };
#endif
};

}  // namespace vnn::openmp_backend

extern "C" VNN_BACKEND_EXPORT const vnn_backend* vnn_backend_entry(uint32_t host_abi_version) {
  return vnn::kokkos_backend::make_table<vnn::openmp_backend::OpenMPTraits>(host_abi_version);
}
