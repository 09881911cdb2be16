// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's binary kernels on float16 / bfloat16 storage (computed in
// float32), called by kernels_binary.cpp (instantiate/split.hpp): at -O2.
#include "kokkos/instantiate/binary_split.hpp"

VNN_KOKKOS_LOWP_TYPES(VNN_KOKKOS_BINARY_LEAVES, Kokkos::OpenMP)
VNN_KOKKOS_LOWP_TYPES(VNN_KOKKOS_BINARY_LEAVES, Kokkos::Serial)
