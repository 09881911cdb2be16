#include "vnn/nn/module.h"

#include <ostream>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "autograd/autograd.hpp"
#include "nn/state_load.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/error.h"

namespace vnn::nn {

Tensor Module::forward(const Tensor&) {
  throw ValueError(type_name_ + "::forward(Tensor) is not defined for this module; call its own forward overload");
}

namespace {
void check_name(const std::string& owner, const std::string& name, const char* what) {
  if (name.empty() || name.find('.') != std::string::npos)
    throw ValueError(owner + ": " + what + " name '" + name + "' must be non-empty and contain no '.'");
}
}  // namespace

Tensor Module::register_parameter(const std::string& name, Tensor value, bool requires_grad) {
  check_name(type_name_, name, "parameter");
  for (auto& p : params_)
    if (p.first == name) throw ValueError(type_name_ + ": parameter '" + name + "' is already registered");
  if (!value.defined()) throw ValueError(type_name_ + ": parameter '" + name + "' is an undefined tensor");
  value = value.detach();  // a parameter is a leaf
  if (requires_grad) value.requires_grad_(true);
  params_.emplace_back(name, value);
  return value;
}

Tensor Module::register_buffer(const std::string& name, Tensor value) {
  check_name(type_name_, name, "buffer");
  for (auto& b : buffers_)
    if (b.first == name) throw ValueError(type_name_ + ": buffer '" + name + "' is already registered");
  buffers_.emplace_back(name, value);
  return value;
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> module) {
  check_name(type_name_, name, "submodule");
  if (!module) throw ValueError(type_name_ + ": submodule '" + name + "' is null");
  for (auto& c : children_)
    if (c.first == name) throw ValueError(type_name_ + ": submodule '" + name + "' is already registered");
  children_.emplace_back(name, std::move(module));
}

void Module::share_registrations(const Module& other) {
  if (!params_.empty() || !buffers_.empty() || !children_.empty())
    throw ValueError(type_name_ + ": share_registrations needs a module with nothing registered yet");
  params_ = other.params_;
  buffers_ = other.buffers_;
  children_ = other.children_;
}

void Module::collect(const std::string& prefix, bool recurse, bool params, StateDict& out) const {
  for (auto& [n, t] : params ? params_ : buffers_) out.emplace_back(prefix + n, t);
  if (!recurse) return;
  for (auto& [n, c] : children_) c->collect(prefix + n + ".", true, params, out);
}

StateDict Module::named_parameters(bool recurse) const {
  StateDict out;
  collect("", recurse, true, out);
  // A module shared at two places appears once (its first path).
  std::set<const vnn::detail::TensorImpl*> seen;
  StateDict unique;
  for (auto& p : out)
    if (seen.insert(p.second.impl()).second) unique.push_back(p);
  return unique;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& p : named_parameters(recurse)) out.push_back(p.second);
  return out;
}

StateDict Module::named_buffers(bool recurse) const {
  StateDict out;
  collect("", recurse, false, out);
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& b : named_buffers(recurse)) out.push_back(b.second);
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_modules(const std::string& prefix) {
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> out{{prefix, shared_from_this()}};
  for (auto& [n, c] : children_) {
    auto sub = c->named_modules(prefix.empty() ? n : prefix + "." + n);
    out.insert(out.end(), sub.begin(), sub.end());
  }
  return out;
}

int64_t Module::num_parameters() const {
  int64_t n = 0;
  for (auto& p : parameters()) n += p.numel();
  return n;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& c : children_) c.second->train(on);
}

namespace {
// Replaces a tensor's data in place (and its gradient's), so every handle
// to it follows.
void move_in_place(const Tensor& t, const Device& device, DType dtype, bool non_blocking) {
  autograd::NoGradGuard no_grad;
  if (t.device() == device && t.dtype() == dtype) return;
  vnn::detail::set_data(t, t.to(device, dtype, non_blocking));
  Tensor g = t.grad();
  if (g.defined()) vnn::detail::set_data(g, g.to(device, dtype, non_blocking));
}
}  // namespace

void Module::to(const Device& device, bool non_blocking) {
  for (auto& t : parameters()) move_in_place(t, device, t.dtype(), non_blocking);
  for (auto& t : buffers()) move_in_place(t, device, t.dtype(), non_blocking);
}

