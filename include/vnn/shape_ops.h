// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// LibTorch's shape, joining, splitting and scatter-by-view ops, with
// PyTorch's names, defaults and semantics (products are in vnn/products.h).
//  - Each is composed of existing vnn ops (views, cat, index_select,
//    gather, scatter, reductions), so it runs on every device and is
//    differentiable through its parts.
//  - Views stay views where PyTorch's are (movedim, swapaxes, unbind,
//    diagonal, the split forms, atleast_*, broadcast_tensors, meshgrid);
//    the rest return new tensors.
//  - dims count from the end when negative; an out-of-range dim is an
//    IndexError, mismatched shapes a ShapeError, a negative or overflowing
//    size a ValueError; each message names the op.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vnn/tensor.h"

namespace vnn {

// ---- reordering ---------------------------------------------------------
/// A copy with the order of each dim of `dims` reversed (torch.flip).
Tensor flip(const Tensor& t, const Dims& dims);
/// flip(t, 1): columns reversed (t needs 2 dims or more).
Tensor fliplr(const Tensor& t);
/// flip(t, 0): rows reversed (t needs 1 dim or more).
Tensor flipud(const Tensor& t);
/// A copy with elements shifted by shifts[i] along dims[i], wrapping around;
/// dims empty: the flattened tensor rolled by one shift, shape kept.
Tensor roll(const Tensor& t, const Dims& shifts, const Dims& dims = {});
/// A copy rotated by k quarter turns from dims[0] towards dims[1] (k may be negative).
Tensor rot90(const Tensor& t, int64_t k = 1, const Dims& dims = {0, 1});

// ---- repetition -----------------------------------------------------------
/// A copy tiled repeats[i] times along dim i; repeats has at least t.dim()
/// entries (extra ones add leading dims). Negative repeats: ValueError.
Tensor repeat(const Tensor& t, const Dims& repeats);
/// repeat with `dims` padded by leading ones to t.dim() (torch.tile).
Tensor tile(const Tensor& t, const Dims& dims);
/// Each element repeated `repeats` times along dim (none: of the flattened tensor); output_size,
/// when given, is the result's length along dim (ValueError when it is another).
Tensor repeat_interleave(const Tensor& t, int64_t repeats, std::optional<int64_t> dim = std::nullopt,
                         std::optional<int64_t> output_size = std::nullopt);
/// Element i along dim repeated repeats[i] times (repeats: 0-D or 1-D integer
/// tensor of non-negative counts; none: of the flattened tensor).
Tensor repeat_interleave(const Tensor& t, const Tensor& repeats, std::optional<int64_t> dim = std::nullopt,
                         std::optional<int64_t> output_size = std::nullopt);
/// int64 [0, 0, ..., 1, ...]: index i repeated repeats[i] times (repeats: 1-D integer counts).
Tensor repeat_interleave(const Tensor& repeats);

// ---- views and dim moves ------------------------------------------------------
/// The views t.select(dim, i) for each i.
std::vector<Tensor> unbind(const Tensor& t, int dim = 0);
/// A view without those of `dims` whose size is 1 (torch.squeeze with a dim tuple; one dim: vnn/indexing.h).
Tensor squeeze(const Tensor& t, const Dims& dims);
/// A view with dims `source` moved to positions `destination`, the others in order.
Tensor movedim(const Tensor& t, const Dims& source, const Dims& destination);
/// movedim.
Tensor moveaxis(const Tensor& t, const Dims& source, const Dims& destination);
/// t.transpose(axis0, axis1).
Tensor swapaxes(const Tensor& t, int axis0, int axis1);
/// t.transpose(dim0, dim1).
Tensor swapdims(const Tensor& t, int dim0, int dim1);
/// A 1-D view when t is contiguous, else a 1-D copy.
Tensor ravel(const Tensor& t);
/// t.narrow(dim, start, length) as a new tensor.
Tensor narrow_copy(const Tensor& t, int dim, int64_t start, int64_t length);
// ---- the *_copy forms of the views (at::view_copy ...) ----------------------
// The view op's values as a new contiguous tensor (its checks and errors;
// differentiable as the view is).
/// t as a new tensor (at::alias_copy).
Tensor alias_copy(const Tensor& t);
/// t.detach() as a new tensor, cut from the graph (at::detach_copy).
Tensor detach_copy(const Tensor& t);
/// t.view(size), copied.
Tensor view_copy(const Tensor& t, const Shape& size);
/// t.permute(dims), copied.
Tensor permute_copy(const Tensor& t, const Shape& dims);
/// t.expand(size), copied.
Tensor expand_copy(const Tensor& t, const Shape& size);
/// t.as_strided(size, stride, storage_offset), copied (offset none: t's own; not differentiable, as as_strided).
Tensor as_strided_copy(const Tensor& t, const Shape& size, const Shape& stride,
                       std::optional<int64_t> storage_offset = std::nullopt);
/// diagonal(t, offset, dim1, dim2), copied.
Tensor diagonal_copy(const Tensor& t, int64_t offset = 0, int dim1 = 0, int dim2 = 1);
/// t.select(dim, index), copied.
Tensor select_copy(const Tensor& t, int dim, int64_t index);
/// t.slice(dim, start, end, step), copied.
Tensor slice_copy(const Tensor& t, int dim = 0, std::optional<int64_t> start = std::nullopt,
                  std::optional<int64_t> end = std::nullopt, int64_t step = 1);
/// t.t(), copied.
Tensor t_copy(const Tensor& t);
/// t.transpose(dim0, dim1), copied.
Tensor transpose_copy(const Tensor& t, int dim0, int dim1);
/// t.squeeze(), copied.
Tensor squeeze_copy(const Tensor& t);
/// t.squeeze(dim), copied.
Tensor squeeze_copy(const Tensor& t, int dim);
/// t.unsqueeze(dim), copied.
Tensor unsqueeze_copy(const Tensor& t, int dim);
/// unbind(t, dim), each part copied.
std::vector<Tensor> unbind_copy(const Tensor& t, int dim = 0);
/// t.split(split_size, dim), each part copied.
std::vector<Tensor> split_copy(const Tensor& t, int64_t split_size, int dim = 0);
/// t.split(split_sizes, dim), each part copied.
std::vector<Tensor> split_with_sizes_copy(const Tensor& t, const std::vector<int64_t>& split_sizes, int dim = 0);

/// t viewed with at least one dim (0-D becomes [1]).
Tensor atleast_1d(const Tensor& t);
/// t viewed with at least two dims ([n] becomes [1, n]).
Tensor atleast_2d(const Tensor& t);
/// t viewed with at least three dims ([n] becomes [1, n, 1], [m, n] becomes [m, n, 1]).
Tensor atleast_3d(const Tensor& t);
/// atleast_1d of each tensor.
std::vector<Tensor> atleast_1d(const std::vector<Tensor>& tensors);
/// atleast_2d of each tensor.
std::vector<Tensor> atleast_2d(const std::vector<Tensor>& tensors);
/// atleast_3d of each tensor.
std::vector<Tensor> atleast_3d(const std::vector<Tensor>& tensors);
/// Stride-0 views of every tensor expanded to their common broadcast shape.
std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& tensors);
/// The NumPy broadcast of any number of shapes (ShapeError when they do not broadcast).
Shape broadcast_shapes(const std::vector<Shape>& shapes);

