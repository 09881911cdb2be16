// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Sorting and searching, with PyTorch's names and semantics.
//  - Every sort is stable (stable = true costs nothing) and runs on the
//    tensor's device (VNN_OP_SORT: a parallel merge sort per row).
//  - NaN is the largest value: last ascending, first descending; -0.0 and
//    0.0 are equal (they keep their order).
//  - float32, float64, int32, int64, uint8 and bool sort natively; float16
//    and bfloat16 sort as float32 (exactly) and come back in their dtype.
//  - Values are differentiable (the gradient is scattered back through the
//    indices); indices, counts and positions are int64 (int32 where asked).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

#include "vnn/tensor.h"

namespace vnn {

/// (sorted values, int64 indices) along `dim`, as torch.sort (stable).
std::tuple<Tensor, Tensor> sort(const Tensor& t, int64_t dim = -1, bool descending = false);
/// torch.sort(t, stable=stable, dim=dim, descending=descending): every vnn sort is stable.
std::tuple<Tensor, Tensor> sort(const Tensor& t, bool stable, int64_t dim, bool descending);
/// The int64 indices that sort t along `dim` (stable).
Tensor argsort(const Tensor& t, int64_t dim = -1, bool descending = false);
/// torch.argsort(t, stable=stable, dim=dim, descending=descending).
Tensor argsort(const Tensor& t, bool stable, int64_t dim, bool descending);
/// sort(t, 0) values: t sorted along its first dim.
Tensor msort(const Tensor& t);

/// (values, int64 indices) of the k-th smallest element (k from 1) along
/// `dim`; IndexError unless 1 <= k <= size(dim). NaN counts as the largest.
std::tuple<Tensor, Tensor> kthvalue(const Tensor& t, int64_t k, int64_t dim = -1, bool keepdim = false);
/// The lower median of every element, 0-dim; NaN when any element is NaN.
Tensor median(const Tensor& t);
/// (lower medians, int64 indices) along `dim`; a row with NaN gives NaN (its first NaN's index).
std::tuple<Tensor, Tensor> median(const Tensor& t, int64_t dim, bool keepdim = false);
/// median(t) ignoring NaN (NaN only when every element is NaN).
Tensor nanmedian(const Tensor& t);
/// median(t, dim, keepdim) ignoring NaN.
std::tuple<Tensor, Tensor> nanmedian(const Tensor& t, int64_t dim, bool keepdim = false);
/// (most frequent values, int64 indices of their last occurrence) along
/// `dim`; ties go to the smallest value.
std::tuple<Tensor, Tensor> mode(const Tensor& t, int64_t dim = -1, bool keepdim = false);

/// The q-th quantile (q in [0, 1]) over `dim` (every element when absent),
/// torch.quantile: interpolation "linear", "lower", "higher", "midpoint" or
/// "nearest" between the two closest ranks. float32 / float64; a row with
/// NaN gives NaN.
Tensor quantile(const Tensor& t, double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                const std::string& interpolation = "linear");
/// quantile with a 1-D (or 0-dim) q of t's dtype: the result's first dim is q's.
Tensor quantile(const Tensor& t, const Tensor& q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                const std::string& interpolation = "linear");
/// quantile ignoring NaN (NaN only for a row that is all NaN).
Tensor nanquantile(const Tensor& t, double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                   const std::string& interpolation = "linear");
/// nanquantile with a tensor q.
Tensor nanquantile(const Tensor& t, const Tensor& q, std::optional<int64_t> dim = std::nullopt,
                   bool keepdim = false, const std::string& interpolation = "linear");

/// The distinct elements of t (flattened), ascending (sorted = false gives
/// them sorted too), with LibTorch's _unique2 triple: (values, inverse:
/// int64 of t's shape indexing values, counts: int64 per value); inverse and
/// counts are undefined tensors unless asked for. NaNs are all distinct.
std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& t, bool sorted = true, bool return_inverse = false,
                                          bool return_counts = false);
/// The first element of each run of equal consecutive elements of t
/// (flattened), with inverse and counts as unique.
std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& t, bool return_inverse = false,
                                                      bool return_counts = false);

/// For each of `values`, its insertion position in the innermost dim of
/// `sorted_sequence` (1-D: shared by every value; N-D: its leading dims
/// match values'), as torch.searchsorted. right (or side = "right"): after
/// equal elements; sorter: int64 indices that sort sorted_sequence along its
/// last dim. int64 positions (out_int32: int32). A sequence that is not
/// sorted gives unspecified positions, never an error or a bad access.
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32 = false, bool right = false,
                    const std::optional<std::string>& side = std::nullopt, const Tensor& sorter = {});
/// searchsorted of one value (a 0-dim result for a 1-D sequence).
Tensor searchsorted(const Tensor& sorted_sequence, double value, bool out_int32 = false, bool right = false,
                    const std::optional<std::string>& side = std::nullopt, const Tensor& sorter = {});
/// The bucket of each value given ascending 1-D `boundaries`: searchsorted(boundaries, values, out_int32, right).
Tensor bucketize(const Tensor& values, const Tensor& boundaries, bool out_int32 = false, bool right = false);

/// Occurrences of each value of a 1-D non-negative integer tensor, as
/// torch.bincount: size max(t) + 1 (at least minlength); int64, or the sum
/// of `weights` per value (float32 weights: float32, others float64).
Tensor bincount(const Tensor& t, const Tensor& weights = {}, int64_t minlength = 0);
/// A histogram of `bins` equal bins over [min, max] (t's min and max when
/// both are 0), as torch.histc: elements outside (and NaN) are left out,
/// max falls in the last bin; t's floating dtype.
Tensor histc(const Tensor& t, int64_t bins = 100, double min = 0, double max = 0);

}  // namespace vnn
