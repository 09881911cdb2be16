// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The ops built on sorted rows (vnn/sorting.h): quantile / nanquantile,
// unique / unique_consecutive, bincount and histc. All on the tensor's
// device: unique's run starts are compacted by nonzero (a scan and a
// scatter) and its inverse is a cumsum of the start flags, so no element
// loop on the host; the host reads one count (the number of distinct
// values) or one bound.
#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>

#include "ops/low_precision.hpp"
#include "ops/sorting.hpp"
#include "tensor/tensor_impl.hpp"
#include "vnn/detail/message.h"
#include "vnn/elementwise.h"
#include "vnn/error.h"
#include "vnn/indexing.h"
#include "vnn/reduction.h"
#include "vnn/scan.h"
#include "vnn/shape.h"
#include "vnn/sorting.h"

namespace vnn {
namespace {

enum class Interpolation { linear, lower, higher, midpoint, nearest };

Interpolation interpolation_of(const std::string& s, const char* op) {
  if (s == "linear") return Interpolation::linear;
  if (s == "lower") return Interpolation::lower;
  if (s == "higher") return Interpolation::higher;
  if (s == "midpoint") return Interpolation::midpoint;
  if (s == "nearest") return Interpolation::nearest;
  VNN_THROW(ValueError, op, ": interpolation = '", s,
            "' is not one of 'linear', 'lower', 'higher', 'midpoint', 'nearest'");
}

// torch.quantile's algorithm: ranks q * (count - 1) in rows sorted
// ascending (NaN last), adjusted for the interpolation mode, and the values
// at the ranks below and above blended. q is 1-D [Q] of t's dtype.
Tensor quantile_impl(const Tensor& t0, const Tensor& q, bool scalar_q, std::optional<int64_t> dim, bool keepdim,
                     const std::string& interpolation, bool ignore_nan, const char* op) {
  const Tensor& t = detail::sort_input(t0, op);
  const Interpolation mode = interpolation_of(interpolation, op);
  VNN_CHECK(DTypeError, t.dtype() == kFloat32 || t.dtype() == kFloat64, op,
            ": input must be float32 or float64, got ", name(t.dtype()), "; convert it with .to(vnn::kFloat32)");
  VNN_CHECK(ValueError, t.numel() > 0, op, ": input of shape ", t.sizes(), " is empty");
  // Rows: every element (no dim) or dim moved last, the others in order.
  Tensor x;
  int d = 0;
  if (dim) {
    d = detail::sort_dim(*dim, t, op);
    std::vector<int64_t> perm;
    for (int k = 0; k < t.dim(); ++k)
      if (k != d) perm.push_back(k);
    perm.push_back(d);
    x = t.dim() == 0 ? t.reshape({1}) : t.permute(Shape(perm));
  } else {
    x = t.reshape({-1});
  }
  const int last = x.dim() - 1;
  const int64_t n = x.size(last);
  Tensor sorted = std::get<0>(sort(x, -1));
  Shape qshape = {q.numel()};
  for (int k = 0; k < x.dim(); ++k) qshape.push_back(1);
  Tensor qb = q.reshape(qshape);  // [Q, 1, ..., 1]
  Tensor nans = isnan(sorted.detach());
  Tensor ranks;
  if (ignore_nan) {
    // Ranks among the non-NaN values; a row of NaN only takes rank 0 (NaN).
    Tensor valid = sum(logical_not(nans), last, true).to(t.dtype());
    ranks = clamp_min(mul(qb, sub(valid, 1.0)), 0.0);
  } else {
    // A row with NaN takes its last rank (NaN).
    ranks = where(any(nans, last, true), double(n - 1), mul(qb, double(n - 1)));
  }
  if (mode == Interpolation::lower) ranks = floor(ranks);
  else if (mode == Interpolation::higher) ranks = ceil(ranks);
  else if (mode == Interpolation::nearest) ranks = round(ranks);
  Shape wide = ranks.sizes();
  wide[wide.size() - 1] = n;
  Tensor rows = unsqueeze(sorted, 0).expand(wide);
  Tensor below = ranks.to(kInt64);
  Tensor result = gather(rows, last + 1, below);
  if (mode == Interpolation::linear || mode == Interpolation::midpoint) {
    Tensor above = ceil(ranks).to(kInt64);
    Tensor weight = mode == Interpolation::midpoint ? full_like(ranks, 0.5) : sub(ranks, below.to(t.dtype()));
    result = add(result, mul(weight, sub(gather(rows, last + 1, above), result)));
  }
  result = result.squeeze(last + 1);  // [Q, rows...]
  if (keepdim) {
    if (dim) {
      result = t.dim() == 0 ? result : unsqueeze(result, d + 1);
    } else {
      Shape kept = {q.numel()};
      for (int k = 0; k < t.dim(); ++k) kept.push_back(1);
      result = result.reshape(kept);
    }
  }
  return scalar_q ? result.select(0, 0) : result;
}

Tensor quantile_scalar(const Tensor& t, double q, std::optional<int64_t> dim, bool keepdim,
                       const std::string& interpolation, bool ignore_nan, const char* op) {
  detail::sort_input(t, op);
  VNN_CHECK(ValueError, q >= 0.0 && q <= 1.0, op, ": q = ", q, " must be in [0, 1]");
  return quantile_impl(t, full({1}, q, TensorOptions(t.device()).with(t.dtype())), true, dim, keepdim,
                       interpolation, ignore_nan, op);
}

Tensor quantile_tensor(const Tensor& t, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                       const std::string& interpolation, bool ignore_nan, const char* op) {
  detail::sort_input(t, op);
  detail::sort_input(q, op, "q");
  VNN_CHECK(ShapeError, q.dim() <= 1, op, ": q must be a scalar or 1-D, got shape ", q.sizes());
  VNN_CHECK(DTypeError, q.dtype() == t.dtype(), op, ": q (", name(q.dtype()), ") must have the input's dtype (",
            name(t.dtype()), ")");
  detail::check_same_device(t, q, op, "q");
  if (q.numel() > 0) {
    const double lo = min(q).item(), hi = max(q).item();
    VNN_CHECK(ValueError, lo >= 0.0 && hi <= 1.0, op, ": q values must be in [0, 1], got values in [", lo, ", ", hi,
              "]");
  }
  return quantile_impl(t, q.reshape({-1}), q.dim() == 0, dim, keepdim, interpolation, ignore_nan, op);
}

// unique / unique_consecutive of `flat` (1-D) whose runs of equal values
// are consecutive in `runs` (flat sorted, or flat itself), `order` the
// positions in flat of runs' elements (undefined: the identity).
std::tuple<Tensor, Tensor, Tensor> compact_runs(const Tensor& t, const Tensor& runs, const Tensor& order,
                                                bool return_inverse, bool return_counts) {
  const int64_t n = runs.numel();
  const TensorOptions longs = TensorOptions(t.device()).with(kInt64);
  if (n == 0) {
    return {runs, return_inverse ? zeros(t.sizes(), longs) : Tensor(), return_counts ? zeros({0}, longs) : Tensor()};
  }
  // first[j]: runs[j] starts a run (NaN != NaN: every NaN its own).
  Tensor first = cat({full({1}, 1.0, TensorOptions(t.device()).with(kBool)),
                      ne(runs.narrow(0, 1, n - 1), runs.narrow(0, 0, n - 1))},
                     0);
  Tensor starts = nonzero(first).view({-1});  // [u] ascending, starts[0] = 0 (one host read: u)
  const int64_t u = starts.numel();
  detail::note_range(starts, 0, n - 1);
  Tensor values = index_select(runs, 0, starts);
  Tensor inverse, counts;
  if (return_counts) {
    Tensor ends = cat({starts.narrow(0, 1, u - 1), full({1}, double(n), longs)}, 0);
    counts = sub(ends, starts);
  }
  if (return_inverse) {
    // Run of element j: the number of starts up to j, less one.
    Tensor group = sub(cumsum(first, 0), full({1}, 1.0, longs));
    inverse = (order.defined() ? scatter(zeros({n}, longs), 0, order, group) : group).view(t.sizes());
  }
  return {values, inverse, counts};
}

}  // namespace

Tensor quantile(const Tensor& t, double q, std::optional<int64_t> dim, bool keepdim, const std::string& interpolation) {
  return quantile_scalar(t, q, dim, keepdim, interpolation, false, "quantile");
}
Tensor quantile(const Tensor& t, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                const std::string& interpolation) {
  return quantile_tensor(t, q, dim, keepdim, interpolation, false, "quantile");
}
Tensor nanquantile(const Tensor& t, double q, std::optional<int64_t> dim, bool keepdim,
                   const std::string& interpolation) {
  return quantile_scalar(t, q, dim, keepdim, interpolation, true, "nanquantile");
}
Tensor nanquantile(const Tensor& t, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                   const std::string& interpolation) {
  return quantile_tensor(t, q, dim, keepdim, interpolation, true, "nanquantile");
}

std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& t, bool /*sorted: always*/, bool return_inverse,
                                          bool return_counts) {
  const char* op = "unique";
  Tensor flat = detail::sort_input(t, op).detach().reshape({-1});
  detail::SortedRows s = detail::sort_rows(flat, 0, false, op);
  return compact_runs(t, s.values, s.indices, return_inverse, return_counts);
}

