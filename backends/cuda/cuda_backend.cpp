// The CUDA backend: the generic Kokkos backend on Kokkos::Cuda, MATMUL
// through cuBLAS (strided-batched, float32/float64/float16/bfloat16).
// Compiled with Kokkos's nvcc_wrapper; discovery uses the driver API only
// (probe_cuda.cpp). Streams and events are shared with HIP
// (cuda_hip/gpu_traits.hpp).
#include <cublas_v2.h>
#include <nvtx3/nvToolsExt.h>  // header-only NVTX3: a no-op unless Nsight injects itself

#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>

#include "cuda_hip/gpu_traits.hpp"
#include "cuda_hip/probe.hpp"
#ifdef VNN_CUDA_HAVE_NCCL
#include "cuda/nccl_comm.hpp"
#endif
#include "kokkos/plugin.hpp"

namespace vnn::cuda_backend {

inline void check_blas(cublasStatus_t rc, const char* what) {
  if (rc != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + cublasGetStatusName(rc) + " (" + cublasGetStatusString(rc) +
                             ")");
}

// MATMUL on cuBLAS. One handle for the plugin, made on first use (after
// Kokkos selected the device) and kept to the end of the process: its
// stream is switched per call, so calls are serialised by a mutex (they only
// enqueue).
struct CublasGemm {
  static constexpr const char* name = "cublas";

  static bool supports(int32_t dtype) {
    return dtype == VNN_FLOAT32 || dtype == VNN_FLOAT64 || dtype == VNN_FLOAT16 || dtype == VNN_BFLOAT16;
  }

  // a, b, c: allocations; offsets in elements. The operands swap for
  // column-major cuBLAS (kernels::column_major).
  static void gemm(const Kokkos::Cuda& q, int32_t dtype, const kernels::GemmPlan& plan, double alpha, double beta,
                   const void* a, int64_t a_off, const void* b, int64_t b_off, void* c, int64_t c_off) {
    const kernels::ColumnMajorGemm g = kernels::column_major(plan);
    for (int64_t v : {g.m, g.n, g.k, g.ld_first, g.ld_second, g.ldc, g.batch})
      if (v > INT_MAX)
        throw std::runtime_error("cublasGemmStridedBatchedEx: a dimension (" + std::to_string(v) +
                                 ") exceeds 2^31-1; split the matmul");
    cudaDataType_t type = CUDA_R_32F;
    cublasComputeType_t compute = allow_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    if (dtype == VNN_FLOAT64) type = CUDA_R_64F, compute = CUBLAS_COMPUTE_64F;
    if (dtype == VNN_FLOAT16) type = CUDA_R_16F, compute = CUBLAS_COMPUTE_32F;
    if (dtype == VNN_BFLOAT16) type = CUDA_R_16BF, compute = CUBLAS_COMPUTE_32F;
    const int64_t es = kernels::dtype_bytes(dtype);
    const float alpha_f = float(alpha), beta_f = float(beta);
    const void* alpha_p = compute == CUBLAS_COMPUTE_64F ? static_cast<const void*>(&alpha) : &alpha_f;
    const void* beta_p = compute == CUBLAS_COMPUTE_64F ? static_cast<const void*>(&beta) : &beta_f;
    const char* pa = static_cast<const char*>(a) + a_off * es;
    const char* pb = static_cast<const char*>(b) + b_off * es;
    char* pc = static_cast<char*>(c) + c_off * es;
    std::lock_guard<std::mutex> lock(mutex());
    cublasHandle_t h = handle();
    check_blas(cublasSetStream(h, q.cuda_stream()), "cublasSetStream");
    check_blas(cublasGemmStridedBatchedEx(h, g.trans_first ? CUBLAS_OP_T : CUBLAS_OP_N,
                                          g.trans_second ? CUBLAS_OP_T : CUBLAS_OP_N, int(g.m), int(g.n), int(g.k),
                                          alpha_p, pb, type, int(g.ld_first), g.stride_first, pa, type,
                                          int(g.ld_second), g.stride_second, beta_p, pc, type, int(g.ldc), g.stride_c,
                                          int(g.batch), compute, CUBLAS_GEMM_DEFAULT),
               "cublasGemmStridedBatchedEx");
  }

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static cublasHandle_t handle() {
    static cublasHandle_t h = [] {
      cublasHandle_t made = nullptr;
      check_blas(cublasCreate(&made), "cublasCreate");
      return made;  // never destroyed: the driver may be gone at exit
    }();
    return h;
  }
  // torch.backends.cuda.matmul.allow_tf32: off unless VNN_ALLOW_TF32=1, so
  // float32 matmul keeps float32 accuracy by default, as in PyTorch.
  static bool allow_tf32() {
    static const bool on = [] {
      const char* v = std::getenv("VNN_ALLOW_TF32");
      return v && std::strcmp(v, "1") == 0;
    }();
    return on;
  }
};

struct CudaTraits : gpu::GpuTraits {
  static constexpr const char* name = "cuda";
  static constexpr int32_t priority = 30;
  using DeviceBlas = CublasGemm;
#ifdef VNN_CUDA_HAVE_NCCL
  using Comm = NcclComm;  // the ABI's comm_* entries
#endif

  static std::string description() {
    int major = 0, minor = 0;
    cublasGetProperty(MAJOR_VERSION, &major);
    cublasGetProperty(MINOR_VERSION, &minor);
    return std::string("Kokkos ") + kokkos_compat::version_string() + " Cuda (" + gpu_probe::compiled_archs() +
           "), cuBLAS " + std::to_string(major) + "." + std::to_string(minor);
  }

  static vnn_status probe(int32_t* count, std::string* why) { return gpu_probe::probe(count, why); }

  static vnn_status device_info(int32_t device, vnn_device_info* info, std::string* why) {
    return gpu_probe::device_info(device, info, why);
  }

  // NVTX ranges for the profiler: Nsight Systems shows vnn's op and range
  // names on the CPU timeline above the kernels they launched.
  static void range_push(const char* name) { nvtxRangePushA(name); }
  static void range_pop() { nvtxRangePop(); }
};

}  // namespace vnn::cuda_backend

extern "C" VNN_BACKEND_EXPORT const vnn_backend* vnn_backend_entry(uint32_t host_abi_version) {
  return vnn::kokkos_backend::make_table<vnn::cuda_backend::CudaTraits>(host_abi_version);
}
