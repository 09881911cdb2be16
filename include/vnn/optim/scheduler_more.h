// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// More learning-rate schedulers after torch.optim.lr_scheduler: LambdaLR,
// MultiplicativeLR, ConstantLR, PolynomialLR, CosineAnnealingWarmRestarts,
// CyclicLR, and the composites SequentialLR and ChainedScheduler.
//
//   auto warm = std::make_shared<vnn::optim::LinearLR>(opt, 0.1, 1.0, 5);
//   auto cos = std::make_shared<vnn::optim::CosineAnnealingLR>(opt, 95);
//   vnn::optim::SequentialLR sched(opt, {warm, cos}, {5});
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "vnn/optim/scheduler.h"

namespace vnn::optim {

/// A function of the epoch, as LambdaLR and MultiplicativeLR take.
using LRLambda = std::function<double(int64_t)>;

/// lr = base lr * lambda(epoch); one lambda for all groups or one per group. Not saved by state_dict (a function).
class LambdaLR : public LRScheduler {
 public:
  /// One lambda for every group.
  LambdaLR(Optimizer& opt, LRLambda lr_lambda, int64_t last_epoch = -1);
  /// One lambda per group (ValueError when the counts differ).
  LambdaLR(Optimizer& opt, std::vector<LRLambda> lr_lambdas, int64_t last_epoch = -1);
 protected:
  /// base lr * lambda(last_epoch).
  std::vector<double> get_lr() override;
 private:
  std::vector<LRLambda> lambdas_;
};

/// lr *= lambda(epoch) every epoch after the first; one lambda for all groups or one per group.
class MultiplicativeLR : public LRScheduler {
 public:
  /// One lambda for every group.
  MultiplicativeLR(Optimizer& opt, LRLambda lr_lambda, int64_t last_epoch = -1);
  /// One lambda per group (ValueError when the counts differ).
  MultiplicativeLR(Optimizer& opt, std::vector<LRLambda> lr_lambdas, int64_t last_epoch = -1);
 protected:
  /// lr * lambda(last_epoch), or lr on the initial step.
  std::vector<double> get_lr() override;
 private:
  std::vector<LRLambda> lambdas_;
};

/// lr = base lr * factor until epoch total_iters, then base lr.
class ConstantLR : public LRScheduler {
 public:
  /// factor in [0, 1] (default 1/3) for the first total_iters epochs (default 5).
  ConstantLR(Optimizer& opt, double factor = 1.0 / 3, int64_t total_iters = 5, int64_t last_epoch = -1);
 protected:
  /// PyTorch's recursive ConstantLR formula.
  std::vector<double> get_lr() override;
  /// base lr * (factor, or 1 from total_iters on).
  std::vector<double> closed_form_lr() const override;
  /// factor and total_iters.
  std::vector<std::pair<std::string, double*>> settings() override;
 private:
  double factor_, total_;
};

/// lr = base lr * (1 - min(epoch, total_iters) / total_iters)^power.
class PolynomialLR : public LRScheduler {
 public:
  /// Decays to 0 over total_iters epochs (default 5) with `power` (default 1).
  PolynomialLR(Optimizer& opt, int64_t total_iters = 5, double power = 1.0, int64_t last_epoch = -1);
 protected:
  /// PyTorch's recursive PolynomialLR formula.
  std::vector<double> get_lr() override;
  /// The closed form above.
  std::vector<double> closed_form_lr() const override;
  /// total_iters and power.
  std::vector<std::pair<std::string, double*>> settings() override;
 private:
  double total_, power_;
};

/// SGDR: cosine annealing from the base lr to eta_min over T_i epochs, restarting with T_i *= T_mult.
class CosineAnnealingWarmRestarts : public LRScheduler {
 public:
  /// First period T_0 (> 0) epochs, each next one T_mult (>= 1) times longer.
  CosineAnnealingWarmRestarts(Optimizer& opt, int64_t T_0, int64_t T_mult = 1, double eta_min = 0.0,
                              int64_t last_epoch = -1);
  /// One epoch on.
  void step() override;
  /// Jumps to a (possibly fractional) epoch >= 0, as PyTorch's step(epoch) (per batch: epoch + i / iters).
  void step(double epoch);
 protected:
  /// eta_min + (base - eta_min) (1 + cos(pi T_cur / T_i)) / 2.
  std::vector<double> get_lr() override;
  /// T_0, T_i, T_mult, eta_min and T_cur.
  std::vector<std::pair<std::string, double*>> settings() override;
 private:
  void apply(double epoch);
  double t_0_, t_i_, t_mult_, eta_min_, t_cur_;
};

/// Options of CyclicLR (torch.optim.lr_scheduler.CyclicLR's arguments).
struct CyclicLROptions {
  /// Iterations in the increasing half of a cycle (default 2000).
  int64_t step_size_up = 2000;
  /// Iterations in the decreasing half; 0: step_size_up.
  int64_t step_size_down = 0;
  /// "triangular", "triangular2" (amplitude halves each cycle) or "exp_range" (gamma^iteration).
  std::string mode = "triangular";
  /// exp_range's base (default 1).
  double gamma = 1.0;
  /// A custom amplitude scale (replaces mode); with scale_mode.
  std::function<double(double)> scale_fn;
  /// "cycle" (scale_fn of the cycle number) or "iterations" (of the iteration); only with scale_fn.
  std::string scale_mode = "cycle";
  /// Cycle momentum (or beta1) inversely to the lr, between base_momentum and max_momentum.
  bool cycle_momentum = true;
  /// Momentum at the lr peak and at the cycle's ends (defaults 0.8, 0.9).
  ///@{
  double base_momentum = 0.8, max_momentum = 0.9;
  ///@}
};

/// Cyclical learning rates between base_lr and max_lr; step() once per batch.
class CyclicLR : public LRScheduler {
 public:
  /// One base and max lr for every group.
  CyclicLR(Optimizer& opt, double base_lr, double max_lr, const CyclicLROptions& options = {},
           int64_t last_epoch = -1);
  /// One base and max lr per group (ValueError when the counts differ).
  CyclicLR(Optimizer& opt, std::vector<double> base_lrs, std::vector<double> max_lrs,
           const CyclicLROptions& options = {}, int64_t last_epoch = -1);
 protected:
  /// The lr (and momentum) of the current point of the cycle.
  std::vector<double> get_lr() override;
  /// The cycle's sizes and gamma.
  std::vector<std::pair<std::string, double*>> settings() override;
 private:
  double scale(double cycle) const;
  CyclicLROptions o_;
  std::vector<double> max_lrs_;
  double total_size_, step_ratio_;
  const char* momentum_key_ = nullptr;  // "momentum", "beta1" or none
};

/// Runs schedulers one after another: schedulers[i] from milestones[i - 1] on (which it starts at its epoch 0).
class SequentialLR : public LRScheduler {
 public:
  /// The schedulers (all of `opt`, none empty) and one milestone fewer than schedulers.
  SequentialLR(Optimizer& opt, std::vector<std::shared_ptr<LRScheduler>> schedulers, std::vector<int64_t> milestones,
               int64_t last_epoch = -1);
  /// Steps the scheduler of the current epoch (or restarts the next one at a milestone).
  void step() override;
  /// Its own counters and each scheduler's under "schedulers.<i>.".
  StateDict state_dict() const override;
  /// Checks its own keys and each scheduler's ("schedulers.<i>." stripped).
  LoadedState check_state_dict(const StateDict& dict) const override;
  /// Installs what check_state_dict returned, in each scheduler too.
  void apply_state_dict(const LoadedState& loaded) override;
 protected:
  /// The current scheduler's last lrs (step() does the work).
  std::vector<double> get_lr() override { return last_lr_; }
  void undo_epoch() override;
 private:
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
};

/// Steps every scheduler at each step(), so that their factors multiply.
class ChainedScheduler : public LRScheduler {
 public:
  /// The schedulers (at least one, all of the same optimizer).
  explicit ChainedScheduler(std::vector<std::shared_ptr<LRScheduler>> schedulers);
  /// Steps each scheduler in order.
  void step() override;
  /// Each scheduler's state under "schedulers.<i>.".
  StateDict state_dict() const override;
  /// Checks its own keys and each scheduler's ("schedulers.<i>." stripped).
  LoadedState check_state_dict(const StateDict& dict) const override;
  /// Installs what check_state_dict returned, in each scheduler too.
  void apply_state_dict(const LoadedState& loaded) override;
 protected:
  /// The groups' lrs (step() does the work).
  std::vector<double> get_lr() override { return last_lr_; }
  void undo_epoch() override;
 private:
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
};

}  // namespace vnn::optim
