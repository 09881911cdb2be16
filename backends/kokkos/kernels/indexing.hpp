// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// INDEX_SELECT, GATHER, SCATTER and INDEX_ADD (see docs/ops.md).
//
// All four walk one iteration shape (out's for the gathers, index's for
// SCATTER, src's for INDEX_ADD) and pair a "direct" tensor, addressed by the
// multi-index itself, with an "indexed" tensor whose coordinate along dim is
// read from the int64 index tensor:
//   gathers:  direct (= out)  <- indexed (= in0)
//   scatters: indexed (= out) <- / += alpha * direct (= src)
// The core checked every index against the bound on the host; the kernels
// still skip (scatters) or zero (gathers) an out-of-range one so that a
// malformed request never touches memory outside the tensors.
#pragma once
#include <Kokkos_Core.hpp>

#include <cstring>
#include <type_traits>

#include "kokkos/kernels/dispatch.hpp"

namespace vnn::kernels {

struct IndexWalk {
  int32_t ndim = 0, dim = 0;
  int64_t sizes[VNN_MAX_DIMS] = {};
  int64_t direct[VNN_MAX_DIMS] = {}, indexed[VNN_MAX_DIMS] = {}, index[VNN_MAX_DIMS] = {};
  int64_t direct_off = 0, indexed_off = 0, index_off = 0;
  int64_t bound = 0;      // the indexed tensor's size along dim
  int64_t dim_stride = 0;  // the indexed tensor's stride along dim

