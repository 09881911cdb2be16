// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// gpu_probe (cuda_hip/probe.hpp) for the HIP plugin, through libamdhip64
// opened with dlopen: only hipInit and device queries, no Kokkos, no
// streams. The HIP headers give the enum values and the device-properties
// layout of the HIP version the plugin is built against.
#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>

#include "cuda_hip/probe.hpp"
#include "cuda_hip/probe_common.hpp"
#include "hip_arch.hpp"

#ifndef VNN_HIP_COMPILED_ARCH
#error "VNN_HIP_COMPILED_ARCH (the target IDs of the plugin's code objects) comes from backends/hip/CMakeLists.txt"
#endif

namespace vnn::gpu_probe {
namespace {

#define VNN_STR2(x) #x
#define VNN_STR(x) VNN_STR2(x)

struct Runtime : Library {
  hipError_t (*init)(unsigned int) = nullptr;
  hipError_t (*runtime_get_version)(int*) = nullptr;
  hipError_t (*get_device_count)(int*) = nullptr;
  hipError_t (*device_get)(hipDevice_t*, int) = nullptr;
  hipError_t (*device_get_name)(char*, int, hipDevice_t) = nullptr;
  hipError_t (*device_total_mem)(size_t*, hipDevice_t) = nullptr;
  hipError_t (*device_get_attribute)(int*, hipDeviceAttribute_t, int) = nullptr;
  hipError_t (*device_get_pci_bus_id)(char*, int, int) = nullptr;
  hipError_t (*get_device_properties)(hipDeviceProp_t*, int) = nullptr;
  const char* (*get_error_name)(hipError_t) = nullptr;
};

std::string error_text(const Runtime& r, hipError_t rc) {
  const char* n = r.get_error_name ? r.get_error_name(rc) : nullptr;
  return (n ? std::string(n) : std::string("hipError_t")) + " (" + std::to_string(static_cast<int>(rc)) + ")";
}

void open_runtime(Runtime& r) {
  // The soname of the HIP major the plugin was built against comes first.
  std::string err;
  if (!open_first(r, {"libamdhip64.so." VNN_STR(HIP_VERSION_MAJOR), "libamdhip64.so", "libamdhip64.so.6",
                      "libamdhip64.so.5"},
                  &err))
    return fail(r, VNN_STATUS_DRIVER_MISSING, "libamdhip64.so not found (" + err + "): no ROCm/HIP runtime");
  bool ok = load(r.lib, "hipInit", &r.init) && load(r.lib, "hipGetDeviceCount", &r.get_device_count) &&
            load(r.lib, "hipDeviceGet", &r.device_get) && load(r.lib, "hipDeviceGetName", &r.device_get_name) &&
            load(r.lib, "hipDeviceTotalMem", &r.device_total_mem) &&
            load(r.lib, "hipDeviceGetAttribute", &r.device_get_attribute);
  if (!ok) return fail(r, VNN_STATUS_DRIVER_MISSING, r.lib_name + " lacks a HIP entry point (runtime too old?)");
  load(r.lib, "hipRuntimeGetVersion", &r.runtime_get_version);
  load(r.lib, "hipDeviceGetPCIBusId", &r.device_get_pci_bus_id);
  load(r.lib, "hipGetErrorName", &r.get_error_name);
#if HIP_VERSION_MAJOR >= 6
  load(r.lib, "hipGetDevicePropertiesR0600", &r.get_device_properties);
#else
  load(r.lib, "hipGetDeviceProperties", &r.get_device_properties);
#endif
  if (r.runtime_get_version) (void)r.runtime_get_version(&r.version);
  // The properties layout is that of the HIP headers used here: only read it
  // from a runtime of the same major version.
  if (r.version / 10000000 != HIP_VERSION_MAJOR) r.get_device_properties = nullptr;

  // hipInit answers hipErrorInvalidDevice on a machine without an AMD GPU
  // (ROCm 5.2); hipGetDeviceCount then says hipErrorNoDevice. Decide on the
  // count, and keep hipInit's answer for the message.
  const hipError_t init_rc = r.init(0);
  hipError_t rc = r.get_device_count(&r.count);
  if (rc == hipErrorNoDevice || (rc == hipSuccess && r.count == 0))
    return fail(r, VNN_STATUS_NO_DEVICE, "no AMD GPU found (hipErrorNoDevice)");
  if (rc == hipErrorInsufficientDriver || init_rc == hipErrorInsufficientDriver)
    return fail(r, VNN_STATUS_DRIVER_MISSING,
                "the AMD GPU kernel driver is missing or too old (" + error_text(r, rc) + ")");
  if (rc != hipSuccess || init_rc != hipSuccess)
    return fail(r, VNN_STATUS_DEVICE_ERROR,
                "HIP start-up failed: hipInit " + error_text(r, init_rc) + ", hipGetDeviceCount " +
                    error_text(r, rc));
  r.status = VNN_STATUS_OK;
}

Runtime& runtime() { return once<Runtime, open_runtime>(); }

}  // namespace

std::string driver_version() {
  const Runtime& r = runtime();
  if (r.version == 0) return "";
  return std::to_string(r.version / 10000000) + "." + std::to_string((r.version / 100000) % 100);
}

vnn_status probe(int32_t* count, std::string* why) { return answer_probe(runtime(), count, why); }

vnn_status device_info(int32_t device, vnn_device_info* info, std::string* why) {
  Runtime& r = runtime();
  if (vnn_status s = begin_device_info(r, "hip", device, info, why); s != VNN_STATUS_OK) return s;
  hipDevice_t dev = 0;
  hipError_t rc = r.device_get(&dev, device);
  if (rc != hipSuccess) {
    if (why) *why = "hipDeviceGet(" + std::to_string(device) + ") failed: " + error_text(r, rc);
    return VNN_STATUS_DEVICE_ERROR;
  }
  auto attr = [&](hipDeviceAttribute_t a) {
    int v = 0;
    return r.device_get_attribute(&v, a, device) == hipSuccess ? v : -1;
  };
  (void)r.device_get_name(info->name, static_cast<int>(sizeof(info->name)) - 1, dev);
  size_t total = 0;
  (void)r.device_total_mem(&total, dev);
  copy_str(info->vendor, "AMD");
  copy_str(info->driver_version, "HIP " + driver_version());
  char pci[64] = {0};
  if (r.device_get_pci_bus_id &&
      r.device_get_pci_bus_id(pci, static_cast<int>(sizeof(pci)) - 1, device) == hipSuccess) {
    copy_str(info->pci_id, pci);
    for (char* c = info->pci_id; *c; ++c)
      if (*c >= 'A' && *c <= 'F') *c = static_cast<char>(*c - 'A' + 'a');
  } else {
    std::snprintf(info->pci_id, sizeof(info->pci_id), "%04x:%02x:%02x.0", attr(hipDeviceAttributePciDomainID),
                  attr(hipDeviceAttributePciBusId), attr(hipDeviceAttributePciDeviceId));
  }
  std::string arch;
  if (r.get_device_properties) {
    hipDeviceProp_t prop;
    std::memset(&prop, 0, sizeof(prop));
    if (r.get_device_properties(&prop, device) == hipSuccess) {
      prop.gcnArchName[sizeof(prop.gcnArchName) - 1] = 0;
      arch = prop.gcnArchName;  // e.g. "gfx90a:sramecc+:xnack-"
    }
  }
  copy_str(info->arch, arch);
  info->compute_units = attr(hipDeviceAttributeMultiprocessorCount);
  info->total_memory = total;
  const std::string compiled = compiled_archs();
  const hip_arch::Check usable = hip_arch::check(hip_arch::split(VNN_HIP_COMPILED_ARCH), arch);
  set_usable(info, usable.usable, usable.reason);
  std::snprintf(info->properties, sizeof(info->properties),
                "gcn_arch=%s\ncompiled_for=%s\nclock_khz=%d\nruntime_library=%s\n",
                arch.empty() ? "unknown" : arch.c_str(), compiled.c_str(), attr(hipDeviceAttributeClockRate),
                r.lib_name.c_str());
  return VNN_STATUS_OK;
}

std::string compiled_archs() { return hip_arch::describe(hip_arch::split(VNN_HIP_COMPILED_ARCH)); }

}  // namespace vnn::gpu_probe
