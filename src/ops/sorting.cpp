// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Sorting and searching (vnn/sorting.h): sort, argsort, msort, topk,
// kthvalue, median, nanmedian, mode, searchsorted and bucketize. Every one
// is VNN_OP_SORT / VNN_OP_SEARCHSORTED on the tensor's device plus
// gathers: the sorted dim is moved last and made contiguous, the backend
// sorts each row, and values that need a gradient are gathered from the
// input through the indices (gather's backward scatters the gradient back).
#include <algorithm>
#include <string>
#include <tuple>

#include "autograd/autograd.hpp"
#include "ops/low_precision.hpp"
#include "ops/sorting.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/detail/message.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/indexing.h"
#include "vnn/reduction.h"
#include "vnn/shape.h"
#include "vnn/sorting.h"

namespace vnn {
namespace detail {

const Tensor& sort_input(const Tensor& t, const char* op, const char* arg) {
  VNN_CHECK(ValueError, t.defined(), op, ": argument '", arg, "' is an undefined tensor");
  return t;
}

int sort_dim(int64_t dim, const Tensor& t, const char* op) {
  const int64_t n = t.dim() == 0 ? 1 : t.dim();
  VNN_CHECK(IndexError, dim >= -n && dim < n, op, ": dimension ", dim, " is out of range for a tensor of shape ",
            t.sizes(), " (expected in [", -n, ", ", n - 1, "])");
  return int(dim < 0 ? dim + n : dim);
}

namespace {

// The dtype the kernels sort in: float16 / bfloat16 as float32 (exact).
DType sort_dtype(const Tensor& t, const char* op) {
  switch (t.dtype()) {
    case kFloat32: case kFloat64: case kInt32: case kInt64: case kUInt8: case kBool: return t.dtype();
    case kFloat16: case kBFloat16: return kFloat32;
    case kInt8: case kInt16: return kInt32;  // exact; the result converts back
    default:
      VNN_THROW(DTypeError, op, ": dtype ", name(t.dtype()),
                " cannot be sorted (float32, float64, float16, bfloat16, int8, int16, int32, int64, uint8 and bool can); "
                "convert it first, e.g. t.to(vnn::kInt64)");
  }
}

}  // namespace

SortedRows sort_rows(const Tensor& x0, int d, bool descending, const char* op) {
  const Tensor x = x0.dim() == 0 ? x0.detach().reshape({1}) : x0.detach();
  const int last = x.dim() - 1;
  const DType compute = sort_dtype(x, op);
  Tensor moved = (d == last ? x : x.transpose(d, last)).to(compute).contiguous();
  DeviceContext& ctx = x.impl()->ctx();
  Tensor values = make_empty(ctx, moved.sizes(), compute, op);
  Tensor indices = make_empty(ctx, moved.sizes(), kInt64, op);
  const int64_t n = moved.size(last), total = moved.numel();
  if (total > 0) {
    Tensor in = moved.view({total / n, n}), v = values.view({total / n, n}), i = indices.view({total / n, n});
    enqueue(VNN_OP_SORT, op, {&in}, {&v, &i}, {}, {int64_t(descending ? 1 : 0)});
    note_range(indices, 0, n - 1);
  }
  return {compute == x.dtype() ? values : values.to(x.dtype()), indices};
}

Tensor unmove_last(const Tensor& t, int d) {
  const int last = t.dim() - 1;
  if (d == last || t.dim() == 0) return t;
  Tensor back = t.transpose(d, last).contiguous();
  int64_t lo = 0, hi = 0;
  if (known_range(t, &lo, &hi)) note_range(back, lo, hi);
  return back;
}

Tensor picked_values(const Tensor& x, int d, const Tensor& indices, const Tensor& picked) {
  if (!needs_grad({&x})) return picked;
  return x.dim() == 0 ? gather(x.reshape({1}), 0, indices.reshape({1})).reshape(indices.sizes())
                      : gather(x, d, indices);
}

Tensor search_rows(const Tensor& seq, const Tensor& values, bool right, bool out_int32, const char* op) {
  if (seq.dtype() == kInt8 || seq.dtype() == kInt16)  // the kernels search int32 (exact)
    return search_rows(seq.to(kInt32), values.to(kInt32), right, out_int32, op);
  Tensor out = make_empty(values.impl()->ctx(), values.sizes(), out_int32 ? kInt32 : kInt64, op);
  if (out.numel() > 0) {
    enqueue(VNN_OP_SEARCHSORTED, op, {&seq, &values}, out, {}, {int64_t(right ? 1 : 0)});
    note_range(out, 0, seq.size(1));
  }
  return out;
}

}  // namespace detail

namespace {

// Sorted along d in t's own layout: (values, indices), contiguous.
std::tuple<Tensor, Tensor> sorted_along(const Tensor& t, int d, bool descending, const char* op) {
  detail::SortedRows s = detail::sort_rows(t, d, descending, op);
  const int dd = t.dim() == 0 ? 0 : d;
  Tensor idx = detail::unmove_last(s.indices, dd);
  Tensor vals = detail::unmove_last(s.values, dd);
  if (t.dim() == 0) idx = idx.reshape({}), vals = vals.reshape({});
  return {detail::picked_values(t, d, idx, vals), idx};
}

// Column `pos` ([..., 1] int64 positions, or one position for every row
// when pos is undefined and `at` >= 0) of rows sorted ascending along d,
// as (values, indices) in t's layout, dim d squeezed unless keepdim.
std::tuple<Tensor, Tensor> pick_sorted(const Tensor& t, int d, const detail::SortedRows& s, const Tensor& pos,
                                       int64_t at, bool keepdim) {
  const int last = s.values.dim() - 1;
  Tensor v = pos.defined() ? gather(s.values, last, pos) : s.values.narrow(last, at, 1);
  Tensor i = pos.defined() ? gather(s.indices, last, pos) : s.indices.narrow(last, at, 1);
  if (t.dim() == 0) return {detail::picked_values(t, 0, i.reshape({}), v.reshape({})), i.reshape({})};
  i = detail::unmove_last(i.contiguous(), d);
  v = detail::unmove_last(v.contiguous(), d);
  v = detail::picked_values(t, d, i, v);
  if (!keepdim) v = v.squeeze(d), i = i.squeeze(d);
  return {v, i};
}

// The dim of topk / kthvalue, with k checked to lie in [lowest, size(dim)].
int dim_with_k(const Tensor& t, int64_t dim, int64_t k, int64_t lowest, const char* op) {
  detail::sort_input(t, op);
  const int d = detail::sort_dim(dim, t, op);
  const int64_t n = t.dim() == 0 ? 1 : t.size(d);
  VNN_CHECK(IndexError, k >= lowest && k <= n, op, ": k = ", k, " is out of range for dimension ", d, " of size ", n,
            " (input shape ", t.sizes(), "); k must be in [", lowest, ", ", n, "]");
  return d;
}

// Rows sorted ascending for a selection along dim (kthvalue, median):
// every dim but a 0-dim tensor's must be non-empty.
detail::SortedRows rows_for_pick(const Tensor& t, int d, const char* op) {
  VNN_CHECK(IndexError, t.dim() == 0 || t.size(d) > 0, op, ": dimension ", d, " of the input of shape ", t.sizes(),
            " is empty; there is no element to pick");
  return detail::sort_rows(t, d, false, op);
}

// The median's column per row: the lower median of the non-NaN values
// (ignore_nan), or of the row, where a row with NaN picks its first NaN.
std::tuple<Tensor, Tensor> median_along(const Tensor& t0, int64_t dim, bool keepdim, bool ignore_nan, const char* op) {
  const Tensor& t = detail::sort_input(t0, op);
  const int d = detail::sort_dim(dim, t, op);
  detail::SortedRows s = rows_for_pick(t, d, op);
  const int last = s.values.dim() - 1;
  const int64_t n = s.values.size(last);
  if (!is_floating(t.dtype())) return pick_sorted(t, d, s, Tensor(), (n - 1) / 2, keepdim);
  Tensor nan_count = sum(isnan(s.values), last, true).to(kFloat64);
  Tensor pos = ignore_nan ? clamp(floor(div(sub(mul(nan_count, -1.0), double(1 - n)), 2.0)), 0.0, double(n - 1))
                          : where(gt(nan_count, 0.0), add(mul(nan_count, -1.0), double(n)),
                                  full_like(nan_count, double((n - 1) / 2)));
  return pick_sorted(t, d, s, pos.to(kInt64), -1, keepdim);
}

}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& t, int64_t dim, bool descending) {
  detail::sort_input(t, "sort");
  return sorted_along(t, detail::sort_dim(dim, t, "sort"), descending, "sort");
}
std::tuple<Tensor, Tensor> sort(const Tensor& t, bool /*stable: always*/, int64_t dim, bool descending) {
  return sort(t, dim, descending);
}
Tensor argsort(const Tensor& t, int64_t dim, bool descending) {
  detail::sort_input(t, "argsort");
  const int d = detail::sort_dim(dim, t, "argsort");
  detail::SortedRows s = detail::sort_rows(t, d, descending, "argsort");
  Tensor idx = detail::unmove_last(s.indices, t.dim() == 0 ? 0 : d);
  return t.dim() == 0 ? idx.reshape({}) : idx;
}
Tensor argsort(const Tensor& t, bool /*stable: always*/, int64_t dim, bool descending) {
  return argsort(t, dim, descending);
}
Tensor msort(const Tensor& t) {
  detail::sort_input(t, "msort");
  return std::get<0>(sorted_along(t, detail::sort_dim(0, t, "msort"), false, "msort"));
}

