// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The one place the core puts a VNN_OP_SCAN together (src/ops/scan.cpp),
// shared with the compaction ops built on it (src/ops/compaction.cpp).
#pragma once
#include <utility>

#include "vnn/backend_abi.h"
#include "vnn/tensor.h"

namespace vnn::detail {

// The inclusive scan `fn` of t along dim d (already normalised; a 0-D t
// scans as [1]) into a new contiguous tensor of dtype `result`, and for
// MAX / MIN the int64 indices (undefined otherwise). Converts t to the
// dtype the kernel computes in where needed; records no autograd.
std::pair<Tensor, Tensor> run_scan(const Tensor& t, int d, vnn_scan_fn fn, DType result);

}  // namespace vnn::detail
