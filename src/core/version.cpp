// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The runtime half of vnn/version.h: what this libvnn.so was built as.
#include "vnn/version.h"

#include "vnn/backend_abi.h"

namespace vnn {

const char* version() noexcept { return VNN_VERSION_STRING; }

int version_number() noexcept { return VNN_VERSION; }

unsigned backend_abi_version() noexcept { return VNN_BACKEND_ABI_VERSION; }

}  // namespace vnn