std::tuple<Tensor, Tensor> topk(const Tensor& t, int64_t k, int dim, bool largest, bool /*sorted: always*/) {
  const char* op = "topk";
  const int d = dim_with_k(t, dim, k, 0, op);
  detail::SortedRows s = detail::sort_rows(t, d, largest, op);
  const int last = s.values.dim() - 1;
  Tensor i = s.indices.narrow(last, 0, k), v = s.values.narrow(last, 0, k);
  if (t.dim() == 0) return {detail::picked_values(t, 0, i.reshape({}), v.reshape({})), i.reshape({})};
  i = detail::unmove_last(i.contiguous(), d);
  v = detail::unmove_last(v.contiguous(), d);
  return {detail::picked_values(t, d, i, v), i};
}

std::tuple<Tensor, Tensor> kthvalue(const Tensor& t, int64_t k, int64_t dim, bool keepdim) {
  const char* op = "kthvalue";
  const int d = dim_with_k(t, dim, k, 1, op);
  return pick_sorted(t, d, rows_for_pick(t, d, op), Tensor(), k - 1, keepdim);
}

std::tuple<Tensor, Tensor> median(const Tensor& t, int64_t dim, bool keepdim) {
  return median_along(t, dim, keepdim, false, "median");
}
std::tuple<Tensor, Tensor> nanmedian(const Tensor& t, int64_t dim, bool keepdim) {
  return median_along(t, dim, keepdim, true, "nanmedian");
}
Tensor median(const Tensor& t) {
  detail::sort_input(t, "median");
  return std::get<0>(median_along(t.reshape({-1}), 0, false, false, "median")).reshape({});
}
Tensor nanmedian(const Tensor& t) {
  detail::sort_input(t, "nanmedian");
  return std::get<0>(median_along(t.reshape({-1}), 0, false, true, "nanmedian")).reshape({});
}

