// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// LambdaLR, MultiplicativeLR, ConstantLR, PolynomialLR,
// CosineAnnealingWarmRestarts, CyclicLR, SequentialLR and ChainedScheduler:
// PyTorch 2.x's lr_scheduler.py formulas (recursive where its get_lr is,
// closed forms where SequentialLR uses them).
#include "vnn/optim/scheduler_more.h"

#include <algorithm>
#include <cmath>

#include "optim/optim_util.hpp"
#include "vnn/detail/message.h"
#include "vnn/error.h"

namespace vnn::optim {

using util::kPi;

namespace {

std::vector<LRLambda> per_group(const char* who, const Optimizer& opt, std::vector<LRLambda> lambdas) {
  const size_t n = opt.param_groups().size();
  VNN_CHECK(ValueError, lambdas.size() == n, who, ": expected ", n, " lr_lambdas (one per parameter group), got ",
            lambdas.size());
  for (size_t i = 0; i < n; ++i) VNN_CHECK(ValueError, bool(lambdas[i]), who, ": lr_lambda ", i, " is empty");
  return lambdas;
}

std::vector<double> per_group(const char* who, const char* what, const Optimizer& opt, std::vector<double> v) {
  const size_t n = opt.param_groups().size();
  if (v.size() == 1 && n > 1) v.assign(n, v[0]);
  VNN_CHECK(ValueError, v.size() == n, who, ": expected ", n, " values of ", what, " (one per parameter group), got ",
            v.size());
  return v;
}

// The schedulers of a composite: at least one, none null, all of `opt`.
void check_children(const char* who, const Optimizer& opt, const std::vector<std::shared_ptr<LRScheduler>>& s) {
  VNN_CHECK(ValueError, !s.empty(), who, ": expected at least one scheduler, got none");
  for (size_t i = 0; i < s.size(); ++i) {
    VNN_CHECK(ValueError, s[i] != nullptr, who, ": scheduler ", i, " is null");
    VNN_CHECK(ValueError, &s[i]->optimizer() == &opt, who, ": scheduler ", i,
              " belongs to another optimizer; every scheduler must adjust the same optimizer");
  }
}

std::string child_prefix(size_t i) { return "schedulers." + std::to_string(i) + "."; }

// The composite's own state_dict followed by each child's under "schedulers.<i>.".
StateDict with_children(StateDict own, const std::vector<std::shared_ptr<LRScheduler>>& s) {
  for (size_t i = 0; i < s.size(); ++i)
    for (auto& [k, v] : s[i]->state_dict()) own.emplace_back(child_prefix(i) + k, v);
  return own;
}

// Each child's check_state_dict over its keys (prefix stripped), merged back under the prefix.
void check_with_children(const StateDict& dict, const std::vector<std::shared_ptr<LRScheduler>>& s,
                         LRScheduler::LoadedState& out) {
  for (size_t i = 0; i < s.size(); ++i) {
    const std::string p = child_prefix(i);
    StateDict sub;
    for (auto& [k, v] : dict)
      if (k.compare(0, p.size(), p) == 0) sub.emplace_back(k.substr(p.size()), v);
    for (auto& [k, v] : s[i]->check_state_dict(sub)) out[p + k] = v;
  }
}

void apply_to_children(const LRScheduler::LoadedState& loaded, const std::vector<std::shared_ptr<LRScheduler>>& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    const std::string p = child_prefix(i);
    LRScheduler::LoadedState sub;
    for (auto& [k, v] : loaded)
      if (k.compare(0, p.size(), p) == 0) sub[k.substr(p.size())] = v;
    s[i]->apply_state_dict(sub);
  }
}

}  // namespace

// ---- LambdaLR / MultiplicativeLR ------------------------------------------------------

LambdaLR::LambdaLR(Optimizer& opt, LRLambda lr_lambda, int64_t last_epoch)
    : LambdaLR(opt, std::vector<LRLambda>(opt.param_groups().size(), std::move(lr_lambda)), last_epoch) {}

LambdaLR::LambdaLR(Optimizer& opt, std::vector<LRLambda> lr_lambdas, int64_t last_epoch)
    : LRScheduler(opt, "LambdaLR", last_epoch), lambdas_(per_group("LambdaLR", opt, std::move(lr_lambdas))) {
  initial_step();
}

std::vector<double> LambdaLR::get_lr() {
  std::vector<double> out;
  for (size_t i = 0; i < base_lrs_.size(); ++i) out.push_back(base_lrs_[i] * lambdas_[i](last_epoch_));
  return out;
}

MultiplicativeLR::MultiplicativeLR(Optimizer& opt, LRLambda lr_lambda, int64_t last_epoch)
    : MultiplicativeLR(opt, std::vector<LRLambda>(opt.param_groups().size(), std::move(lr_lambda)), last_epoch) {}

