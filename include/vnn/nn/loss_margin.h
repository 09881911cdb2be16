// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// MultiMarginLoss, MultiLabelMarginLoss and TripletMarginWithDistanceLoss,
// with LibTorch's options, PyTorch's formulas and reductions, and their
// functional forms:
//   vnn::nn::MultiMarginLoss mm(vnn::nn::MultiMarginLossOptions().p(2).margin(0.5));
//   auto l = F::multilabel_margin_loss(x, y);   // y: int64 class lists padded with -1
// Composed of differentiable ops (gather, clamp, sums), so every device
// runs them and autograd gives the gradients.
#pragma once
#include <functional>

#include "vnn/nn/loss.h"
#include "vnn/nn/loss_module.h"
#include "vnn/nn/module.h"
#include "vnn/nn/options.h"

namespace vnn::nn {

/// Options of MultiMarginLoss: p, margin, weight, reduction.
struct MultiMarginLossOptions {
  /// 1 or 2: the power of each hinge term (default 1).
  VNN_ARG(int64_t, p) = 1;
  /// The margin (default 1).
  VNN_ARG(double, margin) = 1.0;
  /// Per-class weights [C] applied by the target class, or undefined.
  VNN_ARG(Tensor, weight);
  /// Reduction over the batch (default mean).
  VNN_ARG(Reduction, reduction) = Reduction::mean;
};
/// Options of MultiLabelMarginLoss: reduction.
struct MultiLabelMarginLossOptions {
  /// MultiLabelMarginLossOptions(reduction), implicit as LibTorch's.
  MultiLabelMarginLossOptions(Reduction reduction = Reduction::mean) : reduction_(reduction) {}  // NOLINT: implicit
  /// Reduction over the batch (default mean).
  VNN_ARG(Reduction, reduction);
};
/// Options of TripletMarginWithDistanceLoss: distance_function, margin, swap, reduction.
struct TripletMarginWithDistanceLossOptions {
  /// The distance of two [N, D] batches, [N]; undefined: pairwise_distance (p = 2).
  VNN_ARG(std::function<Tensor(const Tensor&, const Tensor&)>, distance_function);
  /// The margin between the positive and negative distances (default 1).
  VNN_ARG(double, margin) = 1.0;
  /// Use min(d(a, n), d(p, n)) as the negative distance.
  VNN_ARG(bool, swap) = false;
  /// Reduction over the batch (default mean).
  VNN_ARG(Reduction, reduction) = Reduction::mean;
};

/// Per sample: sum over i != y of weight[y] * max(0, margin - x[y] + x[i])^p,
/// divided by C; input [N, C] or [C], int64 target [N] or [].
Tensor multi_margin_loss(const Tensor& input, const Tensor& target, const MultiMarginLossOptions& options = {});
/// Per sample: sum over target classes j and non-target classes i of
/// max(0, 1 - (x[j] - x[i])), divided by C; target [N, C] or [C] int64 class
/// indices, the list ending at the first -1.
Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target,
                              const MultiLabelMarginLossOptions& options = {});
/// max(0, margin + d(anchor, positive) - d(anchor, negative)), reduced.
Tensor triplet_margin_with_distance_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                                         const TripletMarginWithDistanceLossOptions& options = {});

namespace functional {
/// Options of multi_margin_loss.
using MultiMarginLossFuncOptions = MultiMarginLossOptions;
/// Options of multilabel_margin_loss.
using MultilabelMarginLossFuncOptions = MultiLabelMarginLossOptions;
/// Options of triplet_margin_with_distance_loss.
using TripletMarginWithDistanceLossFuncOptions = TripletMarginWithDistanceLossOptions;
using nn::multi_margin_loss;
using nn::multilabel_margin_loss;
using nn::triplet_margin_with_distance_loss;
}  // namespace functional

VNN_WEIGHTED_LOSS2(MultiMarginLoss, MultiMarginLossOptions, multi_margin_loss);
VNN_LOSS2(MultiLabelMarginLoss, MultiLabelMarginLossOptions, multilabel_margin_loss);
VNN_LOSS3(TripletMarginWithDistanceLoss, TripletMarginWithDistanceLossOptions, triplet_margin_with_distance_loss);

}  // namespace vnn::nn
