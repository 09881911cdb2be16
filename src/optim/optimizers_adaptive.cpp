// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Adamax, NAdam, RAdam and Adadelta: PyTorch's single-tensor update rules
// (torch/optim/*.py, _single_tensor_*) composed of vnn ops on the
// parameter's device. Step-dependent factors (bias corrections, NAdam's
// momentum schedule, RAdam's rectification) are host scalars computed from
// the step count: nothing is read back.
#include "vnn/optim/optimizers_adaptive.h"

#include <cmath>

#include "optim/optim_util.hpp"
#include "vnn/elementwise.h"

namespace vnn::optim {

using util::flag;
using util::one_group;
using util::require;
using util::Working;

namespace {

void require_adam_like(const char* name, const std::map<std::string, double>& o) {
  require(name, "lr", o, 0.0);
  require(name, "eps", o, 0.0);
  require(name, "beta1", o, 0.0, 1.0, true);
  require(name, "beta2", o, 0.0, 1.0, true);
  require(name, "weight_decay", o, 0.0);
}

// exp_avg = b1 exp_avg + (1 - b1) g; exp_avg_sq = b2 exp_avg_sq + (1 - b2) g^2.
void update_moments(Tensor& exp_avg, Tensor& exp_avg_sq, const Tensor& g, double b1, double b2) {
  exp_avg.mul_(b1).add_(g, 1.0 - b1);
  exp_avg_sq.mul_(b2).add_(g.mul(g), 1.0 - b2);
}

// NAdam's and RAdam's weight decay: decoupled (p *= 1 - lr wd) or L2 on the gradient.
void apply_weight_decay(Working& w, const std::map<std::string, double>& o) {
  const double wd = o.at("weight_decay");
  if (wd == 0.0) return;
  if (flag(o, "decoupled_weight_decay"))
    w.p.mul_(1.0 - o.at("lr") * wd);
  else
    w.add_weight_decay(wd);
}

}  // namespace

// ---- Adamax ----------------------------------------------------------------------

Adamax::Adamax(std::vector<Tensor> params, const AdamaxOptions& options) : Adamax(one_group(std::move(params)), options) {}

Adamax::Adamax(std::vector<ParamGroup> groups, const AdamaxOptions& defaults)
    : Optimizer("Adamax", defaults.values, defaults.master_weights()) {
  init(std::move(groups));
}

void Adamax::validate(const std::map<std::string, double>& o) const { require_adam_like("Adamax", o); }

void Adamax::update(const Tensor& p, const Tensor& g, ParamState& st, const std::map<std::string, double>& o) {
  Working w(p, g, flag(o, "maximize"));
  w.add_weight_decay(o.at("weight_decay"));
  const double b1 = o.at("beta1"), b2 = o.at("beta2");
  Tensor& exp_avg = buffer(st, p, "exp_avg");
  Tensor& exp_inf = buffer(st, p, "exp_inf");
  exp_avg.mul_(b1).add_(w.g, 1.0 - b1);
  exp_inf.copy_(maximum(exp_inf.mul_(b2), w.g.abs().add_(o.at("eps"))));
  const double clr = o.at("lr") / (1.0 - std::pow(b1, double(st.step)));
  w.p.sub_(exp_avg.div(exp_inf), clr);
  w.done();
}

// ---- NAdam -----------------------------------------------------------------------

NAdam::NAdam(std::vector<Tensor> params, const NAdamOptions& options) : NAdam(one_group(std::move(params)), options) {}

NAdam::NAdam(std::vector<ParamGroup> groups, const NAdamOptions& defaults)
    : Optimizer("NAdam", defaults.values, defaults.master_weights()) {
  init(std::move(groups));
}

void NAdam::validate(const std::map<std::string, double>& o) const {
  require_adam_like("NAdam", o);
  require("NAdam", "momentum_decay", o, 0.0);
}

void NAdam::update(const Tensor& p, const Tensor& g, ParamState& st, const std::map<std::string, double>& o) {
  Working w(p, g, flag(o, "maximize"));
  apply_weight_decay(w, o);
  const double lr = o.at("lr"), b1 = o.at("beta1"), b2 = o.at("beta2"), psi = o.at("momentum_decay");
  const double t = double(st.step);
  const double mu = b1 * (1.0 - 0.5 * std::pow(0.96, t * psi));
  const double mu_next = b1 * (1.0 - 0.5 * std::pow(0.96, (t + 1.0) * psi));
  auto it = st.scalars.emplace("mu_product", 1.0).first;
  const double mu_product = it->second *= mu;
  Tensor& exp_avg = buffer(st, p, "exp_avg");
  Tensor& exp_avg_sq = buffer(st, p, "exp_avg_sq");
  update_moments(exp_avg, exp_avg_sq, w.g, b1, b2);
  Tensor denom = exp_avg_sq.div(1.0 - std::pow(b2, t)).sqrt_().add_(o.at("eps"));
  w.p.sub_(w.g.div(denom), lr * (1.0 - mu) / (1.0 - mu_product));
  w.p.sub_(exp_avg.div(denom), lr * mu_next / (1.0 - mu_product * mu_next));
  w.done();
}

// ---- RAdam -----------------------------------------------------------------------

RAdam::RAdam(std::vector<Tensor> params, const RAdamOptions& options) : RAdam(one_group(std::move(params)), options) {}

RAdam::RAdam(std::vector<ParamGroup> groups, const RAdamOptions& defaults)
    : Optimizer("RAdam", defaults.values, defaults.master_weights()) {
  init(std::move(groups));
}

void RAdam::validate(const std::map<std::string, double>& o) const { require_adam_like("RAdam", o); }

void RAdam::update(const Tensor& p, const Tensor& g, ParamState& st, const std::map<std::string, double>& o) {
  Working w(p, g, flag(o, "maximize"));
  apply_weight_decay(w, o);
  const double lr = o.at("lr"), b1 = o.at("beta1"), b2 = o.at("beta2"), t = double(st.step);
  Tensor& exp_avg = buffer(st, p, "exp_avg");
  Tensor& exp_avg_sq = buffer(st, p, "exp_avg_sq");
  update_moments(exp_avg, exp_avg_sq, w.g, b1, b2);
  const double bc1 = 1.0 - std::pow(b1, t), bc2 = 1.0 - std::pow(b2, t);
  const double rho_inf = 2.0 / (1.0 - b2) - 1.0;
  const double rho_t = rho_inf - 2.0 * t * std::pow(b2, t) / bc2;
  if (rho_t > 5.0) {
    // The variance is tractable: Adam's adaptive step times the rectification.
    const double rect =
        std::sqrt((rho_t - 4.0) * (rho_t - 2.0) * rho_inf / ((rho_inf - 4.0) * (rho_inf - 2.0) * rho_t));
    w.p.sub_(exp_avg.div(exp_avg_sq.sqrt().add_(o.at("eps"))), lr / bc1 * std::sqrt(bc2) * rect);
  } else {
    w.p.sub_(exp_avg, lr / bc1);
  }
  w.done();
}

// ---- Adadelta --------------------------------------------------------------------

Adadelta::Adadelta(std::vector<Tensor> params, const AdadeltaOptions& options)
    : Adadelta(one_group(std::move(params)), options) {}

Adadelta::Adadelta(std::vector<ParamGroup> groups, const AdadeltaOptions& defaults)
    : Optimizer("Adadelta", defaults.values, defaults.master_weights()) {
  init(std::move(groups));
}

void Adadelta::validate(const std::map<std::string, double>& o) const {
  require("Adadelta", "lr", o, 0.0);
  require("Adadelta", "rho", o, 0.0, 1.0);
  require("Adadelta", "eps", o, 0.0);
  require("Adadelta", "weight_decay", o, 0.0);
}

void Adadelta::update(const Tensor& p, const Tensor& g, ParamState& st, const std::map<std::string, double>& o) {
  Working w(p, g, flag(o, "maximize"));
  w.add_weight_decay(o.at("weight_decay"));
  const double rho = o.at("rho"), eps = o.at("eps");
  Tensor& square_avg = buffer(st, p, "square_avg");
  Tensor& acc_delta = buffer(st, p, "acc_delta");
  square_avg.mul_(rho).add_(w.g.mul(w.g), 1.0 - rho);
  Tensor delta = acc_delta.add(eps).sqrt_().div_(square_avg.add(eps).sqrt_()).mul_(w.g);
  acc_delta.mul_(rho).add_(delta.mul(delta), 1.0 - rho);
  w.p.sub_(delta, o.at("lr"));
  w.done();
}

}  // namespace vnn::optim
