// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// SGD, Adam/AdamW, RMSprop and Adagrad: option checks (PyTorch's, as typed
// ValueErrors naming the option) and the descriptor of each fused step
// (docs/ops.md, VNN_OP_OPTIMIZER_STEP). Step-dependent factors (Adam's bias
// corrections, Adagrad's decayed lr) are computed here on the host from the
// step count, which the host already knows: nothing is read back.
#include "vnn/detail/message.h"
#include "vnn/optim/optimizers.h"

#include <cmath>
#include <cstdio>

#include "vnn/backend_abi.h"
#include "vnn/error.h"
#include "optim/optim_util.hpp"

namespace vnn::optim {

using util::flag;
using util::fmt;
using util::one_group;
using util::require;

// ---- SGD -------------------------------------------------------------------

SGD::SGD(std::vector<Tensor> params, const SGDOptions& options) : SGD(one_group(std::move(params)), options) {}

SGD::SGD(std::vector<ParamGroup> groups, const SGDOptions& defaults) : Optimizer("SGD", defaults.values, defaults.master_weights()) {
  init(std::move(groups));
}

void SGD::validate(const std::map<std::string, double>& o) const {
  require("SGD", "lr", o, 0.0);
  require("SGD", "momentum", o, 0.0);
  require("SGD", "dampening", o, -INFINITY);
  require("SGD", "weight_decay", o, 0.0);
  if (flag(o, "nesterov") && (o.at("momentum") <= 0 || o.at("dampening") != 0))
    VNN_THROW(ValueError, "SGD: nesterov momentum requires momentum > 0 and dampening = 0 (got momentum ",
              fmt(o.at("momentum")), ", dampening ", fmt(o.at("dampening")), ")");
}

void SGD::update(const Tensor& p, const Tensor& g, ParamState& st, const std::map<std::string, double>& o) {
  const bool has_buf = o.at("momentum") != 0.0;
  std::vector<Tensor> state;
  int64_t first = 0;
  if (has_buf) {
    first = st.buffers.count("momentum_buffer") ? 0 : 1;
    state.push_back(buffer(st, p, "momentum_buffer"));
  }
  vnn_optimizer_params prm{};
  prm.fn = VNN_OPTIM_SGD;
  prm.u.sgd = {o.at("lr"), o.at("momentum"), o.at("dampening"), o.at("weight_decay"), flag(o, "nesterov"),
               flag(o, "maximize"), has_buf ? 1 : 0, first};
  fused_step(p, g, state, prm, "SGD.step");
}

// ---- Adam / AdamW ------------------------------------------------------------

Adam::Adam(std::vector<Tensor> params, const AdamOptions& options) : Adam(one_group(std::move(params)), options) {}

Adam::Adam(std::vector<ParamGroup> groups, const AdamOptions& defaults) : Adam("Adam", defaults.values, false, defaults.master_weights()) {
  init(std::move(groups));
}

Adam::Adam(const char* name, std::map<std::string, double> defaults, bool decoupled, bool master_weights)
    : Optimizer(name, std::move(defaults), master_weights), decoupled_(decoupled) {}

void Adam::validate(const std::map<std::string, double>& o) const {
  require(name(), "lr", o, 0.0);
  require(name(), "eps", o, 0.0);
  require(name(), "beta1", o, 0.0, 1.0, true);
  require(name(), "beta2", o, 0.0, 1.0, true);
  require(name(), "weight_decay", o, 0.0);
}

void Adam::update(const Tensor& p, const Tensor& g, ParamState& st, const std::map<std::string, double>& o) {
  const double lr = o.at("lr"), b1 = o.at("beta1"), b2 = o.at("beta2");
  const double t = double(st.step);
  const double bc1 = 1.0 - std::pow(b1, t), bc2 = 1.0 - std::pow(b2, t);
  const int64_t amsgrad = flag(o, "amsgrad");
  std::vector<Tensor> state = {buffer(st, p, "exp_avg"), buffer(st, p, "exp_avg_sq")};
  if (amsgrad) state.push_back(buffer(st, p, "max_exp_avg_sq"));
  vnn_optimizer_params prm{};
  prm.fn = VNN_OPTIM_ADAM;
  prm.u.adam = {lr, b1, b2, o.at("eps"), o.at("weight_decay"), lr / bc1, std::sqrt(bc2), decoupled_ ? 1 : 0, amsgrad,
                flag(o, "maximize")};
  fused_step(p, g, state, prm, decoupled_ ? "AdamW.step" : "Adam.step");
}

AdamW::AdamW(std::vector<Tensor> params, const AdamOptions& options)
    : AdamW(one_group(std::move(params)), options) {}

AdamW::AdamW(std::vector<ParamGroup> groups, const AdamOptions& defaults) : Adam("AdamW", defaults.values, true, defaults.master_weights()) {
  init(std::move(groups));
}

// ---- RMSprop -------------------------------------------------------------------

RMSprop::RMSprop(std::vector<Tensor> params, const RMSpropOptions& options)
    : RMSprop(one_group(std::move(params)), options) {}

RMSprop::RMSprop(std::vector<ParamGroup> groups, const RMSpropOptions& defaults)
    : Optimizer("RMSprop", defaults.values, defaults.master_weights()) {
  init(std::move(groups));
}

void RMSprop::validate(const std::map<std::string, double>& o) const {
  require("RMSprop", "lr", o, 0.0);
  require("RMSprop", "eps", o, 0.0);
  require("RMSprop", "momentum", o, 0.0);
  require("RMSprop", "weight_decay", o, 0.0);
  require("RMSprop", "alpha", o, 0.0);
}

void RMSprop::update(const Tensor& p, const Tensor& g, ParamState& st, const std::map<std::string, double>& o) {
  const bool has_buf = o.at("momentum") > 0.0;
  const int64_t centered = flag(o, "centered");
  // Fixed slots: square_avg, momentum buffer, grad_avg; absent ones repeat
  // square_avg and stay untouched by the kernel.
  Tensor sq = buffer(st, p, "square_avg");
  Tensor mom = has_buf ? buffer(st, p, "momentum_buffer") : sq;
  Tensor ga = centered ? buffer(st, p, "grad_avg") : sq;
  vnn_optimizer_params prm{};
  prm.fn = VNN_OPTIM_RMSPROP;
  prm.u.rmsprop = {o.at("lr"), o.at("alpha"), o.at("eps"), o.at("weight_decay"), o.at("momentum"), centered,
                   flag(o, "maximize"), has_buf ? 1 : 0};
  fused_step(p, g, {sq, mom, ga}, prm, "RMSprop.step");
}

// ---- Adagrad -------------------------------------------------------------------

Adagrad::Adagrad(std::vector<Tensor> params, const AdagradOptions& options)
    : Adagrad(one_group(std::move(params)), options) {}

Adagrad::Adagrad(std::vector<ParamGroup> groups, const AdagradOptions& defaults)
    : Optimizer("Adagrad", defaults.values, defaults.master_weights()) {
  init(std::move(groups));
}

void Adagrad::validate(const std::map<std::string, double>& o) const {
  require("Adagrad", "lr", o, 0.0);
  require("Adagrad", "lr_decay", o, 0.0);
  require("Adagrad", "weight_decay", o, 0.0);
  require("Adagrad", "initial_accumulator_value", o, 0.0);
  require("Adagrad", "eps", o, 0.0);
}

void Adagrad::update(const Tensor& p, const Tensor& g, ParamState& st, const std::map<std::string, double>& o) {
  const double clr = o.at("lr") / (1.0 + double(st.step - 1) * o.at("lr_decay"));
  Tensor sum = buffer(st, p, "sum", o.at("initial_accumulator_value"));
  vnn_optimizer_params prm{};
  prm.fn = VNN_OPTIM_ADAGRAD;
  prm.u.adagrad = {clr, o.at("eps"), o.at("weight_decay"), flag(o, "maximize")};
  fused_step(p, g, {sum}, prm, "Adagrad.step");
}

}  // namespace vnn::optim
