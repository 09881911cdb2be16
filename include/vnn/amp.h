// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Mixed precision: autocast scopes (torch.autocast) and the gradient scaler
// (torch.cuda.amp.GradScaler), in C++. See docs/amp.md.
//
//   vnn::amp::GradScaler scaler;                       // fp16: scale the loss
//   {
//     vnn::AutocastGuard autocast(device, vnn::kFloat16);  // matmul/linear/conv2d in fp16
//     loss = nn::cross_entropy(model(x), y);           // losses, softmax, norms in float32
//   }
//   scaler.scale(loss).backward();                     // backward outside the scope
//   scaler.step(opt);                                  // skipped when a gradient is inf/NaN
//   scaler.update();
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "vnn/device.h"
#include "vnn/dtype.h"
#include "vnn/optim/optimizer.h"
#include "vnn/tensor.h"

namespace vnn::autocast {

/// Thread-local, nestable autocast scope for one device type (backend): ops on that backend's tensors follow the autocast op lists until the guard ends.
class AutocastGuard {
 public:
  /// Turns autocast to `dtype` (float16 or bfloat16, else ValueError) on, or off with enabled = false, for the backend of `device` ("cpu", "cuda:0", ...).
  explicit AutocastGuard(const Device& device, DType dtype = kBFloat16, bool enabled = true);
  /// Restores the state before the guard; the outermost scope's end drops the weight-cast cache.
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  std::string backend_;
  bool previous_enabled_;
  DType previous_dtype_;
};

/// Whether autocast is on, on this thread, for the backend of `device`.
bool is_enabled(const Device& device);
/// The dtype autocast lowers to for the backend of `device` (kBFloat16 until a guard sets one).
DType get_dtype(const Device& device);
/// Drops this thread's cached weight casts (the outermost AutocastGuard's end does it too).
void clear_cache();
/// How many weight casts this thread's cache holds (for tests and profiling).
size_t cache_size();

}  // namespace vnn::autocast

namespace vnn {
using autocast::AutocastGuard;
}

namespace vnn::amp {

/// GradScaler's options, PyTorch's defaults (init 2^16, growth 2, backoff 0.5, interval 2000).
struct GradScalerOptions {
  double init_scale = 65536.0;      ///< the first scale
  double growth_factor = 2.0;       ///< scale *= this after growth_interval finite steps
  double backoff_factor = 0.5;      ///< scale *= this after a step with inf/NaN gradients
  int64_t growth_interval = 2000;   ///< finite steps in a row before the scale grows
  bool enabled = true;              ///< false: every call is a pass-through (scale 1, plain step)
};

/// Dynamic loss scaling for float16 training (torch.cuda.amp.GradScaler): scale the loss, unscale and check the gradients, skip steps that overflowed.
class GradScaler {
 public:
  /// A scaler with `options` (ValueError for a non-positive scale, growth <= 1, backoff outside (0, 1) or interval < 1).
  explicit GradScaler(const GradScalerOptions& options = GradScalerOptions());

  /// loss * scale (a tensor on loss's device, in loss's dtype); marks this iteration's gradients as scaled.
  Tensor scale(const Tensor& loss);
  /// Divides every gradient of `opt` by the scale in place and records, with one fused check per parameter group and one value read back, whether any is inf/NaN; ValueError if scale() was not called this iteration or unscale_ was already called since the last update().
  void unscale_(optim::Optimizer& opt);
  /// unscale_(opt) if not done yet, then opt.step() unless one of its gradients was inf/NaN; returns whether the step ran (ValueError when called twice before update()).
  bool step(optim::Optimizer& opt);
  /// Adjusts the scale after the iteration's step()s: backoff when any optimizer's gradients overflowed, growth after growth_interval clean iterations.
  void update();
  /// Sets the scale to `new_scale` (> 0) instead of the automatic rule.
  void update(double new_scale);
  /// The current scale (1.0 when disabled).
  double get_scale() const;
  /// Whether the scaler does anything (options.enabled).
  bool is_enabled() const { return options_.enabled; }
  /// Finite steps since the last backoff or growth.
  int64_t growth_tracker() const { return growth_tracker_; }

  /// scale, growth_factor, backoff_factor, growth_interval and the growth tracker, as 0-dim float64 tensors ("scale", ...).
  optim::StateDict state_dict() const;
  /// Restores what state_dict() returned; a missing key or invalid value throws ValueError naming it.
  void load_state_dict(const optim::StateDict& dict);

 private:
  // What this iteration did to one optimizer.
  struct Stage {
    const optim::Optimizer* opt;
    int done;        // 0 nothing, 1 unscaled, 2 stepped
    bool found_inf;  // its gradients held inf/NaN
  };
  Stage& stage(const optim::Optimizer& opt);

  GradScalerOptions options_;
  double scale_;
  int64_t growth_tracker_ = 0;
  bool scaled_ = false;  // scale() called since the last update()
  std::vector<Stage> stages_;  // cleared by update()
};

}  // namespace vnn::amp
