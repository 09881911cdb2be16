// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Recording: grad mode, metadata, nodes, version counters.
#include <atomic>

#include "autograd/autograd.hpp"
#include "vnn/detail/message.h"
#include "vnn/error.h"
#include "vnn/reduction.h"

namespace vnn {
namespace autograd {

namespace {
thread_local bool t_grad_enabled = true;
std::atomic<bool> g_anomaly{false};
}  // namespace

bool grad_enabled() { return t_grad_enabled; }
void set_grad_enabled(bool enabled) { t_grad_enabled = enabled; }
bool anomaly_enabled() { return g_anomaly.load(); }
void set_anomaly_enabled(bool enabled) { g_anomaly.store(enabled); }

}  // namespace autograd

namespace detail {

AutogradMeta& autograd_meta(TensorImpl& t) {
  if (!t.autograd) t.autograd = std::make_shared<AutogradMeta>();
  return *t.autograd;
}

bool requires_grad(const Tensor& t) {
  const TensorImpl* impl = t.impl();
  return impl && impl->autograd && impl->autograd->requires_grad;
}

bool needs_grad(std::initializer_list<const Tensor*> inputs) {
  if (!autograd::grad_enabled()) return false;
  for (const Tensor* t : inputs)
    if (t && requires_grad(*t)) return true;
  return false;
}

std::shared_ptr<Node> gradient_edge(const Tensor& t) {
  if (!t.defined() || !requires_grad(t)) return nullptr;
  AutogradMeta& m = *t.impl()->autograd;
  if (m.grad_fn) return m.grad_fn;
  std::shared_ptr<Node> acc = m.grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<Node>();
    acc->name = "AccumulateGrad";
    acc->leaf = t.impl_ptr();
    m.grad_accumulator = acc;
  }
  return acc;
}

void record(const char* name, Tensor& out, const std::vector<const Tensor*>& inputs, BackwardFn backward,
            const std::vector<const Tensor*>& saved) {
  auto node = std::make_shared<Node>();
  node->name = name;
  for (const Tensor* t : inputs) node->next.push_back(Edge{t ? gradient_edge(*t) : nullptr});
  for (const Tensor* t : saved)
    if (t && t->defined())
      node->saved.emplace_back(t->impl()->storage, t->impl()->storage->version.load());
  node->backward = std::move(backward);
  AutogradMeta& m = autograd_meta(*out.impl());
  m.requires_grad = true;
  m.grad_fn = std::move(node);
}

void record_view(const char* name, Tensor& view, const Tensor& in, std::function<Tensor(const Tensor&)> back) {
  if (!needs_grad({&in})) return;
  record(name, view, {&in}, [back = std::move(back)](const Tensor& g) { return std::vector<Tensor>{back(g)}; });
}

void mark_modified(const Tensor& t, const char* op) {
  if (autograd::grad_enabled() && requires_grad(t) && t.is_leaf())
    VNN_THROW(ValueError, op,
              ": a leaf tensor that requires grad is being used in an in-place operation; "
              "wrap the update in vnn::autograd::NoGradGuard (as optimizers do) or clone() it first");
  t.impl()->storage->version.fetch_add(1);
}

void forget_history(const Tensor& t) {
  if (!t.impl()->autograd) return;
  t.impl()->autograd->grad_fn = nullptr;
  t.impl()->autograd->requires_grad = false;
}

Tensor sum_to(const Tensor& grad, const Shape& shape) {
  if (grad.sizes() == shape) return grad;
  int lead = grad.dim() - shape.size();
  std::vector<int64_t> dims;
  for (int i = 0; i < grad.dim(); ++i)
    if (i < lead || (shape[i - lead] == 1 && grad.size(i) != 1)) dims.push_back(i);
  Tensor s = dims.empty() ? grad : sum(grad, dims, /*keepdim=*/true);
  return s.reshape(shape);
}

}  // namespace detail
}  // namespace vnn
