// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// GradScaler: dynamic loss scaling with PyTorch's rules. The inf/NaN check
// and the unscaling are one UNSCALE_CHECK op per parameter group and device
// (docs/ops.md) writing one float32 flag per device; the host reads the
// flags once per step.
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "tensor/tensor_impl.hpp"
#include "vnn/amp.h"
#include "vnn/autograd.h"
#include "vnn/creation.h"
#include "vnn/detail/message.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/profiler.h"
#include "vnn/reduction.h"

namespace vnn::amp {

namespace {

// The ABI bounds an op to 64 operands: the flag and 63 gradients.
constexpr size_t kMaxGradsPerOp = 63;

std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void check_options(const GradScalerOptions& o, const char* who) {
  auto bad = [&](const char* what, double v, const char* want) {
    VNN_THROW(ValueError, who, ": ", what, " = ", fmt(v), " is invalid (expected ", want, ")");
  };
  if (!(o.init_scale > 0) || !std::isfinite(o.init_scale)) bad("init_scale", o.init_scale, "a finite value > 0");
  if (!(o.growth_factor > 1) || !std::isfinite(o.growth_factor)) bad("growth_factor", o.growth_factor, "> 1");
  if (!(o.backoff_factor > 0 && o.backoff_factor < 1)) bad("backoff_factor", o.backoff_factor, "in (0, 1)");
  if (o.growth_interval < 1) bad("growth_interval", double(o.growth_interval), ">= 1");
}

// Runs UNSCALE_CHECK over `grads` (one device) into `flag`.
void unscale_into(const std::vector<Tensor>& grads, const Tensor& flag, double inv_scale) {
  for (size_t begin = 0; begin < grads.size(); begin += kMaxGradsPerOp) {
    const size_t end = std::min(grads.size(), begin + kMaxGradsPerOp);
    std::vector<const Tensor*> out;
    out.reserve(end - begin + 1);
    out.push_back(&flag);
    for (size_t i = begin; i < end; ++i) out.push_back(&grads[i]);
    detail::enqueue(VNN_OP_UNSCALE_CHECK, "GradScaler.unscale_", {}, out, {inv_scale});
  }
  for (const Tensor& g : grads) g.impl()->storage->version.fetch_add(1);
}

// Gradients grouped by device, each group's in one list (made contiguous
// in place, so the kernel can walk them flat).
std::map<std::string, std::vector<Tensor>> grads_by_device(const std::vector<Tensor>& tensors, const char* who) {
  std::map<std::string, std::vector<Tensor>> out;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& g = tensors[i];
    if (!g.defined()) continue;
    VNN_CHECK(DTypeError, is_floating(g.dtype()), who, ": tensor ", i, " has dtype ", name(g.dtype()),
              "; only floating gradients can be checked and unscaled");
    out[g.device().str()].push_back(g);
  }
  return out;
}

double read_flags(const std::vector<Tensor>& flags) {
  if (flags.empty()) return 0.0;
  Tensor total = flags[0];
  for (size_t i = 1; i < flags.size(); ++i) total = add(total, flags[i].to(flags[0].device()));
  return total.item();  // the one value read back per step
}

}  // namespace

GradScaler::GradScaler(const GradScalerOptions& options) : options_(options), scale_(options.init_scale) {
  check_options(options, "GradScaler");
}

double GradScaler::get_scale() const { return options_.enabled ? scale_ : 1.0; }

GradScaler::Stage& GradScaler::stage(const optim::Optimizer& opt) {
  for (auto& s : stages_)
    if (s.opt == &opt) return s;
  stages_.push_back(Stage{&opt, 0, false});
  return stages_.back();
}

Tensor GradScaler::scale(const Tensor& loss) {
  if (!options_.enabled) return loss;
  VNN_CHECK(ValueError, loss.defined(), "GradScaler.scale: loss is an undefined tensor");
  VNN_CHECK(DTypeError, is_floating(loss.dtype()), "GradScaler.scale: loss has dtype ", name(loss.dtype()),
            "; scale a floating loss");
  scaled_ = true;
  return mul(loss, scale_);
}

