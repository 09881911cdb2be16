// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// More of torch.nn's losses (loss.h has cross entropy, NLL, MSE, L1,
// SmoothL1, BCE and BCEWithLogits): HuberLoss, KLDivLoss, SoftMarginLoss,
// MarginRankingLoss, HingeEmbeddingLoss, CosineEmbeddingLoss, PoissonNLLLoss,
// GaussianNLLLoss, TripletMarginLoss and MultiLabelSoftMarginLoss, with
// LibTorch's options, PyTorch's formulas and reductions, and their
// functional forms:
//   vnn::nn::KLDivLoss kl(vnn::nn::KLDivLossOptions().reduction(vnn::nn::kBatchMean).log_target(true));
//   auto l = F::huber_loss(x, y, F::HuberLossFuncOptions().delta(0.5));
// Built from differentiable ops, so they run on every device and backpropagate.
#pragma once
#include "vnn/nn/loss.h"
#include "vnn/nn/loss_module.h"
#include "vnn/nn/module.h"
#include "vnn/nn/options.h"

namespace vnn::nn {

/// KLDivLoss's extra reduction: the sum divided by the batch size (LibTorch's torch::kBatchMean).
struct BatchMeanReduction {};
/// reduction "batchmean" of KLDivLoss.
inline constexpr BatchMeanReduction kBatchMean{};
/// The reductions of KLDivLoss: none, mean, sum or batchmean.
struct KLDivReduction {
  /// kNone, kMean or kSum.
  KLDivReduction(Reduction r = Reduction::mean) : reduction(r) {}  // NOLINT: implicit, as LibTorch's variant
  /// kBatchMean.
  KLDivReduction(BatchMeanReduction) : batchmean(true) {}  // NOLINT: implicit, as LibTorch's variant
  /// The reduction when not batchmean.
  Reduction reduction = Reduction::mean;
  /// Whether the sum is divided by the batch size (dim 0).
  bool batchmean = false;
};

/// Options of HuberLoss: reduction, delta.
struct HuberLossOptions {
  /// Reduction over the elements (default mean).
  VNN_ARG(Reduction, reduction) = Reduction::mean;
  /// Where the loss turns from quadratic to linear (> 0, default 1).
  VNN_ARG(double, delta) = 1.0;
};
/// Options of KLDivLoss: reduction (incl. kBatchMean), log_target.
struct KLDivLossOptions {
  /// none, mean (over every element, PyTorch's default), sum or batchmean (the mathematically right one).
  VNN_ARG(KLDivReduction, reduction) = Reduction::mean;
  /// Whether the target is given as log-probabilities.
  VNN_ARG(bool, log_target) = false;
};
/// Options of SoftMarginLoss.
using SoftMarginLossOptions = ReductionOptions;
/// Options of MarginRankingLoss, HingeEmbeddingLoss and CosineEmbeddingLoss: margin, reduction.
struct MarginRankingLossOptions {
  /// The margin (default 0).
  VNN_ARG(double, margin) = 0.0;
  /// Reduction over the elements (default mean).
  VNN_ARG(Reduction, reduction) = Reduction::mean;
};
/// Options of HingeEmbeddingLoss: margin (default 1), reduction.
struct HingeEmbeddingLossOptions {
  /// The margin applied to the y = -1 elements (default 1).
  VNN_ARG(double, margin) = 1.0;
  /// Reduction over the elements (default mean).
  VNN_ARG(Reduction, reduction) = Reduction::mean;
};
/// Options of CosineEmbeddingLoss: margin (default 0), reduction.
using CosineEmbeddingLossOptions = MarginRankingLossOptions;
/// Options of PoissonNLLLoss: log_input, full, eps, reduction.
struct PoissonNLLLossOptions {
  /// Input is the log of the rate: exp(input) - target * input (default); else input - target * log(input + eps).
  VNN_ARG(bool, log_input) = true;
  /// Adds Stirling's approximation of log(target!) where target > 1.
  VNN_ARG(bool, full) = false;
  /// Keeps log(input + eps) finite when log_input is false.
  VNN_ARG(double, eps) = 1e-8;
  /// Reduction over the elements (default mean).
  VNN_ARG(Reduction, reduction) = Reduction::mean;
};
/// Options of GaussianNLLLoss: full, eps, reduction.
struct GaussianNLLLossOptions {
  /// Adds the constant 0.5 * log(2 pi).
  VNN_ARG(bool, full) = false;
  /// The variance is clamped to at least eps (the gradient passes as if unclamped, as PyTorch's).
  VNN_ARG(double, eps) = 1e-6;
  /// Reduction over the elements (default mean).
  VNN_ARG(Reduction, reduction) = Reduction::mean;
};
/// Options of TripletMarginLoss: margin, p, eps, swap, reduction.
struct TripletMarginLossOptions {
  /// The margin between the positive and negative distances (default 1).
  VNN_ARG(double, margin) = 1.0;
  /// The norm of the pairwise distance (default 2).
  VNN_ARG(double, p) = 2.0;
  /// Added to the differences before the norm (default 1e-6).
  VNN_ARG(double, eps) = 1e-6;
  /// Use min(d(a, n), d(p, n)) as the negative distance (the distance swap).
  VNN_ARG(bool, swap) = false;
  /// Reduction over the batch (default mean).
  VNN_ARG(Reduction, reduction) = Reduction::mean;
};
/// Options of MultiLabelSoftMarginLoss: weight, reduction.
struct MultiLabelSoftMarginLossOptions {
  /// Per-class weights [C] (broadcast), or undefined.
  VNN_ARG(Tensor, weight);
  /// Reduction over the batch (default mean).
  VNN_ARG(Reduction, reduction) = Reduction::mean;
};

/// 0.5 d^2 where |d| < delta, delta (|d| - 0.5 delta) elsewhere, d = input - target.
Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossOptions& options = {});
/// target (log target - input) pointwise (0 where target is 0), or exp(target) (target - input) with log_target.
Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivLossOptions& options = {});
/// log(1 + exp(-y x)), y in {1, -1}.
Tensor soft_margin_loss(const Tensor& input, const Tensor& target, Reduction r = Reduction::mean);
/// max(0, -y (x1 - x2) + margin).
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           const MarginRankingLossOptions& options = {});
/// x where y == 1, max(0, margin - x) where y == -1.
Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, const HingeEmbeddingLossOptions& options = {});
/// 1 - cos(x1, x2) where y == 1, max(0, cos(x1, x2) - margin) where y == -1; x [N, D] or [D], y [N] or [].
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             const CosineEmbeddingLossOptions& options = {});
/// The negative log likelihood of target under Poisson(input) (PyTorch's terms).
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, const PoissonNLLLossOptions& options = {});
/// 0.5 (log var + (input - target)^2 / var) (+ 0.5 log 2 pi with full); var as input, or one fewer / size-1 last dim.
Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var,
                         const GaussianNLLLossOptions& options = {});
