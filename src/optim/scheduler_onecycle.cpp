// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// OneCycleLR and ReduceLROnPlateau, after PyTorch's lr_scheduler.py.
#include <cmath>
#include <map>

#include "optim/optim_util.hpp"
#include "vnn/detail/message.h"
#include "vnn/error.h"
#include "vnn/optim/scheduler.h"

namespace vnn::optim {

using util::kPi;
using util::scalar64;

// ---- OneCycleLR ---------------------------------------------------------------------

OneCycleLR::OneCycleLR(Optimizer& opt, double max_lr, const OneCycleOptions& options, int64_t last_epoch)
    : OneCycleLR(opt, std::vector<double>(opt.param_groups().size(), max_lr), options, last_epoch) {}

OneCycleLR::OneCycleLR(Optimizer& opt, std::vector<double> max_lrs, const OneCycleOptions& o, int64_t last_epoch)
    : LRScheduler(opt, "OneCycleLR", last_epoch), o_(o) {
  auto& groups = opt.param_groups();
  if (o.total_steps > 0)
    total_ = double(o.total_steps);
  else if (o.epochs > 0 && o.steps_per_epoch > 0)
    total_ = double(o.epochs * o.steps_per_epoch);
  else
    VNN_THROW(ValueError, "OneCycleLR: set total_steps > 0, or epochs > 0 and steps_per_epoch > 0");
  VNN_CHECK(ValueError, o.pct_start >= 0 && o.pct_start <= 1, "OneCycleLR: pct_start must be in [0, 1], got ",
            o.pct_start);
  VNN_CHECK(ValueError, max_lrs.size() == groups.size(), "OneCycleLR: expected ", groups.size(), " max_lr values, got ",
            max_lrs.size());
  for (size_t i = 0; i < groups.size(); ++i) {
    const double initial = max_lrs[i] / o.div_factor;
    lrs_[0].push_back(initial);
    lrs_[1].push_back(max_lrs[i]);
    lrs_[2].push_back(initial / o.final_div_factor);
    if (last_epoch == -1) groups[i].set_lr(initial);
    base_lrs_[i] = initial;
  }
  if (o.cycle_momentum) {
    const auto& d = opt.defaults();
    momentum_key_ = d.count("momentum") ? "momentum" : d.count("beta1") ? "beta1" : nullptr;
    VNN_CHECK(ValueError, momentum_key_, "OneCycleLR: optimizer ", opt.name(),
              " has no momentum or beta1 option; construct with cycle_momentum = false");
    if (last_epoch == -1)
      for (auto& g : groups) g.options[momentum_key_] = o.max_momentum;
  }
  initial_step();
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (o_.anneal_cos) return end + (start - end) / 2.0 * (std::cos(kPi * pct) + 1);
  return (end - start) * pct + start;
}

std::vector<double> OneCycleLR::get_lr() {
  const double step_num = double(last_epoch_);
  if (step_num > total_)
    VNN_THROW(ValueError, "OneCycleLR: tried to step ", last_epoch_, " times; total_steps is ", int64_t(total_));
  auto& groups = optimizer_.param_groups();
  const double moms[2] = {o_.base_momentum, o_.max_momentum};
  // From total_ at each step: load_state_dict may have restored another
  // total_steps than the constructor's.
  const double p = o_.pct_start * total_;
  if (o_.three_phase)
    phases_ = {{p - 1, 0, 1, 1, 0}, {2 * p - 2, 1, 0, 0, 1}, {total_ - 1, 0, 2, 1, 1}};
  else
    phases_ = {{p - 1, 0, 1, 1, 0}, {total_ - 1, 1, 2, 0, 1}};
  std::vector<double> out;
  for (size_t i = 0; i < groups.size(); ++i) {
    double start_step = 0;
    for (size_t k = 0; k < phases_.size(); ++k) {
      const Phase& ph = phases_[k];
      if (step_num <= ph.end_step || k + 1 == phases_.size()) {
        const double pct = (step_num - start_step) / (ph.end_step - start_step);
        out.push_back(anneal(lrs_[ph.start_lr][i], lrs_[ph.end_lr][i], pct));
        if (momentum_key_) groups[i].options[momentum_key_] = anneal(moms[ph.start_m], moms[ph.end_m], pct);
        break;
      }
      start_step = ph.end_step;
    }
  }
  return out;
}

std::vector<std::pair<std::string, double*>> OneCycleLR::settings() {
  std::vector<std::pair<std::string, double*>> s = {{"total_steps", &total_}};
  const char* names[3] = {"initial_lr.", "max_lr.", "min_lr."};
  for (int k = 0; k < 3; ++k)
    for (size_t i = 0; i < lrs_[k].size(); ++i) s.emplace_back(names[k] + std::to_string(i), &lrs_[k][i]);
  return s;
}

// ---- ReduceLROnPlateau ---------------------------------------------------------------

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& opt, const ReduceLROnPlateauOptions& o) : optimizer_(opt), o_(o) {
  const size_t n = opt.param_groups().size();
  if (!(o.factor < 1.0) || !(o.factor >= 0))
    VNN_THROW(ValueError, "ReduceLROnPlateau: factor must be in [0, 1), got ", o.factor);
  if (o.patience < 0 || o.cooldown < 0) VNN_THROW(ValueError, "ReduceLROnPlateau: patience and cooldown must be >= 0");
  if (o.min_lrs.size() == 1)
    min_lrs_.assign(n, o.min_lrs[0]);
  else if (o.min_lrs.size() == n)
    min_lrs_ = o.min_lrs;
  else
    VNN_THROW(ValueError, "ReduceLROnPlateau: expected 1 or ", n, " min_lrs, got ", o.min_lrs.size());
  best_ = o.mode_max ? -INFINITY : INFINITY;
  for (auto& g : opt.param_groups()) last_lr_.push_back(g.lr());
}