void Module::to(DType dtype) {
  if (!is_floating(dtype))
    throw DTypeError(type_name_ + "::to: modules can only be cast to floating dtypes, not " + std::string(name(dtype)));
  for (auto& t : parameters())
    if (is_floating(t.dtype())) move_in_place(t, t.device(), dtype, false);
  for (auto& t : buffers())
    if (is_floating(t.dtype())) move_in_place(t, t.device(), dtype, false);
}

void Module::zero_grad(bool set_to_none) {
  for (auto& p : parameters()) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (set_to_none) p.set_grad(Tensor());
    else {
      autograd::NoGradGuard no_grad;
      g.zero_();
    }
  }
}

StateDict Module::state_dict() const {
  StateDict out = named_parameters();
  for (auto& b : named_buffers()) out.push_back(b);
  return out;
}

namespace detail {

PreparedLoad prepare_load(const Module& module, const StateDict& state, bool strict) {
  const std::string& who = module.type_name();
  StateDict mine = module.state_dict();
  std::unordered_map<std::string, const Tensor*> given;  // hashed: linear in the number of keys
  for (auto& s : state) given[s.first] = &s.second;
  std::unordered_set<std::string> known;
  std::string missing, unexpected, shapes, undefined;
  for (auto& [n, t] : mine) {
    known.insert(n);
    auto it = given.find(n);
    if (it == given.end()) {
      missing += (missing.empty() ? "" : ", ") + n;
      continue;
    }
    const Tensor& src = *it->second;
    if (!src.defined()) undefined += (undefined.empty() ? "" : ", ") + n;
    else if (src.sizes() != t.sizes())
      shapes += (shapes.empty() ? "" : "; ") + n + ": checkpoint " + src.sizes().str() + ", model " + t.sizes().str();
  }
  for (auto& s : state)
    if (!known.count(s.first)) unexpected += (unexpected.empty() ? "" : ", ") + s.first;
  if (!undefined.empty()) throw ValueError(who + "::load_state_dict: undefined tensors for " + undefined);
  if (!shapes.empty()) throw ShapeError(who + "::load_state_dict: size mismatch for " + shapes);
  if (strict && (!missing.empty() || !unexpected.empty()))
    throw ValueError(who + "::load_state_dict: " + (missing.empty() ? "" : "missing keys: " + missing + ". ") +
                     (unexpected.empty() ? "" : "unexpected keys: " + unexpected + ". ") +
                     "Pass strict = false to load a partial state");
  autograd::NoGradGuard no_grad;
  PreparedLoad out;
  for (auto& [n, t] : mine) {
    auto it = given.find(n);
    if (it == given.end()) continue;
    const Tensor& src = *it->second;
    Tensor copy = src.to(t.device(), t.dtype()).contiguous();
    if (copy.raw_data() == src.raw_data()) copy = copy.clone();  // never alias the caller's tensor
    out.assign.emplace_back(t, copy);
  }
  return out;
}

void apply_load(const PreparedLoad& prepared) {
  for (auto& [target, data] : prepared.assign) vnn::detail::set_data(target, data);
}

}  // namespace detail

// Validates and converts everything before the first tensor changes, so a
// failed load leaves the module as it was.
void Module::load_state_dict(const StateDict& state, bool strict) { detail::apply_load(detail::prepare_load(*this, state, strict)); }

void Module::str_into(std::string& out, const std::string& name, int indent) const {
  std::string pad(size_t(indent), ' ');
  int64_t own = 0;
  for (auto& p : params_) own += p.second.numel();
  out += pad + (name.empty() ? "" : "(" + name + "): ") + describe();
  if (children_.empty()) {
    if (own) out += "  [" + std::to_string(own) + " params]";
    out += "\n";
    return;
  }
  out += " (\n";
  for (auto& [n, c] : children_) c->str_into(out, n, indent + 2);
  out += pad + ")  [" + std::to_string(num_parameters()) + " params]\n";
}

std::string Module::str() const {
  std::string out;
  str_into(out, "", 0);
  return out;
}

std::ostream& operator<<(std::ostream& os, const Module& m) { return os << m.str(); }

}  // namespace vnn::nn
