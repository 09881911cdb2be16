// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "device.hpp"

#include <CL/cl_ext.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "errors.hpp"
#include "tuning.hpp"

// Vendor queries not in every cl_ext.h (cl_nv_device_attribute_query).
#ifndef CL_DEVICE_PCI_BUS_ID_NV
#define CL_DEVICE_PCI_BUS_ID_NV 0x4008
#endif
#ifndef CL_DEVICE_PCI_SLOT_ID_NV
#define CL_DEVICE_PCI_SLOT_ID_NV 0x4009
#endif
#ifndef CL_DEVICE_PCI_DOMAIN_ID_NV
#define CL_DEVICE_PCI_DOMAIN_ID_NV 0x400A
#endif

namespace vnn_opencl {

bool Device::has_extension(const char* ext) const {
  // Match whole words: "cl_khr_fp16" must not match "cl_khr_fp16_foo".
  size_t n = std::strlen(ext);
  for (size_t pos = extensions.find(ext); pos != std::string::npos;
       pos = extensions.find(ext, pos + 1)) {
    bool start = pos == 0 || extensions[pos - 1] == ' ';
    bool end = pos + n == extensions.size() || extensions[pos + n] == ' ';
    if (start && end) return true;
  }
  return false;
}

namespace {

// Probed once; the index of a device must not change during a process, and
// Device objects are never destroyed: releasing CL objects from a static
// destructor can run after the ICD loader or driver is already gone.
struct Registry {
  std::once_flag once;
  std::vector<Device*> devices;
  vnn_status status = VNN_STATUS_OK;
  std::string message;
};

Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

std::string device_string(cl_device_id d, cl_device_info what) {
  size_t n = 0;
  if (clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::string s(n, '\0');
  if (clGetDeviceInfo(d, what, n, &s[0], nullptr) != CL_SUCCESS) return {};
  s.resize(std::strlen(s.c_str()));
  return s;
}

std::string platform_string(cl_platform_id p, cl_platform_info what) {
  size_t n = 0;
  if (clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::string s(n, '\0');
  if (clGetPlatformInfo(p, what, n, &s[0], nullptr) != CL_SUCCESS) return {};
  s.resize(std::strlen(s.c_str()));
  return s;
}

template <typename T>
T device_value(cl_device_id d, cl_device_info what, T fallback) {
  T v{};
  if (clGetDeviceInfo(d, what, sizeof v, &v, nullptr) != CL_SUCCESS) return fallback;
  return v;
}

// GPUs first, then accelerators, then CPUs, matching how the core ranks
// device types; the sort is stable so platform order is kept within a type.
int type_rank(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return 0;
  if (t & (CL_DEVICE_TYPE_ACCELERATOR | CL_DEVICE_TYPE_CUSTOM)) return 1;
  return 2;
}

Device* describe(cl_platform_id p, cl_device_id id) {
  Device* d = new Device;
  d->platform = p;
  d->id = id;
  d->cl_type = device_value<cl_device_type>(id, CL_DEVICE_TYPE, CL_DEVICE_TYPE_DEFAULT);
  d->name = device_string(id, CL_DEVICE_NAME);
  d->vendor = device_string(id, CL_DEVICE_VENDOR);
  d->driver_version = device_string(id, CL_DRIVER_VERSION);
  d->opencl_version = device_string(id, CL_DEVICE_VERSION);
  d->c_version = device_string(id, CL_DEVICE_OPENCL_C_VERSION);
  d->extensions = device_string(id, CL_DEVICE_EXTENSIONS);
  d->platform_name = platform_string(p, CL_PLATFORM_NAME);
  d->compute_units = device_value<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS, 0);
  d->global_mem = device_value<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE, 0);
  d->max_alloc = device_value<cl_ulong>(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, 0);
  d->local_mem = device_value<cl_ulong>(id, CL_DEVICE_LOCAL_MEM_SIZE, 0);
  d->max_work_group_size = device_value<size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE, 1);
  d->available = device_value<cl_bool>(id, CL_DEVICE_AVAILABLE, CL_TRUE) != CL_FALSE;
  d->compiler_available =
      device_value<cl_bool>(id, CL_DEVICE_COMPILER_AVAILABLE, CL_TRUE) != CL_FALSE;
  // A non-zero double config is how OpenCL 1.2+ devices report fp64; older
  // ones only list the extension.
  d->fp64 = d->has_extension("cl_khr_fp64") ||
            device_value<cl_device_fp_config>(id, CL_DEVICE_DOUBLE_FP_CONFIG, 0) != 0;
  d->fp16 = d->has_extension("cl_khr_fp16");
  d->correctly_rounded_sqrt =
      (device_value<cl_device_fp_config>(id, CL_DEVICE_SINGLE_FP_CONFIG, 0) &
       CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
  size_t items[3] = {1, 1, 1};
  if (clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof items, items, nullptr) == CL_SUCCESS)
    for (int i = 0; i < 3; ++i) d->max_item_sizes[i] = items[i] ? items[i] : 1;
  d->images = device_value<cl_bool>(id, CL_DEVICE_IMAGE_SUPPORT, CL_FALSE) != CL_FALSE;
  d->local_mem_dedicated =
      device_value<cl_device_local_mem_type>(id, CL_DEVICE_LOCAL_MEM_TYPE, CL_GLOBAL) == CL_LOCAL;
  d->vector_width_float = device_value<cl_uint>(id, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, 1);
  const char* grid = std::getenv("VNN_OPENCL_GRID_STRIDE");
  d->one_per_item = !(d->cl_type & CL_DEVICE_TYPE_GPU) && !(grid && std::strcmp(grid, "1") == 0);
  return d;
}

void probe_once(Registry& r) {
  cl_uint nplat = 0;
  cl_int err = clGetPlatformIDs(0, nullptr, &nplat);
  if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && nplat == 0)) {
    r.status = VNN_STATUS_NO_DEVICE;
    r.message = std::string("opencl: no OpenCL platforms found (clGetPlatformIDs: ") +
                (err == CL_SUCCESS ? "0 platforms" : cl_error_name(err)) +
                "); is an ICD (e.g. pocl-opencl-icd) installed under /etc/OpenCL/vendors?";
    return;
  }
  if (err != CL_SUCCESS) {
    r.status = VNN_STATUS_DEVICE_ERROR;
    r.message = std::string("opencl: clGetPlatformIDs failed: ") + cl_error_name(err);
    return;
  }
  std::vector<cl_platform_id> plats(nplat);
  err = clGetPlatformIDs(nplat, plats.data(), nullptr);
  if (err != CL_SUCCESS) {
    r.status = VNN_STATUS_DEVICE_ERROR;
    r.message = std::string("opencl: clGetPlatformIDs failed: ") + cl_error_name(err);
    return;
  }
  std::string skipped;
  for (cl_platform_id p : plats) {
    cl_uint ndev = 0;
    err = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &ndev);
    if (err != CL_SUCCESS || ndev == 0) {
      // A platform whose driver finds no hardware answers
      // CL_DEVICE_NOT_FOUND; keep the reason for the no-device message.
      skipped += " " + platform_string(p, CL_PLATFORM_NAME) + " (" +
                 (err == CL_SUCCESS ? "0 devices" : cl_error_name(err)) + ");";
      continue;
    }
    std::vector<cl_device_id> ids(ndev);
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, ndev, ids.data(), nullptr) != CL_SUCCESS)
      continue;
    for (cl_device_id id : ids) r.devices.push_back(describe(p, id));
  }
  std::stable_sort(r.devices.begin(), r.devices.end(), [](const Device* a, const Device* b) {
    return type_rank(a->cl_type) < type_rank(b->cl_type);
  });
  for (size_t i = 0; i < r.devices.size(); ++i) {
    r.devices[i]->index = static_cast<int32_t>(i);
    r.devices[i]->label = "opencl:" + std::to_string(i);
  }
  if (r.devices.empty()) {
    r.status = VNN_STATUS_NO_DEVICE;
    r.message = "opencl: " + std::to_string(nplat) +
                " OpenCL platform(s) but no devices:" + skipped;
  }
}

