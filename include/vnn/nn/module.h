// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// vnn::nn::Module: the base of every layer (torch::nn::Module's shape), and
// ModuleHolder: the handle every layer is used through, as LibTorch's
// TORCH_MODULE holders.
//
//   struct NetImpl : vnn::nn::Cloneable<NetImpl> {
//     NetImpl() { reset(); }
//     void reset() override {  // builds every submodule; clone() calls it again
//       fc1 = register_module("fc1", vnn::nn::Linear(784, 128));
//       fc2 = register_module("fc2", vnn::nn::Linear(128, 10));
//     }
//     vnn::Tensor forward(const vnn::Tensor& x) { return fc2(vnn::relu(fc1(x))); }  // any signature
//     vnn::nn::Linear fc1{nullptr}, fc2{nullptr};
//   };
//   VNN_MODULE(Net);                      // Net: a holder of NetImpl
//   Net net;
//   net->to(vnn::best_device());          // moves every parameter and buffer in place
//   Net copy = Net(std::dynamic_pointer_cast<NetImpl>(net->clone(vnn::Device("cpu"))));
//
// A module that derives from Module directly works everywhere but clone(),
// which needs Cloneable<Self> and its reset().
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vnn/error.h"
#include "vnn/state_dict.h"
#include "vnn/tensor.h"

namespace vnn::nn {

/// Named tensors in registration order (parameters, then buffers, with
/// dotted paths for submodules: "features.0.weight"); the type io::save and
/// io::load use too.
using StateDict = vnn::StateDict;

class Module;
/// A shared pointer to any module.
using ModulePtr = std::shared_ptr<Module>;

/// The base of every ModuleHolder, so templates can tell holders apart.
struct ModuleHolderTag {};
template <class H>
/// Whether H is a ModuleHolder (Linear, Sequential, a VNN_MODULE holder).
inline constexpr bool is_module_holder_v = std::is_base_of_v<ModuleHolderTag, std::decay_t<H>>;

}  // namespace vnn::nn

namespace vnn::detail {
// Whether T has a forward callable with one Tensor whose result converts to a Tensor.
template <class T, class = void>
struct has_unary_forward : std::false_type {};
template <class T>
struct has_unary_forward<T, std::void_t<decltype(std::declval<T&>().forward(std::declval<const Tensor&>()))>>
    : std::is_convertible<decltype(std::declval<T&>().forward(std::declval<const Tensor&>())), Tensor> {};
}  // namespace vnn::detail

namespace vnn::nn {

/// The base of every layer: registered parameters, buffers and submodules, device moves, state dicts (torch::nn::Module).
class Module : public std::enable_shared_from_this<Module> {
 public:
  /// A module whose type_name() (and default describe()) is `type_name`.
  explicit Module(std::string type_name = "Module") : type_name_(std::move(type_name)) {}
  /// Virtual: modules are used through base pointers.
  virtual ~Module() = default;
  /// Modules are not assigned; copy them with clone().
  Module& operator=(const Module&) = delete;

  /// Calls the module's forward(Tensor) -> Tensor through a Module
  /// reference (a ModulePtr, a Sequential's child). Module declares no
  /// forward of its own, as LibTorch's: a derived class declares forward
  /// with any arguments and any result (a tuple, a struct, a vector), and
  /// this call reaches it when it takes one Tensor and returns a Tensor.
  /// Unsupported, naming the module, when it has no such forward or the
  /// module was handed over only as a plain Module (see forward_erased).
  /// The forward pre-hooks run first.
  Tensor operator()(const Tensor& input) {
    run_forward_pre_hooks();
    return forward_erased(input);
  }

  /// A function run before forward whenever the module is called through
  /// its call operator, its holder (fc(x)) or a Sequential, as PyTorch's
  /// forward pre-hooks (a direct forward() call skips them, as in PyTorch):
  /// nn::utils::weight_norm and spectral_norm recompute the weight in one.
  using ForwardPreHook = std::function<void(Module&)>;
  /// Adds `hook` after those there are and returns its handle. `tag`, when
  /// not empty, names it for find_forward_pre_hook (one hook per tag,
  /// ValueError for a second). `on_clone`, when given, is run on a clone of
  /// this module after the clone's reset() to install the hook there again
  /// (weight_norm splits the copy's weight once more); without it the clone
  /// gets the same hook.
  int64_t register_forward_pre_hook(ForwardPreHook hook, const std::string& tag = "",
                                    std::function<void(Module&)> on_clone = nullptr);
  /// Removes the hook of `handle`; false when there is none.
  bool remove_forward_pre_hook(int64_t handle);
  /// The handle of the hook tagged `tag`, or -1.
  int64_t find_forward_pre_hook(const std::string& tag) const;
  /// The hook of `handle` (its target<T>() reads a function object's
  /// settings back); ValueError when there is none.
  const ForwardPreHook& forward_pre_hook(int64_t handle) const;
  /// Runs the forward pre-hooks in registration order (the call operators do this before forward).
  void run_forward_pre_hooks() {
    if (!pre_hooks_.empty()) run_pre_hooks();
  }

