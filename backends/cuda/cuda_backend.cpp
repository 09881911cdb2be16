// The CUDA backend: the generic Kokkos backend on Kokkos::Cuda, cuBLAS
// linked (GEMM goes through it once the matmul op lands). Compiled with
// Kokkos's nvcc_wrapper; discovery uses the driver API only (probe_cuda).
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>  // header-only NVTX3: a no-op unless Nsight injects itself

#include <stdexcept>
#include <string>

#include "cuda/probe_cuda.hpp"
#include "kokkos/plugin.hpp"

namespace vnn::cuda_backend {

inline void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(rc) + " (" +
                                                  cudaGetErrorString(rc) + ")");
}

struct CudaTraits {
  using ExecSpace = Kokkos::Cuda;
  using MemSpace = Kokkos::CudaSpace;
  using PinnedSpace = Kokkos::CudaHostPinnedSpace;
  static constexpr const char* name = "cuda";
  static constexpr int32_t priority = 30;
  static constexpr bool host_accessible = false;    // device memory is not host memory
  static constexpr bool inline_small_work = false;  // every kernel runs on the device

  static std::string description() {
    int major = 0, minor = 0;
    cublasGetProperty(MAJOR_VERSION, &major);
    cublasGetProperty(MINOR_VERSION, &minor);
    return std::string("Kokkos ") + kokkos_compat::version_string() + " Cuda (sm_" +
           std::to_string(VNN_CUDA_COMPILED_SM) + "+PTX), cuBLAS " + std::to_string(major) + "." +
           std::to_string(minor);
  }

  static vnn_status probe(int32_t* count, std::string* why) { return cuda_probe::probe(count, why); }

  static vnn_status device_info(int32_t device, vnn_device_info* info, std::string* why) {
    return cuda_probe::device_info(device, info, why);
  }

  static void before_initialize(int32_t) {}

  // NVTX ranges for the profiler: Nsight Systems shows vnn's op and range
  // names on the CPU timeline above the kernels they launched.
  static void range_push(const char* name) { nvtxRangePushA(name); }
  static void range_pop() { nvtxRangePop(); }

  // A queue is a Kokkos::Cuda instance on a stream of its own.
  static Kokkos::Cuda make_queue() {
    cudaStream_t s = nullptr;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    return Kokkos::Cuda(s);
  }
  static void destroy_queue(Kokkos::Cuda& q) { check(cudaStreamDestroy(q.cuda_stream()), "cudaStreamDestroy"); }

  // Native events on the queue's stream. The cudaEvent_t is made at the
  // first record (event_create has no error path through the ABI).
  struct Event {
    cudaEvent_t ev = nullptr;
  };
  static Event* event_create() { return new Event{}; }
  static void event_destroy(Event* e) {
    if (e && e->ev) cudaEventDestroy(e->ev);
    delete e;
  }
  static void event_record(Event* e, const Kokkos::Cuda& q) {
    if (!e->ev) check(cudaEventCreate(&e->ev), "cudaEventCreate");
    check(cudaEventRecord(e->ev, q.cuda_stream()), "cudaEventRecord");
  }
  static void event_synchronize(Event* e) {
    if (e->ev) check(cudaEventSynchronize(e->ev), "cudaEventSynchronize");
  }
  static double event_elapsed_ms(Event* a, Event* b) {
    if (!a->ev || !b->ev) throw std::runtime_error("cudaEventElapsedTime: an event was never recorded");
    float ms = 0.f;
    check(cudaEventElapsedTime(&ms, a->ev, b->ev), "cudaEventElapsedTime");
    return ms;
  }
  // Streams: cudaEventQuery never blocks; cudaErrorNotReady is the normal
  // "still running" answer, not a failure. A never-recorded event has no
  // work to wait for.
  static bool event_query(Event* e) {
    if (!e->ev) return true;
    cudaError_t err = cudaEventQuery(e->ev);
    if (err == cudaErrorNotReady) {
      (void)cudaGetLastError();  // as PyTorch does: keep NotReady out of later error checks
      return false;
    }
    check(err, "cudaEventQuery");
    return true;
  }
  static void queue_wait_event(const Kokkos::Cuda& q, Event* e) {
    if (e->ev) check(cudaStreamWaitEvent(q.cuda_stream(), e->ev, 0), "cudaStreamWaitEvent");
  }
};

}  // namespace vnn::cuda_backend

extern "C" VNN_BACKEND_EXPORT const vnn_backend* vnn_backend_entry(uint32_t host_abi_version) {
  return vnn::kokkos_backend::make_table<vnn::cuda_backend::CudaTraits>(host_abi_version);
}
