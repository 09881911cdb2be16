// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// module_db mappings of the losses. Positions follow torch.nn's
// constructors (the deprecated size_average / reduce included, as gaps).
#include "moddb.hpp"

namespace vnn::moddb {
namespace {

// reduction= at `pos`, after PyTorch's deprecated size_average and reduce
// at `legacy` and `legacy + 1`.
nn::Reduction reduction_after(Call& c, size_t legacy, size_t pos) {
  if (c.has(legacy, "size_average") || c.has(legacy + 1, "reduce"))
    gap("the deprecated size_average / reduce arguments");
  return reduction(c, pos);
}
// An optional tensor argument (weight=None: undefined).
Tensor maybe_tensor(Call& c, size_t i, const char* name) { return c.has(i, name) ? c.tensor(i, name) : Tensor(); }

template <class Holder>
Built loss3(Holder m) {
  auto p = m.ptr();
  return {p, [p](Call& f) -> Arg {
            return p->forward(f.tensor(0, "input1"), f.tensor(1, "input2"), f.tensor(2, "target"));
          }};
}

MODDB("nn.L1Loss") { return binary(nn::L1Loss(nn::L1LossOptions(reduction_after(c, 0, 2)))); };
MODDB("nn.MSELoss") { return binary(nn::MSELoss(nn::MSELossOptions(reduction_after(c, 0, 2)))); };
MODDB("nn.SoftMarginLoss") { return binary(nn::SoftMarginLoss(nn::SoftMarginLossOptions(reduction_after(c, 0, 2)))); };
MODDB("nn.SmoothL1Loss") {
  nn::SmoothL1LossOptions o;
  o.reduction(reduction_after(c, 0, 2)).beta(c.number(3, "beta", 1.0));
  return binary(nn::SmoothL1Loss(o));
};
MODDB("nn.HuberLoss") {
  nn::HuberLossOptions o;
  return binary(nn::HuberLoss(o.reduction(reduction(c, 0)).delta(c.number(1, "delta", 1.0))));
};
MODDB("nn.BCELoss") {
  nn::BCELossOptions o;
  o.weight(maybe_tensor(c, 0, "weight")).reduction(reduction_after(c, 1, 3));
  return binary(nn::BCELoss(o));
};
MODDB("nn.BCEWithLogitsLoss") {
  nn::BCEWithLogitsLossOptions o;
  o.weight(maybe_tensor(c, 0, "weight")).reduction(reduction_after(c, 1, 3));
  return binary(nn::BCEWithLogitsLoss(o.pos_weight(maybe_tensor(c, 4, "pos_weight"))));
};
MODDB("nn.CrossEntropyLoss") {
  nn::CrossEntropyLossOptions o;
  o.weight(maybe_tensor(c, 0, "weight")).ignore_index(c.integer(2, "ignore_index", -100));
  o.reduction(reduction_after(c, 1, 4)).label_smoothing(c.number(5, "label_smoothing", 0.0));
  auto p = nn::CrossEntropyLoss(o).ptr();
  return {p, [p](Call& f) -> Arg {
            const Tensor& target = f.tensor(1, "target");
            if (is_floating(target.dtype())) gap("CrossEntropyLoss with class-probability targets");
            return p->forward(f.tensor(0, "input"), target);
          }};
};
MODDB("nn.NLLLoss") {
  nn::NLLLossOptions o;
  o.weight(maybe_tensor(c, 0, "weight")).ignore_index(c.integer(2, "ignore_index", -100));
  return binary(nn::NLLLoss(o.reduction(reduction_after(c, 1, 4))));
};
MODDB("nn.KLDivLoss") {
  if (c.has(0, "size_average") || c.has(1, "reduce")) gap("the deprecated size_average / reduce arguments");
  nn::KLDivLossOptions o;
  const std::string r = c.str(2, "reduction", "mean");
  if (r == "batchmean")
    o.reduction(vnn::kBatchMean);
  else
    o.reduction(nn::reduction_from_string(r));
  return binary(nn::KLDivLoss(o.log_target(c.boolean(3, "log_target", false))));
};
MODDB("nn.MarginRankingLoss") {
  nn::MarginRankingLossOptions o;
  return loss3(nn::MarginRankingLoss(o.margin(c.number(0, "margin", 0.0)).reduction(reduction_after(c, 1, 3))));
};
MODDB("nn.CosineEmbeddingLoss") {
  nn::CosineEmbeddingLossOptions o;
  return loss3(nn::CosineEmbeddingLoss(o.margin(c.number(0, "margin", 0.0)).reduction(reduction_after(c, 1, 3))));
};
MODDB("nn.HingeEmbeddingLoss") {
  nn::HingeEmbeddingLossOptions o;
  return binary(nn::HingeEmbeddingLoss(o.margin(c.number(0, "margin", 1.0)).reduction(reduction_after(c, 1, 3))));
};
MODDB("nn.MultiLabelSoftMarginLoss") {
  nn::MultiLabelSoftMarginLossOptions o;
  o.weight(maybe_tensor(c, 0, "weight")).reduction(reduction_after(c, 1, 3));
  return binary(nn::MultiLabelSoftMarginLoss(o));
};
MODDB("nn.PoissonNLLLoss") {
  nn::PoissonNLLLossOptions o;
  o.log_input(c.boolean(0, "log_input", true)).full(c.boolean(1, "full", false)).eps(c.number(3, "eps", 1e-8));
  if (c.has(2, "size_average") || c.has(4, "reduce")) gap("the deprecated size_average / reduce arguments");
  return binary(nn::PoissonNLLLoss(o.reduction(reduction(c, 5))), "log_input", "target");
};
MODDB("nn.GaussianNLLLoss") {
  nn::GaussianNLLLossOptions o;
  o.full(c.boolean(SIZE_MAX, "full", false)).eps(c.number(SIZE_MAX, "eps", 1e-6)).reduction(reduction(c));
  auto p = nn::GaussianNLLLoss(o).ptr();
  return {p,
          [p](Call& f) -> Arg { return p->forward(f.tensor(0, "input"), f.tensor(1, "target"), f.tensor(2, "var")); }};
};

MODDB("nn.MultiMarginLoss") {
  nn::MultiMarginLossOptions o;
  o.p(c.integer(0, "p", 1)).margin(c.number(1, "margin", 1.0)).weight(maybe_tensor(c, 2, "weight"));
  return binary(nn::MultiMarginLoss(o.reduction(reduction_after(c, 3, 5))));
};
MODDB("nn.MultiLabelMarginLoss") {
  return binary(nn::MultiLabelMarginLoss(nn::MultiLabelMarginLossOptions(reduction_after(c, 0, 2))));
};
MODDB("nn.CTCLoss") {
  nn::CTCLossOptions o;
  o.blank(c.integer(0, "blank", 0)).reduction(reduction(c, 1)).zero_infinity(c.boolean(2, "zero_infinity", false));
  auto p = nn::CTCLoss(o).ptr();
  return {p, [p](Call& f) -> Arg {
            return nn::ctc_loss(f.tensor(0, "log_probs"), f.tensor(1, "targets"), f.ints(2, "input_lengths", {}),
                                f.ints(3, "target_lengths", {}), p->options);
          }};
};

}  // namespace
}  // namespace vnn::moddb
