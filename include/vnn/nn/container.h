// Containers: Sequential, ModuleList, ModuleDict (module classes with
// holders, as LibTorch's):
//   vnn::nn::Sequential seq(vnn::nn::Linear(784, 128), vnn::nn::ReLU(), vnn::nn::Linear(128, 10));
//   seq->push_back(vnn::nn::LogSoftmax(1));
//   vnn::Tensor y = seq(x);   seq[0]->as<vnn::nn::Linear>()->weight;   for (auto& m : *seq) ...
#pragma once
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "vnn/nn/module.h"

namespace vnn::nn {

template <class... Ms>
inline constexpr bool all_modules_v = (sizeof...(Ms) > 0) && (std::is_convertible_v<Ms&&, ModulePtr> && ...);

// Runs its children in order; children are named "0", "1", ...
class SequentialImpl : public Module {
 public:
  SequentialImpl() : Module("Sequential") {}
  SequentialImpl(std::initializer_list<ModulePtr> modules);
  explicit SequentialImpl(const std::vector<ModulePtr>& modules);
  // Any modules: holders (Linear(...)) or shared_ptrs to modules.
  template <class... Ms, std::enable_if_t<all_modules_v<Ms...>, int> = 0>
  explicit SequentialImpl(Ms&&... modules) : Module("Sequential") {
    (push_back(ModulePtr(std::forward<Ms>(modules))), ...);
  }
  void push_back(ModulePtr m);
  Tensor forward(const Tensor& input) override;
  // Clones every child (all must be cloneable).
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;
  size_t size() const { return modules_.size(); }
  bool is_empty() const { return modules_.empty(); }
  ModulePtr operator[](size_t i) const;  // IndexError past the end
  std::vector<ModulePtr>::const_iterator begin() const { return modules_.begin(); }
  std::vector<ModulePtr>::const_iterator end() const { return modules_.end(); }

 private:
  std::vector<ModulePtr> modules_;
};

// One element of a braced module list: a holder or a shared_ptr to a
// module, never nullptr, so that `Sequential features{nullptr};` is an empty
// holder (as LibTorch's) rather than a list holding one null module.
struct ModuleListElement {
  template <class M, std::enable_if_t<std::is_convertible_v<M&&, ModulePtr> &&
                                          !std::is_same_v<std::decay_t<M>, std::nullptr_t>,
                                      int> = 0>
  ModuleListElement(M&& m) : module(std::forward<M>(m)) {}  // NOLINT: implicit by design
  ModulePtr module;
};
std::vector<ModulePtr> module_list(std::initializer_list<ModuleListElement> modules);

class Sequential : public ModuleHolder<SequentialImpl> {
 public:
  using ModuleHolder<SequentialImpl>::ModuleHolder;
  Sequential(std::initializer_list<ModuleListElement> modules)
      : ModuleHolder(std::make_shared<SequentialImpl>(module_list(modules))) {}
};

// Holds submodules (registered, so their parameters are found) without
// defining forward.
class ModuleListImpl : public Module {
 public:
  ModuleListImpl() : Module("ModuleList") {}
  ModuleListImpl(std::initializer_list<ModulePtr> modules);
  template <class... Ms, std::enable_if_t<all_modules_v<Ms...>, int> = 0>
  explicit ModuleListImpl(Ms&&... modules) : Module("ModuleList") {
    (push_back(ModulePtr(std::forward<Ms>(modules))), ...);
  }
  void push_back(ModulePtr m);
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;
  size_t size() const { return modules_.size(); }
  bool is_empty() const { return modules_.empty(); }
  ModulePtr operator[](size_t i) const;  // IndexError past the end
  std::vector<ModulePtr>::const_iterator begin() const { return modules_.begin(); }
  std::vector<ModulePtr>::const_iterator end() const { return modules_.end(); }

 private:
  std::vector<ModulePtr> modules_;
};

class ModuleList : public ModuleHolder<ModuleListImpl> {
 public:
  using ModuleHolder<ModuleListImpl>::ModuleHolder;
  ModuleList(std::initializer_list<ModuleListElement> modules) : ModuleHolder(std::make_shared<ModuleListImpl>()) {
    for (auto& m : module_list(modules)) get()->push_back(m);
  }
};

class ModuleDictImpl : public Module {
 public:
  ModuleDictImpl() : Module("ModuleDict") {}
  void insert(const std::string& key, ModulePtr m);
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;
  ModulePtr operator[](const std::string& key) const;  // throws ValueError listing the keys
  bool contains(const std::string& key) const;
  std::vector<std::string> keys() const;
  size_t size() const { return named_children().size(); }
};
VNN_MODULE(ModuleDict);

}  // namespace vnn::nn
