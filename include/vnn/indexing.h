// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Joining, splitting and indexing, with PyTorch's names and semantics.
//  - Index tensors are int64 or int32 (anything else: DTypeError) and live
//    on the data's device. Every index is checked on the host before the
//    kernel runs: one outside [0, size) throws IndexError naming the op,
//    the value and the size (negative indices are out of range, as in
//    PyTorch's index_select / gather / scatter / index_add).
//  - scatter (set) with duplicate indices keeps one of the written values,
//    unspecified which (as in PyTorch); scatter_add and index_add sum every
//    contribution (atomics; float sums may round in any order).
//  - The in-place forms write through self's strides; a self with a
//    broadcast (stride-0) dimension is rejected.
#pragma once
#include <cstdint>
#include <vector>

#include "vnn/tensor.h"

namespace vnn {

// Shape views (the Tensor members of the same names).
/// t.squeeze(): a view without size-1 dims.
Tensor squeeze(const Tensor& t);
/// t.squeeze(dim): a view without `dim` if its size is 1.
Tensor squeeze(const Tensor& t, int dim);
/// t.unsqueeze(dim): a view with a new size-1 dim.
Tensor unsqueeze(const Tensor& t, int dim);
/// t.broadcast_to(shape): a stride-0 view of t expanded to `shape`.
Tensor broadcast_to(const Tensor& t, const Shape& shape);
/// t.flatten(start_dim, end_dim); note the default start_dim 0 here (all dims).
Tensor flatten(const Tensor& t, int start_dim = 0, int end_dim = -1);
/// t.unflatten(dim, sizes): splits `dim` into `sizes`.
Tensor unflatten(const Tensor& t, int dim, const Shape& sizes);

// Joins along an existing dim (cat) or a new one (stack). The result dtype
// promotes over all inputs; all inputs live on one device. cat skips 1-D
// empty tensors (shape [0]) as PyTorch does.
/// Joins `tensors` along existing dim `dim` (sizes must agree elsewhere; 1-D empty tensors are skipped).
Tensor cat(const std::vector<Tensor>& tensors, int dim = 0);
/// Joins same-shaped `tensors` along a new dim `dim`.
Tensor stack(const std::vector<Tensor>& tensors, int dim = 0);

// Views; see Tensor::split / Tensor::chunk.
/// t.split(split_size, dim): views of split_size positions (the last may be shorter).
std::vector<Tensor> split(const Tensor& t, int64_t split_size, int dim = 0);
/// t.split(sizes, dim): views of the given sizes.
std::vector<Tensor> split(const Tensor& t, const std::vector<int64_t>& sizes, int dim = 0);
/// t.chunk(chunks, dim): that many near-equal views.
std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int dim = 0);

/// out = t with dim indexed by a 0-D or 1-D index: out.size(dim) = index.numel().
Tensor index_select(const Tensor& t, int dim, const Tensor& index);
/// out[i][j][k] = t[index[i][j][k]][j][k] (dim 0); index has t's ndim and
/// index.size(d) <= t.size(d) for d != dim; out has index's shape.
Tensor gather(const Tensor& t, int dim, const Tensor& index);
/// self[index[i][j][k]][j][k] = src[i][j][k] (dim 0), for every element of
/// index; index.size(d) <= src.size(d) for every d and <= self.size(d) for
/// d != dim. src has self's dtype.
Tensor& scatter_(Tensor& self, int dim, const Tensor& index, const Tensor& src);
/// The out-of-place scatter_: a copy of self with src written at index.
Tensor scatter(const Tensor& self, int dim, const Tensor& index, const Tensor& src);
/// As scatter, adding: self[index[i][j][k]][j][k] += src[i][j][k].
Tensor& scatter_add_(Tensor& self, int dim, const Tensor& index, const Tensor& src);
/// The out-of-place scatter_add_: a copy of self with src added at index.
Tensor scatter_add(const Tensor& self, int dim, const Tensor& index, const Tensor& src);
/// self.select(dim, index[i]) += alpha * src.select(dim, i); index is 1-D of
/// length src.size(dim); src has self's dtype and sizes except along dim.
Tensor& index_add_(Tensor& self, int dim, const Tensor& index, const Tensor& src, double alpha = 1.0);
/// The out-of-place index_add_: a copy of self with alpha * src added at index.
Tensor index_add(const Tensor& self, int dim, const Tensor& index, const Tensor& src, double alpha = 1.0);

/// int64 one-hot rows: out shape labels.shape + [num_classes]; -1 takes
/// max(labels) + 1. Labels must lie in [0, num_classes).
Tensor one_hot(const Tensor& labels, int64_t num_classes = -1);
/// Rows of a 2-D weight [num_embeddings, dim] picked by indices of any
/// shape: out shape indices.shape + [dim].
Tensor embedding(const Tensor& weight, const Tensor& indices);
/// The gradient of embedding with respect to weight: zeros
/// [num_weights, dim] with each grad row added at its index (repeats sum).
Tensor embedding_backward(const Tensor& grad, const Tensor& indices, int64_t num_weights);

}  // namespace vnn
