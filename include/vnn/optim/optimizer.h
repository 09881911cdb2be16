// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn::optim: optimizers after torch.optim. Each update is one fused device
// kernel per parameter per step (VNN_OP_OPTIMIZER_STEP), so a step never
// reads anything back to the host.
//
//   vnn::optim::Adam opt(model->parameters(), vnn::optim::AdamOptions(1e-3).weight_decay(1e-2));
//   loss.backward(); opt.step(); opt.zero_grad();
//
// Options live per parameter group as name -> value ("lr", "momentum",
// "beta1", ...), which is what schedulers adjust and what state_dict saves.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vnn/backend_abi.h"
#include "vnn/tensor.h"

namespace vnn::optim {

/// A flat checkpoint: ("state.0.exp_avg", tensor), ("param_groups.0.lr",
/// 0-dim float64), ... so it can be written with safetensors as is.
using StateDict = std::vector<std::pair<std::string, Tensor>>;

/// Parameters sharing one set of option values ("lr", "momentum", ...), as a torch param_group.
struct ParamGroup {
  /// The parameters this group updates.
  std::vector<Tensor> params;
  /// Every option of the optimizer for this group, by name (flags are 0 / 1).
  std::map<std::string, double> options;  // every option of the optimizer
  /// The lr the first scheduler built on this group found (PyTorch's group["initial_lr"]):
  /// every scheduler's base lr, so that a second scheduler does not start from the first one's lr.
  std::optional<double> initial_lr;

  /// An empty group.
  ParamGroup() = default;
  /// options: overrides of the optimizer's defaults (others are filled in).
  ParamGroup(std::vector<Tensor> p, std::map<std::string, double> o = {})
      : params(std::move(p)), options(std::move(o)) {}
  /// A group with its own options object (AdamWOptions(lr).weight_decay(0.0), ...), as LibTorch's
  /// OptimizerParamGroup: every option of `o` is the group's, the optimizer's defaults fill in nothing.
  template <class Options, class = decltype(std::declval<const Options&>().values)>
  ParamGroup(std::vector<Tensor> p, const Options& o) : params(std::move(p)), options(o.values) {}
  /// LibTorch's spelling: `groups.emplace_back(params, std::make_unique<AdamWOptions>(AdamWOptions(lr)))`.
  template <class Options, class = decltype(std::declval<const Options&>().values)>
  ParamGroup(std::vector<Tensor> p, const std::unique_ptr<Options>& o)
      : params(std::move(p)), options(o ? o->values : std::map<std::string, double>{}) {}
  /// The group's learning rate (options["lr"]).
  double lr() const { return options.at("lr"); }
  /// Sets the group's learning rate (what schedulers call).
  void set_lr(double lr) { options["lr"] = lr; }
  /// Whether the group has option `name`.
  bool has(const std::string& name) const { return options.count(name) != 0; }
};

/// LibTorch's name for a parameter group.
using OptimizerParamGroup = ParamGroup;

/// Per-parameter state: the step count and the named buffers, created
/// lazily at the first step on the parameter's device.
struct ParamState {
  /// Steps taken on this parameter so far.
  int64_t step = 0;
  /// The optimizer's buffers for this parameter ("exp_avg", "momentum_buffer", ...).
  std::map<std::string, Tensor> buffers;
  /// Host-side scalars of the state that PyTorch keeps as 0-dim tensors
  /// (NAdam's "mu_product", ASGD's "eta" and "mu"); saved as "state.<i>.<name>".
  std::map<std::string, double> scalars;
};

/// The base of SGD, Adam, AdamW, RMSprop and Adagrad: parameter groups, per-parameter state, state_dict.
class Optimizer {
 public:
  /// Virtual: optimizers are used through base references.
  virtual ~Optimizer() = default;
  /// Not copyable (the state is keyed by the parameters).
  Optimizer(const Optimizer&) = delete;
  /// Not assignable.
  Optimizer& operator=(const Optimizer&) = delete;

  /// One fused update of every parameter that has a gradient.
  void step();
  /// set_to_none: drop the gradients (the default, as PyTorch 2); else zero them.
  void zero_grad(bool set_to_none = true);

