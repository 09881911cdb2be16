// Per-device auto-tuning (as CLBlast and ArrayFire do): a short timing run
// of the GEMM variants at first use, or on request (VNN_OPENCL_TUNE=1,
// `vnn-devices --tune`), stored beside the program cache in a text file
// keyed by device and driver. With the file present the choice is read,
// not measured: the same cache gives the same choice. A corrupt file is
// ignored with a warning on stderr and rewritten by a fresh run.
#ifndef VNN_OPENCL_TUNING_HPP
#define VNN_OPENCL_TUNING_HPP

#include <string>

#include "device.hpp"
#include "ops_gemm.hpp"

namespace vnn_opencl {

struct Tuning {
  int gemm_variant = -1;  // best vnn_gemm variant; -1: none fits (simple kernel)
  // Per GemmShape: vnn's GEMM beat CLBlast there (always true without CLBlast).
  bool vnn_for[3] = {true, true, true};
  std::string source;  // "cache" or "tuned"
  std::string path;    // the cache file ("" without a cache directory)
};

// The device's tuning, tuned (or read from the cache) on the first call;
// thread safe. Tuning failures fall back to defaults (variant 0 if it
// fits), reported in the source text.
Tuning device_tuning(Device& d);

// Tunes again and rewrites the cache file (VNN_OPENCL_TUNE=1).
Tuning retune(Device& d);

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
