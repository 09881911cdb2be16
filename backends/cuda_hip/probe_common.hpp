// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the CUDA and HIP probes (probe.hpp) share: opening the vendor
// library once, resolving its entry points, and the checks and answers of
// probe() / device_info() that do not depend on the vendor API.
#pragma once

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <string>
#include <utility>

#include "vnn/backend_abi.h"

namespace vnn::gpu_probe {

// The state every probe keeps about its vendor library after the one
// attempt to open it.
struct Library {
  void* lib = nullptr;
  std::string lib_name;  // the soname that opened
  vnn_status status = VNN_STATUS_INTERNAL;
  std::string why;       // set when status != OK
  int count = 0;
  int version = 0;
};

// dlopen()s the first of `names` that opens, RTLD_NOW | RTLD_LOCAL. On
// failure returns false with the first dlerror() text in *first_error.
inline bool open_first(Library& l, std::initializer_list<const char*> names, std::string* first_error) {
  for (const char* n : names) {
    dlerror();
    l.lib = dlopen(n, RTLD_NOW | RTLD_LOCAL);
    if (l.lib) {
      l.lib_name = n;
      return true;
    }
    const char* e = dlerror();
    if (first_error->empty()) *first_error = e ? e : n;
  }
  return false;
}

template <class F>
bool load(void* lib, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  return *out != nullptr;
}

// The process's one instance of a probe's library state, opened by `open`
// on first use (thread-safe).
template <class Lib, void (*open)(Lib&)>
Lib& once() {
  static Lib l;
  static std::once_flag flag;
  std::call_once(flag, [] { open(l); });
  return l;
}

inline void fail(Library& l, vnn_status s, std::string why) {
  l.status = s;
  l.why = std::move(why);
  l.count = 0;
}

// probe()'s answer from the library state.
inline vnn_status answer_probe(const Library& l, int32_t* count, std::string* why) {
  if (count) *count = l.status == VNN_STATUS_OK ? l.count : 0;
  if (l.status != VNN_STATUS_OK && why) *why = l.why;
  return l.status;
}

// device_info()'s checks before any vendor call: the library answered, the
// device exists, the caller's struct is large enough. On OK, *info is
// cleared past struct_size.
inline vnn_status begin_device_info(const Library& l, const char* plugin, int32_t device,
                                    vnn_device_info* info, std::string* why) {
  if (l.status != VNN_STATUS_OK) {
    if (why) *why = l.why;
    return l.status;
  }
  if (!info || device < 0 || device >= l.count) {
    if (why)
      *why = std::string(plugin) + ": no device " + std::to_string(device) + " (" + std::to_string(l.count) +
             " found)";
    return VNN_STATUS_INVALID_ARGUMENT;
  }
  if (info->struct_size < sizeof(vnn_device_info)) {
    if (why) *why = std::string(plugin) + ": vnn_device_info.struct_size is smaller than this plugin's";
    return VNN_STATUS_INVALID_ARGUMENT;
  }
  std::memset(reinterpret_cast<char*>(info) + sizeof(size_t), 0, sizeof(vnn_device_info) - sizeof(size_t));
  info->type = VNN_DEVICE_GPU;
  info->free_memory = 0;
  info->host_accessible = 0;
  return VNN_STATUS_OK;
}

// Bounded copy into one of vnn_device_info's char arrays.
template <size_t N>
void copy_str(char (&dst)[N], const std::string& s) {
  std::snprintf(dst, N, "%s", s.c_str());
}

// usable / unusable_reason from the plugin's arch check.
inline void set_usable(vnn_device_info* info, bool usable, const std::string& reason) {
  info->usable = usable ? 1 : 0;
  if (!usable) copy_str(info->unusable_reason, reason);
}

}  // namespace vnn::gpu_probe
