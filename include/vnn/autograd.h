// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reverse-mode automatic differentiation (the counterpart of torch.autograd).
//
//   Tensor w = vnn::randn({3, 2}).requires_grad_();
//   Tensor loss = vnn::sum(vnn::matmul(x, w));
//   loss.backward();            // w.grad() now holds d loss / d w
//   { vnn::autograd::NoGradGuard g; w.sub_(w.grad() * 0.1); }
//
// Every differentiable op records a node when grad mode is on and an input
// requires grad; backward() walks the recorded graph once (pass
// retain_graph = true to walk it again). Gradients accumulate in .grad()
// until zeroed. Backward runs with grad mode off, unless create_graph = true:
// then the backward ops record too, and the gradients can be differentiated
// again (gradient penalties, Hessian-vector products):
//
//   auto g = vnn::autograd::grad({loss}, {x}, {}, /*retain_graph=*/true, /*create_graph=*/true)[0];
//   vnn::sum(g * g).backward();   // d |d loss / dx|^2 / d params
//
// docs/autograd.md lists the ops whose backward is differentiable; a second
// backward through any other throws Unsupported naming it.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "vnn/tensor.h"

namespace vnn::autograd {

/// Whether ops record the graph on this thread (true unless turned off).
bool grad_enabled();
/// Turns graph recording on or off for this thread.
void set_grad_enabled(bool enabled);

/// Turns recording off for a scope, on this thread (torch.no_grad()).
class NoGradGuard {
 public:
  /// Saves this thread's grad mode and turns recording off.
  NoGradGuard() : previous_(grad_enabled()) { set_grad_enabled(false); }
  /// Restores the saved grad mode.
  ~NoGradGuard() { set_grad_enabled(previous_); }
  /// Not copyable: one scope, one restore.
  NoGradGuard(const NoGradGuard&) = delete;
  /// Not assignable.
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};
/// Inference: no recording (vnn keeps no extra inference-only state).
using InferenceMode = NoGradGuard;

/// Anomaly mode: backward checks every gradient for NaN / Inf and names the
/// op whose backward produced it. Costs a host round trip per node.
bool anomaly_enabled();
/// Turns anomaly mode on or off.
void set_anomaly_enabled(bool enabled);
/// Turns anomaly mode on for a scope (torch.autograd.detect_anomaly).
class DetectAnomalyGuard {
 public:
  /// Saves the anomaly setting and turns it on.
  DetectAnomalyGuard() : previous_(anomaly_enabled()) { set_anomaly_enabled(true); }
  /// Restores the saved setting.
  ~DetectAnomalyGuard() { set_anomaly_enabled(previous_); }

 private:
  bool previous_;
};

/// d outputs / d inputs without touching .grad() (torch::autograd::grad).
/// `grad_outputs`: one per output (undefined: 1 for a one-element output).
/// `retain_graph` defaults to `create_graph`; with `create_graph` the
/// results carry a graph and can be differentiated again. An input the
/// outputs do not depend on throws ValueError unless `allow_unused`, which
/// gives an undefined Tensor for it.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, std::optional<bool> retain_graph = std::nullopt,
                         bool create_graph = false, bool allow_unused = false);

/// Back-propagates from several roots at once into the leaves' .grad()
/// (torch::autograd::backward); `grad_tensors` as grad's `grad_outputs`.
void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false);

/// What gradcheck found: pass/fail, the largest error, and where it disagreed.
struct GradcheckResult {
  /// True when every analytic gradient matched the finite differences.
  bool ok = true;
  /// The largest |analytic - numeric| over all checked elements.
  double max_abs_error = 0;
  /// Which input and element disagreed, by how much (empty when ok).
  std::string message;  // which input / element disagreed, by how much
};
/// Compares analytic gradients of sum(f(inputs) * r) (r a fixed random
/// weighting) with central finite differences. Inputs should be float64 and
/// require grad; they may live on any device.
GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                          const std::vector<Tensor>& inputs, double eps = 1e-6, double atol = 1e-5,
                          double rtol = 1e-3);

/// Checks second derivatives (torch.autograd.gradgradcheck): the gradients
/// of sum(f(inputs) * r), taken with create_graph, are differentiated again
/// and compared with central finite differences of those gradients.
GradcheckResult gradgradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                              const std::vector<Tensor>& inputs, double eps = 1e-6, double atol = 1e-5,
                              double rtol = 1e-3);

}  // namespace vnn::autograd

namespace vnn {
/// LibTorch's spelling torch::NoGradGuard: vnn::NoGradGuard no_grad;
using autograd::NoGradGuard;
}  // namespace vnn
