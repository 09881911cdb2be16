// Losses (torch.nn.functional's and torch.nn's), built from differentiable
// ops so that they run on every device and backpropagate.
#pragma once
#include <string>

#include "vnn/nn/module.h"
#include "vnn/nn/options.h"

namespace vnn::nn {

enum class Reduction { none, mean, sum };
Reduction reduction_from_string(const std::string& s);  // "none", "mean", "sum"
// LibTorch's spellings: .reduction(vnn::nn::kSum).
inline constexpr Reduction kNone = Reduction::none, kMean = Reduction::mean, kSum = Reduction::sum;

struct CrossEntropyOptions {
  Tensor weight;              // [C] class weights, or undefined
  int64_t ignore_index = -100;
  double label_smoothing = 0.0;
  Reduction reduction = Reduction::mean;
};

// input: logits [N, C] (or [N, C, d...]); target: int64 class indices [N]
// (or [N, d...]). Mean reduction divides by the summed weights of the
// targets that are not ignored, as PyTorch.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyOptions& opt = {});
// input: log-probabilities [N, C(, d...)].
Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const CrossEntropyOptions& opt = {});
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction r = Reduction::mean);
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction r = Reduction::mean);
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction r = Reduction::mean, double beta = 1.0);
// input: probabilities in [0, 1]; log terms are clamped at -100 as PyTorch.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                            Reduction r = Reduction::mean);
// Numerically stable sigmoid + BCE; pos_weight [C] or undefined.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                                        const Tensor& pos_weight = Tensor(), Reduction r = Reduction::mean);
// Fraction of rows whose argmax over dim 1 equals target.
double accuracy(const Tensor& logits, const Tensor& target);

// Options with chained setters, as LibTorch's:
//   vnn::nn::CrossEntropyLoss loss_fn(vnn::nn::CrossEntropyLossOptions().label_smoothing(0.1).reduction(vnn::nn::kSum));
//   vnn::Tensor loss = loss_fn(logits, target);
// They convert to CrossEntropyOptions, so either form goes to cross_entropy.
struct CrossEntropyLossOptions {
  operator CrossEntropyOptions() const { return {weight_, ignore_index_, label_smoothing_, reduction_}; }
  VNN_ARG(Tensor, weight);
  VNN_ARG(int64_t, ignore_index) = -100;
  VNN_ARG(double, label_smoothing) = 0.0;
  VNN_ARG(Reduction, reduction) = Reduction::mean;
};
using NLLLossOptions = CrossEntropyLossOptions;
using CrossEntropyFuncOptions = CrossEntropyLossOptions;

struct ReductionOptions {  // MSELoss, L1Loss
  ReductionOptions(Reduction reduction = Reduction::mean) : reduction_(reduction) {}  // NOLINT: implicit
  VNN_ARG(Reduction, reduction);
};
using MSELossOptions = ReductionOptions;
using L1LossOptions = ReductionOptions;
struct SmoothL1LossOptions {
  VNN_ARG(Reduction, reduction) = Reduction::mean;
  VNN_ARG(double, beta) = 1.0;
};
struct BCELossOptions {
  VNN_ARG(Tensor, weight);
  VNN_ARG(Reduction, reduction) = Reduction::mean;
};
struct BCEWithLogitsLossOptions {
  VNN_ARG(Tensor, weight);
  VNN_ARG(Tensor, pos_weight);
  VNN_ARG(Reduction, reduction) = Reduction::mean;
};

// Module forms (holders as the layers'): loss(input, target). Losses have
// no parameters; clone() copies the options.
class CrossEntropyLossImpl : public Cloneable<CrossEntropyLossImpl> {
 public:
  explicit CrossEntropyLossImpl(const CrossEntropyLossOptions& options = {})
      : Cloneable("CrossEntropyLoss"), options(options) {}
  void reset() override {}
  using Module::forward;  // the one-tensor form throws: a loss takes (input, target)
  Tensor forward(const Tensor& input, const Tensor& target) { return cross_entropy(input, target, options); }
  Tensor operator()(const Tensor& input, const Tensor& target) { return forward(input, target); }
  CrossEntropyLossOptions options;
};
VNN_MODULE(CrossEntropyLoss);

