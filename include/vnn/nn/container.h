// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Containers: Sequential, ModuleList, ModuleDict (module classes with
// holders, as LibTorch's):
//   vnn::nn::Sequential seq(vnn::nn::Linear(784, 128), vnn::nn::ReLU(), vnn::nn::Linear(128, 10));
//   seq->push_back(vnn::nn::LogSoftmax(1));
//   vnn::Tensor y = seq(x);   seq[0]->as<vnn::nn::Linear>()->weight;   for (auto& m : *seq) ...
#pragma once
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "vnn/nn/module.h"

namespace vnn::nn {

/// Whether every M converts to a ModulePtr (a holder or a shared_ptr to a module).
template <class... Ms>
inline constexpr bool all_modules_v = (sizeof...(Ms) > 0) && (std::is_convertible_v<Ms&&, ModulePtr> && ...);

/// A module with the forward of its own class, as LibTorch's AnyModule: a
/// Sequential calls each child through one, so a child whose forward takes
/// its Tensor by value (`Tensor forward(Tensor x)`, LibTorch's usual block
/// signature) or has defaulted extra arguments is called as written, though
/// it is not virtual. A module given as a plain ModulePtr is called through
/// Module::operator() (its Cloneable forward, or the one bound earlier).
class AnyModule {
 public:
  /// Calls the class's own forward: `Tensor (*)(Module&, const Tensor&)`.
  using Forward = Tensor (*)(Module&, const Tensor&);
  /// An empty AnyModule.
  AnyModule() = default;
  /// A holder (Linear(...)) or a shared_ptr to a module; nullptr does not convert.
  template <class M, std::enable_if_t<std::is_convertible_v<M&&, ModulePtr> &&
                                          !std::is_same_v<std::decay_t<M>, std::nullptr_t> &&
                                          !std::is_same_v<std::decay_t<M>, AnyModule>,
                                      int> = 0>
  AnyModule(M&& m)  // NOLINT: implicit by design
      : module_(std::forward<M>(m)), forward_(&call<typename module_class<std::decay_t<M>>::type>) {
    if (module_) module_->template bind_forward<typename module_class<std::decay_t<M>>::type>();
  }
  /// The module.
  const ModulePtr& ptr() const { return module_; }
  /// Whether a module is held.
  explicit operator bool() const { return module_ != nullptr; }
  /// The module's forward pre-hooks, then its forward(input) as its class declares it.
  Tensor forward(const Tensor& input) const;
  /// The module cloned (Module::clone) with the same forward.
  AnyModule clone(const std::optional<Device>& device = std::nullopt) const;

 private:
  template <class T>
  static Tensor call(Module& m, const Tensor& x) {
    if constexpr (::vnn::detail::has_unary_forward<T>::value) return static_cast<T&>(m).forward(x);
    else return m.forward_erased(x);  // AnyModule::forward ran the hooks
  }
  AnyModule(ModulePtr m, Forward f) : module_(std::move(m)), forward_(f) {}
  ModulePtr module_;
  Forward forward_ = nullptr;
};

/// Runs its children in order; children are named "0", "1", ...
class SequentialImpl : public Module {
 public:
  /// An empty Sequential.
  SequentialImpl() : Module("Sequential") {}
  /// A Sequential of the given modules, in order.
  SequentialImpl(std::initializer_list<ModulePtr> modules);
  /// A Sequential of the given modules, in order.
  explicit SequentialImpl(const std::vector<ModulePtr>& modules);
  /// A Sequential of the given modules, in order, each called with its own class's forward.
  explicit SequentialImpl(const std::vector<AnyModule>& modules);
  /// Any modules: holders (Linear(...)) or shared_ptrs to modules.
  template <class... Ms, std::enable_if_t<all_modules_v<Ms...>, int> = 0>
  explicit SequentialImpl(Ms&&... modules) : Module("Sequential") {
    (push_back(AnyModule(std::forward<Ms>(modules))), ...);
  }
  /// Appends `m` (a holder, a shared_ptr to a module or an AnyModule) as
  /// child "<size()>", called with its class's own forward (ValueError for a null module).
  void push_back(AnyModule m);
  /// Feeds input through every child in order (an empty Sequential returns it unchanged).
  Tensor forward(const Tensor& input);

 protected:
  /// forward(input), for calls through a Module reference.
  Tensor forward_erased(const Tensor& input) override { return forward(input); }

