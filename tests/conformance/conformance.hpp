// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The LibTorch spelling conformance programs (issue 31): each program ports
// the spellings of one area of LibTorch's C++ API reference and C++ frontend
// tutorial line by line (the LibTorch line in a comment where the vnn one
// differs by more than torch:: -> vnn::) and checks each result. They are
// built against the installed vnn package, as a user's project would be
// (tests/conformance/CMakeLists.txt), and run once per backend with
// VNN_TEST_BACKEND set (cpu by default); exit code 77 means that backend
// has no device here. What LibTorch has and vnn lacks is listed in
// docs/from-libtorch.md, not here.
#pragma once
#include <vnn/vnn.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

namespace conformance {

inline int& failures() {
  static int n = 0;
  return n;
}
inline int& checks() {
  static int n = 0;
  return n;
}

inline void record(bool ok, const char* expr, const char* file, int line) {
  ++checks();
  if (ok) return;
  ++failures();
  std::cerr << file << ":" << line << ": FAILED: " << expr << "\n";
}

// Whether two tensors hold the same values within tol (compared on the host in float64).
inline bool close(const vnn::Tensor& a, const vnn::Tensor& b, double tol = 1e-5) {
  if (a.sizes() != b.sizes()) return false;
  auto x = a.to_vector<double>(), y = b.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i)
    if (!(std::fabs(x[i] - y[i]) <= tol)) return false;
  return true;
}
inline bool close(const vnn::Tensor& a, const std::vector<double>& want, double tol = 1e-5) {
  auto x = a.to_vector<double>();
  if (x.size() != want.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (!(std::fabs(x[i] - want[i]) <= tol)) return false;
  return true;
}

// The device VNN_TEST_BACKEND names (index 0), cpu:0 without it.
inline vnn::Device device() {
  const char* b = std::getenv("VNN_TEST_BACKEND");
  return vnn::Device(b && *b ? b : "cpu", 0);
}

// Runs `body` on the device under test; 0 when every check passed, 77 when
// the device is missing, 1 otherwise.
inline int run(const char* area, const std::function<void(const vnn::Device&)>& body) {
  vnn::Device dev = device();
  if (!vnn::is_available(dev)) {
    std::cout << "SKIP: no " << dev << " device here\n";
    const char* require = std::getenv("VNN_REQUIRE_DEVICE");
    return require && std::string(require) == "1" ? 1 : 77;
  }
  try {
    body(dev);
  } catch (const std::exception& e) {
    std::cerr << area << " on " << dev << ": unexpected exception: " << e.what() << "\n";
    return 1;
  }
  std::cout << area << " on " << dev << ": " << checks() - failures() << " of " << checks() << " checks passed\n";
  return failures() == 0 ? 0 : 1;
}

}  // namespace conformance

#define CHECK(cond) ::conformance::record(static_cast<bool>(cond), #cond, __FILE__, __LINE__)
#define CHECK_THROWS_AS(expr, Type)                                             \
  do {                                                                          \
    bool caught_ = false;                                                       \
    try {                                                                       \
      (void)(expr);                                                             \
    } catch (const Type&) {                                                     \
      caught_ = true;                                                           \
    } catch (...) {                                                             \
    }                                                                           \
    ::conformance::record(caught_, #expr " throws " #Type, __FILE__, __LINE__); \
  } while (0)
