// Device discovery for the HIP plugin through libamdhip64, opened with
// dlopen: only hipInit and device queries, no Kokkos, no streams. The HIP
// headers are used for the enum values and the device-properties layout of
// the HIP version the plugin is built against.
#pragma once

#include <cstdint>
#include <string>

#include "vnn/backend_abi.h"

#ifndef VNN_HIP_COMPILED_ARCH
#define VNN_HIP_COMPILED_ARCH "gfx908"  // the arch the plugin's Kokkos targets
#endif

namespace vnn {
namespace hip_probe {

// Lists the devices. *count = 0 and *why set on failure:
// VNN_STATUS_DRIVER_MISSING (no libamdhip64), VNN_STATUS_NO_DEVICE (runtime
// present, no AMD GPU: hipErrorNoDevice), VNN_STATUS_DEVICE_ERROR otherwise.
vnn_status probe(int32_t* count, std::string* why);

// Fills *info for device `device`. A device whose gcnArchName differs from
// the compiled arch is listed with usable = 0 and the reason.
vnn_status device_info(int32_t device, vnn_device_info* info, std::string* why);

// HIP runtime version as "5.2" ("" before a successful probe).
std::string runtime_version();

}  // namespace hip_probe
}  // namespace vnn
