// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/* Force-included (-include) when a Kokkos older than 4.7 (3.4 and 4.6.01
 * measured) is compiled with CUDA 13 or newer. CUDA 13 replaced
 *   cudaMemPrefetchAsync(ptr, bytes, int device, cudaStream_t)
 *   cudaMemAdvise(ptr, bytes, advice, int device)
 *   cudaGraphAddDependencies(graph, from, to, count)
 * by forms taking a cudaMemLocation (and flags) or edge data; those Kokkos versions still
 * call the old ones (3.4: Kokkos_CudaSpace.cpp; 4.6.01: the wrappers in
 * Kokkos_Cuda_Instance.hpp, a header every CUDA consumer compiles). This adds
 * the old overloads on top of the new calls, so Kokkos's sources stay
 * untouched. It does nothing for host-only translation units or older CUDA. */
#ifndef VNN_CUDA13_COMPAT_H
#define VNN_CUDA13_COMPAT_H
#if defined(__cplusplus) && (defined(__CUDACC__) || defined(__NVCC__))
#include <cuda_runtime_api.h>
#if defined(CUDART_VERSION) && CUDART_VERSION >= 13000
static inline cudaMemLocation vnn_cuda13_location(int device) {
  cudaMemLocation where;
  where.type = (device == cudaCpuDeviceId) ? cudaMemLocationTypeHost
                                           : cudaMemLocationTypeDevice;
  where.id = (device == cudaCpuDeviceId) ? 0 : device;
  return where;
}
static inline cudaError_t cudaMemPrefetchAsync(const void* ptr, size_t bytes,
                                               int device,
                                               cudaStream_t stream = 0) {
  return cudaMemPrefetchAsync(ptr, bytes, vnn_cuda13_location(device), 0u,
                              stream);
}
static inline cudaError_t cudaMemAdvise(const void* ptr, size_t bytes,
                                        enum cudaMemoryAdvise advice,
                                        int device) {
  return cudaMemAdvise(ptr, bytes, advice, vnn_cuda13_location(device));
}
/* NULL edge data: plain dependencies, as the old form made (4.6's graphs). */
static inline cudaError_t cudaGraphAddDependencies(cudaGraph_t graph,
                                                   const cudaGraphNode_t* from,
                                                   const cudaGraphNode_t* to,
                                                   size_t count) {
  return cudaGraphAddDependencies(graph, from, to, NULL, count);
}
#endif
#endif
#endif
