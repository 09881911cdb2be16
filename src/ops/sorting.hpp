// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The sorting ops' shared pieces (src/ops/sorting.cpp, sorting_stats.cpp):
// rows sorted on the device with the sorted dim moved last, and the
// searches.
#pragma once
#include <cstdint>

#include "vnn/tensor.h"

namespace vnn::detail {

// t, or ValueError naming op and the argument when it is undefined.
const Tensor& sort_input(const Tensor& t, const char* op, const char* arg = "input");

// t's dim `dim` (int64, negative from the end; a 0-dim tensor takes 0 and
// -1) as an index, or IndexError naming op.
int sort_dim(int64_t dim, const Tensor& t, const char* op);

// Sorted rows of x along dim d: values (x's dtype, detached) and int64
// positions, both contiguous with dim d moved last (x.transpose(d, last)'s
// shape). Stable; NaN largest.
struct SortedRows {
  Tensor values, indices;
};
SortedRows sort_rows(const Tensor& x, int d, bool descending, const char* op);

// t with dim d moved back from the last place (the inverse of sort_rows'
// layout), contiguous.
Tensor unmove_last(const Tensor& t, int d);

// The values of x at `indices` along d: gather(x, d, indices) when x needs a
// gradient (differentiable), else `picked` (the same values, already there).
Tensor picked_values(const Tensor& x, int d, const Tensor& indices, const Tensor& picked);

// VNN_OP_SEARCHSORTED on contiguous rows: seq [R or 1, N] and values
// [R, M] of one dtype; int64 (or int32) positions [R, M].
Tensor search_rows(const Tensor& seq, const Tensor& values, bool right, bool out_int32, const char* op);

}  // namespace vnn::detail
