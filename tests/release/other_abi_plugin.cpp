// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A plugin "built for another ABI version": its entry point returns a table
// whose abi_version is one past the one this vnn speaks. The loader must
// refuse it, naming both versions (tests/release/plugin_abi_version.cpp).
#include "vnn/backend_abi.h"

namespace {

vnn_backend make_table() {
  vnn_backend t{};
  t.struct_size = sizeof(vnn_backend);
  t.abi_version = VNN_BACKEND_ABI_VERSION + 1u;
  t.name = "otherabi";
  t.description = "a plugin built against another vnn/backend_abi.h";
  return t;
}

const vnn_backend table = make_table();

}  // namespace

extern "C" VNN_BACKEND_EXPORT const vnn_backend* vnn_backend_entry(uint32_t) { return &table; }