// At exit, wait for every ready device's default queues. A driver that
// compiles or runs work in its own threads (PoCL builds a kernel's
// work-group function at its first launch, inside LLVM) must not still be
// doing so while the process's static destructors (LLVM's among them) run:
// test_ops_conv[opencl] crashed 1 in ~4 exits that way. Registered after the
// ICD loader and the driver are loaded, so it runs before their teardown,
// and again after each kernel's first launch (launch.cpp), before the
// destructors of the LLVM statics that compile used.
void drain_queues_at_exit() {
  for (Device* d : registry().devices) {
    if (!d->ready.load(std::memory_order_acquire)) continue;
    clFinish(d->queue);
    clFinish(d->host_queue);
  }
}

}  // namespace

void register_exit_drain() {
  // Serialised: atexit is not required to be thread-safe.
  static std::mutex m;
  std::lock_guard<std::mutex> lock(m);
  std::atexit(drain_queues_at_exit);
}

namespace {

Registry& probed() {
  Registry& r = registry();
  std::call_once(r.once, [&r] { probe_once(r); });
  return r;
}

Device* find_device(int32_t device, vnn_status* st) {
  Registry& r = probed();
  *st = r.status != VNN_STATUS_OK ? r.status : VNN_STATUS_INVALID_ARGUMENT;
  if (device < 0 || static_cast<size_t>(device) >= r.devices.size()) {
    if (r.status != VNN_STATUS_OK) {
      fail(r.status, r.message);
      return nullptr;
    }
    fail(VNN_STATUS_INVALID_ARGUMENT, "opencl: no device ", device, " (", r.devices.size(), " found)");
    return nullptr;
  }
  return r.devices[static_cast<size_t>(device)];
}

void copy_text(char* dst, size_t cap, const std::string& src) {
  std::snprintf(dst, cap, "%s", src.c_str());
}

std::string pci_id(const Device& d) {
  char buf[32] = {0};
  if (d.has_extension("cl_khr_pci_bus_info")) {
    cl_device_pci_bus_info_khr info{};
    if (clGetDeviceInfo(d.id, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof info, &info, nullptr) ==
        CL_SUCCESS) {
      std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", info.pci_domain, info.pci_bus,
                    info.pci_device, info.pci_function);
      return buf;
    }
  }
  if (d.has_extension("cl_nv_device_attribute_query")) {
    cl_uint bus = 0, slot = 0, domain = 0;
    if (clGetDeviceInfo(d.id, CL_DEVICE_PCI_BUS_ID_NV, sizeof bus, &bus, nullptr) ==
            CL_SUCCESS &&
        clGetDeviceInfo(d.id, CL_DEVICE_PCI_SLOT_ID_NV, sizeof slot, &slot, nullptr) ==
            CL_SUCCESS) {
      // Older drivers lack the domain query; domain 0 is then the answer.
      clGetDeviceInfo(d.id, CL_DEVICE_PCI_DOMAIN_ID_NV, sizeof domain, &domain, nullptr);
      // The NV slot id packs device (bits 3..7) and function (bits 0..2).
      std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, slot >> 3, slot & 7);
      return buf;
    }
  }
  return {};
}