MultiplicativeLR::MultiplicativeLR(Optimizer& opt, std::vector<LRLambda> lr_lambdas, int64_t last_epoch)
    : LRScheduler(opt, "MultiplicativeLR", last_epoch),
      lambdas_(per_group("MultiplicativeLR", opt, std::move(lr_lambdas))) {
  initial_step();
}

std::vector<double> MultiplicativeLR::get_lr() {
  std::vector<double> out;
  for (size_t i = 0; i < base_lrs_.size(); ++i)
    out.push_back(initial_ ? group_lr(i) : group_lr(i) * lambdas_[i](last_epoch_));
  return out;
}

// ---- ConstantLR / PolynomialLR ----------------------------------------------------------

ConstantLR::ConstantLR(Optimizer& opt, double factor, int64_t total_iters, int64_t last_epoch)
    : LRScheduler(opt, "ConstantLR", last_epoch), factor_(factor), total_(double(total_iters)) {
  VNN_CHECK(ValueError, factor >= 0 && factor <= 1, "ConstantLR: factor must be in [0, 1], got ", factor);
  VNN_CHECK(ValueError, total_iters >= 0, "ConstantLR: total_iters must be >= 0, got ", total_iters);
  initial_step();
}

std::vector<double> ConstantLR::get_lr() {
  std::vector<double> out;
  for (size_t i = 0; i < base_lrs_.size(); ++i) {
    const double lr = group_lr(i);
    out.push_back(last_epoch_ == 0 ? lr * factor_ : double(last_epoch_) != total_ ? lr : lr * (1.0 / factor_));
  }
  return out;
}

std::vector<double> ConstantLR::closed_form_lr() const {
  const double f = double(last_epoch_) >= total_ ? 1.0 : factor_;
  return map_base([&](double base) { return base * f; });
}

std::vector<std::pair<std::string, double*>> ConstantLR::settings() {
  return {{"factor", &factor_}, {"total_iters", &total_}};
}

PolynomialLR::PolynomialLR(Optimizer& opt, int64_t total_iters, double power, int64_t last_epoch)
    : LRScheduler(opt, "PolynomialLR", last_epoch), total_(double(total_iters)), power_(power) {
  VNN_CHECK(ValueError, total_iters > 0, "PolynomialLR: total_iters must be > 0, got ", total_iters);
  initial_step();
}

std::vector<double> PolynomialLR::get_lr() {
  const double e = double(last_epoch_);
  const bool hold = initial_ || e > total_;
  const double decay = hold ? 1.0 : std::pow((1.0 - e / total_) / (1.0 - (e - 1) / total_), power_);
  std::vector<double> out;
  for (size_t i = 0; i < base_lrs_.size(); ++i) out.push_back(group_lr(i) * decay);
  return out;
}

std::vector<double> PolynomialLR::closed_form_lr() const {
  const double f = std::pow(1.0 - std::min(total_, double(last_epoch_)) / total_, power_);
  return map_base([&](double base) { return base * f; });
}

std::vector<std::pair<std::string, double*>> PolynomialLR::settings() {
  return {{"total_iters", &total_}, {"power", &power_}};
}

// ---- CosineAnnealingWarmRestarts --------------------------------------------------------------

CosineAnnealingWarmRestarts::CosineAnnealingWarmRestarts(Optimizer& opt, int64_t T_0, int64_t T_mult, double eta_min,
                                                         int64_t last_epoch)
    : LRScheduler(opt, "CosineAnnealingWarmRestarts", last_epoch),
      t_0_(double(T_0)), t_i_(double(T_0)), t_mult_(double(T_mult)), eta_min_(eta_min), t_cur_(double(last_epoch)) {
  VNN_CHECK(ValueError, T_0 > 0, "CosineAnnealingWarmRestarts: T_0 must be a positive integer, got ", T_0);
  VNN_CHECK(ValueError, T_mult >= 1, "CosineAnnealingWarmRestarts: T_mult must be an integer >= 1, got ", T_mult);
  initial_step();
}

void CosineAnnealingWarmRestarts::step() {
  if (last_epoch_ < 0) return step(0.0);
  t_cur_ += 1;
  if (t_cur_ >= t_i_) {
    t_cur_ = std::fmod(t_cur_, t_i_);
    t_i_ *= t_mult_;
  }
  apply(double(last_epoch_ + 1));
}

