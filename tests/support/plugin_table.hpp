// The backend table of the device under test, reached the way a third-party
// caller of the C ABI would (dlopen of the plugin file discovery loaded:
// the same, already initialised, instance). Link with ${CMAKE_DL_LIBS}.
#pragma once
#include <dlfcn.h>

#include <string>

#include "support/device_under_test.hpp"
#include "vnn/backend_abi.h"

namespace vnn::test {

inline const vnn_backend* plugin_table(std::string* plugin_name) {
  Device d = device_under_test();
  const std::string want = d.backend() == "cpu" ? "openmp" : d.backend();
  for (const auto& r : backend_report())
    if (r.backend == want && r.loaded) {
      void* h = dlopen(r.library.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
      if (!h) return nullptr;
      auto entry = reinterpret_cast<vnn_backend_entry_fn>(dlsym(h, VNN_BACKEND_ENTRY_NAME));
      *plugin_name = want;
      return entry ? entry(VNN_BACKEND_ABI_VERSION) : nullptr;
    }
  return nullptr;
}

}  // namespace vnn::test