std::string uuid(const Device& d) {
  if (!d.has_extension("cl_khr_device_uuid")) return {};
  cl_uchar u[CL_UUID_SIZE_KHR];
  if (clGetDeviceInfo(d.id, CL_DEVICE_UUID_KHR, sizeof u, u, nullptr) != CL_SUCCESS) return {};
  char buf[48];
  // NVIDIA's driver reports the same UUID as CUDA; spell it like
  // nvidia-smi so the core can match a GPU seen through both backends.
  bool nv = d.vendor.find("NVIDIA") != std::string::npos;
  std::snprintf(buf, sizeof buf,
                "%s%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                nv ? "GPU-" : "", u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
                u[10], u[11], u[12], u[13], u[14], u[15]);
  return buf;
}

std::string arch(const Device& d) {
  if (d.has_extension("cl_nv_device_attribute_query")) {
    cl_uint major = 0, minor = 0;
    if (clGetDeviceInfo(d.id, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, sizeof major, &major,
                        nullptr) == CL_SUCCESS &&
        clGetDeviceInfo(d.id, CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV, sizeof minor, &minor,
                        nullptr) == CL_SUCCESS)
      return "sm_" + std::to_string(major) + std::to_string(minor);
  }
  return d.c_version;
}

uint64_t free_memory(const Device& d) {
  // Only AMD tells free memory through OpenCL (in KiB, first of two values).
  if (!d.has_extension("cl_amd_device_attribute_query")) return 0;
  size_t kib[2] = {0, 0};
  if (clGetDeviceInfo(d.id, CL_DEVICE_GLOBAL_FREE_MEMORY_AMD, sizeof kib, kib, nullptr) !=
      CL_SUCCESS)
    return 0;
  return static_cast<uint64_t>(kib[0]) * 1024u;
}

}  // namespace

