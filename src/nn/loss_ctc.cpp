// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// CTCLoss of include/vnn/nn/loss_ctc.h. The alpha recursion in log space on
// the blank-extended targets l' (blank, l1, blank, l2, ..., blank):
//   alpha_t(s) = logsumexp(alpha_{t-1}(s), alpha_{t-1}(s-1), alpha_{t-1}(s-2) if l'(s) != blank, l'(s-2))
//                + log_probs[t, l'(s)]
// one step per time step for all samples and states. "Impossible" is a
// large finite negative number rather than -inf, so every logsumexp has a
// finite maximum and its gradient never forms 0 * inf.
#include "vnn/nn/loss_ctc.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "vnn/detail/message.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/indexing.h"
#include "vnn/nn/loss_module.h"
#include "vnn/reduction.h"

namespace vnn::nn {

namespace {

constexpr double kImpossible = -1e30;  // log of an unreachable state's probability
constexpr double kInfiniteLoss = 1e29;  // losses above this came from impossible alignments

// log(exp(a) + exp(b) + exp(c)) elementwise, the maximum taken out (as a constant).
Tensor log_sum_exp3(const Tensor& a, const Tensor& b, const Tensor& c) {
  Tensor m = maximum(a, maximum(b, c)).detach();
  return add(m, log(add(add(exp(sub(a, m)), exp(sub(b, m))), exp(sub(c, m)))));
}

// alpha shifted right by k states along dim 1, the first k states impossible.
Tensor shift_states(const Tensor& alpha, int64_t k) {
  const int64_t n = alpha.size(0), l = alpha.size(1);
  Tensor pad = full({n, std::min(k, l)}, kImpossible, TensorOptions(alpha.device()).dtype(alpha.dtype()));
  if (k >= l) return pad;
  return cat({pad, alpha.narrow(1, 0, l - k)}, 1);
}

std::vector<int64_t> host_lengths(const Tensor& t, const char* name) {
  VNN_CHECK(ValueError, t.defined() && t.dim() <= 1 && !is_floating(t.dtype()), "ctc_loss: ", name,
            " must be a 1-D integer tensor, got ", t.defined() ? t.sizes().str() : std::string("none"));
  return t.to(kInt64).to_vector<int64_t>();
}

}  // namespace

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, const CTCLossOptions& o) {
  return ctc_loss(log_probs, targets, host_lengths(input_lengths, "input_lengths"),
                  host_lengths(target_lengths, "target_lengths"), o);
}

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const std::vector<int64_t>& il,
                const std::vector<int64_t>& tl, const CTCLossOptions& o) {
  const char* op = "ctc_loss";
  VNN_CHECK(ValueError, log_probs.defined() && targets.defined(), op, ": log_probs and targets must be defined");
  VNN_CHECK(DTypeError, is_floating(log_probs.dtype()), op, ": log_probs must be floating, got ", log_probs.dtype());
  VNN_CHECK(ShapeError, log_probs.dim() == 3 || log_probs.dim() == 2, op,
            ": log_probs must be [T, N, C] or unbatched [T, C], got ", log_probs.sizes());
  VNN_CHECK(DTypeError, !is_floating(targets.dtype()), op, ": targets must hold integer classes, got ",
            targets.dtype());
  const bool batched = log_probs.dim() == 3;
  // 16-bit inputs run in float32: the impossible marker must stay finite.
  const DType dt = log_probs.dtype() == kFloat64 ? kFloat64 : kFloat32;
  Tensor lp = (batched ? log_probs : log_probs.unsqueeze(1)).to(dt);
  const int64_t t_max = lp.size(0), n = lp.size(1), c = lp.size(2);
  VNN_CHECK(ShapeError, int64_t(il.size()) == n && int64_t(tl.size()) == n, op, ": input_lengths (", il.size(),
            ") and target_lengths (", tl.size(), ") must have one entry per sample (", n, ")");
  VNN_CHECK(ValueError, o.blank() >= 0 && o.blank() < c, op, ": blank ", o.blank(), " must be in [0, ", c, ")");
  // Each sample's target sequence, from the padded [N, S] or the concatenated 1-D form.
  std::vector<int64_t> flat = targets.to(kInt64).to_vector<int64_t>();
  const bool padded = batched && targets.dim() == 2;
  const int64_t row = padded ? targets.size(1) : 0;
  if (batched) {
    VNN_CHECK(ShapeError, targets.dim() == 1 || (targets.dim() == 2 && targets.size(0) == n), op, ": targets ",
              targets.sizes(), " must be [N, S] (N = ", n, ") or 1-D concatenated");
  } else {
    VNN_CHECK(ShapeError, targets.dim() == 1, op, ": unbatched targets must be 1-D [S], got ", targets.sizes());
  }
  std::vector<int64_t> start(size_t(n), 0);
  int64_t s_max = 0, total = 0;
  for (int64_t b = 0; b < n; ++b) {
    VNN_CHECK(ValueError, il[size_t(b)] >= 1 && il[size_t(b)] <= t_max, op, ": input_lengths[", b, "] = ",
              il[size_t(b)], " must be in [1, ", t_max, "]");
    VNN_CHECK(ValueError, tl[size_t(b)] >= 0 && (!padded || tl[size_t(b)] <= row), op, ": target_lengths[", b,
              "] = ", tl[size_t(b)], padded ? " exceeds the targets' length " : " is negative", padded ? row : 0);
    start[size_t(b)] = padded ? b * row : total;
    total += tl[size_t(b)];
    s_max = std::max(s_max, tl[size_t(b)]);
  }
  VNN_CHECK(ShapeError, padded || total <= int64_t(flat.size()), op, ": target_lengths sum to ", total,
            " but the concatenated targets hold ", flat.size());
  // Extended labels [N, L], the skip transitions, and each sample's last two states.
  const int64_t l = 2 * s_max + 1;
  std::vector<int64_t> ext(static_cast<size_t>(n * l), o.blank()), last(static_cast<size_t>(n)), prev(static_cast<size_t>(n));
  std::vector<uint8_t> skip(size_t(n * l), 0), active_init(size_t(n * l), 0);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t k = 0; k < tl[size_t(b)]; ++k) {
      const int64_t label = flat[size_t(start[size_t(b)] + k)];
      VNN_CHECK(IndexError, label >= 0 && label < c, op, ": target ", label, " of sample ", b,
                " is out of range for ", c, " classes");
      ext[size_t(b * l + 2 * k + 1)] = label;
      if (k > 0 && label != flat[size_t(start[size_t(b)] + k - 1)]) skip[size_t(b * l + 2 * k + 1)] = 1;
    }
    active_init[size_t(b * l)] = 1;
    if (tl[size_t(b)] > 0) active_init[size_t(b * l + 1)] = 1;
    last[size_t(b)] = b * l + 2 * tl[size_t(b)];
    prev[size_t(b)] = tl[size_t(b)] > 0 ? last[size_t(b)] - 1 : last[size_t(b)];
  }
  const Device dev = lp.device();
  Tensor ext_t = from_vector(ext, {1, n, l}, dev);
  Tensor lp_ext = gather(lp, 2, ext_t.expand({t_max, n, l}).contiguous());  // [T, N, L]
  Tensor skip_t = from_vector(std::vector<int64_t>(skip.begin(), skip.end()), {n, l}, dev).to(kBool);
  Tensor init_t = from_vector(std::vector<int64_t>(active_init.begin(), active_init.end()), {n, l}, dev).to(kBool);
  Tensor alpha = where(init_t, lp_ext.select(0, 0), kImpossible);
  std::vector<int64_t> lengths(il.begin(), il.end());
  Tensor len_t = from_vector(lengths, {n, 1}, dev);
  for (int64_t t = 1; t < t_max; ++t) {
    Tensor a2 = where(skip_t, shift_states(alpha, 2), kImpossible);
    Tensor next = add(log_sum_exp3(alpha, shift_states(alpha, 1), a2), lp_ext.select(0, t));
    alpha = where(gt(len_t, double(t)), next, alpha);  // a sample's alpha stops at its input length
  }
  Tensor flat_alpha = alpha.reshape({n * l});
  Tensor a_last = index_select(flat_alpha, 0, from_vector(last, {n}, dev));
  Tensor a_prev = index_select(flat_alpha, 0, from_vector(prev, {n}, dev));
  // With an empty target the two states coincide: count it once.
  std::vector<int64_t> empty_target(static_cast<size_t>(n));
  for (int64_t b = 0; b < n; ++b) empty_target[size_t(b)] = tl[size_t(b)] == 0;
  a_prev = where(from_vector(empty_target, {n}, dev).to(kBool), kImpossible, a_prev);
  Tensor loss = neg(log_sum_exp3(a_last, a_prev, full({n}, kImpossible, TensorOptions(dev).dtype(dt))));
  const double inf = std::numeric_limits<double>::infinity();
  loss = where(gt(loss.detach(), kInfiniteLoss), o.zero_infinity() ? 0.0 : inf, loss);
  if (o.reduction() == Reduction::mean) {
    std::vector<double> div_by(static_cast<size_t>(n));
    for (int64_t b = 0; b < n; ++b) div_by[size_t(b)] = double(std::max<int64_t>(tl[size_t(b)], 1));
    loss = div(loss, from_vector(div_by, {n}, dev).to(dt));
  }
  if (!batched) loss = loss.reshape({});
  return detail::reduce_loss(loss, o.reduction()).to(log_probs.dtype());
}

}  // namespace vnn::nn
