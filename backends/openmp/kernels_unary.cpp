// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's unary kernels (kokkos/instantiate/unary.hpp): on the
// OpenMP pool and, for small work and other threads, inline on Serial.
// float32 here at -O3; float16 / bfloat16 in kernels_unary_lowp.cpp, the
// other dtypes in kernels_unary_cold.cpp (instantiate/split.hpp).
#include "kokkos/instantiate/unary_split.hpp"

VNN_KOKKOS_OTHER_TYPES(VNN_KOKKOS_UNARY_EXTERN, Kokkos::OpenMP)
VNN_KOKKOS_OTHER_TYPES(VNN_KOKKOS_UNARY_EXTERN, Kokkos::Serial)
VNN_KOKKOS_INSTANTIATE_UNARY(Kokkos::OpenMP)
VNN_KOKKOS_INSTANTIATE_UNARY(Kokkos::Serial)
