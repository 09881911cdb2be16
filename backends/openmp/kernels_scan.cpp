// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's scan kernels (kokkos/instantiate/scan.hpp): on the
// OpenMP pool and, for small work and other threads, inline on Serial.
#include "kokkos/instantiate/scan.hpp"

VNN_KOKKOS_INSTANTIATE_SCAN(Kokkos::OpenMP)
VNN_KOKKOS_INSTANTIATE_SCAN(Kokkos::Serial)
