// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A plugin built before the stream entries were appended to vnn_backend:
// its struct_size ends at range_pop, so the core must not read
// event_query / queue_wait_event and falls back to event_synchronize.
// One host-memory device; events complete only when synchronised, and
// vnn_oldabi_sync_count() lets the test see that the fallback waited.
// Built with OLDABI_NO_QUEUES it is "noqueues", a plugin that leaves the
// queue and event entries NULL (the loader accepts that).
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

#include "support/host_memory_plugin.hpp"
#include "vnn/backend_abi.h"

#ifdef OLDABI_NO_QUEUES
#define OLDABI_NAME "noqueues"
#define OLDABI_ENTRY(f) nullptr
#else
#define OLDABI_NAME "oldabi"
#define OLDABI_ENTRY(f) f
#endif

namespace {

thread_local std::string last_error_text;
std::atomic<int> sync_count{0};

struct Event {
  std::chrono::steady_clock::time_point when;
  bool recorded = false;
};

vnn_status probe(int32_t* count) {
  *count = 1;
  return VNN_STATUS_OK;
}
vnn_status device_info(int32_t, vnn_device_info* info) {
  std::strcpy(info->name, "old-ABI test device");
  std::strcpy(info->vendor, "vnn tests");
  info->type = VNN_DEVICE_ACCELERATOR;
  info->compute_units = 1;
  info->total_memory = uint64_t(1) << 30;
  info->host_accessible = 1;
  info->usable = 1;
  return VNN_STATUS_OK;
}
using namespace vnn_test_plugin;
vnn_status queue_create(int32_t, void** q) {
  *q = new char(0);  // a unique token: work runs inline anyway
  return VNN_STATUS_OK;
}
vnn_status queue_destroy(int32_t, void* q) {
  delete static_cast<char*>(q);
  return VNN_STATUS_OK;
}
vnn_status event_create(int32_t, void** e) {
  *e = new Event;
  return VNN_STATUS_OK;
}
vnn_status event_destroy(int32_t, void* e) {
  delete static_cast<Event*>(e);
  return VNN_STATUS_OK;
}
vnn_status event_record(int32_t, void* e, void*) {
  static_cast<Event*>(e)->recorded = true;
  static_cast<Event*>(e)->when = std::chrono::steady_clock::now();
  return VNN_STATUS_OK;
}
vnn_status event_sync(int32_t, void*) {
  ++sync_count;
  return VNN_STATUS_OK;
}
vnn_status event_elapsed(int32_t, void* a, void* b, double* ms) {
  *ms = std::chrono::duration<double, std::milli>(static_cast<Event*>(b)->when - static_cast<Event*>(a)->when)
            .count();
  return VNN_STATUS_OK;
}
// Contiguous float32 FILL only: enough for a tensor to live here.
vnn_status run(int32_t, const vnn_op* op) {
  if (op->kind == VNN_OP_FILL && op->outputs[0].dtype == VNN_FLOAT32) {
    const vnn_tensor_desc& o = op->outputs[0];
    int64_t n = 1;
    for (int i = 0; i < o.ndim; ++i) n *= o.sizes[i];
    float* p = static_cast<float*>(o.data) + o.offset;
    for (int64_t i = 0; i < n; ++i) p[i] = float(op->scalars[0]);
    return VNN_STATUS_OK;
  }
  last_error_text = OLDABI_NAME ": op kind " + std::to_string(op->kind) + " is unsupported";
  return VNN_STATUS_UNSUPPORTED;
}
const char* last_error() { return last_error_text.c_str(); }

// Filled in but beyond struct_size: a core that calls them read too far.
vnn_status poisoned_query(int32_t, void*) {
  last_error_text = "oldabi: event_query lies beyond struct_size and must not be called";
  return VNN_STATUS_INTERNAL;
}
vnn_status poisoned_wait(int32_t, void*, void*) {
  last_error_text = "oldabi: queue_wait_event lies beyond struct_size and must not be called";
  return VNN_STATUS_INTERNAL;
}

const vnn_backend table = {
    .abi_version = VNN_BACKEND_ABI_VERSION,
    .reserved = 0,
    // The table as an older plugin built it: everything up to range_pop.
    .struct_size = offsetof(vnn_backend, range_pop) + sizeof(void (*)(void)),
    .name = OLDABI_NAME,
    .description = "stream-fallback test backend",
    .priority = 0,
    .reserved2 = 0,
    .probe = probe,
    .device_info = device_info,
    .init_device = ok_device,
    .alloc = alloc,
    .free = release,
    .host_alloc = alloc,
    .host_free = release,
    .copy_to_device = to_device,
    .copy_to_host = to_host,
    .copy_on_device = on_device,
    .queue_create = OLDABI_ENTRY(queue_create),
    .queue_destroy = OLDABI_ENTRY(queue_destroy),
    .queue_synchronize = queue_sync,
    .event_create = OLDABI_ENTRY(event_create),
    .event_destroy = OLDABI_ENTRY(event_destroy),
    .event_record = OLDABI_ENTRY(event_record),
    .event_synchronize = OLDABI_ENTRY(event_sync),
    .event_elapsed = OLDABI_ENTRY(event_elapsed),
    .run = run,
    .last_error = last_error,
    .last_path = nullptr,
    .range_push = nullptr,
    .range_pop = nullptr,
    .event_query = poisoned_query,
    .queue_wait_event = poisoned_wait,
    // Beyond the struct_size this plugin reports: never read.
    .comm_unique_id = nullptr,
    .comm_create = nullptr,
    .comm_destroy = nullptr,
    .comm_allreduce = nullptr,
    .comm_broadcast = nullptr,
    .comm_allgather = nullptr,
    .comm_reduce_scatter = nullptr,
    .copy_peer = nullptr,
    .set_core_allocator = nullptr,
};

}  // namespace

extern "C" VNN_BACKEND_EXPORT const vnn_backend* vnn_backend_entry(uint32_t) { return &table; }
extern "C" VNN_BACKEND_EXPORT int vnn_oldabi_sync_count() { return sync_count.load(); }
