// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's reduction kernels (kokkos/instantiate/reduction.hpp): on
// the OpenMP pool and, for small work and other threads, inline on Serial.
// REDUCE on float32 here at -O3, on the other dtypes in
// kernels_reduction_cold.cpp (instantiate/split.hpp).
#include "kokkos/instantiate/reduction_split.hpp"

VNN_KOKKOS_REDUCE_COLD_TYPES(VNN_KOKKOS_REDUCE_EXTERN, Kokkos::OpenMP)
VNN_KOKKOS_REDUCE_COLD_TYPES(VNN_KOKKOS_REDUCE_EXTERN, Kokkos::Serial)
VNN_KOKKOS_INSTANTIATE_REDUCTION(Kokkos::OpenMP)
VNN_KOKKOS_INSTANTIATE_REDUCTION(Kokkos::Serial)
