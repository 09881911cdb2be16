// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Which NVIDIA devices this build of the CUDA plugin can run on. Header-only
// and free of CUDA types, so the rule is unit-tested on machines without a
// GPU (tests/backends/cuda_arch.cpp).
//
// Kokkos 3.x launches a probe kernel at initialisation and aborts the
// process when the major compute capability the kernel was compiled for
// differs from the device's, or its minor is higher: running sm_80 PTX
// through the driver's JIT on an sm_90 device is fine for CUDA but fatal for
// Kokkos 3.x. So there a device is usable only where the plugin carries SASS
// of the device's major version with a minor at or below the device's.
// Kokkos 4.x aborts only when the code is for a newer capability than the
// device's (Kokkos_Cuda_Instance.cpp: a lower one is a warning), so its PTX
// also runs, through the JIT, on any later device. Anything else is reported
// as skipped, with the reason, before Kokkos starts.
#pragma once
#include <string>
#include <vector>

namespace vnn::cuda_arch {

struct Check {
  bool usable = false;
  std::string reason;  // set when !usable
};

// "sm_80, sm_90"
inline std::string describe_sass(const std::vector<int>& sass) {
  std::string have;
  for (int s : sass) have += (have.empty() ? "sm_" : ", sm_") + std::to_string(s);
  return have;
}

// sass: the sm_XY numbers (80, 90, ...) compiled into the plugin. The
// Kokkos 3.x rule (SASS of the device's major version).
inline Check check(const std::vector<int>& sass, int major, int minor) {
  Check c;
  for (int s : sass)
    if (s / 10 == major && s % 10 <= minor) c.usable = true;
  if (c.usable) return c;
  c.reason = "device is sm_" + std::to_string(major) + std::to_string(minor) + "; this build has code for " +
             describe_sass(sass) +
             " and Kokkos needs the device's major version (" + std::to_string(major) +
             ".x); rebuild vnn with -DVNN_KOKKOS_CUDA_EXTRA_SASS=" + std::to_string(major) + std::to_string(minor);
  return c;
}

// The same with the Kokkos version's rule: from Kokkos 4.0 on, PTX for
// compute_<ptx> also runs on a device of capability >= ptx (JIT).
inline Check check(const std::vector<int>& sass, int ptx, int major, int minor, int kokkos_version) {
  Check c = check(sass, major, minor);
  if (c.usable || kokkos_version < 40000) return c;
  if (ptx > 0 && ptx <= major * 10 + minor) return Check{true, ""};
  c.reason = "device is sm_" + std::to_string(major) + std::to_string(minor) + "; this build has code for " +
             describe_sass(sass) + " and compute_" + std::to_string(ptx) +
             " PTX, all for a newer GPU; rebuild the Kokkos it uses with the device's Kokkos_ARCH_<name> "
             "(e.g. Kokkos_ARCH_AMPERE80 for sm_80)";
  return c;
}

// "sm_80 sm_90 SASS, compute_80 PTX"
inline std::string describe(const std::vector<int>& sass, int ptx) {
  std::string s;
  for (int v : sass) s += "sm_" + std::to_string(v) + " ";
  return s + "SASS, compute_" + std::to_string(ptx) + " PTX";
}

}  // namespace vnn::cuda_arch
