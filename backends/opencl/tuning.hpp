// Per-device auto-tuning (as CLBlast and ArrayFire do): a short timing run
// of the GEMM variants at first use, or on request (VNN_OPENCL_TUNE=1,
// `vnn-devices --tune`), stored beside the program cache in a text file
// keyed by device and driver. With the file present the choice is read,
// not measured: the same cache gives the same choice. A corrupt file is
// ignored with a warning on stderr and rewritten by a fresh run.
#ifndef VNN_OPENCL_TUNING_HPP
#define VNN_OPENCL_TUNING_HPP

#include <map>
#include <string>

#include "device.hpp"
#include "ops_gemm.hpp"

namespace vnn_opencl {

struct Tuning {
  int gemm_variant = -1;  // best vnn_gemm variant at the square size; -1: none fits (simple kernel)
  double gflops[kNumGemmVariants] = {};  // each variant's rate there (0: does not fit)
  // Per GemmShape: vnn's GEMM beat CLBlast there (always true without CLBlast).
  bool vnn_for[3] = {true, true, true};
  // Per float32 problem shape "m n k ta tb" met so far: vnn's GEMM beat
  // CLBlast on it (measured at its first use, then kept in the cache file).
  std::map<std::string, bool> shapes;
  std::string source;  // "cache" or "tuned"
  std::string path;    // the cache file ("" without a cache directory)
  std::string notes;   // the class timings, kept in the file for people
};

// The device's tuning, tuned (or read from the cache) on the first call,
// tuned afresh and rewritten when VNN_OPENCL_TUNE=1; thread safe. Tuning
// failures fall back to defaults (variant 0 if it fits), said in source.
Tuning device_tuning(Device& d);

// Whether vnn's GEMM beats CLBlast on this float32 single-batch shape (ta,
// tb: transposed operand views): from the cache, else timed once on scratch
// buffers (after draining the device queue) and stored; shapes too large to
// time cheaply get their class's answer.
bool vnn_gemm_faster(Device& d, int64_t m, int64_t n, int64_t k, bool ta, bool tb);

// What MATMUL reads on every call, without copying the shape table.
struct TunedRates {
  int gemm_variant = -1;
  double gflops[kNumGemmVariants] = {};
  bool vnn_for[3] = {true, true, true};
};
TunedRates tuned_rates(Device& d);

// device_info lines: gemm_tuning=..., gemm_variant=..., ...; "pending"
// before the first MATMUL.
std::string tuning_report(const Device& d);

// The MATMUL path forced on this thread (the tuner times each path through
// run()): 0 none, 1 CLBlast, 2 the simple kernel, 3 vnn_gemm `variant`.
struct GemmForce {
  int path = 0;
  int variant = -1;
};
GemmForce& gemm_force();

}  // namespace vnn_opencl

#endif
