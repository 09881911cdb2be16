// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Learning-rate schedulers after torch.optim.lr_scheduler, with PyTorch's
// formulas (the recursive forms its step() uses, closed forms where it uses
// them). Constructing one performs PyTorch's initial step (epoch 0).
//
//   vnn::optim::StepLR sched(opt, 30, 0.1);
//   for (epoch...) { train(); sched.step(); }
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "vnn/optim/optimizer.h"

namespace vnn::optim {

/// The base of the epoch-based learning-rate schedulers: step(), last lr, state_dict (torch's LRScheduler).
class LRScheduler {
 public:
  /// Virtual: schedulers are used through base references.
  virtual ~LRScheduler() = default;
  /// Advances one epoch (or batch, for OneCycleLR) and sets every group's lr.
  virtual void step();
  /// The lr of every group after the latest step.
  std::vector<double> get_last_lr() const { return last_lr_; }
  /// The epoch counter (0 after construction's initial step).
  int64_t last_epoch() const { return last_epoch_; }
  /// The groups' initial lrs (the first scheduler's view of them), the schedule's starting points.
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  /// The optimizer whose lrs this scheduler sets.
  Optimizer& optimizer() const { return optimizer_; }
  /// PyTorch's _update_lr(epoch): jumps to `epoch` and sets the lrs from the
  /// closed form where the scheduler has one, else from get_lr() (what
  /// SequentialLR does at a milestone).
  void set_epoch(int64_t epoch);

  /// "last_epoch", "step_count", "base_lrs.<i>", "last_lr.<i>" and the
  /// scheduler's own settings, as 0-dim float64 tensors.
  virtual StateDict state_dict() const;
  /// Restores state_dict(); a missing key or invalid value throws
  /// ValueError naming it, and leaves the scheduler unchanged.
  virtual void load_state_dict(const StateDict& dict);
  /// The halves of load_state_dict (see Optimizer::check_state_dict):
  /// check_state_dict validates every key and value without changing the
  /// scheduler; apply_state_dict installs what it returned.
  using LoadedState = std::map<std::string, double>;
  /// Validates every key and value of `dict` without changing the scheduler.
  virtual LoadedState check_state_dict(const StateDict& dict) const;
  /// Installs what check_state_dict returned.
  virtual void apply_state_dict(const LoadedState& loaded);

 protected:
  friend class SequentialLR;
  friend class ChainedScheduler;
  /// SequentialLR's recursive_undo: one epoch back (a composite scheduler undoes its children).
  virtual void undo_epoch() { --last_epoch_; }
  /// The base lrs are the groups' initial lrs (ParamGroup::initial_lr, set by the first scheduler). last_epoch = -1
  /// starts fresh; another value only sets the epoch counter (to resume a
  /// schedule exactly, load_state_dict a saved one instead).
  LRScheduler(Optimizer& optimizer, const char* name, int64_t last_epoch);
  /// PyTorch's _initial_step, called at the end of subclass constructors.
  void initial_step();
  /// The new lr of every group for last_epoch_ (already advanced).
  virtual std::vector<double> get_lr() = 0;
  /// The lrs at last_epoch_ from base_lrs_ alone (PyTorch's _get_closed_form_lr); empty where there is none.
  virtual std::vector<double> closed_form_lr() const { return {}; }
  /// The scheduler's own settings, saved and restored with the state.
  virtual std::vector<std::pair<std::string, double*>> settings() { return {}; }
  /// f(base lr) for every group.
  std::vector<double> map_base(const std::function<double(double)>& f) const {
    std::vector<double> out;
    for (double b : base_lrs_) out.push_back(f(b));
    return out;
  }
  /// Group i's current lr.
  double group_lr(size_t i) const { return optimizer_.param_groups()[i].lr(); }

