// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Re-checks the tensor descriptors of one op at a plugin's run() entry, for
// every plugin (Kokkos host and device, OpenCL). The core validates shapes
// before it builds a vnn_op, but the C ABI is open to third-party callers
// and a plugin must never turn a bad descriptor into an out-of-bounds write:
// anything that fails here is VNN_STATUS_INVALID_ARGUMENT with a message.
//
// Checked per descriptor: ndim in [0, VNN_MAX_DIMS], sizes >= 0, the element
// count and the strided extent within int64 (vnn/checked_size.h), offset
// and extent >= 0, and, where the plugin knows the size of the allocation
// the descriptor points into (it answered that alloc), the extent inside it.
// Once these hold, every product of sizes a kernel forms is at most the
// element count, so kernel index arithmetic cannot overflow.
#pragma once
#include <cstdint>
#include <string>

#include "common/abi_dtype.hpp"
#include "vnn/backend_abi.h"
#include "vnn/checked_size.h"

namespace vnn::kernels {


inline std::string desc_text(const vnn_tensor_desc& d) {
  std::string s = "sizes [";
  const int n = d.ndim >= 0 && d.ndim <= VNN_MAX_DIMS ? d.ndim : 0;
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(d.sizes[i]);
  s += "], strides [";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(d.strides[i]);
  return s + "], offset " + std::to_string(d.offset);
}

// capacity_bytes < 0: the allocation's size is unknown (memory this plugin
// did not allocate); only the arithmetic is checked then.
inline bool check_desc(const vnn_tensor_desc& d, int64_t capacity_bytes, const char* role, int index,
                       std::string* why) {
  auto bad = [&](const std::string& what) {
    *why = std::string(role) + "[" + std::to_string(index) + "] (" + desc_text(d) + "): " + what;
    return false;
  };
  if (d.ndim < 0 || d.ndim > VNN_MAX_DIMS)
    return bad("ndim " + std::to_string(d.ndim) + " is outside [0, " + std::to_string(VNN_MAX_DIMS) + "]");
  int64_t n, lo, hi;
  if (!checked::numel(d.sizes, d.ndim, &n)) return bad("a negative size, or an element count that overflows int64");
  if (n == 0) return true;  // touches nothing
  if (!d.data) return bad("data is NULL");
  if (!checked::extent(d.sizes, d.strides, d.ndim, d.offset, &lo, &hi))
    return bad("its strided extent overflows int64");
  if (lo < 0) return bad("it reaches element " + std::to_string(lo) + ", before the start of its allocation");
  const int64_t item = dtype_bytes(d.dtype);
  int64_t end;  // one past the last byte touched
  if (capacity_bytes >= 0 && item > 0) {
    if (!checked::add(hi, 1, &end) || !checked::mul(end, item, &end) || end > capacity_bytes)
      return bad("it reaches element " + std::to_string(hi) + ", past the end of its allocation of " +
                 std::to_string(capacity_bytes) + " bytes (" + std::to_string(capacity_bytes / item) + " elements)");
  }
  return true;
}

// Every input and output of op; capacity(handle) gives an allocation's size
// in bytes, or -1 where unknown.
template <class Capacity>
bool check_op_descs(const vnn_op& op, Capacity&& capacity, std::string* why) {
  constexpr int32_t kMaxOperands = 64;
  if (op.num_inputs < 0 || op.num_outputs < 0 || op.num_inputs > kMaxOperands || op.num_outputs > kMaxOperands ||
      op.num_scalars < 0 || op.num_ints < 0) {
    *why = "operand counts out of range (inputs " + std::to_string(op.num_inputs) + ", outputs " +
           std::to_string(op.num_outputs) + ", scalars " + std::to_string(op.num_scalars) + ", ints " +
           std::to_string(op.num_ints) + ")";
    return false;
  }
  if ((op.num_inputs > 0 && !op.inputs) || (op.num_outputs > 0 && !op.outputs) ||
      (op.num_scalars > 0 && !op.scalars) || (op.num_ints > 0 && !op.ints)) {
    *why = "an operand array is NULL while its count is not 0";
    return false;
  }
  for (int32_t i = 0; i < op.num_inputs; ++i)
    if (!check_desc(op.inputs[i], capacity(op.inputs[i].data), "input", i, why)) return false;
  for (int32_t i = 0; i < op.num_outputs; ++i)
    if (!check_desc(op.outputs[i], capacity(op.outputs[i].data), "output", i, why)) return false;
  return true;
}

// A byte range [offset, offset + bytes) of a copy inside an allocation of
// capacity_bytes (< 0: unknown, not checked).
inline bool check_copy_range(size_t offset, size_t bytes, int64_t capacity_bytes, const char* which,
                             std::string* why) {
  if (capacity_bytes < 0) return true;
  const uint64_t cap = uint64_t(capacity_bytes);
  if (offset > cap || bytes > cap - offset) {
    *why = std::string(which) + ": bytes [" + std::to_string(offset) + ", " + std::to_string(offset) + " + " +
           std::to_string(bytes) + ") pass the end of its allocation of " + std::to_string(capacity_bytes) + " bytes";
    return false;
  }
  return true;
}

}  // namespace vnn::kernels
