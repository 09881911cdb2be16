/* Force-included (-include) when an older Kokkos (3.x) is compiled with
 * CUDA 13 or newer. CUDA 13 replaced
 *   cudaMemPrefetchAsync(ptr, bytes, int device, cudaStream_t)
 * by a form taking a cudaMemLocation and flags; Kokkos 3.x still calls the
 * old one (Kokkos_CudaSpace.cpp). This adds the old 4-argument overload on
 * top of the new call, so Kokkos's sources stay untouched. It does nothing
 * for host-only translation units or older CUDA. */
#ifndef VNN_CUDA13_COMPAT_H
#define VNN_CUDA13_COMPAT_H
#if defined(__cplusplus) && (defined(__CUDACC__) || defined(__NVCC__))
#include <cuda_runtime_api.h>
#if defined(CUDART_VERSION) && CUDART_VERSION >= 13000
static inline cudaError_t cudaMemPrefetchAsync(const void* ptr, size_t bytes,
                                               int device,
                                               cudaStream_t stream = 0) {
  cudaMemLocation where;
  where.type = (device == cudaCpuDeviceId) ? cudaMemLocationTypeHost
                                           : cudaMemLocationTypeDevice;
  where.id = (device == cudaCpuDeviceId) ? 0 : device;
  return cudaMemPrefetchAsync(ptr, bytes, where, 0u, stream);
}
#endif
#endif
#endif
