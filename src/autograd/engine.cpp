// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The backward pass: dependency counting from the roots, then nodes run
// in an order where every node's gradient is complete before it runs.
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "amp/autocast.hpp"
#include "autograd/autograd.hpp"
#include "vnn/detail/message.h"
#include "vnn/error.h"
#include "vnn/profiler.h"

namespace vnn {
namespace detail {

namespace {

void check_versions(const Node& n) {
  for (auto& [storage, version] : n.saved) {
    uint64_t now = storage->version.load();
    VNN_CHECK(ValueError, now == version, "backward: one of the tensors saved for the gradient of ", n.name,
              " has been modified by an in-place operation (it is at version ", now, ", expected version ", version,
              "); clone() it before modifying, or modify it after backward()");
  }
}

void check_finite(const Node& n, const std::vector<Tensor>& grads) {
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) continue;
    for (double v : grads[i].to_vector<double>())
      VNN_CHECK(ValueError, std::isfinite(v), "anomaly mode: the backward of ", n.name, " returned a ",
                (std::isnan(v) ? "NaN" : "non-finite"), " value in its gradient for input ", i);
  }
}

Tensor accumulate(const Tensor& a, const Tensor& b) { return a.defined() ? add(a, b) : b; }

// A leaf's first gradient is taken as it is, without a copy, when nothing
// else can reach it (PyTorch's AccumulateGrad rule): this handle is its only
// one, its cached storage has no other view, and its layout is the leaf's.
// Otherwise it is cloned, so that a .grad never aliases another tensor. The
// copy was one pass over every parameter per step (the MLP step's gradients
// are 0.9 MB).
bool can_take(const Tensor& g, const TensorImpl& leaf) {
  const std::shared_ptr<TensorImpl>& gi = g.impl_ptr();
  return gi.use_count() == 1 && gi->storage.use_count() == 1 && gi->storage->kind == Storage::Kind::cached &&
         gi->autograd == nullptr && gi->dtype == leaf.dtype && gi->sizes == leaf.sizes &&
         gi->strides == leaf.strides && &gi->ctx() == &leaf.ctx();
}

struct Task {
  std::shared_ptr<Node> node;
  Tensor grad;
};

// The pass running on this thread, for a backward started from inside one
// (activation checkpointing's recompute, run_nested_backward).
struct Pass {
  std::unordered_map<Node*, Tensor>* capture = nullptr;
  bool accumulate_leaves = true;
  bool create_graph = false;
};
thread_local Pass* t_pass = nullptr;

// Runs the graph below `roots`. Gradients that reach a node of `capture`
// are added there (its leaves' .grad() untouched); other leaves accumulate
// into .grad() when `accumulate_leaves` (backward()), never otherwise
// (autograd::grad).
// Under create_graph the backward ops record (grad mode on), so the
// gradients have a graph of their own; nodes whose backward is not written
// in recorded ops mark their gradients once-differentiable.
void run_backward(const std::vector<std::pair<std::shared_ptr<Node>, Tensor>>& roots, bool retain_graph,
                  std::unordered_map<Node*, Tensor>* capture, bool accumulate_leaves, bool create_graph = false) {
  Pass pass{capture, accumulate_leaves, create_graph};
  Pass* const outer = t_pass;
  t_pass = &pass;
  struct Restore {
    Pass* outer;
    ~Restore() { t_pass = outer; }
  } restore{outer};
  profiler::PhaseGuard phase(profiler::Phase::backward);  // ops below are "backward" in profiles
  const bool previous_mode = autograd::grad_enabled();
  autograd::set_grad_enabled(create_graph);
  struct RestoreMode {
    bool previous;
    ~RestoreMode() { autograd::set_grad_enabled(previous); }
  } restore_mode{previous_mode};
  autocast::detail::Suspend no_autocast;  // backward ops keep their forward's dtypes
  // Dependencies: how many edges point at each node.
  std::unordered_map<Node*, int> deps;
  std::unordered_set<Node*> seen;
  std::vector<Node*> stack;
  for (auto& r : roots)
    if (seen.insert(r.first.get()).second) stack.push_back(r.first.get());
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (auto& e : n->next) {
      if (!e.node) continue;
      ++deps[e.node.get()];
      if (seen.insert(e.node.get()).second) stack.push_back(e.node.get());
    }
  }
  std::unordered_map<Node*, Tensor> pending;
  std::unordered_map<Node*, std::shared_ptr<Node>> keep;
  for (auto& r : roots) {
    pending[r.first.get()] = accumulate(pending[r.first.get()], r.second);
    keep[r.first.get()] = r.first;
  }
  std::vector<std::shared_ptr<Node>> ready;
  for (auto& r : roots)
    if (deps[r.first.get()] == 0) ready.push_back(r.first);
  std::unordered_set<Node*> queued;
  for (auto& r : ready) queued.insert(r.get());

