// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// SGD, Adam, AdamW, RMSprop and Adagrad with PyTorch's update rules and
// defaults. Options are built like torch's C++ API:
//   vnn::optim::SGD opt(params, vnn::optim::SGDOptions(0.1).momentum(0.9).nesterov(true));
#pragma once
#include <tuple>

#include "vnn/optim/optimizer.h"

namespace vnn::optim {

/// Declares option `name` (a double stored under `key`) with setter name(v) and getter name(); the optimizer headers share it.
#define VNN_OPTIM_OPTION(name, key)                          \
  auto& name(double v) { values[key] = v; return *this; }    \
  double name() const { return values.at(key); }

/// The option every optimizer takes besides its numeric ones: float32 master weights for 16-bit parameters.
template <class Derived>
struct MasterWeightsOption {
  /// The flag master_weights() sets and reads.
  bool master_weights_value = false;
  /// Keep a float32 master copy of each float16/bfloat16 parameter (state "master"): the update lands there and the parameter gets it rounded, so small steps are not lost.
  Derived& master_weights(bool v) {
    master_weights_value = v;
    return static_cast<Derived&>(*this);
  }
  /// Whether master weights are on.
  bool master_weights() const { return master_weights_value; }
};

// Every option is a double; flags are 0 / 1. Optimizer state is float32 for
// float16/bfloat16 parameters either way.
/// SGD's options (lr, momentum, dampening, weight_decay, nesterov, maximize) and master_weights.
struct SGDOptions : MasterWeightsOption<SGDOptions> {
  /// The option values by name, as they go into each ParamGroup.
  std::map<std::string, double> values{
      {"lr", 1e-3}, {"momentum", 0}, {"dampening", 0}, {"weight_decay", 0}, {"nesterov", 0}, {"maximize", 0}};
  /// SGD options with learning rate `lr`.
  explicit SGDOptions(double lr = 1e-3) { values["lr"] = lr; }
  /// Learning rate (default 1e-3).
  VNN_OPTIM_OPTION(lr, "lr")
  /// Momentum factor (default 0: plain SGD).
  VNN_OPTIM_OPTION(momentum, "momentum")
  /// Dampening of the momentum (default 0).
  VNN_OPTIM_OPTION(dampening, "dampening")
  /// L2 penalty added to the gradient (default 0).
  VNN_OPTIM_OPTION(weight_decay, "weight_decay")
  /// Nesterov momentum (needs momentum > 0 and dampening 0).
  auto& nesterov(bool v) { values["nesterov"] = v; return *this; }
  /// Maximise the objective instead of minimising it.
  auto& maximize(bool v) { values["maximize"] = v; return *this; }
};

/// Adam's options (lr, betas, eps, weight_decay, amsgrad, maximize) and master_weights.
struct AdamOptions : MasterWeightsOption<AdamOptions> {
  /// The option values by name, as they go into each ParamGroup.
  std::map<std::string, double> values{{"lr", 1e-3}, {"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8},
                                       {"weight_decay", 0}, {"amsgrad", 0}, {"maximize", 0}};
  /// Adam options with learning rate `lr`.
  explicit AdamOptions(double lr = 1e-3) { values["lr"] = lr; }
  /// Learning rate (default 1e-3).
  VNN_OPTIM_OPTION(lr, "lr")
  /// Term added to the denominator for stability (default 1e-8).
  VNN_OPTIM_OPTION(eps, "eps")
  /// L2 penalty added to the gradient (Adam) or decoupled decay (AdamW).
  VNN_OPTIM_OPTION(weight_decay, "weight_decay")
  /// Decay rates of the first and second moment estimates (default 0.9, 0.999).
  auto& betas(double b1, double b2) { values["beta1"] = b1; values["beta2"] = b2; return *this; }
  /// LibTorch's form: betas({0.9, 0.95}).
  auto& betas(const std::tuple<double, double>& b) { return betas(std::get<0>(b), std::get<1>(b)); }
  /// The two decay rates.
  std::tuple<double, double> betas() const { return {values.at("beta1"), values.at("beta2")}; }
  /// Use the maximum of past second moments (AMSGrad).
  auto& amsgrad(bool v) { values["amsgrad"] = v; return *this; }
  /// Maximise the objective instead of minimising it.
  auto& maximize(bool v) { values["maximize"] = v; return *this; }
};

/// AdamW: the same options, weight decay 1e-2 by default (as PyTorch).
struct AdamWOptions : AdamOptions {
  /// AdamW options with learning rate `lr` and weight decay 1e-2.
  explicit AdamWOptions(double lr = 1e-3) : AdamOptions(lr) { values["weight_decay"] = 1e-2; }
  /// The result of a chain (the setters return AdamOptions&), so that
  /// std::make_unique<AdamWOptions>(AdamWOptions(lr).weight_decay(0.0)) reads as in LibTorch.
  AdamWOptions(const AdamOptions& chained) : AdamOptions(chained) {}  // NOLINT: implicit by design
};

/// RMSprop's options (lr, alpha, eps, weight_decay, momentum, centered, maximize) and master_weights.
struct RMSpropOptions : MasterWeightsOption<RMSpropOptions> {
  /// The option values by name, as they go into each ParamGroup.
  std::map<std::string, double> values{{"lr", 1e-2},   {"alpha", 0.99},   {"eps", 1e-8},  {"weight_decay", 0},
                                       {"momentum", 0}, {"centered", 0}, {"maximize", 0}};
  /// RMSprop options with learning rate `lr`.
  explicit RMSpropOptions(double lr = 1e-2) { values["lr"] = lr; }
  /// Learning rate (default 1e-2).
  VNN_OPTIM_OPTION(lr, "lr")
  /// Smoothing constant of the squared-gradient average (default 0.99).
  VNN_OPTIM_OPTION(alpha, "alpha")
  /// Term added to the denominator for stability (default 1e-8).
  VNN_OPTIM_OPTION(eps, "eps")
  /// L2 penalty added to the gradient (default 0).
  VNN_OPTIM_OPTION(weight_decay, "weight_decay")
  /// Momentum factor (default 0).
  VNN_OPTIM_OPTION(momentum, "momentum")
  /// Normalise by the centred second moment (an estimate of the variance).
  auto& centered(bool v) { values["centered"] = v; return *this; }
  /// Maximise the objective instead of minimising it.
  auto& maximize(bool v) { values["maximize"] = v; return *this; }
};

/// Adagrad's options (lr, lr_decay, weight_decay, initial_accumulator_value, eps, maximize) and master_weights.
struct AdagradOptions : MasterWeightsOption<AdagradOptions> {
  /// The option values by name, as they go into each ParamGroup.
  std::map<std::string, double> values{{"lr", 1e-2}, {"lr_decay", 0}, {"weight_decay", 0},
                                       {"initial_accumulator_value", 0}, {"eps", 1e-10}, {"maximize", 0}};
  /// Adagrad options with learning rate `lr`.
  explicit AdagradOptions(double lr = 1e-2) { values["lr"] = lr; }
  /// Learning rate (default 1e-2).
  VNN_OPTIM_OPTION(lr, "lr")
  /// Learning-rate decay per step: lr / (1 + (step - 1) * lr_decay) (default 0).
  VNN_OPTIM_OPTION(lr_decay, "lr_decay")
  /// L2 penalty added to the gradient (default 0).
  VNN_OPTIM_OPTION(weight_decay, "weight_decay")
  /// Starting value of the squared-gradient sums (default 0).
  VNN_OPTIM_OPTION(initial_accumulator_value, "initial_accumulator_value")
  /// Term added to the denominator for stability (default 1e-10).
  VNN_OPTIM_OPTION(eps, "eps")
  /// Maximise the objective instead of minimising it.
  auto& maximize(bool v) { values["maximize"] = v; return *this; }
};

/// Stochastic gradient descent with momentum, dampening, Nesterov and weight decay (torch.optim.SGD).
class SGD : public Optimizer {
 public:
  /// SGD over `params` with `options` (ValueError naming an invalid option).
  SGD(std::vector<Tensor> params, const SGDOptions& options = SGDOptions());
  /// SGD over parameter groups; options a group leaves out come from `defaults`.
  SGD(std::vector<ParamGroup> groups, const SGDOptions& defaults = SGDOptions());

