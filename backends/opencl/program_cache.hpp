// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Run-time compiled kernels, cached in memory and on disk.
#ifndef VNN_OPENCL_PROGRAM_CACHE_HPP
#define VNN_OPENCL_PROGRAM_CACHE_HPP

#include <CL/cl.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <mutex>
#include <string>
#include <vector>

#include "device.hpp"
#include "vnn/backend_abi.h"

namespace vnn_opencl {

// One compiled kernel. clSetKernelArg on a shared cl_kernel is not thread
// safe, so launches hold `mutex` from the first argument to the enqueue.
struct Kernel {
  cl_program program = nullptr;
  cl_kernel kernel = nullptr;
  size_t work_group_size = 1;  // CL_KERNEL_WORK_GROUP_SIZE on its device
  bool covering_grid = false;  // built with VNN_ONE_PER_ITEM: launch() covers n
  std::mutex mutex;
  std::vector<std::string> last_args;  // bytes of the arguments set last (under mutex)
  bool launched = false;                // enqueued at least once (under mutex); see launch.cpp
  std::string name;                     // "file.cl:kernel [options]", for VNN_OPENCL_LOG
};

// A per-thread cache in front of get_kernel for an op's hot path: `key`
// names the kernel (the op packs its dtypes, function and form into it), so
// a hit skips building the option strings (and sibling lists) and hashing
// them. Kernels live as long as the process: a cached pointer never
// dangles. 2^Bits slots, one kernel each.
template <int Bits>
class KernelSlots {
 public:
  Kernel* find(const Device& d, uint64_t key) {
    const Slot& s = slot(key);
    return s.k && s.d == &d && s.key == key ? s.k : nullptr;
  }
  void put(const Device& d, uint64_t key, Kernel* k) { slot(key) = Slot{&d, key, k}; }

 private:
  struct Slot {
    const Device* d = nullptr;
    uint64_t key = 0;
    Kernel* k = nullptr;
  };
  Slot& slot(uint64_t key) { return slots_[(key * 0x9E3779B97F4A7C15ull) >> (64 - Bits)]; }
  Slot slots_[size_t(1) << Bits];
};

// Writes "vnn-opencl: <s>" to stderr when VNN_OPENCL_LOG is set.
void log_line(const std::string& s);

// The kernel `kernel_name` of kernels/common.cl + kernels/<file>.cl built
// for device d with `options` (the -D defines of the op). Kernels live for
// the whole process. A failed build returns VNN_STATUS_DEVICE_ERROR with
// the device's build log in last_error.
vnn_status get_kernel(Device& d, const char* file, const char* kernel_name,
                      const std::string& options, Kernel** out);

// Sibling variants of one kernel file built as one program: `variants`
// holds each one's own -D defines ("-DBINARY_FN=2"), `index` the one
// wanted; get_kernel's options are shared by all. A driver's cost per
// program is mostly fixed (PoCL: ~0.3 s, two thirds of it parsing OpenCL's
// builtin header, whatever the program's size), a sibling adds ~0.01 s, and
// the variants an op family uses come together (add, mul and sub in one
// training step): one build serves them. Kernels still compile one by one
// at their first launch.
struct Siblings {
  std::vector<std::string> variants;
  size_t index = 0;
};
vnn_status get_kernel(Device& d, const char* file, const char* kernel_name, const std::string& options,
                      const Siblings& siblings, Kernel** out);

// The directory of the disk caches (VNN_OPENCL_CACHE_DIR, else
// $XDG_CACHE_HOME/vnn/opencl, else ~/.cache/vnn/opencl; empty: none).
std::filesystem::path cache_dir();

// 32 hex digits naming what was built or tuned for this device and driver
// (platform, name, driver and OpenCL version, then `extra`).
std::string device_hash(const Device& d, std::initializer_list<const std::string*> extra);

// What the first use of kernels cost this process (every device): programs
// built from source and loaded from the disk cache, kernels' first
// launches (PoCL compiles a kernel's work-group function there, into its
// own cache), tuning runs (the device's tuning, each GEMM shape class or
// conv2d / attention shape timed), each with its wall time in ns (a tuning
// run's includes the builds and launches it causes). VNN_OPENCL_STATS=1
// prints them at exit; device_info shows them.
struct ColdStats {
  std::atomic<int64_t> builds{0}, loads{0}, first_launches{0}, tunings{0};
  std::atomic<int64_t> build_ns{0}, load_ns{0}, first_launch_ns{0}, tuning_ns{0};
};
ColdStats& cold_stats();
// "program_builds=N (S s), program_loads=..., first_launches=..., tuning_runs=..."
std::string cold_stats_text();

// Adds the wall time of its scope to one ColdStats pair (count += 1).
class ColdTimer {
 public:
  ColdTimer(std::atomic<int64_t>& count, std::atomic<int64_t>& ns);
  ~ColdTimer();
  ColdTimer(const ColdTimer&) = delete;
  ColdTimer& operator=(const ColdTimer&) = delete;
  double seconds() const;  // so far

 private:
  std::atomic<int64_t>& ns_;
  int64_t start_;
};

// Whether VNN_OPENCL_VERBOSE=1: build logs of successful builds go to
// stderr too (a failed build's log is always in the error).
bool verbose();

// FNV-1a 64 of n bytes (the cache files' checksum).
uint64_t fnv64(const void* data, size_t n);

// Writes bytes to path atomically (a temporary file renamed over it);
// false when it could not.
bool write_atomic(const std::filesystem::path& path, const std::string& bytes);

}  // namespace vnn_opencl

#endif