  /// Takes parameter `name` out of parameters() and state_dict() and returns
  /// its tensor. The member bound to it stays bound, as a plain attribute
  /// that set_attribute() assigns (weight_norm and spectral_norm compute a
  /// weight this way); register_parameter(name, ...) makes it a parameter
  /// again, bound to the same member. ValueError when there is no such parameter.
  Tensor unregister_parameter(const std::string& name);
  /// Takes buffer `name` out of buffers() and state_dict() (ValueError when there is none).
  void unregister_buffer(const std::string& name);
  /// Assigns the attribute `name` (a parameter unregister_parameter() kept
  /// as one), i.e. the module member bound to it. ValueError when there is none.
  void set_attribute(const std::string& name, const Tensor& value);
  /// The tensor of attribute `name` (ValueError when there is none).
  Tensor attribute(const std::string& name) const;
  /// Whether `name` is a parameter of this module itself (not a submodule's).
  bool has_parameter(const std::string& name) const;
  /// Parameter `name` of this module itself (ValueError when there is none).
  Tensor parameter(const std::string& name) const;
  /// Buffer `name` of this module itself (ValueError when there is none).
  Tensor buffer(const std::string& name) const;

  /// The class name given at construction ("Linear", "Sequential", ...).
  const std::string& type_name() const { return type_name_; }
  /// The line printed for this module in the tree ("Linear(in=784, out=10)").
  virtual std::string describe() const { return type_name_; }

  /// Every parameter, this module's first, then each submodule's in
  /// registration order (recurse false: own only). A tensor registered at
  /// several places (tied weights, a submodule registered twice) is listed
  /// once, at its first place, as PyTorch's parameters().
  std::vector<Tensor> parameters(bool recurse = true) const;
  /// The parameters with their dotted paths ("fc1.weight"); remove_duplicate:
  /// a shared tensor under its first path only (PyTorch's default), else
  /// under every path, as state_dict() keeps them.
  StateDict named_parameters(bool recurse = true, bool remove_duplicate = true) const;
  /// The buffers (running statistics, ...), in the same order as parameters(), each once.
  std::vector<Tensor> buffers(bool recurse = true) const;
  /// The buffers with their dotted paths ("bn.running_mean"); remove_duplicate as named_parameters().
  StateDict named_buffers(bool recurse = true, bool remove_duplicate = true) const;
  /// The direct submodules with their registered names.
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const { return children_; }
  /// The direct submodules in registration order.
  std::vector<std::shared_ptr<Module>> children() const;
  /// This module and every descendant, depth first, with dotted paths under
  /// `prefix` ("" for this one); a module registered at several places is
  /// listed once, at its first path (PyTorch's named_modules()).
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_modules(const std::string& prefix = "");
  /// Re-points the registered submodule `name` at `module` (a wrapper around
  /// the old one: FullyShardedDataParallel's units); containers (Sequential,
  /// ModuleList) update the list their forward and iteration use as well.
  /// ValueError when there is no such child or `module` is null.
  virtual void replace_child(const std::string& name, std::shared_ptr<Module> module);
  /// Total number of elements in all parameters (submodules included), each shared tensor once.
  int64_t num_parameters() const;

  /// Calls fn on this module and then on every descendant, depth first, each
  /// module once (LibTorch's Module::apply; nanoGPT's `self.apply(_init_weights)`):
  ///   model->apply([](vnn::nn::Module& m) {
  ///     if (auto* fc = m.as<vnn::nn::Linear>()) vnn::nn::init::normal_(fc->weight, 0.0, 0.02);
  ///   });
  /// Usable inside a constructor (it needs no shared_from_this).
  void apply(const std::function<void(Module&)>& fn);
  /// The same with each module's dotted path ("" for this one, or name_prefix).
  void apply(const std::function<void(const std::string&, Module&)>& fn, const std::string& name_prefix = "");

  /// Sets training mode (dropout active, batch statistics) here and in every submodule.
  virtual void train(bool on = true);
  /// train(false): inference mode here and in every submodule.
  void eval() { train(false); }
  /// Whether this module is in training mode.
  bool is_training() const { return training_; }

