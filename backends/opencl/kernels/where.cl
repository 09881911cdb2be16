// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// WHERE: out = cond ? a : b. Defines: T, an unsigned type of the size of
// a, b and out's elements, which move as bits (float16 needs no
// cl_khr_fp16, NaN payloads pass unchanged).
// cond is bool (uchar).

__kernel void vnn_where(__global T* out, long out_off, __global const uchar* cond, long c_off,
                        __global const T* a, long a_off, __global const T* b, long b_off, long n, int ndim,
                        long8 sizes, long8 out_strides, long8 c_strides, long8 a_strides, long8 b_strides) {
  VNN_GRID_LOOP(i, n) {
    T v = cond[VNN_OFFSET(i, c_off, c_strides)] ? a[VNN_OFFSET(i, a_off, a_strides)]
                                                : b[VNN_OFFSET(i, b_off, b_strides)];
    out[VNN_OFFSET(i, out_off, out_strides)] = v;
  }
}
