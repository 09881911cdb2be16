// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's grid-sampling kernels (kokkos/instantiate/grid_sample.hpp):
// on the OpenMP pool and, for small work and other threads, inline on Serial.
#include "kokkos/instantiate/grid_sample.hpp"

VNN_KOKKOS_INSTANTIATE_GRID_SAMPLE(Kokkos::OpenMP)
VNN_KOKKOS_INSTANTIATE_GRID_SAMPLE(Kokkos::Serial)
