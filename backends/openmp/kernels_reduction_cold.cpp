// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's REDUCE kernels on float64, int32 and int64, called by
// kernels_reduction.cpp (instantiate/split.hpp): at -O1.
#include "kokkos/instantiate/reduction_split.hpp"

VNN_KOKKOS_REDUCE_COLD_TYPES(VNN_KOKKOS_REDUCE_LEAVES, Kokkos::OpenMP)
VNN_KOKKOS_REDUCE_COLD_TYPES(VNN_KOKKOS_REDUCE_LEAVES, Kokkos::Serial)
