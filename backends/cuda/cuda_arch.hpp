// Which NVIDIA devices this build of the CUDA plugin can run on. Header-only
// and free of CUDA types, so the rule is unit-tested on machines without a
// GPU (tests/backends/cuda_arch.cpp).
//
// Kokkos (3.4 here) launches a probe kernel at initialisation and aborts the
// process when the major compute capability the kernel was compiled for
// differs from the device's, or its minor is higher: running sm_80 PTX
// through the driver's JIT on an sm_90 device is fine for CUDA but fatal for
// Kokkos. So a device is usable only where the plugin carries SASS of the
// device's major version with a minor at or below the device's; anything
// else is reported as skipped, with the reason, before Kokkos starts.
#pragma once
#include <string>
#include <vector>

namespace vnn::cuda_arch {

struct Check {
  bool usable = false;
  std::string reason;  // set when !usable
};

// sass: the sm_XY numbers (80, 90, ...) compiled into the plugin.
inline Check check(const std::vector<int>& sass, int major, int minor) {
  Check c;
  for (int s : sass)
    if (s / 10 == major && s % 10 <= minor) c.usable = true;
  if (c.usable) return c;
  std::string have;
  for (int s : sass) have += (have.empty() ? "sm_" : ", sm_") + std::to_string(s);
  c.reason = "device is sm_" + std::to_string(major) + std::to_string(minor) + "; this build has code for " + have +
             " and Kokkos needs the device's major version (" + std::to_string(major) +
             ".x); rebuild vnn with -DVNN_KOKKOS_CUDA_EXTRA_SASS=" + std::to_string(major) + std::to_string(minor);
  return c;
}

// "sm_80 sm_90 SASS, compute_80 PTX"
inline std::string describe(const std::vector<int>& sass, int ptx) {
  std::string s;
  for (int v : sass) s += "sm_" + std::to_string(v) + " ";
  return s + "SASS, compute_" + std::to_string(ptx) + " PTX";
}

}  // namespace vnn::cuda_arch