std::tuple<Tensor, Tensor> mode(const Tensor& t, int64_t dim, bool keepdim) {
  const char* op = "mode";
  detail::sort_input(t, op);
  const int d = detail::sort_dim(dim, t, op);
  detail::SortedRows s = rows_for_pick(t, d, op);
  const int last = s.values.dim() - 1;
  const int64_t n = s.values.size(last), rows = s.values.numel() / n;
  // Each sorted element's run of equal values, by two searches in its own
  // row: count = right - left; the first longest run has the smallest value.
  Tensor sv = s.values.view({rows, n});
  if (detail::is_low_precision(sv.dtype())) sv = sv.to(kFloat32);
  Tensor left = detail::search_rows(sv, sv, false, false, op), right = detail::search_rows(sv, sv, true, false, op);
  Tensor best = argmax(sub(right, left), 1, true);
  Tensor last_of_run = sub(gather(right, 1, best), full_like(best, 1.0));
  Shape col = s.values.sizes();
  col[last] = 1;
  Tensor v = gather(s.values.view({rows, n}), 1, best).view(col);
  Tensor i = gather(s.indices.view({rows, n}), 1, clamp(last_of_run, 0.0, double(n - 1))).view(col);
  if (t.dim() == 0) return {detail::picked_values(t, 0, i.reshape({}), v.reshape({})), i.reshape({})};
  i = detail::unmove_last(i, d);
  v = detail::picked_values(t, d, i, detail::unmove_last(v, d));
  if (!keepdim) v = v.squeeze(d), i = i.squeeze(d);
  return {v, i};
}

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32, bool right,
                    const std::optional<std::string>& side, const Tensor& sorter) {
  const char* op = "searchsorted";
  const Tensor& seq0 = detail::sort_input(sorted_sequence, op, "sorted_sequence");
  detail::sort_input(values, op, "values");
  detail::check_same_device(seq0, values, op, "values");
  if (side) {
    VNN_CHECK(ValueError, *side == "left" || *side == "right", "searchsorted: side = '", *side,
              "' must be 'left' or 'right'");
    VNN_CHECK(ValueError, !(right && *side == "left"), "searchsorted: side = 'left' and right = true are opposites; "
              "pass one of them");
    right = *side == "right";
  }
  VNN_CHECK(ShapeError, seq0.dim() >= 1, "searchsorted: sorted_sequence must have 1 or more dimensions, got shape ",
            seq0.sizes());
  const bool shared = seq0.dim() == 1;
  if (!shared) {
    bool same = values.dim() == seq0.dim();
    for (int k = 0; same && k + 1 < seq0.dim(); ++k) same = values.size(k) == seq0.size(k);
    VNN_CHECK(ShapeError, same, "searchsorted: sorted_sequence of shape ", seq0.sizes(), " and values of shape ",
              values.sizes(), " must agree in every dim but the last (or pass a 1-D sorted_sequence)");
  }
  Tensor seq = seq0.detach();
  if (sorter.defined()) {
    VNN_CHECK(DTypeError, sorter.dtype() == kInt64, "searchsorted: sorter must be int64, got ", name(sorter.dtype()));
    VNN_CHECK(ShapeError, sorter.sizes() == seq0.sizes(), "searchsorted: sorter of shape ", sorter.sizes(),
              " must have sorted_sequence's shape ", seq0.sizes());
    seq = gather(seq, seq.dim() - 1, sorter);
  }
  DType common = promote_types(seq.dtype(), values.dtype());
  if (detail::is_low_precision(common)) common = kFloat32;
  const int64_t n = seq.size(seq.dim() - 1);
  int64_t rows = 1;
  for (int k = 0; k + 1 < values.dim(); ++k) rows *= values.size(k);
  const int64_t m = values.dim() == 0 ? 1 : values.size(values.dim() - 1);
  Tensor s2 = seq.to(common).contiguous().view({shared ? 1 : rows, n});
  Tensor v2 = values.detach().to(common).contiguous().view({shared ? 1 : rows, shared ? values.numel() : m});
  return detail::search_rows(s2, v2, right, out_int32, op).view(values.sizes());
}

Tensor searchsorted(const Tensor& sorted_sequence, double value, bool out_int32, bool right,
                    const std::optional<std::string>& side, const Tensor& sorter) {
  const Tensor& seq = detail::sort_input(sorted_sequence, "searchsorted", "sorted_sequence");
  VNN_CHECK(ShapeError, seq.dim() == 1, "searchsorted: a scalar value needs a 1-D sorted_sequence, got shape ",
            seq.sizes());
  return searchsorted(seq, full({}, value, TensorOptions(seq.device()).with(seq.dtype())), out_int32, right, side,
                      sorter);
}

Tensor bucketize(const Tensor& values, const Tensor& boundaries, bool out_int32, bool right) {
  detail::sort_input(boundaries, "bucketize", "boundaries");
  VNN_CHECK(ShapeError, boundaries.dim() == 1, "bucketize: boundaries must be 1-D, got shape ", boundaries.sizes(),
            "; use searchsorted for rows of boundaries");
  return searchsorted(boundaries, detail::sort_input(values, "bucketize", "values"), out_int32, right);
}

}  // namespace vnn
