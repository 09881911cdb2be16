// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Host-side helpers for the data pipeline. They allocate and copy on the
// host only (no backend ops), so DataLoader worker threads may call them
// while the main thread runs device work.
#pragma once
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>

#include "vnn/detail/message.h"
#include "vnn/error.h"
#include "vnn/tensor.h"

namespace vnn::data::detail {

// Throws ValueError unless t is a defined cpu tensor ("<what>: ...").
void require_host(const Tensor& t, const char* what);
// A new contiguous cpu tensor (no op enqueued).
Tensor host_empty(const Shape& shape, DType dtype, const char* op = "empty");
// Element 0 of a cpu tensor.
void* host_ptr(const Tensor& t);
// Copies t's elements in row-major order to dst (any strides).
void copy_to_buffer(const Tensor& t, void* dst);
// t itself when contiguous, else a contiguous host copy.
Tensor host_contiguous(const Tensor& t);

// Runs f; std::bad_alloc / std::length_error from the host allocations of a
// reader become OutOfMemory("<what>: ..."), so only vnn errors leave it.
template <class F>
auto host_memory_guard(const std::string& what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    VNN_THROW(OutOfMemory, what, ": out of host memory");
  } catch (const std::length_error&) {
    VNN_THROW(OutOfMemory, what, ": out of host memory (a buffer exceeded its maximum size)");
  }
}

}  // namespace vnn::data::detail
