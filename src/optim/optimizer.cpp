// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The optimizer base: parameter groups, lazily created per-parameter state
// that follows its parameter across devices, the fused step op and the flat
// state_dict.
#include "vnn/detail/message.h"
#include "vnn/optim/optimizer.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "optim/optim_util.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/autograd.h"
#include "vnn/error.h"
#include "vnn/profiler.h"

namespace vnn::optim {

using util::scalar64;

namespace {

// Optimizer state of a parameter's dtype: float32 for the 16-bit floats,
// whose 8 or 11 bits of mantissa would drop small moment updates.
DType state_dtype(DType param) { return param == kFloat64 ? kFloat64 : kFloat32; }

// "state.3.exp_avg" -> {"state", "3", "exp_avg"} (the last part may hold dots).
std::vector<std::string> split_key(const std::string& key) {
  std::vector<std::string> parts;
  size_t a = key.find('.');
  if (a == std::string::npos) return {key};
  size_t b = key.find('.', a + 1);
  if (b == std::string::npos) return {key.substr(0, a), key.substr(a + 1)};
  return {key.substr(0, a), key.substr(a + 1, b - a - 1), key.substr(b + 1)};
}

bool parse_index(const std::string& s, int64_t* out) {
  if (s.empty() || s.size() > 12) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  *out = std::stoll(s);
  return true;
}

}  // namespace

Optimizer::Optimizer(const char* name, std::map<std::string, double> defaults, bool master_weights)
    : name_(name), defaults_(std::move(defaults)), master_weights_(master_weights) {}

void Optimizer::init(std::vector<ParamGroup> groups) {
  validate(defaults_);
  size_t count = 0;
  for (auto& g : groups) count += g.params.size();
  VNN_CHECK(ValueError, count != 0, name_, ": got an empty parameter list");
  for (auto& g : groups) add_param_group(g);
}

void Optimizer::add_param_group(const ParamGroup& group) {
  ParamGroup g;
  g.params = group.params;
  g.options = defaults_;
  for (auto& [k, v] : group.options) {
    VNN_CHECK(
        ValueError, defaults_.count(k), name_, ": unknown option '", k, "' in a parameter group (known: ",
        [&] {
          std::string s;
          for (auto& d : defaults_) s += (s.empty() ? "" : ", ") + d.first;
          return s;
        }(),
        ")");
    g.options[k] = v;
  }
  validate(g.options);
  std::set<const void*> seen;
  for (auto& grp : groups_)
    for (auto& p : grp.params) seen.insert(p.impl());
  for (size_t i = 0; i < g.params.size(); ++i) {
    const Tensor& p = g.params[i];
    std::string what = std::string(name_) + ": parameter " + std::to_string(i) + " of group " +
                       std::to_string(groups_.size());
    VNN_CHECK(ValueError, p.defined(), what, " is an undefined tensor");
    VNN_CHECK(DTypeError, is_floating(p.dtype()), what, " has dtype ", ::vnn::name(p.dtype()),
              "; optimizers update float32, float64, float16 or bfloat16 tensors");
    VNN_CHECK(ValueError, p.is_leaf(), what, " is not a leaf tensor; optimize leaves (parameters) only");
    VNN_CHECK(ValueError, seen.insert(p.impl()).second, what, " appears more than once among the parameter groups");
  }
  groups_.push_back(std::move(g));
}

const ParamState* Optimizer::state(const Tensor& param) const {
  auto it = state_.find(param.impl());
  return it == state_.end() ? nullptr : &it->second;
}

Tensor& Optimizer::buffer(ParamState& st, const Tensor& param, const std::string& name, double init) {
  const DType dt = state_dtype(param.dtype());
  auto it = st.buffers.find(name);
  if (it == st.buffers.end()) return st.buffers[name] = full(param.sizes(), init, TensorOptions(dt).with(param.device()));
  Tensor& b = it->second;
  // The module moved (to(device) / to(dtype)): the state follows, on device.
  if (b.device() != param.device() || b.dtype() != dt) b = b.to(param.device(), dt);
  return b;
}

Tensor& Optimizer::master(ParamState& st, const Tensor& param) {
  auto it = st.buffers.find("master");
  if (it == st.buffers.end()) return st.buffers["master"] = param.detach().to(kFloat32).contiguous().clone();
  Tensor& m = it->second;
  if (m.device() != param.device()) m = m.to(param.device());
  return m;
}

void Optimizer::step() {
  profiler::PhaseGuard phase(profiler::Phase::optimizer);  // ops below are "optimizer" in profiles
  autograd::NoGradGuard no_grad;
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    ParamGroup& group = groups_[gi];
    for (size_t pi = 0; pi < group.params.size(); ++pi) {
      const Tensor& p = group.params[pi];
      Tensor g = p.grad();
      if (!g.defined()) continue;
      // Built only on failure: step() is on every training iteration's path.
      auto what = [&] {
        return std::string(name_) + ".step: parameter " + std::to_string(pi) + " of group " + std::to_string(gi);
      };
      VNN_CHECK(ShapeError, g.sizes() == p.sizes(), what(), " has shape ", p.shape_str(),
                " but its gradient has shape ", g.shape_str());
      VNN_CHECK(DTypeError, g.dtype() == p.dtype(), what(), " is ", ::vnn::name(p.dtype()), " but its gradient is ",
                ::vnn::name(g.dtype()));
      if (g.impl()->storage->ctx != p.impl()->storage->ctx)
        detail::check_same_device(p, g, (std::string(name_) + ".step").c_str(), "grad");
      ParamState& st = state_[p.impl()];
      ++st.step;
      if (!g.is_contiguous()) g = g.contiguous();
      if (master_weights_ && (p.dtype() == kFloat16 || p.dtype() == kBFloat16)) {
        // The float32 master copy takes the update (from the 16-bit
        // gradient, in the fused kernel); the parameter gets it rounded.
        Tensor& m = master(st, p);
        update(m, g, st, group.options);
        p.detach().copy_(m);
      } else if (p.is_contiguous()) {
        update(p, g, st, group.options);
      } else {
        // The kernel walks flat buffers: update a contiguous copy, write back.
        Tensor tmp = p.contiguous();
        update(tmp, g, st, group.options);
        p.detach().copy_(tmp);
      }
      p.impl()->storage->version.fetch_add(1);
    }
  }
}

