// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Catch2 main shared by every test program: resolves the device under test
// and skips the whole program (exit 77) when that backend has no device.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "support/device_under_test.hpp"

namespace vnn::test {

namespace {
std::string requested_backend() {
  const char* b = std::getenv("VNN_TEST_BACKEND");
  return b && *b ? b : "cpu";
}
}  // namespace

Device device_under_test() { return Device(requested_backend(), 0); }

double max_abs_diff(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes())
    throw ShapeError("max_abs_diff: shapes " + a.sizes().str() + " and " + b.sizes().str() + " differ");
  auto x = a.to_vector<double>(), y = b.to_vector<double>();
  double m = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) != std::isnan(y[i])) return INFINITY;
    if (!std::isnan(x[i])) m = std::max(m, std::fabs(x[i] - y[i]));
  }
  return m;
}

std::vector<double> lcg_values(size_t n, uint32_t seed, uint32_t salt, double lo, double hi) {
  std::vector<double> v(n);
  uint32_t s = seed * 2654435761u + salt;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = lo + double(s >> 8) / double(1u << 24) * (hi - lo);
  }
  return v;
}

std::vector<float> spread_values(int64_t n, float lo, float hi) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = lo + (hi - lo) * float((i * 7919) % n) / float(n);
  return v;
}

}  // namespace vnn::test

int main(int argc, char** argv) {
  const char* wanted = std::getenv("VNN_TEST_BACKEND");
  if (wanted && *wanted) {
    vnn::Device d(wanted, 0);
    if (!vnn::is_available(d)) {
      std::cout << "SKIP: no " << wanted << " device here.";
      for (const auto& r : vnn::backend_report())
        if (r.backend == wanted || (std::string(wanted) == "cpu" && r.backend == "openmp"))
          std::cout << " " << r.backend << " backend: " << r.status << (r.detail.empty() ? "" : " (" + r.detail + ")");
      std::cout << "\n";
      // On a machine that must have the device (ci/gpu-check.sh), its
      // absence is a failure, not a skip.
      const char* require = std::getenv("VNN_REQUIRE_DEVICE");
      return require && std::string(require) == "1" ? 1 : 77;
    }
    std::cout << "device under test: " << d << " (" << vnn::device_info(d).name << ")\n";
  }
  return Catch::Session().run(argc, argv);
}