/// max(d(a, p) - d(a, n) + margin, 0) with d the p-norm of (x1 - x2 + eps) over the last dim.
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           const TripletMarginLossOptions& options = {});
/// The mean over classes of -(y log sigmoid(x) + (1 - y) log sigmoid(-x)) (times weight), per sample.
Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const MultiLabelSoftMarginLossOptions& options = {});

namespace functional {
/// Options of huber_loss.
using HuberLossFuncOptions = HuberLossOptions;
/// Options of kl_div.
using KLDivFuncOptions = KLDivLossOptions;
/// Options of soft_margin_loss.
using SoftMarginLossFuncOptions = SoftMarginLossOptions;
/// Options of margin_ranking_loss.
using MarginRankingLossFuncOptions = MarginRankingLossOptions;
/// Options of hinge_embedding_loss.
using HingeEmbeddingLossFuncOptions = HingeEmbeddingLossOptions;
/// Options of cosine_embedding_loss.
using CosineEmbeddingLossFuncOptions = CosineEmbeddingLossOptions;
/// Options of poisson_nll_loss.
using PoissonNLLLossFuncOptions = PoissonNLLLossOptions;
/// Options of gaussian_nll_loss.
using GaussianNLLLossFuncOptions = GaussianNLLLossOptions;
/// Options of triplet_margin_loss.
using TripletMarginLossFuncOptions = TripletMarginLossOptions;
/// Options of multilabel_soft_margin_loss.
using MultilabelSoftMarginLossFuncOptions = MultiLabelSoftMarginLossOptions;
using nn::cosine_embedding_loss;
using nn::gaussian_nll_loss;
using nn::hinge_embedding_loss;
using nn::huber_loss;
using nn::kl_div;
using nn::margin_ranking_loss;
using nn::multilabel_soft_margin_loss;
using nn::poisson_nll_loss;
using nn::triplet_margin_loss;
/// log(1 + exp(-y x)), reduced (nn::soft_margin_loss).
inline Tensor soft_margin_loss(const Tensor& input, const Tensor& target, const SoftMarginLossFuncOptions& o = {}) {
  return nn::soft_margin_loss(input, target, o.reduction());
}
}  // namespace functional

namespace detail {
/// soft_margin_loss with a ReductionOptions (the module form).
inline Tensor soft_margin_loss_opts(const Tensor& i, const Tensor& t, const SoftMarginLossOptions& o) {
  return soft_margin_loss(i, t, o.reduction());
}
}  // namespace detail

VNN_LOSS2(HuberLoss, HuberLossOptions, huber_loss);
VNN_LOSS2(KLDivLoss, KLDivLossOptions, kl_div);
VNN_LOSS2(SoftMarginLoss, SoftMarginLossOptions, detail::soft_margin_loss_opts);
VNN_LOSS2(HingeEmbeddingLoss, HingeEmbeddingLossOptions, hinge_embedding_loss);
VNN_LOSS2(PoissonNLLLoss, PoissonNLLLossOptions, poisson_nll_loss);
VNN_WEIGHTED_LOSS2(MultiLabelSoftMarginLoss, MultiLabelSoftMarginLossOptions, multilabel_soft_margin_loss);
VNN_LOSS3(MarginRankingLoss, MarginRankingLossOptions, margin_ranking_loss);
VNN_LOSS3(CosineEmbeddingLoss, CosineEmbeddingLossOptions, cosine_embedding_loss);
VNN_LOSS3(GaussianNLLLoss, GaussianNLLLossOptions, gaussian_nll_loss);
VNN_LOSS3(TripletMarginLoss, TripletMarginLossOptions, triplet_margin_loss);

}  // namespace vnn::nn

namespace vnn {
/// KLDivLoss's batchmean under LibTorch's name torch::kBatchMean.
using nn::kBatchMean;
}  // namespace vnn