  /// The parameter groups, writable (schedulers change options here).
  std::vector<ParamGroup>& param_groups() { return groups_; }
  /// The parameter groups.
  const std::vector<ParamGroup>& param_groups() const { return groups_; }
  /// Overrides take the optimizer's defaults for options they leave out; an
  /// unknown option name or an invalid value throws ValueError naming it.
  void add_param_group(const ParamGroup& group);
  /// The optimizer's default options, used for what a group leaves out.
  const std::map<std::string, double>& defaults() const { return defaults_; }
  /// The optimizer's name: "SGD", "Adam", ...
  const char* name() const { return name_; }
  /// Whether float16/bfloat16 parameters are updated through float32 master copies (the options' master_weights).
  bool master_weights() const { return master_weights_; }

  /// The state of a parameter (nullptr before its first step).
  const ParamState* state(const Tensor& param) const;

  /// Every group's options and params (as indices), every state's step and
  /// buffers (copies, so later steps do not change a saved checkpoint).
  StateDict state_dict() const;
  /// Restores what state_dict() returned on an optimizer built over the same
  /// parameter layout; buffers move to each parameter's device and dtype.
  /// Missing, unexpected or wrongly shaped entries throw ValueError /
  /// ShapeError naming the key.
  void load_state_dict(const StateDict& dict);

  /// load_state_dict in two halves, for restores that must be all-or-nothing
  /// (load_training_checkpoint checks every part of a checkpoint before it
  /// changes any): check_state_dict validates dict and builds the new state
  /// (throwing what load_state_dict throws) without touching the optimizer;
  /// apply_state_dict installs it.
  struct LoadedState {
    /// The validated options of each group.
    std::vector<std::map<std::string, double>> options;  // per group
    /// The rebuilt per-parameter state, keyed by parameter.
    std::unordered_map<const void*, ParamState> state;
  };
  /// Validates `dict` and builds the state load_state_dict would install, changing nothing.
  LoadedState check_state_dict(const StateDict& dict) const;
  /// Installs a state check_state_dict built.
  void apply_state_dict(LoadedState loaded);

 protected:
  /// An optimizer called `name` with these option defaults; master_weights: float32 master copies of 16-bit parameters.
  Optimizer(const char* name, std::map<std::string, double> defaults, bool master_weights = false);
  /// Called by the constructors of subclasses (virtual validate is usable then).
  void init(std::vector<ParamGroup> groups);
  /// Whether state entry `name` is a host scalar (ParamState::scalars); load_state_dict reads those keys as one value.
  virtual bool is_scalar_state(const std::string& name) const { (void)name; return false; }
  /// Whether a loaded state buffer fits parameter `param` (by default: the same shape).
  virtual bool state_shape_ok(const std::string& name, const Tensor& buffer, const Tensor& param) const {
    (void)name;
    return buffer.sizes() == param.sizes();
  }
  /// The state of `param`, created empty on first use.
  ParamState& state_of(const Tensor& param) { return state_[param.impl()]; }
  /// Throws ValueError naming the first invalid option.
  virtual void validate(const std::map<std::string, double>& options) const = 0;
  /// Updates one parameter (grad already checked against it, contiguous, on
  /// its device); st.step is already incremented.
  virtual void update(const Tensor& param, const Tensor& grad, ParamState& st,
                      const std::map<std::string, double>& options) = 0;
  // A zero (or value-filled) buffer shaped like param, created on first use
  // and moved along when the parameter changed device or dtype; float32 for
  // float16/bfloat16 parameters (float64 for float64 ones).
  /// The state buffer `name` of param (float32 for 16-bit parameters), created on first use.
  Tensor& buffer(ParamState& st, const Tensor& param, const std::string& name, double init = 0.0);
  // The float32 master copy of a 16-bit parameter (state "master"), made
  // from the parameter at its first step.
  /// The float32 master copy of a 16-bit parameter (state "master").
  Tensor& master(ParamState& st, const Tensor& param);

 private:
  const char* name_;
  std::map<std::string, double> defaults_;
  std::vector<ParamGroup> groups_;
  std::unordered_map<const void*, ParamState> state_;  // keyed by TensorImpl
  bool master_weights_ = false;
};

/// Runs one OPTIMIZER_STEP op: outputs = {param, state...}, inputs = {grad}.
/// Used by the optimizers; exposed for tests of the descriptor.
void fused_step(const Tensor& param, const Tensor& grad, const std::vector<Tensor>& state,
                const std::vector<double>& scalars, const std::vector<int64_t>& ints, const char* name);
/// Runs one OPTIMIZER_STEP op from named parameters (packed by vnn_optimizer_pack); what the optimizers use.
void fused_step(const Tensor& param, const Tensor& grad, const std::vector<Tensor>& state,
                const vnn_optimizer_params& params, const char* name);

}  // namespace vnn::optim