  /// In place: every parameter and buffer moves; Tensor handles held
  /// elsewhere (in an optimizer, in the layer's members) see the move.
  /// Returns the module, so calls chain: model->to(device).train().
  Module& to(const Device& device, bool non_blocking = false);
  /// Converts floating parameters and buffers to `dtype` in place (integer buffers keep theirs).
  Module& to(DType dtype);  // floating parameters and buffers only
  /// Moves to `device` and converts floating tensors to `dtype` in one pass, in place.
  Module& to(const Device& device, DType dtype, bool non_blocking = false);
  /// Clears every parameter's gradient (undefined when set_to_none, else zeros).
  void zero_grad(bool set_to_none = true);

  /// A deep copy (parameters, buffers, their gradients and the training
  /// flag) on `device`, or where each tensor is now when none is given. The
  /// copy shares nothing with this module. Needs Cloneable<Self> (Unsupported
  /// otherwise); a device that does not exist throws DeviceNotFound listing
  /// the devices there are.
  virtual std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const;

  /// Parameters then buffers under their dotted paths, sharing the module's
  /// tensors. A shared tensor appears under every path it is registered at
  /// (PyTorch: both "lm_head.weight" and "transformer.wte.weight").
  StateDict state_dict() const;
  /// strict: missing and unexpected keys are errors; shapes must match in
  /// any case. Values are copied onto each parameter's device and dtype, in
  /// place, so a shared tensor stays shared (loading either of its names
  /// writes the one storage; with both, the later key wins, as PyTorch's).
  void load_state_dict(const StateDict& state, bool strict = true);

  /// The module tree as text, one line per module with its parameter count.
  std::string str() const;  // the module tree with parameter counts

  /// This module as T (a module class or a holder: as<Linear>() gives
  /// LinearImpl*), or nullptr when it is not one.
  template <class T>
  auto* as() {
    if constexpr (is_module_holder_v<T>) return dynamic_cast<typename std::decay_t<T>::ContainedType*>(this);
    else return dynamic_cast<T*>(this);
  }

  /// Registers `value` as parameter `name` and returns it, LibTorch's way:
  ///   weight = register_parameter("weight", vnn::randn({out, in}));
  /// The member the result is assigned to stays the registration: assigning
  /// it later (`lm_head->weight = wte->weight`, weight tying) re-points the
  /// registered parameter too, as PyTorch's attribute assignment does. A leaf
  /// tensor is registered itself (shared, not copied: registering another
  /// module's parameter ties the two), and set to require grad when
  /// requires_grad; a non-leaf (an op's result) is detached into a new leaf.
  /// to() and load_state_dict() change the tensor in place, so handles follow.
  Tensor register_parameter(const std::string& name, Tensor value, bool requires_grad = true);
  /// Registers a tensor saved in the state dict but not trained (running
  /// statistics); returns it, bound to the member it is assigned to as register_parameter's result.
  Tensor register_buffer(const std::string& name, Tensor value);
  /// Returns what it was given (a shared_ptr or a holder such as Linear).
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    if (module) module->template bind_forward<M>();
    add_child(name, module);
    return module;
  }
  /// Registers a holder (Linear, Sequential, ...) as submodule `name`; returns the holder.
  template <class H, std::enable_if_t<is_module_holder_v<H>, int> = 0>
  std::decay_t<H> register_module(const std::string& name, H&& holder) {
    holder->template bind_forward<typename std::decay_t<H>::ContainedType>();
    add_child(name, holder.ptr());
    return std::forward<H>(holder);
  }

 protected:
  /// Registers `module` as child `name` (ValueError for a duplicate name or a null module).
  void add_child(const std::string& name, std::shared_ptr<Module> module);
  /// The forward that operator() calls: Cloneable<Self> overrides it with
  /// Self's forward(Tensor); a class derived from Module directly reaches
  /// it once its own type was seen (a holder, a shared_ptr<Self> given to
  /// register_module or Sequential), or by overriding this.
  virtual Tensor forward_erased(const Tensor& input);
  friend class AnyModule;  // calls forward_erased after running the hooks itself

 public:
  /// Records T's forward(Tensor) as the one operator() calls, where T
  /// declares one (holders, register_module and AnyModule call this).
  template <class T>
  void bind_forward() {
    if constexpr (::vnn::detail::has_unary_forward<T>::value) unary_forward_ = &call_forward<T>;
  }

