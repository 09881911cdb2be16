// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's unary kernels on float16 / bfloat16 storage (computed in
// float32), called by kernels_unary.cpp (instantiate/split.hpp): at -O2.
#include "kokkos/instantiate/unary_split.hpp"

VNN_KOKKOS_LOWP_TYPES(VNN_KOKKOS_UNARY_LEAVES, Kokkos::OpenMP)
VNN_KOKKOS_LOWP_TYPES(VNN_KOKKOS_UNARY_LEAVES, Kokkos::Serial)
