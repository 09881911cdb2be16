// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's binary kernels on float64, the integers and bool, called
// by kernels_binary.cpp (instantiate/split.hpp): at -O1, as no training
// step spends its time there.
#include "kokkos/instantiate/binary_split.hpp"

VNN_KOKKOS_COLD_TYPES(VNN_KOKKOS_BINARY_LEAVES, Kokkos::OpenMP)
VNN_KOKKOS_COLD_TYPES(VNN_KOKKOS_BINARY_LEAVES, Kokkos::Serial)
