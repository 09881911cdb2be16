// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Memory, copies, queues and events: the ABI entries that are thin wrappers
// over OpenCL calls.
#ifndef VNN_OPENCL_MEMORY_HPP
#define VNN_OPENCL_MEMORY_HPP

#include <cstddef>
#include <cstdint>

#include "vnn/backend_abi.h"

namespace vnn_opencl {

vnn_status mem_alloc(int32_t device, size_t bytes, void** handle);
vnn_status mem_free(int32_t device, void* handle);
vnn_status host_alloc(int32_t device, size_t bytes, void** host_ptr);
vnn_status host_free(int32_t device, void* host_ptr);

vnn_status copy_to_device(int32_t device, void* dst, size_t dst_offset, const void* src,
                          size_t bytes, void* queue, int32_t blocking);
vnn_status copy_to_host(int32_t device, void* dst, const void* src, size_t src_offset,
                        size_t bytes, void* queue, int32_t blocking);
vnn_status copy_on_device(int32_t device, void* dst, size_t dst_offset, const void* src,
                          size_t src_offset, size_t bytes, void* queue);

vnn_status queue_create(int32_t device, void** queue);
vnn_status queue_destroy(int32_t device, void* queue);
vnn_status queue_synchronize(int32_t device, void* queue);

vnn_status event_create(int32_t device, void** event);
vnn_status event_destroy(int32_t device, void* event);
vnn_status event_record(int32_t device, void* event, void* queue);
vnn_status event_synchronize(int32_t device, void* event);
vnn_status event_elapsed(int32_t device, void* start, void* end, double* milliseconds);
// Streams: VNN_STATUS_OK when complete, VNN_STATUS_NOT_READY while running.
vnn_status event_query(int32_t device, void* event);
vnn_status queue_wait_event(int32_t device, void* queue, void* event);

}  // namespace vnn_opencl

#endif