vnn_status probe(int32_t* count) {
  if (!count) return fail(VNN_STATUS_INVALID_ARGUMENT, "opencl: probe: count is NULL");
  Registry& r = probed();
  *count = static_cast<int32_t>(r.devices.size());
  if (r.status != VNN_STATUS_OK) return fail(r.status, r.message);
  return VNN_STATUS_OK;
}

vnn_status device_info(int32_t device, vnn_device_info* info) {
  if (!info || info->struct_size < sizeof(vnn_device_info))
    return fail(VNN_STATUS_INVALID_ARGUMENT, "opencl: device_info: info is NULL or its struct_size is too small");
  vnn_status st = VNN_STATUS_OK;
  Device* d = find_device(device, &st);
  if (!d) return st;
  size_t size = info->struct_size;
  std::memset(info, 0, sizeof *info);
  info->struct_size = size;
  copy_text(info->name, sizeof info->name, d->name);
  copy_text(info->vendor, sizeof info->vendor, d->vendor);
  copy_text(info->driver_version, sizeof info->driver_version, d->driver_version);
  copy_text(info->pci_id, sizeof info->pci_id, pci_id(*d));
  copy_text(info->uuid, sizeof info->uuid, uuid(*d));
  copy_text(info->arch, sizeof info->arch, arch(*d));
  info->type = (d->cl_type & CL_DEVICE_TYPE_GPU)   ? VNN_DEVICE_GPU
               : (d->cl_type & CL_DEVICE_TYPE_CPU) ? VNN_DEVICE_CPU
                                                   : VNN_DEVICE_ACCELERATOR;
  info->compute_units = static_cast<int32_t>(d->compute_units);
  info->total_memory = d->global_mem;
  info->free_memory = free_memory(*d);
  // Even where OpenCL memory is host memory (PoCL), cl_mem handles are not
  // pointers: the core must copy through the backend.
  info->host_accessible = 0;
  info->usable = d->available && d->compiler_available;
  if (!d->available)
    copy_text(info->unusable_reason, sizeof info->unusable_reason,
              "CL_DEVICE_AVAILABLE is false");
  else if (!d->compiler_available)
    copy_text(info->unusable_reason, sizeof info->unusable_reason,
              "no OpenCL C compiler for this device (CL_DEVICE_COMPILER_AVAILABLE is false)");
  std::snprintf(info->properties, sizeof info->properties,
                "platform=%s\nopencl_version=%s\nmax_work_group_size=%zu\nmax_work_item_sizes=%zux%zux%zu\n"
                "fp64=%s\nfp16=%s\nimages=%s\nmax_alloc=%llu\nlocal_mem=%llu (%s)\nvector_width_float=%u\n"
                "item_loop=%s\n",
                d->platform_name.c_str(), d->opencl_version.c_str(), d->max_work_group_size,
                d->max_item_sizes[0], d->max_item_sizes[1], d->max_item_sizes[2], d->fp64 ? "yes" : "no",
                d->fp16 ? "yes" : "no", d->images ? "yes" : "no", static_cast<unsigned long long>(d->max_alloc),
                static_cast<unsigned long long>(d->local_mem), d->local_mem_dedicated ? "dedicated" : "global",
                d->vector_width_float, d->one_per_item ? "one_per_item" : "grid_stride");
  // The MATMUL path: CLBlast (float32/float64, unit-stride operands) when
  // the plugin was built with it, else the tiled kernel; gemm_last says
  // which one the latest MATMUL on this device used.
  static const char* const kGemmLast[] = {"none", "clblast", "tiled", "simple", "longk", "widen"};
  size_t used = std::strlen(info->properties);
  std::snprintf(info->properties + used, sizeof info->properties - used, "gemm=%s\ngemm_last=%s\n",
#ifdef VNN_OPENCL_HAVE_CLBLAST
                "clblast",
#else
                "tiled",
#endif
                kGemmLast[d->last_gemm.load(std::memory_order_relaxed) % 6]);
  // VNN_OPENCL_TUNE=1 (vnn-devices --tune) tunes here and rewrites the
  // cache; otherwise the tuning runs at the first MATMUL.
  if (const char* tune = std::getenv("VNN_OPENCL_TUNE"); tune && std::strcmp(tune, "1") == 0) {
    Device* ready = nullptr;
    if (ready_device(device, &ready) == VNN_STATUS_OK) device_tuning(*ready);
  }
  used = std::strlen(info->properties);
  std::snprintf(info->properties + used, sizeof info->properties - used, "%s", tuning_report(*d).c_str());
  return VNN_STATUS_OK;
}

