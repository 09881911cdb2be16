// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Losses (torch.nn.functional's and torch.nn's), built from differentiable
// ops so that they run on every device and backpropagate.
#pragma once
#include <string>

#include "vnn/nn/module.h"
#include "vnn/nn/options.h"

namespace vnn::nn {

/// How a loss reduces its per-element values: none (same shape as the target), mean or sum.
enum class Reduction { none, mean, sum };
/// The Reduction named "none", "mean" or "sum" (ValueError otherwise).
Reduction reduction_from_string(const std::string& s);  // "none", "mean", "sum"
/// LibTorch's spellings: .reduction(vnn::nn::kSum).
///@{
inline constexpr Reduction kNone = Reduction::none, kMean = Reduction::mean, kSum = Reduction::sum;
///@}

/// Options of cross_entropy and nll_loss: class weights, ignored index, label smoothing, reduction.
struct CrossEntropyOptions {
  /// Per-class weights [C], or undefined for none.
  Tensor weight;              // [C] class weights, or undefined
  /// Targets equal to this index contribute nothing (default -100).
  int64_t ignore_index = -100;
  /// Mass moved uniformly onto all classes, in [0, 1] (default 0).
  double label_smoothing = 0.0;
  /// Reduction over the batch (default mean).
  Reduction reduction = Reduction::mean;
};

/// input: logits [N, C] (or [N, C, d...]); target: int64 class indices [N]
/// (or [N, d...]). Mean reduction divides by the summed weights of the
/// targets that are not ignored, as PyTorch.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyOptions& opt = {});
/// input: log-probabilities [N, C(, d...)].
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const CrossEntropyOptions& opt = {});
/// Mean squared error (input - target)^2, reduced.
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction r = Reduction::mean);
/// Mean absolute error |input - target|, reduced.
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction r = Reduction::mean);
/// Huber-like loss: quadratic below `beta`, linear above (torch's smooth_l1_loss).
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction r = Reduction::mean, double beta = 1.0);
/// input: probabilities in [0, 1]; log terms are clamped at -100 as PyTorch.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                            Reduction r = Reduction::mean);
/// Numerically stable sigmoid + BCE; pos_weight [C] or undefined.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                                        const Tensor& pos_weight = Tensor(), Reduction r = Reduction::mean);
/// Fraction of rows whose argmax over dim 1 equals target.
double accuracy(const Tensor& logits, const Tensor& target);

/// Options with chained setters, as LibTorch's:
///   vnn::nn::CrossEntropyLoss loss_fn(vnn::nn::CrossEntropyLossOptions().label_smoothing(0.1).reduction(vnn::nn::kSum));
///   vnn::Tensor loss = loss_fn(logits, target);
/// They convert to CrossEntropyOptions, so either form goes to cross_entropy.
struct CrossEntropyLossOptions {
  /// The same options as a plain CrossEntropyOptions.
  operator CrossEntropyOptions() const { return {weight_, ignore_index_, label_smoothing_, reduction_}; }
  /// Per-class weights [C], or undefined for none.
  VNN_ARG(Tensor, weight);
  /// Targets equal to this index contribute nothing (default -100).
  VNN_ARG(int64_t, ignore_index) = -100;
  /// Mass moved uniformly onto all classes, in [0, 1] (default 0).
  VNN_ARG(double, label_smoothing) = 0.0;
  /// Reduction over the batch (default mean).
  VNN_ARG(Reduction, reduction) = Reduction::mean;
};
/// Options of NLLLoss (those of CrossEntropyLoss).
using NLLLossOptions = CrossEntropyLossOptions;
/// Options of the functional cross_entropy, LibTorch's name.
using CrossEntropyFuncOptions = CrossEntropyLossOptions;

