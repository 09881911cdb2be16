// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Learning-rate schedulers: PyTorch's get_lr() formulas (torch 2.x
// lr_scheduler.py), which are recursive in the current group lr except
// where PyTorch itself uses a closed form (OneCycleLR, resumed cosine).
#include "vnn/detail/message.h"
#include "vnn/optim/scheduler.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "optim/optim_util.hpp"
#include "vnn/error.h"

namespace vnn::optim {

using util::kPi;
using util::scalar64;

namespace {

// Looks a key up in a flat dict; throws ValueError naming it when missing.
double lookup(const std::map<std::string, double>& m, const std::string& who, const std::string& key) {
  auto it = m.find(key);
  VNN_CHECK(ValueError, it != m.end(), who, ".load_state_dict: missing key '", key, "'");
  return it->second;
}

std::map<std::string, double> to_map(const StateDict& dict, const std::string& who) {
  std::map<std::string, double> m;
  for (auto& [k, t] : dict) {
    if (!t.defined() || t.numel() != 1) VNN_THROW(ShapeError, who, ".load_state_dict: '", k, "' must hold one value");
    m[k] = t.item();
  }
  return m;
}

void require_positive(const char* who, const char* what, double v) {
  VNN_CHECK(ValueError, v > 0, who, ": ", what, " must be > 0, got ", v);
}

}  // namespace

// ---- base ---------------------------------------------------------------------

LRScheduler::LRScheduler(Optimizer& optimizer, const char* name, int64_t last_epoch)
    : optimizer_(optimizer), name_(name), last_epoch_(last_epoch) {
  if (last_epoch < -1) VNN_THROW(ValueError, name, ": last_epoch must be >= -1, got ", last_epoch);
  for (auto& g : optimizer_.param_groups()) {
    if (!g.initial_lr) g.initial_lr = g.lr();
    base_lrs_.push_back(*g.initial_lr);
  }
}

void LRScheduler::initial_step() {
  step_count_ = 0;
  initial_ = true;
  try {
    step();
  } catch (...) {
    initial_ = false;
    throw;
  }
  initial_ = false;
}

void LRScheduler::set_epoch(int64_t epoch) {
  last_epoch_ = epoch;
  std::vector<double> lrs = closed_form_lr();
  if (lrs.empty()) lrs = get_lr();
  auto& groups = optimizer_.param_groups();
  for (size_t i = 0; i < groups.size() && i < lrs.size(); ++i) groups[i].set_lr(lrs[i]);
  last_lr_ = lrs;
}

void LRScheduler::step() {
  ++last_epoch_;
  ++step_count_;
  std::vector<double> lrs;
  try {
    lrs = get_lr();
  } catch (...) {
    --last_epoch_;
    --step_count_;
    throw;
  }
  auto& groups = optimizer_.param_groups();
  for (size_t i = 0; i < groups.size() && i < lrs.size(); ++i) groups[i].set_lr(lrs[i]);
  last_lr_ = lrs;
}

StateDict LRScheduler::state_dict() const {
  StateDict d;
  d.emplace_back("last_epoch", scalar64(double(last_epoch_)));
  d.emplace_back("step_count", scalar64(double(step_count_)));
  for (size_t i = 0; i < base_lrs_.size(); ++i) d.emplace_back("base_lrs." + std::to_string(i), scalar64(base_lrs_[i]));
  for (size_t i = 0; i < last_lr_.size(); ++i) d.emplace_back("last_lr." + std::to_string(i), scalar64(last_lr_[i]));
  for (auto& [k, v] : const_cast<LRScheduler*>(this)->settings()) d.emplace_back(k, scalar64(*v));
  return d;
}

namespace {
// Saved values that later arithmetic depends on: an int64 cast of NaN or
// 1e300 is undefined, and StepLR computes last_epoch % step_size.
struct Rule { const char* scheduler; const char* key; double min; bool integral; };
constexpr Rule kRules[] = {
    {nullptr, "last_epoch", -1, true},        {nullptr, "step_count", 0, true},
    {"StepLR", "step_size", 1, true},         {"CosineAnnealingLR", "T_max", 1e-300, false},
    {"LinearLR", "total_iters", 0, false},    {"OneCycleLR", "total_steps", 1, true},
};
void check_value(const std::string& who, const std::string& key, double v) {
  VNN_CHECK(ValueError, std::isfinite(v), who, ".load_state_dict: '", key, "' = ", v, " is not finite");
  for (const Rule& r : kRules) {
    if ((r.scheduler && who != r.scheduler) || key != r.key) continue;
    if (v < r.min || std::fabs(v) > 9007199254740992.0 || (r.integral && v != std::floor(v)))
      VNN_THROW(ValueError, who, ".load_state_dict: '", key, "' = ", v, " must be ", (r.integral ? "an integer " : ""),
                ">= ", r.min);
  }
}
}  // namespace

LRScheduler::LoadedState LRScheduler::check_state_dict(const StateDict& dict) const {
  auto m = to_map(dict, name_);
  LoadedState out;
  auto take = [&](const std::string& k) {
    double v = lookup(m, name_, k);
    check_value(name_, k, v);
    out[k] = v;
  };
  take("last_epoch");
  take("step_count");
  for (size_t i = 0; i < base_lrs_.size(); ++i) take("base_lrs." + std::to_string(i));
  for (size_t i = 0; i < base_lrs_.size(); ++i) take("last_lr." + std::to_string(i));
  for (auto& kv : const_cast<LRScheduler*>(this)->settings()) take(kv.first);
  return out;
}

void LRScheduler::apply_state_dict(const LoadedState& m) {
  last_epoch_ = int64_t(m.at("last_epoch"));
  step_count_ = int64_t(m.at("step_count"));
  for (size_t i = 0; i < base_lrs_.size(); ++i) base_lrs_[i] = m.at("base_lrs." + std::to_string(i));
  last_lr_.assign(base_lrs_.size(), 0.0);
  for (size_t i = 0; i < last_lr_.size(); ++i) last_lr_[i] = m.at("last_lr." + std::to_string(i));
  for (auto& [k, v] : settings()) *v = m.at(k);
}

void LRScheduler::load_state_dict(const StateDict& dict) { apply_state_dict(check_state_dict(dict)); }

// ---- StepLR / MultiStepLR / ExponentialLR --------------------------------------

StepLR::StepLR(Optimizer& opt, int64_t step_size, double gamma, int64_t last_epoch)
    : LRScheduler(opt, "StepLR", last_epoch), step_size_(double(step_size)), gamma_(gamma) {
  require_positive("StepLR", "step_size", step_size_);
  initial_step();
}

std::vector<double> StepLR::get_lr() {
  std::vector<double> out;
  const int64_t s = int64_t(step_size_);
  for (size_t i = 0; i < base_lrs_.size(); ++i)
    out.push_back(last_epoch_ == 0 || last_epoch_ % s != 0 ? group_lr(i) : group_lr(i) * gamma_);
  return out;
}

std::vector<double> StepLR::closed_form_lr() const {
  return map_base([&](double base) { return base * std::pow(gamma_, double(last_epoch_ / int64_t(step_size_))); });
}

std::vector<std::pair<std::string, double*>> StepLR::settings() { return {{"step_size", &step_size_}, {"gamma", &gamma_}}; }

MultiStepLR::MultiStepLR(Optimizer& opt, std::vector<int64_t> milestones, double gamma, int64_t last_epoch)
    : LRScheduler(opt, "MultiStepLR", last_epoch), milestones_(std::move(milestones)), gamma_(gamma) {
  initial_step();
}

std::vector<double> MultiStepLR::get_lr() {
  int64_t hits = std::count(milestones_.begin(), milestones_.end(), last_epoch_);
  std::vector<double> out;
  for (size_t i = 0; i < base_lrs_.size(); ++i)
    out.push_back(hits == 0 ? group_lr(i) : group_lr(i) * std::pow(gamma_, double(hits)));
  return out;
}

std::vector<double> MultiStepLR::closed_form_lr() const {
  // gamma to the number of milestones <= last_epoch (bisect_right of the sorted list).
  const auto passed = std::count_if(milestones_.begin(), milestones_.end(), [&](int64_t m) { return m <= last_epoch_; });
  return map_base([&](double base) { return base * std::pow(gamma_, double(passed)); });
}

std::vector<std::pair<std::string, double*>> MultiStepLR::settings() { return {{"gamma", &gamma_}}; }

ExponentialLR::ExponentialLR(Optimizer& opt, double gamma, int64_t last_epoch)
    : LRScheduler(opt, "ExponentialLR", last_epoch), gamma_(gamma) {
  initial_step();
}

std::vector<double> ExponentialLR::get_lr() {
  std::vector<double> out;
  for (size_t i = 0; i < base_lrs_.size(); ++i) out.push_back(last_epoch_ == 0 ? group_lr(i) : group_lr(i) * gamma_);
  return out;
}

std::vector<double> ExponentialLR::closed_form_lr() const {
  return map_base([&](double base) { return base * std::pow(gamma_, double(last_epoch_)); });
}

std::vector<std::pair<std::string, double*>> ExponentialLR::settings() { return {{"gamma", &gamma_}}; }

// ---- CosineAnnealingLR ------------------------------------------------------------

CosineAnnealingLR::CosineAnnealingLR(Optimizer& opt, int64_t T_max, double eta_min, int64_t last_epoch)
    : LRScheduler(opt, "CosineAnnealingLR", last_epoch), t_max_(double(T_max)), eta_min_(eta_min) {
  require_positive("CosineAnnealingLR", "T_max", t_max_);
  initial_step();
}

std::vector<double> CosineAnnealingLR::get_lr() {
  std::vector<double> out;
  const double e = double(last_epoch_), T = t_max_;
  for (size_t i = 0; i < base_lrs_.size(); ++i) {
    const double lr = group_lr(i), base = base_lrs_[i];
    if (last_epoch_ == 0)
      out.push_back(lr);
    else if (step_count_ == 1 && last_epoch_ > 0)  // resumed: PyTorch's closed form
      out.push_back(eta_min_ + (base - eta_min_) * (1 + std::cos(e * kPi / T)) / 2);
    else if (int64_t(e - 1 - T) % int64_t(2 * T) == 0)
      out.push_back(lr + (base - eta_min_) * (1 - std::cos(kPi / T)) / 2);
    else
      out.push_back((1 + std::cos(kPi * e / T)) / (1 + std::cos(kPi * (e - 1) / T)) * (lr - eta_min_) + eta_min_);
  }
  return out;
}

std::vector<double> CosineAnnealingLR::closed_form_lr() const {
  const double c = (1 + std::cos(kPi * double(last_epoch_) / t_max_)) / 2;
  return map_base([&](double base) { return eta_min_ + (base - eta_min_) * c; });
}

std::vector<std::pair<std::string, double*>> CosineAnnealingLR::settings() {
  return {{"T_max", &t_max_}, {"eta_min", &eta_min_}};
}

// ---- LinearLR -------------------------------------------------------------------------

LinearLR::LinearLR(Optimizer& opt, double start_factor, double end_factor, int64_t total_iters, int64_t last_epoch)
    : LRScheduler(opt, "LinearLR", last_epoch), start_(start_factor), end_(end_factor), total_(double(total_iters)) {
  VNN_CHECK(ValueError, start_factor > 0 && start_factor <= 1, "LinearLR: start_factor must be in (0, 1], got ",
            start_factor);
  VNN_CHECK(ValueError, end_factor >= 0 && end_factor <= 1, "LinearLR: end_factor must be in [0, 1], got ", end_factor);
  if (total_iters < 0) VNN_THROW(ValueError, "LinearLR: total_iters must be >= 0, got ", total_iters);
  initial_step();
}

std::vector<double> LinearLR::get_lr() {
  std::vector<double> out;
  const double e = double(last_epoch_);
  for (size_t i = 0; i < base_lrs_.size(); ++i) {
    const double lr = group_lr(i);
    if (last_epoch_ == 0)
      out.push_back(lr * start_);
    else if (e > total_)
      out.push_back(lr);
    else
      out.push_back(lr * (1.0 + (end_ - start_) / (total_ * start_ + (e - 1) * (end_ - start_))));
  }
  return out;
}

std::vector<double> LinearLR::closed_form_lr() const {
  const double f = start_ + (end_ - start_) * std::min(total_, double(last_epoch_)) / total_;
  return map_base([&](double base) { return base * f; });
}

std::vector<std::pair<std::string, double*>> LinearLR::settings() {
  return {{"start_factor", &start_}, {"end_factor", &end_}, {"total_iters", &total_}};
}

}  // namespace vnn::optim
