#include "launch.hpp"

#include <algorithm>
#include <mutex>

#include "errors.hpp"

namespace vnn_opencl {

vnn_status launch(const Device& d, Kernel& k, cl_command_queue q, int64_t n, const std::string& what,
                  const Arg* args, size_t count) {
  if (n <= 0) return VNN_STATUS_OK;
  size_t local = std::min<size_t>({k.work_group_size, d.max_work_group_size, 256});
  size_t groups = static_cast<size_t>((n + static_cast<int64_t>(local) - 1) / static_cast<int64_t>(local));
  size_t global = std::min<size_t>(groups, 4096) * local;
  // A cl_kernel's arguments are shared state: set and enqueue under its lock.
  std::lock_guard<std::mutex> lock(k.mutex);
  for (cl_uint i = 0; i < count; ++i) {
    cl_int err = clSetKernelArg(k.kernel, i, args[i].size, args[i].ptr);
    if (err != CL_SUCCESS) return fail_cl(err, "%s: clSetKernelArg(%u) failed", what.c_str(), i);
  }
  cl_int err = clEnqueueNDRangeKernel(q, k.kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr);
  if (err != CL_SUCCESS) return fail_cl(err, "%s: clEnqueueNDRangeKernel failed", what.c_str());
  return VNN_STATUS_OK;
}

vnn_status enqueue_nd(Kernel& k, cl_command_queue q, cl_uint dims, const size_t* global, const size_t* local,
                      const std::string& what, std::initializer_list<Arg> args) {
  std::lock_guard<std::mutex> lock(k.mutex);
  cl_uint i = 0;
  for (const Arg& a : args) {
    cl_int err = clSetKernelArg(k.kernel, i, a.size, a.ptr);
    if (err != CL_SUCCESS) return fail_cl(err, "%s: clSetKernelArg(%u) failed", what.c_str(), i);
    ++i;
  }
  cl_int err = clEnqueueNDRangeKernel(q, k.kernel, dims, nullptr, global, local, 0, nullptr, nullptr);
  if (err != CL_SUCCESS) return fail_cl(err, "%s: clEnqueueNDRangeKernel failed", what.c_str());
  return VNN_STATUS_OK;
}

}  // namespace vnn_opencl
