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
  // Its backward is written with recorded vnn ops, so that under
  // create_graph the gradients it returns carry their own graph (double
  // backward). Otherwise they are marked once-differentiable: a second
  // backward through them throws instead of silently giving zero.
  bool twice_differentiable = false;
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
// `twice_differentiable`: the backward uses only recorded vnn ops of g and
// of saved tensors that keep their history (inputs as they are, outputs
// through SavedOutput), so create_graph can differentiate it again.
void record(const char* name, Tensor& out, const std::vector<const Tensor*>& inputs, BackwardFn backward,
            const std::vector<const Tensor*>& saved = {}, bool twice_differentiable = false);

// One node over `inputs` for an op with several outputs (checkpoint, custom
// Functions): `backward` gets one gradient per entry of `outs` (undefined
// where none reached it) and returns one per input. One output is recorded
// directly; several hand their gradients to a shared anchor node, which
// the engine runs once all that reach it have.
using MultiBackwardFn = std::function<std::vector<Tensor>(std::vector<Tensor> grads)>;
void record_outputs(const char* name, const std::vector<Tensor*>& outs, const std::vector<const Tensor*>& inputs,
                    MultiBackwardFn backward, const std::vector<const Tensor*>& saved = {},
                    bool twice_differentiable = false);

// A view of `in` whose gradient is back(d view); `back` written with
// recorded vnn ops unless `twice_differentiable` is false.
void record_view(const char* name, Tensor& view, const Tensor& in, std::function<Tensor(const Tensor&)> back,
                 bool twice_differentiable = true);

// An op's output as its own backward sees it. Outside create_graph: the
// values, detached (no reference cycle through the node). Under
// create_graph: the same values with the node itself as grad_fn, so a
// gradient formula using the output differentiates through the op, as
// PyTorch's SavedVariable does for outputs. bind() is called once the node
// exists (after record()).
class SavedOutput {
 public:
  SavedOutput() = default;
  explicit SavedOutput(const Tensor& out) : data_(out.detach()), node_(std::make_shared<std::weak_ptr<Node>>()) {}
  void bind(const Tensor& recorded_out);
  Tensor get() const;

 private:
  Tensor data_;
  std::shared_ptr<std::weak_ptr<Node>> node_;
};

// Marks a gradient computed by a backward that is not twice
// differentiable: a second backward reaching it throws Unsupported naming
// `op` (rather than treating it as a constant).
Tensor once_differentiable(const Tensor& grad, const std::string& op);

// Whether a backward is running with create_graph on this thread.
bool creating_graph();

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

// The gradient of a strided part of an input (narrow, select, slice): g at
// positions start, start + step, ... of dim d of zeros shaped `in_sizes`
// (`keep_dim` false: g lacks dim d, as select's). Twice differentiable.
Tensor place_along(const Tensor& g, const Shape& in_sizes, int d, int64_t start, int64_t step, bool keep_dim);

// Sums a gradient over broadcast dims back to `shape`.
Tensor sum_to(const Tensor& grad, const Shape& shape);

}  // namespace vnn::detail
