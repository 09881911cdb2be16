// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// COPY: out = in0 with any strides, converting dtype like a C cast (to
// bool: x != 0; to float16/bfloat16: round to nearest even).
// Defines: IN_T/OUT_T storage types, IN_DT/OUT_DT vnn_dtype codes; for
// vnn_copy_nd OX / AX, the x stride classes of out and in (elementwise.cl).

#ifndef OX
#define OX -1
#define AX -1
#endif

// Loading gives the value in a type C arithmetic understands: float for
// the 16-bit floats, the storage type itself otherwise.
#if IN_DT == VNN_FLOAT16
#define LOAD_IN(p, i) vload_half((i), (p))
#elif IN_DT == VNN_BFLOAT16
#define LOAD_IN(p, i) vnn_bf16_to_float((p)[i])
#elif IN_DT == VNN_BOOL
// bool storage is a byte: any non-zero byte is true (1), as in the Kokkos kernels.
#define LOAD_IN(p, i) ((uchar)((p)[i] != 0))
#else
#define LOAD_IN(p, i) ((p)[i])
#endif

#if OUT_DT == VNN_BOOL
#define STORE_OUT(p, i, v) ((p)[i] = (uchar)((v) != 0))
#elif OUT_DT == VNN_FLOAT16
#if IN_DT == VNN_FLOAT64
#define STORE_OUT(p, i, v) vstore_half_rte((v), (i), (p))
#else
// Exact: integers that fit a half's range are exact in float.
#define STORE_OUT(p, i, v) vstore_half_rte((float)(v), (i), (p))
#endif
#elif OUT_DT == VNN_BFLOAT16
#if IN_DT == VNN_FLOAT64
#define STORE_OUT(p, i, v) ((p)[i] = vnn_bf16_from_double(v))
#elif IN_DT == VNN_INT32 || IN_DT == VNN_INT64 || IN_DT == VNN_UINT8 || IN_DT == VNN_BOOL || IN_DT == VNN_INT8 || \
    IN_DT == VNN_INT16
#define STORE_OUT(p, i, v) ((p)[i] = vnn_bf16_from_long((long)(v)))
#else
#define STORE_OUT(p, i, v) ((p)[i] = vnn_bf16_from_float((float)(v)))
#endif
#elif (OUT_DT == VNN_UINT8 || OUT_DT == VNN_INT32 || OUT_DT == VNN_INT64 || OUT_DT == VNN_INT8 || \
     OUT_DT == VNN_INT16) &&                                                                       \
    (IN_DT == VNN_FLOAT32 || IN_DT == VNN_FLOAT64 || IN_DT == VNN_FLOAT16 || IN_DT == VNN_BFLOAT16)
// Floating to integer through int64 (NaN 0, out of range saturated), then
// wrapping, as the CPU backend and PyTorch's c10::convert do (-1.0 to uint8
// is 255): a direct cast of a value outside the target's range is
// undefined, and LLVM gives 0 for it on AVX2 CPUs, 255 on AVX-512 ones.
#define STORE_OUT(p, i, v) ((p)[i] = (OUT_T)convert_long_sat(v))
#else
#define STORE_OUT(p, i, v) ((p)[i] = (OUT_T)(v))
#endif

__kernel void vnn_copy(__global OUT_T* out, long out_off, __global const IN_T* in, long in_off,
                       long n, int ndim, long8 sizes, long8 out_strides, long8 in_strides) {
  VNN_GRID_LOOP(i, n) {
    long o = VNN_OFFSET(i, out_off, out_strides);
    long s = VNN_OFFSET(i, in_off, in_strides);
    STORE_OUT(out, o, LOAD_IN(in, s));
  }
}

// Strided copies (a permute made contiguous, a slice written into) on
// common.cl's 3-D grid: no division per element.
__kernel void vnn_copy_nd(__global OUT_T* out, long out_off, __global const IN_T* in, long in_off, long4 sizes,
                          long4 out_strides, long4 in_strides) {
  VNN_ND_ITEM(sizes);
  const long o = VNN_ND_OFFSET(out_off, out_strides, OX);
  STORE_OUT(out, o, LOAD_IN(in, VNN_ND_OFFSET(in_off, in_strides, AX)));
}
