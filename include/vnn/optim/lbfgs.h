// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// L-BFGS after torch.optim.LBFGS: one step() runs up to max_iter iterations,
// each evaluating the closure (which zeroes the gradients, computes the
// loss, calls backward and returns the loss), with an optional strong-Wolfe
// line search. As PyTorch's, it reads dot products and norms back to the
// host every iteration, and takes a single parameter group.
//
//   vnn::optim::LBFGS opt(params, vnn::optim::LBFGSOptions(1).line_search_fn("strong_wolfe"));
//   opt.step([&] { opt.zero_grad(); auto loss = f(x); loss.backward(); return loss; });
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "vnn/optim/optimizers.h"

namespace vnn::optim {

/// The closure LBFGS::step calls: re-evaluates the model and returns the loss (after backward).
using LossClosure = std::function<Tensor()>;

/// LBFGS's options (lr 1, max_iter 20, max_eval max_iter * 5 / 4, tolerance_grad 1e-7, tolerance_change 1e-9,
/// history_size 100, line_search_fn none or "strong_wolfe", maximize), as LibTorch's LBFGSOptions.
struct LBFGSOptions {
  /// The option values by name, as they go into the ParamGroup (max_eval 0: max_iter * 5 / 4;
  /// line_search_fn 0: none, 1: "strong_wolfe").
  std::map<std::string, double> values{{"lr", 1.0},         {"max_iter", 20},         {"max_eval", 0},
                                       {"tolerance_grad", 1e-7}, {"tolerance_change", 1e-9}, {"history_size", 100},
                                       {"line_search_fn", 0}, {"maximize", 0}};
  /// LBFGS options with learning rate `lr`.
  explicit LBFGSOptions(double lr = 1.0) { values["lr"] = lr; }
  /// Learning rate (default 1).
  VNN_OPTIM_OPTION(lr, "lr")
  /// Termination tolerance on the largest gradient magnitude (default 1e-7).
  VNN_OPTIM_OPTION(tolerance_grad, "tolerance_grad")
  /// Termination tolerance on changes of the loss or the parameters (default 1e-9).
  VNN_OPTIM_OPTION(tolerance_change, "tolerance_change")
  /// Maximal iterations per step() (default 20).
  auto& max_iter(int64_t v) { values["max_iter"] = double(v); return *this; }
  /// Maximal closure evaluations per step() (default max_iter * 5 / 4).
  auto& max_eval(std::optional<int64_t> v) { values["max_eval"] = v ? double(*v) : 0.0; return *this; }
  /// Update history size (default 100).
  auto& history_size(int64_t v) { values["history_size"] = double(v); return *this; }
  /// "strong_wolfe" or none (ValueError for any other name).
  LBFGSOptions& line_search_fn(std::optional<std::string> v);
  /// Maximise the objective instead of minimising it.
  auto& maximize(bool v) { values["maximize"] = v; return *this; }
};

/// Limited-memory BFGS (torch.optim.LBFGS). Its state (on the first parameter, "state.0."): scalars func_evals,
/// n_iter, t, H_diag, prev_loss and ro.K; flat buffers d, prev_flat_grad, old_dirs.K, old_stps.K (K the history slot).
class LBFGS : public Optimizer {
 public:
  /// LBFGS over `params` (one group; ValueError naming an invalid option).
  LBFGS(std::vector<Tensor> params, const LBFGSOptions& options = LBFGSOptions());
  /// LBFGS over one parameter group (ValueError for more: LBFGS has no per-group options).
  LBFGS(std::vector<ParamGroup> groups, const LBFGSOptions& defaults = LBFGSOptions());
  /// Runs up to max_iter iterations, calling `closure` for each evaluation; returns the first loss.
  Tensor step(const LossClosure& closure);

 protected:
  /// func_evals, n_iter, t, H_diag, prev_loss, ro.K.
  bool is_scalar_state(const std::string& name) const override;
  /// The flat buffers hold every parameter's elements.
  bool state_shape_ok(const std::string& name, const Tensor& buffer, const Tensor& param) const override;
  /// Checks lr, max_iter, max_eval, the tolerances and history_size.
  void validate(const std::map<std::string, double>& o) const override;
  /// Throws: LBFGS steps need a closure (step(closure)).
  void update(const Tensor& p, const Tensor& g, ParamState& st, const std::map<std::string, double>& o) override;

 private:
  struct Search;
  int64_t numel() const;
  Tensor flat_grad() const;
  void add_to_params(double step, const Tensor& direction);
  double evaluate(const LossClosure& closure, bool maximize);
};

}  // namespace vnn::optim
