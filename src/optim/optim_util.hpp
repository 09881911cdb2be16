// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shared by the optimizers' and LR schedulers' sources.
#pragma once
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "vnn/detail/message.h"
#include "vnn/error.h"
#include "vnn/optim/optimizer.h"
#include "vnn/tensor.h"

namespace vnn::optim::util {

constexpr double kPi = 3.14159265358979323846;

// A float64 scalar: the state_dict entries of optimizers and schedulers.
inline Tensor scalar64(double v) { return full(Shape{}, v, TensorOptions(kFloat64)); }

// %.17g: option values in error messages round-trip.
inline std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Throws ValueError naming `option` of optimizer `opt` unless lo <= value
// (and value < hi when hi_open, value <= hi otherwise); NaN fails.
inline void require(const char* opt, const char* option, const std::map<std::string, double>& o, double lo,
                    double hi = INFINITY, bool hi_open = false) {
  double v = o.at(option);
  bool ok = v >= lo && (hi_open ? v < hi : v <= hi);
  VNN_CHECK(ValueError, ok, opt, ": invalid ", option, " value ", fmt(v), " (expected ",
            (hi_open ? "in [" + fmt(lo) + ", " + fmt(hi) + ")" : ">= " + fmt(lo)), ")");
}

// A 0 / 1 option as an int.
inline int64_t flag(const std::map<std::string, double>& o, const char* k) { return o.at(k) != 0.0 ? 1 : 0; }

// The single group of an optimizer built over a plain parameter list.
inline std::vector<ParamGroup> one_group(std::vector<Tensor> params) { return {ParamGroup(std::move(params))}; }

}  // namespace vnn::optim::util

namespace vnn::optim::util {

// The operands of an update composed of vnn ops, in the state dtype
// (float32 for 16-bit parameters, whose state is float32): p is the
// parameter itself or its float32 copy, g the gradient (negated for
// maximize; never the parameter's .grad itself once changed). done() writes
// a copy back into the parameter.
class Working {
 public:
  Working(const Tensor& param, const Tensor& grad, bool maximize) : param_(param) {
    const DType dt = param.dtype() == kFloat64 ? kFloat64 : kFloat32;
    p = param.dtype() == dt ? param : param.to(dt);
    g = grad.dtype() == dt ? grad : grad.to(dt);
    if (maximize) g = g.neg();
  }
  // L2 penalty: g + wd * p (a new tensor: the caller's gradient stays as it was).
  void add_weight_decay(double wd) {
    if (wd != 0.0) g = g.add(p, wd);
  }
  void done() {
    if (p.impl() != param_.impl()) param_.detach().copy_(p);
  }
  Tensor p, g;

 private:
  Tensor param_;
};

}  // namespace vnn::optim::util