  // Element i: offsets into the direct, indexed (dim coordinate excluded)
  // and index tensors.
  KOKKOS_INLINE_FUNCTION void locate(int64_t i, int64_t& d_off, int64_t& x_off, int64_t& k_off) const {
    d_off = direct_off;
    x_off = indexed_off;
    k_off = index_off;
    if (ndim == 1) {  // no division per element (1-D gathers and scatters, the compactions)
      d_off += i * direct[0];
      k_off += i * index[0];
      return;
    }
    for (int k = ndim - 1; k >= 0; --k) {
      int64_t c = i % sizes[k];
      i /= sizes[k];
      d_off += c * direct[k];
      k_off += c * index[k];
      if (k != dim) x_off += c * indexed[k];
    }
  }
};

// iter: the iteration shape (sizes only); index_full: the index has the
// iteration's ndim (GATHER, SCATTER), else it is 1-D along dim.
inline IndexWalk make_walk(const vnn_tensor_desc& iter, const vnn_tensor_desc& direct,
                           const vnn_tensor_desc& indexed, const vnn_tensor_desc& index, int64_t dim,
                           bool index_full) {
  IndexWalk w;
  w.ndim = iter.ndim;
  w.dim = int32_t(dim);
  for (int k = 0; k < iter.ndim; ++k) {
    w.sizes[k] = iter.sizes[k];
    w.direct[k] = direct.strides[k];
    w.indexed[k] = indexed.strides[k];
    w.index[k] = index_full ? index.strides[k] : (k == dim ? (index.ndim > 0 ? index.strides[0] : 0) : 0);
  }
  w.direct_off = direct.offset;
  w.indexed_off = indexed.offset;
  w.index_off = index.offset;
  w.bound = indexed.sizes[dim];
  w.dim_stride = indexed.strides[dim];
  return w;
}

template <class Exec, class T>
void gather_typed(const Exec& exec, const IndexWalk w, T* out, const T* src, const int64_t* idx, int64_t n) {
  Kokkos::parallel_for("vnn::gather", Range<Exec>(exec, 0, n), KOKKOS_LAMBDA(int64_t i) {
    int64_t d, x, k;
    w.locate(i, d, x, k);
    int64_t j = idx[k];
    out[d] = (j >= 0 && j < w.bound) ? src[x + j * w.dim_stride] : store<T>(0);
  });
}

// INDEX_SELECT where the dims after `dim` form one unit-stride block in out
// and src (rows of a [N, ...] data set: the training loop's batch gather),
// out is contiguous and src's dims before `dim` collapse to one stride: one
// work item copies one block, with no per-element index math (the general
// walk pays ndim 64-bit divisions per element, ~10x the copy itself). False:
// not such a case, the general walk runs.
template <class Exec, class T>
bool index_select_rows(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& src,
                       const vnn_tensor_desc& index, int64_t dim) {
  const int nd = out.ndim;
  int64_t want = 1;  // out contiguous (make_empty's layout)
  for (int k = nd - 1; k >= 0; --k) {
    if (out.sizes[k] != 1 && out.strides[k] != want) return false;
    want *= out.sizes[k];
  }
  int64_t inner = 1;
  for (int k = nd - 1; k > dim; --k) {
    if (out.sizes[k] != 1 && src.strides[k] != inner) return false;
    inner *= out.sizes[k];
  }
  int64_t outer = 1, src_outer = 0, expect = -1;  // src_outer: the collapsed outer dims' stride
  for (int k = int(dim) - 1; k >= 0; --k) {
    if (out.sizes[k] == 1) continue;
    if (expect >= 0 && src.strides[k] != expect) return false;
    if (expect < 0) src_outer = src.strides[k];
    expect = src.strides[k] * src.sizes[k];
    outer *= out.sizes[k];
  }
  const int64_t nk = out.sizes[dim], bound = src.sizes[dim], dim_stride = src.strides[dim];
  const int64_t istride = index.ndim > 0 ? index.strides[0] : 0;
  T* o = typed<T>(out) + out.offset;
  const T* x = typed<T>(src) + src.offset;
  const int64_t* idx = typed<int64_t>(index) + index.offset;
  Kokkos::parallel_for("vnn::index_select_rows", Range<Exec>(exec, 0, outer * nk), KOKKOS_LAMBDA(int64_t r) {
    const int64_t b = r / nk, k = r - b * nk, j = idx[k * istride];
    T* dst = o + r * inner;
    if (j < 0 || j >= bound) {
      for (int64_t i = 0; i < inner; ++i) dst[i] = store<T>(0);
      return;
    }
    const T* from = x + b * src_outer + j * dim_stride;
    for (int64_t i = 0; i < inner; ++i) dst[i] = from[i];
  });
  return true;
}

// The scatters: for each element of the index, `apply(destination, value)`
// (a plain store, an atomic add, or an atomic combine below).
template <class Exec, class T, class Apply>
void scatter_typed(const Exec& exec, const char* label, const IndexWalk w, T* out, const T* src, const int64_t* idx,
                   int64_t n, const Apply apply) {
  Kokkos::parallel_for(label, Range<Exec>(exec, 0, n), KOKKOS_LAMBDA(int64_t i) {
    int64_t d, x, k;
    w.locate(i, d, x, k);
    int64_t j = idx[k];
    if (j >= 0 && j < w.bound) apply(&out[x + j * w.dim_stride], src[d]);
  });
}

template <class T>
struct StoreValue {
  KOKKOS_INLINE_FUNCTION void operator()(T* p, T v) const { *p = v; }
};

// Duplicate indices meet at one element: atomics keep every contribution.
template <class T>
struct AtomicAddScaled {
  T alpha;
  KOKKOS_INLINE_FUNCTION void operator()(T* p, T v) const { Kokkos::atomic_add(p, T(v * alpha)); }
};

// The combining scatters (scatter_reduce's prod, amax, amin): a
// compare-and-swap loop on the element, compared by bits so that a NaN
// already there ends the loop. MAX / MIN keep a NaN from either side.
template <class T>
KOKKOS_INLINE_FUNCTION T scatter_combine(int mode, T have, T v) {
  if (mode == VNN_SCATTER_MUL) return T(have * v);
  if (have != have) return have;
  if (v != v) return v;
  return mode == VNN_SCATTER_MAX ? (v > have ? v : have) : (v < have ? v : have);
}

template <class T>
KOKKOS_INLINE_FUNCTION bool same_bits(T a, T b) {
  if constexpr (std::is_floating_point<T>::value) {
    using U = typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type;
    U x, y;
    memcpy(&x, &a, sizeof(T));
    memcpy(&y, &b, sizeof(T));
    return x == y;
  } else {
    return a == b;
  }
}

template <class T>
struct AtomicCombine {
  int mode;
  KOKKOS_INLINE_FUNCTION void operator()(T* p, T v) const {
    T old = *p;
    while (true) {
      const T seen = Kokkos::atomic_compare_exchange(p, old, scatter_combine(mode, old, v));
      if (same_bits(seen, old)) break;
      old = seen;
    }
  }
};

// INDEX_ADD along dim 0 of [rows, D] matrices with unit last strides on a
// host space (the embedding gradient: [2048, 128] source rows into a
// [96, 128] table): out rows are dealt to P owners, each scanning the whole
// index and adding the source rows that land in its own out rows, in source
// order. No atomics (the per-element CAS loop on a few hot rows cost
// ~5 ms a call), and the sums' order no longer depends on the threads.
template <class Exec, class T>
bool index_add_rows(const Exec& exec, const vnn_tensor_desc& out, const vnn_tensor_desc& src,
                    const vnn_tensor_desc& index, int64_t dim, T alpha) {
  if constexpr (!Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible) {
    (void)exec, (void)out, (void)src, (void)index, (void)dim, (void)alpha;
    return false;
  } else {
    if (dim != 0 || out.ndim != 2 || src.ndim != 2 || index.ndim != 1 || out.strides[1] != 1 ||
        src.strides[1] != 1 || out.sizes[1] != src.sizes[1] || index.sizes[0] != src.sizes[0])
      return false;
    const int64_t rows = out.sizes[0], n = src.sizes[0], D = src.sizes[1];
    const int64_t lo = out.strides[0], ls = src.strides[0], li = index.strides[0];
    T* o = typed<T>(out) + out.offset;
    const T* x = typed<T>(src) + src.offset;
    const int64_t* idx = typed<int64_t>(index) + index.offset;
    const int64_t owners = rows < 64 ? rows : 64;
    if (owners <= 0 || n == 0 || D == 0) return true;
    Kokkos::parallel_for(
        "vnn::index_add_rows", Kokkos::RangePolicy<Exec, Kokkos::IndexType<int64_t>>(exec, 0, owners),
        [=](int64_t p) {
          for (int64_t i = 0; i < n; ++i) {
            const int64_t j = idx[i * li];
            if (j < 0 || j >= rows || j % owners != p) continue;
            T* orow = o + j * lo;
            const T* xrow = x + i * ls;
            for (int64_t c = 0; c < D; ++c) orow[c] += alpha * xrow[c];
          }
        });
    exec.fence();
    return true;
  }
}

// kind: one of the four indexing kinds; ints[0] = dim (normalised by the
// core), ints[1]: SCATTER's vnn_scatter_mode; scalars[0] = INDEX_ADD's alpha.
template <class Exec>
bool indexing(const Exec& exec, const vnn_op* op) {
  const int32_t kind = op->kind;
  const bool is_scatter = kind == VNN_OP_SCATTER || kind == VNN_OP_INDEX_ADD;
  const int need = kind == VNN_OP_SCATTER ? 3 : 2;
  if (op->num_inputs < need || op->num_outputs < 1 || op->num_ints < 1) return false;
  const vnn_tensor_desc& out = op->outputs[0];
  const vnn_tensor_desc& index = op->inputs[1];
  const vnn_tensor_desc& src = op->inputs[kind == VNN_OP_SCATTER ? 2 : 0];
  const int64_t dim = op->ints[0];
  if (index.dtype != VNN_INT64 || src.dtype != out.dtype || src.ndim != out.ndim || dim < 0 || dim >= out.ndim)
    return false;
  const bool full = kind == VNN_OP_GATHER || kind == VNN_OP_SCATTER;
  const vnn_tensor_desc& iter = kind == VNN_OP_SCATTER ? index : kind == VNN_OP_INDEX_ADD ? src : out;
  if (full && index.ndim != out.ndim) return false;
  const int64_t n = numel(iter);
  const int64_t* idx = typed<int64_t>(index);
  if (!is_scatter) {
    const IndexWalk w = make_walk(iter, out, src, index, dim, full);
    if (n == 0) return true;
    dispatch_types<AllTypes>("gather", out.dtype, [&](auto t) {
      using T = decltype(t);
      if (!full && index_select_rows<Exec, T>(exec, out, src, index, dim)) return;
      gather_typed<Exec, T>(exec, w, typed<T>(out), typed<T>(src), idx, n);
    });
    return true;
  }
  const IndexWalk w = make_walk(iter, src, out, index, dim, full);
  int64_t mode = VNN_SCATTER_SET;
  if (kind == VNN_OP_INDEX_ADD) mode = VNN_SCATTER_ADD;
  else if (op->num_ints > 1) mode = op->ints[1];
  if (mode < 0 || mode >= VNN_SCATTER_MODE_COUNT_) return false;
  const bool add = mode == VNN_SCATTER_ADD;
  if (mode == VNN_SCATTER_MUL || mode == VNN_SCATTER_MAX || mode == VNN_SCATTER_MIN) {
    if (n == 0) return true;
    if (out.dtype != VNN_FLOAT32 && out.dtype != VNN_FLOAT64 && out.dtype != VNN_INT32 && out.dtype != VNN_INT64)
      return false;  // the core combines other dtypes in one of these
    dispatch_types<ArithmeticTypes>("scatter_reduce", out.dtype, [&](auto t) {
      using T = decltype(t);
      scatter_typed<Exec, T>(exec, "vnn::scatter_reduce", w, typed<T>(out), typed<T>(src), idx, n,
                             AtomicCombine<T>{int(mode)});
    });
    return true;
  }
  if (!add) {
    if (n == 0) return true;
    dispatch_types<AllTypes>("scatter", out.dtype, [&](auto t) {
      using T = decltype(t);
      scatter_typed<Exec, T>(exec, "vnn::scatter", w, typed<T>(out), typed<T>(src), idx, n, StoreValue<T>{});
    });
    return true;
  }
  const double alpha = kind == VNN_OP_INDEX_ADD && op->num_scalars > 0 ? op->scalars[0] : 1.0;
  // 16-bit sums are accumulated by the core in float32 (add_dtype).
  dispatch_types<ArithmeticTypes>("scatter_add", out.dtype, [&](auto t) {
    using T = decltype(t);
    if (kind == VNN_OP_INDEX_ADD && index_add_rows<Exec, T>(exec, out, src, index, dim, T(alpha))) return;
    scatter_typed<Exec, T>(exec, "vnn::scatter_add", w, typed<T>(out), typed<T>(src), idx, n,
                           AtomicAddScaled<T>{T(alpha)});
  });
  return true;
}

}  // namespace vnn::kernels
