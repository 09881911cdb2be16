// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// User-written ops (vnn/autograd_function.h): the context's saved values and
// the node recorded after a Function's forward.
#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>

#include "autograd/autograd.hpp"
#include "vnn/autograd_function.h"
#include "vnn/creation.h"
#include "vnn/detail/message.h"
#include "vnn/error.h"

namespace vnn::autograd {

namespace {
template <class V>
const V& value_as(const std::variant<std::monostate, double, int64_t, bool, Tensor, std::string,
                                     std::vector<int64_t>>& v,
                  const char* accessor) {
  const V* p = std::get_if<V>(&v);
  VNN_CHECK(ValueError, p, "AutogradContext::saved_data: ", accessor,
            "() called on a value of another kind; read it with the accessor matching what forward stored");
  return *p;
}
}  // namespace

double SavedValue::toDouble() const {
  if (const int64_t* i = std::get_if<int64_t>(&v_)) return double(*i);
  return value_as<double>(v_, "toDouble");
}
int64_t SavedValue::toInt() const { return value_as<int64_t>(v_, "toInt"); }
bool SavedValue::toBool() const { return value_as<bool>(v_, "toBool"); }
Tensor SavedValue::toTensor() const { return value_as<Tensor>(v_, "toTensor"); }
const std::string& SavedValue::toStringRef() const { return value_as<std::string>(v_, "toStringRef"); }
std::vector<int64_t> SavedValue::toIntVector() const { return value_as<std::vector<int64_t>>(v_, "toIntVector"); }

// A saved tensor: an input or other tensor as it was given, or one of the
// Function's outputs through SavedOutput (no reference cycle through the
// node; its history again under create_graph).
struct AutogradContext::Saved {
  Tensor tensor;
  vnn::detail::SavedOutput output;
  bool is_output = false;
  uint64_t version = 0;
};

void AutogradContext::save_for_backward(variable_list to_save) {
  VNN_CHECK(ValueError, in_forward_, "AutogradContext::save_for_backward: call it from forward only");
  saved_ = std::make_shared<std::vector<Saved>>();
  for (Tensor& t : to_save) {
    Saved s;
    s.version = t.defined() ? t.version() : 0;
    s.tensor = std::move(t);
    saved_->push_back(std::move(s));
  }
}

variable_list AutogradContext::get_saved_variables() const {
  variable_list out;
  if (!saved_) return out;
  for (size_t i = 0; i < saved_->size(); ++i) {
    const Saved& s = (*saved_)[i];
    Tensor t = s.is_output ? s.output.get() : s.tensor;
    if (t.defined())
      VNN_CHECK(ValueError, t.version() == s.version, "AutogradContext::get_saved_variables: saved tensor ", i,
                " has been modified by an in-place operation (it is at version ", t.version(), ", expected ",
                s.version, "); clone() it before modifying, or modify it after backward()");
    out.push_back(std::move(t));
  }
  return out;
}

void AutogradContext::mark_dirty(const variable_list& inputs) {
  for (const Tensor& t : inputs) dirty_.push_back(t.impl());
}

void AutogradContext::mark_non_differentiable(const variable_list& outputs) {
  for (const Tensor& t : outputs) non_differentiable_.push_back(t.impl());
}

bool AutogradContext::needs_input_grad(size_t index) const {
  VNN_CHECK(IndexError, index < needs_input_grad_.size(), "AutogradContext::needs_input_grad: index ", index,
            " is out of range for a Function with ", needs_input_grad_.size(), " tensor inputs");
  return needs_input_grad_[index];
}

}  // namespace vnn::autograd

