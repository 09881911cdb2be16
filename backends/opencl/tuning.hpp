// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Per-device auto-tuning (as CLBlast and ArrayFire do), stored beside the
// program cache in a text file keyed by device and driver. With the file
// present a choice is read, not measured: the same cache gives the same
// choice. A corrupt file is ignored with a warning on stderr and rewritten.
// First use measures nothing (a cold start would otherwise wait minutes on
// PoCL for every candidate's build): the device type's defaults run, and a
// GEMM bucket or a per-shape choice is timed once the work it ran on its
// default reaches VNN_OPENCL_TUNE_AFTER GFLOP (64; 0: at first use, with
// the device's own timing run first). The device's timing run (the GEMM
// variants, the 1-D work-group size) happens on request: VNN_OPENCL_TUNE=1,
// `vnn-devices --tune` or `--warmup`.
#ifndef VNN_OPENCL_TUNING_HPP
#define VNN_OPENCL_TUNING_HPP

#include <functional>
#include <map>
#include <string>

#include "device.hpp"
#include "ops_gemm.hpp"

namespace vnn_opencl {

struct Tuning {
  int gemm_variant = -1;  // best vnn_gemm variant at the square size; -1: none fits (simple kernel)
  double gflops[kNumGemmVariants] = {};  // each variant's rate there (0: does not fit)
  // Per GemmShape: the fastest GemmPath on its representative shape
  // (CLBlast, vnn's tiled GEMM, or for long_k vnn's long-k kernel).
  int class_path[3] = {kGemmTiled, kGemmTiled, kGemmTiled};
  // Per float32 problem shape "m n k ta tb" met so far: its fastest
  // GemmPath (measured at its first use, then kept in the cache file).
  std::map<std::string, int> shapes;
  // Work-group size of the 1-D grid-stride kernels (launch.hpp: elementwise,
  // copy, fill, im2col / col2im, pooling, ...): the fastest on a 1M-element
  // add; 0 where it was not measured (launch()'s default then).
  size_t launch_local = 0;
  // Per-shape choices other op files time themselves (tuned_choice: the
  // conv2d kernels), by key: the index of the fastest candidate.
  std::map<std::string, int> choices;
  std::string source;  // "cache" or "tuned"
  std::string path;    // the cache file ("" without a cache directory)
  std::string notes;   // the class timings, kept in the file for people
};

// The device's tuning, read from the cache on the first call (else the
// defaults, or with VNN_OPENCL_TUNE_AFTER=0 a timing run), tuned afresh and
// rewritten when VNN_OPENCL_TUNE=1; thread safe. Tuning failures fall back
// to defaults (variant 0 if it fits), said in source.
Tuning device_tuning(Device& d);

// The fastest GemmPath for this float32 single-batch shape (ta, tb:
// transposed operand views) among CLBlast (when built with it), vnn's tiled
// GEMM and, for long_k shapes, the long-k kernel, kept per bucket (each of
// m, n, k to the power of two at or below it): from the cache, else the
// class's answer until the bucket's work is due, then timed once on this
// shape on scratch buffers (after draining the device queue) and stored;
// shapes too large to time cheaply get their class's answer.
int shape_gemm_path(Device& d, int64_t m, int64_t n, int64_t k, bool ta, bool tb);

// A per-shape choice an op file times itself (conv2d: its direct kernels
// against im2col + GEMM): the cached index for key (no spaces), else -1
// (the caller's default) until the key's calls have run `work` floating-
// point operations each up to VNN_OPENCL_TUNE_AFTER, then the candidate
// 0 <= i < count with the least time(i) seconds (negative: failed), stored
// in the tuning file; -1 when every candidate failed (not stored). time()
// runs without the tuning lock held (it may run MATMULs, which take it); a
// concurrent first use may time the same key twice, and the first answer
// stored is kept.
int tuned_choice(Device& d, const std::string& key, int count, double work,
                 const std::function<double(int)>& time);

// What MATMUL reads on every call, without copying the shape table.
struct TunedRates {
  int gemm_variant = -1;
  double gflops[kNumGemmVariants] = {};
  int class_path[3] = {kGemmTiled, kGemmTiled, kGemmTiled};
};
TunedRates tuned_rates(Device& d);

// device_info lines: gemm_tuning=..., gemm_variant=..., ...; "pending"
// before the first MATMUL.
std::string tuning_report(const Device& d);

// The MATMUL path forced on this thread (the tuner times each path through
// run()): 0 none, else a GemmPath (kGemmTiled with vnn_gemm `variant`).
struct GemmForce {
  int path = 0;
  int variant = -1;
};
GemmForce& gemm_force();

// The work-group size launch() uses on device `index`: forced on this
// thread (the tuner's timing), else the device's tuned one once its tuning
// ran, else 0 (launch()'s default). Lock-free: read on every launch.
size_t launch_local_for(int32_t index);
size_t& launch_local_force();

}  // namespace vnn_opencl

#endif
