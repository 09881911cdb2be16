// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's unary kernels on float64, the integers and bool, called
// by kernels_unary.cpp (instantiate/split.hpp): at -O1, as no training
// step spends its time there.
#include "kokkos/instantiate/unary_split.hpp"

VNN_KOKKOS_COLD_TYPES(VNN_KOKKOS_UNARY_LEAVES, Kokkos::OpenMP)
VNN_KOKKOS_COLD_TYPES(VNN_KOKKOS_UNARY_LEAVES, Kokkos::Serial)
