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
// until zeroed. Backward runs with grad mode off (no higher-order grads).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "vnn/tensor.h"

namespace vnn::autograd {

bool grad_enabled();
void set_grad_enabled(bool enabled);

// Turns recording off for a scope, on this thread (torch.no_grad()).
class NoGradGuard {
 public:
  NoGradGuard() : previous_(grad_enabled()) { set_grad_enabled(false); }
  ~NoGradGuard() { set_grad_enabled(previous_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};
// Inference: no recording (vnn keeps no extra inference-only state).
using InferenceMode = NoGradGuard;

// Anomaly mode: backward checks every gradient for NaN / Inf and names the
// op whose backward produced it. Costs a host round trip per node.
bool anomaly_enabled();
void set_anomaly_enabled(bool enabled);
class DetectAnomalyGuard {
 public:
  DetectAnomalyGuard() : previous_(anomaly_enabled()) { set_anomaly_enabled(true); }
  ~DetectAnomalyGuard() { set_anomaly_enabled(previous_); }

 private:
  bool previous_;
};

// d outputs / d inputs without touching .grad() (torch.autograd.grad).
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, bool retain_graph = false);

struct GradcheckResult {
  bool ok = true;
  double max_abs_error = 0;
  std::string message;  // which input / element disagreed, by how much
};
// Compares analytic gradients of sum(f(inputs) * r) (r a fixed random
// weighting) with central finite differences. Inputs should be float64 and
// require grad; they may live on any device.
GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                          const std::vector<Tensor>& inputs, double eps = 1e-6, double atol = 1e-5,
                          double rtol = 1e-3);

}  // namespace vnn::autograd
