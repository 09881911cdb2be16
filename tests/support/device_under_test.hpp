// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Tests are written once and run on every backend: ctest runs each test
// program once per backend with VNN_TEST_BACKEND set (label = backend).
// The program exits 77 (ctest: skipped) with the reason when that backend
// has no device here.
#pragma once
#include <string>
#include <vector>

#include "vnn/vnn.h"

namespace vnn::test {

// The device the current run targets (cpu:0 when VNN_TEST_BACKEND is unset).
Device device_under_test();
// The CPU reference device.
inline Device reference_device() { return Device("cpu", 0); }

// Max |a - b| over all elements, compared on the host in float64.
double max_abs_diff(const Tensor& a, const Tensor& b);

// Deterministic test inputs, written once for every test file:
// n values of an LCG stream in [lo, hi) (seed and salt pick the stream) ...
std::vector<double> lcg_values(size_t n, uint32_t seed, uint32_t salt, double lo, double hi);
// ... and n values spread evenly over [lo, hi) in a scrambled order.
std::vector<float> spread_values(int64_t n, float lo, float hi);

// True where the device's plugin runs oneDNN: its "onednn" property reads
// "2.6.3 (...)"; "off ...", "not built" or no property otherwise.
inline bool onednn_on(const Device& dev) {
  for (const auto& [k, v] : device_info(dev).properties)
    if (k == "onednn") return !v.empty() && v[0] >= '0' && v[0] <= '9';
  return false;
}

}  // namespace vnn::test