// ---- diagonals ------------------------------------------------------------
/// 1-D t: a square matrix with t on diagonal `diagonal` (> 0 above the main
/// one); 2-D t: a 1-D copy of that diagonal.
Tensor diag(const Tensor& t, int64_t diagonal = 0);
/// A view of the diagonal `offset` of the (dim1, dim2) planes, as the last
/// dim; dims dim1 and dim2 are removed. Length 0 when the offset passes the edge.
Tensor diagonal(const Tensor& t, int64_t offset = 0, int dim1 = 0, int dim2 = 1);
/// The windows of `size` elements every `step` along dim, as a view with the window as a new
/// last dim (Tensor.unfold: dim's size becomes (n - size) / step + 1).
Tensor unfold(const Tensor& t, int dim, int64_t size, int64_t step);
/// unfold, copied (at::unfold_copy).
Tensor unfold_copy(const Tensor& t, int dim, int64_t size, int64_t step);
/// A tensor whose (dim1, dim2) planes of the result hold t's last dim on
/// diagonal `offset`, zero elsewhere (the inverse of diagonal).
Tensor diag_embed(const Tensor& t, int64_t offset = 0, int dim1 = -2, int dim2 = -1);
/// diag of the flattened t: a square matrix.
Tensor diagflat(const Tensor& t, int64_t offset = 0);
/// The sum of a 2-D t's main diagonal (0-D; integers sum to int64).
Tensor trace(const Tensor& t);
/// The int64 [2, N] row and column indices of the lower triangle of a row x col matrix,
/// diagonal `offset` included, in row-major order.
Tensor tril_indices(int64_t row, int64_t col, int64_t offset = 0, const TensorOptions& options = kInt64);
/// The [2, N] indices of the upper triangle (diagonal `offset` and above), row-major.
Tensor triu_indices(int64_t row, int64_t col, int64_t offset = 0, const TensorOptions& options = kInt64);
/// A block-diagonal matrix of the tensors (0-D: 1x1, 1-D: one row), zero elsewhere; dtypes promote.
Tensor block_diag(const std::vector<Tensor>& tensors);
/// The cartesian product of 1-D tensors as [N, k] rows (one tensor: itself).
Tensor cartesian_prod(const std::vector<Tensor>& tensors);
/// The r-length combinations of a 1-D t's elements as [N, r] rows, in
/// itertools' order (with_replacement: itertools.combinations_with_replacement).
Tensor combinations(const Tensor& t, int64_t r = 2, bool with_replacement = false);
/// Coordinate grids of 0-D or 1-D tensors, as expanded views. indexing "ij":
/// grid i varies along dim i; "xy": the first two dims swapped (Cartesian).
std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, const std::string& indexing = "ij");