/// Options of a loss that has only a reduction (MSELoss, L1Loss).
struct ReductionOptions {  // MSELoss, L1Loss
  /// The reduction, mean unless given; implicit.
  ReductionOptions(Reduction reduction = Reduction::mean) : reduction_(reduction) {}  // NOLINT: implicit
  /// Reduction over the elements (default mean).
  VNN_ARG(Reduction, reduction);
};
/// Options of MSELoss.
using MSELossOptions = ReductionOptions;
/// Options of L1Loss.
using L1LossOptions = ReductionOptions;
/// Options of SmoothL1Loss: reduction and beta.
struct SmoothL1LossOptions {
  /// Reduction over the elements (default mean).
  VNN_ARG(Reduction, reduction) = Reduction::mean;
  /// Where the loss turns from quadratic to linear (default 1).
  VNN_ARG(double, beta) = 1.0;
};
/// Options of BCELoss: element weights and reduction.
struct BCELossOptions {
  /// Weights broadcast to the input, or undefined for none.
  VNN_ARG(Tensor, weight);
  /// Reduction over the elements (default mean).
  VNN_ARG(Reduction, reduction) = Reduction::mean;
};
/// Options of BCEWithLogitsLoss: weights, positive-class weights, reduction.
struct BCEWithLogitsLossOptions {
  /// Weights broadcast to the input, or undefined for none.
  VNN_ARG(Tensor, weight);
  /// Weights [C] of the positive term per class, or undefined for none.
  VNN_ARG(Tensor, pos_weight);
  /// Reduction over the elements (default mean).
  VNN_ARG(Reduction, reduction) = Reduction::mean;
};

namespace detail {
/// Registers a loss's weights `t` as buffer `name` of `m` when defined (LibTorch's
/// loss modules keep them as buffers: state_dict() holds them, to() moves them).
inline Tensor loss_weight_buffer(Module& m, const char* name, const Tensor& t) {
  return t.defined() ? m.register_buffer(name, t) : Tensor();
}
}  // namespace detail

/// Module forms (holders as the layers'): loss(input, target). Losses have
/// no parameters; class weights are buffers ("weight", "pos_weight"), as
/// LibTorch's; clone() copies the options and the buffers.
class CrossEntropyLossImpl : public Cloneable<CrossEntropyLossImpl> {
 public:
  /// A CrossEntropyLoss with the given options.
  explicit CrossEntropyLossImpl(const CrossEntropyLossOptions& options = {})
      : Cloneable("CrossEntropyLoss"), options(options) {
    reset();
  }
  void reset() override { weight = detail::loss_weight_buffer(*this, "weight", options.weight()); }
  /// cross_entropy(input, target, options) with the weight buffer: logits [N, C] against int64 class indices [N].
  Tensor forward(const Tensor& input, const Tensor& target) {
    return cross_entropy(input, target, CrossEntropyLossOptions(options).weight(weight));
  }
  /// forward(input, target).
  Tensor operator()(const Tensor& input, const Tensor& target) { return forward(input, target); }
  /// The options the loss was built with.
  CrossEntropyLossOptions options;
  /// The class weights [C], buffer "weight" (undefined without).
  Tensor weight;
};
/// The holder of CrossEntropyLossImpl.
VNN_MODULE(CrossEntropyLoss);

/// nll_loss as a module (log-probabilities against class indices).
class NLLLossImpl : public Cloneable<NLLLossImpl> {
 public:
  /// An NLLLoss with the given options.
  explicit NLLLossImpl(const NLLLossOptions& options = {}) : Cloneable("NLLLoss"), options(options) { reset(); }
  void reset() override { weight = detail::loss_weight_buffer(*this, "weight", options.weight()); }
  /// nll_loss(input, target, options) with the weight buffer.
  Tensor forward(const Tensor& input, const Tensor& target) {
    return nll_loss(input, target, NLLLossOptions(options).weight(weight));
  }
  /// forward(input, target).
  Tensor operator()(const Tensor& input, const Tensor& target) { return forward(input, target); }
  /// The options the loss was built with.
  NLLLossOptions options;
  /// The class weights [C], buffer "weight" (undefined without).
  Tensor weight;
};
/// The holder of NLLLossImpl.
VNN_MODULE(NLLLoss);

/// mse_loss as a module.
class MSELossImpl : public Cloneable<MSELossImpl> {
 public:
  /// An MSELoss with the given reduction.
  explicit MSELossImpl(const MSELossOptions& options = {}) : Cloneable("MSELoss"), options(options) {}
  void reset() override {}
  /// mse_loss(input, target, options.reduction()).
  Tensor forward(const Tensor& input, const Tensor& target) { return mse_loss(input, target, options.reduction()); }
  /// forward(input, target).
  Tensor operator()(const Tensor& input, const Tensor& target) { return forward(input, target); }
  /// The options the loss was built with.
  MSELossOptions options;
};
/// The holder of MSELossImpl.
VNN_MODULE(MSELoss);

