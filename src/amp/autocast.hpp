// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The one place that decides what autocast does to an op's arguments. Each
// listed op starts with
//
//   if (autocast::detail::OpScope s{autocast::detail::Policy::lower, {&a, &b}}) return matmul(s[0], s[1]);
//
// which, when autocast is on for the arguments' backend, casts them (lower:
// float32 -> the autocast dtype, leaves that require grad through the
// scope's cache; fp32: float16/bfloat16 -> float32) and calls the op again
// with autocast suspended, so its insides run as written (PyTorch excludes
// the autocast key the same way). When autocast is off the check is one
// thread-local load.
#pragma once
#include <initializer_list>
#include <string>
#include <vector>

#include "vnn/tensor.h"

namespace vnn::autocast::detail {

enum class Policy {
  lower,  // matmul, linear, conv2d: run in the autocast dtype
  fp32,   // softmax, log_softmax, losses, norms, sum/mean/var, exp/log/pow
};

// Whether any backend has autocast on on this thread and it is not suspended.
bool active_any();

class OpScope {
 public:
  OpScope(Policy policy, std::initializer_list<const Tensor*> args) {
    if (active_any()) engage(policy, args);
  }
  ~OpScope();
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;
  explicit operator bool() const { return engaged_; }
  // The i-th argument as the op should see it (undefined stays undefined).
  const Tensor& operator[](size_t i) const { return args_[i]; }

 private:
  void engage(Policy policy, std::initializer_list<const Tensor*> args);
  bool engaged_ = false;
  std::vector<Tensor> args_;
};

// Suspends autocast on this thread for a scope (autograd's backward runs
// under one: backward ops keep the dtypes of their forward).
class Suspend {
 public:
  Suspend();
  ~Suspend();
  Suspend(const Suspend&) = delete;
  Suspend& operator=(const Suspend&) = delete;
};

// This thread's autocast settings, as a checkpointed forward saw them, and
// a scope that puts them back for its recompute inside backward (where
// autocast is otherwise suspended): the recomputed ops cast as the
// forward's did. The scope counts as a guard for the weight-cast cache.
struct Settings {
  struct Backend {
    std::string backend;
    bool enabled = false;
    DType dtype = kBFloat16;
  };
  std::vector<Backend> backends;
  bool suspended = false;
};
Settings current_settings();
class RestoreSettings {
 public:
  explicit RestoreSettings(const Settings& settings);
  ~RestoreSettings();
  RestoreSettings(const RestoreSettings&) = delete;
  RestoreSettings& operator=(const RestoreSettings&) = delete;

 private:
  Settings saved_;
  int saved_enabled_ = 0, saved_suspended_ = 0;
};

}  // namespace vnn::autocast::detail
