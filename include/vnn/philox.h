// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
/* Philox4x32-10 (Salmon et al., Random123), written once for every
 * backend: the core's vnn::philox4x32_10 (host C++), the Kokkos kernels
 * (backends/kokkos/kernels/random.hpp defines VNN_PHILOX_FN as
 * KOKKOS_INLINE_FUNCTION first, so the same body runs on CUDA/HIP devices)
 * and, as text, the OpenCL programs (the generated abi_prelude.cl carries
 * this file; random.cl calls it). VNN_OP_RANDOM (backend_abi.h) defines
 * the counter layout. C, C++ and OpenCL C; no dependencies. */
#ifndef VNN_PHILOX_H
#define VNN_PHILOX_H

#ifdef __OPENCL_VERSION__
typedef uint uint32_t;
typedef ulong uint64_t;
#else
#include <stdint.h>
#endif

/// Qualifiers of the Philox function: `static inline` unless the includer names others (device code).
#ifndef VNN_PHILOX_FN
#define VNN_PHILOX_FN static inline
#endif

/// Ten Philox4x32 rounds of the counter block c[4] in place, key (k0, k1).
VNN_PHILOX_FN void vnn_philox_rounds(uint32_t c[4], uint32_t k0, uint32_t k1) {
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    const uint64_t p0 = (uint64_t)0xD2511F53u * c[0];
    const uint64_t p1 = (uint64_t)0xCD9E8D57u * c[2];
    const uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0;
    const uint32_t n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1;
    c[1] = (uint32_t)p1;
    c[3] = (uint32_t)p0;
    c[0] = n0;
    c[2] = n2;
  }
}

#endif /* VNN_PHILOX_H */
