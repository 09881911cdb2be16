// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The three CUDA driver calls Kokkos >= 4 makes (Kokkos_Cuda_Instance.cpp
// finds the device of a stream an instance is built on: cuStreamGetCtx,
// cuCtxPushCurrent, cuCtxGetDevice), resolved from libcuda.so.1 at their
// first call instead of at load. Kokkos 4 links CUDA::cuda_driver, so
// without this the plugin needs libcuda.so.1 to load at all and a machine
// without the NVIDIA driver reports "dlopen failed" rather than the probe's
// "no NVIDIA driver". Built (and the plugin linked --as-needed) only on
// Kokkos >= 4 (backends/cuda/CMakeLists.txt); hidden like every symbol but
// the entry point. Only reached after the probe found a driver and device.
#include <cuda.h>
#include <dlfcn.h>

#include <mutex>

namespace {

struct Driver {
  CUresult (*stream_get_ctx)(CUstream, CUcontext*) = nullptr;
  CUresult (*ctx_push_current)(CUcontext) = nullptr;
  CUresult (*ctx_get_device)(CUdevice*) = nullptr;
};

const Driver& driver() {
  static Driver d;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;  // every call then answers CUDA_ERROR_NOT_INITIALIZED
    d.stream_get_ctx = reinterpret_cast<CUresult (*)(CUstream, CUcontext*)>(dlsym(lib, "cuStreamGetCtx"));
    d.ctx_push_current = reinterpret_cast<CUresult (*)(CUcontext)>(dlsym(lib, "cuCtxPushCurrent_v2"));
    d.ctx_get_device = reinterpret_cast<CUresult (*)(CUdevice*)>(dlsym(lib, "cuCtxGetDevice"));
  });
  return d;
}

}  // namespace

// cuda.h maps these names to the ABI's symbols (cuCtxPushCurrent ->
// cuCtxPushCurrent_v2), the ones Kokkos's objects reference.
extern "C" {
CUresult CUDAAPI cuStreamGetCtx(CUstream stream, CUcontext* ctx) {
  const Driver& d = driver();
  return d.stream_get_ctx ? d.stream_get_ctx(stream, ctx) : CUDA_ERROR_NOT_INITIALIZED;
}
CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx) {
  const Driver& d = driver();
  return d.ctx_push_current ? d.ctx_push_current(ctx) : CUDA_ERROR_NOT_INITIALIZED;
}
CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) {
  const Driver& d = driver();
  return d.ctx_get_device ? d.ctx_get_device(device) : CUDA_ERROR_NOT_INITIALIZED;
}
}