void GradScaler::unscale_(optim::Optimizer& opt) {
  if (!options_.enabled) return;
  const std::string who = std::string("GradScaler.unscale_(") + opt.name() + ")";
  VNN_CHECK(ValueError, scaled_, who, ": the gradients of this ", opt.name(),
            " optimizer were never scaled; call scaler.scale(loss).backward() before unscale_/step "
            "in each iteration (and update() after step)");
  VNN_CHECK(ValueError, stage(opt).done != 1, who,
            ": unscale_() was already called on this optimizer since the last update()");
  VNN_CHECK(ValueError, stage(opt).done != 2, who, ": unscale_() is being called after step(); call update() first");
  profiler::PhaseGuard phase(profiler::Phase::optimizer);
  autograd::NoGradGuard no_grad;
  const double inv = 1.0 / scale_;  // PyTorch takes the reciprocal in float64 too
  std::map<std::string, Tensor> flags;  // one per device
  for (auto& group : opt.param_groups()) {
    std::vector<Tensor> grads;
    for (auto& p : group.params) {
      Tensor g = p.grad();
      if (!g.defined()) continue;
      if (!g.is_contiguous()) {
        g = g.contiguous();
        p.set_grad(g);
      }
      grads.push_back(g);
    }
    for (auto& [dev, list] : grads_by_device(grads, who.c_str())) {
      auto it = flags.find(dev);
      if (it == flags.end()) it = flags.emplace(dev, zeros({1}, TensorOptions(kFloat32).with(list[0].device()))).first;
      unscale_into(list, it->second, inv);
    }
  }
  std::vector<Tensor> all;
  for (auto& [dev, f] : flags) all.push_back(f);
  Stage& st = stage(opt);
  st.found_inf = read_flags(all) != 0.0;
  st.done = 1;
}

bool GradScaler::step(optim::Optimizer& opt) {
  if (!options_.enabled) {
    opt.step();
    return true;
  }
  VNN_CHECK(ValueError, stage(opt).done != 2, "GradScaler.step(", opt.name(),
            "): step() was already called on this optimizer since the last update()");
  if (stage(opt).done == 0) unscale_(opt);
  Stage& st = stage(opt);
  st.done = 2;
  if (st.found_inf) return false;  // never poison the weights
  opt.step();
  return true;
}

void GradScaler::update() {
  if (!options_.enabled) return;
  if (!scaled_) return;  // nothing happened this iteration
  bool found_inf = false;
  for (auto& s : stages_) found_inf = found_inf || s.found_inf;
  if (found_inf) {
    scale_ *= options_.backoff_factor;
    growth_tracker_ = 0;
  } else if (++growth_tracker_ >= options_.growth_interval) {
    const double grown = scale_ * options_.growth_factor;
    if (std::isfinite(grown)) scale_ = grown;  // PyTorch keeps the scale finite too
    growth_tracker_ = 0;
  }
  scaled_ = false;
  stages_.clear();
}

void GradScaler::update(double new_scale) {
  if (!options_.enabled) return;
  if (!(new_scale > 0) || !std::isfinite(new_scale))
    VNN_THROW(ValueError, "GradScaler.update: new_scale = ", fmt(new_scale), " must be finite and > 0");
  scale_ = new_scale;
  growth_tracker_ = 0;
  scaled_ = false;
  stages_.clear();
}

optim::StateDict GradScaler::state_dict() const {
  auto s = [](double v) { return full(Shape{}, v, TensorOptions(kFloat64)); };
  return {{"scale", s(scale_)},
          {"growth_factor", s(options_.growth_factor)},
          {"backoff_factor", s(options_.backoff_factor)},
          {"growth_interval", s(double(options_.growth_interval))},
          {"growth_tracker", s(double(growth_tracker_))}};
}

void GradScaler::load_state_dict(const optim::StateDict& dict) {
  const char* who = "GradScaler.load_state_dict";
  std::map<std::string, double> v;
  for (auto& [k, t] : dict) {
    if (k != "scale" && k != "growth_factor" && k != "backoff_factor" && k != "growth_interval" &&
        k != "growth_tracker")
      VNN_THROW(ValueError, who, ": unexpected key '", k, "'");
    if (!t.defined() || t.numel() != 1) VNN_THROW(ValueError, who, ": '", k, "' must hold one value");
    v[k] = t.item();
  }
  for (const char* k : {"scale", "growth_factor", "backoff_factor", "growth_interval", "growth_tracker"})
    VNN_CHECK(ValueError, v.count(k), who, ": missing key '", k, "'");
  auto integral = [&](const char* k) {
    double x = v[k];
    if (!(x >= 0 && x <= 9007199254740992.0) || x != std::floor(x))
      VNN_THROW(ValueError, who, ": '", k, "' = ", fmt(x), " is not a non-negative integer");
    return int64_t(x);
  };
  GradScalerOptions o = options_;
  o.init_scale = v["scale"];
  o.growth_factor = v["growth_factor"];
  o.backoff_factor = v["backoff_factor"];
  o.growth_interval = integral("growth_interval");
  const int64_t tracker = integral("growth_tracker");
  check_options(o, who);
  options_.growth_factor = o.growth_factor;
  options_.backoff_factor = o.backoff_factor;
  options_.growth_interval = o.growth_interval;
  scale_ = o.init_scale;
  growth_tracker_ = tracker;
}

}  // namespace vnn::amp
