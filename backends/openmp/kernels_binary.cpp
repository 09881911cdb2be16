// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's binary kernels (kokkos/instantiate/binary.hpp): on the
// OpenMP pool and, for small work and other threads, inline on Serial.
// float32 here at -O3; float16 / bfloat16 in kernels_binary_lowp.cpp, the
// other dtypes in kernels_binary_cold.cpp (instantiate/split.hpp).
#include "kokkos/instantiate/binary_split.hpp"

VNN_KOKKOS_OTHER_TYPES(VNN_KOKKOS_BINARY_EXTERN, Kokkos::OpenMP)
VNN_KOKKOS_OTHER_TYPES(VNN_KOKKOS_BINARY_EXTERN, Kokkos::Serial)
VNN_KOKKOS_INSTANTIATE_BINARY(Kokkos::OpenMP)
VNN_KOKKOS_INSTANTIATE_BINARY(Kokkos::Serial)
