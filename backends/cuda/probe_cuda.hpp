// Device discovery for the CUDA plugin through the NVIDIA driver API,
// opened lazily with dlopen: no CUDA runtime start-up, no context, no
// cuda.h (the few driver types are declared in probe_cuda.cpp), so this
// compiles with any C++ compiler and answers on machines without a driver.
#pragma once

#include <cstdint>
#include <string>

#include "vnn/backend_abi.h"

// The sm_XY numbers the plugin carries SASS for, and its PTX (set by
// backends/cuda/CMakeLists.txt from the Kokkos arch and the extra SASS).
#ifndef VNN_CUDA_SASS_LIST
#define VNN_CUDA_SASS_LIST 80
#endif
#ifndef VNN_CUDA_PTX_SM
#define VNN_CUDA_PTX_SM 80
#endif

namespace vnn {
namespace cuda_probe {

// Lists the devices. *count = 0 and *why set on failure:
// VNN_STATUS_DRIVER_MISSING (no libcuda.so.1, or a placeholder library without a driver), VNN_STATUS_NO_DEVICE
// (driver present, zero devices), VNN_STATUS_DEVICE_ERROR (driver failure).
vnn_status probe(int32_t* count, std::string* why);

// Fills *info for device `device` (0-based) from the driver. free_memory is
// left 0 (it would need a context). A device the plugin has no code for
// (cuda_arch.hpp) is listed with usable = 0 and the reason.
vnn_status device_info(int32_t device, vnn_device_info* info, std::string* why);

// Driver version as "13.0" ("" before a successful probe).
std::string driver_version();

// The code this plugin carries, e.g. "sm_80 sm_90 SASS, compute_80 PTX".
std::string compiled_archs();

}  // namespace cuda_probe
}  // namespace vnn
