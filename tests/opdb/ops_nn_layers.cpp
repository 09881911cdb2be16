// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// op_db mappings of torch.nn.functional's layer forms: convolution,
// pooling, padding, resampling, normalization, embedding, attention and the
// classification losses.
#include "opdb.hpp"

namespace vnn::opdb {
namespace {

namespace F = vnn::nn::functional;

// A 2-D size: an int (both) or a list of one or two ints.
Size2 size2(const Arg* a, int64_t dflt) {
  if (!a) return Size2(dflt);
  auto v = a->ints();
  if (v.size() == 1) return Size2(v[0]);
  if (v.size() != 2) throw std::invalid_argument("op_db: a 2-D size with " + std::to_string(v.size()) + " values");
  return Size2(v[0], v[1]);
}
// A 1-D size: an int or a one-element list.
int64_t size1(const Arg* a, int64_t dflt) {
  if (!a) return dflt;
  auto v = a->ints();
  if (v.size() != 1) throw std::invalid_argument("op_db: a 1-D size with " + std::to_string(v.size()) + " values");
  return v[0];
}
// padding="same" / "valid" or a number.
bool string_padding(const Arg* a) { return a && a->kind == Arg::Kind::string; }

// ---- convolution -----------------------------------------------------------------
OPDB("nn.functional.conv2d") {
  const Tensor& w = c.tensor(0, "weight");
  const Arg* b = c.get(1, "bias");
  const Arg* pad = c.get(3, "padding");
  if (string_padding(pad)) gap("conv2d(padding=\"" + pad->s + "\")");
  F::Conv2dFuncOptions o;
  o.stride(size2(c.get(2, "stride"), 1)).padding(size2(pad, 0)).dilation(size2(c.get(4, "dilation"), 1));
  o.groups(c.integer(5, "groups", 1));
  if (b) o.bias(b->tensor());
  return F::conv2d(c.in(), w, o);
};
OPDB("nn.functional.conv1d") {
  const Tensor& w = c.tensor(0, "weight");
  const Arg* b = c.get(1, "bias");
  const Arg* pad = c.get(3, "padding");
  F::Conv1dFuncOptions o;
  if (string_padding(pad)) o.padding(pad->s == "same" ? nn::Conv1dPadding(vnn::kSame) : nn::Conv1dPadding(vnn::kValid));
  else o.padding(size1(pad, 0));
  o.stride(size1(c.get(2, "stride"), 1)).dilation(size1(c.get(4, "dilation"), 1)).groups(c.integer(5, "groups", 1));
  if (b) o.bias(b->tensor());
  return F::conv1d(c.in(), w, o);
};

// ---- pooling ------------------------------------------------------------------------
OPDB("nn.functional.max_pool2d") {
  if (c.boolean(SIZE_MAX, "ceil_mode", false)) gap("max_pool2d(ceil_mode=True)");
  if (c.boolean(SIZE_MAX, "return_indices", false)) gap("max_pool2d(return_indices=True)");
  const Size2 k = size2(c.get(0, "kernel_size"), 0);
  const Arg* s = c.get(1, "stride");
  nn::MaxPool2dOptions o(k);
  o.stride(s && !(s->kind == Arg::Kind::list && s->items.empty()) ? size2(s, 0) : k);
  o.padding(size2(c.get(2, "padding"), 0)).dilation(size2(c.get(3, "dilation"), 1));
  return F::max_pool2d(c.in(), o);
};
OPDB("nn.functional.max_pool1d") {
  if (c.boolean(SIZE_MAX, "ceil_mode", false)) gap("max_pool1d(ceil_mode=True)");
  if (c.boolean(SIZE_MAX, "return_indices", false)) gap("max_pool1d(return_indices=True)");
  const int64_t k = size1(c.get(0, "kernel_size"), 0);
  const Arg* s = c.get(1, "stride");
  nn::MaxPool1dOptions o(k);
  o.stride(s && !(s->kind == Arg::Kind::list && s->items.empty()) ? size1(s, 0) : k);
  o.padding(size1(c.get(2, "padding"), 0)).dilation(size1(c.get(3, "dilation"), 1));
  return F::max_pool1d(c.in(), o);
};
OPDB("nn.functional.avg_pool2d") {
  const Size2 k = size2(c.get(0, "kernel_size"), 0);
  const Arg* s = c.get(1, "stride");
  nn::AvgPool2dOptions o(k);
  o.stride(s && !(s->kind == Arg::Kind::list && s->items.empty()) ? size2(s, 0) : k);
  o.padding(size2(c.get(2, "padding"), 0));
  if (c.boolean(3, "ceil_mode", false)) gap("avg_pool2d(ceil_mode=True)");
  o.count_include_pad(c.boolean(4, "count_include_pad", true));
  if (c.get(5, "divisor_override")) gap("avg_pool2d(divisor_override=)");
  return F::avg_pool2d(c.in(), o);
};
OPDB("nn.functional.avg_pool1d") {
  const int64_t k = size1(c.get(0, "kernel_size"), 0);
  const Arg* s = c.get(1, "stride");
  nn::AvgPool1dOptions o(k);
  o.stride(s && !(s->kind == Arg::Kind::list && s->items.empty()) ? size1(s, 0) : k);
  o.padding(size1(c.get(2, "padding"), 0));
  if (c.boolean(3, "ceil_mode", false)) gap("avg_pool1d(ceil_mode=True)");
  o.count_include_pad(c.boolean(4, "count_include_pad", true));
  return F::avg_pool1d(c.in(), o);
};
OPDB("nn.functional.adaptive_avg_pool1d") {
  return F::adaptive_avg_pool1d(c.in(), nn::AdaptiveAvgPool1dOptions(size1(c.get(0, "output_size"), 0)));
};

OPDB("nn.functional.adaptive_max_pool1d") {
  const int64_t out = size1(c.get(0, "output_size"), 0);
  if (c.boolean(1, "return_indices", false))
    return F::adaptive_max_pool1d_with_indices(c.in(), nn::AdaptiveMaxPool1dOptions(out));
  return F::adaptive_max_pool1d(c.in(), nn::AdaptiveMaxPool1dOptions(out));
};

// ---- padding and resampling ---------------------------------------------------------
vnn::PadMode pad_mode(const std::string& m) {
  if (m == "constant") return vnn::kConstant;
  if (m == "reflect") return vnn::kReflect;
  if (m == "replicate") return vnn::kReplicate;
  if (m == "circular") return vnn::kCircular;
  gap("pad mode " + m);
}
#define VNN_OPDB_PAD(KEY)                                                                              \
  OPDB(KEY) {                                                                                          \
    F::PadFuncOptions o(c.ints(0, "pad", {}));                                                         \
    o.mode(pad_mode(c.str(1, "mode", "constant")));                                                    \
    if (const Arg* v = c.get(2, "value")) o.value(v->number());                                        \
    return F::pad(c.in(), o);                                                                          \
  };
VNN_OPDB_PAD("nn.functional.pad.constant")
VNN_OPDB_PAD("nn.functional.pad.reflect")
VNN_OPDB_PAD("nn.functional.pad.replicate")
VNN_OPDB_PAD("nn.functional.pad.replicate_negative")
VNN_OPDB_PAD("nn.functional.pad.circular")

Arg interpolate(Call& c, vnn::InterpolateMode mode) {
  F::InterpolateFuncOptions o;
  o.mode(mode);
  if (const Arg* s = c.get(0, "size")) o.size(s->ints());
  if (const Arg* f = c.get(1, "scale_factor")) {
    std::vector<double> v;
    if (f->kind == Arg::Kind::list) {
      for (const auto& x : f->items) v.push_back(x.number());
    } else {
      v.push_back(f->number());
    }
    o.scale_factor(v);
  }
  c.get(2, "mode");  // fixed by the entry
  if (const Arg* a = c.get(3, "align_corners")) o.align_corners(a->boolean());
  if (c.boolean(4, "recompute_scale_factor", false)) gap("interpolate(recompute_scale_factor=True)");
  if (c.boolean(5, "antialias", false)) gap("interpolate(antialias=True)");
  return F::interpolate(c.in(), o);
}
OPDB("nn.functional.interpolate.nearest") { return interpolate(c, vnn::kNearest); };
OPDB("nn.functional.interpolate.nearest-exact") { return interpolate(c, vnn::kNearestExact); };
OPDB("nn.functional.interpolate.linear") { return interpolate(c, vnn::kLinear); };
OPDB("nn.functional.interpolate.bilinear") { return interpolate(c, vnn::kBilinear); };
OPDB("nn.functional.interpolate.trilinear") { return interpolate(c, vnn::kTrilinear); };
OPDB("nn.functional.interpolate.area") { return interpolate(c, vnn::kArea); };
// The deprecated upsample_* forms: interpolate with their fixed mode
// (bilinear with align_corners=True, as PyTorch's upsample_bilinear).
OPDB("nn.functional.upsample_nearest") {
  F::InterpolateFuncOptions o;
  o.mode(vnn::kNearest);
  if (const Arg* s = c.get(0, "size")) o.size(s->ints());
  if (const Arg* f = c.get(1, "scale_factor")) o.scale_factor({f->number()});
  return F::interpolate(c.in(), o);
};
OPDB("nn.functional.upsample_bilinear") {
  F::InterpolateFuncOptions o;
  o.mode(vnn::kBilinear).align_corners(true);
  if (const Arg* s = c.get(0, "size")) o.size(s->ints());
  if (const Arg* f = c.get(1, "scale_factor")) o.scale_factor({f->number(), f->number()});
  return F::interpolate(c.in(), o);
};

// grid_sample: the functional form (mode / padding_mode strings) and the
// aten grid_sampler_2d / 3d (PyTorch's integer codes, which vnn's enums
// follow: bilinear 0, nearest 1, bicubic 2; zeros 0, border 1, reflection 2).
F::GridSampleFuncOptions grid_sample_options(int64_t mode, int64_t padding, bool align) {
  if (mode < 0 || mode > 2 || padding < 0 || padding > 2)
    throw std::invalid_argument("op_db: grid_sampler codes " + std::to_string(mode) + ", " + std::to_string(padding));
  return F::GridSampleFuncOptions()
      .mode(vnn::GridSampleMode(mode))
      .padding_mode(vnn::GridSamplePadding(padding))
      .align_corners(align);
}
int64_t code_of(const std::string& s, std::initializer_list<const char*> names) {
  int64_t i = 0;
  for (const char* n : names) {
    if (s == n) return i;
    ++i;
  }
  throw std::invalid_argument("op_db: unknown grid_sample string " + s);
}
OPDB("nn.functional.grid_sample") {
  const Tensor& grid = c.tensor(0, "grid");
  const int64_t mode = code_of(c.str(1, "mode", "bilinear"), {"bilinear", "nearest", "bicubic"});
  const int64_t pad = code_of(c.str(2, "padding_mode", "zeros"), {"zeros", "border", "reflection"});
  return F::grid_sample(c.in(), grid, grid_sample_options(mode, pad, c.boolean(3, "align_corners", false)));
};
#define VNN_OPDB_GRID_SAMPLER(entry, dims)                                                                  \
  OPDB(entry) {                                                                                             \
    if (c.in().dim() != (dims) + 2) throw std::invalid_argument("op_db: " entry " takes a " #dims "-D grid"); \
    const Tensor& grid = c.tensor(0, "grid");                                                               \
    const int64_t mode = c.integer(1, "interpolation_mode"), pad = c.integer(2, "padding_mode");            \
    return F::grid_sample(c.in(), grid, grid_sample_options(mode, pad, c.boolean(3, "align_corners", false))); \
  };
VNN_OPDB_GRID_SAMPLER("grid_sampler_2d", 2)
VNN_OPDB_GRID_SAMPLER("grid_sampler_3d", 3)

// ---- normalization, embedding, attention ---------------------------------------------
OPDB("nn.functional.group_norm") {
  F::GroupNormFuncOptions o(c.integer(0, "num_groups"));
  if (const Arg* w = c.get(1, "weight")) o.weight(w->tensor());
  if (const Arg* b = c.get(2, "bias")) o.bias(b->tensor());
  return F::group_norm(c.in(), o.eps(c.number(3, "eps", 1e-5)));
};
OPDB("nn.functional.batch_norm") {
  const Arg* rm = c.get(0, "running_mean");
  const Arg* rv = c.get(1, "running_var");
  F::BatchNormFuncOptions o;
  if (const Arg* w = c.get(2, "weight")) o.weight(w->tensor());
  if (const Arg* b = c.get(3, "bias")) o.bias(b->tensor());
  o.training(c.boolean(4, "training", false)).momentum(c.number(5, "momentum", 0.1)).eps(c.number(6, "eps", 1e-5));
  // PyTorch updates the running statistics in place: copies keep the samples intact.
  return F::batch_norm(c.in(), rm ? rm->tensor().clone() : Tensor(), rv ? rv->tensor().clone() : Tensor(), o);
};
OPDB("nn.functional.embedding") {
  // op_db's sample: the weight as the input, the indices as args[0]
  // (its op is lambda weight, idx: F.embedding(idx, weight)).
  const Tensor& w = c.in();
  const Tensor& idx = c.tensor(0, "input");
  F::EmbeddingFuncOptions o;
  if (const Arg* p = c.get(1, "padding_idx")) o.padding_idx(p->integer());
  if (c.get(2, "max_norm")) gap("embedding(max_norm=)");
  if (c.boolean(4, "scale_grad_by_freq", false)) gap("embedding(scale_grad_by_freq=True)");
  if (c.boolean(5, "sparse", false)) gap("embedding(sparse=True)");
  return F::embedding(idx, w, o);
};
OPDB("nn.functional.scaled_dot_product_attention") {
  const Tensor& k = c.tensor(0, "key");
  const Tensor& v = c.tensor(1, "value");
  const Arg* mask = c.get(2, "attn_mask");
  const double p = c.number(3, "dropout_p", 0.0);
  if (p != 0.0) gap("scaled_dot_product_attention with dropout (random)");
  const bool causal = c.boolean(4, "is_causal", false);
  std::optional<double> scale;
  if (const Arg* s = c.get(5, "scale")) scale = s->number();
  const bool gqa = c.boolean(6, "enable_gqa", false);
  return F::scaled_dot_product_attention(c.in(), k, v, mask ? mask->tensor() : Tensor(), 0.0, causal, scale, gqa);
};

// ---- classification losses ---------------------------------------------------------
OPDB("nn.functional.cross_entropy") {
  const Tensor& t = c.tensor(0, "target");
  nn::CrossEntropyLossOptions o;
  if (const Arg* w = c.get(1, "weight")) o.weight(w->tensor());
  o.ignore_index(c.integer(3, "ignore_index", -100));
  o.reduction(nn::reduction_from_string(c.str(5, "reduction", "mean")));
  o.label_smoothing(c.number(6, "label_smoothing", 0.0));
  return F::cross_entropy(c.in(), t, o);
};
OPDB("nn.functional.nll_loss") {
  const Tensor& t = c.tensor(0, "target");
  nn::NLLLossOptions o;
  if (const Arg* w = c.get(1, "weight")) o.weight(w->tensor());
  o.ignore_index(c.integer(3, "ignore_index", -100));
  o.reduction(nn::reduction_from_string(c.str(5, "reduction", "mean")));
  return F::nll_loss(c.in(), t, o);
};

}  // namespace
}  // namespace vnn::opdb