bool ReduceLROnPlateau::is_better(double a) const {
  if (!o_.mode_max)
    return o_.threshold_rel ? a < best_ * (1.0 - o_.threshold) : a < best_ - o_.threshold;
  return o_.threshold_rel ? a > best_ * (o_.threshold + 1.0) : a > best_ + o_.threshold;
}

void ReduceLROnPlateau::step(double metric) {
  ++last_epoch_;
  if (is_better(metric)) {
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    num_bad_epochs_ = 0;
  }
  auto& groups = optimizer_.param_groups();
  if (num_bad_epochs_ > o_.patience) {
    for (size_t i = 0; i < groups.size(); ++i) {
      const double old_lr = groups[i].lr();
      const double new_lr = std::max(old_lr * o_.factor, min_lrs_[i]);
      if (old_lr - new_lr > o_.eps) groups[i].set_lr(new_lr);
    }
    cooldown_counter_ = o_.cooldown;
    num_bad_epochs_ = 0;
  }
  last_lr_.clear();
  for (auto& g : groups) last_lr_.push_back(g.lr());
}

StateDict ReduceLROnPlateau::state_dict() const {
  StateDict d = {{"best", scalar64(best_)},
                 {"num_bad_epochs", scalar64(double(num_bad_epochs_))},
                 {"cooldown_counter", scalar64(double(cooldown_counter_))},
                 {"last_epoch", scalar64(double(last_epoch_))}};
  for (size_t i = 0; i < last_lr_.size(); ++i) d.emplace_back("last_lr." + std::to_string(i), scalar64(last_lr_[i]));
  return d;
}

void ReduceLROnPlateau::load_state_dict(const StateDict& dict) {
  std::map<std::string, double> m;
  for (auto& [k, t] : dict) {
    if (!t.defined() || t.numel() != 1)
      VNN_THROW(ShapeError, "ReduceLROnPlateau.load_state_dict: '", k, "' must hold one value");
    m[k] = t.item();
  }
  auto get = [&](const std::string& k) {
    auto it = m.find(k);
    VNN_CHECK(ValueError, it != m.end(), "ReduceLROnPlateau.load_state_dict: missing key '", k, "'");
    return it->second;
  };
  // Every value is read and checked before the first member changes.
  auto count = [&](const std::string& k, double lo) {
    double v = get(k);
    if (!(v >= lo && v <= 9007199254740992.0) || v != std::floor(v))
      VNN_THROW(ValueError, "ReduceLROnPlateau.load_state_dict: '", k, "' = ", v, " must be an integer >= ", int(lo));
    return int64_t(v);
  };
  const double best = get("best");
  const int64_t bad = count("num_bad_epochs", 0), cooldown = count("cooldown_counter", 0),
                epoch = count("last_epoch", -1);
  std::vector<double> lrs(last_lr_.size());
  for (size_t i = 0; i < lrs.size(); ++i) lrs[i] = get("last_lr." + std::to_string(i));
  best_ = best;
  num_bad_epochs_ = bad;
  cooldown_counter_ = cooldown;
  last_epoch_ = epoch;
  last_lr_ = std::move(lrs);
}

}  // namespace vnn::optim