class NLLLossImpl : public Cloneable<NLLLossImpl> {
 public:
  explicit NLLLossImpl(const NLLLossOptions& options = {}) : Cloneable("NLLLoss"), options(options) {}
  void reset() override {}
  using Module::forward;  // the one-tensor form throws: a loss takes (input, target)
  Tensor forward(const Tensor& input, const Tensor& target) { return nll_loss(input, target, options); }
  Tensor operator()(const Tensor& input, const Tensor& target) { return forward(input, target); }
  NLLLossOptions options;
};
VNN_MODULE(NLLLoss);

class MSELossImpl : public Cloneable<MSELossImpl> {
 public:
  explicit MSELossImpl(const MSELossOptions& options = {}) : Cloneable("MSELoss"), options(options) {}
  void reset() override {}
  using Module::forward;  // the one-tensor form throws: a loss takes (input, target)
  Tensor forward(const Tensor& input, const Tensor& target) { return mse_loss(input, target, options.reduction()); }
  Tensor operator()(const Tensor& input, const Tensor& target) { return forward(input, target); }
  MSELossOptions options;
};
VNN_MODULE(MSELoss);

class L1LossImpl : public Cloneable<L1LossImpl> {
 public:
  explicit L1LossImpl(const L1LossOptions& options = {}) : Cloneable("L1Loss"), options(options) {}
  void reset() override {}
  using Module::forward;  // the one-tensor form throws: a loss takes (input, target)
  Tensor forward(const Tensor& input, const Tensor& target) { return l1_loss(input, target, options.reduction()); }
  Tensor operator()(const Tensor& input, const Tensor& target) { return forward(input, target); }
  L1LossOptions options;
};
VNN_MODULE(L1Loss);

class SmoothL1LossImpl : public Cloneable<SmoothL1LossImpl> {
 public:
  explicit SmoothL1LossImpl(const SmoothL1LossOptions& options = {}) : Cloneable("SmoothL1Loss"), options(options) {}
  explicit SmoothL1LossImpl(Reduction r, double beta = 1.0)
      : SmoothL1LossImpl(SmoothL1LossOptions().reduction(r).beta(beta)) {}
  void reset() override {}
  using Module::forward;  // the one-tensor form throws: a loss takes (input, target)
  Tensor forward(const Tensor& input, const Tensor& target) {
    return smooth_l1_loss(input, target, options.reduction(), options.beta());
  }
  Tensor operator()(const Tensor& input, const Tensor& target) { return forward(input, target); }
  SmoothL1LossOptions options;
};
VNN_MODULE(SmoothL1Loss);

class BCELossImpl : public Cloneable<BCELossImpl> {
 public:
  explicit BCELossImpl(const BCELossOptions& options = {}) : Cloneable("BCELoss"), options(options) {}
  explicit BCELossImpl(Tensor weight, Reduction r = Reduction::mean)
      : BCELossImpl(BCELossOptions().weight(weight).reduction(r)) {}
  void reset() override {}
  using Module::forward;  // the one-tensor form throws: a loss takes (input, target)
  Tensor forward(const Tensor& input, const Tensor& target) {
    return binary_cross_entropy(input, target, options.weight(), options.reduction());
  }
  Tensor operator()(const Tensor& input, const Tensor& target) { return forward(input, target); }
  BCELossOptions options;
};
VNN_MODULE(BCELoss);

class BCEWithLogitsLossImpl : public Cloneable<BCEWithLogitsLossImpl> {
 public:
  explicit BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options = {})
      : Cloneable("BCEWithLogitsLoss"), options(options) {}
  explicit BCEWithLogitsLossImpl(Tensor weight, Tensor pos_weight = Tensor(), Reduction r = Reduction::mean)
      : BCEWithLogitsLossImpl(BCEWithLogitsLossOptions().weight(weight).pos_weight(pos_weight).reduction(r)) {}
  void reset() override {}
  using Module::forward;  // the one-tensor form throws: a loss takes (input, target)
  Tensor forward(const Tensor& input, const Tensor& target) {
    return binary_cross_entropy_with_logits(input, target, options.weight(), options.pos_weight(),
                                            options.reduction());
  }
  Tensor operator()(const Tensor& input, const Tensor& target) { return forward(input, target); }
  BCEWithLogitsLossOptions options;
};
VNN_MODULE(BCEWithLogitsLoss);

}  // namespace vnn::nn
