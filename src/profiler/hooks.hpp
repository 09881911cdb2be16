// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The profiler's entry points inside the core: op dispatch (run_op), shape
// capture before dims are coalesced (enqueue) and the caching allocator.
// Each call site tests hooks_on() first: a relaxed load of one flag that is
// false unless a Profile is active or VNN_NVTX=1, so dispatch costs one
// predictable branch when nobody profiles.
#pragma once
#include <atomic>
#include <cstddef>

#include "vnn/backend_abi.h"

namespace vnn::detail {
struct DeviceContext;
}

namespace vnn::profiler::detail {

extern std::atomic<bool> g_hooks;
inline bool hooks_on() { return g_hooks.load(std::memory_order_relaxed); }

// run_op's slow path: records the op (and pushes tool ranges) around the
// backend's run; throws like run_op on failure.
void run_op_profiled(vnn::detail::DeviceContext& ctx, vnn_op& op, const char* name);
// Input shapes as the caller saw them, before enqueue coalesces dims.
void note_shapes(const vnn_tensor_desc* in, size_t n);
void note_alloc(size_t bytes);
void note_free(size_t bytes);

}  // namespace vnn::profiler::detail