  /// The optimizer whose groups' lrs are set.
  Optimizer& optimizer_;
  /// The scheduler's name, for error messages and state keys.
  const char* name_;
  /// Epochs (or batches) stepped so far; -1 before the initial step.
  int64_t last_epoch_;
  /// Number of step() calls, as PyTorch's _step_count.
  int64_t step_count_ = 0;
  /// The groups' lrs at construction.
  std::vector<double> base_lrs_;
  /// The lrs set by the latest step.
  std::vector<double> last_lr_;
  /// True during the step construction performs (PyTorch's _is_initial).
  bool initial_ = false;
};

/// lr *= gamma every step_size epochs.
class StepLR : public LRScheduler {
 public:
  /// Multiplies the lr by `gamma` every `step_size` epochs.
  StepLR(Optimizer& opt, int64_t step_size, double gamma = 0.1, int64_t last_epoch = -1);
 protected:
  /// PyTorch's recursive StepLR formula.
  std::vector<double> get_lr() override;
  /// step_size and gamma.
  std::vector<std::pair<std::string, double*>> settings() override;
  /// PyTorch's closed form, used by set_epoch.
  std::vector<double> closed_form_lr() const override;
 private:
  double step_size_, gamma_;
};

/// lr *= gamma at each milestone (a milestone listed k times: gamma^k).
class MultiStepLR : public LRScheduler {
 public:
  /// Multiplies the lr by `gamma` at each of `milestones` (epochs, any order).
  MultiStepLR(Optimizer& opt, std::vector<int64_t> milestones, double gamma = 0.1, int64_t last_epoch = -1);
 protected:
  /// PyTorch's recursive MultiStepLR formula.
  std::vector<double> get_lr() override;
  /// gamma (the milestones are saved as well).
  std::vector<std::pair<std::string, double*>> settings() override;
  /// PyTorch's closed form, used by set_epoch.
  std::vector<double> closed_form_lr() const override;
 private:
  std::vector<int64_t> milestones_;
  double gamma_;
};

/// lr *= gamma every epoch.
class ExponentialLR : public LRScheduler {
 public:
  /// Multiplies the lr by `gamma` every epoch.
  ExponentialLR(Optimizer& opt, double gamma, int64_t last_epoch = -1);
 protected:
  /// lr * gamma, or the base lr at epoch 0.
  std::vector<double> get_lr() override;
  /// gamma.
  std::vector<std::pair<std::string, double*>> settings() override;
  /// PyTorch's closed form, used by set_epoch.
  std::vector<double> closed_form_lr() const override;
 private:
  double gamma_;
};

/// Cosine annealing from the base lr to eta_min over T_max epochs (SGDR
/// without restarts), in PyTorch's recursive form.
class CosineAnnealingLR : public LRScheduler {
 public:
  /// Anneals from each base lr to `eta_min` over `T_max` epochs.
  CosineAnnealingLR(Optimizer& opt, int64_t T_max, double eta_min = 0.0, int64_t last_epoch = -1);
 protected:
  /// PyTorch's recursive cosine formula.
  std::vector<double> get_lr() override;
  /// T_max and eta_min.
  std::vector<std::pair<std::string, double*>> settings() override;
  /// PyTorch's closed form, used by set_epoch.
  std::vector<double> closed_form_lr() const override;
 private:
  double t_max_, eta_min_;
};

/// Linear warm-up: factor goes from start_factor to end_factor over
/// total_iters epochs.
class LinearLR : public LRScheduler {
 public:
  /// Scales the base lr by a factor moving linearly from start_factor to end_factor over total_iters epochs.
  LinearLR(Optimizer& opt, double start_factor = 1.0 / 3, double end_factor = 1.0, int64_t total_iters = 5,
           int64_t last_epoch = -1);
 protected:
  /// PyTorch's recursive LinearLR formula.
  std::vector<double> get_lr() override;
  /// start_factor, end_factor and total_iters.
  std::vector<std::pair<std::string, double*>> settings() override;
  /// PyTorch's closed form, used by set_epoch.
  std::vector<double> closed_form_lr() const override;
 private:
  double start_, end_, total_;
};

/// Options of OneCycleLR (torch.optim.lr_scheduler.OneCycleLR's arguments).
struct OneCycleOptions {
  /// Total number of steps, or 0 to use epochs * steps_per_epoch.
  int64_t total_steps = 0;  // or epochs * steps_per_epoch
  /// Number of epochs (with steps_per_epoch, when total_steps is 0).
  int64_t epochs = 0;
  /// Steps per epoch (with epochs, when total_steps is 0).
  int64_t steps_per_epoch = 0;
  /// Fraction of the steps spent increasing the lr (default 0.3).
  double pct_start = 0.3;
  /// Cosine annealing between the ends; false: linear.
  bool anneal_cos = true;  // false: linear
  /// Cycle momentum (or beta1) inversely to the lr.
  bool cycle_momentum = true;
  /// Momentum at the lr peak and at the start/end of the cycle (defaults 0.85, 0.95).
  ///@{
  double base_momentum = 0.85, max_momentum = 0.95;
  ///@}
  /// initial lr = max_lr / div_factor; final lr = initial lr / final_div_factor.
  ///@{
  double div_factor = 25.0, final_div_factor = 1e4;
  ///@}
  /// Three phases (up, down to the initial lr, then annihilation) instead of two.
  bool three_phase = false;
};

/// The 1cycle policy; step() once per batch. Momentum ("momentum", or
/// "beta1" for Adam-like optimizers) cycles inversely when cycle_momentum.
class OneCycleLR : public LRScheduler {
 public:
  /// One cycle peaking at `max_lr` for every group.
  OneCycleLR(Optimizer& opt, double max_lr, const OneCycleOptions& options, int64_t last_epoch = -1);
  /// One cycle peaking at max_lrs[i] for group i (one per group).
  OneCycleLR(Optimizer& opt, std::vector<double> max_lrs, const OneCycleOptions& options, int64_t last_epoch = -1);
 protected:
  /// The lr of the current phase, annealed between its ends.
  std::vector<double> get_lr() override;
  /// The options and the per-group ends, saved with the state.
  std::vector<std::pair<std::string, double*>> settings() override;
 private:
  // lr ends: 0 initial, 1 max, 2 min; momentum ends: 0 base, 1 max.
  struct Phase { double end_step; int start_lr, end_lr, start_m, end_m; };
  double anneal(double start, double end, double pct) const;
  OneCycleOptions o_;
  double total_;
  std::vector<Phase> phases_;
  std::vector<double> lrs_[3];  // initial, max, min lr per group
  const char* momentum_key_ = nullptr;  // "momentum", "beta1" or none
};

/// Divides the lr by 1 / factor when a metric stopped improving for more
/// than `patience` epochs. step(metric) instead of step().
struct ReduceLROnPlateauOptions {
  /// Maximise the metric instead of minimising it (default false).
  bool mode_max = false;  // false: lower is better
  /// Factor the lr is multiplied by on a plateau (default 0.1).
  double factor = 0.1;
  /// Epochs without improvement tolerated before reducing (default 10).
  int64_t patience = 10;
  /// Minimum change counted as an improvement (default 1e-4).
  double threshold = 1e-4;
  /// Threshold relative to the best value (true) or absolute (false).
  bool threshold_rel = true;  // false: absolute threshold
  /// Epochs to wait after a reduction before counting again (default 0).
  int64_t cooldown = 0;
  /// Lower bound of each group's lr: one value for all groups, or one per group.
  std::vector<double> min_lrs = {0.0};  // one for all groups, or one per group
  /// Reductions smaller than this are skipped (default 1e-8).
  double eps = 1e-8;
};

/// Reduces the lr when a metric stops improving (torch's ReduceLROnPlateau); not an LRScheduler.
class ReduceLROnPlateau {
 public:
  /// Watches the groups of `opt` with `options` (ValueError for invalid options).
  ReduceLROnPlateau(Optimizer& opt, const ReduceLROnPlateauOptions& options = {});
  /// Records `metric` for one epoch, reducing the lrs after `patience` bad epochs.
  void step(double metric);
  /// The lr of every group after the latest step.
  std::vector<double> get_last_lr() const { return last_lr_; }
  /// The best metric seen so far.
  double best() const { return best_; }
  /// Epochs since the last improvement.
  int64_t num_bad_epochs() const { return num_bad_epochs_; }
  /// best, num_bad_epochs, cooldown counter, last epoch and the last lrs as 0-dim tensors.
  StateDict state_dict() const;
  /// Restores state_dict() (ValueError naming a missing or invalid key).
  void load_state_dict(const StateDict& dict);

 private:
  bool is_better(double a) const;
  Optimizer& optimizer_;
  ReduceLROnPlateauOptions o_;
  std::vector<double> min_lrs_;
  double best_;
  int64_t num_bad_epochs_ = 0, cooldown_counter_ = 0, last_epoch_ = 0;
  std::vector<double> last_lr_;
};

}  // namespace vnn::optim