 private:
  template <class T>
  static Tensor call_forward(Module& m, const Tensor& x) {
    return static_cast<T&>(m).forward(x);
  }
  Tensor (*unary_forward_)(Module&, const Tensor&) = nullptr;

 protected:
  /// Registers other's parameters, buffers and submodules here under the same
  /// names, sharing the tensors (no copy, no detach): a wrapper whose
  /// state_dict() and parameters() are the wrapped module's (DistributedDataParallel).
  void share_registrations(const Module& other);
  /// Copies the type name and the training flag only; registrations and
  /// hooks are not shared with the copy (Cloneable's reset() makes its own).
  Module(const Module& other) : std::enable_shared_from_this<Module>(), type_name_(other.type_name_),
                                training_(other.training_) {}
  /// The tail of Cloneable::clone: rebuilds `copy` with reset (the default
  /// generator is left where it was), installs this module's forward
  /// pre-hooks there (and its submodules', recursively) and copies this
  /// module's state into it.
  std::shared_ptr<Module> finish_clone(std::shared_ptr<Module> copy, const std::function<void()>& reset,
                                       const std::optional<Device>& device) const;
  /// Copies src's parameters, buffers, gradients and training flag into this
  /// module of the same structure; submodules recurse. A tensor src shares
  /// between places is shared between the same places of this module.
  void copy_state_from(const Module& src, const std::optional<Device>& device);
  /// This module's own flag, not its children's (train() recurses).
  void set_training_flag(bool on) { training_ = on; }

 private:
  // Registered tensors by name; each entry reads through to the member bound to it (see registered_tensor.hpp).
  using Registry = std::vector<std::pair<std::string, std::shared_ptr<::vnn::detail::RegisteredTensor>>>;

  void collect(const std::string& prefix, bool recurse, bool params, bool remove_duplicate, StateDict& out) const;
  void str_into(std::string& out, const std::string& name, int indent) const;
  void move_all(const std::optional<Device>& device, std::optional<DType> dtype, bool non_blocking);
  void copy_state_from(const Module& src, const std::optional<Device>& device,
                       std::unordered_map<const void*, Tensor>& copied);
  static Tensor register_in(Registry& registry, const std::string& name, Tensor value);
  void run_pre_hooks();
  void install_hooks_of(const Module& src);
  struct PreHook {
    int64_t handle;
    std::string tag;
    std::shared_ptr<const ForwardPreHook> hook;  // shared: run_pre_hooks copies the list cheaply
    std::function<void(Module&)> on_clone;
  };

  std::string type_name_;
  bool training_ = true;
  Registry params_, buffers_;
  Registry attributes_;  // parameters unregister_parameter() turned into plain attributes
  std::vector<PreHook> pre_hooks_;
  int64_t next_hook_handle_ = 0;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
};

/// Prints m.str().
std::ostream& operator<<(std::ostream& os, const Module& m);

/// The base of a module that can be deep-copied: Derived must be copy
/// constructible (its options and plain members are copied) and build its
/// parameters, buffers and submodules in reset(), which its constructor calls.
template <class Derived>
class Cloneable : public Module {
 public:
  /// Module's constructors (the type name).
  using Module::Module;
  /// Builds parameters, buffers and submodules; the constructor and clone() call it.
  virtual void reset() = 0;
  /// A deep copy of this module (Derived's copy constructor, then reset(), then the state) on `device`.
  std::shared_ptr<Module> clone(const std::optional<Device>& device = std::nullopt) const override {
    auto copy = std::make_shared<Derived>(static_cast<const Derived&>(*this));
    Cloneable& c = *copy;
    return finish_clone(copy, [&c] { c.reset(); }, device);
  }

 protected:
  /// Derived's forward(Tensor), when it declares one (else Module's: Unsupported).
  Tensor forward_erased(const Tensor& input) override {
    if constexpr (::vnn::detail::has_unary_forward<Derived>::value) return static_cast<Derived&>(*this).forward(input);
    else return Module::forward_erased(input);
  }
};

/// Throws ValueError: an empty holder (made from nullptr) was used.
[[noreturn]] void throw_empty_holder(const char* what);

/// A shared handle to a module of type Impl, as LibTorch's ModuleHolder:
/// copying it shares the module; holder(x) calls forward; holder->weight
/// reaches the module. Converts to std::shared_ptr<Module> (ModulePtr).
template <class Impl>
class ModuleHolder : ModuleHolderTag {
 public:
  /// The module class this holder holds.
  using ContainedType = Impl;

