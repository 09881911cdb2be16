// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The HIP backend: the generic Kokkos backend on Kokkos's HIP space.
// Compiled with hipcc; discovery goes through libamdhip64 opened with
// dlopen (probe_hip.cpp); streams and events are shared with CUDA
// (cuda_hip/gpu_traits.hpp). hipBLAS/rocBLAS are used where present in a later
// step (Debian 12 has neither).
#include <dlfcn.h>
#include <hip/hip_runtime_api.h>

#include <stdexcept>
#include <string>

#include "cuda_hip/gpu_traits.hpp"
#include "cuda_hip/probe.hpp"
#include "kokkos/plugin.hpp"

namespace vnn::hip_backend {

// roctx, opened lazily with dlopen so that the plugin neither links nor
// needs it: rocprof finds the ranges when libroctx64 is installed.
struct Roctx {
  using Push = int (*)(const char*);
  using Pop = int (*)();
  Push push = nullptr;
  Pop pop = nullptr;
  Roctx() {
    for (const char* n : {"libroctx64.so", "libroctx64.so.4", "libroctx64.so.1"}) {
      if (void* lib = dlopen(n, RTLD_NOW | RTLD_LOCAL)) {
        push = reinterpret_cast<Push>(dlsym(lib, "roctxRangePushA"));
        pop = reinterpret_cast<Pop>(dlsym(lib, "roctxRangePop"));
        if (push && pop) return;
        push = nullptr;
        pop = nullptr;
      }
    }
  }
  static const Roctx& get() {
    static const Roctx r;
    return r;
  }
};

struct HipTraits : gpu::GpuTraits {
  static constexpr const char* name = "hip";
  static constexpr int32_t priority = 30;

  static std::string description() {
    return std::string("Kokkos ") + kokkos_compat::version_string() + " HIP (" + gpu_probe::compiled_archs() +
           "), HIP " + std::to_string(HIP_VERSION_MAJOR) + "." + std::to_string(HIP_VERSION_MINOR) +
           ", no vendor BLAS";
  }

  static vnn_status probe(int32_t* count, std::string* why) { return gpu_probe::probe(count, why); }

  static vnn_status device_info(int32_t device, vnn_device_info* info, std::string* why) {
    return gpu_probe::device_info(device, info, why);
  }

  // roctx ranges for the profiler (no-ops where libroctx64 is absent).
  static void range_push(const char* name) {
    if (Roctx::get().push) Roctx::get().push(name);
  }
  static void range_pop() {
    if (Roctx::get().pop) Roctx::get().pop();
  }
};

}  // namespace vnn::hip_backend

extern "C" VNN_BACKEND_EXPORT const vnn_backend* vnn_backend_entry(uint32_t host_abi_version) {
  return vnn::kokkos_backend::make_table<vnn::hip_backend::HipTraits>(host_abi_version);
}
