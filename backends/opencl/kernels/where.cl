// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// WHERE: out = cond ? a : b. Defines: T, an unsigned type of the size of
// a, b and out's elements, which move as bits (float16 needs no
// cl_khr_fp16, NaN payloads pass unchanged).
// cond is bool (uchar).

__kernel void vnn_where(__global T* out, long out_off, __global const uchar* cond, long c_off,
                        __global const T* a, long a_off, __global const T* b, long b_off, long n, int ndim,
                        long8 sizes, long8 out_strides, long8 c_strides, long8 a_strides, long8 b_strides) {
  VNN_GRID_LOOP(i, n) {
    // Both read and the bits masked, without a branch: a select on a random
    // condition mispredicted half the time (an int64 select of 16M
    // elements took 200 ms on PoCL).
    const T mask = (T)0 - (T)(cond[VNN_OFFSET(i, c_off, c_strides)] != 0);
    const T x = a[VNN_OFFSET(i, a_off, a_strides)], y = b[VNN_OFFSET(i, b_off, b_strides)];
    out[VNN_OFFSET(i, out_off, out_strides)] = (x & mask) | (y & ~mask);
  }
}

// All four operands one unit-stride run: plain indexing, which PoCL
// vectorises across work items (the strided kernel's index math keeps it
// scalar: an int64 select of 16M elements took 3x an add's time).
__kernel void vnn_where_dense(__global T* out, long out_off, __global const uchar* cond, long c_off,
                              __global const T* a, long a_off, __global const T* b, long b_off, long n) {
  VNN_ITEMS(i, n) {
    const T mask = (T)0 - (T)(cond[c_off + i] != 0);
    out[out_off + i] = (a[a_off + i] & mask) | (b[b_off + i] & ~mask);
  }
}
