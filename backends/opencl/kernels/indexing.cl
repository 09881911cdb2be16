// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// INDEX_SELECT, GATHER, SCATTER and INDEX_ADD (see docs/ops.md and
// backends/kokkos/kernels/indexing.hpp, which walks them the same way).
// Every op walks one iteration shape and pairs a "direct" tensor (addressed
// by the multi-index) with an "indexed" tensor whose coordinate along dim
// comes from the int64 index. Shapes arrive innermost first, padded to 8.
// indexed_strides has dim's stride zeroed; dim_stride carries it.
//
// Defines: T storage type; MODE 0 gather (direct <- indexed), 1 scatter
// (indexed <- direct), 2 scatter-add (indexed += alpha * direct, atomic),
// 3 combining scatter (indexed = COMBINE(indexed, direct), atomic; COMBINE
// a vnn_scatter_mode: MUL, MAX or MIN, NaN kept by MAX / MIN); for MODE 2
// and 3 also DT (vnn_dtype: 0 float32, 1 float64, 2 int32, 3 int64).
//
// The host checked every index; an out-of-range one is still skipped
// (scatters) or read as 0 (gathers) so memory outside the tensors is never
// touched.

#if MODE == 2 || MODE == 3
#if DT == VNN_FLOAT64 || DT == VNN_INT64
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif
#endif

#if MODE == 3
inline T vnn_combine(T have, T v) {
#if COMBINE == VNN_SCATTER_MUL
  return have * v;
#else
  if (have != have) return have;
  if (v != v) return v;
#if COMBINE == VNN_SCATTER_MAX
  return v > have ? v : have;
#else
  return v < have ? v : have;
#endif
#endif
}

// A compare-and-swap loop on the element's bits (a NaN there compares
// equal to itself by bits, so the loop ends).
#if DT == VNN_FLOAT32 || DT == VNN_INT32
#define VNN_BITS uint
#define VNN_CAS(p, a, b) atomic_cmpxchg(p, a, b)
#else
#define VNN_BITS ulong
#define VNN_CAS(p, a, b) atom_cmpxchg(p, a, b)
#endif
inline void vnn_atomic_combine(volatile __global T* p, T v) {
  volatile __global VNN_BITS* u = (volatile __global VNN_BITS*)p;
  VNN_BITS old = *u, seen;
  while (true) {
    T have = *(T*)&old;
    T want = vnn_combine(have, v);
    seen = VNN_CAS(u, old, *(VNN_BITS*)&want);
    if (seen == old) break;
    old = seen;
  }
}
#endif

#if MODE == 2

// OpenCL 1.2 has integer atomics only: floats add through a
// compare-and-swap loop on their bits.
#if DT == VNN_FLOAT32
inline void vnn_atomic_add(volatile __global T* p, T v) {
  volatile __global uint* u = (volatile __global uint*)p;
  uint old = *u, seen;
  while ((seen = atomic_cmpxchg(u, old, as_uint(as_float(old) + v))) != old) old = seen;
}
#elif DT == VNN_FLOAT64
inline void vnn_atomic_add(volatile __global T* p, T v) {
  volatile __global ulong* u = (volatile __global ulong*)p;
  ulong old = *u, seen;
  while ((seen = atom_cmpxchg(u, old, as_ulong(as_double(old) + v))) != old) old = seen;
}
#elif DT == VNN_INT32
inline void vnn_atomic_add(volatile __global T* p, T v) { atomic_add(p, v); }
#else
inline void vnn_atomic_add(volatile __global T* p, T v) { atom_add(p, v); }
#endif
#endif

__kernel void vnn_indexing(__global T* direct, long direct_off, __global T* indexed, long indexed_off,
                           __global const long* index, long index_off, long n, int ndim, long8 sizes,
                           long8 direct_strides, long8 indexed_strides, long8 index_strides,
                           long dim_stride, long bound, T alpha) {
  VNN_ITEMS(i, n) {
    // One dim: the index is i itself (no division per element).
    long8 idx = ndim <= 1 ? (long8)(i, 0, 0, 0, 0, 0, 0, 0) : vnn_unravel(i, ndim, sizes);
    long j = index[index_off + vnn_dot8(idx, index_strides)];
    long d = direct_off + vnn_dot8(idx, direct_strides);
    long x = indexed_off + vnn_dot8(idx, indexed_strides) + j * dim_stride;
    bool ok = j >= 0 && j < bound;
#if MODE == 0
    direct[d] = ok ? indexed[x] : (T)0;
#elif MODE == 1
    if (ok) indexed[x] = direct[d];
#elif MODE == 2
    if (ok) vnn_atomic_add(indexed + x, direct[d] * alpha);
#else
    if (ok) vnn_atomic_combine(indexed + x, direct[d]);
#endif
  }
}

#if MODE == 0
// direct[row, col] = indexed[index[row], col] for unit-stride rows
// (INDEX_SELECT; ops_indexing.cpp takes it when the merged shape is rows x
// columns): item (col, row).
__kernel void vnn_index_select_rows(__global T* direct, long direct_off, long direct_rs, __global const T* indexed,
                                    long indexed_off, long indexed_rs, __global const long* index, long index_off,
                                    long index_stride, long bound) {
  const long c = get_global_id(0), r = get_global_id(1);
  const long j = index[index_off + r * index_stride];
  direct[direct_off + r * direct_rs + c] = (j >= 0 && j < bound) ? indexed[indexed_off + j * indexed_rs + c] : (T)0;
}
#endif
