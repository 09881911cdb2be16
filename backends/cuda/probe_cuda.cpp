// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// gpu_probe (cuda_hip/probe.hpp) for the CUDA plugin, through the NVIDIA
// driver API opened with dlopen: no cuda.h (the few driver types are
// declared here), so this compiles with any C++ compiler.
#include "cuda/cuda_arch.hpp"
#include "cuda/cuda_devices.hpp"
#include "cuda_hip/probe.hpp"
#include "cuda_hip/probe_common.hpp"

// The sm_XY numbers the plugin carries SASS for, and its PTX (set by
// backends/cuda/CMakeLists.txt from the Kokkos arch and the extra SASS).
#ifndef VNN_CUDA_SASS_LIST
#define VNN_CUDA_SASS_LIST 80
#endif
#ifndef VNN_CUDA_PTX_SM
#define VNN_CUDA_PTX_SM 80
#endif
// KOKKOS_VERSION of the Kokkos the plugin is built on (this file includes
// no Kokkos header): its arch and several-GPUs rules differ.
#ifndef VNN_CUDA_KOKKOS_VERSION
#define VNN_CUDA_KOKKOS_VERSION 30401
#endif

namespace vnn::gpu_probe {
namespace {

// The driver API pieces used here, as the driver's ABI defines them.
using CUresult = int;
using CUdevice = int;
struct CUuuid {
  unsigned char bytes[16];
};
constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult kCudaErrorPlaceholderDriver = 34;  // the toolkit's placeholder libcuda answered
constexpr CUresult CUDA_ERROR_INSUFFICIENT_DRIVER = 35;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr int ATTR_CLOCK_RATE = 13;
constexpr int ATTR_MULTIPROCESSOR_COUNT = 16;
constexpr int ATTR_INTEGRATED = 18;
constexpr int ATTR_PCI_BUS_ID = 33;
constexpr int ATTR_PCI_DEVICE_ID = 34;
constexpr int ATTR_PCI_DOMAIN_ID = 50;
constexpr int ATTR_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int ATTR_COMPUTE_CAPABILITY_MINOR = 76;

struct Driver : Library {
  CUresult (*init)(unsigned int) = nullptr;
  CUresult (*driver_get_version)(int*) = nullptr;
  CUresult (*device_get_count)(int*) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_get_name)(char*, int, CUdevice) = nullptr;
  CUresult (*device_total_mem)(size_t*, CUdevice) = nullptr;
  CUresult (*device_get_attribute)(int*, int, CUdevice) = nullptr;
  CUresult (*device_get_uuid)(CUuuid*, CUdevice) = nullptr;
  CUresult (*get_error_name)(CUresult, const char**) = nullptr;
};

std::string error_text(const Driver& d, CUresult rc) {
  const char* name = nullptr;
  if (d.get_error_name && d.get_error_name(rc, &name) == CUDA_SUCCESS && name)
    return std::string(name) + " (" + std::to_string(rc) + ")";
  switch (rc) {  // the driver could not name it (a placeholder library cannot)
    case 3: name = "CUDA_ERROR_NOT_INITIALIZED"; break;
    case kCudaErrorPlaceholderDriver: name = "the CUDA toolkit's placeholder libcuda, not a driver"; break;
    case CUDA_ERROR_INSUFFICIENT_DRIVER: name = "CUDA_ERROR_INSUFFICIENT_DRIVER"; break;
    case 46: name = "CUDA_ERROR_DEVICES_UNAVAILABLE"; break;
    case CUDA_ERROR_NO_DEVICE: name = "CUDA_ERROR_NO_DEVICE"; break;
    case 101: name = "CUDA_ERROR_INVALID_DEVICE"; break;
    case 999: name = "CUDA_ERROR_UNKNOWN"; break;
    default: return "CUresult " + std::to_string(rc);
  }
  return std::string(name) + " (" + std::to_string(rc) + ")";
}

void open_driver(Driver& d) {
  std::string err;
  if (!open_first(d, {"libcuda.so.1"}, &err))
    return fail(d, VNN_STATUS_DRIVER_MISSING, "libcuda.so.1 not found (" + err + "): no NVIDIA driver");
  bool ok = load(d.lib, "cuInit", &d.init) && load(d.lib, "cuDriverGetVersion", &d.driver_get_version) &&
            load(d.lib, "cuDeviceGetCount", &d.device_get_count) && load(d.lib, "cuDeviceGet", &d.device_get) &&
            load(d.lib, "cuDeviceGetName", &d.device_get_name) &&
            load(d.lib, "cuDeviceTotalMem_v2", &d.device_total_mem) &&
            load(d.lib, "cuDeviceGetAttribute", &d.device_get_attribute);
  if (!ok)
    return fail(d, VNN_STATUS_DRIVER_MISSING, "libcuda.so.1 lacks a driver API entry point (driver too old?)");
  if (!load(d.lib, "cuDeviceGetUuid_v2", &d.device_get_uuid)) load(d.lib, "cuDeviceGetUuid", &d.device_get_uuid);
  load(d.lib, "cuGetErrorName", &d.get_error_name);

  CUresult rc = d.init(0);
  if (rc == CUDA_ERROR_NO_DEVICE)
    return fail(d, VNN_STATUS_NO_DEVICE, "no NVIDIA GPU found (cuInit: " + error_text(d, rc) + ")");
  if (rc == kCudaErrorPlaceholderDriver || rc == CUDA_ERROR_INSUFFICIENT_DRIVER)
    return fail(d, VNN_STATUS_DRIVER_MISSING,
                "libcuda.so.1 is not a usable NVIDIA driver (cuInit: " + error_text(d, rc) + ")");
  if (rc != CUDA_SUCCESS) return fail(d, VNN_STATUS_DEVICE_ERROR, "cuInit failed: " + error_text(d, rc));
  d.driver_get_version(&d.version);
  rc = d.device_get_count(&d.count);
  if (rc != CUDA_SUCCESS)
    return fail(d, VNN_STATUS_DEVICE_ERROR, "cuDeviceGetCount failed: " + error_text(d, rc));
  if (d.count == 0) return fail(d, VNN_STATUS_NO_DEVICE, "no NVIDIA GPU found (cuDeviceGetCount = 0)");
  d.status = VNN_STATUS_OK;
}

Driver& driver() { return once<Driver, open_driver>(); }

}  // namespace