  while (!ready.empty()) {
    std::shared_ptr<Node> node = ready.back();
    ready.pop_back();
    Tensor g = pending.count(node.get()) ? pending[node.get()] : Tensor();
    pending.erase(node.get());
    if (!g.defined()) {  // nothing flows through here, but its inputs wait on it
      for (auto& e : node->next)
        if (e.node && --deps[e.node.get()] == 0 && queued.insert(e.node.get()).second) ready.push_back(e.node);
      continue;
    }
    for (auto& hook : node->pre_hooks) {
      Tensor replaced = hook(g);
      if (replaced.defined()) g = replaced;
    }
    if (capture) {
      auto c = capture->find(node.get());
      if (c != capture->end()) {
        c->second = accumulate(c->second, g);  // a nested pass may have added some already
        if (!node->backward) continue;
      }
    }
    if (node->released)
      VNN_THROW(ValueError, "backward: trying to go through the graph of ", node->name,
                " a second time, but its saved tensors were already freed; pass retain_graph = true "
                "to the first backward() if you need to call it twice");
    if (!node->backward) {  // a leaf's accumulator
      std::shared_ptr<TensorImpl> leaf = node->leaf.lock();
      if (!leaf || !accumulate_leaves) continue;
      AutogradMeta& m = autograd_meta(*leaf);
      if (create_graph) m.grad = m.grad.defined() ? add(m.grad, g) : g;  // keeps g's graph
      else if (!m.grad.defined()) m.grad = can_take(g, *leaf) ? std::move(g) : g.clone();
      else m.grad.add_(g);
      for (auto& hook : node->post_accumulate_hooks) hook();
      continue;
    }
    check_versions(*node);
    std::vector<Tensor> grads = node->backward(g);
    if (create_graph && !node->twice_differentiable)
      for (Tensor& gi : grads) gi = once_differentiable(gi, node->name);
    if (autograd::anomaly_enabled()) check_finite(*node, grads);
    if (!retain_graph && !node->saved.empty()) {
      // Its saved tensors go now, not at the end of the pass (as PyTorch
      // frees them): the activations of the nodes already run do not all
      // stay until the last one has run. A node that saved nothing (a cast,
      // an add) stays runnable, as in PyTorch: autocast's cached cast of a
      // weight is shared by the graphs of several micro-batches.
      node->backward = nullptr;
      node->saved.clear();
      node->released = true;
    }
    for (size_t i = 0; i < node->next.size(); ++i) {
      Node* next = node->next[i].node.get();
      if (!next) continue;
      if (i < grads.size() && grads[i].defined()) {
        pending[next] = accumulate(pending[next], grads[i]);
        keep[next] = node->next[i].node;
      }
      if (--deps[next] == 0 && queued.insert(next).second) ready.push_back(node->next[i].node);
    }
  }
}

std::shared_ptr<Node> node_of(const Tensor& t, const char* what) {
  VNN_CHECK(ValueError, requires_grad(t), what,
            ": the tensor does not require grad and has no grad_fn; call requires_grad_() on the "
            "leaves before computing it");
  return gradient_edge(t);
}

Tensor default_gradient(const Tensor& root, const Tensor& given, const char* what) {
  if (given.defined()) {
    VNN_CHECK(ShapeError, given.sizes() == root.sizes(), what, ": gradient has shape ", given.sizes(),
              " but the tensor has shape ", root.sizes());
    return given;
  }
  VNN_CHECK(ValueError, root.numel() == 1, what,
            ": grad can be implicitly created only for a one-element tensor (shape ", root.sizes(),
            "); pass a gradient of the same shape");
  return ones_like(root);
}

}  // namespace

