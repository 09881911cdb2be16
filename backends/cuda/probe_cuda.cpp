#include "probe_cuda.hpp"

#include "cuda_arch.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <mutex>

namespace vnn {
namespace cuda_probe {
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

using cuInit_t = CUresult (*)(unsigned int);
using cuDriverGetVersion_t = CUresult (*)(int*);
using cuDeviceGetCount_t = CUresult (*)(int*);
using cuDeviceGet_t = CUresult (*)(CUdevice*, int);
using cuDeviceGetName_t = CUresult (*)(char*, int, CUdevice);
using cuDeviceTotalMem_t = CUresult (*)(size_t*, CUdevice);
using cuDeviceGetAttribute_t = CUresult (*)(int*, int, CUdevice);
using cuDeviceGetUuid_t = CUresult (*)(CUuuid*, CUdevice);
using cuGetErrorName_t = CUresult (*)(CUresult, const char**);

struct Driver {
  void* lib = nullptr;
  cuInit_t init = nullptr;
  cuDriverGetVersion_t driver_get_version = nullptr;
  cuDeviceGetCount_t device_get_count = nullptr;
  cuDeviceGet_t device_get = nullptr;
  cuDeviceGetName_t device_get_name = nullptr;
  cuDeviceTotalMem_t device_total_mem = nullptr;
  cuDeviceGetAttribute_t device_get_attribute = nullptr;
  cuDeviceGetUuid_t device_get_uuid = nullptr;
  cuGetErrorName_t get_error_name = nullptr;

  vnn_status status = VNN_STATUS_INTERNAL;
  std::string why;
  int count = 0;
  int version = 0;
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

template <class F>
bool load(void* lib, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  return *out != nullptr;
}

void open_driver(Driver& d) {
  dlerror();
  d.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!d.lib) {
    const char* e = dlerror();
    d.status = VNN_STATUS_DRIVER_MISSING;
    d.why = std::string("libcuda.so.1 not found (") + (e ? e : "no dlerror text") +
            "): no NVIDIA driver";
    return;
  }
  bool ok = load(d.lib, "cuInit", &d.init) &&
            load(d.lib, "cuDriverGetVersion", &d.driver_get_version) &&
            load(d.lib, "cuDeviceGetCount", &d.device_get_count) &&
            load(d.lib, "cuDeviceGet", &d.device_get) &&
            load(d.lib, "cuDeviceGetName", &d.device_get_name) &&
            load(d.lib, "cuDeviceTotalMem_v2", &d.device_total_mem) &&
            load(d.lib, "cuDeviceGetAttribute", &d.device_get_attribute);
  if (!ok) {
    d.status = VNN_STATUS_DRIVER_MISSING;
    d.why = "libcuda.so.1 lacks a driver API entry point (driver too old?)";
    return;
  }
  if (!load(d.lib, "cuDeviceGetUuid_v2", &d.device_get_uuid))
    load(d.lib, "cuDeviceGetUuid", &d.device_get_uuid);
  load(d.lib, "cuGetErrorName", &d.get_error_name);