void Optimizer::zero_grad(bool set_to_none) {
  autograd::NoGradGuard no_grad;
  for (auto& group : groups_)
    for (auto& p : group.params) {
      Tensor g = p.grad();
      if (!g.defined()) continue;
      if (set_to_none)
        p.set_grad(Tensor());
      else
        g.zero_();
    }
}

StateDict Optimizer::state_dict() const {
  StateDict out;
  int64_t index = 0;
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    const ParamGroup& g = groups_[gi];
    std::string prefix = "param_groups." + std::to_string(gi) + ".";
    for (auto& [k, v] : g.options) out.emplace_back(prefix + k, scalar64(v));
    std::vector<int64_t> ids;
    for (size_t i = 0; i < g.params.size(); ++i) ids.push_back(index + int64_t(i));
    out.emplace_back(prefix + "params", from_vector(ids, Shape{int64_t(ids.size())}));
    index += int64_t(g.params.size());
  }
  index = 0;
  for (auto& g : groups_)
    for (auto& p : g.params) {
      auto it = state_.find(p.impl());
      if (it != state_.end()) {
        std::string prefix = "state." + std::to_string(index) + ".";
        out.emplace_back(prefix + "step", scalar64(double(it->second.step)));
        for (auto& [k, b] : it->second.buffers) out.emplace_back(prefix + k, b.clone());
        for (auto& [k, v] : it->second.scalars) out.emplace_back(prefix + k, scalar64(v));
      }
      ++index;
    }
  return out;
}

void Optimizer::load_state_dict(const StateDict& dict) { apply_state_dict(check_state_dict(dict)); }

void Optimizer::apply_state_dict(LoadedState loaded) {
  for (size_t gi = 0; gi < groups_.size() && gi < loaded.options.size(); ++gi)
    groups_[gi].options = std::move(loaded.options[gi]);
  state_ = std::move(loaded.state);
}

