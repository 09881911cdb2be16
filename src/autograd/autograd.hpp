// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The autograd graph: nodes, edges and the per-tensor metadata. Op files
// record their backward formula with detail::record().
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tensor/tensor_impl.hpp"
#include "vnn/autograd.h"

namespace vnn::detail {

struct Node;

// Where a gradient goes: input `slot` of `node` (null: nowhere).
struct Edge {
  std::shared_ptr<Node> node;
};

using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad_output)>;
using TensorHook = std::function<Tensor(const Tensor& grad)>;

struct Node {
  std::string name;
  std::vector<Edge> next;  // one per op input, in order
  BackwardFn backward;     // empty for gradient accumulators
  // Saved storages and the versions they had when saved.
  std::vector<std::pair<std::shared_ptr<Storage>, uint64_t>> saved;
  std::vector<TensorHook> pre_hooks;  // run on the incoming gradient
  // Accumulators only: run after the gradient was added into .grad()
  // (DistributedDataParallel starts bucket allreduces from here).
  std::vector<std::function<void()>> post_accumulate_hooks;
  bool released = false;
  // Gradient accumulators of leaves point back at their tensor.
  std::weak_ptr<TensorImpl> leaf;
};

struct AutogradMeta {
  bool requires_grad = false;
  bool retains_grad = false;
  std::shared_ptr<Node> grad_fn;        // null for leaves
  std::weak_ptr<Node> grad_accumulator;  // leaves: shared by every use
  std::shared_ptr<Node> hooked_accumulator;  // held once a hook is registered
  Tensor grad;
};

AutogradMeta& autograd_meta(TensorImpl& t);  // created on first use
bool requires_grad(const Tensor& t);

// The node a gradient for `t` flows into: its grad_fn, or for a leaf that
// requires grad its accumulator (shared by every use). Null otherwise.
std::shared_ptr<Node> gradient_edge(const Tensor& t);

// Runs `hook` each time backward has accumulated a gradient into the
// leaf's .grad() (torch's register_post_accumulate_grad_hook).
void register_post_accumulate_hook(const Tensor& leaf, std::function<void()> hook);

// True when grad mode is on and any input requires grad.
bool needs_grad(std::initializer_list<const Tensor*> inputs);

// Makes `out` the output of a new node whose backward turns d out into
// one gradient per input (undefined = no gradient). `saved` tensors are
// version-checked at backward time.
void record(const char* name, Tensor& out, const std::vector<const Tensor*>& inputs, BackwardFn backward,
            const std::vector<const Tensor*>& saved = {});

// A view of `in` whose gradient is back(d view).
void record_view(const char* name, Tensor& view, const Tensor& in, std::function<Tensor(const Tensor&)> back);

// In-place ops call this on the tensor they modified: it bumps the storage
// version (so stale saved tensors are caught) and refuses in-place changes
// to leaves that require grad while recording.
void mark_modified(const Tensor& t, const char* op);

// Drops a non-leaf's history after an in-place op overwrote all of it.
void forget_history(const Tensor& t);

// A backward pass started from inside a node's backward (activation
// checkpointing: the graph fn rebuilt from `inputs`, detached leaves).
// Runs from `outputs` (those that require grad and have a gradient) with
// `grads`, in the enclosing pass's mode: leaves accumulate into .grad() as
// in backward(), or, inside autograd::grad, nothing touches .grad() and
// gradients reaching the enclosing pass's inputs are added to its result.
// Returns the gradients that reached each of `inputs` (undefined: none);
// their .grad() is never touched. Outside any pass it acts as backward().
std::vector<Tensor> run_nested_backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grads,
                                        const std::vector<Tensor>& inputs);

// Sums a gradient over broadcast dims back to `shape`.
Tensor sum_to(const Tensor& grad, const Shape& shape);

}  // namespace vnn::detail