  CUresult rc = d.init(0);
  if (rc == CUDA_ERROR_NO_DEVICE) {
    d.status = VNN_STATUS_NO_DEVICE;
    d.why = "no NVIDIA GPU found (cuInit: " + error_text(d, rc) + ")";
    return;
  }
  if (rc == kCudaErrorPlaceholderDriver || rc == CUDA_ERROR_INSUFFICIENT_DRIVER) {
    d.status = VNN_STATUS_DRIVER_MISSING;
    d.why = "libcuda.so.1 is not a usable NVIDIA driver (cuInit: " + error_text(d, rc) + ")";
    return;
  }
  if (rc != CUDA_SUCCESS) {
    d.status = VNN_STATUS_DEVICE_ERROR;
    d.why = "cuInit failed: " + error_text(d, rc);
    return;
  }
  d.driver_get_version(&d.version);
  rc = d.device_get_count(&d.count);
  if (rc != CUDA_SUCCESS) {
    d.status = VNN_STATUS_DEVICE_ERROR;
    d.why = "cuDeviceGetCount failed: " + error_text(d, rc);
    d.count = 0;
    return;
  }
  if (d.count == 0) {
    d.status = VNN_STATUS_NO_DEVICE;
    d.why = "no NVIDIA GPU found (cuDeviceGetCount = 0)";
    return;
  }
  d.status = VNN_STATUS_OK;
}

Driver& driver() {
  static Driver d;
  static std::once_flag once;
  std::call_once(once, [] { open_driver(d); });
  return d;
}

void copy_str(char* dst, size_t cap, const std::string& s) {
  std::snprintf(dst, cap, "%s", s.c_str());
}

}  // namespace

std::string driver_version() {
  const Driver& d = driver();
  if (d.version == 0) return "";
  return std::to_string(d.version / 1000) + "." + std::to_string((d.version % 1000) / 10);
}

vnn_status probe(int32_t* count, std::string* why) {
  Driver& d = driver();
  if (count) *count = d.status == VNN_STATUS_OK ? d.count : 0;
  if (d.status != VNN_STATUS_OK && why) *why = d.why;
  return d.status;
}

vnn_status device_info(int32_t device, vnn_device_info* info, std::string* why) {
  Driver& d = driver();
  if (d.status != VNN_STATUS_OK) {
    if (why) *why = d.why;
    return d.status;
  }
  if (!info || device < 0 || device >= d.count) {
    if (why) *why = "cuda: no device " + std::to_string(device) + " (" + std::to_string(d.count) +
                    " found)";
    return VNN_STATUS_INVALID_ARGUMENT;
  }
  if (info->struct_size < sizeof(vnn_device_info)) {
    if (why) *why = "cuda: vnn_device_info.struct_size is smaller than this plugin's";
    return VNN_STATUS_INVALID_ARGUMENT;
  }
  std::memset(reinterpret_cast<char*>(info) + sizeof(size_t), 0,
              sizeof(vnn_device_info) - sizeof(size_t));
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

  copy_str(info->name, sizeof(info->name), name);
  copy_str(info->vendor, sizeof(info->vendor), "NVIDIA");
  copy_str(info->driver_version, sizeof(info->driver_version), driver_version());
  const int domain = attr(ATTR_PCI_DOMAIN_ID), bus = attr(ATTR_PCI_BUS_ID),
            pdev = attr(ATTR_PCI_DEVICE_ID);
  if (domain >= 0 && bus >= 0 && pdev >= 0)
    std::snprintf(info->pci_id, sizeof(info->pci_id), "%04x:%02x:%02x.0", domain, bus, pdev);
  CUuuid u{};
  if (d.device_get_uuid && d.device_get_uuid(&u, dev) == CUDA_SUCCESS) {
    const unsigned char* b = u.bytes;
    std::snprintf(info->uuid, sizeof(info->uuid),
                  "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                  b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
                  b[12], b[13], b[14], b[15]);
  }
  std::snprintf(info->arch, sizeof(info->arch), "sm_%d%d", cc_major, cc_minor);
  info->type = VNN_DEVICE_GPU;
  info->compute_units = attr(ATTR_MULTIPROCESSOR_COUNT);
  info->total_memory = total;
  info->free_memory = 0;
  info->host_accessible = 0;
  const cuda_arch::Check arch = cuda_arch::check({VNN_CUDA_SASS_LIST}, cc_major, cc_minor);
  info->usable = arch.usable ? 1 : 0;
  if (!arch.usable) copy_str(info->unusable_reason, sizeof(info->unusable_reason), arch.reason);
  std::snprintf(info->properties, sizeof(info->properties),
                "compute_capability=%d.%d\ncompiled_for=%s\nclock_khz=%d\n"
                "integrated=%d\ndriver_api_version=%d\n",
                cc_major, cc_minor, compiled_archs().c_str(), attr(ATTR_CLOCK_RATE), attr(ATTR_INTEGRATED),
                d.version);
  return VNN_STATUS_OK;
}

std::string compiled_archs() { return cuda_arch::describe({VNN_CUDA_SASS_LIST}, VNN_CUDA_PTX_SM); }

}  // namespace cuda_probe
}  // namespace vnn