void CosineAnnealingWarmRestarts::step(double epoch) {
  VNN_CHECK(ValueError, epoch >= 0 && std::isfinite(epoch),
            "CosineAnnealingWarmRestarts.step: expected a non-negative epoch, got ", epoch);
  if (epoch >= t_0_) {
    if (t_mult_ == 1) {
      t_cur_ = std::fmod(epoch, t_0_);
    } else {
      const double n = std::floor(std::log(epoch / t_0_ * (t_mult_ - 1) + 1) / std::log(t_mult_));
      t_cur_ = epoch - t_0_ * (std::pow(t_mult_, n) - 1) / (t_mult_ - 1);
      t_i_ = t_0_ * std::pow(t_mult_, n);
    }
  } else {
    t_i_ = t_0_;
    t_cur_ = epoch;
  }
  apply(epoch);
}

void CosineAnnealingWarmRestarts::apply(double epoch) {
  last_epoch_ = int64_t(std::floor(epoch));
  ++step_count_;
  last_lr_ = get_lr();
  auto& groups = optimizer_.param_groups();
  for (size_t i = 0; i < groups.size() && i < last_lr_.size(); ++i) groups[i].set_lr(last_lr_[i]);
}

std::vector<double> CosineAnnealingWarmRestarts::get_lr() {
  const double c = (1 + std::cos(kPi * t_cur_ / t_i_)) / 2;
  return map_base([&](double base) { return eta_min_ + (base - eta_min_) * c; });
}

std::vector<std::pair<std::string, double*>> CosineAnnealingWarmRestarts::settings() {
  return {{"T_0", &t_0_}, {"T_i", &t_i_}, {"T_mult", &t_mult_}, {"eta_min", &eta_min_}, {"T_cur", &t_cur_}};
}

// ---- CyclicLR -------------------------------------------------------------------------------------

CyclicLR::CyclicLR(Optimizer& opt, double base_lr, double max_lr, const CyclicLROptions& options, int64_t last_epoch)
    : CyclicLR(opt, std::vector<double>{base_lr}, std::vector<double>{max_lr}, options, last_epoch) {}

CyclicLR::CyclicLR(Optimizer& opt, std::vector<double> base_lrs, std::vector<double> max_lrs,
                   const CyclicLROptions& options, int64_t last_epoch)
    : LRScheduler(opt, "CyclicLR", last_epoch), o_(options), max_lrs_(per_group("CyclicLR", "max_lr", opt, max_lrs)) {
  base_lrs = per_group("CyclicLR", "base_lr", opt, std::move(base_lrs));
  VNN_CHECK(ValueError, o_.step_size_up > 0 && o_.step_size_down >= 0, "CyclicLR: step_size_up must be > 0 and ",
            "step_size_down >= 0 (0: step_size_up), got ", o_.step_size_up, " and ", o_.step_size_down);
  const double up = double(o_.step_size_up), down = o_.step_size_down ? double(o_.step_size_down) : up;
  total_size_ = up + down;
  step_ratio_ = up / total_size_;
  if (!o_.scale_fn) {
    VNN_CHECK(ValueError, o_.mode == "triangular" || o_.mode == "triangular2" || o_.mode == "exp_range",
              "CyclicLR: mode must be \"triangular\", \"triangular2\" or \"exp_range\" (or give a scale_fn), got \"",
              o_.mode, "\"");
    o_.scale_mode = o_.mode == "exp_range" ? "iterations" : "cycle";
  }
  VNN_CHECK(ValueError, o_.scale_mode == "cycle" || o_.scale_mode == "iterations",
            "CyclicLR: scale_mode must be \"cycle\" or \"iterations\", got \"", o_.scale_mode, "\"");
  auto& groups = opt.param_groups();
  if (o_.cycle_momentum) {
    const auto& d = opt.defaults();
    momentum_key_ = d.count("momentum") ? "momentum" : d.count("beta1") ? "beta1" : nullptr;
    VNN_CHECK(ValueError, momentum_key_, "CyclicLR: optimizer ", opt.name(),
              " has no momentum or beta1 to cycle; pass cycle_momentum = false");
  }
  if (last_epoch == -1)
    for (size_t i = 0; i < groups.size(); ++i) {
      groups[i].set_lr(base_lrs[i]);
      if (momentum_key_) groups[i].options[momentum_key_] = o_.max_momentum;
    }
  base_lrs_ = std::move(base_lrs);
  initial_step();
}

double CyclicLR::scale(double x) const {
  if (o_.scale_fn) return o_.scale_fn(x);
  if (o_.mode == "triangular2") return 1.0 / std::pow(2.0, x - 1);
  if (o_.mode == "exp_range") return std::pow(o_.gamma, x);
  return 1.0;
}