std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& t, bool return_inverse, bool return_counts) {
  const char* op = "unique_consecutive";
  Tensor flat = detail::sort_input(t, op).detach().reshape({-1});
  return compact_runs(t, flat, Tensor(), return_inverse, return_counts);
}

Tensor bincount(const Tensor& t, const Tensor& weights, int64_t minlength) {
  const char* op = "bincount";
  detail::sort_input(t, op);
  VNN_CHECK(ShapeError, t.dim() == 1, "bincount: input must be 1-D, got shape ", t.sizes());
  VNN_CHECK(DTypeError, is_integral(t.dtype()),
            "bincount: input must be an integer tensor (int8, int16, int32, int64, uint8), got ", name(t.dtype()));
  VNN_CHECK(ValueError, minlength >= 0, "bincount: minlength = ", minlength, " must be non-negative");
  if (weights.defined()) {
    VNN_CHECK(ShapeError, weights.dim() == 1 && weights.size(0) == t.size(0), "bincount: weights of shape ",
              weights.sizes(), " must be 1-D with the input's length ", t.size(0));
    detail::check_same_device(t, weights, op, "weights");
  }
  const DType out_dtype = !weights.defined() ? kInt64 : weights.dtype() == kFloat32 ? kFloat32 : kFloat64;
  const TensorOptions opt = TensorOptions(t.device()).with(out_dtype);
  int64_t size = minlength;
  if (t.numel() > 0) {
    const int64_t lo = min(t).item<int64_t>(), hi = max(t).item<int64_t>();
    VNN_CHECK(ValueError, lo >= 0, "bincount: input must hold non-negative values, got ", lo);
    size = std::max(size, hi + 1);
  }
  Tensor out = zeros({size}, opt);
  if (t.numel() == 0) return out;
  Tensor index = t.detach().to(kInt64);
  detail::note_range(index, 0, size - 1);
  Tensor src = weights.defined() ? weights.detach().to(out_dtype) : ones({t.numel()}, opt);
  return index_add(out, 0, index, src);
}

