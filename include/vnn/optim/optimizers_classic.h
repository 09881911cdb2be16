// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ASGD and Rprop with PyTorch's update rules, defaults and state names
// (torch.optim.ASGD, torch.optim.Rprop); each step is a short chain of vnn
// ops per parameter:
//   vnn::optim::Rprop opt(params, vnn::optim::RpropOptions(0.01).etas({0.5, 1.2}));
#pragma once
#include <tuple>

#include "vnn/optim/optimizers.h"

namespace vnn::optim {

/// ASGD's options (lr 1e-2, lambd 1e-4, alpha 0.75, t0 1e6, weight_decay 0, maximize) and master_weights.
struct ASGDOptions : MasterWeightsOption<ASGDOptions> {
  /// The option values by name, as they go into each ParamGroup.
  std::map<std::string, double> values{{"lr", 1e-2}, {"lambd", 1e-4}, {"alpha", 0.75}, {"t0", 1e6},
                                       {"weight_decay", 0}, {"maximize", 0}};
  /// ASGD options with learning rate `lr`.
  explicit ASGDOptions(double lr = 1e-2) { values["lr"] = lr; }
  /// Learning rate (default 1e-2).
  VNN_OPTIM_OPTION(lr, "lr")
  /// Decay term (default 1e-4).
  VNN_OPTIM_OPTION(lambd, "lambd")
  /// Power of the eta update (default 0.75).
  VNN_OPTIM_OPTION(alpha, "alpha")
  /// Step at which averaging starts (default 1e6).
  VNN_OPTIM_OPTION(t0, "t0")
  /// L2 penalty added to the gradient (default 0).
  VNN_OPTIM_OPTION(weight_decay, "weight_decay")
  /// Maximise the objective instead of minimising it.
  auto& maximize(bool v) { values["maximize"] = v; return *this; }
};

/// Rprop's options (lr 1e-2, etas (0.5, 1.2), step_sizes (1e-6, 50), maximize) and master_weights.
struct RpropOptions : MasterWeightsOption<RpropOptions> {
  /// The option values by name, as they go into each ParamGroup (etas and step_sizes as two values each).
  std::map<std::string, double> values{{"lr", 1e-2},          {"etaminus", 0.5},    {"etaplus", 1.2},
                                       {"step_size_min", 1e-6}, {"step_size_max", 50}, {"maximize", 0}};
  /// Rprop options with learning rate (initial step size) `lr`.
  explicit RpropOptions(double lr = 1e-2) { values["lr"] = lr; }
  /// Initial step size of every element (default 1e-2).
  VNN_OPTIM_OPTION(lr, "lr")
  /// Multiplicative decrease and increase factors (default 0.5, 1.2).
  auto& etas(const std::tuple<double, double>& e) {
    values["etaminus"] = std::get<0>(e);
    values["etaplus"] = std::get<1>(e);
    return *this;
  }
  /// The two factors (etaminus, etaplus).
  std::tuple<double, double> etas() const { return {values.at("etaminus"), values.at("etaplus")}; }
  /// Minimal and maximal step sizes (default 1e-6, 50).
  auto& step_sizes(const std::tuple<double, double>& s) {
    values["step_size_min"] = std::get<0>(s);
    values["step_size_max"] = std::get<1>(s);
    return *this;
  }
  /// The two bounds (min, max).
  std::tuple<double, double> step_sizes() const { return {values.at("step_size_min"), values.at("step_size_max")}; }
  /// Maximise the objective instead of minimising it.
  auto& maximize(bool v) { values["maximize"] = v; return *this; }
};

/// Averaged SGD (torch.optim.ASGD): state "ax" (the average) and the scalars "eta", "mu".
class ASGD : public Optimizer {
 public:
  /// ASGD over `params` with `options` (ValueError naming an invalid option).
  ASGD(std::vector<Tensor> params, const ASGDOptions& options = ASGDOptions());
  /// ASGD over parameter groups; options a group leaves out come from `defaults`.
  ASGD(std::vector<ParamGroup> groups, const ASGDOptions& defaults = ASGDOptions());

 protected:
  /// "eta" and "mu".
  bool is_scalar_state(const std::string& name) const override { return name == "eta" || name == "mu"; }
  /// Checks lr and weight_decay.
  void validate(const std::map<std::string, double>& o) const override;
  /// One ASGD update of p and its average.
  void update(const Tensor& p, const Tensor& g, ParamState& st, const std::map<std::string, double>& o) override;
};

/// Resilient backpropagation (torch.optim.Rprop): per-element step sizes from gradient signs; state "prev", "step_size".
class Rprop : public Optimizer {
 public:
  /// Rprop over `params` with `options` (ValueError naming an invalid option).
  Rprop(std::vector<Tensor> params, const RpropOptions& options = RpropOptions());
  /// Rprop over parameter groups; options a group leaves out come from `defaults`.
  Rprop(std::vector<ParamGroup> groups, const RpropOptions& defaults = RpropOptions());

 protected:
  /// Checks lr, 0 < etaminus < 1 < etaplus and 0 <= step_size_min <= step_size_max.
  void validate(const std::map<std::string, double>& o) const override;
  /// One Rprop update of p.
  void update(const Tensor& p, const Tensor& g, ParamState& st, const std::map<std::string, double>& o) override;
};

}  // namespace vnn::optim