/// l1_loss as a module.
class L1LossImpl : public Cloneable<L1LossImpl> {
 public:
  /// An L1Loss with the given reduction.
  explicit L1LossImpl(const L1LossOptions& options = {}) : Cloneable("L1Loss"), options(options) {}
  void reset() override {}
  /// l1_loss(input, target, options.reduction()).
  Tensor forward(const Tensor& input, const Tensor& target) { return l1_loss(input, target, options.reduction()); }
  /// forward(input, target).
  Tensor operator()(const Tensor& input, const Tensor& target) { return forward(input, target); }
  /// The options the loss was built with.
  L1LossOptions options;
};
/// The holder of L1LossImpl.
VNN_MODULE(L1Loss);

/// smooth_l1_loss as a module.
class SmoothL1LossImpl : public Cloneable<SmoothL1LossImpl> {
 public:
  /// A SmoothL1Loss with the given options.
  explicit SmoothL1LossImpl(const SmoothL1LossOptions& options = {}) : Cloneable("SmoothL1Loss"), options(options) {}
  /// SmoothL1Loss(reduction, beta).
  explicit SmoothL1LossImpl(Reduction r, double beta = 1.0)
      : SmoothL1LossImpl(SmoothL1LossOptions().reduction(r).beta(beta)) {}
  void reset() override {}
  /// smooth_l1_loss(input, target, options.reduction(), options.beta()).
  Tensor forward(const Tensor& input, const Tensor& target) {
    return smooth_l1_loss(input, target, options.reduction(), options.beta());
  }
  /// forward(input, target).
  Tensor operator()(const Tensor& input, const Tensor& target) { return forward(input, target); }
  /// The options the loss was built with.
  SmoothL1LossOptions options;
};
/// The holder of SmoothL1LossImpl.
VNN_MODULE(SmoothL1Loss);

/// binary_cross_entropy as a module (probabilities against 0/1 targets).
class BCELossImpl : public Cloneable<BCELossImpl> {
 public:
  /// A BCELoss with the given options.
  explicit BCELossImpl(const BCELossOptions& options = {}) : Cloneable("BCELoss"), options(options) { reset(); }
  /// BCELoss(weight, reduction).
  explicit BCELossImpl(Tensor weight, Reduction r = Reduction::mean)
      : BCELossImpl(BCELossOptions().weight(weight).reduction(r)) {}
  void reset() override { weight = detail::loss_weight_buffer(*this, "weight", options.weight()); }
  /// binary_cross_entropy(input, target, weight, options.reduction()).
  Tensor forward(const Tensor& input, const Tensor& target) {
    return binary_cross_entropy(input, target, weight, options.reduction());
  }
  /// forward(input, target).
  Tensor operator()(const Tensor& input, const Tensor& target) { return forward(input, target); }
  /// The options the loss was built with.
  BCELossOptions options;
  /// The weights, buffer "weight" (undefined without).
  Tensor weight;
};
/// The holder of BCELossImpl.
VNN_MODULE(BCELoss);

/// binary_cross_entropy_with_logits as a module (logits against 0/1 targets).
class BCEWithLogitsLossImpl : public Cloneable<BCEWithLogitsLossImpl> {
 public:
  /// A BCEWithLogitsLoss with the given options.
  explicit BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options = {})
      : Cloneable("BCEWithLogitsLoss"), options(options) {
    reset();
  }
  /// BCEWithLogitsLoss(weight, pos_weight, reduction).
  explicit BCEWithLogitsLossImpl(Tensor weight, Tensor pos_weight = Tensor(), Reduction r = Reduction::mean)
      : BCEWithLogitsLossImpl(BCEWithLogitsLossOptions().weight(weight).pos_weight(pos_weight).reduction(r)) {}
  void reset() override {
    weight = detail::loss_weight_buffer(*this, "weight", options.weight());
    pos_weight = detail::loss_weight_buffer(*this, "pos_weight", options.pos_weight());
  }
  /// binary_cross_entropy_with_logits(input, target, weight, pos_weight, options.reduction()).
  Tensor forward(const Tensor& input, const Tensor& target) {
    return binary_cross_entropy_with_logits(input, target, weight, pos_weight, options.reduction());
  }
  /// forward(input, target).
  Tensor operator()(const Tensor& input, const Tensor& target) { return forward(input, target); }
  /// The options the loss was built with.
  BCEWithLogitsLossOptions options;
  /// The weights and the positive-class weights, buffers "weight" and "pos_weight" (undefined without).
  ///@{
  Tensor weight, pos_weight;
  ///@}
};
/// The holder of BCEWithLogitsLossImpl.
VNN_MODULE(BCEWithLogitsLoss);

}  // namespace vnn::nn
