// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the loss headers share: VNN_LOSS2 / VNN_LOSS3, which declare a
// torch.nn loss module (NameImpl and its holder) over its function, and
// detail::reduce_loss, the none / mean / sum reduction.
#pragma once
#include "vnn/nn/loss.h"
#include "vnn/nn/module.h"
#include "vnn/reduction.h"

namespace vnn::nn::detail {
/// loss itself (none), its sum or its mean.
inline Tensor reduce_loss(const Tensor& loss, Reduction r) {
  switch (r) {
    case Reduction::none: return loss;
    case Reduction::sum: return sum(loss);
    case Reduction::mean: return mean(loss);
  }
  return loss;
}
}  // namespace vnn::nn::detail

// Module forms: loss(input, target) (three tensors for the pair and triplet losses).
/// Declares torch.nn's loss module Name of two tensors (NameImpl and its holder) over fn.
#define VNN_LOSS2(Name, Opts, fn)                                                                        \
  /** torch.nn.Name: fn(input, target, options). */                                                    \
  class Name##Impl : public Cloneable<Name##Impl> {                                                     \
   public:                                                                                              \
    /** The loss with the given options. */                                                             \
    explicit Name##Impl(const Opts& options = {}) : Cloneable(#Name), options(options) {}              \
    void reset() override {}                                                                            \
    /** fn(input, target, options). */                                                                  \
    Tensor forward(const Tensor& input, const Tensor& target) { return fn(input, target, options); }    \
    /** forward(input, target). */                                                                      \
    Tensor operator()(const Tensor& input, const Tensor& target) { return forward(input, target); }     \
    /** The options the loss was built with. */                                                         \
    Opts options;                                                                                       \
  };                                                                                                    \
  /** The holder of Name##Impl. */                                                                      \
  VNN_MODULE(Name)

/// VNN_LOSS2 for a loss whose options hold weights: they are buffer "weight"
/// (state_dict key, moved by to()), as LibTorch's.
#define VNN_WEIGHTED_LOSS2(Name, Opts, fn)                                                               \
  /** torch.nn.Name: fn(input, target, options) with the weight buffer. */                              \
  class Name##Impl : public Cloneable<Name##Impl> {                                                     \
   public:                                                                                              \
    /** The loss with the given options. */                                                             \
    explicit Name##Impl(const Opts& options = {}) : Cloneable(#Name), options(options) { reset(); }    \
    void reset() override { weight = detail::loss_weight_buffer(*this, "weight", options.weight()); }  \
    /** fn(input, target, options) with the weight buffer. */                                           \
    Tensor forward(const Tensor& input, const Tensor& target) {                                         \
      return fn(input, target, Opts(options).weight(weight));                                           \
    }                                                                                                   \
    /** forward(input, target). */                                                                      \
    Tensor operator()(const Tensor& input, const Tensor& target) { return forward(input, target); }     \
    /** The options the loss was built with. */                                                         \
    Opts options;                                                                                       \
    /** The weights, buffer "weight" (undefined without). */                                            \
    Tensor weight;                                                                                      \
  };                                                                                                    \
  /** The holder of Name##Impl. */                                                                      \
  VNN_MODULE(Name)

/// Declares torch.nn's loss module Name of three tensors (NameImpl and its holder) over fn.
#define VNN_LOSS3(Name, Opts, fn)                                                                        \
  /** torch.nn.Name: fn(a, b, c, options). */                                                           \
  class Name##Impl : public Cloneable<Name##Impl> {                                                     \
   public:                                                                                              \
    /** The loss with the given options. */                                                             \
    explicit Name##Impl(const Opts& options = {}) : Cloneable(#Name), options(options) {}              \
    void reset() override {}                                                                            \
    /** fn(a, b, c, options). */                                                                        \
    Tensor forward(const Tensor& a, const Tensor& b, const Tensor& c) { return fn(a, b, c, options); }  \
    /** forward(a, b, c). */                                                                            \
    Tensor operator()(const Tensor& a, const Tensor& b, const Tensor& c) { return forward(a, b, c); }   \
    /** The options the loss was built with. */                                                         \
    Opts options;                                                                                       \
  };                                                                                                    \
  /** The holder of Name##Impl. */                                                                      \
  VNN_MODULE(Name)
