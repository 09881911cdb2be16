// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "launch.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "errors.hpp"
#include "tuning.hpp"

namespace vnn_opencl {
namespace {

// Sets the arguments whose bytes differ from the ones this kernel holds
// already (the caller holds k.mutex): repeated launches of one op shape set
// little more than their buffers. Buffers are always set again: a released
// cl_mem's handle value can come back for a new buffer, and some drivers
// resolve the buffer when the argument is set.
vnn_status set_args(Kernel& k, const Arg* args, size_t count, const std::string& what) {
  if (k.last_args.size() < count) k.last_args.resize(count);
  for (cl_uint i = 0; i < count; ++i) {
    std::string& last = k.last_args[i];
    const char* bytes = static_cast<const char*>(args[i].ptr);
    const bool always = args[i].mem || !args[i].ptr;
    if (!always && last.size() == args[i].size && std::memcmp(last.data(), bytes, args[i].size) == 0) continue;
    cl_int err = clSetKernelArg(k.kernel, i, args[i].size, args[i].ptr);
    if (err != CL_SUCCESS) {
      last.clear();
      return fail_cl(err, what, ": clSetKernelArg(", i, ") failed");
    }
    if (always) last.clear();
    else last.assign(bytes, args[i].size);
  }
  return VNN_STATUS_OK;
}

// The first launch of a kernel waits for it: PoCL compiles a kernel's
// work-group function inside LLVM at its first launch, on its own thread,
// and LLVM statics first used there register their destructors after
// device.cpp's exit drain, so they would be torn down before that drain
// waits for a compile still running at exit (test_ops_conv[opencl] crashed
// at every cold-cache exit that way). Waiting here, then moving the drain
// behind every destructor registered so far, keeps the drain first at
// exit. Once per kernel object: a few milliseconds beside its build.
vnn_status after_enqueue(Kernel& k, cl_command_queue q, const std::string& what) {
  if (k.launched) return VNN_STATUS_OK;
  k.launched = true;
  ColdStats& stats = cold_stats();
  ColdTimer timer(stats.first_launches, stats.first_launch_ns);
  cl_int err = clFinish(q);
  log_line("first launch of " + k.name + " (" + std::to_string(timer.seconds()) + " s)");
  if (err != CL_SUCCESS) return fail_cl(err, what, ": clFinish after the kernel's first launch failed");
  register_exit_drain();
  return VNN_STATUS_OK;
}

// PoCL's grid_width_specialization_limit (USHRT_MAX) rounded up.
constexpr size_t kLargeGrid = 65536;

}  // namespace

size_t pow2_divisor_at_most(uint64_t n, size_t most) {
  size_t v = 1;
  while (n != 0 && v * 2 <= most && n % (v * 2) == 0) v *= 2;
  return v;
}

const size_t* driver_local(const Device& d, cl_uint dims, const size_t* global, size_t most, size_t* local) {
  if (d.cl_type & CL_DEVICE_TYPE_GPU) return nullptr;
  for (cl_uint i = 0; i < dims; ++i) {
    local[i] = pow2_divisor_at_most(global[i], std::min(most, d.max_item_sizes[i]));
    most /= local[i];
  }
  return local;
}

size_t local_filling(const Device& d, size_t items, size_t most) {
  const size_t want = 4 * size_t(std::max<cl_uint>(d.compute_units, 1));
  while (most > 1 && items / most < want) most /= 2;
  return most;
}

vnn_status launch(const Device& d, Kernel& k, cl_command_queue q, int64_t n, const std::string& what,
                  const Arg* args, size_t count) {
  if (n <= 0) return VNN_STATUS_OK;
  // The device's tuned work-group size (tuning.cpp), 256 before it is known.
  const size_t tuned = launch_local_for(d.index);
  size_t local = std::min<size_t>({k.work_group_size, d.max_work_group_size, tuned ? tuned : 256});
  // On GPUs no wider than n needs (to a power of two, at least 16): idle
  // items hold lanes there. CPU drivers compile a kernel once per group
  // size (PoCL: 0.1-0.3 s each, at its first launch with that size), and a
  // model's small tensors would take four more sizes per kernel, while the
  // idle items of one group cost a masked compare each (a kernel looping
  // over a row runs that loop masked: ~1 us more for a one-row sum; a
  // 16-item group for n <= 16 cost 4 kernel binaries more in the main
  // example's cold run, 8 in the nanoGPT's).
  if (d.cl_type & CL_DEVICE_TYPE_GPU)
    while (local > 16 && static_cast<int64_t>(local / 2) >= n) local /= 2;
  size_t groups = static_cast<size_t>((n + static_cast<int64_t>(local) - 1) / static_cast<int64_t>(local));
  // Kernels built with VNN_ONE_PER_ITEM (get_kernel) handle one element per
  // item and need a grid covering n; grid-stride loops run on at most 4096
  // groups.
  size_t global = (k.covering_grid ? groups : std::min<size_t>(groups, 4096)) * local;
  // A cl_kernel's arguments are shared state: set and enqueue under its lock.
  std::lock_guard<std::mutex> lock(k.mutex);
  // PoCL compiles a kernel's group function apart for grids under 65535
  // items ("smallgrid") and for larger ones, and runs smaller grids on the
  // large one it holds, not the other way round: a CPU driver's first
  // launch covers 65536 items (every 1-D kernel tests i < n), so a kernel
  // first run on a bias and then on weights compiles once (five kernels of
  // the main example's cold run compiled twice). Once per kernel: ~0.1 ms.
  if (!k.launched && !(d.cl_type & CL_DEVICE_TYPE_GPU) && global < kLargeGrid)
    global = (kLargeGrid + local - 1) / local * local;
  if (vnn_status st = set_args(k, args, count, what)) return st;
  cl_int err = clEnqueueNDRangeKernel(q, k.kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr);
  if (err != CL_SUCCESS) return fail_cl(err, what, ": clEnqueueNDRangeKernel failed");
  return after_enqueue(k, q, what);
}

vnn_status enqueue_nd(Kernel& k, cl_command_queue q, cl_uint dims, const size_t* global, const size_t* local,
                      const std::string& what, const Arg* args, size_t count) {
  std::lock_guard<std::mutex> lock(k.mutex);
  if (vnn_status st = set_args(k, args, count, what)) return st;
  cl_int err = clEnqueueNDRangeKernel(q, k.kernel, dims, nullptr, global, local, 0, nullptr, nullptr);
  if (err != CL_SUCCESS) return fail_cl(err, what, ": clEnqueueNDRangeKernel failed");
  return after_enqueue(k, q, what);
}

}  // namespace vnn_opencl
