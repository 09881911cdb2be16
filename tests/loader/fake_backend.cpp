// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A fake backend for the loader tests: two "GPU" devices backed by host
// memory. Compile-time switches turn it into the broken plugins the loader
// must survive (wrong ABI version, failing probe).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "support/host_memory_plugin.hpp"
#include "vnn/backend_abi.h"

#ifndef FAKE_NAME
#define FAKE_NAME "fakegpu"
#endif
#ifndef FAKE_ABI_VERSION
#define FAKE_ABI_VERSION VNN_BACKEND_ABI_VERSION
#endif

namespace {

thread_local std::string last_error_text;

vnn_status probe(int32_t* count) {
#ifdef FAKE_PROBE_FAILS
  *count = 0;
  last_error_text = "libfakedriver.so.1: cannot open shared object file";
  return VNN_STATUS_DRIVER_MISSING;
#else
  *count = 2;
  return VNN_STATUS_OK;
#endif
}

vnn_status device_info(int32_t device, vnn_device_info* info) {
  std::snprintf(info->name, sizeof(info->name), "Fake GPU %d", device);
  std::snprintf(info->vendor, sizeof(info->vendor), "vnn tests");
  info->type = VNN_DEVICE_GPU;
  info->compute_units = 4;
  info->total_memory = (uint64_t(1) << 30) * uint64_t(device + 1);
  info->host_accessible = 1;
  info->usable = 1;
  std::snprintf(info->properties, sizeof(info->properties), "fake=yes\n");
  return VNN_STATUS_OK;
}

using namespace vnn_test_plugin;

// Only contiguous float32 FILL: enough to prove dispatch reaches the plugin.
vnn_status run(int32_t device, const vnn_op* op) {
  if (op->kind == VNN_OP_FILL && op->outputs[0].dtype == VNN_FLOAT32) {
    const vnn_tensor_desc& o = op->outputs[0];
    int64_t n = 1;
    for (int i = 0; i < o.ndim; ++i) n *= o.sizes[i];
    float* p = static_cast<float*>(o.data) + o.offset;
    for (int64_t i = 0; i < n; ++i) p[i] = float(op->scalars[0]);
    return VNN_STATUS_OK;
  }
  last_error_text = std::string(FAKE_NAME ":") + std::to_string(device) + ": op kind " +
                    std::to_string(op->kind) + " is unsupported on this backend";
  return VNN_STATUS_UNSUPPORTED;
}

const char* last_error() { return last_error_text.c_str(); }

const vnn_backend table = {
    .abi_version = FAKE_ABI_VERSION,
    .reserved = 0,
    .struct_size = sizeof(vnn_backend),
    .name = FAKE_NAME,
    .description = "fake backend for the loader tests",
    .priority = 0,
    .reserved2 = 0,
    .probe = probe,
    .device_info = device_info,
    .init_device = ok_device,
    .alloc = alloc,
    .free = release,
    .host_alloc = alloc,
    .host_free = release,
    .copy_to_device = to_device,
    .copy_to_host = to_host,
    .copy_on_device = on_device,
    .queue_create = nullptr,
    .queue_destroy = nullptr,
    .queue_synchronize = queue_sync,
    .event_create = nullptr,
    .event_destroy = nullptr,
    .event_record = nullptr,
    .event_synchronize = nullptr,
    .event_elapsed = nullptr,
    .run = run,
    .last_error = last_error,
};

}  // namespace

#ifdef FAKE_NO_ENTRY
extern "C" VNN_BACKEND_EXPORT const vnn_backend* not_the_entry_point(uint32_t) { return &table; }
#else
extern "C" VNN_BACKEND_EXPORT const vnn_backend* vnn_backend_entry(uint32_t) { return &table; }
#endif
