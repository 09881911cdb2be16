// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA backend: the generic Kokkos backend on Kokkos::Cuda, MATMUL
// through cuBLAS (strided-batched, float32/float64/float16/bfloat16).
// Compiled with Kokkos's nvcc_wrapper; discovery uses the driver API only
// (probe_cuda.cpp). Streams and events are shared with HIP
// (cuda_hip/gpu_traits.hpp). On Kokkos >= 4.3 it drives every GPU of the
// machine in one process (cuda/cuda_devices.hpp): one Kokkos::Cuda instance
// per device on a stream of its own, memory from that device's CudaSpace,
// cuBLAS handles per device, peer copies between devices.
#include <cublas_v2.h>
#include <nvtx3/nvToolsExt.h>  // header-only NVTX3: a no-op unless Nsight injects itself

#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cuda/cuda_devices.hpp"
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

// MATMUL on cuBLAS. One handle per device, made on first use with that
// device current and kept to the end of the process: its stream is switched
// per call, so calls are serialised by a mutex (they only enqueue).
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
#if KOKKOS_VERSION >= 40300
    const int device = q.cuda_device();
    gpu::check(cudaSetDevice(device), "cudaSetDevice");  // a handle serves calls with its device current
#else
    const int device = 0;  // one GPU per process: the one Kokkos runs on is current
#endif
    cublasHandle_t h = handle(device);
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
  // Under mutex(); `device` is current.
  static cublasHandle_t handle(int device) {
    static cublasHandle_t handles[kokkos_backend::kMaxDevices] = {};
    if (device < 0 || device >= kokkos_backend::kMaxDevices)
      throw std::runtime_error("cublasCreate: device " + std::to_string(device) + " out of range");
    if (!handles[device]) check_blas(cublasCreate(&handles[device]), "cublasCreate");
    return handles[device];  // never destroyed: the driver may be gone at exit
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
           "), cuBLAS " + std::to_string(major) + "." + std::to_string(minor) +
           (cuda_devices::rule(KOKKOS_VERSION).multi_gpu ? ", several GPUs per process" : ", one GPU per process");
  }

  static vnn_status probe(int32_t* count, std::string* why) { return gpu_probe::probe(count, why); }

  static vnn_status device_info(int32_t device, vnn_device_info* info, std::string* why) {
    return gpu_probe::device_info(device, info, why);
  }

  // init_device's rule (cuda_devices.hpp): one GPU per process before
  // Kokkos 4.3, every listed one from 4.3 on.
  static bool admit(int32_t device, const std::vector<int32_t>& running, std::string* why) {
    int32_t count = 0;
    std::string probe_why;
    if (gpu_probe::probe(&count, &probe_why) != VNN_STATUS_OK) {
      *why = probe_why;
      return false;
    }
    const cuda_devices::Admission a = cuda_devices::admit(cuda_devices::rule(KOKKOS_VERSION),
                                                          std::vector<int>(running.begin(), running.end()), device,
                                                          count);
    if (!a.ok) *why = a.reason;
    return a.ok;
  }

#if KOKKOS_VERSION >= 40300
  // Several GPUs (Kokkos >= 4.3, kokkos#6782): an instance constructed on a
  // stream made on `device` launches there.
  static ExecSpace make_queue_on(int32_t device) {
    VNN_GPU_CHECK(cudaSetDevice, device);
    return make_queue();
  }
  // CudaSpace's default object allocates on Kokkos's first device; the one
  // impl_create makes for `device` allocates (and frees) there.
  static void* device_alloc(int32_t device, size_t bytes) {
    return Kokkos::CudaSpace::impl_create(device, nullptr).allocate("vnn", bytes);
  }
  static void device_free(int32_t device, void* p, size_t bytes) {
    Kokkos::CudaSpace::impl_create(device, nullptr).deallocate("vnn", p, bytes);
  }
  // An event belongs to the device current at its creation, and is recorded
  // only on streams of that device.
  static void event_record(Event* e, const ExecSpace& q) {
    VNN_GPU_CHECK(cudaSetDevice, q.cuda_device());
    GpuTraits::event_record(e, q);
  }
  // false: no peer access between the two (the core stages the copy).
  static bool copy_peer(int32_t dst_device, void* dst, int32_t src_device, const void* src, size_t bytes,
                        const ExecSpace& q) {
    switch (cuda_devices::route(src_device, dst_device, peer_access(src_device, dst_device))) {
      case cuda_devices::CopyRoute::same_device:
        VNN_GPU_CHECK(cudaMemcpyAsync, dst, src, bytes, cudaMemcpyDeviceToDevice, q.cuda_stream());
        return true;
      case cuda_devices::CopyRoute::peer:
        VNN_GPU_CHECK(cudaMemcpyPeerAsync, dst, dst_device, src, src_device, bytes, q.cuda_stream());
        return true;
      case cuda_devices::CopyRoute::staged_host: break;
    }
    return false;
  }

 private:
  // Whether src_device reaches dst_device's memory directly: asked once per
  // ordered pair (cudaDeviceCanAccessPeer), enabled then
  // (cudaDeviceEnablePeerAccess with src_device current).
  static bool peer_access(int32_t src_device, int32_t dst_device) {
    if (src_device == dst_device) return true;
    static std::mutex m;
    static std::map<std::pair<int32_t, int32_t>, bool> known;
    std::lock_guard<std::mutex> lock(m);
    auto it = known.find({src_device, dst_device});
    if (it != known.end()) return it->second;
    int can = 0;
    VNN_GPU_CHECK(cudaDeviceCanAccessPeer, &can, src_device, dst_device);
    if (can) {
      VNN_GPU_CHECK(cudaSetDevice, src_device);
      cudaError_t rc = cudaDeviceEnablePeerAccess(dst_device, 0);
      if (rc == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();  // enabled before: fine
      else gpu::check(rc, "cudaDeviceEnablePeerAccess");
    }
    known[{src_device, dst_device}] = can != 0;
    return can != 0;
  }

 public:
#endif

  // NVTX ranges for the profiler: Nsight Systems shows vnn's op and range
  // names on the CPU timeline above the kernels they launched.
  static void range_push(const char* name) { nvtxRangePushA(name); }
  static void range_pop() { nvtxRangePop(); }
};

}  // namespace vnn::cuda_backend

extern "C" VNN_BACKEND_EXPORT const vnn_backend* vnn_backend_entry(uint32_t host_abi_version) {
  return vnn::kokkos_backend::make_table<vnn::cuda_backend::CudaTraits>(host_abi_version);
}
