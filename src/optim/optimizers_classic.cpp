// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ASGD and Rprop: PyTorch's single-tensor update rules composed of vnn ops on
// the parameter's device. ASGD's eta and mu are host scalars of the state, as
// PyTorch's non-capturable path keeps them.
#include "vnn/optim/optimizers_classic.h"

#include <algorithm>
#include <cmath>

#include "optim/optim_util.hpp"
#include "vnn/elementwise.h"

namespace vnn::optim {

using util::flag;
using util::fmt;
using util::one_group;
using util::require;
using util::Working;

// ---- ASGD ------------------------------------------------------------------------

ASGD::ASGD(std::vector<Tensor> params, const ASGDOptions& options) : ASGD(one_group(std::move(params)), options) {}

ASGD::ASGD(std::vector<ParamGroup> groups, const ASGDOptions& defaults)
    : Optimizer("ASGD", defaults.values, defaults.master_weights()) {
  init(std::move(groups));
}

void ASGD::validate(const std::map<std::string, double>& o) const {
  require("ASGD", "lr", o, 0.0);
  require("ASGD", "weight_decay", o, 0.0);
  require("ASGD", "lambd", o, -INFINITY);
  require("ASGD", "alpha", o, -INFINITY);
  require("ASGD", "t0", o, -INFINITY);
}

void ASGD::update(const Tensor& p, const Tensor& g, ParamState& st, const std::map<std::string, double>& o) {
  Working w(p, g, flag(o, "maximize"));
  w.add_weight_decay(o.at("weight_decay"));
  const double lr = o.at("lr"), lambd = o.at("lambd"), t = double(st.step);
  // eta starts at the lr of the first step and mu at 1; each step uses the
  // values the previous one left, then computes the next ones.
  double& eta = st.scalars.emplace("eta", lr).first->second;
  double& mu = st.scalars.emplace("mu", 1.0).first->second;
  Tensor& ax = buffer(st, p, "ax");
  w.p.mul_(1.0 - lambd * eta).sub_(w.g, eta);
  if (mu != 1.0)
    ax.add_(w.p.sub(ax).mul_(mu));
  else
    ax.copy_(w.p);
  eta = lr / std::pow(1.0 + lambd * lr * t, o.at("alpha"));
  mu = 1.0 / std::max(1.0, t - o.at("t0"));
  w.done();
}

// ---- Rprop -----------------------------------------------------------------------

Rprop::Rprop(std::vector<Tensor> params, const RpropOptions& options) : Rprop(one_group(std::move(params)), options) {}

Rprop::Rprop(std::vector<ParamGroup> groups, const RpropOptions& defaults)
    : Optimizer("Rprop", defaults.values, defaults.master_weights()) {
  init(std::move(groups));
}

void Rprop::validate(const std::map<std::string, double>& o) const {
  require("Rprop", "lr", o, 0.0);
  const double em = o.at("etaminus"), ep = o.at("etaplus");
  VNN_CHECK(ValueError, 0.0 < em && em < 1.0 && 1.0 < ep, "Rprop: invalid etas (", fmt(em), ", ", fmt(ep),
            "): expected 0 < etaminus < 1 < etaplus");
  require("Rprop", "step_size_min", o, 0.0);
  require("Rprop", "step_size_max", o, o.at("step_size_min"));
}

void Rprop::update(const Tensor& p, const Tensor& g, ParamState& st, const std::map<std::string, double>& o) {
  Working w(p, g, flag(o, "maximize"));
  Tensor& prev = buffer(st, p, "prev");
  Tensor& step_size = buffer(st, p, "step_size", o.at("lr"));
  // The factor per element: etaplus where the gradient kept its sign,
  // etaminus where it flipped (that element then skips this step), else 1.
  Tensor factor = w.g.mul(prev).sign_();
  const Tensor same = factor.gt(0.0), flipped = factor.lt(0.0);
  factor.fill_(1.0).masked_fill_(same, o.at("etaplus")).masked_fill_(flipped, o.at("etaminus"));
  step_size.mul_(factor).clamp_(o.at("step_size_min"), o.at("step_size_max"));
  Tensor grad = w.g.masked_fill(flipped, 0.0);
  w.p.sub_(grad.sign().mul_(step_size));
  prev.copy_(grad);
  w.done();
}

}  // namespace vnn::optim