Tensor histc(const Tensor& t, int64_t bins, double lo, double hi) {
  const char* op = "histc";
  detail::sort_input(t, op);
  VNN_CHECK(DTypeError, is_floating(t.dtype()), "histc: input must be floating, got ", name(t.dtype()),
            "; convert it with .to(vnn::kFloat32)");
  VNN_CHECK(ValueError, bins > 0, "histc: bins = ", bins, " must be positive");
  VNN_CHECK(ValueError, lo <= hi, "histc: max = ", hi, " must be larger than or equal to min = ", lo);
  const DType compute = t.dtype() == kFloat64 ? kFloat64 : kFloat32;
  Tensor x = t.detach().reshape({-1}).to(compute);
  if (lo == hi && x.numel() > 0) lo = min(x).item(), hi = max(x).item();
  if (lo == hi) lo -= 1, hi += 1;
  VNN_CHECK(ValueError, std::isfinite(lo) && std::isfinite(hi), "histc: range [", lo, ", ", hi,
            "] is not finite (the input holds inf or NaN); pass min and max");
  const TensorOptions opt = TensorOptions(t.device()).with(compute);
  Tensor out = zeros({bins}, opt);
  if (x.numel() == 0) return out.to(t.dtype());
  // PyTorch's bin: (x - min) * bins / (max - min), x == max in the last.
  Tensor inside = logical_and(ge(x, lo), le(x, hi));  // NaN: false
  Tensor bin = clamp(floor(div(mul(sub(x, lo), double(bins)), hi - lo)), 0.0, double(bins - 1));
  Tensor index = where(inside, bin, 0.0).to(kInt64);
  detail::note_range(index, 0, bins - 1);
  return index_add(out, 0, index, inside.to(compute)).to(t.dtype());
}

}  // namespace vnn