namespace vnn::detail {

using autograd::AutogradContext;
using autograd::variable_list;

namespace {
std::string demangled(const char* name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string out = status == 0 && d ? d : name;
  std::free(d);
  return out;
}

bool contains(const std::vector<const void*>& v, const void* p) { return std::find(v.begin(), v.end(), p) != v.end(); }
}  // namespace

void begin_function(AutogradContext& ctx, const FunctionInputs& inputs) {
  for (const Tensor& t : inputs.tensors)
    ctx.needs_input_grad_.push_back(autograd::grad_enabled() && t.defined() && t.requires_grad());
  ctx.in_forward_ = true;
}

variable_list record_function(const char* type_name, const std::shared_ptr<AutogradContext>& ctx,
                              const FunctionInputs& inputs, variable_list outputs, CustomBackward backward) {
  ctx->in_forward_ = false;
  const std::string op = demangled(type_name);
  std::vector<const void*> input_impls, raw_impls;
  for (const Tensor& t : inputs.tensors) input_impls.push_back(t.impl());
  for (const void* d : ctx->dirty_)
    VNN_CHECK(ValueError, contains(input_impls, d), op,
              ": mark_dirty was given a tensor that is not an input of forward; mark only inputs it modified");
  for (Tensor& out : outputs) {
    raw_impls.push_back(out.impl());
    // An input returned as it is becomes an output of its own (PyTorch's
    // view_as), unless forward changed it in place and said so.
    if (out.defined() && contains(input_impls, out.impl()) && !contains(ctx->dirty_, out.impl()))
      out = out.detach();
  }
  bool any_requires = false;
  for (const Tensor& t : inputs.tensors) any_requires = any_requires || (t.defined() && t.requires_grad());
  if (!autograd::grad_enabled() || !any_requires) return outputs;

  std::vector<Tensor*> recorded;
  std::vector<size_t> recorded_index;
  std::vector<std::pair<Shape, TensorOptions>> output_meta;
  std::vector<bool> output_defined;
  for (size_t k = 0; k < outputs.size(); ++k) {
    Tensor& out = outputs[k];
    output_defined.push_back(out.defined());
    output_meta.emplace_back(out.defined() ? out.sizes() : Shape(),
                             out.defined() ? TensorOptions(out.device()).with(out.dtype()) : TensorOptions());
    if (!out.defined() || !is_floating(out.dtype()) || contains(ctx->non_differentiable_, raw_impls[k])) continue;
    if (contains(ctx->dirty_, out.impl()))
      VNN_CHECK(ValueError, !(out.is_leaf() && out.requires_grad()), op,
                ": a leaf tensor that requires grad was modified in place by forward (mark_dirty); clone() it "
                "before passing it, or do not modify it");
    recorded.push_back(&out);
    recorded_index.push_back(k);
  }
  if (recorded.empty()) return outputs;
  // Saved outputs go through SavedOutput; saved dirty inputs lose their
  // history (it becomes this node's).
  std::vector<std::pair<size_t, size_t>> bound;  // saved slot, output index
  if (ctx->saved_)
    for (size_t i = 0; i < ctx->saved_->size(); ++i) {
      AutogradContext::Saved& s = (*ctx->saved_)[i];
      if (!s.tensor.defined()) continue;
      auto at = std::find(raw_impls.begin(), raw_impls.end(), static_cast<const void*>(s.tensor.impl()));
      if (at != raw_impls.end() && !contains(ctx->dirty_, *at)) {
        s.output = SavedOutput(s.tensor);
        s.is_output = true;
        s.tensor = Tensor();
        bound.emplace_back(i, size_t(at - raw_impls.begin()));
      } else if (contains(ctx->dirty_, s.tensor.impl())) {
        s.tensor = s.tensor.detach();
      }
    }
  std::vector<const Tensor*> in_ptrs;
  for (const Tensor& t : inputs.tensors) in_ptrs.push_back(&t);
  const size_t n_out = outputs.size();
  std::vector<bool> is_tensor = inputs.is_tensor;
  std::vector<Shape> input_shapes;
  for (const Tensor& t : inputs.tensors) input_shapes.push_back(t.defined() ? t.sizes() : Shape());
  record_outputs(
      op.c_str(), recorded, in_ptrs,
      [ctx, backward, op, n_out, recorded_index, output_meta, output_defined, is_tensor,
       input_shapes](std::vector<Tensor> part) {
        variable_list grads(n_out);
        for (size_t i = 0; i < recorded_index.size(); ++i) grads[recorded_index[i]] = std::move(part[i]);
        if (ctx->materialize_grads_)
          for (size_t k = 0; k < n_out; ++k)
            if (!grads[k].defined() && output_defined[k]) grads[k] = zeros(output_meta[k].first, output_meta[k].second);
        variable_list result = backward(ctx.get(), std::move(grads));
        // Trailing undefined gradients beyond the arguments given (defaulted
        // ones, as LibTorch's optional bias) are dropped, as LibTorch does.
        while (result.size() > is_tensor.size() && !result.back().defined()) result.pop_back();
        VNN_CHECK(ValueError, result.size() == is_tensor.size(), op, "::backward returned ", result.size(),
                  " gradients, but forward has ", is_tensor.size(),
                  " arguments; return one per argument (an undefined Tensor where there is none)");
        variable_list per_input;
        for (size_t slot = 0; slot < is_tensor.size(); ++slot) {
          if (!is_tensor[slot]) {
            VNN_CHECK(ValueError, !result[slot].defined(), op, "::backward returned a gradient at position ", slot,
                      ", but that forward argument is not a Tensor; return an undefined Tensor there");
            continue;
          }
          Tensor g = std::move(result[slot]);
          const Shape& want = input_shapes[per_input.size()];
          if (g.defined() && g.sizes() != want) {
            VNN_CHECK(ShapeError, broadcast_shapes(want, g.sizes(), op.c_str()) == g.sizes(), op,
                      "::backward returned a gradient of shape ", g.sizes(), " for input ", per_input.size(),
                      " of shape ", want, "; return one of the input's shape");
            g = sum_to(g, want);
          }
          per_input.push_back(std::move(g));
        }
        return per_input;
      },
      {}, /*twice_differentiable=*/true);
  for (auto [slot, k] : bound) (*ctx->saved_)[slot].output.bind(outputs[k]);
  return outputs;
}

}  // namespace vnn::detail