 protected:
  /// Checks lr, momentum, dampening, weight_decay and the Nesterov conditions.
  void validate(const std::map<std::string, double>& o) const override;
  /// One fused SGD update of p.
  void update(const Tensor& p, const Tensor& g, ParamState& st, const std::map<std::string, double>& o) override;
};

/// Adam (torch.optim.Adam): bias-corrected moment estimates, optional AMSGrad.
class Adam : public Optimizer {
 public:
  /// Adam over `params` with `options` (ValueError naming an invalid option).
  Adam(std::vector<Tensor> params, const AdamOptions& options = AdamOptions());
  /// Adam over parameter groups; options a group leaves out come from `defaults`.
  Adam(std::vector<ParamGroup> groups, const AdamOptions& defaults = AdamOptions());

 protected:
  /// Adam (decoupled = false) or AdamW (true) under `name`.
  Adam(const char* name, std::map<std::string, double> defaults, bool decoupled, bool master_weights);
  void validate(const std::map<std::string, double>& o) const override;
  /// One fused Adam update of p.
  void update(const Tensor& p, const Tensor& g, ParamState& st, const std::map<std::string, double>& o) override;

 private:
  bool decoupled_ = false;
};

/// Adam with decoupled weight decay (p *= 1 - lr * weight_decay first).
/// Takes AdamOptions too, since chained setters return AdamOptions&; its
/// weight_decay is then whatever was set (AdamWOptions starts at 1e-2).
class AdamW : public Adam {
 public:
  /// AdamW over `params` (AdamWOptions by default: weight decay 1e-2).
  AdamW(std::vector<Tensor> params, const AdamOptions& options = AdamWOptions());
  /// AdamW over parameter groups; options a group leaves out come from `defaults`.
  AdamW(std::vector<ParamGroup> groups, const AdamOptions& defaults = AdamWOptions());
};

/// RMSprop (torch.optim.RMSprop): squared-gradient average, optional momentum and centring.
class RMSprop : public Optimizer {
 public:
  /// RMSprop over `params` with `options` (ValueError naming an invalid option).
  RMSprop(std::vector<Tensor> params, const RMSpropOptions& options = RMSpropOptions());
  /// RMSprop over parameter groups; options a group leaves out come from `defaults`.
  RMSprop(std::vector<ParamGroup> groups, const RMSpropOptions& defaults = RMSpropOptions());

 protected:
  /// Checks lr, alpha, eps, weight_decay and momentum.
  void validate(const std::map<std::string, double>& o) const override;
  /// One fused RMSprop update of p.
  void update(const Tensor& p, const Tensor& g, ParamState& st, const std::map<std::string, double>& o) override;
};

/// Adagrad (torch.optim.Adagrad): per-element learning rates from accumulated squared gradients.
class Adagrad : public Optimizer {
 public:
  /// Adagrad over `params` with `options` (ValueError naming an invalid option).
  Adagrad(std::vector<Tensor> params, const AdagradOptions& options = AdagradOptions());
  /// Adagrad over parameter groups; options a group leaves out come from `defaults`.
  Adagrad(std::vector<ParamGroup> groups, const AdagradOptions& defaults = AdagradOptions());

 protected:
  /// Checks lr, lr_decay, weight_decay, initial_accumulator_value and eps.
  void validate(const std::map<std::string, double>& o) const override;
  /// One fused Adagrad update of p.
  void update(const Tensor& p, const Tensor& g, ParamState& st, const std::map<std::string, double>& o) override;
};

}  // namespace vnn::optim
