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

/// Whether every M converts to a ModulePtr (a holder or a shared_ptr to a module).
template <class... Ms>
inline constexpr bool all_modules_v = (sizeof...(Ms) > 0) && (std::is_convertible_v<Ms&&, ModulePtr> && ...);

/// Runs its children in order; children are named "0", "1", ...
class SequentialImpl : public Module {
 public:
  /// An empty Sequential.
  SequentialImpl() : Module("Sequential") {}
  /// A Sequential of the given modules, in order.
  SequentialImpl(std::initializer_list<ModulePtr> modules);
  /// A Sequential of the given modules, in order.
  explicit SequentialImpl(const std::vector<ModulePtr>& modules);
  /// Any modules: holders (Linear(...)) or shared_ptrs to modules.
  template <class... Ms, std::enable_if_t<all_modules_v<Ms...>, int> = 0>
  explicit SequentialImpl(Ms&&... modules) : Module("Sequential") {
    (push_back(ModulePtr(std::forward<Ms>(modules))), ...);
  }
  /// Appends `m` as child "<size()>" (ValueError for a null module).
  void push_back(ModulePtr m);
  /// Feeds input through every child in order (an empty Sequential returns it unchanged).
  Tensor forward(const Tensor& input) override;
  /// Clones every child (all must be cloneable).
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;
  /// Number of children.
  size_t size() const { return modules_.size(); }
  /// Whether there are no children.
  bool is_empty() const { return modules_.empty(); }
  /// Child `i` (IndexError past the end).
  ModulePtr operator[](size_t i) const;  // IndexError past the end
  /// Iterator over the children, in order.
  std::vector<ModulePtr>::const_iterator begin() const { return modules_.begin(); }
  /// End of the children.
  std::vector<ModulePtr>::const_iterator end() const { return modules_.end(); }

 private:
  std::vector<ModulePtr> modules_;
};

/// One element of a braced module list: a holder or a shared_ptr to a
/// module, never nullptr, so that `Sequential features{nullptr};` is an empty
/// holder (as LibTorch's) rather than a list holding one null module.
struct ModuleListElement {
  template <class M, std::enable_if_t<std::is_convertible_v<M&&, ModulePtr> &&
                                          !std::is_same_v<std::decay_t<M>, std::nullptr_t>,
                                      int> = 0>
  /// Wraps a holder or a shared_ptr to a module (nullptr does not convert).
  ModuleListElement(M&& m) : module(std::forward<M>(m)) {}  // NOLINT: implicit by design
  /// The module.
  ModulePtr module;
};
/// The modules of a braced list as ModulePtrs, in order.
std::vector<ModulePtr> module_list(std::initializer_list<ModuleListElement> modules);

/// The holder of SequentialImpl; `Sequential seq{Linear(4, 8), ReLU()}` builds it from a list.
class Sequential : public ModuleHolder<SequentialImpl> {
 public:
  using ModuleHolder<SequentialImpl>::ModuleHolder;
  /// A Sequential of the braced list's modules, in order.
  Sequential(std::initializer_list<ModuleListElement> modules)
      : ModuleHolder(std::make_shared<SequentialImpl>(module_list(modules))) {}
};

/// Holds submodules (registered, so their parameters are found) without
/// defining forward.
class ModuleListImpl : public Module {
 public:
  /// An empty ModuleList.
  ModuleListImpl() : Module("ModuleList") {}
  /// A ModuleList of the given modules.
  ModuleListImpl(std::initializer_list<ModulePtr> modules);
  /// A ModuleList of the given modules (holders or shared_ptrs).
  template <class... Ms, std::enable_if_t<all_modules_v<Ms...>, int> = 0>
  explicit ModuleListImpl(Ms&&... modules) : Module("ModuleList") {
    (push_back(ModulePtr(std::forward<Ms>(modules))), ...);
  }
  /// Appends `m` as child "<size()>" (ValueError for a null module).
  void push_back(ModulePtr m);
  /// Clones every child (all must be cloneable).
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;
  /// Number of children.
  size_t size() const { return modules_.size(); }
  /// Whether there are no children.
  bool is_empty() const { return modules_.empty(); }
  /// Child `i` (IndexError past the end).
  ModulePtr operator[](size_t i) const;  // IndexError past the end
  /// Iterator over the children, in order.
  std::vector<ModulePtr>::const_iterator begin() const { return modules_.begin(); }
  /// End of the children.
  std::vector<ModulePtr>::const_iterator end() const { return modules_.end(); }

 private:
  std::vector<ModulePtr> modules_;
};

/// The holder of ModuleListImpl; `ModuleList list{Linear(4, 8), Linear(8, 2)}`.
class ModuleList : public ModuleHolder<ModuleListImpl> {
 public:
  using ModuleHolder<ModuleListImpl>::ModuleHolder;
  /// A ModuleList of the braced list's modules.
  ModuleList(std::initializer_list<ModuleListElement> modules) : ModuleHolder(std::make_shared<ModuleListImpl>()) {
    for (auto& m : module_list(modules)) get()->push_back(m);
  }
};

/// Submodules by name (registered, so their parameters are found), without forward.
class ModuleDictImpl : public Module {
 public:
  /// An empty ModuleDict.
  ModuleDictImpl() : Module("ModuleDict") {}
  /// Registers `m` under `key` (ValueError when the key exists or m is null).
  void insert(const std::string& key, ModulePtr m);
  /// Clones every child (all must be cloneable).
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;
  /// The module under `key`; ValueError listing the keys when absent.
  ModulePtr operator[](const std::string& key) const;  // throws ValueError listing the keys
  /// Whether a module is registered under `key`.
  bool contains(const std::string& key) const;
  /// The keys in insertion order.
  std::vector<std::string> keys() const;
  /// Number of modules.
  size_t size() const { return named_children().size(); }
};
/// The holder of ModuleDictImpl.
VNN_MODULE(ModuleDict);

}  // namespace vnn::nn
