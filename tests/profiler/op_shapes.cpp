// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Every op reaches the profiler's shape hook, the multi-output ones too:
// pooling with indices, the fused optimizer step and the conv passes go
// through detail::enqueue like add or matmul (issue 16).
#include <catch2/catch.hpp>

#include <string>

#include "support/device_under_test.hpp"
#include "vnn/vnn.h"

using namespace vnn;
using vnn::test::device_under_test;
namespace prof = vnn::profiler;

namespace {

// The input shapes recorded for the first op whose name starts with `name`,
// or "(none)" when no such op was recorded.
std::string shapes_of(const prof::Profile& p, const std::string& name) {
  for (const auto& e : p.events())
    if (e.name.rfind(name, 0) == 0) return e.shapes;
  return "(none)";
}

}  // namespace

TEST_CASE("the profiler records input shapes for pooling, forward and backward") {
  Device dev = device_under_test();
  Tensor x = randn({2, 3, 8, 6}).to(dev);
  max_pool2d_with_indices(x, 2);  // warm-up: kernel builds
  prof::Profile p;
  auto [m, idx] = max_pool2d_with_indices(x, 2);
  Tensor a = avg_pool2d(x, 3, 1, 1);
  Tensor gm = max_pool2d_backward(ones({2, 3, 4, 3}).to(dev), x, idx, 2);
  p.stop();
  CHECK(m.sizes() == Shape{2, 3, 4, 3});
  CHECK(a.sizes() == Shape{2, 3, 8, 6});
  CHECK(shapes_of(p, "max_pool2d_backward") == "[2, 3, 4, 3], [2, 3, 4, 3]");  // grad_output, indices
  // The forward ops' events carry their one input, whatever their output count.
  bool max_fwd = false;
  for (const auto& e : p.events())
    if (e.name.rfind("max_pool2d", 0) == 0 && e.name.rfind("max_pool2d_backward", 0) != 0)
      max_fwd = max_fwd || e.shapes == "[2, 3, 8, 6]";
  CHECK(max_fwd);
  CHECK(shapes_of(p, "avg_pool2d") == "[2, 3, 8, 6]");
}

TEST_CASE("the profiler records input shapes for an optimizer step") {
  Device dev = device_under_test();
  Tensor w = randn({5, 4}).to(dev).requires_grad_(true);
  optim::Adam opt({w}, optim::AdamOptions(1e-3));
  auto step = [&] {
    opt.zero_grad();
    sum(mul(w, w)).backward();
    opt.step();
  };
  step();  // warm-up
  prof::Profile p;
  step();
  p.stop();
  CHECK(shapes_of(p, "Adam.step") == "[5, 4]");  // the gradient
}