  /// Default-constructs the module (a compile error where Impl has no
  /// default constructor: construct it with arguments, or from nullptr).
  ModuleHolder() : impl_(std::make_shared<Impl>()) { bind(); }
  /// An empty holder, to be assigned later (members of a module).
  ModuleHolder(std::nullptr_t) {}
  /// Holds an existing module.
  ModuleHolder(std::shared_ptr<Impl> module) : impl_(std::move(module)) { bind(); }
  /// Constructs the module from the arguments: Linear(784, 128).
  template <class Head, class... Tail,
            class = std::enable_if_t<
                !(sizeof...(Tail) == 0 && (std::is_same_v<std::decay_t<Head>, std::nullptr_t> ||
                                           std::is_convertible_v<Head&&, std::shared_ptr<Impl>> ||
                                           std::is_base_of_v<ModuleHolder, std::decay_t<Head>>)) &&
                std::is_constructible_v<Impl, Head&&, Tail&&...>>>
  explicit ModuleHolder(Head&& head, Tail&&... tail)
      : impl_(std::make_shared<Impl>(std::forward<Head>(head), std::forward<Tail>(tail)...)) {
    bind();
  }

  /// The module (ValueError when the holder is empty).
  Impl* operator->() const { return get(); }
  /// The module (ValueError when the holder is empty).
  Impl& operator*() const { return *get(); }
  /// The module's raw pointer (ValueError when the holder is empty).
  Impl* get() const {
    if (!impl_) throw_empty_holder("accessing");
    return impl_.get();
  }
  /// The module's shared pointer (ValueError when the holder is empty).
  const std::shared_ptr<Impl>& ptr() const {
    if (!impl_) throw_empty_holder("taking ptr() of");
    return impl_;
  }
  /// Whether the holder was made from nullptr and not assigned since.
  bool is_empty() const noexcept { return impl_ == nullptr; }
  /// Whether the holder holds a module.
  explicit operator bool() const noexcept { return impl_ != nullptr; }

  /// Runs the module's forward pre-hooks, then its forward with any arguments: fc(x), loss(input, target).
  template <class... Args>
  decltype(auto) operator()(Args&&... args) const {
    Impl* m = get();
    m->run_forward_pre_hooks();
    return m->forward(std::forward<Args>(args)...);
  }
  /// Indexes the module: seq[0], dict["head"].
  template <class Arg>
  decltype(auto) operator[](Arg&& arg) const {
    return (*get())[std::forward<Arg>(arg)];
  }
  /// shared_ptr<Module>, shared_ptr<Impl> and any base between.
  template <class T, std::enable_if_t<std::is_convertible_v<Impl*, T*>, int> = 0>
  operator std::shared_ptr<T>() const {
    return impl_;
  }

 private:
  void bind() {
    if (impl_) impl_->template bind_forward<Impl>();
  }
  std::shared_ptr<Impl> impl_;
};

/// The module class behind M: a holder's Impl, a shared_ptr's T, else Module.
template <class M, class = void>
struct module_class {
  /// Module: nothing more is known.
  using type = Module;
};
/// A holder's module class.
template <class M>
struct module_class<M, std::enable_if_t<is_module_holder_v<M>>> {
  /// The holder's Impl.
  using type = typename std::decay_t<M>::ContainedType;
};
/// A shared_ptr's module class.
template <class T>
struct module_class<std::shared_ptr<T>, std::enable_if_t<std::is_base_of_v<Module, T>>> {
  /// T.
  using type = T;
};

/// `module` (a holder or a shared_ptr to a module) as a ModulePtr whose
/// operator() reaches its class's forward(Tensor): what the wrappers that
/// take any module (DistributedDataParallel, FullyShardedDataParallel,
/// PipelineStage) call on their argument.
template <class M, std::enable_if_t<std::is_convertible_v<M&&, ModulePtr>, int> = 0>
ModulePtr bind_forward(M&& module) {
  ModulePtr p = std::forward<M>(module);
  if (p) p->template bind_forward<typename module_class<std::decay_t<M>>::type>();
  return p;
}

template <class Impl>
/// Prints the held module's tree.
std::ostream& operator<<(std::ostream& os, const ModuleHolder<Impl>& m) {
  return os << *m;
}

}  // namespace vnn::nn

/// Declares Name, the holder of NameImpl (LibTorch's TORCH_MODULE):
///   struct NetImpl : vnn::nn::Cloneable<NetImpl> { ... };
///   VNN_MODULE(Net);
#define VNN_MODULE(Name)                                              \
  class Name : public ::vnn::nn::ModuleHolder<Name##Impl> {           \
   public:                                                            \
    using ::vnn::nn::ModuleHolder<Name##Impl>::ModuleHolder;          \
  }
