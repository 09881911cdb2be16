// Losses (torch.nn.functional's and torch.nn's), built from differentiable
// ops so that they run on every device and backpropagate.
#pragma once
#include <string>

#include "vnn/nn/module.h"

namespace vnn::nn {

enum class Reduction { none, mean, sum };
Reduction reduction_from_string(const std::string& s);  // "none", "mean", "sum"

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

// Module forms, for Sequential-style code: loss(input, target).
class CrossEntropyLoss : public Module {
 public:
  explicit CrossEntropyLoss(CrossEntropyOptions opt = {}) : Module("CrossEntropyLoss"), opt_(std::move(opt)) {}
  Tensor forward(const Tensor& input, const Tensor& target) { return cross_entropy(input, target, opt_); }
  Tensor operator()(const Tensor& input, const Tensor& target) { return forward(input, target); }

 private:
  CrossEntropyOptions opt_;
};

class NLLLoss : public Module {
 public:
  explicit NLLLoss(CrossEntropyOptions opt = {}) : Module("NLLLoss"), opt_(std::move(opt)) {}
  Tensor operator()(const Tensor& input, const Tensor& target) { return nll_loss(input, target, opt_); }

 private:
  CrossEntropyOptions opt_;
};

// MSELoss, L1Loss, SmoothL1Loss, BCELoss, BCEWithLogitsLoss share one shape.
class PairLoss : public Module {
 public:
  using Fn = Tensor (*)(const Tensor&, const Tensor&, Reduction);
  PairLoss(const char* name, Fn fn, Reduction r) : Module(name), fn_(fn), r_(r) {}
  Tensor operator()(const Tensor& input, const Tensor& target) { return fn_(input, target, r_); }

 private:
  Fn fn_;
  Reduction r_;
};
class MSELoss : public PairLoss {
 public:
  explicit MSELoss(Reduction r = Reduction::mean) : PairLoss("MSELoss", &mse_loss, r) {}
};
class L1Loss : public PairLoss {
 public:
  explicit L1Loss(Reduction r = Reduction::mean) : PairLoss("L1Loss", &l1_loss, r) {}
};
class SmoothL1Loss : public Module {
 public:
  explicit SmoothL1Loss(Reduction r = Reduction::mean, double beta = 1.0) : Module("SmoothL1Loss"), r_(r), beta_(beta) {}
  Tensor operator()(const Tensor& input, const Tensor& target) { return smooth_l1_loss(input, target, r_, beta_); }

 private:
  Reduction r_;
  double beta_;
};
class BCELoss : public Module {
 public:
  explicit BCELoss(Tensor weight = Tensor(), Reduction r = Reduction::mean)
      : Module("BCELoss"), weight_(std::move(weight)), r_(r) {}
  Tensor operator()(const Tensor& input, const Tensor& target) { return binary_cross_entropy(input, target, weight_, r_); }

 private:
  Tensor weight_;
  Reduction r_;
};
class BCEWithLogitsLoss : public Module {
 public:
  explicit BCEWithLogitsLoss(Tensor weight = Tensor(), Tensor pos_weight = Tensor(), Reduction r = Reduction::mean)
      : Module("BCEWithLogitsLoss"), weight_(std::move(weight)), pos_weight_(std::move(pos_weight)), r_(r) {}
  Tensor operator()(const Tensor& input, const Tensor& target) {
    return binary_cross_entropy_with_logits(input, target, weight_, pos_weight_, r_);
  }

 private:
  Tensor weight_, pos_weight_;
  Reduction r_;
};

}  // namespace vnn::nn
