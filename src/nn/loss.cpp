// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "vnn/detail/message.h"
#include "vnn/nn/loss.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "amp/autocast.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/indexing.h"
#include "vnn/reduction.h"

namespace vnn::nn {

Reduction reduction_from_string(const std::string& s) {
  if (s == "none") return Reduction::none;
  if (s == "mean") return Reduction::mean;
  if (s == "sum") return Reduction::sum;
  VNN_THROW(ValueError, "reduction: expected \"none\", \"mean\" or \"sum\", got \"", s, "\"");
}

namespace {

Tensor reduce(const Tensor& loss, Reduction r) {
  switch (r) {
    case Reduction::none: return loss;
    case Reduction::sum: return sum(loss);
    case Reduction::mean: return mean(loss);
  }
  return loss;
}

void check_same_shape(const char* op, const Tensor& input, const Tensor& target) {
  VNN_CHECK(ShapeError, input.sizes() == target.sizes(), op, ": input shape ", input.sizes(), " and target shape ",
            target.sizes(), " must match");
}

// Moves the class dim last and flattens: [N, C, d...] -> [N*d..., C].
Tensor classes_last(const Tensor& t) {
  if (t.dim() == 2) return t;
  Shape perm;
  perm.push_back(0);
  for (int i = 2; i < t.dim(); ++i) perm.push_back(i);
  perm.push_back(1);
  return t.permute(perm).reshape({-1, t.size(1)});
}

}  // namespace

// Targets up to this many are range-checked on the host (see nll_loss).
constexpr int64_t kHostCheckedTargets = 1 << 16;

Tensor nll_loss(const Tensor& logp_in, const Tensor& target_in, const CrossEntropyOptions& opt) {
  if (autocast::detail::OpScope s{autocast::detail::Policy::fp32, {&logp_in, &opt.weight}}) {
    CrossEntropyOptions o = opt;
    o.weight = s[1];
    return nll_loss(s[0], target_in, o);
  }
  if (logp_in.dim() < 2) VNN_THROW(ShapeError, "nll_loss: input must be [N, C] or [N, C, d...], got ", logp_in.sizes());
  if (target_in.dtype() != kInt64 && target_in.dtype() != kInt32)
    VNN_THROW(DTypeError, "nll_loss: target must hold int64 class indices, got ", name(target_in.dtype()));
  Shape expected;
  expected.push_back(logp_in.size(0));
  for (int i = 2; i < logp_in.dim(); ++i) expected.push_back(logp_in.size(i));
  VNN_CHECK(ShapeError, target_in.sizes() == expected, "nll_loss: target shape ", target_in.sizes(),
            " does not match input ", logp_in.sizes(), " (expected ", expected.str(), ")");
  int64_t classes = logp_in.size(1);
  Tensor logp = classes_last(logp_in);
  Tensor target = target_in.reshape({-1}).to(kInt64);
  // The range check: a classification batch's few targets come to the host
  // once (one round trip, no reductions); large ones (per-pixel targets)
  // are reduced on the device. With no ignored target and no class weights,
  // the loss is the plain mean of the picked log-probabilities.
  const int64_t n = target.numel();
  int64_t lo = 0, hi = 0, ignored = -1;  // ignored: how many targets equal ignore_index (-1: not counted)
  Tensor valid, safe;
  // Bounds known on the host (targets that came from host memory, or were
  // picked from such a tensor) answer the check without a blocking read
  // when no target can equal ignore_index.
  int64_t known_lo = 0, known_hi = 0;
  const bool known = n > 0 && ::vnn::detail::known_range(target_in, &known_lo, &known_hi) && known_lo >= 0 &&
                     known_hi < classes && (opt.ignore_index < known_lo || opt.ignore_index > known_hi);
  if (known) {
    ignored = 0, lo = known_lo, hi = known_hi;
  } else if (n > 0 && n <= kHostCheckedTargets) {
    std::vector<int64_t> v = target.to_vector<int64_t>();
    ignored = 0;
    lo = INT64_MAX, hi = INT64_MIN;
    for (int64_t t : v) {
      if (t == opt.ignore_index) t = 0, ++ignored;
      lo = std::min(lo, t), hi = std::max(hi, t);
    }
  }
  if (ignored != 0) {
    valid = ne(target, double(opt.ignore_index));
    safe = where(valid, target, zeros_like(target));  // ignored rows index class 0, then get weight 0
    if (ignored < 0 && n > 0) lo = int64_t(amin(safe).item()), hi = int64_t(amax(safe).item());
  } else {
    safe = target;
  }
  if (n > 0 && (lo < 0 || hi >= classes))
    VNN_THROW(IndexError, "nll_loss: target values must be in [0, ", classes, ") or equal ignore_index ",
              opt.ignore_index, "; found values in [", lo, ", ", hi, "]");
  if (ignored == 0 && !opt.weight.defined() && opt.label_smoothing == 0) {
    Tensor loss = neg(gather(logp, 1, safe.unsqueeze(1)).squeeze(1));
    switch (opt.reduction) {
      case Reduction::none: return loss.reshape(expected);
      case Reduction::sum: return sum(loss);
      case Reduction::mean: return mean(loss);
    }
  }
  if (!valid.defined()) valid = ne(target, double(opt.ignore_index));
  Tensor w = valid.to(logp.dtype());
  if (opt.weight.defined()) {
    if (opt.weight.dim() != 1 || opt.weight.size(0) != classes)
      VNN_THROW(ShapeError, "nll_loss: weight must have shape [", classes, "], got ", opt.weight.sizes());
    w = mul(w, index_select(opt.weight.to(logp.dtype()), 0, safe));
  }
  Tensor picked = gather(logp, 1, safe.unsqueeze(1)).squeeze(1);
  Tensor loss = neg(mul(picked, w));
  if (opt.label_smoothing > 0) {
    if (opt.label_smoothing > 1) VNN_THROW(ValueError, "cross_entropy: label_smoothing must be in [0, 1]");
    Tensor per_class = opt.weight.defined() ? mul(logp, opt.weight.to(logp.dtype())) : logp;
    Tensor smooth = neg(mul(sum(per_class, 1), valid.to(logp.dtype())));
    double eps = opt.label_smoothing;
    loss = add(mul(loss, 1.0 - eps), mul(smooth, eps / double(classes)));
  }
  switch (opt.reduction) {
    case Reduction::none: return loss.reshape(expected);
    case Reduction::sum: return sum(loss);
    case Reduction::mean: return div(sum(loss), sum(w));
  }
  return loss;
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyOptions& opt) {
  if (autocast::detail::OpScope s{autocast::detail::Policy::fp32, {&input, &opt.weight}}) {
    CrossEntropyOptions o = opt;
    o.weight = s[1];
    return cross_entropy(s[0], target, o);
  }
  if (input.dim() < 2)
    VNN_THROW(ShapeError, "cross_entropy: input must be logits [N, C] or [N, C, d...], got ", input.sizes());
  return nll_loss(log_softmax(input, 1), target, opt);
}

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction r) {
  if (autocast::detail::OpScope s{autocast::detail::Policy::fp32, {&input, &target}}) return mse_loss(s[0], s[1], r);
  check_same_shape("mse_loss", input, target);
  Tensor d = sub(input, target);
  return reduce(mul(d, d), r);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction r) {
  if (autocast::detail::OpScope s{autocast::detail::Policy::fp32, {&input, &target}}) return l1_loss(s[0], s[1], r);
  check_same_shape("l1_loss", input, target);
  return reduce(abs(sub(input, target)), r);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction r, double beta) {
  if (autocast::detail::OpScope s{autocast::detail::Policy::fp32, {&input, &target}}) return smooth_l1_loss(s[0], s[1], r, beta);
  check_same_shape("smooth_l1_loss", input, target);
  if (beta < 0) VNN_THROW(ValueError, "smooth_l1_loss: beta must be non-negative");
  Tensor d = abs(sub(input, target));
  if (beta == 0) return reduce(d, r);
  Tensor quadratic = mul(mul(d, d), 0.5 / beta);
  Tensor linear = sub(d, 0.5 * beta);
  return reduce(where(lt(d, beta), quadratic, linear), r);
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction r) {
  if (autocast::detail::OpScope s{autocast::detail::Policy::fp32, {&input, &target, &weight}}) return binary_cross_entropy(s[0], s[1], s[2], r);
  check_same_shape("binary_cross_entropy", input, target);
  Tensor log_p = clamp_min(log(input), -100.0);
  Tensor log_q = clamp_min(log(rsub(input, 1.0)), -100.0);
  Tensor loss = neg(add(mul(target, log_p), mul(rsub(target, 1.0), log_q)));
  if (weight.defined()) loss = mul(loss, weight);
  return reduce(loss, r);
}

