#include "probe_hip.hpp"

#include <dlfcn.h>
#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>

#include <cstdio>
#include <cstring>
#include <mutex>

namespace vnn {
namespace hip_probe {
namespace {

#define VNN_STR2(x) #x
#define VNN_STR(x) VNN_STR2(x)

using hipInit_t = hipError_t (*)(unsigned int);
using hipRuntimeGetVersion_t = hipError_t (*)(int*);
using hipGetDeviceCount_t = hipError_t (*)(int*);
using hipDeviceGet_t = hipError_t (*)(hipDevice_t*, int);
using hipDeviceGetName_t = hipError_t (*)(char*, int, hipDevice_t);
using hipDeviceTotalMem_t = hipError_t (*)(size_t*, hipDevice_t);
using hipDeviceGetAttribute_t = hipError_t (*)(int*, hipDeviceAttribute_t, int);
using hipDeviceGetPCIBusId_t = hipError_t (*)(char*, int, int);
using hipGetDeviceProperties_t = hipError_t (*)(hipDeviceProp_t*, int);
using hipGetErrorName_t = const char* (*)(hipError_t);

struct Runtime {
  void* lib = nullptr;
  std::string lib_name;
  hipInit_t init = nullptr;
  hipRuntimeGetVersion_t runtime_get_version = nullptr;
  hipGetDeviceCount_t get_device_count = nullptr;
  hipDeviceGet_t device_get = nullptr;
  hipDeviceGetName_t device_get_name = nullptr;
  hipDeviceTotalMem_t device_total_mem = nullptr;
  hipDeviceGetAttribute_t device_get_attribute = nullptr;
  hipDeviceGetPCIBusId_t device_get_pci_bus_id = nullptr;
  hipGetDeviceProperties_t get_device_properties = nullptr;
  hipGetErrorName_t get_error_name = nullptr;

