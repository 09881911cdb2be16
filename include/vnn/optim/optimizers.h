// SGD, Adam, AdamW, RMSprop and Adagrad with PyTorch's update rules and
// defaults. Options are built like torch's C++ API:
//   vnn::optim::SGD opt(params, vnn::optim::SGDOptions(0.1).momentum(0.9).nesterov(true));
#pragma once
#include "vnn/optim/optimizer.h"

namespace vnn::optim {

#define VNN_OPTIM_OPTION(name, key)                          \
  auto& name(double v) { values[key] = v; return *this; }    \
  double name() const { return values.at(key); }

/// The option every optimizer takes besides its numeric ones: float32 master weights for 16-bit parameters.
template <class Derived>
struct MasterWeightsOption {
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
  std::map<std::string, double> values{
      {"lr", 1e-3}, {"momentum", 0}, {"dampening", 0}, {"weight_decay", 0}, {"nesterov", 0}, {"maximize", 0}};
  explicit SGDOptions(double lr = 1e-3) { values["lr"] = lr; }
  VNN_OPTIM_OPTION(lr, "lr")
  VNN_OPTIM_OPTION(momentum, "momentum")
  VNN_OPTIM_OPTION(dampening, "dampening")
  VNN_OPTIM_OPTION(weight_decay, "weight_decay")
  auto& nesterov(bool v) { values["nesterov"] = v; return *this; }
  auto& maximize(bool v) { values["maximize"] = v; return *this; }
};

/// Adam's options (lr, betas, eps, weight_decay, amsgrad, maximize) and master_weights.
struct AdamOptions : MasterWeightsOption<AdamOptions> {
  std::map<std::string, double> values{{"lr", 1e-3}, {"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8},
                                       {"weight_decay", 0}, {"amsgrad", 0}, {"maximize", 0}};
  explicit AdamOptions(double lr = 1e-3) { values["lr"] = lr; }
  VNN_OPTIM_OPTION(lr, "lr")
  VNN_OPTIM_OPTION(eps, "eps")
  VNN_OPTIM_OPTION(weight_decay, "weight_decay")
  auto& betas(double b1, double b2) { values["beta1"] = b1; values["beta2"] = b2; return *this; }
  auto& amsgrad(bool v) { values["amsgrad"] = v; return *this; }
  auto& maximize(bool v) { values["maximize"] = v; return *this; }
};

// AdamW: the same options, weight decay 1e-2 by default (as PyTorch).
struct AdamWOptions : AdamOptions {
  explicit AdamWOptions(double lr = 1e-3) : AdamOptions(lr) { values["weight_decay"] = 1e-2; }
};

/// RMSprop's options (lr, alpha, eps, weight_decay, momentum, centered, maximize) and master_weights.
struct RMSpropOptions : MasterWeightsOption<RMSpropOptions> {
  std::map<std::string, double> values{{"lr", 1e-2},   {"alpha", 0.99},   {"eps", 1e-8},  {"weight_decay", 0},
                                       {"momentum", 0}, {"centered", 0}, {"maximize", 0}};
  explicit RMSpropOptions(double lr = 1e-2) { values["lr"] = lr; }
  VNN_OPTIM_OPTION(lr, "lr")
  VNN_OPTIM_OPTION(alpha, "alpha")
  VNN_OPTIM_OPTION(eps, "eps")
  VNN_OPTIM_OPTION(weight_decay, "weight_decay")
  VNN_OPTIM_OPTION(momentum, "momentum")
  auto& centered(bool v) { values["centered"] = v; return *this; }
  auto& maximize(bool v) { values["maximize"] = v; return *this; }
};

/// Adagrad's options (lr, lr_decay, weight_decay, initial_accumulator_value, eps, maximize) and master_weights.
struct AdagradOptions : MasterWeightsOption<AdagradOptions> {
  std::map<std::string, double> values{{"lr", 1e-2}, {"lr_decay", 0}, {"weight_decay", 0},
                                       {"initial_accumulator_value", 0}, {"eps", 1e-10}, {"maximize", 0}};
  explicit AdagradOptions(double lr = 1e-2) { values["lr"] = lr; }
  VNN_OPTIM_OPTION(lr, "lr")
  VNN_OPTIM_OPTION(lr_decay, "lr_decay")
  VNN_OPTIM_OPTION(weight_decay, "weight_decay")
  VNN_OPTIM_OPTION(initial_accumulator_value, "initial_accumulator_value")
  VNN_OPTIM_OPTION(eps, "eps")
  auto& maximize(bool v) { values["maximize"] = v; return *this; }
};

#undef VNN_OPTIM_OPTION

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, const SGDOptions& options = SGDOptions());
  SGD(std::vector<ParamGroup> groups, const SGDOptions& defaults);

 protected:
  void validate(const std::map<std::string, double>& o) const override;
  void update(const Tensor& p, const Tensor& g, ParamState& st, const std::map<std::string, double>& o) override;
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& options = AdamOptions());
  Adam(std::vector<ParamGroup> groups, const AdamOptions& defaults);

 protected:
  /// Adam (decoupled = false) or AdamW (true) under `name`.
  Adam(const char* name, std::map<std::string, double> defaults, bool decoupled, bool master_weights);
  void validate(const std::map<std::string, double>& o) const override;
  void update(const Tensor& p, const Tensor& g, ParamState& st, const std::map<std::string, double>& o) override;

 private:
  bool decoupled_ = false;
};

// Adam with decoupled weight decay (p *= 1 - lr * weight_decay first).
// Takes AdamOptions too, since chained setters return AdamOptions&; its
// weight_decay is then whatever was set (AdamWOptions starts at 1e-2).
class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, const AdamOptions& options = AdamWOptions());
  AdamW(std::vector<ParamGroup> groups, const AdamOptions& defaults);
};

class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<Tensor> params, const RMSpropOptions& options = RMSpropOptions());
  RMSprop(std::vector<ParamGroup> groups, const RMSpropOptions& defaults);

 protected:
  void validate(const std::map<std::string, double>& o) const override;
  void update(const Tensor& p, const Tensor& g, ParamState& st, const std::map<std::string, double>& o) override;
};

class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<Tensor> params, const AdagradOptions& options = AdagradOptions());
  Adagrad(std::vector<ParamGroup> groups, const AdagradOptions& defaults);

 protected:
  void validate(const std::map<std::string, double>& o) const override;
  void update(const Tensor& p, const Tensor& g, ParamState& st, const std::map<std::string, double>& o) override;
};

}  // namespace vnn::optim
