// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/// \file
/// Activation checkpointing (torch.utils.checkpoint, its non-reentrant
/// contract): trade compute for memory by keeping only a segment's inputs
/// in the forward and recomputing its activations in the backward.
///
///   // One block: its activations are not kept; backward reruns it.
///   vnn::Tensor y = vnn::utils::checkpoint([&](const vnn::Tensor& x) { return block->forward(x); }, x);
///   // A Sequential in 4 segments; all but the last are checkpointed.
///   vnn::Tensor out = vnn::utils::checkpoint_sequential(model, 4, x);
///   vnn::nn::mse_loss(out, target).backward();  // gradients as without checkpointing
///
/// The forward runs `fn` under no-grad and records one autograd node that
/// keeps only the inputs (and the RNG and autocast state). Its backward
/// reruns `fn` with grad mode on, on detached copies of the inputs that
/// require grad as the originals do, with the default generator (and any
/// generator named in the options) rewound to where the forward found it,
/// so dropout draws the same masks; then backpropagates the incoming
/// gradient through the recomputed graph. The parameters `fn` uses receive
/// their .grad() there, as in a plain run (their hooks fire, DDP's too);
/// the inputs' gradients flow on to the rest of the graph. Gradients equal
/// the plain run's bit for bit when `fn` is deterministic given its inputs
/// and RNG state. Under autograd::grad nothing touches .grad(), as without
/// checkpointing. docs/distributed.md, "Models larger than one device".
#pragma once
#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

#include "vnn/nn/container.h"
#include "vnn/random.h"
#include "vnn/tensor.h"

namespace vnn::utils {

/// What checkpoint() saves besides the inputs.
struct CheckpointOptions {
  /// Save the default generator's (seed, offset) in the forward and rewind
  /// it for the recompute, so random ops (dropout) draw what they drew
  /// (torch's preserve_rng_state). The generator is put back afterwards,
  /// so the backward leaves it where it found it.
  bool preserve_rng_state = true;
  /// Further generators `fn` draws from, saved and rewound the same way
  /// (they must outlive the backward).
  std::vector<Generator*> generators;
};

/// A checkpointed function of several tensors returning several tensors.
using CheckpointFunction = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

/// Runs `fn(inputs)` keeping only `inputs` for the backward, which reruns
/// `fn` (see the file comment). In grad mode each floating output requires
/// grad (fn's parameters cannot be seen before it reruns) and gets its own
/// gradient; with grad mode off it just returns fn(inputs). Inputs must not
/// be modified in place before the backward (ValueError there, as for any
/// saved tensor). Returns fn's outputs (at least one; ValueError for none).
std::vector<Tensor> checkpoint(const CheckpointFunction& fn, const std::vector<Tensor>& inputs,
                               const CheckpointOptions& options = CheckpointOptions());

namespace detail {
template <class F, class = void, class... Ts>
struct tensor_function : std::false_type {};
template <class F, class... Ts>
struct tensor_function<F, std::void_t<std::invoke_result_t<F&, const Ts&...>>, Ts...>
    : std::is_convertible<std::invoke_result_t<F&, const Ts&...>, Tensor> {};
template <class F, size_t... I>
Tensor call_with(F& fn, const std::vector<Tensor>& in, std::index_sequence<I...>) {
  return fn(in[I]...);
}
}  // namespace detail

/// Whether F called with the given tensors returns something a Tensor converts from.
template <class F, class... Ts>
inline constexpr bool is_tensor_function_v = detail::tensor_function<F, void, Ts...>::value;

/// checkpoint(fn, {a, b, ...}) for a function of one or more tensors
/// returning one: `checkpoint([&](const Tensor& x) { return block(x); }, x)`.
template <class F, class... Ts,
          std::enable_if_t<(std::is_same_v<std::decay_t<Ts>, Tensor> && ...) &&
                               is_tensor_function_v<F, Tensor, std::decay_t<Ts>...>,
                           int> = 0>
Tensor checkpoint(F&& fn, const Tensor& input, const Ts&... more) {
  // A copy of fn: the backward calls it again after this returns.
  CheckpointFunction call = [f = std::decay_t<F>(std::forward<F>(fn))](const std::vector<Tensor>& in) mutable {
    return std::vector<Tensor>{detail::call_with(f, in, std::index_sequence_for<Tensor, Ts...>())};
  };
  return checkpoint(call, std::vector<Tensor>{input, more...})[0];
}

/// The same with options (extra generators, preserve_rng_state).
template <class F, class... Ts,
          std::enable_if_t<(std::is_same_v<std::decay_t<Ts>, Tensor> && ...) &&
                               is_tensor_function_v<F, Tensor, std::decay_t<Ts>...>,
                           int> = 0>
Tensor checkpoint(const CheckpointOptions& options, F&& fn, const Tensor& input, const Ts&... more) {
  // A copy of fn: the backward calls it again after this returns.
  CheckpointFunction call = [f = std::decay_t<F>(std::forward<F>(fn))](const std::vector<Tensor>& in) mutable {
    return std::vector<Tensor>{detail::call_with(f, in, std::index_sequence_for<Tensor, Ts...>())};
  };
  return checkpoint(call, std::vector<Tensor>{input, more...}, options)[0];
}

/// Runs `seq` in `segments` consecutive segments of about equal length
/// (torch.utils.checkpoint.checkpoint_sequential): every segment but the
/// last is checkpointed, the last runs plainly (its activations are needed
/// at once by the backward). ValueError unless 1 <= segments; segments past
/// the number of modules are capped to it.
Tensor checkpoint_sequential(const nn::Sequential& seq, int64_t segments, const Tensor& input,
                             const CheckpointOptions& options = CheckpointOptions());

/// The same over a list of functions (modules' forwards, lambdas).
Tensor checkpoint_sequential(const std::vector<std::function<Tensor(const Tensor&)>>& functions, int64_t segments,
                             const Tensor& input, const CheckpointOptions& options = CheckpointOptions());

}  // namespace vnn::utils
