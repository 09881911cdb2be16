// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "openmp/cpu_info.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>

namespace vnn::openmp_backend {

namespace {
std::string value_after_colon(const std::string& line) {
  auto c = line.find(':');
  if (c == std::string::npos) return {};
  auto v = line.substr(c + 1);
  auto b = v.find_first_not_of(" \t");
  return b == std::string::npos ? std::string() : v.substr(b);
}
}  // namespace

CpuInfo read_cpu_info() {
  CpuInfo info;
  std::ifstream cpu("/proc/cpuinfo");
  std::string line, flags;
  while (std::getline(cpu, line)) {
    if (info.model.empty() && line.rfind("model name", 0) == 0) info.model = value_after_colon(line);
    if (info.vendor.empty() && line.rfind("vendor_id", 0) == 0) info.vendor = value_after_colon(line);
    if (flags.empty() && line.rfind("flags", 0) == 0) flags = " " + value_after_colon(line) + " ";
  }
  for (const char* isa : {"avx512f", "avx2", "avx", "sse4_2", "neon", "asimd"}) {
    if (flags.find(std::string(" ") + isa + " ") != std::string::npos) {
      info.isa = isa;
      break;
    }
  }
  if (info.model.empty()) info.model = "host CPU";
  if (info.vendor.empty()) info.vendor = "unknown";
  info.logical_cores = int(sysconf(_SC_NPROCESSORS_ONLN));
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) info.total_memory = uint64_t(pages) * uint64_t(page);
  std::ifstream mem("/proc/meminfo");
  while (std::getline(mem, line)) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream in(value_after_colon(line));
      uint64_t kib = 0;
      in >> kib;
      info.available_memory = kib * 1024;
    }
  }
  return info;
}

}  // namespace vnn::openmp_backend
