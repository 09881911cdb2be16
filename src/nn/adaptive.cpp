// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "vnn/detail/message.h"
#include "vnn/nn/adaptive.h"

#include <algorithm>
#include <cmath>

#include "vnn/autograd.h"
#include "vnn/error.h"
#include "vnn/indexing.h"
#include "vnn/nn/init.h"
#include "vnn/reduction.h"

namespace vnn::nn {

AdaptiveLogSoftmaxWithLossImpl::AdaptiveLogSoftmaxWithLossImpl(AdaptiveLogSoftmaxWithLossOptions opt, Generator* gen)
    : Cloneable("AdaptiveLogSoftmaxWithLoss"), options(std::move(opt)), gen_(gen) {
  const std::vector<int64_t>& c = options.cutoffs();
  bool ok = !c.empty();
  for (size_t i = 0; ok && i < c.size(); ++i)
    ok = c[i] >= 1 && c[i] <= options.n_classes() - 1 && (i == 0 || c[i] > c[i - 1]);
  VNN_CHECK(ValueError, ok, "AdaptiveLogSoftmaxWithLoss: cutoffs ", Shape(c),
            " should be a non-empty sequence of unique, positive integers sorted in increasing order, each between 1 "
            "and n_classes - 1 (n_classes = ",
            options.n_classes(), ")");
  VNN_CHECK(ValueError, options.in_features() > 0 && options.div_value() > 0,
            "AdaptiveLogSoftmaxWithLoss: in_features and div_value must be positive, got ", options.in_features(),
            " and ", options.div_value());
  for (size_t i = 1; i <= c.size(); ++i)
    VNN_CHECK(ValueError, cluster_hidden(int64_t(i)) > 0, "AdaptiveLogSoftmaxWithLoss: cluster ", i - 1,
              "'s hidden size floor(in_features / div_value^", i, ") is 0 (in_features ", options.in_features(),
              ", div_value ", options.div_value(), "); use a smaller div_value or fewer cutoffs");
  reset();
}

int64_t AdaptiveLogSoftmaxWithLossImpl::cluster_hidden(int64_t i) const {
  return int64_t(std::floor(double(options.in_features()) / std::pow(options.div_value(), double(i))));
}

void AdaptiveLogSoftmaxWithLossImpl::reset() {
  cutoffs = options.cutoffs();
  cutoffs.push_back(options.n_classes());
  shortlist_size = cutoffs[0];
  n_clusters = int64_t(cutoffs.size()) - 1;
  head_size = shortlist_size + n_clusters;
  const int64_t in = options.in_features();
  head = register_module("head", Linear(LinearOptions(in, head_size).bias(options.head_bias()), gen_));
  tail = register_module("tail", ModuleList());
  for (int64_t i = 0; i < n_clusters; ++i) {
    const int64_t hidden = cluster_hidden(i + 1);
    const int64_t size = cutoffs[size_t(i + 1)] - cutoffs[size_t(i)];
    tail->push_back(Sequential(Linear(LinearOptions(in, hidden).bias(false), gen_),
                               Linear(LinearOptions(hidden, size).bias(false), gen_)));
  }
}

void AdaptiveLogSoftmaxWithLossImpl::reset_parameters() {
  // Linear's own initialisation, drawn again in place.
  auto redraw = [this](LinearImpl& l) {
    init::kaiming_uniform_(l.weight, std::sqrt(5.0), kFanIn, kLeakyReLU, gen_);
    const double bound = 1.0 / std::sqrt(double(l.in_features));
    if (l.bias.defined()) init::uniform_(l.bias, -bound, bound, gen_);
  };
  redraw(*head);
  for (size_t i = 0; i < tail->size(); ++i)
    for (auto& layer : (*tail)[i]->children()) redraw(*layer->as<LinearImpl>());
}

void AdaptiveLogSoftmaxWithLossImpl::check_input(const char* fn, const Tensor& input) const {
  VNN_CHECK(ShapeError, (input.dim() == 1 || input.dim() == 2) && input.size(-1) == options.in_features(),
            "AdaptiveLogSoftmaxWithLoss::", fn, ": expected an input [batch, ", options.in_features(), "] or [",
            options.in_features(), "], got shape ", input.sizes());
}

ASMoutput AdaptiveLogSoftmaxWithLossImpl::forward(const Tensor& input_, const Tensor& target_) {
  const bool batched = target_.dim() > 0;
  VNN_CHECK(ShapeError, target_.dim() <= 1, "AdaptiveLogSoftmaxWithLoss: a 0-D or 1-D target was expected, got shape ",
            target_.sizes(), " (multi-target is not supported)");
  VNN_CHECK(DTypeError, !is_floating(target_.dtype()) && target_.dtype() != kBool,
            "AdaptiveLogSoftmaxWithLoss: the target holds class indices, so it must be an integer tensor, not ",
            name(target_.dtype()));
  check_input("forward", input_);
  VNN_CHECK(ShapeError, batched ? input_.dim() == 2 && input_.size(0) == target_.size(0) : input_.dim() == 1,
            "AdaptiveLogSoftmaxWithLoss: input ", input_.sizes(), " and target ", target_.sizes(),
            " do not match (a [batch] target takes a [batch, in_features] input, a 0-D one an [in_features] input)");
  Tensor input = batched ? input_ : input_.unsqueeze(0), target = batched ? target_ : target_.unsqueeze(0);
  const std::vector<int64_t> t = target.to(kInt64).to_vector<int64_t>();
  const int64_t batch = int64_t(t.size());
  // Rows by cluster (0: the shortlist); the head logit each row gathers.
  std::vector<std::vector<int64_t>> rows(size_t(n_clusters + 1));
  std::vector<int64_t> head_index(t.size());
  for (int64_t r = 0; r < batch; ++r) {
    const int64_t c = t[size_t(r)];
    VNN_CHECK(IndexError, c >= 0 && c < options.n_classes(), "AdaptiveLogSoftmaxWithLoss: target ", c, " at row ", r,
              " is outside [0, ", options.n_classes() - 1, "]");
    const auto cluster = int64_t(std::upper_bound(cutoffs.begin(), cutoffs.end(), c) - cutoffs.begin());
    rows[size_t(cluster)].push_back(r);
    head_index[size_t(r)] = cluster == 0 ? c : shortlist_size + cluster - 1;
  }
  const Device dev = input.device();
  Tensor head_logprob = (*head)(input).log_softmax(1);
  Tensor output = gather(head_logprob, 1, from_vector(head_index, {batch, 1}, dev)).squeeze(1);
  // Each cluster's rows gain their class's log-probability within the
  // cluster; the pieces, in cluster order, are put back in row order.
  std::vector<Tensor> pieces;
  std::vector<int64_t> order;
  for (int64_t i = 0; i <= n_clusters; ++i) {
    const std::vector<int64_t>& rs = rows[size_t(i)];
    if (rs.empty()) continue;
    order.insert(order.end(), rs.begin(), rs.end());
    if (i == 0) {
      pieces.push_back(zeros({int64_t(rs.size())}, TensorOptions(output.dtype()).device(dev)));
      continue;
    }
    std::vector<int64_t> relative;
    for (int64_t r : rs) relative.push_back(t[size_t(r)] - cutoffs[size_t(i - 1)]);
    Tensor subset = index_select(input, 0, from_vector(rs, {int64_t(rs.size())}, dev));
    Tensor cluster_logprob = (*(*tail)[size_t(i - 1)])(subset).log_softmax(1);
    pieces.push_back(gather(cluster_logprob, 1, from_vector(relative, {int64_t(rs.size()), 1}, dev)).squeeze(1));
  }
  std::vector<int64_t> slot(static_cast<size_t>(batch));  // each row's place in the pieces
  for (int64_t k = 0; k < batch; ++k) slot[size_t(order[size_t(k)])] = k;
  output = add(output, index_select(cat(pieces, 0), 0, from_vector(slot, {batch}, dev)));
  Tensor loss = neg(output).mean();
  return ASMoutput(batched ? output : output.squeeze(0), loss);
}

Tensor AdaptiveLogSoftmaxWithLossImpl::_get_full_log_prob(const Tensor& input, const Tensor& head_output) {
  Tensor head_logprob = head_output.log_softmax(1);
  std::vector<Tensor> parts{head_logprob.narrow(1, 0, shortlist_size)};
  for (int64_t i = 0; i < n_clusters; ++i) {
    Tensor cluster_logprob = (*(*tail)[size_t(i)])(input).log_softmax(1);
    parts.push_back(add(cluster_logprob, head_logprob.narrow(1, shortlist_size + i, 1)));
  }
  return cat(parts, 1);
}

Tensor AdaptiveLogSoftmaxWithLossImpl::log_prob(const Tensor& input) {
  check_input("log_prob", input);
  const bool batched = input.dim() == 2;
  Tensor x = batched ? input : input.unsqueeze(0);
  Tensor out = _get_full_log_prob(x, (*head)(x));
  return batched ? out : out.squeeze(0);
}

Tensor AdaptiveLogSoftmaxWithLossImpl::predict(const Tensor& input) {
  check_input("predict", input);
  const bool batched = input.dim() == 2;
  Tensor x = batched ? input : input.unsqueeze(0);
  Tensor head_output = (*head)(x);
  std::vector<int64_t> best = argmax(head_output, 1).to(kInt64).to_vector<int64_t>();
  // Rows whose head argmax is a cluster need the full distribution.
  std::vector<int64_t> in_tail;
  for (size_t r = 0; r < best.size(); ++r)
    if (best[r] >= shortlist_size) in_tail.push_back(int64_t(r));
  if (!in_tail.empty()) {
    Tensor idx = from_vector(in_tail, {int64_t(in_tail.size())}, x.device());
    std::vector<int64_t> full =
        argmax(_get_full_log_prob(index_select(x, 0, idx), index_select(head_output, 0, idx)), 1)
            .to(kInt64)
            .to_vector<int64_t>();
    for (size_t k = 0; k < in_tail.size(); ++k) best[size_t(in_tail[k])] = full[k];
  }
  Tensor out = from_vector(best, {int64_t(best.size())}, x.device());
  return batched ? out : out.squeeze(0);
}

std::string AdaptiveLogSoftmaxWithLossImpl::describe() const {
  return ::vnn::detail::str_cat("AdaptiveLogSoftmaxWithLoss(in_features=", options.in_features(),
                                ", n_classes=", options.n_classes(), ", cutoffs=", Shape(options.cutoffs()),
                                ", div_value=", options.div_value(), ", head_bias=", options.head_bias(), ")");
}

}  // namespace vnn::nn
