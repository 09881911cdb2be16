// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RANDOM: Philox4x32-10, the same rounds (include/vnn/philox.h) as
// backends/kokkos/kernels/random.hpp. Element i uses key = seed, counter =
// (offset + i / 4, 0, 0) and word i % 4.
// Defines: T (output storage type), FN (vnn_random_fn), ST (scalar type:
// float/double for UNIFORM and NORMAL, long for BITS), NT (the type
// Box-Muller runs in: double where the device has it).

#pragma OPENCL FP_CONTRACT OFF

// The rounds are vnn_philox_rounds of include/vnn/philox.h, shared with the
// host and the Kokkos kernels (carried by the generated abi_prelude.cl).
inline uint4 vnn_philox4x32_10(uint4 c, uint k0, uint k1) {
  uint w[4] = {c.s0, c.s1, c.s2, c.s3};
  vnn_philox_rounds(w, k0, k1);
  return (uint4)(w[0], w[1], w[2], w[3]);
}

inline uint vnn_word(uint4 c, int w) { return w == 0 ? c.s0 : w == 1 ? c.s1 : w == 2 ? c.s2 : c.s3; }

__kernel void vnn_random(__global T* out, long out_off, long n, int ndim, long8 sizes, long8 out_strides,
                         ulong seed, ulong offset, ST a, ST b) {
  VNN_GRID_LOOP(i, n) {
    ulong ctr = offset + ((ulong)i >> 2);
    uint4 c = vnn_philox4x32_10((uint4)((uint)ctr, (uint)(ctr >> 32), 0u, 0u), (uint)seed, (uint)(seed >> 32));
    int w = (int)(i & 3);
#if FN == VNN_RANDOM_UNIFORM
    ST range = b - a;
#if DT == VNN_FLOAT32
    T v = fma(range, (float)(vnn_word(c, w) >> 8) * 5.9604644775390625e-8f, a);
#else
    T v = fma(range, (double)vnn_word(c, w) * 2.3283064365386963e-10, a);
#endif
#elif FN == VNN_RANDOM_NORMAL
    int p = w & 2;
    NT u1 = ((NT)vnn_word(c, p) + (NT)1) * (NT)2.3283064365386963e-10;
    NT u2 = (NT)vnn_word(c, p + 1) * (NT)2.3283064365386963e-10;
    NT r = sqrt((NT)-2 * log(u1));
    NT theta = (NT)6.283185307179586 * u2;
    NT z = (w & 1) ? r * sin(theta) : r * cos(theta);
    T v = (T)((NT)a + (NT)b * z);
#else
    ulong range = (ulong)(b - a);
    T v = (T)(a + (long)((ulong)vnn_word(c, w) % range));
#endif
    out[VNN_OFFSET(i, out_off, out_strides)] = v;
  }
}
