// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// AdaptiveLogSoftmaxWithLoss (Grave et al., "Efficient softmax approximation
// for GPUs"), as torch::nn::AdaptiveLogSoftmaxWithLoss:
//
//   vnn::nn::AdaptiveLogSoftmaxWithLoss asm_(
//       vnn::nn::AdaptiveLogSoftmaxWithLossOptions(512, 10000, {100, 1000}).div_value(4.0));
//   auto [output, loss] = asm_(hidden, target);  // output: each target's log-probability
//   loss.backward();
//
// Composed of Linear, log_softmax, gather, index_select and cat, so it runs
// on every device and backpropagates. The target is read on the host to
// group the rows by cluster (PyTorch's nonzero synchronises there too).
#pragma once
#include <string>
#include <vector>

#include "vnn/nn/container.h"
#include "vnn/nn/layers.h"
#include "vnn/nn/module.h"
#include "vnn/nn/options.h"
#include "vnn/random.h"

namespace vnn::nn {

/// Options of AdaptiveLogSoftmaxWithLoss: in_features, n_classes, cutoffs, div_value, head_bias.
struct AdaptiveLogSoftmaxWithLossOptions {
  /// `n_classes` classes over features of size `in_features`; classes
  /// [0, cutoffs[0]) form the head's shortlist, [cutoffs[i], cutoffs[i+1])
  /// (the last up to n_classes) the tail clusters.
  AdaptiveLogSoftmaxWithLossOptions(int64_t in_features, int64_t n_classes, std::vector<int64_t> cutoffs)
      : in_features_(in_features), n_classes_(n_classes), cutoffs_(std::move(cutoffs)) {}
  /// Size of the input's last dim.
  VNN_ARG(int64_t, in_features);
  /// Number of classes.
  VNN_ARG(int64_t, n_classes);
  /// Increasing cluster boundaries in [1, n_classes - 1], unique.
  VNN_ARG(std::vector<int64_t>, cutoffs);
  /// Cluster i's hidden size is floor(in_features / div_value^(i+1)) (default 4).
  VNN_ARG(double, div_value) = 4.0;
  /// Whether the head Linear has a bias (default false).
  VNN_ARG(bool, head_bias) = false;
};

/// What AdaptiveLogSoftmaxWithLoss's forward returns (LibTorch's ASMoutput).
struct ASMoutput {
  /// The two results.
  ASMoutput(Tensor output_, Tensor loss_) : output(std::move(output_)), loss(std::move(loss_)) {}
  /// Each target's log-probability [batch] (0-dim for an unbatched input).
  Tensor output;
  /// The mean negative log-likelihood, a 0-dim tensor that backpropagates
  /// (LibTorch's is a double: loss.item<double>() gives that).
  Tensor loss;
};

/// The adaptive softmax: a head Linear over the shortlist and one logit per
/// cluster, and per cluster a tail Sequential(Linear(in, hidden, no bias),
/// Linear(hidden, cluster size, no bias)). Keys "head.weight" (and
/// "head.bias" with head_bias), "tail.<i>.0.weight", "tail.<i>.1.weight",
/// as PyTorch's. Input [batch, in_features] with target [batch], or
/// [in_features] with a 0-dim target.
class AdaptiveLogSoftmaxWithLossImpl : public Cloneable<AdaptiveLogSoftmaxWithLossImpl> {
 public:
  /// ValueError unless the cutoffs are unique, increasing and in [1, n_classes - 1], and every
  /// cluster's hidden size floor(in_features / div_value^(i+1)) is at least 1.
  explicit AdaptiveLogSoftmaxWithLossImpl(AdaptiveLogSoftmaxWithLossOptions options, Generator* gen = nullptr);
  /// AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs).
  AdaptiveLogSoftmaxWithLossImpl(int64_t in_features, int64_t n_classes, std::vector<int64_t> cutoffs)
      : AdaptiveLogSoftmaxWithLossImpl(AdaptiveLogSoftmaxWithLossOptions(in_features, n_classes, std::move(cutoffs))) {}
  /// Builds head and tail with fresh initial values.
  void reset() override;
  /// Re-draws every Linear's initial values.
  void reset_parameters();
  /// Each target's log-probability and their mean negative. ShapeError for
  /// mismatched shapes, IndexError for a target outside [0, n_classes).
  ASMoutput forward(const Tensor& input, const Tensor& target);
  /// Every class's log-probability [batch, n_classes] ([n_classes] unbatched).
  Tensor log_prob(const Tensor& input);
  /// The most likely class of each row (int64 [batch], or 0-dim unbatched);
  /// the tails run only for rows whose head argmax is a cluster.
  Tensor predict(const Tensor& input);
  /// The full log-probabilities from the head's output (PyTorch's _get_full_log_prob).
  Tensor _get_full_log_prob(const Tensor& input, const Tensor& head_output);
  std::string describe() const override;

  /// The options the module was built with.
  AdaptiveLogSoftmaxWithLossOptions options;
  /// cutoffs followed by n_classes.
  std::vector<int64_t> cutoffs;
  /// cutoffs[0]: the classes the head predicts directly.
  int64_t shortlist_size = 0;
  /// Number of tail clusters.
  int64_t n_clusters = 0;
  /// shortlist_size + n_clusters: the head's outputs.
  int64_t head_size = 0;
  /// Linear(in_features, head_size).
  Linear head{nullptr};
  /// One Sequential(Linear, Linear) per cluster.
  ModuleList tail = nullptr;

 private:
  void check_input(const char* fn, const Tensor& input) const;
  int64_t cluster_hidden(int64_t i) const;  // floor(in_features / div_value^i)
  Generator* gen_ = nullptr;
};
/// The holder of AdaptiveLogSoftmaxWithLossImpl.
VNN_MODULE(AdaptiveLogSoftmaxWithLoss);

}  // namespace vnn::nn