std::vector<Tensor> run_nested_backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grads,
                                        const std::vector<Tensor>& inputs) {
  std::vector<std::pair<std::shared_ptr<Node>, Tensor>> roots;
  for (size_t i = 0; i < outputs.size() && i < grads.size(); ++i)
    if (grads[i].defined() && requires_grad(outputs[i])) roots.emplace_back(gradient_edge(outputs[i]), grads[i]);
  std::vector<Tensor> out(inputs.size());
  if (roots.empty()) return out;
  // Into the enclosing pass's captured gradients when it is autograd::grad
  // (its targets among fn's parameters get their share), else a map of our own.
  std::unordered_map<Node*, Tensor> local;
  std::unordered_map<Node*, Tensor>* capture = t_pass && t_pass->capture ? t_pass->capture : &local;
  const bool accumulate_leaves = t_pass ? t_pass->accumulate_leaves : true;
  const bool create_graph = t_pass && t_pass->create_graph;
  std::vector<std::shared_ptr<Node>> input_nodes(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    input_nodes[i] = gradient_edge(inputs[i]);
    if (input_nodes[i]) capture->emplace(input_nodes[i].get(), Tensor());
  }
  try {
    run_backward(roots, /*retain_graph=*/create_graph, capture, accumulate_leaves, create_graph);
  } catch (...) {
    for (auto& n : input_nodes)
      if (n) capture->erase(n.get());
    throw;
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    if (input_nodes[i]) {
      auto it = capture->find(input_nodes[i].get());
      out[i] = it->second;
      capture->erase(it);
    }
  return out;
}

bool creating_graph() { return t_pass && t_pass->create_graph; }

namespace {
std::vector<std::pair<std::shared_ptr<Node>, Tensor>> roots_of(const std::vector<Tensor>& outputs,
                                                               const std::vector<Tensor>& grad_outputs,
                                                               const char* what) {
  VNN_CHECK(ValueError, grad_outputs.empty() || grad_outputs.size() == outputs.size(), what, ": got ",
            grad_outputs.size(), " grad_outputs for ", outputs.size(),
            " outputs; pass one per output (an undefined Tensor for a one-element output's implicit 1)");
  std::vector<std::pair<std::shared_ptr<Node>, Tensor>> roots;
  for (size_t i = 0; i < outputs.size(); ++i)
    roots.emplace_back(node_of(outputs[i], what),
                       default_gradient(outputs[i], i < grad_outputs.size() ? grad_outputs[i] : Tensor(), what));
  return roots;
}
}  // namespace

}  // namespace detail

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph) const {
  auto node = detail::node_of(*this, "backward");
  detail::run_backward({{node, detail::default_gradient(*this, gradient, "backward")}},
                       retain_graph.value_or(create_graph), nullptr, /*accumulate_leaves=*/true, create_graph);
}

namespace autograd {

void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors,
              std::optional<bool> retain_graph, bool create_graph) {
  detail::run_backward(detail::roots_of(tensors, grad_tensors, "autograd::backward"),
                       retain_graph.value_or(create_graph), nullptr, /*accumulate_leaves=*/true, create_graph);
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, std::optional<bool> retain_graph, bool create_graph,
                         bool allow_unused) {
  auto roots = detail::roots_of(outputs, grad_outputs, "autograd::grad");
  std::unordered_map<detail::Node*, Tensor> capture;
  std::vector<std::shared_ptr<detail::Node>> input_nodes;
  for (auto& t : inputs) {
    input_nodes.push_back(detail::node_of(t, "autograd::grad"));
    capture[input_nodes.back().get()] = Tensor();
  }
  detail::run_backward(roots, retain_graph.value_or(create_graph), &capture, /*accumulate_leaves=*/false,
                       create_graph);
  std::vector<Tensor> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor g = capture[input_nodes[i].get()];
    VNN_CHECK(ValueError, g.defined() || allow_unused, "autograd::grad: input ", i, " (shape ", inputs[i].sizes(),
              ") was not used in computing the outputs, so it has no gradient; pass allow_unused = true to get an "
              "undefined Tensor for it");
    out.push_back(g);
  }
  return out;
}

}  // namespace autograd
}  // namespace vnn
