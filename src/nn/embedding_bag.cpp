// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// EmbeddingBag of include/vnn/nn/embedding_bag.h: the bag of each index is
// worked out on the host from the offsets (one small read), then the rows
// are gathered and reduced with device ops.
#include "vnn/nn/embedding_bag.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "vnn/autograd.h"
#include "vnn/composite.h"
#include "vnn/detail/message.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/indexing.h"
#include "vnn/nn/init.h"
#include "vnn/reduction.h"

namespace vnn::nn {

EmbeddingBagMode::EmbeddingBagMode(Reduction r) : kind(r == Reduction::sum ? sum : mean) {
  VNN_CHECK(ValueError, r != Reduction::none, "EmbeddingBag: mode must be kSum, kMean or kMax, got kNone");
}

namespace functional {

namespace {

// starts[b] .. starts[b + 1] is bag b; starts[B] ends the last bag.
std::vector<int64_t> bag_starts(const Tensor& input, const EmbeddingBagFuncOptions& o) {
  const Tensor& offsets = o.offsets();
  if (input.dim() == 2) {
    VNN_CHECK(ValueError, !offsets.defined(), "embedding_bag: offsets must be undefined for a 2-D input ",
              input.sizes(), " (each row is a bag)");
    std::vector<int64_t> s(size_t(input.size(0) + 1));
    for (size_t b = 0; b < s.size(); ++b) s[b] = int64_t(b) * input.size(1);
    return s;
  }
  VNN_CHECK(ShapeError, input.dim() == 1, "embedding_bag: input must be 1-D (with offsets) or 2-D [B, L], got ",
            input.sizes());
  VNN_CHECK(ValueError, offsets.defined() && offsets.dim() == 1 && !is_floating(offsets.dtype()),
            "embedding_bag: a 1-D input needs 1-D integer offsets, got ",
            offsets.defined() ? offsets.sizes().str() : std::string("none"));
  std::vector<int64_t> s = offsets.to(kInt64).to_vector<int64_t>();
  const int64_t t = input.size(0);
  if (!o.include_last_offset()) s.push_back(t);
  VNN_CHECK(ValueError, !s.empty() && (s.size() > 1 || o.include_last_offset()),
            "embedding_bag: include_last_offset needs at least one offset");
  VNN_CHECK(ValueError, s.size() < 2 || s[0] == 0, "embedding_bag: offsets[0] must be 0, got ", s[0]);
  for (size_t b = 1; b < s.size(); ++b)
    VNN_CHECK(ValueError, s[b - 1] <= s[b] && s[b] <= t, "embedding_bag: offsets must be non-decreasing and at most ",
              "the number of indices (", t, "), got ", s[b - 1], " then ", s[b]);
  return s;
}

}  // namespace

Tensor embedding_bag(const Tensor& input, const Tensor& weight, const EmbeddingBagFuncOptions& o) {
  VNN_CHECK(ValueError, input.defined() && weight.defined(), "embedding_bag: input and weight must be defined");
  VNN_CHECK(DTypeError, input.dtype() == kInt64 || input.dtype() == kInt32,
            "embedding_bag: input must hold int64 or int32 indices, got ", input.dtype());
  VNN_CHECK(ShapeError, weight.dim() == 2, "embedding_bag: weight must be 2-D [num_embeddings, dim], got ",
            weight.sizes());
  const EmbeddingBagMode::Kind mode = o.mode().kind;
  const Tensor& psw = o.per_sample_weights();
  if (psw.defined()) {
    VNN_CHECK(ValueError, mode == EmbeddingBagMode::sum, "embedding_bag: per_sample_weights is only supported ",
              "for mode kSum");
    VNN_CHECK(ShapeError, psw.sizes() == input.sizes(), "embedding_bag: per_sample_weights ", psw.sizes(),
              " must have the input's shape ", input.sizes());
  }
  const std::vector<int64_t> starts = bag_starts(input, o);
  const int64_t bags = int64_t(starts.size()) - 1, used = starts.back(), d = weight.size(1);
  const TensorOptions opt = TensorOptions(weight.device()).dtype(weight.dtype());
  Tensor idx = input.reshape({input.numel()}).narrow(0, 0, used).to(kInt64);
  Tensor rows = ::vnn::embedding(weight, idx);  // [used, D]; IndexError for an index out of range
  Tensor keep;
  if (const auto& p = o.padding_idx()) {
    const int64_t n = weight.size(0);
    VNN_CHECK(ValueError, *p >= -n && *p < n, "embedding_bag: padding_idx ", *p, " must be in [", -n, ", ", n,
              ") for weight ", weight.sizes());
    keep = ne(idx, double(*p < 0 ? *p + n : *p));  // a negative padding_idx counts from the end, as PyTorch's
  }
  std::vector<int64_t> bag_of(static_cast<size_t>(used));
  int64_t longest = 0;
  for (int64_t b = 0; b < bags; ++b) {
    std::fill(bag_of.begin() + starts[size_t(b)], bag_of.begin() + starts[size_t(b + 1)], b);
    longest = std::max(longest, starts[size_t(b + 1)] - starts[size_t(b)]);
  }
  if (mode == EmbeddingBagMode::max) {
    if (longest == 0) return zeros({bags, d}, opt);
    constexpr double ninf = -std::numeric_limits<double>::infinity();
    if (keep.defined()) rows = where(keep.reshape({used, 1}), rows, ninf);
    // [B, longest, D] from the rows plus one -inf row for the short bags' tails.
    std::vector<int64_t> gather(size_t(bags * longest), used);
    for (int64_t b = 0; b < bags; ++b)
      for (int64_t j = starts[size_t(b)]; j < starts[size_t(b + 1)]; ++j)
        gather[size_t(b * longest + j - starts[size_t(b)])] = j;
    Tensor ext = cat({rows, full({1, d}, ninf, opt)}, 0);
    Tensor block = index_select(ext, 0, from_vector(gather, {bags * longest}, weight.device())).reshape({bags, longest, d});
    Tensor m = std::get<0>(max(block, 1));
    return where(isneginf(m), 0.0, m);  // empty (or all-padding) bags are zeros
  }
  Tensor scale;
  if (psw.defined()) scale = psw.reshape({psw.numel()}).narrow(0, 0, used).to(weight.dtype());
  if (keep.defined()) scale = scale.defined() ? mul(scale, keep.to(weight.dtype())) : keep.to(weight.dtype());
  if (scale.defined()) rows = mul(rows, scale.reshape({used, 1}));
  Tensor bag_index = from_vector(bag_of, {used}, weight.device());
  Tensor out = index_add(zeros({bags, d}, opt), 0, bag_index, rows);
  if (mode == EmbeddingBagMode::sum) return out;
  Tensor count;
  if (keep.defined()) {
    count = index_add(zeros({bags}, opt), 0, bag_index, keep.to(weight.dtype()));
  } else {
    std::vector<double> n(static_cast<size_t>(bags));
    for (int64_t b = 0; b < bags; ++b) n[size_t(b)] = double(starts[size_t(b + 1)] - starts[size_t(b)]);
    count = from_vector(n, {bags}, weight.device()).to(weight.dtype());
  }
  return div(out, clamp_min(count, 1.0).reshape({bags, 1}));
}

}  // namespace functional

EmbeddingBagImpl::EmbeddingBagImpl(const EmbeddingBagOptions& opt, Generator* gen)
    : Cloneable("EmbeddingBag"), options(opt), gen_(gen) {
  VNN_CHECK(ValueError, opt.num_embeddings() > 0 && opt.embedding_dim() > 0,
            "EmbeddingBag: sizes must be positive, got ", opt.num_embeddings(), " x ", opt.embedding_dim());
  if (auto& p = options.padding_idx()) {
    const int64_t n = opt.num_embeddings();
    VNN_CHECK(ValueError, *p >= -n && *p < n, "EmbeddingBag: padding_idx ", *p, " must be in [", -n, ", ", n,
              ") for num_embeddings = ", n);
    if (*p < 0) *p += n;  // as PyTorch: counted from the end
  }
  reset();
}

void EmbeddingBagImpl::reset() {
  Tensor w = empty({options.num_embeddings(), options.embedding_dim()});
  init::normal_(w, 0.0, 1.0, gen_);
  if (options.padding_idx()) w.select(0, *options.padding_idx()).zero_();
  weight = register_parameter("weight", w);
}

Tensor EmbeddingBagImpl::forward(const Tensor& input, const Tensor& offsets, const Tensor& per_sample_weights) {
  return functional::embedding_bag(input, weight, functional::EmbeddingBagFuncOptions()
                                                      .offsets(offsets)
                                                      .per_sample_weights(per_sample_weights)
                                                      .mode(options.mode())
                                                      .include_last_offset(options.include_last_offset())
                                                      .padding_idx(options.padding_idx()));
}

std::string EmbeddingBagImpl::describe() const {
  static const char* const names[] = {"sum", "mean", "max"};
  return ::vnn::detail::str_cat("EmbeddingBag(", options.num_embeddings(), ", ", options.embedding_dim(),
                                ", mode=", names[options.mode().kind], ")");
}

}  // namespace vnn::nn
