// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Scans and the ops built on them, with PyTorch's names and semantics.
//  - cumsum / cumprod / cummax / cummin / logcumsumexp: inclusive scans
//    along one dim (negative counts from the end; a 0-D tensor takes dim 0
//    or -1), run as parallel scans on every device (VNN_OP_SCAN).
//  - cumsum / cumprod of bool or integer tensors give int64 unless `dtype`
//    says otherwise; with `dtype` the input is converted to it first.
//  - cummax / cummin keep the dtype and return int64 indices: among equal
//    values the latest index, and once a NaN is met it stays (its index is
//    that of the latest NaN), as PyTorch's.
//  - nonzero, masked_select and masked_scatter count their elements on the
//    host once (one synchronisation, as PyTorch's), then compact on the
//    device: a scan of the mask gives each element its place.
#pragma once
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "vnn/tensor.h"

namespace vnn {

/// The running sum along `dim`: out[..., j, ...] = t[..., 0, ...] + ... + t[..., j, ...].
Tensor cumsum(const Tensor& t, int64_t dim, std::optional<DType> dtype = std::nullopt);
/// cumsum in place (the result converted to t's dtype).
Tensor& cumsum_(Tensor& t, int64_t dim, std::optional<DType> dtype = std::nullopt);
/// The running product along `dim` (its gradient is exact with zeros in t).
Tensor cumprod(const Tensor& t, int64_t dim, std::optional<DType> dtype = std::nullopt);
/// cumprod in place (the result converted to t's dtype).
Tensor& cumprod_(Tensor& t, int64_t dim, std::optional<DType> dtype = std::nullopt);
/// The running maximum along `dim` and the int64 index where it was found: `auto [v, i] = vnn::cummax(t, 0);`.
std::tuple<Tensor, Tensor> cummax(const Tensor& t, int64_t dim);
/// The running minimum along `dim` and its int64 index.
std::tuple<Tensor, Tensor> cummin(const Tensor& t, int64_t dim);
/// log(cumsum(exp(t))) along `dim`, computed stably (floating dtypes).
Tensor logcumsumexp(const Tensor& t, int64_t dim);

/// The int64 indices [n, t.dim()] of t's non-zero elements in row-major order (NaN counts as non-zero).
Tensor nonzero(const Tensor& t);
/// nonzero(t) as one int64 index tensor [n] per dim (torch.nonzero(t, as_tuple=True)); a 0-D t counts as 1-D.
std::vector<Tensor> nonzero_numpy(const Tensor& t);
/// The same as nonzero(t).
Tensor argwhere(const Tensor& t);
/// torch.where(condition) with one argument: nonzero_numpy(condition).
std::vector<Tensor> where(const Tensor& condition);
/// The int64 number of non-zero elements over `dims` (all when empty).
Tensor count_nonzero(const Tensor& t, const Dims& dims = {});
/// The elements of t where mask (bool) is true, as a 1-D tensor; t and mask broadcast together.
Tensor masked_select(const Tensor& t, const Tensor& mask);
/// A copy of t whose elements where mask (bool) is true take source's elements in order; t and mask
/// broadcast together (source needs at least as many elements as mask has true ones).
Tensor masked_scatter(const Tensor& t, const Tensor& mask, const Tensor& source);
/// masked_scatter in place (mask broadcasts to t's shape).
Tensor& masked_scatter_(Tensor& t, const Tensor& mask, const Tensor& source);

/// The sum over `dims` (all when empty) counting NaN as 0 (integer tensors: sum).
Tensor nansum(const Tensor& t, const Dims& dims = {}, bool keepdim = false);
/// The mean of the non-NaN elements over `dims` (all when empty; floating dtypes); NaN where all are NaN.
Tensor nanmean(const Tensor& t, const Dims& dims = {}, bool keepdim = false);
/// (amin, amax) over `dim`, or over every element when dim is absent (IndexError when empty).
std::tuple<Tensor, Tensor> aminmax(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
/// (var, mean) over `dims` with var's correction (floating dtypes).
std::tuple<Tensor, Tensor> var_mean(const Tensor& t, const Dims& dims = {}, int64_t correction = 1,
                                    bool keepdim = false);
/// (std, mean) over `dims` with std's correction (floating dtypes).
std::tuple<Tensor, Tensor> std_mean(const Tensor& t, const Dims& dims = {}, int64_t correction = 1,
                                    bool keepdim = false);

}  // namespace vnn
