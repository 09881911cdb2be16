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
      return 77;
    }
    std::cout << "device under test: " << d << " (" << vnn::device_info(d).name << ")\n";
  }
  return Catch::Session().run(argc, argv);
}
