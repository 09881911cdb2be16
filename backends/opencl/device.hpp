// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Device discovery (probe, device_info) and per-device runtime state.
#ifndef VNN_OPENCL_DEVICE_HPP
#define VNN_OPENCL_DEVICE_HPP

#include <CL/cl.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "vnn/backend_abi.h"

namespace vnn_opencl {

struct Device {
  // Filled by probe from clGetDeviceInfo only (no context exists yet).
  int32_t index = 0;
  std::string label;  // "opencl:N", used in every error message
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  cl_device_type cl_type = 0;
  std::string name, vendor, driver_version, platform_name, opencl_version;
  std::string c_version, extensions;
  cl_uint compute_units = 0;
  cl_ulong global_mem = 0, max_alloc = 0, local_mem = 0;
  size_t max_work_group_size = 1;
  bool available = true, compiler_available = true;
  bool fp64 = false, fp16 = false;
  bool correctly_rounded_sqrt = false;  // CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT
  // Limits the tuned kernels check before choosing a work-group shape.
  size_t max_item_sizes[3] = {1, 1, 1};  // CL_DEVICE_MAX_WORK_ITEM_SIZES
  bool images = false;                   // CL_DEVICE_IMAGE_SUPPORT
  bool local_mem_dedicated = false;      // CL_DEVICE_LOCAL_MEM_TYPE is CL_LOCAL
  cl_uint vector_width_float = 1;        // CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT
  // 1-D kernels written with common.cl's VNN_ITEMS take one element per
  // work item over a grid covering n: not on GPUs (they keep a capped
  // grid-stride loop), and VNN_OPENCL_GRID_STRIDE=1 gives the GPU form here.
  bool one_per_item = false;

  // Created by init_device, under init_mutex, then read without locking.
  std::mutex init_mutex;
  std::atomic<bool> ready{false};
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;  // default in-order queue, profiling on
  // Maps and unmaps pinned host blocks (host_alloc / host_free): on the
  // default queue a blocking map would first wait for all queued work.
  cl_command_queue host_queue = nullptr;

  // The path the latest MATMUL took: 0 none yet, 1 CLBlast, 2 vnn's tiled
  // GEMM (gemm.cl), 3 the simple kernel (matmul.cl), 4 vnn's long-k GEMM, 5 its wide-n GEMM.
  std::atomic<int> last_gemm{0};

  bool has_extension(const char* ext) const;
};

vnn_status probe(int32_t* count);
vnn_status device_info(int32_t device, vnn_device_info* info);
vnn_status init_device(int32_t device);

// Registers the exit drain (every ready device's queues finished) once
// more, so that it runs before every destructor registered up to now
// (launch.cpp calls it after a kernel's first launch has finished).
void register_exit_drain();

// The device with that index, initialised on first use (so that a core
// which skips init_device still works); on failure last_error is set.
vnn_status ready_device(int32_t device, Device** out);

// The queue a call should use: q itself, or the device default for NULL.
inline cl_command_queue queue_or_default(const Device& d, void* q) {
  return q ? static_cast<cl_command_queue>(q) : d.queue;
}

}  // namespace vnn_opencl

#endif
