// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How one MATMUL op (docs/ops.md: out[b] = alpha * a[b] @ b[b] + beta *
// out[b], a [B..., M, K], b [B..., K, N] with any strides, out contiguous)
// maps onto BLAS gemm calls, for every vendor BLAS vnn drives: OpenBLAS on
// the host (row-major cblas), cuBLAS / hipBLAS on a device (column-major,
// fed C^T = B^T A^T, which is the same call with the operands swapped).
//
// Worked out once here, with no Kokkos, OpenCL or vendor type, for every
// plugin (Kokkos host and device BLAS, CLBlast), so that the mapping is
// tested on the CPU (tests/backends/gemm_plan.cpp, and every matmul test
// through OpenBLAS and CLBlast) and a device BLAS only adds its call.
#pragma once
#include <cstdint>

#include "common/abi_dtype.hpp"
#include "vnn/backend_abi.h"

namespace vnn::kernels {

// One [rows, cols] operand with row stride rs and column stride cs, as a
// row-major BLAS sees it.
struct BlasOperand {
  bool ok = false;     // usable in place
  bool trans = false;  // stored column-major: pass Trans
  int64_t ld = 0;
};

inline BlasOperand blas_operand(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  BlasOperand op;
  int64_t r1 = rows > 1 ? rows : 1, c1 = cols > 1 ? cols : 1;
  if ((cols <= 1 || cs == 1) && (rows <= 1 || rs >= c1)) {
    op.ok = true;
    op.ld = rows <= 1 ? c1 : rs;
  } else if ((rows <= 1 || rs == 1) && (cols <= 1 || cs >= r1)) {
    op.ok = true;
    op.trans = true;
    op.ld = cols <= 1 ? r1 : cs;
  }
  return op;
}

// Element offset of batch bi of an operand (its dims but the last two),
// batch index in row-major order over out's batch sizes.
inline int64_t batch_offset(const vnn_tensor_desc& d, int64_t bi) {
  int64_t off = d.offset;
  for (int i = d.ndim - 3; i >= 0 && bi > 0; --i) {
    const int64_t size = d.sizes[i];
    off += (bi % size) * d.strides[i];
    bi /= size;
  }
  return off;
}

// The stride s with batch_offset(d, bi) == d.offset + bi * s for every
// batch (0 when all batch dims broadcast); false when there is none, e.g.
// a batch dim broadcast inside a real one.
inline bool uniform_batch_stride(const vnn_tensor_desc& d, int64_t* stride) {
  int64_t s = 0, inner = 1;  // inner: batches spanned by the dims inside dim i
  bool have = false;
  for (int i = d.ndim - 3; i >= 0; --i) {
    const int64_t size = d.sizes[i];
    if (size == 1) continue;  // its stride is never used
    if (!have) s = d.strides[i], have = true;  // the innermost real dim sets s
    if (d.strides[i] != s * inner) return false;
    inner *= size;
  }
  *stride = s;
  return true;
}

// A row-major gemm per batch: out[bi] (m x n, ldc) = alpha * op(a) (m x k,
// lda) @ op(b) (k x n, ldb) + beta * out[bi].
struct GemmPlan {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  BlasOperand a, b;
  int64_t ldc = 1;
  // Strided-batched form: batch bi at offset + bi * stride (elements).
  bool uniform = false;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
};

// False when the descriptors do not form a matmul.
inline bool plan_gemm(const vnn_tensor_desc& out, const vnn_tensor_desc& a, const vnn_tensor_desc& b,
                      GemmPlan* p) {
  const int nd = a.ndim;
  if (nd < 2 || b.ndim != nd || out.ndim != nd) return false;
  p->m = a.sizes[nd - 2];
  p->k = a.sizes[nd - 1];
  p->n = b.sizes[nd - 1];
  if (b.sizes[nd - 2] != p->k || out.sizes[nd - 2] != p->m || out.sizes[nd - 1] != p->n) return false;
  p->batch = 1;
  for (int i = 0; i < nd - 2; ++i) {
    if (a.sizes[i] != out.sizes[i] || b.sizes[i] != out.sizes[i]) return false;
    p->batch *= out.sizes[i];
  }
  p->a = blas_operand(p->m, p->k, a.strides[nd - 2], a.strides[nd - 1]);
  p->b = blas_operand(p->k, p->n, b.strides[nd - 2], b.strides[nd - 1]);
  p->ldc = p->n > 1 ? p->n : 1;
  p->stride_c = p->m * p->n;  // out is contiguous
  p->uniform = uniform_batch_stride(a, &p->stride_a) && uniform_batch_stride(b, &p->stride_b);
  return true;
}

// The same gemm for a column-major BLAS (cuBLAS, hipBLAS): row-major
// C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T over the same memory,
// so the operands swap (first = b, second = a) and so do m and n.
struct ColumnMajorGemm {
  bool trans_first = false, trans_second = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t ld_first = 1, ld_second = 1, ldc = 1;
  int64_t stride_first = 0, stride_second = 0, stride_c = 0, batch = 1;
};

inline ColumnMajorGemm column_major(const GemmPlan& p) {
  ColumnMajorGemm c;
  c.trans_first = p.b.trans;
  c.trans_second = p.a.trans;
  c.m = p.n;
  c.n = p.m;
  c.k = p.k;
  c.ld_first = p.b.ld;
  c.ld_second = p.a.ld;
  c.ldc = p.ldc;
  c.stride_first = p.stride_b;
  c.stride_second = p.stride_a;
  c.stride_c = p.stride_c;
  c.batch = p.batch;
  return c;
}


// A contiguous [B..., rows, cols] descriptor with d's sizes, at offset 0 of
// another buffer (where an operand that BLAS cannot read in place is packed).
inline vnn_tensor_desc packed_desc(const vnn_tensor_desc& d, void* data) {
  vnn_tensor_desc p = d;
  p.data = data;
  p.offset = 0;
  int64_t stride = 1;
  for (int i = d.ndim - 1; i >= 0; --i) {
    p.strides[i] = stride;
    stride *= d.sizes[i];
  }
  return p;
}

}  // namespace vnn::kernels
