// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's copy kernels (kokkos/instantiate/copy.hpp): on the
// OpenMP pool and, for small work and other threads, inline on Serial.
// COPY to float32 from float32, bool and uint8 here at -O3, the pairs among
// float32, float16 and bfloat16 in kernels_copy_lowp.cpp, the rest in
// kernels_copy_cold.cpp (instantiate/split.hpp).
#include "kokkos/instantiate/copy_split.hpp"

VNN_KOKKOS_COPY_EXTERN(Kokkos::OpenMP)
VNN_KOKKOS_COPY_EXTERN(Kokkos::Serial)
VNN_KOKKOS_INSTANTIATE_COPY(Kokkos::OpenMP)
VNN_KOKKOS_INSTANTIATE_COPY(Kokkos::Serial)
