// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// op_db mappings of sorting and searching (vnn/sorting.h).
#include "opdb.hpp"

namespace vnn::opdb {
namespace {

OPDB("sort") {
  // sort(dim=-1, descending=False, stable=False); stable is keyword-only.
  const int64_t dim = c.integer(0, "dim", -1);
  const bool descending = c.boolean(1, "descending", false);
  const bool stable = c.boolean(SIZE_MAX, "stable", false);
  return vnn::sort(c.in(), stable, dim, descending);
};
OPDB("argsort") {
  const int64_t dim = c.integer(0, "dim", -1);
  const bool descending = c.boolean(1, "descending", false);
  const bool stable = c.boolean(SIZE_MAX, "stable", false);
  return vnn::argsort(c.in(), stable, dim, descending);
};
OPDB("msort") { return vnn::msort(c.in()); };
OPDB("kthvalue") {
  return vnn::kthvalue(c.in(), c.integer(0, "k"), c.integer(1, "dim", -1), c.boolean(2, "keepdim", false));
};
OPDB("median") {
  if (!c.has(0, "dim")) return vnn::median(c.in());
  return vnn::median(c.in(), c.integer(0, "dim"), c.boolean(1, "keepdim", false));
};
OPDB("nanmedian") {
  if (!c.has(0, "dim")) return vnn::nanmedian(c.in());
  return vnn::nanmedian(c.in(), c.integer(0, "dim"), c.boolean(1, "keepdim", false));
};
OPDB("mode") { return vnn::mode(c.in(), c.integer(0, "dim", -1), c.boolean(1, "keepdim", false)); };

template <class F>
Arg quantile_like(Call& c, F f) {
  const Arg* q = c.get(0, "q");
  std::optional<int64_t> dim;
  if (const Arg* d = c.get(1, "dim")) dim = d->integer();
  const bool keepdim = c.boolean(2, "keepdim", false);
  const std::string interp = c.str(SIZE_MAX, "interpolation", "linear");
  return f(q, dim, keepdim, interp);
}
OPDB("quantile") {
  const Tensor& t = c.in();
  return quantile_like(c, [&](const Arg* q, std::optional<int64_t> dim, bool keep, const std::string& i) {
    if (q->kind == Arg::Kind::tensor) return Arg(vnn::quantile(t, q->t, dim, keep, i));
    return Arg(vnn::quantile(t, q->number(), dim, keep, i));
  });
};
OPDB("nanquantile") {
  const Tensor& t = c.in();
  return quantile_like(c, [&](const Arg* q, std::optional<int64_t> dim, bool keep, const std::string& i) {
    if (q->kind == Arg::Kind::tensor) return Arg(vnn::nanquantile(t, q->t, dim, keep, i));
    return Arg(vnn::nanquantile(t, q->number(), dim, keep, i));
  });
};

// torch.unique returns the values alone, or a tuple with the inverse and /
// or the counts, as asked.
template <class F>
Arg unique_like(Call& c, bool has_sorted, F f) {
  const bool sorted = has_sorted ? c.boolean(SIZE_MAX, "sorted", true) : true;
  const bool inverse = c.boolean(SIZE_MAX, "return_inverse", false);
  const bool counts = c.boolean(SIZE_MAX, "return_counts", false);
  if (c.kw("dim")) gap("unique(dim=)");
  auto [values, inv, cnt] = f(sorted, inverse, counts);
  if (!inverse && !counts) return values;
  std::vector<Tensor> out{values};
  if (inverse) out.push_back(inv);
  if (counts) out.push_back(cnt);
  return out;
}
OPDB("unique") {
  const Tensor& t = c.in();
  return unique_like(c, true, [&](bool s, bool i, bool n) { return vnn::unique(t, s, i, n); });
};
OPDB("unique_consecutive") {
  const Tensor& t = c.in();
  return unique_like(c, false, [&](bool, bool i, bool n) { return vnn::unique_consecutive(t, i, n); });
};
OPDB("searchsorted") {
  const Arg* v = c.get(0, "input");
  if (!v) v = c.kw("self");
  const bool out_int32 = c.boolean(SIZE_MAX, "out_int32", false);
  const bool right = c.boolean(SIZE_MAX, "right", false);
  std::optional<std::string> side;
  if (const Arg* s = c.kw("side")) side = s->str();
  const Arg* sorter = c.kw("sorter");
  const Tensor sort_idx = sorter ? sorter->tensor() : Tensor();
  if (v->kind == Arg::Kind::tensor) return vnn::searchsorted(c.in(), v->t, out_int32, right, side, sort_idx);
  return vnn::searchsorted(c.in(), v->number(), out_int32, right, side, sort_idx);
};
OPDB("bucketize") {
  const Tensor& b = c.tensor(0, "boundaries");
  return vnn::bucketize(c.in(), b, c.boolean(SIZE_MAX, "out_int32", false), c.boolean(SIZE_MAX, "right", false));
};
OPDB("bincount") {
  const Arg* w = c.get(0, "weights");
  return vnn::bincount(c.in(), w ? w->tensor() : Tensor(), c.integer(1, "minlength", 0));
};
OPDB("histc") {
  return vnn::histc(c.in(), c.integer(0, "bins", 100), c.number(1, "min", 0.0), c.number(2, "max", 0.0));
};

}  // namespace
}  // namespace vnn::opdb
