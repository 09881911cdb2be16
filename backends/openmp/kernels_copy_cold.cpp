// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's copies from or to float64, the integers and bool,
// called by kernels_copy.cpp (instantiate/split.hpp): at -O1.
#include "kokkos/instantiate/copy_split.hpp"

#define VNN_COPY_COLD_TO(Space, To) VNN_KOKKOS_COPY_LEAVES(Space, To, All)
#define VNN_COPY_COLD_FROM(Space, To) VNN_KOKKOS_COPY_LEAVES(Space, To, Cold)
#define VNN_COPY_COLD(Space)                                 \
  VNN_KOKKOS_COLD_TYPES(VNN_COPY_COLD_TO, Space)             \
  VNN_KOKKOS_COPY_LEAVES(Space, float, ColdToFloat)          \
  VNN_KOKKOS_LOWP_TYPES(VNN_COPY_COLD_FROM, Space)
VNN_COPY_COLD(Kokkos::OpenMP)
VNN_COPY_COLD(Kokkos::Serial)
