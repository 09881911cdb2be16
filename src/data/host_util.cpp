// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "data/host_util.hpp"

#include <cstring>

#include "tensor/tensor_impl.hpp"
#include "vnn/detail/message.h"
#include "vnn/error.h"

namespace vnn::data::detail {

void require_host(const Tensor& t, const char* what) {
  VNN_CHECK(ValueError, t.defined(), what, ": the tensor is undefined");
  VNN_CHECK(ValueError, t.device().is_cpu(), what, ": expected a cpu tensor, got one on ", t.device(),
            "; datasets hold host data (move it with .cpu())");
}

Tensor host_empty(const Shape& shape, DType dtype, const char* op) {
  // Looked up once: the registry is not meant for concurrent first use.
  static vnn::detail::DeviceContext& cpu = vnn::detail::context(Device("cpu", 0));
  return vnn::detail::make_empty(cpu, shape, dtype, op);
}

void* host_ptr(const Tensor& t) { return vnn::detail::host_pointer(*t.impl()); }

void copy_to_buffer(const Tensor& t, void* dst) {
  size_t isz = itemsize(t.dtype());
  int64_t n = t.numel();
  if (n == 0) return;
  const char* src = static_cast<const char*>(host_ptr(t));
  if (t.is_contiguous()) {
    std::memcpy(dst, src, size_t(n) * isz);
    return;
  }
  // Walk the index with an odometer; the innermost dim copies element-wise.
  int nd = t.dim();
  int64_t idx[kMaxDims] = {};
  char* out = static_cast<char*>(dst);
  int64_t inner = t.size(nd - 1), inner_stride = t.stride(nd - 1) * int64_t(isz);
  for (int64_t done = 0; done < n; done += inner) {
    int64_t off = 0;
    for (int d = 0; d < nd - 1; ++d) off += idx[d] * t.stride(d);
    const char* p = src + off * int64_t(isz);
    for (int64_t i = 0; i < inner; ++i, out += isz) std::memcpy(out, p + i * inner_stride, isz);
    for (int d = nd - 2; d >= 0; --d) {
      if (++idx[d] < t.size(d)) break;
      idx[d] = 0;
    }
  }
}

Tensor host_contiguous(const Tensor& t) {
  if (t.is_contiguous()) return t;
  Tensor out = host_empty(t.sizes(), t.dtype());
  copy_to_buffer(t, host_ptr(out));
  return out;
}

}  // namespace vnn::data::detail
