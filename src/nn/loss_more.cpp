// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The losses of include/vnn/nn/loss_more.h, written as PyTorch's
// (aten/src/ATen/native/Loss.cpp and torch/nn/functional.py) from
// differentiable ops: each runs on every device and backpropagates.
#include "vnn/nn/loss_more.h"

#include <cmath>
#include <vector>

#include "vnn/detail/message.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/indexing.h"
#include "vnn/reduction.h"

namespace vnn::nn {

namespace {

using detail::reduce_loss;

void lm_defined(const char* op, const Tensor& t, const char* arg) {
  VNN_CHECK(ValueError, t.defined(), op, ": argument '", arg, "' is an undefined tensor");
}

void lm_same_shape(const char* op, const Tensor& a, const char* an, const Tensor& b, const char* bn) {
  lm_defined(op, a, an);
  lm_defined(op, b, bn);
  VNN_CHECK(ShapeError, a.sizes() == b.sizes(), op, ": ", an, " shape ", a.sizes(), " and ", bn, " shape ", b.sizes(),
            " must match");
}

void lm_floating(const char* op, const Tensor& t) {
  VNN_CHECK(DTypeError, is_floating(t.dtype()), op, ": input must be floating, got ", t.dtype(),
            "; convert it with .to(vnn::kFloat)");
}

// log(1 + exp(z)) without overflow.
Tensor lm_softplus(const Tensor& z) { return add(vnn::relu(z), log1p(exp(neg(abs(z))))); }

}  // namespace

Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossOptions& o) {
  lm_same_shape("huber_loss", input, "input", target, "target");
  lm_floating("huber_loss", input);
  const double delta = o.delta();
  VNN_CHECK(ValueError, delta > 0, "huber_loss: delta must be positive, got ", delta);
  Tensor d = abs(sub(input, target));
  Tensor quadratic = mul(mul(d, d), 0.5);
  Tensor linear = mul(sub(d, 0.5 * delta), delta);
  return reduce_loss(where(lt(d, delta), quadratic, linear), o.reduction());
}

Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivLossOptions& o) {
  lm_defined("kl_div", input, "input");
  lm_defined("kl_div", target, "target");
  lm_floating("kl_div", input);
  Shape s = broadcast_shapes(input.sizes(), target.sizes(), "kl_div");
  VNN_CHECK(ShapeError, s == input.sizes(), "kl_div: target shape ", target.sizes(),
            " must broadcast to input shape ", input.sizes());
  Tensor t = target.to(input.dtype());
  Tensor loss;
  if (o.log_target()) {
    loss = mul(exp(t), sub(t, input));
  } else {
    // xlogy(t, t) - t * input: 0 where t == 0 (log evaluated on a safe value
    // there), NaN where t < 0, as PyTorch's.
    Tensor nonzero = ne(t, 0.0);
    Tensor safe = where(nonzero, t, 1.0);
    loss = sub(where(nonzero, mul(t, log(safe)), 0.0), mul(t, input));
  }
  const KLDivReduction& r = o.reduction();
  if (r.batchmean) {
    const int64_t batch = input.dim() > 0 ? input.size(0) : 1;
    return batch > 0 ? div(sum(loss), double(batch)) : sum(loss);
  }
  return reduce_loss(loss, r.reduction);
}