 public:
  /// Also re-points the entry forward() calls (through Module::operator() of the new module).
  void replace_child(const std::string& name, std::shared_ptr<Module> module) override;
  /// Clones every child (all must be cloneable).
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override;
  /// Number of children.
  size_t size() const { return modules_.size(); }
  /// Whether there are no children.
  bool is_empty() const { return modules_.empty(); }
  /// Child `i` (IndexError past the end).
  ModulePtr operator[](size_t i) const;  // IndexError past the end
  /// Child `i` with its class's own forward, as forward() calls it (IndexError past the end).
  const AnyModule& any_module(size_t i) const;
  /// Iterator over the children, in order.
  std::vector<ModulePtr>::const_iterator begin() const { return modules_.begin(); }
  /// End of the children.
  std::vector<ModulePtr>::const_iterator end() const { return modules_.end(); }

 private:
  std::vector<ModulePtr> modules_;
  std::vector<AnyModule> calls_;  // modules_ with their classes' forwards
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
  /// The module, with its class's forward.
  AnyModule module;
};
/// The modules of a braced list as ModulePtrs, in order.
std::vector<ModulePtr> module_list(std::initializer_list<ModuleListElement> modules);
/// The modules of a braced list with their classes' forwards, in order.
std::vector<AnyModule> any_module_list(std::initializer_list<ModuleListElement> modules);

/// The holder of SequentialImpl; `Sequential seq{Linear(4, 8), ReLU()}` builds it from a list.
class Sequential : public ModuleHolder<SequentialImpl> {
 public:
  using ModuleHolder<SequentialImpl>::ModuleHolder;
  /// A Sequential of the braced list's modules, in order.
  Sequential(std::initializer_list<ModuleListElement> modules)
      : ModuleHolder(std::make_shared<SequentialImpl>(any_module_list(modules))) {}
};

/// Holds submodules (registered, so their parameters are found) without
/// defining forward.
class ModuleListImpl : public Module {
 public:
  /// An empty ModuleList.
  ModuleListImpl() : Module("ModuleList") {}
  /// A ModuleList of the given modules.
  ModuleListImpl(std::initializer_list<ModulePtr> modules);
  /// A ModuleList of the given modules, in order (a list built elsewhere).
  explicit ModuleListImpl(const std::vector<ModulePtr>& modules);
  /// A ModuleList of the given modules (holders or shared_ptrs).
  template <class... Ms, std::enable_if_t<all_modules_v<Ms...>, int> = 0>
  explicit ModuleListImpl(Ms&&... modules) : Module("ModuleList") {
    (push_back(ModulePtr(std::forward<Ms>(modules))), ...);
  }
  /// Appends `m` as child "<size()>" (ValueError for a null module).
  void push_back(ModulePtr m);
  /// Also re-points the list entry (iteration and operator[] see the new module).
  void replace_child(const std::string& name, std::shared_ptr<Module> module) override;
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

/// One (name, module) element of a braced ModuleDict list: {"wte", Embedding(...)}.
struct NamedModuleElement {
  /// The name and a holder or a shared_ptr to a module (nullptr does not convert).
  template <class N, class M,
            std::enable_if_t<std::is_convertible_v<N&&, std::string> && std::is_convertible_v<M&&, ModulePtr> &&
                                 !std::is_same_v<std::decay_t<M>, std::nullptr_t>,
                             int> = 0>
  NamedModuleElement(N&& name, M&& m) : name(std::forward<N>(name)), module(std::forward<M>(m)) {}  // NOLINT
  /// The key.
  std::string name;
  /// The module.
  ModulePtr module;
};

/// Submodules by name (registered, so their parameters are found), without forward.
class ModuleDictImpl : public Module {
 public:
  /// An empty ModuleDict.
  ModuleDictImpl() : Module("ModuleDict") {}
  /// The (key, module) pairs in order, as LibTorch's ModuleDict(std::vector<std::pair<...>>).
  explicit ModuleDictImpl(const std::vector<std::pair<std::string, ModulePtr>>& modules);
  /// The braced (key, module) pairs in order: ModuleDictImpl({{"wte", Embedding(...)}, {"ln_f", LayerNorm(...)}}).
  ModuleDictImpl(std::initializer_list<NamedModuleElement> modules);
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
/// The holder of ModuleDictImpl; `ModuleDict dict({{"wte", Embedding(10, 4)}, {"ln_f", LayerNorm(...)}})`.
class ModuleDict : public ModuleHolder<ModuleDictImpl> {
 public:
  using ModuleHolder<ModuleDictImpl>::ModuleHolder;
  /// A ModuleDict of the braced (key, module) pairs, in order.
  ModuleDict(std::initializer_list<NamedModuleElement> modules)
      : ModuleHolder(std::make_shared<ModuleDictImpl>(modules)) {}
};

}  // namespace vnn::nn
