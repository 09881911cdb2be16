// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Advanced (tensor) indexing, as LibTorch's at::index and index_put_ (the
// flat torch.put is in vnn/shape_ops.h): the leading dims of self indexed by int64/int32 tensors (which
// broadcast together) or by one bool mask over them; the remaining dims are
// taken whole. Negative indices count from the end; an index outside
// [-size, size) is an IndexError naming the op, the dim and the size.
// Composed of INDEX_SELECT, INDEX_ADD and index_copy over a flattened view,
// so every device runs it and autograd follows (self and values).
#pragma once
#include <optional>
#include <vector>

#include "vnn/tensor.h"

namespace vnn {

/// self[indices...]: shape broadcast(indices) + self's unindexed dims.
Tensor index(const Tensor& self, const std::vector<std::optional<Tensor>>& indices);
/// A copy of self with values (broadcast to the indexed shape) written at
/// indices; accumulate adds instead (repeated indices add every value; without
/// accumulate one of the repeated writes wins, unspecified which, as PyTorch's).
Tensor index_put(const Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                 bool accumulate = false);
/// index_put in place.
Tensor& index_put_(Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                   bool accumulate = false);

}  // namespace vnn
