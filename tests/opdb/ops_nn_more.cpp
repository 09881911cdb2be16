// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// op_db mappings of torch.nn.functional's further layer forms: 3-D and
// transposed convolution, 3-D / adaptive / fractional pooling and
// unpooling, unfold, instance and local response norm, the dropout family,
// rrelu, embedding_bag, the two-input layers and the margin and CTC losses.
#include "opdb.hpp"

namespace vnn::opdb {
namespace {

namespace F = vnn::nn::functional;

// n sizes from an int (all n) or a list of n ints; `dflt` where absent.
// None items (adaptive pooling's "keep this size") take the input's size
// of that spatial dim, as PyTorch's _list_with_default does.
std::vector<int64_t> sizes(const Arg* a, size_t n, int64_t dflt, const Tensor* input = nullptr) {
  if (!a || (a->kind == Arg::Kind::list && a->items.empty())) return std::vector<int64_t>(n, dflt);
  if (a->kind != Arg::Kind::list) return std::vector<int64_t>(n, a->integer());
  if (a->items.size() == 1) return std::vector<int64_t>(n, a->items[0].integer());
  if (a->items.size() != n)
    throw std::invalid_argument("op_db: " + std::to_string(n) + " sizes expected, got " + a->describe());
  std::vector<int64_t> v;
  for (size_t i = 0; i < n; ++i) {
    const Arg& x = a->items[i];
    if (x.none() && input) v.push_back(input->size(input->dim() - int64_t(n) + int64_t(i)));
    else v.push_back(x.integer());
  }
  return v;
}
Size2 size2(const Arg* a, int64_t dflt, const Tensor* input = nullptr) {
  auto v = sizes(a, 2, dflt, input);
  return Size2(v[0], v[1]);
}
Size3 size3(const Arg* a, int64_t dflt, const Tensor* input = nullptr) {
  auto v = sizes(a, 3, dflt, input);
  return Size3(v[0], v[1], v[2]);
}
int64_t size1(const Arg* a, int64_t dflt) { return sizes(a, 1, dflt)[0]; }
// A pooling stride: None or [] means the kernel size.
template <class S>
S stride_or_kernel(const Arg* s, S kernel, S (*read)(const Arg*, int64_t, const Tensor*)) {
  if (!s || s->none() || (s->kind == Arg::Kind::list && s->items.empty())) return kernel;
  return read(s, 0, nullptr);
}
int64_t read1(const Arg* a, int64_t dflt, const Tensor*) { return size1(a, dflt); }

// ---- convolution -------------------------------------------------------------------
OPDB("nn.functional.conv3d") {
  const Tensor& w = c.tensor(0, "weight");
  const Arg* b = c.get(1, "bias");
  const Arg* pad = c.get(3, "padding");
  F::Conv3dFuncOptions o;
  if (pad && pad->kind == Arg::Kind::string) o.padding(pad->s == "same" ? nn::Conv3dPadding(vnn::kSame) : nn::Conv3dPadding(vnn::kValid));
  else o.padding(size3(pad, 0));
  o.stride(size3(c.get(2, "stride"), 1)).dilation(size3(c.get(4, "dilation"), 1)).groups(c.integer(5, "groups", 1));
  if (b) o.bias(b->tensor());
  return F::conv3d(c.in(), w, o);
};
// conv_transpose{1,2,3}d(input, weight, bias, stride, padding, output_padding, groups, dilation).
template <class Options, class S>
Options conv_transpose_options(Call& c, S (*read)(const Arg*, int64_t, const Tensor*)) {
  Options o;
  if (const Arg* b = c.get(1, "bias")) o.bias(b->tensor());
  o.stride(read(c.get(2, "stride"), 1, nullptr)).padding(read(c.get(3, "padding"), 0, nullptr));
  o.output_padding(read(c.get(4, "output_padding"), 0, nullptr)).groups(c.integer(5, "groups", 1));
  return o.dilation(read(c.get(6, "dilation"), 1, nullptr));
}
OPDB("nn.functional.conv_transpose1d") {
  const Tensor& w = c.tensor(0, "weight");
  return F::conv_transpose1d(c.in(), w, conv_transpose_options<F::ConvTranspose1dFuncOptions>(c, read1));
};
OPDB("nn.functional.conv_transpose2d") {
  const Tensor& w = c.tensor(0, "weight");
  return F::conv_transpose2d(c.in(), w, conv_transpose_options<F::ConvTranspose2dFuncOptions, Size2>(c, size2));
};
OPDB("nn.functional.conv_transpose3d") {
  const Tensor& w = c.tensor(0, "weight");
  return F::conv_transpose3d(c.in(), w, conv_transpose_options<F::ConvTranspose3dFuncOptions, Size3>(c, size3));
};

// ---- pooling -----------------------------------------------------------------------
OPDB("nn.functional.max_pool3d") {
  const Size3 k = size3(c.get(0, "kernel_size"), 0);
  nn::MaxPool3dOptions o(k);
  o.stride(stride_or_kernel<Size3>(c.get(1, "stride"), k, size3)).padding(size3(c.get(2, "padding"), 0));
  o.dilation(size3(c.get(3, "dilation"), 1)).ceil_mode(c.boolean(4, "ceil_mode", false));
  if (c.boolean(5, "return_indices", false)) return F::max_pool3d_with_indices(c.in(), o);
  return F::max_pool3d(c.in(), o);
};
OPDB("nn.functional.avg_pool3d") {
  const Size3 k = size3(c.get(0, "kernel_size"), 0);
  nn::AvgPool3dOptions o(k);
  o.stride(stride_or_kernel<Size3>(c.get(1, "stride"), k, size3)).padding(size3(c.get(2, "padding"), 0));
  o.ceil_mode(c.boolean(3, "ceil_mode", false)).count_include_pad(c.boolean(4, "count_include_pad", true));
  if (const Arg* d = c.get(5, "divisor_override")) o.divisor_override(d->integer());
  return F::avg_pool3d(c.in(), o);
};
OPDB("nn.functional.adaptive_avg_pool2d") {
  return F::adaptive_avg_pool2d(c.in(), nn::AdaptiveAvgPool2dOptions(size2(c.get(0, "output_size"), 0, &c.in())));
};
OPDB("nn.functional.adaptive_avg_pool3d") {
  return F::adaptive_avg_pool3d(c.in(), nn::AdaptiveAvgPool3dOptions(size3(c.get(0, "output_size"), 0, &c.in())));
};
OPDB("nn.functional.adaptive_max_pool3d") {
  nn::AdaptiveMaxPool3dOptions o(size3(c.get(0, "output_size"), 0, &c.in()));
  if (c.boolean(1, "return_indices", false)) return F::adaptive_max_pool3d_with_indices(c.in(), o);
  return F::adaptive_max_pool3d(c.in(), o);
};
OPDB("nn.functional.adaptive_max_pool2d") {
  auto [out, indices] = vnn::adaptive_max_pool2d(c.in(), size2(c.get(0, "output_size"), 0, &c.in()));
  if (c.boolean(1, "return_indices", false)) return std::make_tuple(out, indices);
  return out;
};
// Random windows: the runner compares shape and dtype (SHAPE_ONLY).
template <class Options, class S>
Options fractional_options(Call& c, size_t dims, S (*read)(const Arg*, int64_t, const Tensor*)) {
  Options o(read(c.get(0, "kernel_size"), 0, nullptr));
  if (const Arg* s = c.get(1, "output_size")) o.output_size(read(s, 0, nullptr));
  if (const Arg* r = c.get(2, "output_ratio")) {
    std::vector<double> v;
    if (r->kind == Arg::Kind::list) {
      for (const auto& x : r->items) v.push_back(x.number());
    } else {
      v.assign(dims, r->number());
    }
    o.output_ratio(v);
  }
  if (c.get(4, "_random_samples")) gap("fractional max pooling with given _random_samples");
  return o;
}
OPDB("nn.functional.fractional_max_pool2d") {
  auto o = fractional_options<F::FractionalMaxPool2dFuncOptions, Size2>(c, 2, size2);
  if (c.boolean(3, "return_indices", false)) return F::fractional_max_pool2d_with_indices(c.in(), o);
  return F::fractional_max_pool2d(c.in(), o);
};
OPDB("nn.functional.fractional_max_pool3d") {
  auto o = fractional_options<F::FractionalMaxPool3dFuncOptions, Size3>(c, 3, size3);
  if (c.boolean(3, "return_indices", false)) return F::fractional_max_pool3d_with_indices(c.in(), o);
  return F::fractional_max_pool3d(c.in(), o);
};
// max_unpool{1,2,3}d(input, indices, kernel_size, stride, padding, output_size).
template <class Options, class S>
Options unpool_options(Call& c, S (*read)(const Arg*, int64_t, const Tensor*)) {
  const S k = read(c.get(1, "kernel_size"), 0, nullptr);
  Options o(k);
  o.stride(stride_or_kernel<S>(c.get(2, "stride"), k, read)).padding(read(c.get(3, "padding"), 0, nullptr));
  if (const Arg* s = c.get(4, "output_size")) o.output_size(s->ints());
  return o;
}
#define VNN_OPDB_UNPOOL(KEY, FN, OPTIONS, S, READ)                           \
  OPDB(KEY) {                                                                \
    const Tensor& indices = c.tensor(0, "indices");                          \
    return F::FN(c.in(), indices, unpool_options<F::OPTIONS, S>(c, READ));   \
  };
VNN_OPDB_UNPOOL("nn.functional.max_unpool1d", max_unpool1d, MaxUnpool1dFuncOptions, int64_t, read1)
VNN_OPDB_UNPOOL("nn.functional.max_unpool1d.grad", max_unpool1d, MaxUnpool1dFuncOptions, int64_t, read1)
VNN_OPDB_UNPOOL("nn.functional.max_unpool2d", max_unpool2d, MaxUnpool2dFuncOptions, Size2, size2)
VNN_OPDB_UNPOOL("nn.functional.max_unpool2d.grad", max_unpool2d, MaxUnpool2dFuncOptions, Size2, size2)
VNN_OPDB_UNPOOL("nn.functional.max_unpool3d", max_unpool3d, MaxUnpool3dFuncOptions, Size3, size3)
VNN_OPDB_UNPOOL("nn.functional.max_unpool3d.grad", max_unpool3d, MaxUnpool3dFuncOptions, Size3, size3)
OPDB("nn.functional.unfold") {
  nn::UnfoldOptions o(size2(c.get(0, "kernel_size"), 0));
  o.dilation(size2(c.get(1, "dilation"), 1)).padding(size2(c.get(2, "padding"), 0)).stride(size2(c.get(3, "stride"), 1));
  return F::unfold(c.in(), o);
};

// ---- normalization ------------------------------------------------------------------
OPDB("nn.functional.instance_norm") {
  F::InstanceNormFuncOptions o;
  // PyTorch updates the running statistics in place: copies keep the samples intact.
  if (const Arg* m = c.get(0, "running_mean")) o.running_mean(m->tensor().clone());
  if (const Arg* v = c.get(1, "running_var")) o.running_var(v->tensor().clone());
  if (const Arg* w = c.get(2, "weight")) o.weight(w->tensor());
  if (const Arg* b = c.get(3, "bias")) o.bias(b->tensor());
  o.use_input_stats(c.boolean(4, "use_input_stats", true)).momentum(c.number(5, "momentum", 0.1));
  return F::instance_norm(c.in(), o.eps(c.number(6, "eps", 1e-5)));
};
OPDB("nn.functional.local_response_norm") {
  nn::LocalResponseNormOptions o(c.integer(0, "size"));
  o.alpha(c.number(1, "alpha", 1e-4)).beta(c.number(2, "beta", 0.75)).k(c.number(3, "k", 1.0));
  return F::local_response_norm(c.in(), o);
};

// ---- the dropout family and rrelu: random, compared by shape and dtype ----------------
#define VNN_OPDB_DROPOUT_FAMILY(KEY, FN, OPTIONS, TRAINING)                                      \
  OPDB(KEY) {                                                                                   \
    c.kw("inplace");                                                                            \
    const double p = c.number(0, "p", 0.5);                                                     \
    return F::FN(c.in(), F::OPTIONS().p(p).training(c.boolean(1, "training", TRAINING)));       \
  };
VNN_OPDB_DROPOUT_FAMILY("nn.functional.dropout2d", dropout2d, Dropout2dFuncOptions, true)
VNN_OPDB_DROPOUT_FAMILY("nn.functional.dropout3d", dropout3d, Dropout3dFuncOptions, true)
VNN_OPDB_DROPOUT_FAMILY("nn.functional.alpha_dropout", alpha_dropout, AlphaDropoutFuncOptions, false)
VNN_OPDB_DROPOUT_FAMILY("nn.functional.feature_alpha_dropout.with_train", feature_alpha_dropout,
                        FeatureAlphaDropoutFuncOptions, false)
VNN_OPDB_DROPOUT_FAMILY("nn.functional.feature_alpha_dropout.without_train", feature_alpha_dropout,
                        FeatureAlphaDropoutFuncOptions, false)
OPDB("nn.functional.rrelu") {
  c.kw("inplace");
  F::RReLUFuncOptions o;
  o.lower(c.number(0, "lower", 1.0 / 8.0)).upper(c.number(1, "upper", 1.0 / 3.0));
  return F::rrelu(c.in(), o.training(c.boolean(2, "training", false)));
};

// ---- embedding_bag and the two-input layers ---------------------------------------------
OPDB("nn.functional.embedding_bag") {
  // As embedding: the weight is the sample's input, the indices args[0].
  const Tensor& w = c.in();
  const Tensor& idx = c.tensor(0, "input");
  F::EmbeddingBagFuncOptions o;
  if (const Arg* off = c.get(1, "offsets")) o.offsets(off->tensor());
  if (c.get(2, "max_norm")) gap("embedding_bag(max_norm=)");
  c.get(3, "norm_type");  // used with max_norm only
  if (c.boolean(4, "scale_grad_by_freq", false)) gap("embedding_bag(scale_grad_by_freq=True)");
  const std::string mode = c.str(5, "mode", "mean");
  if (mode == "max") o.mode(nn::kMax);
  else o.mode(nn::reduction_from_string(mode));
  if (c.boolean(6, "sparse", false)) gap("embedding_bag(sparse=True)");
  if (const Arg* psw = c.get(7, "per_sample_weights")) o.per_sample_weights(psw->tensor());
  o.include_last_offset(c.boolean(8, "include_last_offset", false));
  if (const Arg* p = c.get(9, "padding_idx")) o.padding_idx(p->integer());
  return F::embedding_bag(idx, w, o);
};
OPDB("nn.functional.cosine_similarity") {
  const Tensor& x2 = c.tensor(0, "x2");
  const int64_t dim = c.integer(1, "dim", 1);
  return F::cosine_similarity(c.in(), x2, nn::CosineSimilarityOptions().dim(dim).eps(c.number(2, "eps", 1e-8)));
};
OPDB("nn.functional.pairwise_distance") {
  const Tensor& x2 = c.tensor(0, "x2");
  nn::PairwiseDistanceOptions o;
  o.norm_degree(c.number(1, "p", 2.0)).eps(c.number(2, "eps", 1e-6)).keepdim(c.boolean(3, "keepdim", false));
  return F::pairwise_distance(c.in(), x2, o);
};
OPDB("nn.functional.bilinear") {
  const Tensor& x2 = c.tensor(0, "input2");
  const Tensor& w = c.tensor(1, "weight");
  const Arg* b = c.get(2, "bias");
  return F::bilinear(c.in(), x2, w, b ? b->tensor() : Tensor());
};

// ---- margin and CTC losses ------------------------------------------------------------
OPDB("nn.functional.multi_margin_loss") {
  const Tensor& t = c.tensor(0, "target");
  nn::MultiMarginLossOptions o;
  o.p(c.integer(1, "p", 1)).margin(c.number(2, "margin", 1.0));
  if (const Arg* w = c.get(3, "weight")) o.weight(w->tensor());
  return F::multi_margin_loss(c.in(), t, o.reduction(nn::reduction_from_string(c.str(6, "reduction", "mean"))));
};
OPDB("nn.functional.multilabel_margin_loss") {
  const Tensor& t = c.tensor(0, "target");
  return F::multilabel_margin_loss(c.in(), t, nn::reduction_from_string(c.str(3, "reduction", "mean")));
};
OPDB("nn.functional.ctc_loss") {
  const Tensor& targets = c.tensor(0, "targets");
  const Arg* il = c.get(1, "input_lengths");
  const Arg* tl = c.get(2, "target_lengths");
  nn::CTCLossOptions o;
  o.blank(c.integer(3, "blank", 0)).reduction(nn::reduction_from_string(c.str(4, "reduction", "mean")));
  o.zero_infinity(c.boolean(5, "zero_infinity", false));
  if (il->kind == Arg::Kind::tensor) return F::ctc_loss(c.in(), targets, il->tensor(), tl->tensor(), o);
  return F::ctc_loss(c.in(), targets, il->ints(), tl->ints(), o);
};

}  // namespace
}  // namespace vnn::opdb
