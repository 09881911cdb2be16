// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
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

// A VNN_OP_CONV2D request over caller-owned descriptors and geometry:
// 3x3 kernel, stride 1, padding 1, dilation 1, groups 1 by default (the
// ints a core-side conv2d sends: kh, kw, sh, sw, ph, pw, dh, dw, groups).
struct Conv2dRequest {
  vnn_tensor_desc in[2]{}, out{};
  int64_t ints[9] = {3, 3, 1, 1, 1, 1, 1, 1, 1};
  vnn_op op{};
  Conv2dRequest() {
    op.struct_size = sizeof(vnn_op);
    op.kind = VNN_OP_CONV2D;
    op.num_inputs = 2;
    op.num_outputs = 1;
    op.num_ints = 9;
    op.inputs = in;
    op.outputs = &out;
    op.ints = ints;
  }
  Conv2dRequest(const Conv2dRequest&) = delete;  // op points into this object
  Conv2dRequest& operator=(const Conv2dRequest&) = delete;
};

}  // namespace vnn::test
