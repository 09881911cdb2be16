// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "vnn/detail/message.h"
#include "vnn/nn/module.h"

#include <algorithm>
#include <ostream>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "autograd/autograd.hpp"
#include "nn/state_load.hpp"
#include "tensor/registered_tensor.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/device.h"
#include "vnn/error.h"
#include "vnn/random.h"

namespace vnn::nn {

Tensor Module::forward_erased(const Tensor& input) {
  if (unary_forward_) return unary_forward_(*this, input);
  VNN_THROW(Unsupported, type_name_, "(input ", input.shape_str(),
            ") through a Module reference: no forward(Tensor) -> Tensor is known for this module. Call its own forward "
            "(it may take other arguments or return a tuple), derive it from Cloneable<Self>, or hand it over as a holder or "
            "shared_ptr of its class so that its forward is seen");
}

namespace {
void check_name(const std::string& owner, const std::string& name, const char* what) {
  if (name.empty() || name.find('.') != std::string::npos)
    VNN_THROW(ValueError, owner, ": ", what, " name '", name, "' must be non-empty and contain no '.'");
}
}  // namespace

Tensor Module::register_in(Registry& registry, const std::string& name, Tensor value) {
  auto entry = std::make_shared<vnn::detail::RegisteredTensor>();
  entry->set(value);
  registry.emplace_back(name, entry);
  return entry->bind_result(value);
}

namespace {
template <class Registry>
auto find_entry(Registry& registry, const std::string& name) {
  return std::find_if(registry.begin(), registry.end(), [&](const auto& e) { return e.first == name; });
}
}  // namespace

Tensor Module::register_parameter(const std::string& name, Tensor value, bool requires_grad) {
  check_name(type_name_, name, "parameter");
  VNN_CHECK(ValueError, find_entry(params_, name) == params_.end(), type_name_, ": parameter '", name,
            "' is already registered");
  VNN_CHECK(ValueError, value.defined(), type_name_, ": parameter '", name, "' is an undefined tensor");
  // A parameter is a leaf. A leaf is registered itself, so that registering
  // a tensor another module holds shares it (one leaf, one gradient); an op's
  // result, or a frozen registration of a tensor that requires grad, is a
  // new leaf on the same storage.
  if (!value.is_leaf() || (!requires_grad && value.requires_grad())) value = value.detach();
  if (requires_grad && !value.requires_grad()) value.requires_grad_(true);
  // An attribute (a former parameter) becomes a parameter again, still bound
  // to its member, so the result is returned unbound.
  auto attr = find_entry(attributes_, name);
  if (attr != attributes_.end()) {
    attr->second->set(value);
    params_.push_back(*attr);
    attributes_.erase(attr);
    return value;
  }
  return register_in(params_, name, std::move(value));
}

Tensor Module::register_buffer(const std::string& name, Tensor value) {
  check_name(type_name_, name, "buffer");
  VNN_CHECK(ValueError, find_entry(buffers_, name) == buffers_.end() && find_entry(attributes_, name) == attributes_.end(),
            type_name_, ": buffer '", name, "' is already registered (or an attribute)");
  return register_in(buffers_, name, std::move(value));
}

Tensor Module::unregister_parameter(const std::string& name) {
  auto it = find_entry(params_, name);
  VNN_CHECK(ValueError, it != params_.end(), type_name_, "::unregister_parameter: no parameter '", name, "'");
  Tensor value = it->second->get();
  if (it->second->bound()) attributes_.push_back(*it);  // its member keeps reading the entry
  params_.erase(it);
  return value;
}

void Module::unregister_buffer(const std::string& name) {
  auto it = find_entry(buffers_, name);
  VNN_CHECK(ValueError, it != buffers_.end(), type_name_, "::unregister_buffer: no buffer '", name, "'");
  buffers_.erase(it);
}

void Module::set_attribute(const std::string& name, const Tensor& value) {
  auto it = find_entry(attributes_, name);
  VNN_CHECK(ValueError, it != attributes_.end(), type_name_, "::set_attribute: no attribute '", name,
            "' (only a parameter unregistered with unregister_parameter is one)");
  it->second->set(value);
}

Tensor Module::attribute(const std::string& name) const {
  auto it = find_entry(attributes_, name);
  VNN_CHECK(ValueError, it != attributes_.end(), type_name_, ": no attribute '", name, "'");
  return it->second->get();
}

bool Module::has_parameter(const std::string& name) const { return find_entry(params_, name) != params_.end(); }

Tensor Module::parameter(const std::string& name) const {
  auto it = find_entry(params_, name);
  VNN_CHECK(ValueError, it != params_.end(), type_name_, ": no parameter '", name, "'");
  return it->second->get();
}

Tensor Module::buffer(const std::string& name) const {
  auto it = find_entry(buffers_, name);
  VNN_CHECK(ValueError, it != buffers_.end(), type_name_, ": no buffer '", name, "'");
  return it->second->get();
}

int64_t Module::register_forward_pre_hook(ForwardPreHook hook, const std::string& tag,
                                          std::function<void(Module&)> on_clone) {
  VNN_CHECK(ValueError, hook, type_name_, "::register_forward_pre_hook: the hook is empty");
  VNN_CHECK(ValueError, tag.empty() || find_forward_pre_hook(tag) < 0, type_name_,
            "::register_forward_pre_hook: a hook tagged '", tag, "' is already registered");
  pre_hooks_.push_back(
      {next_hook_handle_, tag, std::make_shared<const ForwardPreHook>(std::move(hook)), std::move(on_clone)});
  return next_hook_handle_++;
}

bool Module::remove_forward_pre_hook(int64_t handle) {
  auto it = std::find_if(pre_hooks_.begin(), pre_hooks_.end(), [&](const PreHook& h) { return h.handle == handle; });
  if (it == pre_hooks_.end()) return false;
  pre_hooks_.erase(it);
  return true;
}

int64_t Module::find_forward_pre_hook(const std::string& tag) const {
  for (auto& h : pre_hooks_)
    if (h.tag == tag) return h.handle;
  return -1;
}

const Module::ForwardPreHook& Module::forward_pre_hook(int64_t handle) const {
  for (auto& h : pre_hooks_)
    if (h.handle == handle) return *h.hook;
  VNN_THROW(ValueError, type_name_, "::forward_pre_hook: no hook with handle ", handle);
}

void Module::run_pre_hooks() {
  std::vector<std::shared_ptr<const ForwardPreHook>> hooks;  // a hook may remove itself
  for (auto& h : pre_hooks_) hooks.push_back(h.hook);
  for (auto& h : hooks) (*h)(*this);
}

void Module::install_hooks_of(const Module& src) {
  for (auto& h : src.pre_hooks_) {
    if (!h.tag.empty() && find_forward_pre_hook(h.tag) >= 0) continue;  // reset() installed it already
    if (h.on_clone) h.on_clone(*this);
    else register_forward_pre_hook(*h.hook, h.tag);
  }
  for (size_t i = 0; i < children_.size() && i < src.children_.size(); ++i)
    if (children_[i].first == src.children_[i].first) children_[i].second->install_hooks_of(*src.children_[i].second);
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> module) {
  check_name(type_name_, name, "submodule");
  VNN_CHECK(ValueError, module, type_name_, ": submodule '", name, "' is null");
  for (auto& c : children_)
    VNN_CHECK(ValueError, c.first != name, type_name_, ": submodule '", name, "' is already registered");
  children_.emplace_back(name, std::move(module));
}

void Module::replace_child(const std::string& name, std::shared_ptr<Module> module) {
  VNN_CHECK(ValueError, module, type_name_, "::replace_child: the new module for '", name, "' is null");
  for (auto& c : children_)
    if (c.first == name) {
      c.second = std::move(module);
      return;
    }
  VNN_THROW(ValueError, type_name_, "::replace_child: no submodule '", name, "'");
}

void Module::share_registrations(const Module& other) {
  if (!params_.empty() || !buffers_.empty() || !children_.empty())
    VNN_THROW(ValueError, type_name_, ": share_registrations needs a module with nothing registered yet");
  params_ = other.params_;
  buffers_ = other.buffers_;
  children_ = other.children_;
}

namespace {
// Depth first over the module tree (own entries, then each child's), with
// dotted paths; remove_duplicate keeps a tensor at its first path only.
// Entries whose member was assigned an undefined tensor are left out.
struct Collector {
  bool params, remove_duplicate;
  StateDict& out;
  std::unordered_set<const vnn::detail::TensorImpl*> seen;
  void add(const std::string& name, const Tensor& t) {
    if (!t.defined()) return;
    if (remove_duplicate && !seen.insert(t.impl()).second) return;
    out.emplace_back(name, t);
  }
};
}  // namespace

void Module::collect(const std::string& prefix, bool recurse, bool params, bool remove_duplicate,
                     StateDict& out) const {
  Collector c{params, remove_duplicate, out, {}};
  std::function<void(const Module&, const std::string&)> walk = [&](const Module& m, const std::string& at) {
    for (auto& [n, e] : params ? m.params_ : m.buffers_) c.add(at + n, e->get());
    if (!recurse && &m == this) return;
    for (auto& [n, child] : m.children_) walk(*child, at + n + ".");
  };
  walk(*this, prefix);
}

StateDict Module::named_parameters(bool recurse, bool remove_duplicate) const {
  StateDict out;
  collect("", recurse, true, remove_duplicate, out);
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& p : named_parameters(recurse)) out.push_back(p.second);
  return out;
}

