// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// CTCLoss (torch::nn::CTCLoss) and F::ctc_loss: the connectionist temporal
// classification loss of Graves et al. (2006), forward by the alpha
// recursion over the blank-extended targets:
//   vnn::nn::CTCLoss ctc(vnn::nn::CTCLossOptions().blank(0).zero_infinity(true));
//   auto loss = ctc(log_probs /* [T, N, C] */, targets, input_lengths, target_lengths);
// The recursion runs as a host loop over the time steps, each step a few
// device ops on [N, 2S + 1] (every sample and state at once), so every
// device runs it and autograd gives the gradient (the beta recursion's
// result) through those ops.
#pragma once
#include <vector>

#include "vnn/nn/loss.h"
#include "vnn/nn/module.h"
#include "vnn/nn/options.h"

namespace vnn::nn {

/// Options of CTCLoss: blank, reduction, zero_infinity.
struct CTCLossOptions {
  /// The blank label's class index (default 0).
  VNN_ARG(int64_t, blank) = 0;
  /// none: [N]; mean: each loss divided by its target length, then the batch mean (default); sum.
  VNN_ARG(Reduction, reduction) = Reduction::mean;
  /// Impossible alignments (infinite losses) give 0 and no gradient instead of inf.
  VNN_ARG(bool, zero_infinity) = false;
};

/// log_probs [T, N, C] (or unbatched [T, C]) log-softmax outputs; targets
/// [N, S] padded, or 1-D with the targets concatenated; int input_lengths
/// and target_lengths [N] (on any device; read on the host).
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, const CTCLossOptions& options = {});
/// ctc_loss with the lengths as lists (LibTorch's IntArrayRef form).
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const std::vector<int64_t>& input_lengths,
                const std::vector<int64_t>& target_lengths, const CTCLossOptions& options = {});

namespace functional {
/// Options of ctc_loss.
using CTCLossFuncOptions = CTCLossOptions;
using nn::ctc_loss;
}  // namespace functional

/// The CTC loss (torch.nn.CTCLoss): forward(log_probs, targets, input_lengths, target_lengths).
class CTCLossImpl : public Cloneable<CTCLossImpl> {
 public:
  /// The loss with the given options.
  explicit CTCLossImpl(const CTCLossOptions& options = {}) : Cloneable("CTCLoss"), options(options) {}
  void reset() override {}
  /// ctc_loss(log_probs, targets, input_lengths, target_lengths, options).
  Tensor forward(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                 const Tensor& target_lengths) {
    return ctc_loss(log_probs, targets, input_lengths, target_lengths, options);
  }
  /// The options the loss was built with.
  CTCLossOptions options;
};
/// The holder of CTCLossImpl.
VNN_MODULE(CTCLoss);

}  // namespace vnn::nn
