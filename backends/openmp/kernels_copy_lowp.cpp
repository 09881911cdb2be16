// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's copies among float32, float16 and bfloat16 (but float32
// -> float32), called by kernels_copy.cpp (instantiate/split.hpp): at -O2.
#include "kokkos/instantiate/copy_split.hpp"

#define VNN_COPY_LOWP(Space)                            \
  VNN_KOKKOS_COPY_LEAVES(Space, float, Lowp)            \
  VNN_KOKKOS_COPY_LEAVES(Space, vnn::kernels::Half, FloatAndLowp) \
  VNN_KOKKOS_COPY_LEAVES(Space, vnn::kernels::BFloat16, FloatAndLowp)
VNN_COPY_LOWP(Kokkos::OpenMP)
VNN_COPY_LOWP(Kokkos::Serial)