StateDict Module::named_buffers(bool recurse, bool remove_duplicate) const {
  StateDict out;
  collect("", recurse, false, remove_duplicate, out);
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& b : named_buffers(recurse)) out.push_back(b.second);
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_modules(const std::string& prefix) {
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> out;
  std::unordered_set<const Module*> seen;
  std::function<void(const std::shared_ptr<Module>&, const std::string&)> walk =
      [&](const std::shared_ptr<Module>& m, const std::string& at) {
        if (!seen.insert(m.get()).second) return;
        out.emplace_back(at, m);
        for (auto& [n, c] : m->children_) walk(c, at.empty() ? n : at + "." + n);
      };
  walk(shared_from_this(), prefix);
  return out;
}

void Module::apply(const std::function<void(Module&)>& fn) {
  apply([&fn](const std::string&, Module& m) { fn(m); });
}

void Module::apply(const std::function<void(const std::string&, Module&)>& fn, const std::string& name_prefix) {
  std::unordered_set<const Module*> seen;
  std::function<void(Module&, const std::string&)> walk = [&](Module& m, const std::string& at) {
    if (!seen.insert(&m).second) return;
    fn(at, m);
    for (auto& [n, c] : m.children_) walk(*c, at.empty() ? n : at + "." + n);
  };
  walk(*this, name_prefix);
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

void Module::move_all(const std::optional<Device>& device, std::optional<DType> dtype, bool non_blocking) {
  if (dtype && !is_floating(*dtype))
    VNN_THROW(DTypeError, type_name_, "::to: modules can only be cast to floating dtypes, not ", name(*dtype));
  auto move = [&](const Tensor& t) {
    DType want = dtype && is_floating(t.dtype()) ? *dtype : t.dtype();
    move_in_place(t, device ? *device : t.device(), want, non_blocking);
  };
  for (auto& t : parameters()) move(t);
  for (auto& t : buffers()) move(t);
}

Module& Module::to(const Device& device, bool non_blocking) {
  move_all(device, std::nullopt, non_blocking);
  return *this;
}

Module& Module::to(DType dtype) {
  move_all(std::nullopt, dtype, false);
  return *this;
}

Module& Module::to(const Device& device, DType dtype, bool non_blocking) {
  move_all(device, dtype, non_blocking);
  return *this;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (auto& c : children_) out.push_back(c.second);
  return out;
}

std::shared_ptr<Module> Module::clone(const std::optional<Device>&) const {
  VNN_THROW(Unsupported, type_name_,
            "::clone: this module derives from vnn::nn::Module directly, so vnn cannot "
            "rebuild it; derive it from vnn::nn::Cloneable<",
            type_name_, "Impl> (or the class's own name) and create its parameters, buffers and submodules in reset()");
}

namespace {
// A deep copy of src's data onto device (src's own device when none),
// never aliasing src.
Tensor copy_of(const Tensor& src, const std::optional<Device>& device) {
  Tensor data = src.detach().to(device ? *device : src.device(), src.dtype()).contiguous();
  if (data.raw_data() == src.raw_data()) data = data.clone();
  return data;
}

void copy_tensor(const Tensor& dst, const Tensor& src, const std::optional<Device>& device) {
  vnn::detail::set_data(dst, copy_of(src, device));
  if (dst.requires_grad() != src.requires_grad()) const_cast<Tensor&>(dst).requires_grad_(src.requires_grad());
  Tensor g = src.grad();
  if (g.defined()) const_cast<Tensor&>(dst).set_grad(copy_of(g, device));
}

// Keeps the default generator where it was: reset() draws fresh initial
// values that clone() overwrites, so they must not advance the user's stream.
struct GeneratorStateGuard {
  uint64_t seed = default_generator().seed(), offset = default_generator().offset();
  ~GeneratorStateGuard() {
    default_generator().manual_seed(seed);
    default_generator().set_offset(offset);
  }
};
}  // namespace

std::shared_ptr<Module> Module::finish_clone(std::shared_ptr<Module> copy, const std::function<void()>& reset,
                                             const std::optional<Device>& device) const {
  if (device) {
    try {
      device_info(*device);
    } catch (const DeviceNotFound& e) {
      VNN_THROW(DeviceNotFound, type_name_, "::clone: ", e.what());
    }
  }
  copy->params_.clear();
  copy->buffers_.clear();
  copy->children_.clear();
  {
    GeneratorStateGuard keep;
    autograd::NoGradGuard no_grad;
    reset();
    copy->install_hooks_of(*this);
  }
  copy->copy_state_from(*this, device);
  return copy;
}

void Module::copy_state_from(const Module& src, const std::optional<Device>& device) {
  std::unordered_map<const void*, Tensor> copied;
  copy_state_from(src, device, copied);
}

void Module::copy_state_from(const Module& src, const std::optional<Device>& device,
                             std::unordered_map<const void*, Tensor>& copied) {
  auto names = [](const auto& list) {
    std::string s;
    for (auto& e : list) s += (s.empty() ? "" : ", ") + e.first;
    return "[" + s + "]";
  };
  auto check = [&](const auto& mine, const auto& theirs, const char* what) {
    bool same = mine.size() == theirs.size();
    for (size_t i = 0; same && i < mine.size(); ++i) same = mine[i].first == theirs[i].first;
    VNN_CHECK(Unsupported, same, type_name_, "::clone: reset() builds the ", what, " ", names(mine),
              " but the module has ", names(theirs), " (changed after construction?); register everything in reset()");
  };
  check(params_, src.params_, "parameters");
  check(buffers_, src.buffers_, "buffers");
  check(children_, src.children_, "submodules");
  autograd::NoGradGuard no_grad;
  // A tensor src shares between entries (tied weights) is copied once, and
  // the later entries are pointed at that copy.
  auto copy_entries = [&](Registry& mine, const Registry& theirs) {
    for (size_t i = 0; i < mine.size(); ++i) {
      const Tensor& from = theirs[i].second->get();
      if (!from.defined()) {
        mine[i].second->set(Tensor());
        continue;
      }
      auto it = copied.find(from.impl());
      if (it != copied.end()) {
        mine[i].second->set(it->second);
        continue;
      }
      Tensor to = mine[i].second->get();
      if (!to.defined()) {  // the copy's member was left undefined: give it a tensor of its own
        to = copy_of(from, device);
        if (from.requires_grad()) to.requires_grad_(true);
        mine[i].second->set(to);
      } else {
        copy_tensor(to, from, device);
      }
      copied.emplace(from.impl(), to);
    }
  };
  copy_entries(params_, src.params_);
  copy_entries(buffers_, src.buffers_);
  for (auto& [n, e] : attributes_) {  // a computed weight, until the next forward recomputes it
    auto from = find_entry(src.attributes_, n);
    if (from != src.attributes_.end() && from->second->get().defined()) e->set(copy_of(from->second->get(), device));
  }
  for (size_t i = 0; i < children_.size(); ++i)
    children_[i].second->copy_state_from(*src.children_[i].second, device, copied);
  training_ = src.training_;
}

void throw_empty_holder(const char* what) {
  VNN_THROW(ValueError, "ModuleHolder: ", what,
            " an empty module holder (made from nullptr); assign it a module first, e.g. "
            "fc = register_module(\"fc\", Linear(784, 10))");
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
  StateDict out = named_parameters(true, false);
  for (auto& b : named_buffers(true, false)) out.push_back(b);
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
  VNN_CHECK(ValueError, undefined.empty(), who, "::load_state_dict: undefined tensors for ", undefined);
  VNN_CHECK(ShapeError, shapes.empty(), who, "::load_state_dict: size mismatch for ", shapes);
  if (strict && (!missing.empty() || !unexpected.empty()))
    VNN_THROW(ValueError, who, "::load_state_dict: ", (missing.empty() ? "" : "missing keys: " + missing + ". "),
              (unexpected.empty() ? "" : "unexpected keys: " + unexpected + ". "),
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
  for (auto& p : params_)
    if (p.second->get().defined()) own += p.second->get().numel();
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
