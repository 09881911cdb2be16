// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The insides of vnn::Stream / vnn::Event, and what ops and copies ask to
// pick their queue (src/runtime/stream.cpp).
#pragma once
#include <cstdint>

#include "runtime/device_context.hpp"

namespace vnn::detail {

struct StreamState {
  DeviceContext* ctx = nullptr;
  void* queue = nullptr;  // nullptr: the device's default queue
  uint64_t id = 0;        // 0: the default stream; unique otherwise (allocator tag)
  ~StreamState();
};

struct EventState {
  bool timing = true;
  DeviceContext* ctx = nullptr;  // device of the latest record
  void* handle = nullptr;        // backend event, made at the first record
  ~EventState();
};

// The queue / stream id of this thread's current stream for ctx (nullptr /
// 0 unless a StreamGuard is active): what run_op, the copies and the
// caching allocator use. Cheap when no guard is active anywhere on the thread.
void* current_queue(DeviceContext& ctx);
uint64_t current_stream_id(DeviceContext& ctx);

// Whether a recorded backend event has completed, without blocking (a
// plugin without event_query is waited for instead); errors throw, named `what`.
bool event_done(DeviceContext& ctx, void* event, const char* what);
// Blocks the host until the recorded backend event has completed.
void event_wait(DeviceContext& ctx, void* event, const char* what);

}  // namespace vnn::detail
