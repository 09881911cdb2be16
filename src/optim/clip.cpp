// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Gradient clipping built from existing ops under a no-grad guard, so the
// total norm stays on the device.
#include "vnn/detail/message.h"
#include "vnn/optim/clip.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <unordered_set>

#include "vnn/autograd.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/reduction.h"

namespace vnn::optim {

namespace {
// The defined tensors of `params`, each once (a tied weight listed twice
// has one gradient, which must be counted and scaled once).
std::vector<Tensor> unique(const std::vector<Tensor>& params) {
  std::vector<Tensor> out;
  std::unordered_set<const void*> seen;
  for (const Tensor& p : params)
    if (p.defined() && seen.insert(p.impl()).second) out.push_back(p);
  return out;
}
}  // namespace

Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  VNN_CHECK(ValueError, norm_type > 0, "clip_grad_norm_: invalid norm_type ", norm_type,
            " (expected a p > 0 or INFINITY)");
  VNN_CHECK(ValueError, max_norm >= 0, "clip_grad_norm_: invalid max_norm ", max_norm, " (expected >= 0)");
  autograd::NoGradGuard no_grad;
  std::vector<Tensor> grads;
  for (const Tensor& p : unique(params))
    if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return full(Shape{}, 0.0, TensorOptions(kFloat64));
  const Device dev = grads[0].device();
  const bool inf = std::isinf(norm_type);
  // The total in float32 as in PyTorch (float64 where a gradient is): a
  // float32 model's clipping then builds no float64 kernels on a device
  // that compiles them at first use (OpenCL: ~1 s on a CPU driver).
  DType acc = kFloat32;
  for (const Tensor& g : grads)
    if (g.dtype() == kFloat64) acc = kFloat64;
  Tensor total;
  for (const Tensor& g : grads) {
    Tensor part;
    if (inf)
      part = amax(abs(g));
    else if (norm_type == 1.0)
      part = sum(abs(g));
    else if (norm_type == 2.0)
      part = sum(mul(g, g));
    else
      part = sum(pow(abs(g), norm_type));
    part = part.to(dev, acc);  // device to device: no host read
    total = !total.defined() ? part : inf ? maximum(total, part) : add(total, part);
  }
  if (!inf && norm_type != 1.0) total = norm_type == 2.0 ? sqrt(total) : pow(total, 1.0 / norm_type);
  if (error_if_nonfinite && !std::isfinite(total.item()))
    VNN_THROW(ValueError, "clip_grad_norm_: the total norm of order ", norm_type,
              " of the gradients is non-finite, so it cannot be clipped");
  // coef = min(max_norm / (total + 1e-6), 1), applied even when it is 1 so
  // that nothing has to be decided on the host.
  Tensor coef = clamp_max(rdiv(add(total, 1e-6), max_norm), 1.0);
  for (Tensor& g : grads) g.mul_(coef.to(g.device(), g.dtype()));
  return total.to(kFloat64);
}

void clip_grad_value_(const std::vector<Tensor>& params, double clip_value) {
  VNN_CHECK(ValueError, clip_value >= 0, "clip_grad_value_: invalid clip_value ", clip_value, " (expected >= 0)");
  autograd::NoGradGuard no_grad;
  for (const Tensor& p : unique(params))
    if (p.grad().defined()) {
      Tensor g = p.grad();
      g.clamp_(-clip_value, clip_value);
    }
}

}  // namespace vnn::optim
