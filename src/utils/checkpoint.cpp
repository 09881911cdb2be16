// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Activation checkpointing (include/vnn/utils/checkpoint.h).
//
// The forward runs fn under no-grad and records one node over the inputs
// ("CheckpointBackward", detail::record_outputs). Several differentiable
// outputs each get a small node ("CheckpointBackwardOutput") that leaves
// its gradient in a shared slot and hands the checkpoint node a token: the
// engine runs that node after all of them (dependency counting), once,
// with every output's gradient at hand. Its backward reruns fn on detached inputs with the RNG
// and autocast state of the forward, then runs the recomputed graph with
// the engine (detail::run_nested_backward): parameters accumulate into
// .grad() there, in the mode of the enclosing pass, and the inputs'
// gradients come back to the outer graph.
#include "vnn/utils/checkpoint.h"

#include <algorithm>
#include <memory>
#include <string>

#include "amp/autocast.hpp"
#include "autograd/autograd.hpp"
#include "vnn/autograd.h"
#include "vnn/creation.h"
#include "vnn/detail/message.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"

namespace vnn::utils {

namespace {

struct RngState {
  Generator* gen = nullptr;
  uint64_t seed = 0, offset = 0;
};

std::vector<RngState> save_rng(const CheckpointOptions& o) {
  std::vector<Generator*> gens;
  if (o.preserve_rng_state) gens.push_back(&default_generator());
  for (Generator* g : o.generators)
    if (g && std::find(gens.begin(), gens.end(), g) == gens.end()) gens.push_back(g);
  std::vector<RngState> out;
  for (Generator* g : gens) out.push_back({g, g->seed(), g->offset()});
  return out;
}

void set_rng(const RngState& s) {
  s.gen->manual_seed(s.seed);
  s.gen->set_offset(s.offset);
}

// Rewinds the generators to the forward's state for a scope, then puts back
// what it found (torch's fork_rng: the backward leaves them as they were).
class RewindRng {
 public:
  explicit RewindRng(const std::vector<RngState>& saved) {
    for (const RngState& s : saved) found_.push_back({s.gen, s.gen->seed(), s.gen->offset()});
    for (const RngState& s : saved) set_rng(s);
  }
  ~RewindRng() {
    for (auto it = found_.rbegin(); it != found_.rend(); ++it) set_rng(*it);
  }
  RewindRng(const RewindRng&) = delete;
  RewindRng& operator=(const RewindRng&) = delete;