Optimizer::LoadedState Optimizer::check_state_dict(const StateDict& dict) const {
  std::vector<Tensor> flat;
  for (auto& g : groups_)
    for (auto& p : g.params) flat.push_back(p);
  std::vector<std::map<std::string, double>> options(groups_.size());
  std::unordered_map<const void*, ParamState> state;
  std::set<std::string> seen_params;
  const std::string who = std::string(name_) + ".load_state_dict: ";
  for (auto& [key, t] : dict) {
    auto parts = split_key(key);
    int64_t idx = -1;
    if (parts.size() != 3 || !parse_index(parts[1], &idx) || !t.defined())
      VNN_THROW(ValueError, who, "unexpected key '", key, "'");
    if (parts[0] == "param_groups") {
      if (idx >= int64_t(groups_.size()))
        VNN_THROW(ValueError, who, "key '", key, "' names group ", idx, " but the optimizer has ", groups_.size(),
                  " groups");
      if (parts[2] == "params") {
        VNN_CHECK(ValueError, t.numel() == int64_t(groups_[size_t(idx)].params.size()), who, "'", key, "' lists ",
                  t.numel(), " parameters but the group holds ", groups_[size_t(idx)].params.size());
        seen_params.insert(key);
        continue;
      }
      VNN_CHECK(ValueError, defaults_.count(parts[2]), who, "unexpected option key '", key, "'");
      VNN_CHECK(ShapeError, t.numel() == 1, who, "'", key, "' must hold one value, got shape ", t.shape_str());
      options[size_t(idx)][parts[2]] = t.item();
    } else if (parts[0] == "state") {
      if (idx >= int64_t(flat.size()))
        VNN_THROW(ValueError, who, "key '", key, "' names parameter ", idx, " but the optimizer holds ", flat.size());
      const Tensor& p = flat[size_t(idx)];
      ParamState& st = state[p.impl()];
      if (parts[2] == "step") {
        VNN_CHECK(ShapeError, t.numel() == 1, who, "'", key, "' must hold one value, got shape ", t.shape_str());
        const double step = t.item();
        // Integral and exactly representable; int64_t(NaN) would be undefined.
        if (!(step >= 0 && step <= 9007199254740992.0) || step != std::floor(step))
          VNN_THROW(ValueError, who, "'", key, "' = ", step, " is not a step count (a non-negative integer)");
        st.step = int64_t(step);
      } else if (is_scalar_state(parts[2])) {
        VNN_CHECK(ShapeError, t.numel() == 1, who, "'", key, "' must hold one value, got shape ", t.shape_str());
        st.scalars[parts[2]] = t.item();
      } else {
        VNN_CHECK(ShapeError, state_shape_ok(parts[2], t, p), who, "'", key, "' has shape ", t.shape_str(),
                  ", which does not fit parameter ", idx, " of shape ", p.shape_str());
        // A fresh copy on the parameter's device and state dtype (float32
        // for 16-bit parameters): the dict stays the caller's.
        Tensor b = t.to(p.device(), state_dtype(p.dtype()));
        st.buffers[parts[2]] = b.impl() == t.impl() ? t.clone() : b;
      }
    } else {
      VNN_THROW(ValueError, who, "unexpected key '", key, "'");
    }
  }
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    std::string prefix = "param_groups." + std::to_string(gi) + ".";
    VNN_CHECK(ValueError, seen_params.count(prefix + "params"), who, "missing key '", prefix, "params'");
    for (auto& d : defaults_)
      VNN_CHECK(ValueError, options[gi].count(d.first), who, "missing key '", prefix, d.first, "'");
    validate(options[gi]);
  }
  return LoadedState{std::move(options), std::move(state)};
}

namespace {

// The one OPTIMIZER_STEP enqueue: outputs = {param, state...}, inputs = {grad}.
void enqueue_step(const Tensor& param, const Tensor& grad, const std::vector<Tensor>& state,
                  detail::Span<double> scalars, detail::Span<int64_t> ints, const char* name) {
  constexpr size_t kMaxState = 3;
  if (state.size() > kMaxState) VNN_THROW(ValueError, name, ": too many state buffers");
  const Tensor* outs[1 + kMaxState] = {&param};
  for (size_t i = 0; i < state.size(); ++i) outs[1 + i] = &state[i];
  detail::enqueue(VNN_OP_OPTIMIZER_STEP, name, {&grad}, detail::Span<const Tensor*>(outs, 1 + state.size()),
                  scalars, ints);
}

}  // namespace

void fused_step(const Tensor& param, const Tensor& grad, const std::vector<Tensor>& state,
                const std::vector<double>& scalars, const std::vector<int64_t>& ints, const char* name) {
  enqueue_step(param, grad, state, scalars, ints, name);
}

void fused_step(const Tensor& param, const Tensor& grad, const std::vector<Tensor>& state,
                const vnn_optimizer_params& params, const char* name) {
  double scalars[VNN_OPTIM_MAX_SCALARS];
  int64_t ints[VNN_OPTIM_MAX_INTS];
  int32_t ns = 0, ni = 0;
  VNN_CHECK(ValueError, vnn_optimizer_pack(&params, scalars, &ns, ints, &ni), name, ": unknown optimizer rule ",
            params.fn);
  enqueue_step(param, grad, state, detail::Span<double>(scalars, size_t(ns)), detail::Span<int64_t>(ints, size_t(ni)),
               name);
}

}  // namespace vnn::optim
