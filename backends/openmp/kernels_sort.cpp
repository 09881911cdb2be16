// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's sort kernels (kokkos/instantiate/sort.hpp): on the
// OpenMP pool and, for small work and other threads, inline on Serial.
#include "kokkos/instantiate/sort.hpp"

VNN_KOKKOS_INSTANTIATE_SORT(Kokkos::OpenMP)
VNN_KOKKOS_INSTANTIATE_SORT(Kokkos::Serial)