vnn_status init_device(int32_t device) {
  vnn_status st = VNN_STATUS_OK;
  Device* d = find_device(device, &st);
  if (!d) return st;
  if (d->ready.load(std::memory_order_acquire)) return VNN_STATUS_OK;
  std::lock_guard<std::mutex> lock(d->init_mutex);
  if (d->ready.load(std::memory_order_relaxed)) return VNN_STATUS_OK;
  if (!d->available) return fail(VNN_STATUS_DEVICE_ERROR, d->label, " (", d->name, "): device not available");
  cl_int err = CL_SUCCESS;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                   reinterpret_cast<cl_context_properties>(d->platform), 0};
  cl_context ctx = clCreateContext(props, 1, &d->id, nullptr, nullptr, &err);
  if (err != CL_SUCCESS) return fail_cl(err, d->label, " (", d->name, "): clCreateContext failed");
  // Profiling is on for every queue: event_elapsed reads marker timestamps.
  cl_command_queue q = clCreateCommandQueue(ctx, d->id, CL_QUEUE_PROFILING_ENABLE, &err);
  if (err != CL_SUCCESS) {
    clReleaseContext(ctx);
    return fail_cl(err, d->label, " (", d->name, "): clCreateCommandQueue failed");
  }
  cl_command_queue hq = clCreateCommandQueue(ctx, d->id, 0, &err);
  if (err != CL_SUCCESS) {
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return fail_cl(err, d->label, " (", d->name, "): clCreateCommandQueue (pinned host queue) failed");
  }
  d->context = ctx;
  d->queue = q;
  d->host_queue = hq;
  d->ready.store(true, std::memory_order_release);
  register_exit_drain();
  return VNN_STATUS_OK;
}

vnn_status ready_device(int32_t device, Device** out) {
  vnn_status st = VNN_STATUS_OK;
  Device* d = find_device(device, &st);
  if (!d) return st;
  if (!d->ready.load(std::memory_order_acquire)) {
    st = init_device(device);
    if (st != VNN_STATUS_OK) return st;
  }
  *out = d;
  return VNN_STATUS_OK;
}

}  // namespace vnn_opencl
