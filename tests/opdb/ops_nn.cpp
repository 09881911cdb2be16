// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// op_db mappings of torch.nn.functional: activations, losses and the
// layers' functional forms, through vnn::nn::functional with its options.
#include "opdb.hpp"

namespace vnn::opdb {
namespace {

namespace F = vnn::nn::functional;
using vnn::nn::Reduction;

Reduction reduction_arg(Call& c, size_t i = SIZE_MAX) {
  return nn::reduction_from_string(c.str(i, "reduction", "mean"));
}

// `inplace=` changes where the result is written, not its value.
void read_inplace(Call& c) { c.kw("inplace"); }

// ---- activations -------------------------------------------------------------
OPDB("nn.functional.elu") {
  read_inplace(c);
  return F::elu(c.in(), nn::ELUOptions().alpha(c.number(0, "alpha", 1.0)));
};
OPDB("nn.functional.celu") {
  read_inplace(c);
  return F::celu(c.in(), nn::CELUOptions().alpha(c.number(0, "alpha", 1.0)));
};
OPDB("nn.functional.selu") {
  read_inplace(c);
  return F::selu(c.in());
};
OPDB("nn.functional.glu") { return F::glu(c.in(), nn::GLUOptions(c.integer(0, "dim", -1))); };
OPDB("nn.functional.gelu") {
  const std::string approx = c.str(SIZE_MAX, "approximate", "none");
  return F::gelu(c.in(), nn::GELUOptions().approximate(approx));
};
OPDB("nn.functional.hardshrink") { return F::hardshrink(c.in(), nn::HardshrinkOptions(c.number(0, "lambd", 0.5))); };
OPDB("nn.functional.softshrink") { return F::softshrink(c.in(), nn::SoftshrinkOptions(c.number(0, "lambd", 0.5))); };
OPDB("nn.functional.hardsigmoid") {
  read_inplace(c);
  return F::hardsigmoid(c.in());
};
OPDB("nn.functional.hardswish") {
  read_inplace(c);
  return F::hardswish(c.in());
};
OPDB("nn.functional.hardtanh") {
  read_inplace(c);
  return F::hardtanh(c.in(),
                     nn::HardtanhOptions().min_val(c.number(0, "min_val", -1.0)).max_val(c.number(1, "max_val", 1.0)));
};
OPDB("nn.functional.relu6") {
  read_inplace(c);
  return F::relu6(c.in());
};
OPDB("nn.functional.leaky_relu") {
  read_inplace(c);
  return F::leaky_relu(c.in(), nn::LeakyReLUOptions().negative_slope(c.number(0, "negative_slope", 0.01)));
};
OPDB("nn.functional.logsigmoid") { return F::logsigmoid(c.in()); };
OPDB("nn.functional.mish") {
  read_inplace(c);
  return F::mish(c.in());
};
OPDB("nn.functional.silu") {
  read_inplace(c);
  return F::silu(c.in());
};
OPDB("nn.functional.softsign") { return F::softsign(c.in()); };
OPDB("nn.functional.tanhshrink") { return F::tanhshrink(c.in()); };
OPDB("nn.functional.softplus") {
  return F::softplus(c.in(),
                     nn::SoftplusOptions().beta(c.number(0, "beta", 1.0)).threshold(c.number(1, "threshold", 20.0)));
};
OPDB("nn.functional.threshold") {
  read_inplace(c);
  return F::threshold(c.in(), nn::ThresholdOptions(c.number(0, "threshold"), c.number(1, "value")));
};
OPDB("nn.functional.softmin") {
  return F::softmin(c.in(), F::SoftminFuncOptions(c.integer(0, "dim")));
};
OPDB("nn.functional.softmin.with_dtype") {
  const int64_t dim = c.integer(0, "dim");
  return F::softmin(c.in(), F::SoftminFuncOptions(dim).dtype(c.dtype(SIZE_MAX, "dtype")));
};
OPDB("nn.functional.prelu") { return F::prelu(c.in(), c.tensor(0, "weight")); };

// ---- losses ------------------------------------------------------------------
OPDB("nn.functional.l1_loss") { return F::l1_loss(c.in(), c.tensor(0, "target"), reduction_arg(c)); };
OPDB("nn.functional.mse_loss") { return F::mse_loss(c.in(), c.tensor(0, "target"), reduction_arg(c)); };
OPDB("nn.functional.smooth_l1_loss") {
  const Tensor& t = c.tensor(0, "target");
  return F::smooth_l1_loss(c.in(), t,
                           nn::SmoothL1LossOptions().reduction(reduction_arg(c)).beta(c.number(SIZE_MAX, "beta", 1.0)));
};
OPDB("nn.functional.soft_margin_loss") {
  return F::soft_margin_loss(c.in(), c.tensor(0, "target"), reduction_arg(c));
};
OPDB("nn.functional.huber_loss") {
  const Tensor& t = c.tensor(0, "target");
  return F::huber_loss(c.in(), t, nn::HuberLossOptions().reduction(reduction_arg(c)).delta(c.number(SIZE_MAX, "delta", 1.0)));
};
OPDB("nn.functional.kl_div") {
  const Tensor& t = c.tensor(0, "target");
  const std::string r = c.str(SIZE_MAX, "reduction", "mean");
  nn::KLDivLossOptions o;
  if (r == "batchmean") o.reduction(nn::BatchMeanReduction{});
  else o.reduction(nn::reduction_from_string(r));
  return F::kl_div(c.in(), t, o.log_target(c.boolean(SIZE_MAX, "log_target", false)));
};
OPDB("nn.functional.margin_ranking_loss") {
  const Tensor& b = c.tensor(0, "input2");
  const Tensor& t = c.tensor(1, "target");
  return F::margin_ranking_loss(
      c.in(), b, t, nn::MarginRankingLossOptions().margin(c.number(SIZE_MAX, "margin", 0.0)).reduction(reduction_arg(c)));
};
OPDB("nn.functional.hinge_embedding_loss") {
  const Tensor& t = c.tensor(0, "target");
  return F::hinge_embedding_loss(
      c.in(), t, nn::HingeEmbeddingLossOptions().margin(c.number(SIZE_MAX, "margin", 1.0)).reduction(reduction_arg(c)));
};
OPDB("nn.functional.cosine_embedding_loss") {
  const Tensor& b = c.tensor(0, "input2");
  const Tensor& t = c.tensor(1, "target");
  return F::cosine_embedding_loss(
      c.in(), b, t,
      nn::CosineEmbeddingLossOptions().margin(c.number(SIZE_MAX, "margin", 0.0)).reduction(reduction_arg(c)));
};
OPDB("nn.functional.poisson_nll_loss") {
  const Tensor& t = c.tensor(0, "target");
  return F::poisson_nll_loss(c.in(), t,
                             nn::PoissonNLLLossOptions()
                                 .log_input(c.boolean(SIZE_MAX, "log_input", true))
                                 .full(c.boolean(SIZE_MAX, "full", false))
                                 .eps(c.number(SIZE_MAX, "eps", 1e-8))
                                 .reduction(reduction_arg(c)));
};
OPDB("nn.functional.gaussian_nll_loss") {
  const Tensor& t = c.tensor(0, "target");
  const Tensor& var = c.tensor(1, "var");
  return F::gaussian_nll_loss(c.in(), t, var,
                              nn::GaussianNLLLossOptions()
                                  .full(c.boolean(SIZE_MAX, "full", false))
                                  .eps(c.number(SIZE_MAX, "eps", 1e-6))
                                  .reduction(reduction_arg(c)));
};
OPDB("nn.functional.multilabel_soft_margin_loss") {
  const Tensor& t = c.tensor(0, "target");
  nn::MultiLabelSoftMarginLossOptions o;
  if (const Arg* w = c.kw("weight")) o.weight(w->tensor());
  return F::multilabel_soft_margin_loss(c.in(), t, o.reduction(reduction_arg(c)));
};
OPDB("nn.functional.triplet_margin_loss") {
  const Tensor& pos = c.tensor(0, "positive");
  const Tensor& neg = c.tensor(1, "negative");
  return F::triplet_margin_loss(c.in(), pos, neg,
                                nn::TripletMarginLossOptions()
                                    .margin(c.number(SIZE_MAX, "margin", 1.0))
                                    .p(c.number(SIZE_MAX, "p", 2.0))
                                    .eps(c.number(SIZE_MAX, "eps", 1e-6))
                                    .swap(c.boolean(SIZE_MAX, "swap", false))
                                    .reduction(reduction_arg(c)));
};
OPDB("nn.functional.binary_cross_entropy") {
  const Tensor& t = c.tensor(0, "target");
  const Arg* w = c.get(1, "weight");
  return F::binary_cross_entropy(c.in(), t,
                                 nn::BCELossOptions().weight(w ? w->tensor() : Tensor()).reduction(reduction_arg(c)));
};
OPDB("nn.functional.binary_cross_entropy_with_logits") {
  const Tensor& t = c.tensor(0, "target");
  const Arg* w = c.get(1, "weight");
  if (c.kw("pos_weight")) gap("binary_cross_entropy_with_logits(pos_weight=)");
  return F::binary_cross_entropy_with_logits(
      c.in(), t, nn::BCEWithLogitsLossOptions().weight(w ? w->tensor() : Tensor()).reduction(reduction_arg(c)));
};

// ---- layers' functional forms --------------------------------------------------
OPDB("nn.functional.linear") {
  const Tensor& w = c.tensor(0, "weight");
  const Arg* b = c.get(1, "bias");
  return F::linear(c.in(), w, b ? b->tensor() : Tensor());
};
OPDB("nn.functional.normalize") {
  return F::normalize(c.in(), F::NormalizeFuncOptions().p(c.number(0, "p", 2.0)).dim(c.integer(1, "dim", 1)).eps(
                                  c.number(2, "eps", 1e-12)));
};
OPDB("nn.functional.pixel_shuffle") { return F::pixel_shuffle(c.in(), nn::PixelShuffleOptions(c.integer(0, "upscale_factor"))); };
OPDB("nn.functional.pixel_unshuffle") {
  return F::pixel_unshuffle(c.in(), nn::PixelUnshuffleOptions(c.integer(0, "downscale_factor")));
};
OPDB("nn.functional.layer_norm") {
  F::LayerNormFuncOptions o(Shape(c.ints(0, "normalized_shape", {})));
  if (const Arg* w = c.get(1, "weight")) o.weight(w->tensor());
  if (const Arg* b = c.get(2, "bias")) o.bias(b->tensor());
  return F::layer_norm(c.in(), o.eps(c.number(3, "eps", 1e-5)));
};
OPDB("nn.functional.rms_norm") {
  F::RMSNormFuncOptions o(Shape(c.ints(0, "normalized_shape", {})));
  if (const Arg* w = c.get(1, "weight")) o.weight(w->tensor());
  if (const Arg* e = c.get(2, "eps")) o.eps(e->number());
  return F::rms_norm(c.in(), o);
};
#define VNN_OPDB_DROPOUT(KEY)                                                     \
  OPDB(KEY) {                                                                     \
    read_inplace(c);                                                              \
    return F::dropout(c.in(), F::DropoutFuncOptions().p(c.number(0, "p", 0.5)).training( \
                                  c.boolean(1, "training", true)));               \
  };
VNN_OPDB_DROPOUT("nn.functional.dropout")

}  // namespace
}  // namespace vnn::opdb
