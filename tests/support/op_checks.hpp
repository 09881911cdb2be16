// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Checks shared by the op tests: an error of the right type naming the op,
// a float64 finite-difference gradient check on the device under test, and
// values against a float64 reference.
#pragma once
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "support/device_under_test.hpp"

namespace vnn::test {

// f() throws E, and its message names op.
template <class E, class F>
void check_error(F&& f, const std::string& op) {
  INFO("expected an error naming " << op);
  try {
    f();
    FAIL("no exception");
  } catch (const E& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains(op));
  }
}

// autograd::gradcheck of f at inputs (float64 leaves that require grad).
inline void check_grad(const char* name, const std::function<Tensor(const std::vector<Tensor>&)>& f,
                       const std::vector<Tensor>& inputs) {
  INFO("gradient of " << name << " on " << device_under_test());
  auto r = autograd::gradcheck(f, inputs);
  INFO(r.message);
  CHECK(r.ok);
}

// got (any dtype, any device) equals want element by element within tol.
inline void check_close(const Tensor& got, const std::vector<double>& want, double tol) {
  std::vector<double> g = got.to(kFloat64).to_vector<double>();
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i);
    CHECK(g[i] == Approx(want[i]).margin(tol));
  }
}

// The same, unnamed (the INFO names the device only).
inline void check_grad(const std::function<Tensor(const std::vector<Tensor>&)>& f, const std::vector<Tensor>& inputs) {
  check_grad("f", f, inputs);
}

}  // namespace vnn::test
