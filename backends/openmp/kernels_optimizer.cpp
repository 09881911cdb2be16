// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's optimizer kernels (kokkos/instantiate/optimizer.hpp): on the
// OpenMP pool and, for small work and other threads, inline on Serial.
#include "kokkos/instantiate/optimizer.hpp"

VNN_KOKKOS_INSTANTIATE_OPTIMIZER(Kokkos::OpenMP)
VNN_KOKKOS_INSTANTIATE_OPTIMIZER(Kokkos::Serial)
