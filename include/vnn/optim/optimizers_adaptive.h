// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Adamax, NAdam, RAdam and Adadelta with PyTorch's update rules, defaults
// and state names (torch.optim.Adamax, ...). Each step is a short chain of
// vnn ops per parameter (no host read):
//   vnn::optim::NAdam opt(params, vnn::optim::NAdamOptions(2e-3).decoupled_weight_decay(true));
#pragma once
#include <tuple>

#include "vnn/optim/optimizers.h"

namespace vnn::optim {

/// betas(b1, b2) for the Adam family's option structs (stored as "beta1", "beta2").
template <class Derived>
struct BetasOption {
  /// Decay rates of the first and second moment estimates (default 0.9, 0.999).
  Derived& betas(double b1, double b2) {
    auto& self = static_cast<Derived&>(*this);
    self.values["beta1"] = b1;
    self.values["beta2"] = b2;
    return self;
  }
  /// LibTorch's form: betas({0.9, 0.95}).
  Derived& betas(const std::tuple<double, double>& b) { return betas(std::get<0>(b), std::get<1>(b)); }
  /// The two decay rates.
  std::tuple<double, double> betas() const {
    auto& v = static_cast<const Derived&>(*this).values;
    return {v.at("beta1"), v.at("beta2")};
  }
};

/// Adamax's options (lr 2e-3, betas (0.9, 0.999), eps 1e-8, weight_decay 0, maximize) and master_weights.
struct AdamaxOptions : MasterWeightsOption<AdamaxOptions>, BetasOption<AdamaxOptions> {
  /// The option values by name, as they go into each ParamGroup.
  std::map<std::string, double> values{{"lr", 2e-3}, {"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8},
                                       {"weight_decay", 0}, {"maximize", 0}};
  /// Adamax options with learning rate `lr`.
  explicit AdamaxOptions(double lr = 2e-3) { values["lr"] = lr; }
  /// Learning rate (default 2e-3).
  VNN_OPTIM_OPTION(lr, "lr")
  /// Term added to the infinity norm for stability (default 1e-8).
  VNN_OPTIM_OPTION(eps, "eps")
  /// L2 penalty added to the gradient (default 0).
  VNN_OPTIM_OPTION(weight_decay, "weight_decay")
  /// Maximise the objective instead of minimising it.
  auto& maximize(bool v) { values["maximize"] = v; return *this; }
};

/// NAdam's options (lr 2e-3, betas, eps 1e-8, weight_decay 0, momentum_decay 4e-3, decoupled_weight_decay, maximize).
struct NAdamOptions : MasterWeightsOption<NAdamOptions>, BetasOption<NAdamOptions> {
  /// The option values by name, as they go into each ParamGroup.
  std::map<std::string, double> values{{"lr", 2e-3},         {"beta1", 0.9},          {"beta2", 0.999},
                                       {"eps", 1e-8},        {"weight_decay", 0},     {"momentum_decay", 4e-3},
                                       {"decoupled_weight_decay", 0}, {"maximize", 0}};
  /// NAdam options with learning rate `lr`.
  explicit NAdamOptions(double lr = 2e-3) { values["lr"] = lr; }
  /// Learning rate (default 2e-3).
  VNN_OPTIM_OPTION(lr, "lr")
  /// Term added to the denominator for stability (default 1e-8).
  VNN_OPTIM_OPTION(eps, "eps")
  /// L2 penalty added to the gradient, or decoupled decay (default 0).
  VNN_OPTIM_OPTION(weight_decay, "weight_decay")
  /// psi of the momentum schedule mu_t = beta1 (1 - 0.96^(t psi) / 2) (default 4e-3).
  VNN_OPTIM_OPTION(momentum_decay, "momentum_decay")
  /// Decay the weights directly (p *= 1 - lr wd, as AdamW) instead of adding wd p to the gradient.
  auto& decoupled_weight_decay(bool v) { values["decoupled_weight_decay"] = v; return *this; }
  /// Maximise the objective instead of minimising it.
  auto& maximize(bool v) { values["maximize"] = v; return *this; }
};

/// RAdam's options (lr 1e-3, betas, eps 1e-8, weight_decay 0, decoupled_weight_decay, maximize).
struct RAdamOptions : MasterWeightsOption<RAdamOptions>, BetasOption<RAdamOptions> {
  /// The option values by name, as they go into each ParamGroup.
  std::map<std::string, double> values{{"lr", 1e-3},         {"beta1", 0.9}, {"beta2", 0.999},
                                       {"eps", 1e-8},        {"weight_decay", 0},
                                       {"decoupled_weight_decay", 0}, {"maximize", 0}};
  /// RAdam options with learning rate `lr`.
  explicit RAdamOptions(double lr = 1e-3) { values["lr"] = lr; }
  /// Learning rate (default 1e-3).
  VNN_OPTIM_OPTION(lr, "lr")
  /// Term added to the denominator for stability (default 1e-8).
  VNN_OPTIM_OPTION(eps, "eps")
  /// L2 penalty added to the gradient, or decoupled decay (default 0).
  VNN_OPTIM_OPTION(weight_decay, "weight_decay")
  /// Decay the weights directly (p *= 1 - lr wd, as AdamW) instead of adding wd p to the gradient.
  auto& decoupled_weight_decay(bool v) { values["decoupled_weight_decay"] = v; return *this; }
  /// Maximise the objective instead of minimising it.
  auto& maximize(bool v) { values["maximize"] = v; return *this; }
};

/// Adadelta's options (lr 1.0, rho 0.9, eps 1e-6, weight_decay 0, maximize) and master_weights.
struct AdadeltaOptions : MasterWeightsOption<AdadeltaOptions> {
  /// The option values by name, as they go into each ParamGroup.
  std::map<std::string, double> values{{"lr", 1.0}, {"rho", 0.9}, {"eps", 1e-6}, {"weight_decay", 0}, {"maximize", 0}};
  /// Adadelta options with learning rate `lr`.
  explicit AdadeltaOptions(double lr = 1.0) { values["lr"] = lr; }
  /// Coefficient scaling the delta before it is applied (default 1.0).
  VNN_OPTIM_OPTION(lr, "lr")
  /// Decay of the running averages of squared gradients and updates (default 0.9).
  VNN_OPTIM_OPTION(rho, "rho")
  /// Term added inside the square roots for stability (default 1e-6).
  VNN_OPTIM_OPTION(eps, "eps")
  /// L2 penalty added to the gradient (default 0).
  VNN_OPTIM_OPTION(weight_decay, "weight_decay")
  /// Maximise the objective instead of minimising it.
  auto& maximize(bool v) { values["maximize"] = v; return *this; }
};

/// Adamax (torch.optim.Adamax): Adam with the infinity norm; state "exp_avg", "exp_inf".
class Adamax : public Optimizer {
 public:
  /// Adamax over `params` with `options` (ValueError naming an invalid option).
  Adamax(std::vector<Tensor> params, const AdamaxOptions& options = AdamaxOptions());
  /// Adamax over parameter groups; options a group leaves out come from `defaults`.
  Adamax(std::vector<ParamGroup> groups, const AdamaxOptions& defaults = AdamaxOptions());
 protected:
  /// Checks lr, eps, betas and weight_decay.
  void validate(const std::map<std::string, double>& o) const override;
  /// One Adamax update of p.
  void update(const Tensor& p, const Tensor& g, ParamState& st, const std::map<std::string, double>& o) override;
};

/// NAdam (torch.optim.NAdam): Adam with Nesterov momentum; state "exp_avg", "exp_avg_sq" and the scalar "mu_product".
class NAdam : public Optimizer {
 public:
  /// NAdam over `params` with `options` (ValueError naming an invalid option).
  NAdam(std::vector<Tensor> params, const NAdamOptions& options = NAdamOptions());
  /// NAdam over parameter groups; options a group leaves out come from `defaults`.
  NAdam(std::vector<ParamGroup> groups, const NAdamOptions& defaults = NAdamOptions());
 protected:
  /// "mu_product".
  bool is_scalar_state(const std::string& name) const override { return name == "mu_product"; }
  /// Checks lr, eps, betas, weight_decay and momentum_decay.
  void validate(const std::map<std::string, double>& o) const override;
  /// One NAdam update of p.
  void update(const Tensor& p, const Tensor& g, ParamState& st, const std::map<std::string, double>& o) override;
};

/// RAdam (torch.optim.RAdam): Adam with the variance rectification; plain momentum SGD while rho_t <= 5.
class RAdam : public Optimizer {
 public:
  /// RAdam over `params` with `options` (ValueError naming an invalid option).
  RAdam(std::vector<Tensor> params, const RAdamOptions& options = RAdamOptions());
  /// RAdam over parameter groups; options a group leaves out come from `defaults`.
  RAdam(std::vector<ParamGroup> groups, const RAdamOptions& defaults = RAdamOptions());
 protected:
  /// Checks lr, eps, betas and weight_decay.
  void validate(const std::map<std::string, double>& o) const override;
  /// One RAdam update of p.
  void update(const Tensor& p, const Tensor& g, ParamState& st, const std::map<std::string, double>& o) override;
};

/// Adadelta (torch.optim.Adadelta): state "square_avg", "acc_delta".
class Adadelta : public Optimizer {
 public:
  /// Adadelta over `params` with `options` (ValueError naming an invalid option).
  Adadelta(std::vector<Tensor> params, const AdadeltaOptions& options = AdadeltaOptions());
  /// Adadelta over parameter groups; options a group leaves out come from `defaults`.
  Adadelta(std::vector<ParamGroup> groups, const AdadeltaOptions& defaults = AdadeltaOptions());
 protected:
  /// Checks lr, rho (in [0, 1]), eps and weight_decay.
  void validate(const std::map<std::string, double>& o) const override;
  /// One Adadelta update of p.
  void update(const Tensor& p, const Tensor& g, ParamState& st, const std::map<std::string, double>& o) override;
};

}  // namespace vnn::optim
