// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// UNSCALE_CHECK (GradScaler), fused: one launch for every gradient of the
// op. OpenCL 1.2 cannot pass a buffer of pointers, so the gradients come as
// 64 buffer arguments (unused ones alias the flag and are never touched)
// plus a table of chunks, one long4 each: (argument index, first element,
// element count, vnn_dtype code). Work-group c walks chunk c (grid-stride
// over the chunks), multiplies each element by the reciprocal scale in
// place (inv_f; float64 by the double whose bits are inv_bits) and sets
// found[found_off] to 1 where one was inf or NaN. float16
// and bfloat16 compute in float32 (no cl_khr_fp16 needed), float64 in
// double where the device has it; the same rules as the Kokkos kernel
// (backends/kokkos/kernels/optimizer.hpp).
#pragma OPENCL FP_CONTRACT OFF

#define VNN_UNSCALE_ARGS8(b)                                                                            \
  __global uchar *g##b##0, __global uchar *g##b##1, __global uchar *g##b##2, __global uchar *g##b##3, \
      __global uchar *g##b##4, __global uchar *g##b##5, __global uchar *g##b##6, __global uchar *g##b##7
#define VNN_UNSCALE_NAMES8(b) g##b##0, g##b##1, g##b##2, g##b##3, g##b##4, g##b##5, g##b##6, g##b##7

// The loop over one chunk for storage type T computed in CT.
#define VNN_UNSCALE_LOOP(T, CT, LD, ST)                                           \
  {                                                                               \
    __global T* p = (__global T*)base;                                            \
    for (long i = w.y + (long)get_local_id(0); i < end; i += (long)get_local_size(0)) { \
      CT v = LD;                                                                  \
      bad |= !isfinite(v);                                                        \
      ST;                                                                         \
    }                                                                             \
  }

__kernel void vnn_amp_unscale_fused(__global const long4* chunks, long n_chunks, float inv_f, long inv_bits,
                                    __global float* found,
                                    long found_off, VNN_UNSCALE_ARGS8(0), VNN_UNSCALE_ARGS8(1),
                                    VNN_UNSCALE_ARGS8(2), VNN_UNSCALE_ARGS8(3), VNN_UNSCALE_ARGS8(4),
                                    VNN_UNSCALE_ARGS8(5), VNN_UNSCALE_ARGS8(6), VNN_UNSCALE_ARGS8(7)) {
  __global uchar* g[64] = {VNN_UNSCALE_NAMES8(0), VNN_UNSCALE_NAMES8(1), VNN_UNSCALE_NAMES8(2),
                           VNN_UNSCALE_NAMES8(3), VNN_UNSCALE_NAMES8(4), VNN_UNSCALE_NAMES8(5),
                           VNN_UNSCALE_NAMES8(6), VNN_UNSCALE_NAMES8(7)};
  for (long c = get_group_id(0); c < n_chunks; c += get_num_groups(0)) {
    const long4 w = chunks[c];
    __global uchar* base = g[w.x];
    const long end = w.y + w.z;
    int bad = 0;
    switch ((int)w.w) {
      case 0: VNN_UNSCALE_LOOP(float, float, p[i], p[i] = v * inv_f) break;
#ifdef HAS_FP64
      case 1: VNN_UNSCALE_LOOP(double, double, p[i], p[i] = v * as_double(inv_bits)) break;
#endif
      case 6: VNN_UNSCALE_LOOP(half, float, vload_half(i, p), vstore_half_rte(v * inv_f, i, p)) break;
      case 7: VNN_UNSCALE_LOOP(ushort, float, vnn_bf16_to_float(p[i]), p[i] = vnn_bf16_from_float(v * inv_f)) break;
      default: break;
    }
    if (bad) atomic_xchg(found + found_off, 1.0f);
  }
}
