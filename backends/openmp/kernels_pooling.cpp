// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU plugin's pooling kernels (kokkos/instantiate/pooling.hpp): on the
// OpenMP pool and, for small work and other threads, inline on Serial.
#include "kokkos/instantiate/pooling.hpp"

VNN_KOKKOS_INSTANTIATE_POOLING(Kokkos::OpenMP)
VNN_KOKKOS_INSTANTIATE_POOLING(Kokkos::Serial)
