// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reductions and softmax, with PyTorch's names and semantics.
//  - dims: any subset of the tensor's dims (negative counts from the end);
//    an empty list reduces every dim. keepdim keeps reduced dims as size 1.
//  - sum / prod of integer or bool tensors give int64; of floats the input
//    dtype (float32 accumulates in float64 inside the kernel).
//  - mean needs a floating dtype (convert integers with .to(vnn::kFloat32)).
//  - max / min / argmax / argmin of an empty reduction throw IndexError.
#pragma once
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "vnn/tensor.h"

namespace vnn {

/// The sum of all elements, 0-dim (int64 for integer or bool input).
Tensor sum(const Tensor& t);
/// The sum over `dims` (one dim, a list; all when empty); keepdim keeps them as size 1.
Tensor sum(const Tensor& t, const Dims& dims, bool keepdim = false);
/// The mean of all elements, 0-dim (floating dtypes only).
Tensor mean(const Tensor& t);
/// The mean over `dims` (one dim, a list; all when empty; floating dtypes only).
Tensor mean(const Tensor& t, const Dims& dims, bool keepdim = false);
/// The product of all elements, 0-dim (int64 for integer or bool input).
Tensor prod(const Tensor& t);
/// The product over one dim.
Tensor prod(const Tensor& t, int dim, bool keepdim = false);

// Largest / smallest values over dims (no indices).
/// The largest values over `dims` (all when empty), without indices.
Tensor amax(const Tensor& t, const Dims& dims = {}, bool keepdim = false);
/// The smallest values over `dims` (all when empty), without indices.
Tensor amin(const Tensor& t, const Dims& dims = {}, bool keepdim = false);
// The whole tensor's max / min (a 0-dim tensor).
/// The largest element, 0-dim (IndexError when empty).
Tensor max(const Tensor& t);
/// The smallest element, 0-dim (IndexError when empty).
Tensor min(const Tensor& t);
/// Values and int64 indices along one dim: auto [v, i] = vnn::max(t, 1);
std::tuple<Tensor, Tensor> max(const Tensor& t, int dim, bool keepdim = false);
/// Smallest values and their int64 indices along `dim`: `auto [v, i] = vnn::min(t, 1);`.
std::tuple<Tensor, Tensor> min(const Tensor& t, int dim, bool keepdim = false);
/// Index of the first largest / smallest element (of the flattened tensor,
/// or along dim). NaN counts as the largest and the smallest.
Tensor argmax(const Tensor& t);
/// The int64 index of the first largest element along `dim` (NaN counts as largest).
Tensor argmax(const Tensor& t, int dim, bool keepdim = false);
/// The int64 index of the first smallest element of the flattened tensor (NaN counts as smallest).
Tensor argmin(const Tensor& t);
/// The int64 index of the first smallest element along `dim` (NaN counts as smallest).
Tensor argmin(const Tensor& t, int dim, bool keepdim = false);

/// The k largest (largest = false: smallest) values along `dim` and their
/// int64 indices, as torch.topk: shapes are t's with size k along dim. NaN
/// counts as the largest value; ties keep the lower index first. A stable
/// sort of the rows on t's device (vnn/sorting.h) picks them; the values are
/// differentiable. sorted = false may return them sorted all the same.
std::tuple<Tensor, Tensor> topk(const Tensor& t, int64_t k, int dim = -1, bool largest = true, bool sorted = true);

/// Variance / standard deviation over dims: sum((x - mean)^2) / (N -
/// correction), computed in two passes (numerically stable). correction 1 is
/// the unbiased (Bessel) estimate, 0 the population one; N - correction <= 0
/// gives inf or nan, like PyTorch. Floating dtypes only. PyTorch's
/// unbiased=true/false is correction 1/0 (a bool converts to that).
/// Call it vnn::std (as torch::std): after `using namespace vnn`, a bare
/// std(...) is ambiguous with namespace std; std::vector etc. are unaffected.
/// `dims`: one dim or a list (var(t, 1), var(t, {0, 1}, 0)).
Tensor var(const Tensor& t, const Dims& dims = {}, int64_t correction = 1, bool keepdim = false);
/// The standard deviation over `dims` (sqrt of var; call it vnn::std).
Tensor std(const Tensor& t, const Dims& dims = {}, int64_t correction = 1, bool keepdim = false);

/// Vector p-norm over dims (all dims when empty): p = 1, 2, any p > 0,
/// INFINITY (max |x|), -INFINITY (min |x|), 0 (count of non-zeros); "fro" is
/// the 2-norm over the given dims. Floating dtypes only.
Tensor norm(const Tensor& t, double p = 2.0, const Dims& dims = {}, bool keepdim = false);
/// A named norm over `dims`: "fro" is the 2-norm (ValueError for other names).
Tensor norm(const Tensor& t, const std::string& p, const Dims& dims = {}, bool keepdim = false);

/// log(sum(exp(x))) over dims, shifted by the maximum (never overflows);
/// integer inputs give float32; an empty reduction gives -inf.
Tensor logsumexp(const Tensor& t, const Dims& dims, bool keepdim = false);

/// Whether any / all elements are non-zero (NaN counts as non-zero); any
/// dtype in, bool out. Empty reductions: any() false, all() true.
Tensor any(const Tensor& t, const Dims& dims = {}, bool keepdim = false);
/// Whether all elements over `dims` (all when empty) are non-zero, bool result (empty: true).
Tensor all(const Tensor& t, const Dims& dims = {}, bool keepdim = false);

/// Numerically stable softmax / log_softmax along dim (floating dtypes).
Tensor softmax(const Tensor& t, int dim);
/// log(softmax(t, dim)) computed stably (floating dtypes).
Tensor log_softmax(const Tensor& t, int dim);

// Whole-tensor comparisons (torch.isclose / allclose / equal). Both operands
// on one device; they broadcast. isclose and allclose need one dtype
// (DTypeError otherwise) and rtol, atol >= 0 (ValueError).
/// |a - b| <= atol + rtol * |b| elementwise, bool; equal values (infinities
/// too) are close; NaN is close to NaN only with equal_nan.
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
/// Whether every element of isclose(a, b, ...) is true (synchronises).
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
/// Whether a and b have the same sizes and equal elements (NaN is unequal; synchronises).
bool equal(const Tensor& a, const Tensor& b);

}  // namespace vnn