std::vector<double> CyclicLR::get_lr() {
  const double e = double(last_epoch_);
  const double cycle = std::floor(1 + e / total_size_);
  const double x = 1.0 + e / total_size_ - cycle;
  const double factor = x <= step_ratio_ ? x / step_ratio_ : (x - 1) / (step_ratio_ - 1);
  const double s = scale(o_.scale_mode == "cycle" ? cycle : e);
  std::vector<double> out;
  for (size_t i = 0; i < base_lrs_.size(); ++i) out.push_back(base_lrs_[i] + (max_lrs_[i] - base_lrs_[i]) * factor * s);
  if (momentum_key_)
    for (auto& g : optimizer_.param_groups())
      g.options[momentum_key_] = o_.max_momentum - (o_.max_momentum - o_.base_momentum) * factor * s;
  return out;
}

std::vector<std::pair<std::string, double*>> CyclicLR::settings() {
  return {{"total_size", &total_size_}, {"step_ratio", &step_ratio_}, {"gamma", &o_.gamma}};
}

// ---- SequentialLR ---------------------------------------------------------------------------------

SequentialLR::SequentialLR(Optimizer& opt, std::vector<std::shared_ptr<LRScheduler>> schedulers,
                           std::vector<int64_t> milestones, int64_t last_epoch)
    : LRScheduler(opt, "SequentialLR", last_epoch), schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
  check_children("SequentialLR", opt, schedulers_);
  VNN_CHECK(ValueError, milestones_.size() + 1 == schedulers_.size(), "SequentialLR: expected ",
            schedulers_.size() - 1, " milestones (one fewer than schedulers), got ", milestones_.size());
  last_epoch_ = last_epoch + 1;
  // Building the schedulers stepped each once: back to the initial lrs and
  // epochs, then the first scheduler's initial step.
  for (auto& g : opt.param_groups()) g.set_lr(*g.initial_lr);
  for (auto& s : schedulers_) s->undo_epoch();
  const size_t idx = size_t(std::upper_bound(milestones_.begin(), milestones_.end(), 0) - milestones_.begin());
  schedulers_[idx]->initial_step();
  last_lr_ = schedulers_[idx]->get_last_lr();
}

void SequentialLR::undo_epoch() {
  for (auto& s : schedulers_) s->undo_epoch();
}

void SequentialLR::step() {
  ++last_epoch_;
  ++step_count_;
  const size_t idx =
      size_t(std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin());
  LRScheduler& s = *schedulers_[idx];
  if (idx > 0 && milestones_[idx - 1] == last_epoch_)
    s.set_epoch(0);
  else
    s.step();
  last_lr_ = s.get_last_lr();
}

StateDict SequentialLR::state_dict() const { return with_children(LRScheduler::state_dict(), schedulers_); }

LRScheduler::LoadedState SequentialLR::check_state_dict(const StateDict& dict) const {
  LoadedState out = LRScheduler::check_state_dict(dict);
  check_with_children(dict, schedulers_, out);
  return out;
}

void SequentialLR::apply_state_dict(const LoadedState& loaded) {
  LRScheduler::apply_state_dict(loaded);
  apply_to_children(loaded, schedulers_);
}

// ---- ChainedScheduler --------------------------------------------------------------------------------

namespace {
Optimizer& first_optimizer(const std::vector<std::shared_ptr<LRScheduler>>& s) {
  VNN_CHECK(ValueError, !s.empty() && s[0], "ChainedScheduler: expected at least one scheduler, got none");
  return s[0]->optimizer();
}
}  // namespace

ChainedScheduler::ChainedScheduler(std::vector<std::shared_ptr<LRScheduler>> schedulers)
    : LRScheduler(first_optimizer(schedulers), "ChainedScheduler", 0), schedulers_(std::move(schedulers)) {
  check_children("ChainedScheduler", optimizer_, schedulers_);
  for (auto& g : optimizer_.param_groups()) last_lr_.push_back(g.lr());
}

void ChainedScheduler::undo_epoch() {
  for (auto& s : schedulers_) s->undo_epoch();
}

void ChainedScheduler::step() {
  for (auto& s : schedulers_) s->step();
  ++last_epoch_;
  ++step_count_;
  last_lr_.clear();
  for (auto& g : optimizer_.param_groups()) last_lr_.push_back(g.lr());
}

StateDict ChainedScheduler::state_dict() const { return with_children(LRScheduler::state_dict(), schedulers_); }

LRScheduler::LoadedState ChainedScheduler::check_state_dict(const StateDict& dict) const {
  LoadedState out = LRScheduler::check_state_dict(dict);
  check_with_children(dict, schedulers_, out);
  return out;
}

void ChainedScheduler::apply_state_dict(const LoadedState& loaded) {
  LRScheduler::apply_state_dict(loaded);
  apply_to_children(loaded, schedulers_);
}

}  // namespace vnn::optim
