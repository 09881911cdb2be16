// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// GradScaler's inf/NaN check is one kernel launch per parameter group and
// device (issue 14), counted from outside the plugins:
//  - cpu: a Kokkos Tools library (tests/profiler/kokkos_tool.c, loaded
//    through KOKKOS_TOOLS_LIBS) logs every parallel dispatch by name;
//  - opencl: this program defines clEnqueueNDRangeKernel, which the
//    dlopen'ed plugin binds to (the executable's exported symbols come first
//    in the lookup), counts each launch by kernel name and forwards it to
//    the ICD loader's.
// Two groups of gradients of several sizes (some over one chunk) and every
// floating dtype must give two launches, unscaled exactly, a clean step,
// and with an inf in the second group a skipped step and a halved scale.
// A plain main, not Catch: the environment has to be set before the CPU
// plugin starts Kokkos, once per process.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "vnn/vnn.h"

#ifdef VNN_TEST_HAVE_OPENCL
#include <CL/cl.h>

namespace {
std::mutex launch_mutex;
std::map<std::string, int> launches;  // kernel name -> clEnqueueNDRangeKernel calls
void* opencl_symbol(const char* name) {
  static void* lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  return lib ? dlsym(lib, name) : nullptr;
}
}  // namespace

extern "C" cl_int clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dims, const size_t* offset,
                                         const size_t* global, const size_t* local, cl_uint n_events,
                                         const cl_event* wait, cl_event* event) {
  using Enqueue = cl_int (*)(cl_command_queue, cl_kernel, cl_uint, const size_t*, const size_t*, const size_t*,
                             cl_uint, const cl_event*, cl_event*);
  using Info = cl_int (*)(cl_kernel, cl_kernel_info, size_t, void*, size_t*);
  static const auto real = reinterpret_cast<Enqueue>(opencl_symbol("clEnqueueNDRangeKernel"));
  static const auto info = reinterpret_cast<Info>(opencl_symbol("clGetKernelInfo"));
  if (!real || !info) return CL_INVALID_OPERATION;
  char name[256] = {};
  if (info(k, CL_KERNEL_FUNCTION_NAME, sizeof name - 1, name, nullptr) == CL_SUCCESS) {
    std::lock_guard<std::mutex> lock(launch_mutex);
    ++launches[name];
  }
  return real(q, k, dims, offset, global, local, n_events, wait, event);
}
#endif

using namespace vnn;

namespace {

int failures = 0;
void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::cerr << "FAILED: " << what << "\n";
    ++failures;
  }
}

// Dispatches named `name` in the Kokkos tool's log so far.
int tool_count(const std::string& file, const std::string& name) {
  std::ifstream f(file);
  std::string line;
  int n = 0;
  while (std::getline(f, line))
    if (line == "parallel_for " + name) ++n;
  return n;
}

int unscale_launches(const std::string& plugin, const std::string& tool_out) {
  if (plugin == "openmp") return tool_count(tool_out, "vnn::amp_unscale");
#ifdef VNN_TEST_HAVE_OPENCL
  std::lock_guard<std::mutex> lock(launch_mutex);
  return launches["vnn_amp_unscale_fused"];
#else
  return -1;
#endif
}

// Whether dev computes in float64 (OpenCL devices without cl_khr_fp64 do not).
bool has_float64(const Device& dev) {
  try {
    return mul(ones({1}, TensorOptions(dev).with(kFloat64)), 2.0).item<double>() == 2.0;
  } catch (const Unsupported&) {
    return false;
  }
}

void run(const Device& dev, const std::string& plugin, const std::string& tool_out) {
  const std::string where = dev.str() + ": ";
  // Group 0: five gradients, two of them over one 16384-element chunk;
  // group 1: three more. Every floating dtype the device has, mixed.
  const bool fp64 = has_float64(dev);
  const std::vector<DType> types = {kFloat32, kBFloat16, kFloat16, fp64 ? kFloat64 : kFloat32};
  const std::vector<int64_t> sizes0 = {3, 40000, 17, 70001, 1}, sizes1 = {5, 20000, 2};
  std::vector<Tensor> g0, g1;
  auto make = [&](const std::vector<int64_t>& sizes, std::vector<Tensor>& out, size_t shift) {
    for (size_t i = 0; i < sizes.size(); ++i)
      out.push_back(ones({sizes[i]}, TensorOptions(dev).with(types[(i + shift) % types.size()])).requires_grad_());
  };
  make(sizes0, g0, 0);
  make(sizes1, g1, 1);
  optim::SGD sgd(std::vector<optim::ParamGroup>{optim::ParamGroup(g0), optim::ParamGroup(g1)},
                 optim::SGDOptions(0.5));
  amp::GradScalerOptions o;
  o.init_scale = 1024.0;  // a power of two: scaling and unscaling are exact in every dtype
  amp::GradScaler scaler(o);
  // loss = sum of 0.25 * p over all parameters: every gradient is 0.25.
  auto step = [&](bool poison) {
    sgd.zero_grad();
    Tensor loss = zeros({}, TensorOptions(dev));
    for (auto* group : {&g0, &g1})
      for (const Tensor& p : *group) loss = add(loss, mul(sum(p.to(kFloat32)), 0.25));
    scaler.scale(loss).backward();
    if (poison) {
      autograd::NoGradGuard no_grad;
      g1[1].grad().fill_(std::numeric_limits<double>::infinity());
    }
    const int before = unscale_launches(plugin, tool_out);
    scaler.unscale_(sgd);
    synchronize(dev);
    const int launched = unscale_launches(plugin, tool_out) - before;
    expect(launched == 2, where + "one unscale launch per parameter group (2), saw " + std::to_string(launched));
    const bool stepped = scaler.step(sgd);
    scaler.update();
    return stepped;
  };
  expect(step(false), where + "a finite step is taken");
  for (auto* group : {&g0, &g1})
    for (const Tensor& p : *group) {
      const std::string what = where + name(p.dtype()) + " [" + std::to_string(p.numel()) + "]";
      expect(max(abs(sub(p.grad().to(kFloat32), 0.25))).item<double>() == 0, what + ": gradient unscaled to 0.25");
      expect(max(abs(sub(p.to(kFloat32), 0.875))).item<double>() == 0, what + ": stepped to 1 - 0.5 * 0.25");
    }
  expect(scaler.get_scale() == 1024.0, where + "the scale stays after a clean step");
  expect(!step(true), where + "an inf gradient skips the step");
  for (auto* group : {&g0, &g1})
    for (const Tensor& p : *group)
      expect(max(abs(sub(p.to(kFloat32), 0.875))).item<double>() == 0, where + "parameters unchanged after inf");
  expect(scaler.get_scale() == 512.0, where + "the scale is halved");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " <kokkos tool library> <tool output file>\n";
    return 2;
  }
  setenv("KOKKOS_TOOLS_LIBS", argv[1], 1);
  unsetenv("KOKKOS_PROFILE_LIBRARY");
  setenv("VNN_TEST_TOOL_OUT", argv[2], 1);
  std::remove(argv[2]);
  try {
    int ran = 0;
    for (const auto& d : devices()) {
#ifdef VNN_TEST_HAVE_OPENCL
      const bool opencl = d.plugin == "opencl";
#else
      const bool opencl = false;
#endif
      if (!(d.plugin == "openmp" || opencl) || d.device.index() != 0) continue;
      run(d.device, d.plugin, argv[2]);
      std::cout << d.device << ": unscale checked\n";
      ++ran;
    }
    expect(ran > 0, "no cpu:0 or opencl:0 device to check");
  } catch (const Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return failures ? 1 : 0;
}