// ---- joining and splitting --------------------------------------------------
/// cat of the tensors along dim 1 (dim 0 when they are 1-D); 0-D ones count as 1-D.
Tensor hstack(const std::vector<Tensor>& tensors);
/// cat of atleast_2d of the tensors along dim 0.
Tensor vstack(const std::vector<Tensor>& tensors);
/// vstack.
Tensor row_stack(const std::vector<Tensor>& tensors);
/// cat of atleast_3d of the tensors along dim 2.
Tensor dstack(const std::vector<Tensor>& tensors);
/// 0-D and 1-D tensors as columns [n, 1], then hstack.
Tensor column_stack(const std::vector<Tensor>& tensors);
/// `sections` views along dim: the first size % sections one longer (sections > 0).
std::vector<Tensor> tensor_split(const Tensor& t, int64_t sections, int dim = 0);
/// Views split before each index along dim, Python slice bounds
/// (t[:i0], t[i0:i1], ..., t[ik:]).
std::vector<Tensor> tensor_split(const Tensor& t, const std::vector<int64_t>& indices, int dim = 0);
/// tensor_split along dim 1 (dim 0 for 1-D) into equal sections (ValueError when they do not divide).
std::vector<Tensor> hsplit(const Tensor& t, int64_t sections);
/// tensor_split(t, indices) along dim 1 (dim 0 for 1-D).
std::vector<Tensor> hsplit(const Tensor& t, const std::vector<int64_t>& indices);
/// tensor_split along dim 0 into equal sections (t needs 2 dims or more).
std::vector<Tensor> vsplit(const Tensor& t, int64_t sections);
/// tensor_split(t, indices, 0) (t needs 2 dims or more).
std::vector<Tensor> vsplit(const Tensor& t, const std::vector<int64_t>& indices);
/// tensor_split along dim 2 into equal sections (t needs 3 dims or more).
std::vector<Tensor> dsplit(const Tensor& t, int64_t sections);
/// tensor_split(t, indices, 2) (t needs 3 dims or more).
std::vector<Tensor> dsplit(const Tensor& t, const std::vector<int64_t>& indices);

// ---- indexing by position -------------------------------------------------------
/// The elements of the flattened t at `index` (int64/int32, any shape, negative
/// counts from the end); the result has index's shape.
Tensor take(const Tensor& t, const Tensor& index);
/// A copy of self with source's elements written at the flat positions `index` (negative
/// count from the end); accumulate: added instead (torch.put). index and source have as many elements.
Tensor put(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate = false);
/// put in place; returns self.
Tensor& put_(Tensor& self, const Tensor& index, const Tensor& source, bool accumulate = false);
/// The coordinates in a tensor of `shape` of each flat index (negative count from the end):
/// one int64 tensor of indices' shape per dim (torch.unravel_index).
std::vector<Tensor> unravel_index(const Tensor& indices, const Shape& shape);
/// gather(t, dim, indices) with t and indices broadcast except along dim;
/// dim none: take of the flattened t (no negative indices).
Tensor take_along_dim(const Tensor& t, const Tensor& indices, std::optional<int64_t> dim = std::nullopt);
/// A copy of self with source.select(dim, i) written at self.select(dim, index[i])
/// (index 1-D or 0-D; duplicates keep one of the values, unspecified which).
Tensor index_copy(const Tensor& self, int dim, const Tensor& index, const Tensor& source);
/// index_copy in place; returns self.
Tensor& index_copy_(Tensor& self, int dim, const Tensor& index, const Tensor& source);
/// A copy of self with the slices self.select(dim, index[i]) set to value.
Tensor index_fill(const Tensor& self, int dim, const Tensor& index, double value);
/// index_fill in place; returns self.
Tensor& index_fill_(Tensor& self, int dim, const Tensor& index, double value);
/// index_fill with a 0-D tensor value (differentiable in value too).
Tensor index_fill(const Tensor& self, int dim, const Tensor& index, const Tensor& value);
/// index_fill_ with a 0-D tensor value.
Tensor& index_fill_(Tensor& self, int dim, const Tensor& index, const Tensor& value);
/// A copy of self with src (of select's shape) written at self.select(dim, index).
Tensor select_scatter(const Tensor& self, const Tensor& src, int dim, int64_t index);
/// A copy of self with src (of the slice's shape) written at self.slice(dim, start, end, step).
Tensor slice_scatter(const Tensor& self, const Tensor& src, int dim = 0, std::optional<int64_t> start = std::nullopt,
                     std::optional<int64_t> end = std::nullopt, int64_t step = 1);
/// A copy of self with src (of the diagonal's shape) written at diagonal(self, offset, dim1, dim2).
Tensor diagonal_scatter(const Tensor& self, const Tensor& src, int64_t offset = 0, int dim1 = 0, int dim2 = 1);

}  // namespace vnn
