// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One vendor alias header for the code the CUDA and HIP plugins share (as
// ggml's vendors/hip.h and Ginkgo's common/cuda_hip): the runtime calls they
// both make, under neutral gpu* names, mapped to cuda* or hip* by
// VNN_GPU_HIP (set by cmake/VnnGpuPlugin.cmake for the HIP plugin). Runtime
// API only, no Kokkos: gpu_traits.hpp adds the Kokkos spaces. A fix to the
// shared stream/event code then lands in both plugins at once.
#pragma once

#include <stdexcept>
#include <string>

#if defined(VNN_GPU_HIP)
#include <hip/hip_runtime_api.h>

#define VNN_GPU_NAME "hip"
using gpuError_t = hipError_t;
using gpuStream_t = hipStream_t;
using gpuEvent_t = hipEvent_t;
#define gpuSuccess hipSuccess
#define gpuErrorNotReady hipErrorNotReady
#define gpuStreamNonBlocking hipStreamNonBlocking
#define gpuGetErrorName hipGetErrorName
#define gpuGetErrorString hipGetErrorString
#define gpuGetLastError hipGetLastError
#define gpuStreamCreateWithFlags hipStreamCreateWithFlags
#define gpuStreamDestroy hipStreamDestroy
#define gpuStreamWaitEvent hipStreamWaitEvent
#define gpuEventCreate hipEventCreate
#define gpuEventDestroy hipEventDestroy
#define gpuEventRecord hipEventRecord
#define gpuEventSynchronize hipEventSynchronize
#define gpuEventElapsedTime hipEventElapsedTime
#define gpuEventQuery hipEventQuery

#else  // CUDA
#include <cuda_runtime_api.h>

#define VNN_GPU_NAME "cuda"
using gpuError_t = cudaError_t;
using gpuStream_t = cudaStream_t;
using gpuEvent_t = cudaEvent_t;
#define gpuSuccess cudaSuccess
#define gpuErrorNotReady cudaErrorNotReady
#define gpuStreamNonBlocking cudaStreamNonBlocking
#define gpuGetErrorName cudaGetErrorName
#define gpuGetErrorString cudaGetErrorString
#define gpuGetLastError cudaGetLastError
#define gpuStreamCreateWithFlags cudaStreamCreateWithFlags
#define gpuStreamDestroy cudaStreamDestroy
#define gpuStreamWaitEvent cudaStreamWaitEvent
#define gpuEventCreate cudaEventCreate
#define gpuEventDestroy cudaEventDestroy
#define gpuEventRecord cudaEventRecord
#define gpuEventSynchronize cudaEventSynchronize
#define gpuEventElapsedTime cudaEventElapsedTime
#define gpuEventQuery cudaEventQuery
#endif

// Calls fn (a gpu* name) and checks it; messages name the vendor's call
// ("cudaEventRecord", "hipEventRecord"), not the alias.
#define VNN_GPU_STR2(x) #x
#define VNN_GPU_STR(x) VNN_GPU_STR2(x)
#define VNN_GPU_CHECK(fn, ...) ::vnn::gpu::check(fn(__VA_ARGS__), VNN_GPU_STR(fn))

namespace vnn::gpu {

// Throws with the call, the vendor's error name and its text; the plugin's
// guard turns it into a status and last_error().
inline void check(gpuError_t rc, const char* what) {
  if (rc != gpuSuccess)
    throw std::runtime_error(std::string(what) + ": " + gpuGetErrorName(rc) + " (" + gpuGetErrorString(rc) + ")");
}

}  // namespace vnn::gpu
