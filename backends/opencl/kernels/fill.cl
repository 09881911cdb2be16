// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// FILL: every element of a strided output = one value. The host passes the
// value already converted to the output dtype's bits, so one kernel per
// element size (T = uchar/ushort/uint/ulong) serves every dtype and the
// conversion rules live in one place (dtype.cpp).

__kernel void vnn_fill(__global T* out, long out_off, T value, long n, int ndim,
                       long8 sizes, long8 out_strides) {
  VNN_GRID_LOOP(i, n) {
    out[VNN_OFFSET(i, out_off, out_strides)] = value;
  }
}

// One dense run (ops.cpp run_fill on CPU-like devices): plain indexing that
// PoCL vectorises; its clEnqueueFillBuffer wrote 3 MB in about 1 ms there.
__kernel void vnn_fill_dense(__global T* out, long out_off, T value, long n) {
  VNN_ITEMS(i, n) out[out_off + i] = value;
}
