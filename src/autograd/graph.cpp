// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Recording: grad mode, metadata, nodes, version counters.
#include <atomic>

#include "autograd/autograd.hpp"
#include "vnn/detail/message.h"
#include "vnn/error.h"
#include "vnn/creation.h"
#include "vnn/elementwise.h"
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
            const std::vector<const Tensor*>& saved, bool twice_differentiable) {
  auto node = std::make_shared<Node>();
  node->name = name;
  for (const Tensor* t : inputs) node->next.push_back(Edge{t ? gradient_edge(*t) : nullptr});
  for (const Tensor* t : saved)
    if (t && t->defined())
      node->saved.emplace_back(t->impl()->storage, t->impl()->storage->version.load());
  node->backward = std::move(backward);
  node->twice_differentiable = twice_differentiable;
  AutogradMeta& m = autograd_meta(*out.impl());
  m.requires_grad = true;
  m.grad_fn = std::move(node);
}

void record_view(const char* name, Tensor& view, const Tensor& in, std::function<Tensor(const Tensor&)> back,
                 bool twice_differentiable) {
  if (!needs_grad({&in})) return;
  record(name, view, {&in}, [back = std::move(back)](const Tensor& g) { return std::vector<Tensor>{back(g)}; }, {},
         twice_differentiable);
}

void record_outputs(const char* name, const std::vector<Tensor*>& outs, const std::vector<const Tensor*>& inputs,
                    MultiBackwardFn backward, const std::vector<const Tensor*>& saved, bool twice_differentiable) {
  const size_t n = outs.size();
  if (n == 1) {
    record(name, *outs[0], inputs, [backward = std::move(backward)](const Tensor& g) { return backward({g}); }, saved,
           twice_differentiable);
    return;
  }
  // Each output's node adds its gradient into the shared slots and passes a
  // token on to the anchor, whose node then runs `backward` once.
  auto slots = std::make_shared<std::vector<Tensor>>(n);
  Tensor anchor = zeros(Shape{});
  record(name, anchor, inputs,
         [slots, backward = std::move(backward)](const Tensor&) {
           std::vector<Tensor> grads = std::move(*slots);
           slots->assign(grads.size(), Tensor());  // empty again for a retain_graph rerun
           return backward(std::move(grads));
         },
         saved, twice_differentiable);
  const Tensor token = zeros(Shape{});
  const std::string output_name = std::string(name) + "Output";
  for (size_t k = 0; k < n; ++k) {
    record(output_name.c_str(), *outs[k], {&anchor}, [slots, k, token](const Tensor& g) {
      Tensor& slot = (*slots)[k];
      slot = slot.defined() ? add(slot, g) : g;
      return std::vector<Tensor>{token};
    }, {}, /*twice_differentiable=*/true);
  }
}

void SavedOutput::bind(const Tensor& recorded_out) {
  const TensorImpl* impl = recorded_out.impl();
  if (node_ && impl && impl->autograd) *node_ = impl->autograd->grad_fn;
}

Tensor SavedOutput::get() const {
  std::shared_ptr<Node> node = node_ && autograd::grad_enabled() ? node_->lock() : nullptr;
  if (!node) return data_;
  Tensor t = data_.detach();
  AutogradMeta& m = autograd_meta(*t.impl());
  m.requires_grad = true;
  m.grad_fn = std::move(node);
  return t;
}

Tensor once_differentiable(const Tensor& grad, const std::string& op) {
  if (!grad.defined() || !is_floating(grad.dtype())) return grad;
  Tensor out = grad.detach();
  auto node = std::make_shared<Node>();
  node->name = op + "Backward";
  node->backward = [op](const Tensor&) -> std::vector<Tensor> {
    VNN_THROW(Unsupported, "double backward: the backward of ", op,
              " runs a fused kernel and is not differentiable in vnn, so a second derivative through ", op,
              " cannot be computed (create_graph = true); docs/autograd.md lists the ops with double backward. "
              "Compose ", op, " from those ops, or leave it out of the path being differentiated twice");
  };
  AutogradMeta& m = autograd_meta(*out.impl());
  m.requires_grad = true;
  m.grad_fn = std::move(node);
  return out;
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