std::string driver_version() {
  const Driver& d = driver();
  if (d.version == 0) return "";
  return std::to_string(d.version / 1000) + "." + std::to_string((d.version % 1000) / 10);
}

vnn_status probe(int32_t* count, std::string* why) { return answer_probe(driver(), count, why); }

vnn_status device_info(int32_t device, vnn_device_info* info, std::string* why) {
  Driver& d = driver();
  if (vnn_status s = begin_device_info(d, "cuda", device, info, why); s != VNN_STATUS_OK) return s;
  CUdevice dev = 0;
  CUresult rc = d.device_get(&dev, device);
  if (rc != CUDA_SUCCESS) {
    if (why) *why = "cuDeviceGet(" + std::to_string(device) + ") failed: " + error_text(d, rc);
    return VNN_STATUS_DEVICE_ERROR;
  }
  auto attr = [&](int a) {
    int v = 0;
    return d.device_get_attribute(&v, a, dev) == CUDA_SUCCESS ? v : -1;
  };
  char name[256] = {0};
  d.device_get_name(name, sizeof(name) - 1, dev);
  size_t total = 0;
  d.device_total_mem(&total, dev);
  const int cc_major = attr(ATTR_COMPUTE_CAPABILITY_MAJOR);
  const int cc_minor = attr(ATTR_COMPUTE_CAPABILITY_MINOR);

  copy_str(info->name, name);
  copy_str(info->vendor, "NVIDIA");
  copy_str(info->driver_version, driver_version());
  const int domain = attr(ATTR_PCI_DOMAIN_ID), bus = attr(ATTR_PCI_BUS_ID), pdev = attr(ATTR_PCI_DEVICE_ID);
  if (domain >= 0 && bus >= 0 && pdev >= 0)
    std::snprintf(info->pci_id, sizeof(info->pci_id), "%04x:%02x:%02x.0", domain, bus, pdev);
  CUuuid u{};
  if (d.device_get_uuid && d.device_get_uuid(&u, dev) == CUDA_SUCCESS) {
    const unsigned char* b = u.bytes;
    std::snprintf(info->uuid, sizeof(info->uuid),
                  "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
                  b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  }
  std::snprintf(info->arch, sizeof(info->arch), "sm_%d%d", cc_major, cc_minor);
  info->compute_units = attr(ATTR_MULTIPROCESSOR_COUNT);
  info->total_memory = total;
  const cuda_arch::Check arch =
      cuda_arch::check({VNN_CUDA_SASS_LIST}, VNN_CUDA_PTX_SM, cc_major, cc_minor, VNN_CUDA_KOKKOS_VERSION);
  set_usable(info, arch.usable, arch.reason);
  std::snprintf(info->properties, sizeof(info->properties),
                "compute_capability=%d.%d\ncompiled_for=%s\nclock_khz=%d\n"
                "integrated=%d\ndriver_api_version=%d\n%s",
                cc_major, cc_minor, compiled_archs().c_str(), attr(ATTR_CLOCK_RATE), attr(ATTR_INTEGRATED),
                d.version, cuda_devices::report(cuda_devices::rule(VNN_CUDA_KOKKOS_VERSION)).c_str());
  return VNN_STATUS_OK;
}

std::string compiled_archs() { return cuda_arch::describe({VNN_CUDA_SASS_LIST}, VNN_CUDA_PTX_SM); }

}  // namespace vnn::gpu_probe
