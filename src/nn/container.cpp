// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "vnn/detail/message.h"
#include "vnn/nn/container.h"

#include "vnn/error.h"

namespace vnn::nn {

namespace {
ModulePtr at(const std::vector<ModulePtr>& modules, size_t i, const char* type) {
  if (i >= modules.size()) VNN_THROW(IndexError, type, ": index ", i, " is out of range (size ", modules.size(), ")");
  return modules[i];
}

// A container's clone: the same container of cloned children, with the
// training flag.
template <class C>
std::shared_ptr<C> clone_container(const std::vector<ModulePtr>& modules, const std::optional<Device>& device) {
  auto copy = std::make_shared<C>();
  for (auto& m : modules) copy->push_back(m->clone(device));
  return copy;
}
}  // namespace

std::vector<ModulePtr> module_list(std::initializer_list<ModuleListElement> modules) {
  std::vector<ModulePtr> out;
  out.reserve(modules.size());
  for (auto& m : modules) out.push_back(m.module.ptr());
  return out;
}

std::vector<AnyModule> any_module_list(std::initializer_list<ModuleListElement> modules) {
  std::vector<AnyModule> out;
  out.reserve(modules.size());
  for (auto& m : modules) out.push_back(m.module);
  return out;
}

Tensor AnyModule::forward(const Tensor& input) const {
  if (!module_) VNN_THROW(ValueError, "AnyModule: forward of an empty AnyModule; give it a module first");
  module_->run_forward_pre_hooks();
  return forward_(*module_, input);
}

AnyModule AnyModule::clone(const std::optional<Device>& device) const {
  if (!module_) return {};
  return AnyModule(module_->clone(device), forward_);
}

SequentialImpl::SequentialImpl(std::initializer_list<ModulePtr> modules) : Module("Sequential") {
  for (auto& m : modules) push_back(m);
}
SequentialImpl::SequentialImpl(const std::vector<ModulePtr>& modules) : Module("Sequential") {
  for (auto& m : modules) push_back(m);
}
SequentialImpl::SequentialImpl(const std::vector<AnyModule>& modules) : Module("Sequential") {
  for (auto& m : modules) push_back(m);
}
void SequentialImpl::push_back(AnyModule m) {
  add_child(std::to_string(modules_.size()), m.ptr());
  modules_.push_back(m.ptr());
  calls_.push_back(std::move(m));
}
Tensor SequentialImpl::forward(const Tensor& input) {
  Tensor x = input;
  for (auto& m : calls_) x = m.forward(x);
  return x;
}
std::shared_ptr<Module> SequentialImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<SequentialImpl>();
  for (auto& m : calls_) copy->push_back(m.clone(device));
  copy->set_training_flag(is_training());
  return copy;
}
void SequentialImpl::replace_child(const std::string& name, std::shared_ptr<Module> module) {
  Module::replace_child(name, module);
  for (size_t i = 0; i < modules_.size(); ++i)
    if (std::to_string(i) == name) {
      modules_[i] = module;
      calls_[i] = AnyModule(module);
    }
}
ModulePtr SequentialImpl::operator[](size_t i) const { return at(modules_, i, "Sequential"); }
const AnyModule& SequentialImpl::any_module(size_t i) const {
  at(modules_, i, "Sequential");  // IndexError past the end
  return calls_[i];
}

ModuleListImpl::ModuleListImpl(std::initializer_list<ModulePtr> modules) : Module("ModuleList") {
  for (auto& m : modules) push_back(m);
}
ModuleListImpl::ModuleListImpl(const std::vector<ModulePtr>& modules) : Module("ModuleList") {
  for (auto& m : modules) push_back(m);
}
void ModuleListImpl::push_back(ModulePtr m) {
  add_child(std::to_string(modules_.size()), m);
  modules_.push_back(std::move(m));
}
std::shared_ptr<Module> ModuleListImpl::clone(const std::optional<Device>& device) const {
  auto copy = clone_container<ModuleListImpl>(modules_, device);
  copy->set_training_flag(is_training());
  return copy;
}
void ModuleListImpl::replace_child(const std::string& name, std::shared_ptr<Module> module) {
  Module::replace_child(name, module);
  for (size_t i = 0; i < modules_.size(); ++i)
    if (std::to_string(i) == name) modules_[i] = module;
}
ModulePtr ModuleListImpl::operator[](size_t i) const { return at(modules_, i, "ModuleList"); }

ModuleDictImpl::ModuleDictImpl(const std::vector<std::pair<std::string, ModulePtr>>& modules) : Module("ModuleDict") {
  for (auto& [k, m] : modules) insert(k, m);
}
ModuleDictImpl::ModuleDictImpl(std::initializer_list<NamedModuleElement> modules) : Module("ModuleDict") {
  for (auto& e : modules) insert(e.name, e.module);
}
void ModuleDictImpl::insert(const std::string& key, ModulePtr m) { add_child(key, std::move(m)); }
std::shared_ptr<Module> ModuleDictImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<ModuleDictImpl>();
  for (auto& [k, m] : named_children()) copy->insert(k, m->clone(device));
  copy->set_training_flag(is_training());
  return copy;
}
bool ModuleDictImpl::contains(const std::string& key) const {
  for (auto& c : named_children())
    if (c.first == key) return true;
  return false;
}
std::vector<std::string> ModuleDictImpl::keys() const {
  std::vector<std::string> out;
  for (auto& c : named_children()) out.push_back(c.first);
  return out;
}
ModulePtr ModuleDictImpl::operator[](const std::string& key) const {
  for (auto& c : named_children())
    if (c.first == key) return c.second;
  std::string known;
  for (auto& k : keys()) known += (known.empty() ? "" : ", ") + k;
  VNN_THROW(ValueError, "ModuleDict: no key '", key, "' (keys: ", (known.empty() ? "none" : known), ")");
}

}  // namespace vnn::nn
