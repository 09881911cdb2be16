// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the host CPU is, read from /proc and sysconf (no runtime start-up).
#pragma once
#include <cstdint>
#include <string>

namespace vnn::openmp_backend {

struct CpuInfo {
  std::string model, vendor, isa;  // isa: the widest SIMD level ("avx512f", "avx2", ...)
  int logical_cores = 0;
  uint64_t total_memory = 0, available_memory = 0;
};

CpuInfo read_cpu_info();

}  // namespace vnn::openmp_backend