  vnn_status status = VNN_STATUS_INTERNAL;
  std::string why;
  int count = 0;
  int version = 0;
};

std::string error_text(const Runtime& r, hipError_t rc) {
  const char* n = r.get_error_name ? r.get_error_name(rc) : nullptr;
  return (n ? std::string(n) : std::string("hipError_t")) + " (" +
         std::to_string(static_cast<int>(rc)) + ")";
}

template <class F>
bool load(void* lib, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  return *out != nullptr;
}

void open_runtime(Runtime& r) {
  // The soname of the HIP major the plugin was built against comes first.
  const char* names[] = {"libamdhip64.so." VNN_STR(HIP_VERSION_MAJOR), "libamdhip64.so",
                         "libamdhip64.so.6", "libamdhip64.so.5"};
  std::string errors;
  for (const char* n : names) {
    dlerror();
    r.lib = dlopen(n, RTLD_NOW | RTLD_LOCAL);
    if (r.lib) {
      r.lib_name = n;
      break;
    }
    const char* e = dlerror();
    if (errors.empty()) errors = e ? e : n;
  }
  if (!r.lib) {
    r.status = VNN_STATUS_DRIVER_MISSING;
    r.why = "libamdhip64.so not found (" + errors + "): no ROCm/HIP runtime";
    return;
  }
  bool ok = load(r.lib, "hipInit", &r.init) &&
            load(r.lib, "hipGetDeviceCount", &r.get_device_count) &&
            load(r.lib, "hipDeviceGet", &r.device_get) &&
            load(r.lib, "hipDeviceGetName", &r.device_get_name) &&
            load(r.lib, "hipDeviceTotalMem", &r.device_total_mem) &&
            load(r.lib, "hipDeviceGetAttribute", &r.device_get_attribute);
  if (!ok) {
    r.status = VNN_STATUS_DRIVER_MISSING;
    r.why = r.lib_name + " lacks a HIP entry point (runtime too old?)";
    return;
  }
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
  if (rc == hipErrorNoDevice || (rc == hipSuccess && r.count == 0)) {
    r.count = 0;
    r.status = VNN_STATUS_NO_DEVICE;
    r.why = "no AMD GPU found (hipErrorNoDevice)";
    return;
  }
  if (rc == hipErrorInsufficientDriver || init_rc == hipErrorInsufficientDriver) {
    r.count = 0;
    r.status = VNN_STATUS_DRIVER_MISSING;
    r.why = "the AMD GPU kernel driver is missing or too old (" + error_text(r, rc) + ")";
    return;
  }
  if (rc != hipSuccess || init_rc != hipSuccess) {
    r.count = 0;
    r.status = VNN_STATUS_DEVICE_ERROR;
    r.why = "HIP start-up failed: hipInit " + error_text(r, init_rc) + ", hipGetDeviceCount " +
            error_text(r, rc);
    return;
  }
  r.status = VNN_STATUS_OK;
}

Runtime& runtime() {
  static Runtime r;
  static std::once_flag once;
  std::call_once(once, [] { open_runtime(r); });
  return r;
}

}  // namespace

std::string runtime_version() {
  const Runtime& r = runtime();
  if (r.version == 0) return "";
  return std::to_string(r.version / 10000000) + "." + std::to_string((r.version / 100000) % 100);
}

vnn_status probe(int32_t* count, std::string* why) {
  Runtime& r = runtime();
  if (count) *count = r.status == VNN_STATUS_OK ? r.count : 0;
  if (r.status != VNN_STATUS_OK && why) *why = r.why;
  return r.status;
}

vnn_status device_info(int32_t device, vnn_device_info* info, std::string* why) {
  Runtime& r = runtime();
  if (r.status != VNN_STATUS_OK) {
    if (why) *why = r.why;
    return r.status;
  }
  if (!info || device < 0 || device >= r.count) {
    if (why) *why = "hip: no device " + std::to_string(device) + " (" + std::to_string(r.count) +
                    " found)";
    return VNN_STATUS_INVALID_ARGUMENT;
  }
  if (info->struct_size < sizeof(vnn_device_info)) {
    if (why) *why = "hip: vnn_device_info.struct_size is smaller than this plugin's";
    return VNN_STATUS_INVALID_ARGUMENT;
  }
  std::memset(reinterpret_cast<char*>(info) + sizeof(size_t), 0,
              sizeof(vnn_device_info) - sizeof(size_t));
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
  std::snprintf(info->vendor, sizeof(info->vendor), "AMD");
  std::snprintf(info->driver_version, sizeof(info->driver_version), "HIP %s",
                runtime_version().c_str());
  char pci[64] = {0};
  if (r.device_get_pci_bus_id &&
      r.device_get_pci_bus_id(pci, static_cast<int>(sizeof(pci)) - 1, device) == hipSuccess) {
    std::snprintf(info->pci_id, sizeof(info->pci_id), "%s", pci);
    for (char* c = info->pci_id; *c; ++c)
      if (*c >= 'A' && *c <= 'F') *c = static_cast<char>(*c - 'A' + 'a');
  } else {
    std::snprintf(info->pci_id, sizeof(info->pci_id), "%04x:%02x:%02x.0",
                  attr(hipDeviceAttributePciDomainID), attr(hipDeviceAttributePciBusId),
                  attr(hipDeviceAttributePciDeviceId));
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
  std::snprintf(info->arch, sizeof(info->arch), "%s", arch.c_str());
  info->type = VNN_DEVICE_GPU;
  info->compute_units = attr(hipDeviceAttributeMultiprocessorCount);
  info->total_memory = total;
  info->free_memory = 0;
  info->host_accessible = 0;
  const std::string compiled = VNN_HIP_COMPILED_ARCH;
  const std::string base = arch.substr(0, arch.find(':'));
  if (arch.empty() || base == compiled) {
    info->usable = 1;
  } else {
    info->usable = 0;
    std::snprintf(info->unusable_reason, sizeof(info->unusable_reason),
                  "compiled for %s, device is %s", compiled.c_str(), base.c_str());
  }
  std::snprintf(info->properties, sizeof(info->properties),
                "gcn_arch=%s\ncompiled_for=%s\nclock_khz=%d\nruntime_library=%s\n",
                arch.empty() ? "unknown" : arch.c_str(), compiled.c_str(),
                attr(hipDeviceAttributeClockRate), r.lib_name.c_str());
  return VNN_STATUS_OK;
}

}  // namespace hip_probe
}  // namespace vnn
