// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// User-written differentiable ops (torch::autograd::Function<T>):
//
//   struct MulConstant : vnn::autograd::Function<MulConstant> {
//     static vnn::Tensor forward(vnn::autograd::AutogradContext* ctx, vnn::Tensor x, double c) {
//       ctx->saved_data["c"] = c;
//       return x * c;
//     }
//     static vnn::autograd::variable_list backward(vnn::autograd::AutogradContext* ctx,
//                                                  vnn::autograd::variable_list grads) {
//       return {grads[0] * ctx->saved_data["c"].toDouble(), vnn::Tensor()};
//     }
//   };
//   vnn::Tensor y = MulConstant::apply(x, 5.0);
//
// forward runs with grad mode off; its Tensor arguments (and the elements
// of std::vector<Tensor> arguments) are the node's inputs. backward gets one
// gradient per output and returns one per forward argument (an undefined
// Tensor for arguments that are not tensors or need no gradient). Under
// create_graph, backward runs with grad mode on, so a backward written in
// vnn ops is differentiable again.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <variant>
#include <vector>

#include "vnn/autograd.h"
#include "vnn/tensor.h"

namespace vnn::autograd {
/// A list of tensors (LibTorch's torch::autograd::variable_list).
using variable_list = std::vector<Tensor>;
class AutogradContext;
}  // namespace vnn::autograd

// The non-template half of Function<T>::apply (src/autograd/custom_function.cpp).
namespace vnn::detail {
/// The argument slots of a Function's forward: which are tensors, and those tensors.
struct FunctionInputs {
  autograd::variable_list tensors;  // the tensor slots, in order
  std::vector<bool> is_tensor;      // per argument slot
};
/// A Function's backward as the recorded node calls it.
using CustomBackward = std::function<autograd::variable_list(autograd::AutogradContext*, autograd::variable_list)>;
/// Records the node of a Function after its forward ran; returns the outputs as the caller sees them.
autograd::variable_list record_function(const char* name, const std::shared_ptr<autograd::AutogradContext>& ctx,
                                        const FunctionInputs& inputs, autograd::variable_list outputs,
                                        CustomBackward backward);
/// Prepares a context for a forward over `inputs` (needs_input_grad).
void begin_function(autograd::AutogradContext& ctx, const FunctionInputs& inputs);
}  // namespace vnn::detail

namespace vnn::autograd {

/// A value kept in AutogradContext::saved_data, with LibTorch IValue's accessors
/// for the kinds a backward needs; the wrong accessor throws ValueError.
class SavedValue {
 public:
  /// No value.
  SavedValue() = default;
  /// A floating value.
  SavedValue(double v) : v_(v) {}
  /// An integer value.
  SavedValue(int64_t v) : v_(v) {}
  /// An integer value.
  SavedValue(int v) : v_(int64_t(v)) {}
  /// A flag.
  SavedValue(bool v) : v_(v) {}
  /// A tensor (kept as it is, history included).
  SavedValue(Tensor t) : v_(std::move(t)) {}
  /// A string.
  SavedValue(std::string s) : v_(std::move(s)) {}
  /// A string.
  SavedValue(const char* s) : v_(std::string(s)) {}
  /// A list of integers (sizes, dims).
  SavedValue(std::vector<int64_t> v) : v_(std::move(v)) {}
  /// The floating value (an integer converts).
  double toDouble() const;
  /// The integer value.
  int64_t toInt() const;
  /// The flag.
  bool toBool() const;
  /// The tensor.
  Tensor toTensor() const;
  /// The string.
  const std::string& toStringRef() const;
  /// The list of integers.
  std::vector<int64_t> toIntVector() const;
  /// Whether a value was stored.
  bool isNone() const { return v_.index() == 0; }

 private:
  std::variant<std::monostate, double, int64_t, bool, Tensor, std::string, std::vector<int64_t>> v_;
};


/// What forward leaves for backward (torch::autograd::AutogradContext).
class AutogradContext {
 public:
  /// Any values backward needs, by name.
  std::unordered_map<std::string, SavedValue> saved_data;
  /// Saves tensors for backward; an in-place change to one of them before
  /// backward is caught there, as for vnn's own ops.
  void save_for_backward(variable_list to_save);
  /// The tensors saved by save_for_backward (outputs with this node's history under create_graph).
  variable_list get_saved_variables() const;
  /// Declares inputs that forward modified in place (and returns): they take this node's history.
  void mark_dirty(const variable_list& inputs);
  /// Declares outputs that have no gradient (indices, masks).
  void mark_non_differentiable(const variable_list& outputs);
  /// Whether undefined output gradients reach backward as zeros (the default) or undefined.
  void set_materialize_grads(bool value) { materialize_grads_ = value; }
  /// Whether tensor input `index` (counting tensor arguments only) needs a gradient.
  bool needs_input_grad(size_t index) const;

 private:
  friend vnn::autograd::variable_list vnn::detail::record_function(
      const char*, const std::shared_ptr<vnn::autograd::AutogradContext>&, const vnn::detail::FunctionInputs&,
      vnn::autograd::variable_list, vnn::detail::CustomBackward);
  friend void vnn::detail::begin_function(AutogradContext&, const vnn::detail::FunctionInputs&);
  struct Saved;
  std::shared_ptr<std::vector<Saved>> saved_;
  std::vector<const void*> dirty_;
  std::vector<const void*> non_differentiable_;
  std::vector<bool> needs_input_grad_;
  bool materialize_grads_ = true;
  bool in_forward_ = false;
};

/// The base of a user-written op: derive `struct F : Function<F>` with static
/// forward(AutogradContext*, args...) and backward(AutogradContext*, variable_list).
template <class T>
struct Function {
  /// Runs T::forward with grad mode off and records T::backward as its gradient.
  template <class... Args>
  static auto apply(Args&&... args) {
    vnn::detail::FunctionInputs inputs;
    (collect(inputs, args), ...);
    auto ctx = std::make_shared<AutogradContext>();
    vnn::detail::begin_function(*ctx, inputs);
    using Result = decltype(T::forward(ctx.get(), args...));
    static_assert(std::is_same_v<Result, Tensor> || std::is_same_v<Result, variable_list>,
                  "Function<T>::forward must return a Tensor or a variable_list");
    Result raw;
    {
      NoGradGuard no_grad;
      raw = T::forward(ctx.get(), args...);
    }
    variable_list outs;
    if constexpr (std::is_same_v<Result, Tensor>) outs = {raw};
    else outs = raw;
    outs = vnn::detail::record_function(typeid(T).name(), ctx, inputs, std::move(outs),
                                   [](AutogradContext* c, variable_list g) { return T::backward(c, std::move(g)); });
    if constexpr (std::is_same_v<Result, Tensor>) return outs[0];
    else return outs;
  }

 private:
  static void collect(vnn::detail::FunctionInputs& in, const Tensor& t) {
    in.tensors.push_back(t);
    in.is_tensor.push_back(true);
  }
  static void collect(vnn::detail::FunctionInputs& in, const variable_list& list) {
    for (const Tensor& t : list) collect(in, t);
  }
  template <class Other>
  static void collect(vnn::detail::FunctionInputs& in, const Other&) {
    in.is_tensor.push_back(false);
  }
};

}  // namespace vnn::autograd