 private:
  std::vector<RngState> found_;
};

class GradModeGuard {
 public:
  explicit GradModeGuard(bool on) : previous_(autograd::grad_enabled()) { autograd::set_grad_enabled(on); }
  ~GradModeGuard() { autograd::set_grad_enabled(previous_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool previous_;
};

struct State {
  CheckpointFunction fn;
  std::vector<Tensor> inputs;  // detached: the values, no history
  std::vector<bool> requires_grad;
  std::vector<RngState> rng;
  autocast::detail::Settings autocast;
  std::vector<Shape> output_shapes;
};

std::vector<Tensor> call(const CheckpointFunction& fn, const std::vector<Tensor>& inputs) {
  VNN_CHECK(ValueError, static_cast<bool>(fn), "checkpoint: fn is empty; pass a function of the inputs");
  std::vector<Tensor> out = fn(inputs);
  VNN_CHECK(ValueError, !out.empty(), "checkpoint: fn returned no tensor; it must return at least one output");
  return out;
}

// The checkpoint node's backward: rerun fn, backpropagate `grads` through it.
std::vector<Tensor> recompute_backward(State& st, std::vector<Tensor> grads) {
  std::vector<Tensor> leaves(st.inputs.size());
  for (size_t i = 0; i < st.inputs.size(); ++i) {
    if (!st.inputs[i].defined()) continue;
    leaves[i] = st.inputs[i].detach();
    if (st.requires_grad[i]) leaves[i].requires_grad_(true);
  }
  std::vector<Tensor> outs;
  {
    RewindRng rng(st.rng);
    autocast::detail::RestoreSettings autocast(st.autocast);
    GradModeGuard grad_on(true);
    outs = call(st.fn, leaves);
  }
  VNN_CHECK(ValueError, outs.size() == st.output_shapes.size(), "checkpoint: fn returned ", outs.size(),
            " outputs when recomputed in backward but ", st.output_shapes.size(),
            " in the forward; fn must compute the same thing from the same inputs");
  for (size_t i = 0; i < outs.size(); ++i)
    if (grads[i].defined())
      VNN_CHECK(ShapeError, outs[i].defined() && outs[i].sizes() == st.output_shapes[i], "checkpoint: output ", i,
                " has shape ", (outs[i].defined() ? outs[i].sizes().str() : std::string("(undefined)")),
                " when recomputed in backward but ", st.output_shapes[i],
                " in the forward; fn must compute the same thing from the same inputs");
  return vnn::detail::run_nested_backward(outs, grads, leaves);
}

}  // namespace

std::vector<Tensor> checkpoint(const CheckpointFunction& fn, const std::vector<Tensor>& inputs,
                               const CheckpointOptions& options) {
  if (!autograd::grad_enabled()) return call(fn, inputs);  // nothing to record: just run it
  auto st = std::make_shared<State>();
  st->rng = save_rng(options);
  st->autocast = autocast::detail::current_settings();
  std::vector<Tensor> outs;
  {
    GradModeGuard no_grad(false);
    outs = call(fn, inputs);
  }
  st->fn = fn;
  std::vector<const Tensor*> in_ptrs;
  for (const Tensor& t : inputs) {
    st->inputs.push_back(t.defined() ? t.detach() : Tensor());
    st->requires_grad.push_back(t.defined() && t.requires_grad());
    in_ptrs.push_back(&t);
  }
  std::vector<size_t> differentiable;
  for (size_t i = 0; i < outs.size(); ++i) {
    st->output_shapes.push_back(outs[i].defined() ? outs[i].sizes() : Shape());
    if (outs[i].defined() && outs[i].is_floating_point()) differentiable.push_back(i);
  }
  if (differentiable.empty()) return outs;  // no gradient can flow back
  const size_t n = outs.size();
  std::vector<Tensor*> recorded;
  for (size_t k : differentiable) {
    outs[k] = outs[k].detach();  // its own tensor, even when fn returned an input
    recorded.push_back(&outs[k]);
  }
  vnn::detail::record_outputs(
      "CheckpointBackward", recorded, in_ptrs,
      [st, n, differentiable](std::vector<Tensor> part) {
        std::vector<Tensor> grads(n);
        for (size_t i = 0; i < differentiable.size(); ++i) grads[differentiable[i]] = std::move(part[i]);
        return recompute_backward(*st, std::move(grads));
      },
      in_ptrs);
  return outs;
}

Tensor checkpoint_sequential(const std::vector<std::function<Tensor(const Tensor&)>>& functions, int64_t segments,
                             const Tensor& input, const CheckpointOptions& options) {
  VNN_CHECK(ValueError, segments >= 1, "checkpoint_sequential: segments must be at least 1, got ", segments);
  const int64_t count = int64_t(functions.size());
  if (count == 0) return input;
  segments = std::min(segments, count);
  // torch's split: segments - 1 checkpointed runs of count / segments
  // functions, the rest (with the remainder) run plainly at the end.
  const int64_t size = count / segments;
  auto run = [&functions](int64_t begin, int64_t end) {
    return [&functions, begin, end](const Tensor& x) {
      Tensor y = x;
      for (int64_t j = begin; j < end; ++j) y = functions[size_t(j)](y);
      return y;
    };
  };
  Tensor x = input;
  int64_t next = 0;
  for (int64_t s = 0; s + 1 < segments; ++s, next += size) {
    // The functions vector must outlive the backward: copy the segment.
    std::vector<std::function<Tensor(const Tensor&)>> part(functions.begin() + next,
                                                           functions.begin() + next + size);
    x = checkpoint(
        [part = std::move(part)](const std::vector<Tensor>& in) {
          Tensor y = in[0];
          for (auto& f : part) y = f(y);
          return std::vector<Tensor>{y};
        },
        std::vector<Tensor>{x}, options)[0];
  }
  return run(next, count)(x);
}

Tensor checkpoint_sequential(const nn::Sequential& seq, int64_t segments, const Tensor& input,
                             const CheckpointOptions& options) {
  VNN_CHECK(ValueError, !seq.is_empty(), "checkpoint_sequential: the Sequential is an empty holder (nullptr)");
  std::vector<std::function<Tensor(const Tensor&)>> functions;
  for (size_t i = 0; i < seq->size(); ++i)
    functions.push_back([m = seq->any_module(i)](const Tensor& x) { return m.forward(x); });
  return checkpoint_sequential(functions, segments, input, options);
}

}  // namespace vnn::utils
