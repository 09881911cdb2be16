// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Memory and copy entry points of a test plugin whose "device" memory is
// host memory (the fake plugins of tests/loader and tests/core/streams).
#pragma once
#include <cstdlib>
#include <cstring>

#include "vnn/backend_abi.h"

namespace vnn_test_plugin {

inline vnn_status ok_device(int32_t) { return VNN_STATUS_OK; }
inline vnn_status alloc(int32_t, size_t bytes, void** h) {
  *h = std::malloc(bytes ? bytes : 1);
  return *h ? VNN_STATUS_OK : VNN_STATUS_OUT_OF_MEMORY;
}
inline vnn_status release(int32_t, void* h) {
  std::free(h);
  return VNN_STATUS_OK;
}
inline vnn_status to_device(int32_t, void* dst, size_t off, const void* src, size_t n, void*, int32_t) {
  std::memcpy(static_cast<char*>(dst) + off, src, n);
  return VNN_STATUS_OK;
}
inline vnn_status to_host(int32_t, void* dst, const void* src, size_t off, size_t n, void*, int32_t) {
  std::memcpy(dst, static_cast<const char*>(src) + off, n);
  return VNN_STATUS_OK;
}
inline vnn_status on_device(int32_t, void* dst, size_t doff, const void* src, size_t soff, size_t n, void*) {
  std::memmove(static_cast<char*>(dst) + doff, static_cast<const char*>(src) + soff, n);
  return VNN_STATUS_OK;
}
inline vnn_status queue_sync(int32_t, void*) { return VNN_STATUS_OK; }

}  // namespace vnn_test_plugin