Tensor soft_margin_loss(const Tensor& input, const Tensor& target, Reduction r) {
  lm_same_shape("soft_margin_loss", input, "input", target, "target");
  lm_floating("soft_margin_loss", input);
  return reduce_loss(lm_softplus(neg(mul(input, target.to(input.dtype())))), r);
}

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           const MarginRankingLossOptions& o) {
  lm_same_shape("margin_ranking_loss", input1, "input1", input2, "input2");
  lm_same_shape("margin_ranking_loss", input1, "input1", target, "target");
  lm_floating("margin_ranking_loss", input1);
  Tensor y = target.to(input1.dtype());
  return reduce_loss(vnn::relu(add(neg(mul(y, sub(input1, input2))), o.margin())), o.reduction());
}

Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, const HingeEmbeddingLossOptions& o) {
  lm_same_shape("hinge_embedding_loss", input, "input", target, "target");
  lm_floating("hinge_embedding_loss", input);
  // As ATen: where(y != 1, clamp_min(margin - x, 0), 0) + where(y != -1, x, 0).
  Tensor margin_clamp = clamp_min(rsub(input, o.margin()), 0.0);
  Tensor out = add(where(ne(target, 1.0), margin_clamp, 0.0), where(ne(target, -1.0), input, 0.0));
  return reduce_loss(out, o.reduction());
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             const CosineEmbeddingLossOptions& o) {
  const char* op = "cosine_embedding_loss";
  lm_same_shape(op, input1, "input1", input2, "input2");
  lm_defined(op, target, "target");
  lm_floating(op, input1);
  VNN_CHECK(ShapeError, input1.dim() == 1 || input1.dim() == 2, op, ": inputs must be 1-D [D] or 2-D [N, D], got ",
            input1.sizes());
  VNN_CHECK(ShapeError, target.dim() == input1.dim() - 1 && (target.dim() == 0 || target.size(0) == input1.size(0)),
            op, ": target ", target.sizes(), " must be ", input1.dim() == 2 ? "1-D [N]" : "0-D", " for inputs ",
            input1.sizes());
  const int d = input1.dim() - 1;
  constexpr double kEps = 1e-12;  // ATen's EPSILON
  Tensor prod = sum(mul(input1, input2), d);
  Tensor m1 = add(sum(mul(input1, input1), d), kEps);
  Tensor m2 = add(sum(mul(input2, input2), d), kEps);
  Tensor cos = div(prod, sqrt(mul(m1, m2)));
  Tensor pos = rsub(cos, 1.0);
  Tensor negative = clamp_min(sub(cos, o.margin()), 0.0);
  Tensor out = add(where(eq(target, 1.0), pos, 0.0), where(eq(target, -1.0), negative, 0.0));
  return reduce_loss(out, o.reduction());
}

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, const PoissonNLLLossOptions& o) {
  lm_same_shape("poisson_nll_loss", input, "input", target, "target");
  lm_floating("poisson_nll_loss", input);
  Tensor t = target.to(input.dtype());
  Tensor loss = o.log_input() ? sub(exp(input), mul(t, input)) : sub(input, mul(t, log(add(input, o.eps()))));
  if (o.full()) {
    // Stirling: t log t - t + 0.5 log(2 pi t), where t > 1.
    Tensor big = gt(t, 1.0);
    Tensor ts = where(big, t, 2.0);
    Tensor stirling = add(sub(mul(ts, log(ts)), ts), mul(log(mul(ts, 2.0 * M_PI)), 0.5));
    loss = add(loss, where(big, stirling, 0.0));
  }
  return reduce_loss(loss, o.reduction());
}

Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var_in,
                         const GaussianNLLLossOptions& o) {
  const char* op = "gaussian_nll_loss";
  lm_defined(op, input, "input");
  lm_defined(op, target, "target");
  lm_defined(op, var_in, "var");
  lm_floating(op, input);
  Tensor var = var_in;
  if (var.sizes() != input.sizes()) {
    Shape drop_last;
    for (int i = 0; i + 1 < input.dim(); ++i) drop_last.push_back(input.size(i));
    // PyTorch's rule: var may drop input's last dim, or differ from input
    // in one dim where var has size 1 (broadcast there: [1, C] over a batch).
    int64_t mismatched = 0;
    if (var.dim() == input.dim())
      for (int i = 0; i < input.dim(); ++i)
        if (var.size(i) != input.size(i)) mismatched += var.size(i);
    if (input.dim() > 0 && var.sizes() == drop_last) {
      var = var.unsqueeze(-1);  // homoscedastic, one fewer dim
    } else {
      VNN_CHECK(ShapeError, var.dim() == input.dim() && mismatched == 1, op, ": var shape ", var_in.sizes(),
                " must equal input shape ", input.sizes(), ", have size 1 in one dim where they differ, or drop"
                " the last dim (", drop_last, ")");
    }
  }
  VNN_CHECK(ShapeError, broadcast_shapes(input.sizes(), target.sizes(), op) == input.sizes(), op,
            ": target shape ", target.sizes(), " must broadcast to input shape ", input.sizes());
  VNN_CHECK(ValueError, o.eps() >= 0, op, ": eps must be >= 0, got ", o.eps());
  VNN_CHECK(ValueError, amin(var).item() >= 0, op, ": var has negative entries; a variance must be >= 0");
  // Clamped to eps in value only: the gradient flows as if unclamped (PyTorch clamps under no_grad).
  var = add(var, sub(clamp_min(var, o.eps()), var).detach());
  Tensor d = sub(input, target.to(input.dtype()));
  Tensor loss = mul(add(log(var), div(mul(d, d), var)), 0.5);
  if (o.full()) loss = add(loss, 0.5 * std::log(2 * M_PI));
  return reduce_loss(loss, o.reduction());
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           const TripletMarginLossOptions& o) {
  const char* op = "triplet_margin_loss";
  lm_same_shape(op, anchor, "anchor", positive, "positive");
  lm_same_shape(op, anchor, "anchor", negative, "negative");
  lm_floating(op, anchor);
  VNN_CHECK(ShapeError, anchor.dim() == 1 || anchor.dim() == 2, op, ": inputs must be 1-D [D] or 2-D [N, D], got ",
            anchor.sizes());
  VNN_CHECK(ValueError, o.p() > 0, op, ": p must be positive, got ", o.p());
  const int d = anchor.dim() - 1;
  auto dist = [&](const Tensor& a, const Tensor& b) { return norm(add(sub(a, b), o.eps()), o.p(), d); };
  Tensor d_pos = dist(anchor, positive), d_neg = dist(anchor, negative);
  if (o.swap()) d_neg = minimum(d_neg, dist(positive, negative));
  return reduce_loss(clamp_min(add(sub(d_pos, d_neg), o.margin()), 0.0), o.reduction());
}

Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const MultiLabelSoftMarginLossOptions& o) {
  const char* op = "multilabel_soft_margin_loss";
  lm_same_shape(op, input, "input", target, "target");
  lm_floating(op, input);
  VNN_CHECK(ShapeError, input.dim() >= 1, op, ": input must have a class dim, got a scalar");
  Tensor y = target.to(input.dtype());
  // -(y log sigmoid(x) + (1 - y) log sigmoid(-x)) = y softplus(-x) + (1 - y) softplus(x).
  Tensor loss = add(mul(y, lm_softplus(neg(input))), mul(rsub(y, 1.0), lm_softplus(input)));
  if (o.weight().defined()) loss = mul(loss, o.weight().to(input.dtype()));
  const int c = input.dim() - 1;
  loss = div(sum(loss, c), double(input.size(c)));
  return reduce_loss(loss, o.reduction());
}

}  // namespace vnn::nn
