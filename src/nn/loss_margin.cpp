// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The losses of include/vnn/nn/loss_margin.h. Targets are small integer
// tensors: they are read on the host once to check their range (and, for
// the multilabel loss, to build the target / non-target masks).
#include "vnn/nn/loss_margin.h"

#include <vector>

#include "vnn/detail/message.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/indexing.h"
#include "vnn/nn/two_input.h"
#include "vnn/reduction.h"

namespace vnn::nn {

namespace {

// input [N, C], [C] or [] (one class, as PyTorch's) floating; target int64 of the given batch shape.
// Returns input as [N, C].
Tensor margin_input(const char* op, const Tensor& input, const Tensor& target, bool target_per_class) {
  VNN_CHECK(ValueError, input.defined() && target.defined(), op, ": input and target must be defined");
  VNN_CHECK(DTypeError, is_floating(input.dtype()), op, ": input must be floating, got ", input.dtype());
  VNN_CHECK(DTypeError, target.dtype() == kInt64, op, ": target must be int64 class indices, got ", target.dtype());
  VNN_CHECK(ShapeError, input.dim() <= 2, op, ": input must be [N, C], [C] or [], got ", input.sizes());
  const bool ok = target_per_class ? target.sizes() == input.sizes()
                                   : (input.dim() == 2 ? target.dim() == 1 && target.size(0) == input.size(0)
                                                       : target.numel() == 1 && target.dim() <= 1);
  VNN_CHECK(ShapeError, ok, op, ": target ", target.sizes(), " does not fit input ", input.sizes(),
            target_per_class ? " (it must have the input's shape)" : " (it must be [N] for [N, C], or [] for [C])");
  return input.dim() == 2 ? input : input.reshape({1, input.numel()});
}

}  // namespace

Tensor multi_margin_loss(const Tensor& input, const Tensor& target, const MultiMarginLossOptions& o) {
  const char* op = "multi_margin_loss";
  Tensor x = margin_input(op, input, target, false);
  VNN_CHECK(ValueError, o.p() == 1 || o.p() == 2, op, ": only p == 1 and p == 2 are supported, got ", o.p());
  const int64_t n = x.size(0), c = x.size(1);
  for (int64_t t : target.to_vector<int64_t>())
    VNN_CHECK(IndexError, t >= 0 && t < c, op, ": target ", t, " is out of range for ", c, " classes");
  if (o.weight().defined())
    VNN_CHECK(ShapeError, o.weight().dim() == 1 && o.weight().size(0) == c, op, ": weight must be [", c, "], got ",
              o.weight().sizes());
  Tensor y = target.reshape({n, 1});
  Tensor z = clamp_min(add(sub(x, gather(x, 1, y)), o.margin()), 0.0);
  if (o.p() == 2) z = mul(z, z);
  if (o.weight().defined()) z = mul(z, index_select(o.weight().to(x.dtype()), 0, target.reshape({n})).reshape({n, 1}));
  // The target class itself is left out of the sum.
  Tensor per_sample = div(sum(where(eq(one_hot(y.reshape({n}), c), 1.0), 0.0, z), {1}), double(c));
  if (input.dim() <= 1) per_sample = per_sample.reshape(target.sizes());
  return detail::reduce_loss(per_sample, o.reduction());
}

Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target, const MultiLabelMarginLossOptions& o) {
  const char* op = "multilabel_margin_loss";
  Tensor x = margin_input(op, input, target, true);
  const int64_t n = x.size(0), c = x.size(1);
  // count[n][j]: how often class j is listed (before the first -1); other[n][i]: 1 for classes not listed.
  std::vector<int64_t> t = target.to_vector<int64_t>();
  std::vector<double> count(size_t(n * c), 0.0), other(size_t(n * c), 1.0);
  for (int64_t s = 0; s < n; ++s)
    for (int64_t k = 0; k < c; ++k) {
      const int64_t j = t[size_t(s * c + k)];
      if (j == -1) break;
      VNN_CHECK(IndexError, j >= 0 && j < c, op, ": target ", j, " is out of range for ", c,
                " classes (the list ends at -1)");
      count[size_t(s * c + j)] += 1;
      other[size_t(s * c + j)] = 0;
    }
  Tensor cnt = from_vector(count, {n, c, 1}, x.device()).to(x.dtype());
  Tensor oth = from_vector(other, {n, 1, c}, x.device()).to(x.dtype());
  // hinge[n][j][i] = max(0, 1 - x[n][j] + x[n][i]), kept for listed j and unlisted i.
  Tensor hinge = clamp_min(add(sub(x.reshape({n, 1, c}), x.reshape({n, c, 1})), 1.0), 0.0);
  Tensor per_sample = div(sum(mul(mul(hinge, cnt), oth), {1, 2}), double(c));
  if (input.dim() <= 1) per_sample = per_sample.reshape({});
  return detail::reduce_loss(per_sample, o.reduction());
}

Tensor triplet_margin_with_distance_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                                         const TripletMarginWithDistanceLossOptions& o) {
  const char* op = "triplet_margin_with_distance_loss";
  VNN_CHECK(ValueError, anchor.defined() && positive.defined() && negative.defined(), op,
            ": anchor, positive and negative must be defined");
  VNN_CHECK(ValueError, o.margin() > 0, op, ": margin must be greater than 0, got ", o.margin());
  VNN_CHECK(ShapeError, anchor.dim() == positive.dim() && anchor.dim() == negative.dim(), op,
            ": anchor ", anchor.sizes(), ", positive ", positive.sizes(), " and negative ", negative.sizes(),
            " must have the same number of dims");
  auto dist = [&](const Tensor& a, const Tensor& b) {
    return o.distance_function() ? o.distance_function()(a, b) : functional::pairwise_distance(a, b);
  };
  Tensor d_pos = dist(anchor, positive), d_neg = dist(anchor, negative);
  if (o.swap()) d_neg = minimum(d_neg, dist(positive, negative));
  return detail::reduce_loss(clamp_min(add(sub(d_pos, d_neg), o.margin()), 0.0), o.reduction());
}

}  // namespace vnn::nn
