// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "memory.hpp"

#include <CL/cl.h>

#include <mutex>
#include <unordered_map>

#include "device.hpp"
#include "errors.hpp"
#include "scratch.hpp"

namespace vnn_opencl {
namespace {

cl_mem as_mem(const void* h) { return static_cast<cl_mem>(const_cast<void*>(h)); }

// Pinned host blocks: the mapped pointer the core sees -> the buffer that
// owns it. Never destroyed, for the reason given in device.cpp.
struct PinnedMap {
  std::mutex mutex;
  std::unordered_map<void*, cl_mem> blocks;
};

PinnedMap& pinned() {
  static PinnedMap* m = new PinnedMap;
  return *m;
}

// An event is created before it is recorded, and may be recorded again;
// it owns the marker of its latest record.
struct Event {
  Device* device = nullptr;
  cl_event marker = nullptr;
};

vnn_status oom(const Device& d, const char* what, size_t bytes, const char* reason) {
  return fail(VNN_STATUS_OUT_OF_MEMORY, d.label, " (", d.name, "): ", what, " of ", bytes, " bytes failed: ", reason,
              " (device max alloc ", d.max_alloc, " bytes, global memory ", d.global_mem, " bytes)");
}

}  // namespace

vnn_status mem_alloc(int32_t device, size_t bytes, void** handle) {
  Device* d = nullptr;
  if (vnn_status st = ready_device(device, &d)) return st;
  if (!handle) return fail(VNN_STATUS_INVALID_ARGUMENT, d->label, ": alloc: handle is NULL");
  if (bytes > d->max_alloc) return oom(*d, "alloc", bytes, "larger than the device's max allocation");
  cl_int err = CL_SUCCESS;
  // OpenCL rejects 0-byte buffers; one byte still gives a unique handle.
  cl_mem m = clCreateBuffer(d->context, CL_MEM_READ_WRITE, bytes ? bytes : 1, nullptr, &err);
  if (err != CL_SUCCESS) {
    if (status_from_cl(err) == VNN_STATUS_OUT_OF_MEMORY) return oom(*d, "alloc", bytes, cl_error_name(err));
    return fail_cl(err, d->label, ": alloc of ", bytes, " bytes: clCreateBuffer failed");
  }
  *handle = m;
  return VNN_STATUS_OK;
}

vnn_status mem_free(int32_t device, void* handle) {
  Device* d = nullptr;
  if (vnn_status st = ready_device(device, &d)) return st;
  if (!handle) return VNN_STATUS_OK;
  // Safe with work still queued: OpenCL keeps the buffer until the commands
  // using it have finished.
  cl_int err = clReleaseMemObject(as_mem(handle));
  if (err != CL_SUCCESS) return fail_cl(err, d->label, ": free: clReleaseMemObject failed");
  return VNN_STATUS_OK;
}

vnn_status host_alloc(int32_t device, size_t bytes, void** host_ptr) {
  Device* d = nullptr;
  if (vnn_status st = ready_device(device, &d)) return st;
  if (!host_ptr) return fail(VNN_STATUS_INVALID_ARGUMENT, d->label, ": host_alloc: host_ptr is NULL");
  size_t n = bytes ? bytes : 1;
  cl_int err = CL_SUCCESS;
  // ALLOC_HOST_PTR + map is the portable way to get page-locked memory that
  // drivers (NVIDIA, AMD) DMA from directly.
  cl_mem m = clCreateBuffer(d->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, n, nullptr, &err);
  if (err != CL_SUCCESS) {
    if (status_from_cl(err) == VNN_STATUS_OUT_OF_MEMORY) return oom(*d, "host_alloc", bytes, cl_error_name(err));
    return fail_cl(err, d->label, ": host_alloc of ", bytes, " bytes: clCreateBuffer failed");
  }
  void* p = clEnqueueMapBuffer(d->host_queue, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, n, 0,
                               nullptr, nullptr, &err);
  if (err != CL_SUCCESS) {
    clReleaseMemObject(m);
    return fail_cl(err, d->label, ": host_alloc of ", bytes, " bytes: clEnqueueMapBuffer failed");
  }
  PinnedMap& pm = pinned();
  std::lock_guard<std::mutex> lock(pm.mutex);
  pm.blocks[p] = m;
  *host_ptr = p;
  return VNN_STATUS_OK;
}

vnn_status host_free(int32_t device, void* host_ptr) {
  Device* d = nullptr;
  if (vnn_status st = ready_device(device, &d)) return st;
  if (!host_ptr) return VNN_STATUS_OK;
  cl_mem m = nullptr;
  {
    PinnedMap& pm = pinned();
    std::lock_guard<std::mutex> lock(pm.mutex);
    auto it = pm.blocks.find(host_ptr);
    if (it == pm.blocks.end())
      return fail(VNN_STATUS_INVALID_ARGUMENT, d->label, ": host_free: ", static_cast<const void*>(host_ptr),
                  " was not returned by host_alloc");
    m = it->second;
    pm.blocks.erase(it);
  }
  cl_int err = clEnqueueUnmapMemObject(d->host_queue, m, host_ptr, 0, nullptr, nullptr);
  cl_int rel = clReleaseMemObject(m);
  if (err != CL_SUCCESS) return fail_cl(err, d->label, ": host_free: clEnqueueUnmapMemObject failed");
  if (rel != CL_SUCCESS) return fail_cl(rel, d->label, ": host_free: clReleaseMemObject failed");
  return VNN_STATUS_OK;
}

vnn_status copy_to_device(int32_t device, void* dst, size_t dst_offset, const void* src,
                          size_t bytes, void* queue, int32_t blocking) {
  Device* d = nullptr;
  if (vnn_status st = ready_device(device, &d)) return st;
  if (bytes == 0) return VNN_STATUS_OK;  // OpenCL rejects 0-byte transfers
  cl_int err = clEnqueueWriteBuffer(queue_or_default(*d, queue), as_mem(dst),
                                    blocking ? CL_TRUE : CL_FALSE, dst_offset, bytes, src, 0,
                                    nullptr, nullptr);
  if (err != CL_SUCCESS)
    return fail_cl(err, d->label, ": copy_to_device of ", bytes, " bytes at offset ", dst_offset,
                   ": clEnqueueWriteBuffer failed");
  return VNN_STATUS_OK;
}

vnn_status copy_to_host(int32_t device, void* dst, const void* src, size_t src_offset,
                        size_t bytes, void* queue, int32_t blocking) {
  Device* d = nullptr;
  if (vnn_status st = ready_device(device, &d)) return st;
  if (bytes == 0) return VNN_STATUS_OK;
  cl_int err = clEnqueueReadBuffer(queue_or_default(*d, queue), as_mem(src),
                                   blocking ? CL_TRUE : CL_FALSE, src_offset, bytes, dst, 0,
                                   nullptr, nullptr);
  if (err != CL_SUCCESS)
    return fail_cl(err, d->label, ": copy_to_host of ", bytes, " bytes at offset ", src_offset,
                   ": clEnqueueReadBuffer failed");
  return VNN_STATUS_OK;
}

vnn_status copy_on_device(int32_t device, void* dst, size_t dst_offset, const void* src,
                          size_t src_offset, size_t bytes, void* queue) {
  Device* d = nullptr;
  if (vnn_status st = ready_device(device, &d)) return st;
  if (bytes == 0 || (dst == src && dst_offset == src_offset)) return VNN_STATUS_OK;
  cl_int err = clEnqueueCopyBuffer(queue_or_default(*d, queue), as_mem(src), as_mem(dst),
                                   src_offset, dst_offset, bytes, 0, nullptr, nullptr);
  if (err != CL_SUCCESS)
    return fail_cl(err, d->label, ": copy_on_device of ", bytes, " bytes: clEnqueueCopyBuffer failed");
  return VNN_STATUS_OK;
}

vnn_status queue_create(int32_t device, void** queue) {
  Device* d = nullptr;
  if (vnn_status st = ready_device(device, &d)) return st;
  if (!queue) return fail(VNN_STATUS_INVALID_ARGUMENT, d->label, ": queue_create: queue is NULL");
  cl_int err = CL_SUCCESS;
  cl_command_queue q = clCreateCommandQueue(d->context, d->id, CL_QUEUE_PROFILING_ENABLE, &err);
  if (err != CL_SUCCESS) return fail_cl(err, d->label, ": queue_create: clCreateCommandQueue failed");
  *queue = q;
  return VNN_STATUS_OK;
}

vnn_status queue_destroy(int32_t device, void* queue) {
  Device* d = nullptr;
  if (vnn_status st = ready_device(device, &d)) return st;
  if (!queue || queue == d->queue) return VNN_STATUS_OK;  // the default queue lives forever
  release_scratch(static_cast<cl_command_queue>(queue));
  cl_int err = clReleaseCommandQueue(static_cast<cl_command_queue>(queue));
  if (err != CL_SUCCESS) return fail_cl(err, d->label, ": queue_destroy: clReleaseCommandQueue failed");
  return VNN_STATUS_OK;
}

vnn_status queue_synchronize(int32_t device, void* queue) {
  Device* d = nullptr;
  if (vnn_status st = ready_device(device, &d)) return st;
  cl_int err = clFinish(queue_or_default(*d, queue));
  // Errors of asynchronous work (e.g. a lazy allocation failing) surface here.
  if (err != CL_SUCCESS) return fail_cl(err, d->label, ": queue_synchronize: clFinish failed");
  return VNN_STATUS_OK;
}

vnn_status event_create(int32_t device, void** event) {
  Device* d = nullptr;
  if (vnn_status st = ready_device(device, &d)) return st;
  if (!event) return fail(VNN_STATUS_INVALID_ARGUMENT, d->label, ": event_create: event is NULL");
  Event* e = new Event;
  e->device = d;
  *event = e;
  return VNN_STATUS_OK;
}

vnn_status event_destroy(int32_t device, void* event) {
  Event* e = static_cast<Event*>(event);
  if (!e) return VNN_STATUS_OK;
  cl_int err = e->marker ? clReleaseEvent(e->marker) : CL_SUCCESS;
  delete e;
  if (err != CL_SUCCESS) return fail_cl(err, "opencl:", device, ": event_destroy: clReleaseEvent failed");
  return VNN_STATUS_OK;
}

vnn_status event_record(int32_t device, void* event, void* queue) {
  Device* d = nullptr;
  if (vnn_status st = ready_device(device, &d)) return st;
  Event* e = static_cast<Event*>(event);
  if (!e) return fail(VNN_STATUS_INVALID_ARGUMENT, d->label, ": event_record: event is NULL");
  cl_event marker = nullptr;
  cl_int err = clEnqueueMarkerWithWaitList(queue_or_default(*d, queue), 0, nullptr, &marker);
  if (err != CL_SUCCESS) return fail_cl(err, d->label, ": event_record: clEnqueueMarkerWithWaitList failed");
  cl_event old = e->marker;
  e->marker = marker;
  if (old && (err = clReleaseEvent(old)) != CL_SUCCESS)
    return fail_cl(err, d->label, ": event_record: clReleaseEvent failed");
  // Flush so that a host waiting on this event alone sees progress.
  err = clFlush(queue_or_default(*d, queue));
  if (err != CL_SUCCESS) return fail_cl(err, d->label, ": event_record: clFlush failed");
  return VNN_STATUS_OK;
}

vnn_status event_synchronize(int32_t device, void* event) {
  Device* d = nullptr;
  if (vnn_status st = ready_device(device, &d)) return st;
  Event* e = static_cast<Event*>(event);
  if (!e || !e->marker) return VNN_STATUS_OK;  // never recorded: nothing to wait for
  cl_int err = clWaitForEvents(1, &e->marker);
  if (err != CL_SUCCESS) return fail_cl(err, d->label, ": event_synchronize: clWaitForEvents failed");
  return VNN_STATUS_OK;
}

vnn_status event_elapsed(int32_t device, void* start, void* end, double* milliseconds) {
  Device* d = nullptr;
  if (vnn_status st = ready_device(device, &d)) return st;
  Event* a = static_cast<Event*>(start);
  Event* b = static_cast<Event*>(end);
  if (!a || !b || !a->marker || !b->marker || !milliseconds)
    return fail(VNN_STATUS_INVALID_ARGUMENT, d->label, ": event_elapsed: both events must have been recorded");
  // Profiling counters exist only once a command completes; waiting here
  // turns a racy "not available" into the answer the caller wants.
  cl_event evs[2] = {a->marker, b->marker};
  cl_int err = clWaitForEvents(2, evs);
  if (err != CL_SUCCESS) return fail_cl(err, d->label, ": event_elapsed: clWaitForEvents failed");
  // END is when a marker completed, i.e. when all work before it was done;
  // some drivers only fill START for markers, hence the fallback.
  const cl_profiling_info order[] = {CL_PROFILING_COMMAND_END, CL_PROFILING_COMMAND_START};
  for (cl_profiling_info what : order) {
    cl_ulong t0 = 0, t1 = 0;
    cl_int e0 = clGetEventProfilingInfo(a->marker, what, sizeof t0, &t0, nullptr);
    cl_int e1 = clGetEventProfilingInfo(b->marker, what, sizeof t1, &t1, nullptr);
    if (e0 == CL_SUCCESS && e1 == CL_SUCCESS) {
      *milliseconds = (static_cast<double>(t1) - static_cast<double>(t0)) * 1e-6;
      return VNN_STATUS_OK;
    }
    err = e0 != CL_SUCCESS ? e0 : e1;
  }
  return fail_cl(err, d->label, ": event_elapsed: clGetEventProfilingInfo failed");
}

vnn_status event_query(int32_t device, void* event) {
  Device* d = nullptr;
  if (vnn_status st = ready_device(device, &d)) return st;
  Event* e = static_cast<Event*>(event);
  if (!e || !e->marker) return VNN_STATUS_OK;  // never recorded: nothing pending
  cl_int status = CL_QUEUED;
  cl_int err = clGetEventInfo(e->marker, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
  if (err != CL_SUCCESS) return fail_cl(err, d->label, ": event_query: clGetEventInfo failed");
  // A negative status is the error code of a command that failed.
  if (status < 0) return fail_cl(status, d->label, ": event_query: the recorded work failed");
  return status == CL_COMPLETE ? VNN_STATUS_OK : VNN_STATUS_NOT_READY;
}

vnn_status queue_wait_event(int32_t device, void* queue, void* event) {
  Device* d = nullptr;
  if (vnn_status st = ready_device(device, &d)) return st;
  Event* e = static_cast<Event*>(event);
  if (!e || !e->marker) return VNN_STATUS_OK;
  // A barrier waiting on the marker: later commands of this in-order queue
  // start after it, and the host does not block. The barrier's own event is
  // not needed.
  cl_command_queue q = queue_or_default(*d, queue);
  cl_int err = clEnqueueBarrierWithWaitList(q, 1, &e->marker, nullptr);
  if (err != CL_SUCCESS) return fail_cl(err, d->label, ": queue_wait_event: clEnqueueBarrierWithWaitList failed");
  return VNN_STATUS_OK;
}

}  // namespace vnn_opencl