Tensor binary_cross_entropy_with_logits(const Tensor& x, const Tensor& y, const Tensor& weight,
                                        const Tensor& pos_weight, Reduction r) {
  if (autocast::detail::OpScope s{autocast::detail::Policy::fp32, {&x, &y, &weight, &pos_weight}})
    return binary_cross_entropy_with_logits(s[0], s[1], s[2], s[3], r);
  check_same_shape("binary_cross_entropy_with_logits", x, y);
  // log(1 + exp(-|x|)) + max(-x, 0) = -log sigmoid(x), without overflow.
  Tensor log_sig_neg = add(log1p(exp(neg(abs(x)))), clamp_min(neg(x), 0.0));
  Tensor loss;
  if (pos_weight.defined()) {
    Tensor coeff = add(mul(y, sub(pos_weight, 1.0)), 1.0);  // 1 + (pw - 1) y
    loss = add(mul(rsub(y, 1.0), x), mul(coeff, log_sig_neg));
  } else {
    loss = add(mul(rsub(y, 1.0), x), log_sig_neg);
  }
  if (weight.defined()) loss = mul(loss, weight);
  return reduce(loss, r);
}

double accuracy(const Tensor& logits, const Tensor& target) {
  if (logits.dim() != 2 || target.dim() != 1 || logits.size(0) != target.size(0))
    VNN_THROW(ShapeError, "accuracy: expected logits [N, C] and target [N], got ", logits.sizes(), " and ",
              target.sizes());
  if (target.numel() == 0) return 0.0;
  Tensor hits = eq(argmax(logits, 1), target.to(kInt64));
  return sum(hits.to(kFloat64)).item() / double(target.numel());
}

}  // namespace vnn::nn
