// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Tensor's autograd members.
#include "autograd/autograd.hpp"
#include "vnn/detail/message.h"
#include "vnn/error.h"

namespace vnn {

bool Tensor::requires_grad() const { return detail::requires_grad(*this); }

Tensor& Tensor::requires_grad_(bool requires) {
  VNN_CHECK(ValueError, is_leaf(), "requires_grad_: only leaf tensors can change requires_grad (this one comes from ",
            grad_fn_name(), "); use detach() to make a leaf");
  if (requires && !is_floating(dtype()))
    VNN_THROW(DTypeError, "requires_grad_: only floating point tensors can require gradients, not ", name(dtype()));
  detail::autograd_meta(*impl()).requires_grad = requires;
  return *this;
}

Tensor Tensor::grad() const {
  auto* m = impl() ? impl()->autograd.get() : nullptr;
  return m ? m->grad : Tensor();
}

void Tensor::set_grad(const Tensor& g) {
  if (g.defined() && g.sizes() != sizes())
    VNN_THROW(ShapeError, "set_grad: gradient shape ", g.sizes(), " differs from the tensor's ", sizes());
  detail::autograd_meta(*impl()).grad = g;
}

Tensor& Tensor::mutable_grad() {
  VNN_CHECK(ValueError, impl(), "mutable_grad: use of an undefined Tensor (default-constructed)");
  return detail::autograd_meta(*impl()).grad;
}

bool Tensor::is_leaf() const {
  auto* m = impl() ? impl()->autograd.get() : nullptr;
  return !m || !m->grad_fn;
}

std::string Tensor::grad_fn_name() const {
  auto* m = impl() ? impl()->autograd.get() : nullptr;
  return m && m->grad_fn ? m->grad_fn->name : std::string();
}

Tensor Tensor::detach() const {
  return detail::make_tensor(impl()->storage, dtype(), sizes(), strides(), storage_offset());
}

Tensor& Tensor::detach_() {
  VNN_CHECK(ValueError, impl(), "detach_: use of an undefined Tensor (default-constructed)");
  detail::forget_history(*this);
  return *this;
}

Tensor& Tensor::retain_grad() {
  if (is_leaf()) return *this;  // leaves keep their gradient anyway
  auto& m = detail::autograd_meta(*impl());
  if (m.retains_grad) return *this;
  m.retains_grad = true;
  std::weak_ptr<detail::TensorImpl> self = impl_ptr();
  m.grad_fn->pre_hooks.push_back([self](const Tensor& g) {
    if (auto t = self.lock()) {
      auto& meta = detail::autograd_meta(*t);
      meta.grad = meta.grad.defined() ? vnn::add(meta.grad, g) : g.clone();
    }
    return Tensor();
  });
  return *this;
}

void Tensor::register_hook(std::function<Tensor(const Tensor&)> hook) {
  VNN_CHECK(ValueError, requires_grad(),
            "register_hook: cannot register a hook on a tensor that does not require grad");
  auto& m = detail::autograd_meta(*impl());
  if (m.grad_fn) {
    m.grad_fn->pre_hooks.push_back(std::move(hook));
    return;
  }
  // A leaf: the hook runs on its accumulator, shared by every use and kept
  // alive by the tensor itself from now on.
  std::shared_ptr<detail::Node> acc = detail::gradient_edge(*this);
  acc->pre_hooks.push_back(std::move(hook));
  m.hooked_accumulator = acc;
}

namespace detail {
void register_post_accumulate_hook(const Tensor& leaf, std::function<void()> hook) {
  if (!leaf.requires_grad() || !leaf.is_leaf())
    VNN_THROW(ValueError, "register_post_accumulate_hook: the tensor must be a leaf that requires grad");
  auto& m = autograd_meta(*leaf.impl());
  std::shared_ptr<Node> acc = gradient_edge(leaf);
  acc->post_accumulate_hooks.push_back(std::move(hook));
  m.hooked_accumulator = acc;
}
}  // namespace detail

uint64_t Tensor::version() const { return impl()->storage->version.load(); }

}  // namespace vnn
