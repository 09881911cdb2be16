// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Entry point of libvnn-backend-opencl.so: the vnn_backend table. The work
// is in device.cpp (discovery), memory.cpp (memory, copies, queues,
// events), ops.cpp (run) and program_cache.cpp (kernel builds).
#include "vnn/backend_abi.h"

#include "device.hpp"
#include "errors.hpp"
#include "memory.hpp"
#include "ops.hpp"
#include "ops_conv_direct.hpp"

namespace {

// The MATMUL path of the latest run() on this thread, for the profiler
// ("matmul[clblast]" / "matmul[tiled]"). ops.cpp records the choice in the
// device's last_gemm; reading it right after run() on the same thread gives
// this op's choice (a concurrent matmul on another thread could interleave,
// which only mislabels that one profiled op).
thread_local const char* t_last_path = nullptr;

vnn_status run_and_note_path(int32_t device, const vnn_op* op) {
  t_last_path = nullptr;
  vnn_status s = vnn_opencl::run(device, op);
  vnn_opencl::Device* d = nullptr;
  if (s == VNN_STATUS_OK && op->kind == VNN_OP_MATMUL && vnn_opencl::ready_device(device, &d) == VNN_STATUS_OK) {
    int g = d->last_gemm.load(std::memory_order_relaxed);
    t_last_path = g == 1 ? "clblast" : g == 2 ? "tiled" : g == 3 ? "simple" : g == 4 ? "longk" : g == 5 ? "widen" : nullptr;
  }
  if (s == VNN_STATUS_OK && vnn_opencl::is_conv_whole_kind(op->kind)) t_last_path = vnn_opencl::conv_last_path();
  return s;
}

const char* last_path(int32_t) { return t_last_path; }

const vnn_backend kTable = {
    .abi_version = VNN_BACKEND_ABI_VERSION,
    .reserved = 0,
    .struct_size = sizeof(vnn_backend),
    .name = "opencl",
    .description = "OpenCL 1.2 (ICD loader), run-time compiled kernels",
    // Below the vendor-native backends (CUDA, HIP) on the same GPU, above
    // nothing: the core uses priority only among equal device types.
    .priority = 10,
    .reserved2 = 0,
    .probe = vnn_opencl::probe,
    .device_info = vnn_opencl::device_info,
    .init_device = vnn_opencl::init_device,
    .alloc = vnn_opencl::mem_alloc,
    .free = vnn_opencl::mem_free,
    .host_alloc = vnn_opencl::host_alloc,
    .host_free = vnn_opencl::host_free,
    .copy_to_device = vnn_opencl::copy_to_device,
    .copy_to_host = vnn_opencl::copy_to_host,
    .copy_on_device = vnn_opencl::copy_on_device,
    .queue_create = vnn_opencl::queue_create,
    .queue_destroy = vnn_opencl::queue_destroy,
    .queue_synchronize = vnn_opencl::queue_synchronize,
    .event_create = vnn_opencl::event_create,
    .event_destroy = vnn_opencl::event_destroy,
    .event_record = vnn_opencl::event_record,
    .event_synchronize = vnn_opencl::event_synchronize,
    .event_elapsed = vnn_opencl::event_elapsed,
    .run = run_and_note_path,
    .last_error = vnn_opencl::last_error,
    .last_path = last_path,
    .range_push = nullptr,  // no vendor range tool for OpenCL
    .range_pop = nullptr,
    .event_query = vnn_opencl::event_query,
    .queue_wait_event = vnn_opencl::queue_wait_event,
    // No collectives library for OpenCL: the core stages through host memory.
    .comm_unique_id = nullptr,
    .comm_create = nullptr,
    .comm_destroy = nullptr,
    .comm_allreduce = nullptr,
    .comm_broadcast = nullptr,
    .comm_allgather = nullptr,
    .comm_reduce_scatter = nullptr,
    .copy_peer = nullptr,  // the core stages copies between two OpenCL devices
    .set_core_allocator = nullptr,  // no host library that takes temporaries
};

}  // namespace

// The table is returned whatever version the host asks for: its
// abi_version and struct_size tell the core whether it can use it.
extern "C" VNN_BACKEND_EXPORT const vnn_backend* vnn_backend_entry(uint32_t host_abi_version) {
  (void)host_abi_version;
  return &kTable;
}
