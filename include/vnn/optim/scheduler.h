// Learning-rate schedulers after torch.optim.lr_scheduler, with PyTorch's
// formulas (the recursive forms its step() uses, closed forms where it uses
// them). Constructing one performs PyTorch's initial step (epoch 0).
//
//   vnn::optim::StepLR sched(opt, 30, 0.1);
//   for (epoch...) { train(); sched.step(); }
#pragma once
#include <map>
#include <string>
#include <vector>

#include "vnn/optim/optimizer.h"

namespace vnn::optim {

class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  // Advances one epoch (or batch, for OneCycleLR) and sets every group's lr.
  virtual void step();
  std::vector<double> get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }
  const std::vector<double>& base_lrs() const { return base_lrs_; }

  // "last_epoch", "step_count", "base_lrs.<i>", "last_lr.<i>" and the
  // scheduler's own settings, as 0-dim float64 tensors.
  virtual StateDict state_dict() const;
  // Restores state_dict(); a missing key or invalid value throws
  // ValueError naming it, and leaves the scheduler unchanged.
  virtual void load_state_dict(const StateDict& dict);
  // The halves of load_state_dict (see Optimizer::check_state_dict):
  // check_state_dict validates every key and value without changing the
  // scheduler; apply_state_dict installs what it returned.
  using LoadedState = std::map<std::string, double>;
  LoadedState check_state_dict(const StateDict& dict) const;
  void apply_state_dict(const LoadedState& loaded);

 protected:
  // The base lrs are the groups' lrs at construction. last_epoch = -1
  // starts fresh; another value only sets the epoch counter (to resume a
  // schedule exactly, load_state_dict a saved one instead).
  LRScheduler(Optimizer& optimizer, const char* name, int64_t last_epoch);
  // PyTorch's _initial_step, called at the end of subclass constructors.
  void initial_step();
  // The new lr of every group for last_epoch_ (already advanced).
  virtual std::vector<double> get_lr() = 0;
  // The scheduler's own settings, saved and restored with the state.
  virtual std::vector<std::pair<std::string, double*>> settings() { return {}; }
  double group_lr(size_t i) const { return optimizer_.param_groups()[i].lr(); }

  Optimizer& optimizer_;
  const char* name_;
  int64_t last_epoch_;
  int64_t step_count_ = 0;
  std::vector<double> base_lrs_;
  std::vector<double> last_lr_;
};

// lr *= gamma every step_size epochs.
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& opt, int64_t step_size, double gamma = 0.1, int64_t last_epoch = -1);
 protected:
  std::vector<double> get_lr() override;
  std::vector<std::pair<std::string, double*>> settings() override;
 private:
  double step_size_, gamma_;
};

// lr *= gamma at each milestone (a milestone listed k times: gamma^k).
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& opt, std::vector<int64_t> milestones, double gamma = 0.1, int64_t last_epoch = -1);
 protected:
  std::vector<double> get_lr() override;
  std::vector<std::pair<std::string, double*>> settings() override;
 private:
  std::vector<int64_t> milestones_;
  double gamma_;
};

// lr *= gamma every epoch.
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& opt, double gamma, int64_t last_epoch = -1);
 protected:
  std::vector<double> get_lr() override;
  std::vector<std::pair<std::string, double*>> settings() override;
 private:
  double gamma_;
};

// Cosine annealing from the base lr to eta_min over T_max epochs (SGDR
// without restarts), in PyTorch's recursive form.
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& opt, int64_t T_max, double eta_min = 0.0, int64_t last_epoch = -1);
 protected:
  std::vector<double> get_lr() override;
  std::vector<std::pair<std::string, double*>> settings() override;
 private:
  double t_max_, eta_min_;
};

// Linear warm-up: factor goes from start_factor to end_factor over
// total_iters epochs.
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& opt, double start_factor = 1.0 / 3, double end_factor = 1.0, int64_t total_iters = 5,
           int64_t last_epoch = -1);
 protected:
  std::vector<double> get_lr() override;
  std::vector<std::pair<std::string, double*>> settings() override;
 private:
  double start_, end_, total_;
};

struct OneCycleOptions {
  int64_t total_steps = 0;  // or epochs * steps_per_epoch
  int64_t epochs = 0;
  int64_t steps_per_epoch = 0;
  double pct_start = 0.3;
  bool anneal_cos = true;  // false: linear
  bool cycle_momentum = true;
  double base_momentum = 0.85, max_momentum = 0.95;
  double div_factor = 25.0, final_div_factor = 1e4;
  bool three_phase = false;
};

// The 1cycle policy; step() once per batch. Momentum ("momentum", or
// "beta1" for Adam-like optimizers) cycles inversely when cycle_momentum.
class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& opt, double max_lr, const OneCycleOptions& options, int64_t last_epoch = -1);
  OneCycleLR(Optimizer& opt, std::vector<double> max_lrs, const OneCycleOptions& options, int64_t last_epoch = -1);
 protected:
  std::vector<double> get_lr() override;
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

// Divides the lr by 1 / factor when a metric stopped improving for more
// than `patience` epochs. step(metric) instead of step().
struct ReduceLROnPlateauOptions {
  bool mode_max = false;  // false: lower is better
  double factor = 0.1;
  int64_t patience = 10;
  double threshold = 1e-4;
  bool threshold_rel = true;  // false: absolute threshold
  int64_t cooldown = 0;
  std::vector<double> min_lrs = {0.0};  // one for all groups, or one per group
  double eps = 1e-8;
};

class ReduceLROnPlateau {
 public:
  ReduceLROnPlateau(Optimizer& opt, const ReduceLROnPlateauOptions& options = {});
  void step(double metric);
  std::vector<double> get_last_lr() const { return last_lr_; }
  double best() const { return best_; }
  int64_t num_bad_epochs() const { return num_bad_epochs_; }
  StateDict state_dict() const;
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
