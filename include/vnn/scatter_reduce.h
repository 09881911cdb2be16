// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reducing scatters (torch.scatter_reduce, torch.index_reduce): several
// source elements that meet at one destination are combined by a sum,
// product, mean, maximum or minimum, on every device (atomic combining
// scatters: VNN_OP_SCATTER's vnn_scatter_mode), with PyTorch's gradients.
#pragma once
#include <string>

#include "vnn/tensor.h"

namespace vnn {

/// self with src combined in along dim at index (torch.scatter_reduce):
/// out[... index[i][j] ...] = reduce(out[...], src[i][j]) for each element of
/// index. `reduce` is "sum", "prod", "mean", "amax" or "amin"; with
/// include_self = false the positions src reaches start without self's value.
/// Shapes and indices are checked as scatter's; amax / amin propagate NaN.
Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce, bool include_self = true);
/// scatter_reduce in place; returns self.
Tensor& scatter_reduce_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
                        bool include_self = true);
/// source's slices along dim combined into self at the 1-D index
/// (torch.index_reduce): `reduce` is "prod", "mean", "amax" or "amin".
Tensor index_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                    const std::string& reduce, bool include_self = true);
/// index_reduce in place; returns self.
Tensor& index_reduce_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const std::string& reduce,
                      bool include_self = true);

/// scatter with one number written at every index (torch.scatter(self, dim, index, value)).
Tensor scatter(const Tensor& self, int dim, const Tensor& index, double value);
/// scatter_ with a number, in place; returns self.
Tensor& scatter_(Tensor& self, int dim, const Tensor& index, double value);
/// scatter combining instead of writing (torch.scatter's reduce=): "add" or "multiply".
Tensor scatter(const Tensor& self, int dim, const Tensor& index, const Tensor& src, const std::string& reduce);
/// scatter of a number combining by reduce "add" or "multiply".
Tensor scatter(const Tensor& self, int dim, const Tensor& index, double value, const std::string& reduce);

}  // namespace vnn
