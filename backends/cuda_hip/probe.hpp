// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Device discovery for the CUDA and HIP plugins: one interface, two
// implementations (backends/cuda/probe_cuda.cpp through the NVIDIA driver
// API, backends/hip/probe_hip.cpp through libamdhip64), each opening the
// vendor library lazily with dlopen: no runtime start-up, no context, no
// Kokkos, so it answers on machines without a driver. The parts both share
// are in probe_common.hpp.
#pragma once

#include <cstdint>
#include <string>

#include "vnn/backend_abi.h"

namespace vnn::gpu_probe {

// Lists the devices. *count = 0 and *why set on failure:
// VNN_STATUS_DRIVER_MISSING (no vendor library, or a placeholder one without
// a driver), VNN_STATUS_NO_DEVICE (driver present, zero devices),
// VNN_STATUS_DEVICE_ERROR (driver failure).
vnn_status probe(int32_t* count, std::string* why);

// Fills *info for device `device` (0-based) from the driver. free_memory is
// left 0 (it would need a context). A device the plugin has no code for is
// listed with usable = 0 and the reason.
vnn_status device_info(int32_t device, vnn_device_info* info, std::string* why);

// Driver (CUDA) or runtime (HIP) version as "13.0" ("" before a successful
// probe).
std::string driver_version();

// The code this plugin carries, e.g. "sm_80 sm_90 SASS, compute_80 PTX" or
// "gfx908".
std::string compiled_archs();

}  // namespace vnn::gpu_probe
